// Pass constant-folding: ops whose inputs are all constants with payloads become constants.
#include <algorithm>
#include <cmath>
#include <optional>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/shape_rules.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/passes/pass.hpp"

namespace tessel::passes {
namespace {

using Values = std::vector<float>;

/// Strides of a row-major shape.
std::vector<std::int64_t> strides_of(const ir::Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Per-channel (axis 1) affine map y = x * scale[c] + shift[c].
Values channel_affine(const ir::Tensor& x, const Values& scale, const Values& shift) {
  const std::int64_t channels = x.shape.at(1);
  const std::int64_t inner = ir::element_count(x.shape) / x.shape[0] / channels;
  Values y(x.f32_values.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels);
    y[i] = x.f32_values[i] * scale[c] + shift[c];
  }
  return y;
}

/// y[i] = x[source(index of i in out)], row-major over `out`: every data-movement kind.
template <class Source>
Values gather_by_index(const Values& x, const ir::Shape& out, Source&& source) {
  Values y(static_cast<std::size_t>(ir::element_count(out)));
  std::vector<std::int64_t> index(out.size(), 0);
  for (float& v : y) {
    v = x[static_cast<std::size_t>(source(index))];
    for (std::size_t d = out.size(); d-- > 0;) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return y;
}

/// The element of a tensor of `shape` that element `index` of `out` reads when it broadcasts.
std::int64_t broadcast_offset(const std::vector<std::int64_t>& strides,
                              const std::vector<std::int64_t>& index) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < index.size(); ++d) at += index[d] * strides[d];
  return at;
}

/// The binary elementwise kinds, broadcasting as NumPy does, with the fp32 kernels' arithmetic
/// (compiler/targets/cpu/ops/elementwise.cpp): float operations, Pow exact for 2 and 0.5.
Values binary(ir::OpKind kind, const ir::Tensor& a, const ir::Tensor& b, const ir::Shape& out) {
  const auto sa = ir::broadcast_strides(a.shape, out), sb = ir::broadcast_strides(b.shape, out);
  const auto f = [kind](float x, float y) -> float {
    switch (kind) {
      case ir::OpKind::Add:
        return x + y;
      case ir::OpKind::Sub:
        return x - y;
      case ir::OpKind::Mul:
        return x * y;
      case ir::OpKind::Div:
        return x / y;
      default:  // Pow
        if (y == 2.0f) return x * x;
        if (y == 0.5f) return std::sqrt(x);
        return static_cast<float>(std::pow(double{x}, double{y}));
    }
  };
  Values y(static_cast<std::size_t>(ir::element_count(out)));
  std::vector<std::int64_t> index(out.size(), 0);
  for (float& v : y) {
    v = f(a.f32_values[static_cast<std::size_t>(broadcast_offset(sa, index))],
          b.f32_values[static_cast<std::size_t>(broadcast_offset(sb, index))]);
    for (std::size_t d = out.size(); d-- > 0;) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return y;
}

/// The modern-workload kinds folded: binary elementwise, Where, the unary functions, and the
/// data movement kinds (Transpose, Slice, Gather, Expand, Trilu) that mask and position
/// constants are built from (a causal mask is Trilu of a constant, or a Slice of a buffer).
std::optional<Values> evaluate_modern(const ir::Graph& graph, const ir::Op& op) {
  auto in = [&](std::size_t slot) -> const ir::Tensor& { return graph.tensor(op.inputs[slot]); };
  const ir::Shape& out = graph.tensor(op.outputs[0]).shape;
  const ir::Shape& xs = in(0).shape;
  const Values& x = in(0).f32_values;
  if (ir::is_unary_function(op.kind)) {
    Values y(x.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = static_cast<float>(ir::unary_function(op, double{x[i]}));
    return y;
  }
  switch (op.kind) {
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Div:
    case ir::OpKind::Pow:
      return binary(op.kind, in(0), in(1), out);
    case ir::OpKind::Where: {
      const auto sc = ir::broadcast_strides(xs, out), sa = ir::broadcast_strides(in(1).shape, out),
                 sb = ir::broadcast_strides(in(2).shape, out);
      Values y(static_cast<std::size_t>(ir::element_count(out)));
      std::vector<std::int64_t> idx(out.size(), 0);
      for (float& v : y) {
        const bool take_a = x[static_cast<std::size_t>(broadcast_offset(sc, idx))] != 0.0f;
        v = take_a ? in(1).f32_values[static_cast<std::size_t>(broadcast_offset(sa, idx))]
                   : in(2).f32_values[static_cast<std::size_t>(broadcast_offset(sb, idx))];
        for (std::size_t d = out.size(); d-- > 0;) {
          if (++idx[d] < out[d]) break;
          idx[d] = 0;
        }
      }
      return y;
    }
    case ir::OpKind::Transpose: {
      const auto stride = strides_of(xs);
      const auto& perm = op.get_ints("perm");
      return gather_by_index(x, out, [&](const std::vector<std::int64_t>& idx) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < idx.size(); ++d)
          at += idx[d] * stride[static_cast<std::size_t>(perm[d])];
        return at;
      });
    }
    case ir::OpKind::Slice: {
      auto axes = ir::slice_axes(op, xs);
      if (!axes) return std::nullopt;
      const auto stride = strides_of(xs);
      return gather_by_index(x, out, [&](const std::vector<std::int64_t>& idx) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < idx.size(); ++d)
          at += (axes.value()[d].start + idx[d] * axes.value()[d].step) * stride[d];
        return at;
      });
    }
    case ir::OpKind::Gather: {
      // Output axes: x's before `axis`, the indices' axes, x's after `axis` (as the kernel).
      const auto axis = static_cast<std::size_t>(
          op.get_int("axis") < 0 ? op.get_int("axis") + static_cast<std::int64_t>(xs.size())
                                 : op.get_int("axis"));
      const auto& indices = op.get_ints("indices");
      const ir::Shape ishape = op.get_ints("indices_shape");
      const auto istride = strides_of(ishape), stride = strides_of(xs);
      const bool scalar_full = xs.size() == 1 && ishape.empty();  // [n] -> [1]
      return gather_by_index(x, out, [&](const std::vector<std::int64_t>& idx) {
        if (scalar_full) return indices[0];
        std::int64_t at = 0, flat = 0;
        for (std::size_t d = 0; d < axis; ++d) at += idx[d] * stride[d];
        for (std::size_t d = 0; d < ishape.size(); ++d) flat += idx[axis + d] * istride[d];
        at += indices[static_cast<std::size_t>(flat)] * stride[axis];
        for (std::size_t d = axis + 1; d < xs.size(); ++d)
          at += idx[d - 1 + ishape.size()] * stride[d];
        return at;
      });
    }
    case ir::OpKind::Expand: {
      const auto strides = ir::broadcast_strides(xs, out);
      return gather_by_index(x, out, [&](const std::vector<std::int64_t>& idx) {
        return broadcast_offset(strides, idx);
      });
    }
    case ir::OpKind::Gemm: {
      // swin_v2's continuous position bias: an MLP over a constant coordinate table. The fp32
      // kernel's arithmetic (compiler/targets/cpu/kernels.cpp gemm_f32): each element sums its
      // K products in k order from 0.0f in float, then alpha * sum + beta * c in double.
      if (op.get_int("input_shift") != 0 || xs.size() != 2) return std::nullopt;
      const bool trans_b = op.get_int("transB") != 0;
      const ir::Tensor& b = in(1);
      const std::int64_t M = xs[0], K = xs[1], N = trans_b ? b.shape[0] : b.shape[1];
      const double alpha = op.get_float("alpha"), beta = op.get_float("beta");
      const Values* c = op.inputs.size() > 2 ? &in(2).f32_values : nullptr;
      Values y(static_cast<std::size_t>(M * N));
      for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t n = 0; n < N; ++n) {
          float acc = 0.0f;
          for (std::int64_t k = 0; k < K; ++k)
            acc += x[static_cast<std::size_t>(m * K + k)] *
                   b.f32_values[static_cast<std::size_t>(trans_b ? n * K + k : k * N + n)];
          double v = alpha * acc;
          if (c) {
            const auto cs = static_cast<std::int64_t>(c->size());
            v += beta * (*c)[static_cast<std::size_t>(cs == M * N ? m * N + n : cs == 1 ? 0 : n)];
          }
          y[static_cast<std::size_t>(m * N + n)] = static_cast<float>(v);
        }
      return y;
    }
    case ir::OpKind::Trilu: {
      Values y = x;
      const std::int64_t rows = xs[xs.size() - 2], cols = xs.back(), k = op.get_int("k");
      const bool upper = op.get_int("upper") != 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        const auto r = static_cast<std::int64_t>(i) / cols % rows;
        const auto c = static_cast<std::int64_t>(i) % cols;
        if (upper ? c - r < k : c - r > k) y[i] = 0.0f;
      }
      return y;
    }
    default:
      return std::nullopt;
  }
}

/// Values of `op`'s single result, or nullopt when the kind is not folded (Conv, pools, Softmax
/// and the quantization ops other than Dequantize stay: folding them is either rare in practice
/// or would fix a rounding choice the quantizer owns; a Gemm of constants folds, since the
/// quantizer has no integer form for it).
std::optional<Values> evaluate(const ir::Graph& graph, const ir::Op& op) {
  auto in = [&](std::size_t slot) -> const ir::Tensor& { return graph.tensor(op.inputs[slot]); };
  const ir::Shape& out_shape = graph.tensor(op.outputs[0]).shape;
  switch (op.kind) {
    case ir::OpKind::Relu: {
      Values y = in(0).f32_values;
      for (float& v : y) v = std::max(v, 0.0f);
      return y;
    }
    case ir::OpKind::Clip: {
      Values y = in(0).f32_values;
      const auto lo = static_cast<float>(op.get_float("min"));
      const auto hi = static_cast<float>(op.get_float("max"));
      for (float& v : y) v = std::min(std::max(v, lo), hi);
      return y;
    }
    case ir::OpKind::Scale: {
      const Values zero(static_cast<std::size_t>(in(0).shape.at(1)), 0.0f);
      return channel_affine(in(0), in(1).f32_values,
                            op.inputs.size() == 3 ? in(2).f32_values : zero);
    }
    case ir::OpKind::BatchNormalization: {
      const double epsilon = op.get_float("epsilon");
      const Values& gamma = in(1).f32_values;
      Values scale(gamma.size()), shift(gamma.size());
      for (std::size_t c = 0; c < gamma.size(); ++c) {
        const double s = gamma[c] / std::sqrt(static_cast<double>(in(4).f32_values[c]) + epsilon);
        scale[c] = static_cast<float>(s);
        shift[c] = static_cast<float>(in(2).f32_values[c] - in(3).f32_values[c] * s);
      }
      return channel_affine(in(0), scale, shift);
    }
    case ir::OpKind::Flatten:
    case ir::OpKind::Reshape:
      return in(0).f32_values;
    case ir::OpKind::Concat: {
      const auto axis = static_cast<std::size_t>(
          op.get_int("axis") < 0 ? op.get_int("axis") + static_cast<std::int64_t>(out_shape.size())
                                 : op.get_int("axis"));
      std::int64_t outer = 1;
      for (std::size_t d = 0; d < axis; ++d) outer *= out_shape[d];
      Values y;
      y.reserve(static_cast<std::size_t>(ir::element_count(out_shape)));
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::size_t slot = 0; slot < op.inputs.size(); ++slot) {
          const ir::Tensor& part = in(slot);
          const std::int64_t block = ir::element_count(part.shape) / outer;
          const auto begin = part.f32_values.begin() + o * block;
          y.insert(y.end(), begin, begin + block);
        }
      }
      return y;
    }
    case ir::OpKind::Pad: {
      const ir::Shape& x_shape = in(0).shape;
      const auto& pads = op.get_ints("pads");
      const std::size_t rank = x_shape.size();
      Values y(static_cast<std::size_t>(ir::element_count(out_shape)),
               static_cast<float>(op.get_float("value")));
      const auto x_strides = strides_of(x_shape);
      const auto y_strides = strides_of(out_shape);
      for (std::int64_t i = 0; i < ir::element_count(x_shape); ++i) {
        std::int64_t target = 0;
        for (std::size_t d = 0; d < rank; ++d) {
          target += ((i / x_strides[d]) % x_shape[d] + pads[d]) * y_strides[d];
        }
        y[static_cast<std::size_t>(target)] = in(0).f32_values[static_cast<std::size_t>(i)];
      }
      return y;
    }
    case ir::OpKind::Dequantize: {
      const ir::Tensor& q = in(0);
      if (!q.quant || q.quant->per_channel() || q.int_values.empty()) return std::nullopt;
      Values y(q.int_values.size());
      for (std::size_t i = 0; i < y.size(); ++i) {
        y[i] = q.quant->scales[0] * static_cast<float>(q.int_values[i] - q.quant->zero_points[0]);
      }
      return y;
    }
    default:
      return evaluate_modern(graph, op);
  }
}

/// The kinds `evaluate` folds from f32 payloads (Dequantize reads integers and is not listed).
bool folded_kind(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::Relu:
    case ir::OpKind::Clip:
    case ir::OpKind::Add:
    case ir::OpKind::Scale:
    case ir::OpKind::BatchNormalization:
    case ir::OpKind::Flatten:
    case ir::OpKind::Reshape:
    case ir::OpKind::Concat:
    case ir::OpKind::Pad:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Div:
    case ir::OpKind::Pow:
    case ir::OpKind::Where:
    case ir::OpKind::Transpose:
    case ir::OpKind::Slice:
    case ir::OpKind::Gather:
    case ir::OpKind::Expand:
    case ir::OpKind::Trilu:
    case ir::OpKind::Gemm:
      return true;
    default:
      return ir::is_unary_function(kind);
  }
}

/// How an op's inputs allow folding: not at all, from their values, or structurally (every
/// input a constant without any payload or digest, as in a zoo model built without weights:
/// the result is a constant without payload too, so graphs with and without weights fold alike).
enum class Fold { No, FromValues, Structural };

Fold foldable_inputs(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == ir::OpKind::Input || op.inputs.empty() || op.outputs.size() != 1) return Fold::No;
  int with = 0, without = 0;
  for (const std::string& name : op.inputs) {
    const ir::Tensor& tensor = graph.tensor(name);
    if (!tensor.constant) return Fold::No;
    if (!tensor.has_data() && !tensor.elided_digest)
      ++without;
    else if (tensor.f32_values.empty() && op.kind != ir::OpKind::Dequantize)
      return Fold::No;
    else if (!tensor.has_data())
      return Fold::No;
    else
      ++with;
  }
  if (without == 0) return Fold::FromValues;
  return with == 0 && folded_kind(op.kind) ? Fold::Structural : Fold::No;
}

Status run_constant_folding(ir::Graph& graph) {
  auto order = ir::topological_order(graph);
  if (!order) return order.failure();
  std::vector<ir::OpId> folded;
  for (ir::OpId id : order.value()) {
    const ir::Op op = graph.op(id);
    const Fold fold = foldable_inputs(graph, op);
    if (fold == Fold::No) continue;
    if (Status inferred = ir::infer_shapes(graph, id); !inferred) return inferred;
    std::optional<Values> values = Values{};
    if (fold == Fold::FromValues) values = evaluate(graph, op);
    if (!values) continue;
    // The result becomes a constant under the same name; readers need no rewiring.
    ir::Tensor& result = graph.tensor_mut(op.outputs[0]);
    result.constant = true;
    result.dtype = ir::DType::f32;
    result.f32_values = std::move(*values);
    folded.push_back(id);
  }
  graph.remove_ops(folded);
  graph.remove_unused_tensors();
  return {};
}

}  // namespace

const PassInfo& constant_folding_pass() {
  static const PassInfo info{
      "constant-folding",
      "Evaluate elementwise and data-movement ops whose inputs are all constants",
      run_constant_folding};
  return info;
}

}  // namespace tessel::passes
