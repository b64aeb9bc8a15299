// Per-op output shape and dtype rules.
#include "compiler/ir/shape_inference.hpp"

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/shape_rules.hpp"

namespace tessel::ir {
namespace {

Failure mismatch(const Op& op, const std::string& what) {
  return fail(where(op) + ": " + what);
}

std::int64_t normalise_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

/// The output shapes of `op` given its inputs' tensors.
Result<std::vector<Shape>> output_shapes(const Graph& graph, const Op& op) {
  std::vector<const Tensor*> in;
  for (const std::string& name : op.inputs) {
    const Tensor& value = graph.tensor(name);
    if (!value.has_shape()) return mismatch(op, "input %" + name + " has no known shape");
    in.push_back(&value);
  }
  auto need_rank = [&](std::size_t slot, std::size_t rank) -> Status {
    if (in[slot]->shape.size() != rank) {
      return mismatch(op, "input %" + in[slot]->name + " must have rank " + std::to_string(rank) +
                              ", has shape " + shape_string(in[slot]->shape));
    }
    return {};
  };
  auto per_channel = [&](std::size_t slot, std::int64_t channels, const char* role) -> Status {
    if (in[slot]->shape != Shape{channels}) {
      return mismatch(op, std::string(role) + " %" + in[slot]->name + " has shape " +
                              shape_string(in[slot]->shape) + ", expected [" +
                              std::to_string(channels) + "]");
    }
    return {};
  };

  switch (op.kind) {
    case OpKind::Input:
      return std::vector<Shape>{graph.tensor(op.outputs[0]).shape};
    case OpKind::Conv: {
      if (Status s = need_rank(0, 4); !s) return s.failure();
      if (Status s = need_rank(1, 4); !s) return s.failure();
      const Shape& x = in[0]->shape;
      const Shape& w = in[1]->shape;
      const WindowGeometry geo = window_geometry(op);
      if (geo.group < 1 || x[1] % geo.group != 0 || w[0] % geo.group != 0) {
        return mismatch(op, "group " + std::to_string(geo.group) + " does not divide input " +
                                "channels " + std::to_string(x[1]) + " and output channels " +
                                std::to_string(w[0]));
      }
      if (w[1] * geo.group != x[1]) {
        return mismatch(op, "weight %" + in[1]->name + " has " + std::to_string(w[1]) +
                                " input channels per group but input %" + in[0]->name + " has " +
                                std::to_string(x[1]) + " (group " + std::to_string(geo.group) +
                                ")");
      }
      if (w[2] != geo.kernel_h || w[3] != geo.kernel_w) {
        return mismatch(op, "weight %" + in[1]->name + " shape " + shape_string(w) +
                                " disagrees with kernel " + std::to_string(geo.kernel_h) + "x" +
                                std::to_string(geo.kernel_w));
      }
      if (in.size() == 3) {
        if (Status s = per_channel(2, w[0], "bias"); !s) return s.failure();
      }
      const std::int64_t h = geo.output_h(x[2]), wd = geo.output_w(x[3]);
      if (h <= 0 || wd <= 0)
        return mismatch(op, "window larger than the padded input " + shape_string(x));
      return std::vector<Shape>{{x[0], w[0], h, wd}};
    }
    case OpKind::Gemm: {
      if (Status s = need_rank(0, 2); !s) return s.failure();
      if (Status s = need_rank(1, 2); !s) return s.failure();
      const bool trans_b = op.get_int("transB") != 0;
      const std::int64_t k_b = trans_b ? in[1]->shape[1] : in[1]->shape[0];
      const std::int64_t n = trans_b ? in[1]->shape[0] : in[1]->shape[1];
      if (in[0]->shape[1] != k_b) {
        return mismatch(op, "A %" + in[0]->name + " " + shape_string(in[0]->shape) + " and B %" +
                                in[1]->name + " " + shape_string(in[1]->shape) +
                                (trans_b ? " (transB=1)" : " (transB=0)") + " disagree on K");
      }
      if (in.size() == 3 && in[2]->shape != Shape{n} && in[2]->shape != Shape{in[0]->shape[0], n}) {
        return mismatch(op, "C %" + in[2]->name + " has shape " + shape_string(in[2]->shape) +
                                ", expected [" + std::to_string(n) + "]");
      }
      return std::vector<Shape>{{in[0]->shape[0], n}};
    }
    case OpKind::MaxPool:
    case OpKind::AveragePool: {
      if (Status s = need_rank(0, 4); !s) return s.failure();
      const Shape& x = in[0]->shape;
      const WindowGeometry geo = window_geometry(op);
      const std::int64_t h = geo.output_h(x[2]), wd = geo.output_w(x[3]);
      if (h <= 0 || wd <= 0)
        return mismatch(op, "window larger than the padded input " + shape_string(x));
      return std::vector<Shape>{{x[0], x[1], h, wd}};
    }
    case OpKind::GlobalAveragePool: {
      if (Status s = need_rank(0, 4); !s) return s.failure();
      return std::vector<Shape>{{in[0]->shape[0], in[0]->shape[1], 1, 1}};
    }
    case OpKind::Softmax:
      if (in.size() == 2 && !broadcast_shapes(in[1]->shape, in[0]->shape))
        return mismatch(op, "mask %" + in[1]->name + " " + shape_string(in[1]->shape) +
                                " does not broadcast to " + shape_string(in[0]->shape));
      return std::vector<Shape>{in[0]->shape};
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::Requantize:
      return std::vector<Shape>{in[0]->shape};
    case OpKind::BatchNormalization:
    case OpKind::Scale: {
      if (in[0]->shape.size() < 2)
        return mismatch(op, "input %" + in[0]->name + " needs a channel axis");
      const std::int64_t channels = in[0]->shape[1];
      static const char* const roles[] = {"", "scale", "bias", "mean", "variance"};
      for (std::size_t slot = 1; slot < in.size(); ++slot) {
        if (Status s = per_channel(slot, channels, roles[slot]); !s) return s.failure();
      }
      return std::vector<Shape>{in[0]->shape};
    }
    case OpKind::Concat: {
      const std::size_t rank = in[0]->shape.size();
      const std::int64_t axis = normalise_axis(op.get_int("axis"), rank);
      if (axis < 0 || axis >= static_cast<std::int64_t>(rank))
        return mismatch(op, "axis out of range");
      Shape out = in[0]->shape;
      out[static_cast<std::size_t>(axis)] = 0;
      for (const Tensor* value : in) {
        for (std::size_t d = 0; d < rank; ++d) {
          if (value->shape.size() != rank ||
              (static_cast<std::int64_t>(d) != axis && value->shape[d] != in[0]->shape[d])) {
            return mismatch(op, "input %" + value->name + " " + shape_string(value->shape) +
                                    " does not match %" + in[0]->name + " " +
                                    shape_string(in[0]->shape) + " off axis " +
                                    std::to_string(axis));
          }
        }
        out[static_cast<std::size_t>(axis)] += value->shape[static_cast<std::size_t>(axis)];
      }
      return std::vector<Shape>{out};
    }
    case OpKind::Split: {
      const std::size_t rank = in[0]->shape.size();
      const std::int64_t axis = normalise_axis(op.get_int("axis"), rank);
      if (axis < 0 || axis >= static_cast<std::int64_t>(rank))
        return mismatch(op, "axis out of range");
      const auto& sizes = op.get_ints("split");
      if (sizes.size() != op.outputs.size())
        return mismatch(op, "split has " + std::to_string(sizes.size()) + " sizes for " +
                                std::to_string(op.outputs.size()) + " outputs");
      std::int64_t total = 0;
      std::vector<Shape> outs;
      for (std::int64_t size : sizes) {
        Shape out = in[0]->shape;
        out[static_cast<std::size_t>(axis)] = size;
        outs.push_back(out);
        total += size;
      }
      if (total != in[0]->shape[static_cast<std::size_t>(axis)]) {
        return mismatch(op, "split sizes sum to " + std::to_string(total) + " but axis " +
                                std::to_string(axis) + " of %" + in[0]->name + " has " +
                                std::to_string(in[0]->shape[static_cast<std::size_t>(axis)]));
      }
      return outs;
    }
    case OpKind::Pad: {
      const auto& pads = op.get_ints("pads");
      const std::size_t rank = in[0]->shape.size();
      if (pads.size() != 2 * rank)
        return mismatch(op, "pads has " + std::to_string(pads.size()) + " values for rank " +
                                std::to_string(rank));
      Shape out = in[0]->shape;
      for (std::size_t d = 0; d < rank; ++d) out[d] += pads[d] + pads[d + rank];
      return std::vector<Shape>{out};
    }
    case OpKind::Flatten: {
      const Shape& x = in[0]->shape;
      const std::int64_t axis = normalise_axis(op.get_int("axis"), x.size());
      if (axis < 0 || axis > static_cast<std::int64_t>(x.size()))
        return mismatch(op, "axis out of range");
      std::int64_t outer = 1, inner = 1;
      for (std::size_t d = 0; d < x.size(); ++d)
        (static_cast<std::int64_t>(d) < axis ? outer : inner) *= x[d];
      return std::vector<Shape>{{outer, inner}};
    }
    case OpKind::Reshape: {
      const Shape& x = in[0]->shape;
      Shape out = op.get_ints("shape");
      std::int64_t known = 1;
      int infer_at = -1;
      for (std::size_t d = 0; d < out.size(); ++d) {
        if (out[d] == 0) {
          if (d >= x.size())
            return mismatch(op, "shape copies dim " + std::to_string(d) + " that the input lacks");
          out[d] = x[d];
        }
        if (out[d] == -1) {
          if (infer_at >= 0) return mismatch(op, "shape has two -1 entries");
          infer_at = static_cast<int>(d);
        } else {
          known *= out[d];
        }
      }
      const std::int64_t total = element_count(x);
      if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
          return mismatch(op, "cannot infer -1 of " + shape_string(op.get_ints("shape")) +
                                  " for input " + shape_string(x));
        out[static_cast<std::size_t>(infer_at)] = total / known;
      } else if (known != total) {
        return mismatch(op, "shape " + shape_string(out) + " holds " + std::to_string(known) +
                                " elements, input " + shape_string(x) + " holds " +
                                std::to_string(total));
      }
      return std::vector<Shape>{out};
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow: {
      auto out = broadcast_shapes(in[0]->shape, in[1]->shape);
      if (!out)
        return mismatch(op, "operands %" + in[0]->name + " " + shape_string(in[0]->shape) +
                                " and %" + in[1]->name + " " + shape_string(in[1]->shape) +
                                " do not broadcast");
      return std::vector<Shape>{out.value()};
    }
    case OpKind::Embedding:
      if (in[0]->dtype != DType::i32)
        return mismatch(op, "ids %" + in[0]->name + " are " + std::string(to_string(in[0]->dtype)) +
                                "; token ids are i32");
      if (!in[1]->constant) return mismatch(op, "table %" + in[1]->name + " is not a constant");
      [[fallthrough]];
    default: {
      std::vector<Shape> shapes;
      for (const Tensor* value : in) shapes.push_back(value->shape);
      return workload_output_shapes(op, shapes);
    }
  }
}

}  // namespace

Status infer_shapes(Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  auto shapes = output_shapes(graph, op);
  if (!shapes) return shapes.failure();
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    Tensor& out = graph.tensor_mut(op.outputs[i]);
    out.shape = shapes.value()[i];
    switch (op.kind) {
      case OpKind::Input:
        break;
      case OpKind::Quantize:
      case OpKind::Requantize:
        if (!is_integer(out.dtype)) out.dtype = DType::i8;
        break;
      case OpKind::Dequantize:
        out.dtype = DType::f32;
        break;
      case OpKind::Conv:
      case OpKind::Gemm:
      case OpKind::MatMul: {
        // Integer operands accumulate in i32 until a Requantize brings them back down.
        const DType in = graph.tensor(op.inputs[0]).dtype;
        out.dtype = is_integer(in) ? DType::i32 : in;
        break;
      }
      case OpKind::Where:      // the condition is a mask; the values come from the branches
      case OpKind::Embedding:  // the rows of the table
        out.dtype = graph.tensor(op.inputs[1]).dtype;
        break;
      default:
        out.dtype = graph.tensor(op.inputs[0]).dtype;
        break;
    }
  }
  return {};
}

Status infer_all_shapes(Graph& graph) {
  auto order = topological_order(graph);
  if (!order) return order.failure();
  for (OpId id : order.value()) {
    if (Status status = infer_shapes(graph, id); !status) return status;
  }
  return {};
}

}  // namespace tessel::ir
