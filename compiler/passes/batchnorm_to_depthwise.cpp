// Pass batchnorm-to-depthwise: BatchNormalization becomes Caffe's BatchNorm and Scale layers,
// each a depthwise 1x1 Conv, so that an unfolded network quantizes and runs on integer ops.
#include <cmath>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/payload.hpp"

namespace tessel::passes {
namespace {

// y = (x - mean) / sqrt(var + eps) * gamma + beta is, per channel c, two affine maps:
//   BatchNorm layer  n = x * inv_std[c] + (-mean[c] * inv_std[c])   inv_std = 1 / sqrt(var + eps)
//   Scale layer      y = n * gamma[c] + beta[c]
// Each is a Conv with kernel 1x1, group = C, weight [C,1,1,1] and bias [C], which the quantizer
// (per-channel weight scale, int32 bias, per-channel requantize), the golden executor and codegen
// already have. The Scale layer keeps the BN's op name and result tensor, so readers and graph
// outputs do not change; the BatchNorm layer and the normalised tensor are named <bn>.norm.
Status unfold_one(ir::Graph& graph, const std::string& name) {
  const ir::OpId id = *graph.find_op(name);
  const ir::Op bn = graph.op(id);
  const std::string where = "%" + bn.name + " (BatchNormalization)";
  const ir::Tensor& x = graph.tensor(bn.inputs[0]);
  if (x.shape.size() != 4)
    return fail(where + ": input %" + x.name + " has rank " + std::to_string(x.shape.size()) +
                "; a depthwise Conv needs an NCHW tensor");
  auto compute = detail::payload_available(
      graph, {bn.inputs[1], bn.inputs[2], bn.inputs[3], bn.inputs[4]}, where);
  if (!compute) return compute.failure();
  const std::int64_t channels = x.shape[1];
  const auto count = static_cast<std::size_t>(channels);
  if (ir::element_count(graph.tensor(bn.inputs[1]).shape) != channels)
    return fail(where + ": %" + bn.inputs[1] + " does not hold one value per channel of %" +
                x.name + " (" + std::to_string(channels) + ")");

  std::vector<float> norm_weight, norm_bias, scale_weight, scale_bias;
  if (compute.value()) {
    const double epsilon = bn.get_float("epsilon");
    const auto& mean = graph.tensor(bn.inputs[3]).f32_values;
    const auto& var = graph.tensor(bn.inputs[4]).f32_values;
    norm_weight.resize(count);
    norm_bias.resize(count);
    for (std::size_t c = 0; c < count; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon);
      norm_weight[c] = static_cast<float>(inv_std);
      norm_bias[c] = static_cast<float>(-static_cast<double>(mean[c]) * inv_std);
    }
    scale_weight = graph.tensor(bn.inputs[1]).f32_values;
    scale_bias = graph.tensor(bn.inputs[2]).f32_values;
  }
  const ir::Shape weight_shape{channels, 1, 1, 1};
  const std::string nw =
      detail::add_constant(graph, bn.name + ".norm_weight", weight_shape, std::move(norm_weight));
  const std::string nb =
      detail::add_constant(graph, bn.name + ".norm_bias", {channels}, std::move(norm_bias));
  const std::string sw =
      detail::add_constant(graph, bn.name + ".scale_weight", weight_shape, std::move(scale_weight));
  const std::string sb =
      detail::add_constant(graph, bn.name + ".scale_bias", {channels}, std::move(scale_bias));

  using Ints = std::vector<std::int64_t>;
  const ir::Attrs depthwise = {{"kernel", Ints{1, 1}},
                               {"stride", Ints{1, 1}},
                               {"pad", Ints{0, 0, 0, 0}},
                               {"group", channels}};
  ir::Tensor norm_type = graph.tensor(bn.outputs[0]);
  norm_type.name = graph.unique_name(bn.name + ".norm");
  const std::string norm_name = norm_type.name;
  if (Status s = graph.declare_tensor(norm_type); !s) return s;
  graph.remove_ops({id});
  auto norm = graph.add_op(
      ir::Op{norm_name, ir::OpKind::Conv, {bn.inputs[0], nw, nb}, {norm_name}, depthwise});
  if (!norm) return norm.failure();
  auto scale =
      graph.add_op(ir::Op{bn.name, ir::OpKind::Conv, {norm_name, sw, sb}, bn.outputs, depthwise});
  if (!scale) return scale.failure();
  return {};
}

Status run_batchnorm_to_depthwise(ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    if (graph.op(id).kind == ir::OpKind::BatchNormalization) names.push_back(graph.op(id).name);
  }
  if (names.empty()) return {};
  for (const std::string& name : names) {
    if (Status s = unfold_one(graph, name); !s) return s;
  }
  graph.remove_unused_tensors();
  return graph.sort_topologically();
}

}  // namespace

const PassInfo& batchnorm_to_depthwise_pass() {
  static const PassInfo info{
      "batchnorm-to-depthwise",
      "BatchNormalization -> Caffe's BatchNorm and Scale layers, each a depthwise 1x1 Conv",
      run_batchnorm_to_depthwise};
  return info;
}

}  // namespace tessel::passes
