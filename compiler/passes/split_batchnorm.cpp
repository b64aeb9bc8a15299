// Pass split-batchnorm: BatchNormalization becomes Caffe's pair, normalise (BN) then Scale.
#include "compiler/passes/pass.hpp"
#include "compiler/passes/payload.hpp"

namespace tessel::passes {
namespace {

// y = (x - mean) / sqrt(var + eps) * gamma + beta  ==  Scale(BN(x, 1, 0, mean, var), gamma, beta)
// The BN keeps its name and result; the Scale (named <bn>.scale) takes over its readers.
Status run_split_batchnorm(ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    if (graph.op(id).kind == ir::OpKind::BatchNormalization) names.push_back(graph.op(id).name);
  }
  for (const std::string& name : names) {
    const ir::OpId id = *graph.find_op(name);
    const ir::Op bn = graph.op(id);
    const std::string where = "%" + bn.name + " (BatchNormalization)";
    auto compute = detail::payload_available(graph, {bn.inputs[1], bn.inputs[2]}, where);
    if (!compute) return compute.failure();
    const ir::Shape channel_shape = graph.tensor(bn.inputs[1]).shape;
    const auto channels = static_cast<std::size_t>(ir::element_count(channel_shape));
    const std::string ones = detail::add_constant(
        graph, bn.name + ".unit_weight", channel_shape,
        compute.value() ? std::vector<float>(channels, 1.0f) : std::vector<float>{});
    const std::string zeros = detail::add_constant(
        graph, bn.name + ".zero_bias", channel_shape,
        compute.value() ? std::vector<float>(channels, 0.0f) : std::vector<float>{});
    ir::Tensor scale_type = graph.tensor(bn.outputs[0]);
    scale_type.name = graph.unique_name(bn.name + ".scale");
    const std::string scale_name = scale_type.name;
    if (Status s = graph.declare_tensor(scale_type); !s) return s;
    if (Status s = graph.replace_all_uses(bn.outputs[0], scale_name); !s) return s;
    auto added = graph.add_op(ir::Op{scale_name,
                                     ir::OpKind::Scale,
                                     {bn.outputs[0], bn.inputs[1], bn.inputs[2]},
                                     {scale_name},
                                     {}});
    if (!added) return added.failure();
    if (Status s = graph.set_input(id, 1, ones); !s) return s;
    if (Status s = graph.set_input(id, 2, zeros); !s) return s;
  }
  return graph.sort_topologically();
}

}  // namespace

const PassInfo& split_batchnorm_pass() {
  static const PassInfo info{"split-batchnorm",
                             "Split BatchNormalization into normalise + Scale, as Caffe has them",
                             run_split_batchnorm};
  return info;
}

}  // namespace tessel::passes
