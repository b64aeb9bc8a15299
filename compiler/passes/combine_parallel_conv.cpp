// Pass combine-parallel-conv: convs reading one tensor with one geometry become a wider conv
// followed by a Split (Relay's CombineParallelConv2D, NeoFlow's parallel fusion).
#include <map>
#include <tuple>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/payload.hpp"

namespace tessel::passes {
namespace {

/// Convs can merge when they read the same input with the same window geometry, group 1, and
/// agree on having a bias and on their result types; output channel counts may differ.
struct MergeKey {
  std::string input;
  std::vector<std::int64_t> kernel, stride, pad, dilation;
  bool has_bias;
  ir::DType weight_dtype, output_dtype;
  bool operator<(const MergeKey& o) const {
    return std::tie(input, kernel, stride, pad, dilation, has_bias, weight_dtype, output_dtype) <
           std::tie(o.input, o.kernel, o.stride, o.pad, o.dilation, o.has_bias, o.weight_dtype,
                    o.output_dtype);
  }
};

std::vector<float> concat_rows(const ir::Graph& graph, const std::vector<std::string>& names,
                               bool compute) {
  std::vector<float> values;
  if (!compute) return values;
  for (const std::string& name : names) {
    const auto& part = graph.tensor(name).f32_values;
    values.insert(values.end(), part.begin(), part.end());
  }
  return values;
}

Status merge(ir::Graph& graph, const std::vector<ir::OpId>& group) {
  std::vector<ir::Op> convs;
  for (ir::OpId id : group) convs.push_back(graph.op(id));
  const ir::Op& first = convs.front();
  const std::string where = "%" + first.name + " (Conv)";
  std::vector<std::string> weights, biases, outputs;
  std::vector<std::int64_t> sizes;
  std::int64_t total = 0;
  for (const ir::Op& conv : convs) {
    weights.push_back(conv.inputs[1]);
    if (conv.inputs.size() == 3) biases.push_back(conv.inputs[2]);
    outputs.push_back(conv.outputs[0]);
    sizes.push_back(graph.tensor(conv.inputs[1]).shape.at(0));
    total += sizes.back();
  }
  std::vector<std::string> all_constants = weights;
  all_constants.insert(all_constants.end(), biases.begin(), biases.end());
  auto compute = detail::payload_available(graph, all_constants, where);
  if (!compute) return compute.failure();

  ir::Shape weight_shape = graph.tensor(weights[0]).shape;
  weight_shape[0] = total;
  const ir::Tensor result_type = graph.tensor(outputs[0]);
  const std::string weight =
      detail::add_constant(graph, first.name + ".combined.weight", weight_shape,
                           concat_rows(graph, weights, compute.value()));
  ir::Op combined = first;
  combined.name = graph.unique_name(first.name + ".combined");
  combined.outputs = {combined.name};
  combined.inputs[1] = weight;
  if (!biases.empty()) {
    combined.inputs[2] = detail::add_constant(graph, first.name + ".combined.bias", {total},
                                              concat_rows(graph, biases, compute.value()));
  }
  ir::Op split{graph.unique_name(first.name + ".split"),
               ir::OpKind::Split,
               {combined.name},
               outputs,
               {{"axis", std::int64_t{1}}, {"split", sizes}}};

  graph.remove_ops(group);  // the results stay, now without producer, until Split defines them
  ir::Tensor combined_type = result_type;
  combined_type.name = combined.name;
  if (result_type.has_shape()) combined_type.shape[1] = total;
  if (Status s = graph.declare_tensor(combined_type); !s) return s;
  if (auto added = graph.add_op(std::move(combined)); !added) return added.failure();
  if (auto added = graph.add_op(std::move(split)); !added) return added.failure();
  return {};
}

Status run_combine_parallel_conv(ir::Graph& graph) {
  // Collect groups first (by op name: merging renumbers ids), then merge one group at a time.
  std::map<MergeKey, std::vector<std::string>> buckets;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    const ir::Op& op = graph.op(id);
    if (op.kind != ir::OpKind::Conv || op.get_int("group") != 1) continue;
    const ir::Tensor& output = graph.tensor(op.outputs[0]);
    if (output.quant || graph.tensor(op.inputs[1]).quant) continue;  // per-conv scales differ
    MergeKey key{op.inputs[0],
                 op.get_ints("kernel"),
                 op.get_ints("stride"),
                 op.get_ints("pad"),
                 op.get_ints("dilation"),
                 op.inputs.size() == 3,
                 graph.tensor(op.inputs[1]).dtype,
                 output.dtype};
    buckets[std::move(key)].push_back(op.name);
  }
  for (const auto& [key, names] : buckets) {
    if (names.size() < 2) continue;
    std::vector<ir::OpId> group;
    for (const std::string& name : names) group.push_back(*graph.find_op(name));
    if (Status status = merge(graph, group); !status) return status;
  }
  graph.remove_unused_tensors();
  return graph.sort_topologically();
}

}  // namespace

const PassInfo& combine_parallel_conv_pass() {
  static const PassInfo info{
      "combine-parallel-conv",
      "Merge convs sharing an input and geometry into one wider conv followed by a Split",
      run_combine_parallel_conv};
  return info;
}

}  // namespace tessel::passes
