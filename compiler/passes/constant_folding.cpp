// Pass constant-folding: ops whose inputs are all constants with payloads become constants.
#include <algorithm>
#include <cmath>
#include <optional>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/shape_inference.hpp"
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

/// Values of `op`'s single result, or nullopt when the kind is not folded (Conv, Gemm, pools,
/// Softmax and the quantization ops other than Dequantize stay: folding them is either rare
/// in practice or would fix a rounding choice the quantizer owns).
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
    case ir::OpKind::Add: {
      Values y = in(0).f32_values;
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += in(1).f32_values[i];
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
      return std::nullopt;
  }
}

bool foldable_inputs(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == ir::OpKind::Input || op.inputs.empty() || op.outputs.size() != 1) return false;
  for (const std::string& name : op.inputs) {
    const ir::Tensor& tensor = graph.tensor(name);
    if (!tensor.constant || !tensor.has_data()) return false;
    if (op.kind != ir::OpKind::Dequantize && tensor.f32_values.empty()) return false;
  }
  return true;
}

Status run_constant_folding(ir::Graph& graph) {
  auto order = ir::topological_order(graph);
  if (!order) return order.failure();
  std::vector<ir::OpId> folded;
  for (ir::OpId id : order.value()) {
    const ir::Op op = graph.op(id);
    if (!foldable_inputs(graph, op)) continue;
    if (Status inferred = ir::infer_shapes(graph, id); !inferred) return inferred;
    auto values = evaluate(graph, op);
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
