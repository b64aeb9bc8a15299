// Topological order, cycles, reachability and dominator trees via Boost.Graph algorithms.
#include "compiler/ir/analysis.hpp"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

namespace tessel::ir {
namespace {

/// A plain bidirectional graph with a virtual root at vertex n, for the dominator algorithm.
using PlainGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

DominatorTree dominators_of(const PlainGraph& plain, std::size_t num_ops) {
  using Vertex = boost::graph_traits<PlainGraph>::vertex_descriptor;
  const Vertex root = num_ops;
  std::vector<Vertex> idom_storage(boost::num_vertices(plain),
                                   boost::graph_traits<PlainGraph>::null_vertex());
  auto index_map = boost::get(boost::vertex_index, plain);
  auto idom_map = boost::make_iterator_property_map(idom_storage.begin(), index_map);
  boost::lengauer_tarjan_dominator_tree(plain, root, idom_map);
  DominatorTree tree;
  tree.idom.resize(num_ops);
  for (std::size_t v = 0; v < num_ops; ++v) {
    const Vertex dom = idom_storage[v];
    if (dom != boost::graph_traits<PlainGraph>::null_vertex() && dom != root) tree.idom[v] = dom;
  }
  return tree;
}

}  // namespace

std::vector<std::vector<OpId>> cycles(const Graph& graph) {
  const BoostGraph& g = graph.boost_graph();
  const std::size_t n = graph.num_ops();
  std::vector<int> component(n);
  const int count =
      n ? boost::strong_components(g, boost::make_iterator_property_map(
                                          component.begin(), boost::get(boost::vertex_index, g)))
        : 0;
  std::vector<std::vector<OpId>> members(static_cast<std::size_t>(count));
  for (OpId v = 0; v < n; ++v) members[static_cast<std::size_t>(component[v])].push_back(v);
  std::vector<std::vector<OpId>> result;
  for (auto& group : members) {
    bool is_cycle = group.size() > 1;
    if (group.size() == 1) {
      for (auto [it, end] = boost::out_edges(group[0], g); it != end; ++it) {
        if (boost::target(*it, g) == group[0]) is_cycle = true;
      }
    }
    if (!is_cycle) continue;
    std::sort(group.begin(), group.end(),
              [&](OpId a, OpId b) { return graph.op(a).name < graph.op(b).name; });
    result.push_back(std::move(group));
  }
  std::sort(result.begin(), result.end(), [&](const auto& a, const auto& b) {
    return graph.op(a[0]).name < graph.op(b[0]).name;
  });
  return result;
}

Result<std::vector<OpId>> topological_order(const Graph& graph) {
  const auto found = cycles(graph);
  if (!found.empty()) {
    std::string message;
    for (const auto& cycle : found) {
      std::string names;
      for (OpId id : cycle) names += (names.empty() ? "%" : ", %") + graph.op(id).name;
      message += (message.empty() ? "" : "; ") + std::string("cycle among ops: ") + names;
    }
    return fail(message);
  }
  // Creation order when it already is topological (builders, parsed text): dumps then keep the
  // order a person wrote, and text round-trips are idempotent.
  const BoostGraph& g = graph.boost_graph();
  bool in_order = true;
  for (auto [it, end] = boost::edges(g); it != end && in_order; ++it) {
    in_order = boost::source(*it, g) < boost::target(*it, g);
  }
  if (in_order) {
    std::vector<OpId> identity(graph.num_ops());
    for (OpId v = 0; v < graph.num_ops(); ++v) identity[v] = v;
    return identity;
  }
  // boost::topological_sort emits vertices in reverse finishing order of a DFS that starts at
  // vertex 0, 1, ...; reversing gives producers before consumers.
  std::vector<OpId> reversed;
  reversed.reserve(graph.num_ops());
  boost::topological_sort(graph.boost_graph(), std::back_inserter(reversed));
  return std::vector<OpId>(reversed.rbegin(), reversed.rend());
}

std::vector<bool> reachable_from(const Graph& graph, OpId from) {
  const BoostGraph& g = graph.boost_graph();
  std::vector<boost::default_color_type> colors(graph.num_ops(), boost::white_color);
  auto color_map =
      boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_visit(g, from, boost::color_map(color_map));
  std::vector<bool> reached(graph.num_ops());
  for (OpId v = 0; v < graph.num_ops(); ++v) reached[v] = colors[v] != boost::white_color;
  return reached;
}

bool reaches(const Graph& graph, OpId from, OpId to) {
  return reachable_from(graph, from)[to];
}

bool DominatorTree::dominates(OpId a, OpId b) const {
  for (std::optional<OpId> v = b; v; v = idom[*v]) {
    if (*v == a) return true;
  }
  return false;
}

DominatorTree dominator_tree(const Graph& graph) {
  const std::size_t n = graph.num_ops();
  PlainGraph plain(n + 1);
  const BoostGraph& g = graph.boost_graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    boost::add_edge(boost::source(*it, g), boost::target(*it, g), plain);
  }
  for (OpId v = 0; v < n; ++v) {
    if (boost::in_degree(v, g) == 0) boost::add_edge(n, v, plain);
  }
  return dominators_of(plain, n);
}

DominatorTree post_dominator_tree(const Graph& graph) {
  const std::size_t n = graph.num_ops();
  PlainGraph plain(n + 1);
  const BoostGraph& g = graph.boost_graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    boost::add_edge(boost::target(*it, g), boost::source(*it, g), plain);
  }
  std::vector<bool> exits(n);
  for (const std::string& output : graph.outputs()) {
    if (auto producer = graph.producer(output)) exits[*producer] = true;
  }
  for (OpId v = 0; v < n; ++v) {
    if (exits[v] || boost::out_degree(v, g) == 0) boost::add_edge(n, v, plain);
  }
  return dominators_of(plain, n);
}

}  // namespace tessel::ir
