// Topological order, reachability and (post-)dominators on hand-drawn graphs.
#include "compiler/ir/analysis.hpp"

#include <gtest/gtest.h>

#include "compiler/ir/text.hpp"

namespace tessel::ir {
namespace {

// x -> a -> b -> d ; a -> c -> d ; d -> e      (a diamond between a and d)
Graph diamond() {
  return parse_text(R"(graph diamond {
  input %x : f32[1,1,2,2]
  %a = Relu(%x) : f32[1,1,2,2]
  %b = Relu(%a) : f32[1,1,2,2]
  %c = Relu(%a) : f32[1,1,2,2]
  %d = Add(%b, %c) : f32[1,1,2,2]
  %e = Relu(%d) : f32[1,1,2,2]
  output %e
})");
}

TEST(Analysis, topological_order_keeps_creation_order_when_valid) {
  const Graph g = diamond();
  const auto order = topological_order(g);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order.value(), (std::vector<OpId>{0, 1, 2, 3, 4, 5}));
}

TEST(Analysis, topological_order_sorts_out_of_order_text) {
  const Graph g = parse_text(R"(graph g {
  input %x : f32[1,1,2,2]
  %b = Relu(%a) : f32[1,1,2,2]
  %a = Relu(%x) : f32[1,1,2,2]
  output %b
})");
  const auto order = topological_order(g);
  ASSERT_TRUE(order.ok());
  std::vector<std::string> names;
  for (OpId id : order.value()) names.push_back(g.op(id).name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "a", "b"}));
}

TEST(Analysis, topological_order_fails_naming_the_cycle) {
  const Graph g = parse_text(R"(graph g {
  input %x : f32[1,1,2,2]
  %a = Add(%x, %b) : f32[1,1,2,2]
  %b = Relu(%a) : f32[1,1,2,2]
  output %b
})");
  const auto order = topological_order(g);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.reason(), "cycle among ops: %a, %b");
}

TEST(Analysis, reachability_follows_data_edges_only_forward) {
  const Graph g = diamond();
  EXPECT_TRUE(reaches(g, *g.find_op("a"), *g.find_op("e")));
  EXPECT_TRUE(reaches(g, *g.find_op("b"), *g.find_op("d")));
  EXPECT_FALSE(reaches(g, *g.find_op("b"), *g.find_op("c")));
  EXPECT_FALSE(reaches(g, *g.find_op("e"), *g.find_op("a")));
  EXPECT_TRUE(reaches(g, *g.find_op("c"), *g.find_op("c")));
}

TEST(Analysis, dominators_of_a_diamond) {
  const Graph g = diamond();
  const DominatorTree dom = dominator_tree(g);
  auto id = [&](const char* name) { return *g.find_op(name); };
  EXPECT_EQ(dom.idom[id("x")], std::nullopt);
  EXPECT_EQ(dom.idom[id("a")], id("x"));
  EXPECT_EQ(dom.idom[id("b")], id("a"));
  EXPECT_EQ(dom.idom[id("c")], id("a"));
  EXPECT_EQ(dom.idom[id("d")], id("a"));  // neither branch dominates the join
  EXPECT_EQ(dom.idom[id("e")], id("d"));
  EXPECT_TRUE(dom.dominates(id("a"), id("e")));
  EXPECT_FALSE(dom.dominates(id("b"), id("d")));
}

TEST(Analysis, post_dominators_of_a_diamond) {
  const Graph g = diamond();
  const DominatorTree post = post_dominator_tree(g);
  auto id = [&](const char* name) { return *g.find_op(name); };
  EXPECT_EQ(post.idom[id("e")], std::nullopt);
  EXPECT_EQ(post.idom[id("d")], id("e"));
  EXPECT_EQ(post.idom[id("b")], id("d"));
  EXPECT_EQ(post.idom[id("c")], id("d"));
  EXPECT_EQ(post.idom[id("a")], id("d"));  // the fork is post-dominated by the join
  EXPECT_TRUE(post.dominates(id("d"), id("x")));
}

}  // namespace
}  // namespace tessel::ir
