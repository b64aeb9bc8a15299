// Pass cse: merges ops of the same kind, inputs and attributes (the later one is removed).
#include <map>
#include <tuple>

#include "compiler/ir/analysis.hpp"
#include "compiler/passes/pass.hpp"

namespace tessel::passes {
namespace {

/// Ops with equal keys compute the same values. Inputs are compared by name after earlier
/// merges have renamed them, so chains of duplicates collapse in one topological sweep.
struct Key {
  ir::OpKind kind;
  std::vector<std::string> inputs;
  ir::Attrs attrs;
  std::size_t num_outputs;
  bool operator<(const Key& other) const {
    return std::tie(kind, inputs, attrs, num_outputs) <
           std::tie(other.kind, other.inputs, other.attrs, other.num_outputs);
  }
};

Status run_cse(ir::Graph& graph) {
  auto order = ir::topological_order(graph);
  if (!order) return order.failure();
  std::map<Key, ir::OpId> seen;
  std::vector<ir::OpId> removed;
  for (ir::OpId id : order.value()) {
    const ir::Op& op = graph.op(id);
    if (op.kind == ir::OpKind::Input) continue;
    Key key{op.kind, op.inputs, op.attrs, op.outputs.size()};
    const auto [it, inserted] = seen.emplace(std::move(key), id);
    if (inserted) continue;
    const ir::Op& kept = graph.op(it->second);
    // A duplicate's result may differ in declared quantization; merging would change meaning.
    bool same_types = true;
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      const ir::Tensor& a = graph.tensor(op.outputs[i]);
      const ir::Tensor& b = graph.tensor(kept.outputs[i]);
      same_types = same_types && a.dtype == b.dtype && a.quant == b.quant;
    }
    if (!same_types) continue;
    const std::vector<std::string> outputs = op.outputs;
    const std::vector<std::string> kept_outputs = kept.outputs;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (Status status = graph.replace_all_uses(outputs[i], kept_outputs[i]); !status)
        return status;
    }
    removed.push_back(id);
  }
  graph.remove_ops(removed);
  graph.remove_unused_tensors();
  return {};
}

}  // namespace

const PassInfo& cse_pass() {
  static const PassInfo info{"cse", "Merge ops with the same kind, inputs and attributes", run_cse};
  return info;
}

}  // namespace tessel::passes
