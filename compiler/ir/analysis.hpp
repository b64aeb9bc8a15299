// Graph analyses on the Boost graph: topological order, reachability, (post-)dominator trees.
#pragma once

#include <optional>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::ir {

/// Ops in a topological order: creation (id) order when that already is one (builders, parsed
/// text), else boost::topological_sort's (deterministic) order. Fails on a cycle, naming the ops of
/// every cycle
/// ("cycle among ops: %a -> %b -> %a").
Result<std::vector<OpId>> topological_order(const Graph& graph);

/// The strongly connected components with more than one op, or a self-loop: each is a cycle.
/// Op names in each component are sorted.
std::vector<std::vector<OpId>> cycles(const Graph& graph);

/// Every op reachable from `from` along data edges (`from` included), as a bit per OpId.
std::vector<bool> reachable_from(const Graph& graph, OpId from);
/// True when a path of data edges leads from `from` to `to` (true when from == to).
bool reaches(const Graph& graph, OpId from, OpId to);

/// A dominator tree over ops: `idom[v]` is v's immediate dominator, nullopt for ops dominated
/// only by the virtual root (the graph's entry, joined to every op without predecessors) and
/// for ops unreachable from it.
struct DominatorTree {
  std::vector<std::optional<OpId>> idom;

  /// True when `a` dominates `b` (every op dominates itself).
  bool dominates(OpId a, OpId b) const;
};

/// Dominators (boost::lengauer_tarjan_dominator_tree) from a virtual entry feeding every op
/// with no predecessors. Defined for any graph, cyclic ones included.
DominatorTree dominator_tree(const Graph& graph);
/// Post-dominators: the same algorithm on the reversed graph from a virtual exit fed by every
/// op producing a graph output and every op without successors.
DominatorTree post_dominator_tree(const Graph& graph);

}  // namespace tessel::ir
