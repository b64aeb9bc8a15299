// Pass dce: removes ops none of whose results reach a graph output, then unused tensors.
#include <set>

#include "compiler/ir/analysis.hpp"
#include "compiler/passes/pass.hpp"

namespace tessel::passes {
namespace {

Status run_dce(ir::Graph& graph) {
  // An op is live when it produces a graph output or feeds a live op: walk backwards from the
  // output producers. Graph inputs stay even when unused (they are the graph's interface).
  std::vector<bool> live(graph.num_ops(), false);
  std::vector<ir::OpId> work;
  for (const std::string& output : graph.outputs()) {
    if (auto producer = graph.producer(output)) work.push_back(*producer);
  }
  while (!work.empty()) {
    const ir::OpId id = work.back();
    work.pop_back();
    if (live[id]) continue;
    live[id] = true;
    for (ir::OpId pred : graph.predecessors(id)) work.push_back(pred);
  }
  std::vector<ir::OpId> dead;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    if (!live[id] && graph.op(id).kind != ir::OpKind::Input) dead.push_back(id);
  }
  graph.remove_ops(dead);
  graph.remove_unused_tensors();
  return {};
}

}  // namespace

const PassInfo& dce_pass() {
  static const PassInfo info{"dce", "Remove ops whose results reach no graph output", run_dce};
  return info;
}

}  // namespace tessel::passes
