// Pass batchnorm-to-conv: every BatchNormalization of an NCHW tensor becomes one depthwise 1x1
// Conv (per channel y = x * s + (beta - mean * s), s = gamma / sqrt(var + eps)), which the
// quantizer handles as any Conv: a per-channel scale. For the BNs fold-batchnorm cannot fold
// (DenseNet's pre-activation BN reads a Concat); batchnorm-to-depthwise is the two-layer
// Caffe form of the same map, kept for the layerwise baseline.
#include <cmath>
#include <set>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"
#include "compiler/passes/payload.hpp"

namespace tessel::passes {
namespace {

Result<std::optional<detail::Rewrite>> one_conv(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& bn = graph.op(id);
  const ir::Tensor& x = graph.tensor(bn.inputs[0]);
  // Another rank has no Conv form; the fp32 executor runs it and the quantizer names it.
  if (x.shape.size() != 4 || x.dtype != ir::DType::f32) return std::optional<detail::Rewrite>{};
  const std::string where = "%" + bn.name + " (BatchNormalization)";
  auto compute = detail::payload_available(
      graph, {bn.inputs[1], bn.inputs[2], bn.inputs[3], bn.inputs[4]}, where);
  if (!compute) return compute.failure();
  const std::int64_t channels = x.shape[1];
  const auto count = static_cast<std::size_t>(channels);
  for (int slot = 1; slot <= 4; ++slot) {
    if (ir::element_count(graph.tensor(bn.inputs[slot]).shape) != channels)
      return fail(where + ": %" + bn.inputs[slot] + " does not hold one value per channel of %" +
                  x.name + " (" + std::to_string(channels) + ")");
  }
  std::vector<float> weight, bias;
  if (compute.value()) {
    const double epsilon = bn.get_float("epsilon");
    const auto& gamma = graph.tensor(bn.inputs[1]).f32_values;
    const auto& beta = graph.tensor(bn.inputs[2]).f32_values;
    const auto& mean = graph.tensor(bn.inputs[3]).f32_values;
    const auto& var = graph.tensor(bn.inputs[4]).f32_values;
    weight.resize(count);
    bias.resize(count);
    for (std::size_t c = 0; c < count; ++c) {
      const double s = gamma[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
      weight[c] = static_cast<float>(s);
      bias[c] = static_cast<float>(beta[c] - mean[c] * s);
    }
  }
  detail::Rewrite rewrite;
  const std::string w = graph.unique_name(bn.name + ".weight");
  const std::string b = graph.unique_name(bn.name + ".bias");
  rewrite.constants.push_back(detail::make_constant(w, {channels, 1, 1, 1}, std::move(weight)));
  rewrite.constants.push_back(detail::make_constant(b, {channels}, std::move(bias)));
  using Ints = std::vector<std::int64_t>;
  rewrite.removed = {id};
  rewrite.replacement = ir::Op{bn.name,
                               ir::OpKind::Conv,
                               {bn.inputs[0], w, b},
                               bn.outputs,
                               {{"kernel", Ints{1, 1}},
                                {"stride", Ints{1, 1}},
                                {"pad", Ints{0, 0, 0, 0}},
                                {"group", channels}}};
  return std::optional{std::move(rewrite)};
}

Status run_batchnorm_to_conv(ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    if (graph.op(id).kind == ir::OpKind::BatchNormalization) names.push_back(graph.op(id).name);
  }
  std::set<std::string> added;
  for (const std::string& name : names) {
    auto rewrite = one_conv(graph, *graph.find_op(name));
    if (!rewrite) return rewrite.failure();
    if (!rewrite.value()) continue;
    if (Status s = detail::apply_rewrite(graph, std::move(*rewrite.value())); !s) return s;
    added.insert(name);
  }
  return detail::place_new_ops(graph, added);
}

}  // namespace

const PassInfo& batchnorm_to_conv_pass() {
  static const PassInfo info{
      "batchnorm-to-conv",
      "BatchNormalization of an NCHW tensor -> one depthwise 1x1 Conv (per-channel scale, bias)",
      run_batchnorm_to_conv};
  return info;
}

}  // namespace tessel::passes
