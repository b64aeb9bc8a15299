// Pass pools-before-concat: a MaxPool that alone reads a channel Concat becomes one MaxPool per
// Concat input, concatenated: MaxPool(Concat(x1..xn)) -> Concat(MaxPool(x1)..MaxPool(xn)).
//
// A max pool is per channel, so the two are the same tensor. On integers they are too: a
// MaxPool and a Concat share their inputs' scale (docs/quantization.md, "scale classes"), so
// on a quantized graph the rewrite keeps every integer. (Run before calibration it would not:
// a histogram threshold of the unpooled Concat would be missing; pools_before_concat.hpp.)
// What changes is what a schedule must hold:
// the unpooled concatenation is never formed, and each branch is pooled as soon as it is
// complete (GoogLeNet's maxpool3 and maxpool4; docs/scheduler.md, "Pools before Concat").
#include <optional>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pools_before_concat.hpp"

namespace tessel::passes {
namespace {

/// The Concat that `pool` reads when the rewrite applies: a channel Concat (axis 1) whose only
/// reader is `pool` and whose result is no graph output.
std::optional<ir::OpId> pooled_concat(const ir::Graph& graph, const ir::Op& pool) {
  if (pool.kind != ir::OpKind::MaxPool || pool.inputs.size() != 1 || pool.outputs.size() != 1)
    return std::nullopt;
  const std::string& joined = pool.inputs[0];
  const auto producer = graph.producer(joined);
  if (!producer) return std::nullopt;
  const ir::Op& concat = graph.op(*producer);
  if (concat.kind != ir::OpKind::Concat || concat.get_int("axis") != 1) return std::nullopt;
  if (graph.consumers(joined).size() != 1) return std::nullopt;
  for (const std::string& output : graph.outputs())
    if (output == joined) return std::nullopt;
  return producer;
}

/// Rewrites one pool; returns the names of the ops it added.
Result<std::vector<std::string>> rewrite(ir::Graph& graph, const std::string& pool_name) {
  const ir::Op pool = graph.op(*graph.find_op(pool_name));
  const ir::OpId concat_id = *pooled_concat(graph, pool);
  const ir::Op concat = graph.op(concat_id);
  const ir::Tensor pooled_type = graph.tensor(pool.outputs[0]);

  std::vector<ir::Op> parts;
  std::vector<ir::Tensor> part_types;
  for (std::size_t k = 0; k < concat.inputs.size(); ++k) {
    ir::Op part = pool;
    part.name = graph.unique_name(pool.name + "." + std::to_string(k));
    part.inputs = {concat.inputs[k]};
    part.outputs = {part.name};
    ir::Tensor type = pooled_type;
    type.name = part.name;
    const ir::Tensor& input = graph.tensor(concat.inputs[k]);
    if (type.has_shape()) {
      if (!input.has_shape()) {
        return fail("%" + concat.name + " (Concat): input '" + concat.inputs[k] +
                    "' has no shape while %" + pool.name + "'s result has one");
      }
      type.shape[1] = input.shape.at(1);
    }
    parts.push_back(std::move(part));
    part_types.push_back(std::move(type));
  }
  ir::Op joined = concat;
  joined.inputs.clear();
  for (const ir::Op& part : parts) joined.inputs.push_back(part.outputs[0]);
  joined.outputs = pool.outputs;

  std::vector<std::string> names;
  for (const ir::Op& part : parts) names.push_back(part.name);
  names.push_back(joined.name);
  graph.remove_ops({concat_id, *graph.find_op(pool_name)});
  for (ir::Tensor& type : part_types)
    if (Status s = graph.declare_tensor(std::move(type)); !s) return s.failure();
  for (ir::Op& part : parts)
    if (auto added = graph.add_op(std::move(part)); !added) return added.failure();
  if (auto added = graph.add_op(std::move(joined)); !added) return added.failure();
  return names;
}

/// The pools the pass rewrites, by name (each rewrite renumbers ops).
std::vector<std::string> rewritten_pools(const ir::Graph& graph) {
  std::vector<std::string> pools;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (pooled_concat(graph, graph.op(id))) pools.push_back(graph.op(id).name);
  return pools;
}

Status run_pools_before_concat(ir::Graph& graph) {
  const std::vector<std::string> pools = rewritten_pools(graph);
  if (pools.empty()) return {};
  std::vector<std::string> added;
  for (const std::string& name : pools) {
    auto names = rewrite(graph, name);
    if (!names.ok()) return names.failure();
    added.insert(added.end(), names.value().begin(), names.value().end());
  }
  graph.remove_unused_tensors();
  // Each part right after the branch it pools, the Concat right after its last part: a
  // schedule that follows the order pools a branch while it is on chip.
  std::vector<bool> eager(graph.num_ops(), false);
  for (const std::string& name : added) eager[*graph.find_op(name)] = true;
  return graph.sort_topologically(eager);
}

}  // namespace

bool pools_before_concat_for_policy(std::string_view policy) {
  return policy == "optimal";
}

Status pools_before_concat(ir::Graph& float_graph, ir::Graph& quantized_graph) {
  const std::vector<std::string> pools = rewritten_pools(float_graph);
  if (rewritten_pools(quantized_graph) != pools) {
    return fail(
        "the float and the quantized graph do not have the same MaxPools over a Concat "
        "(is the quantized graph made from this float graph?)");
  }
  if (pools.empty()) return {};
  ir::Graph f = float_graph, q = quantized_graph;
  if (Status s = run_pools_before_concat(f); !s) return fail("float graph: " + s.reason());
  if (Status s = run_pools_before_concat(q); !s) return fail("quantized graph: " + s.reason());
  float_graph = std::move(f);
  quantized_graph = std::move(q);
  return {};
}

bool pools_before_concat_applies(const ir::Graph& graph) {
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (pooled_concat(graph, graph.op(id))) return true;
  return false;
}

const PassInfo& pools_before_concat_pass() {
  static const PassInfo info{
      "pools-before-concat",
      "MaxPool(Concat(x1..xn)) -> Concat(MaxPool(x1)..MaxPool(xn)) where the Concat feeds only "
      "the pool",
      run_pools_before_concat};
  return info;
}

}  // namespace tessel::passes
