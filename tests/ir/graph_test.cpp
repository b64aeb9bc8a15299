// Graph building, lookup, rewriting and validation rules.
#include "compiler/ir/graph.hpp"

#include <gtest/gtest.h>

#include "compiler/ir/text.hpp"

namespace tessel::ir {
namespace {

Graph chain() {
  return parse_text(R"(graph chain {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %b = Relu(%a) : f32[1,2,4,4]
  %c = Add(%a, %b) : f32[1,2,4,4]
  output %c
})");
}

TEST(Graph, producers_and_consumers_follow_tensor_names) {
  const Graph g = chain();
  ASSERT_EQ(g.num_ops(), 4u);
  const OpId a = *g.find_op("a");
  const OpId b = *g.find_op("b");
  const OpId c = *g.find_op("c");
  EXPECT_EQ(g.producer("a"), a);
  EXPECT_EQ(g.producer("x"), g.find_op("x"));
  EXPECT_EQ(g.consumers("a"), (std::vector<Use>{{b, 0}, {c, 0}}));
  EXPECT_EQ(g.successors(a), (std::vector<OpId>{b, c}));
  EXPECT_EQ(g.predecessors(c), (std::vector<OpId>{a, b}));
  EXPECT_EQ(g.inputs(), (std::vector<OpId>{*g.find_op("x")}));
}

TEST(Graph, add_op_rejects_undefined_input_unknown_attribute_and_duplicate_producer) {
  Graph g = chain();
  auto undefined = g.add_op(Op{"d", OpKind::Relu, {"nope"}, {"d"}, {}});
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.reason(), "%d (Relu): input %nope is not defined");

  auto typo = g.add_op(Op{
      "p",
      OpKind::MaxPool,
      {"c"},
      {"p"},
      {{"kernel", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}}});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.reason(),
            "%p (MaxPool): MaxPool: unknown attribute 'strides'; did you mean 'stride'?");

  auto twice = g.add_op(Op{"e", OpKind::Relu, {"x"}, {"a"}, {}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.reason(), "%e (Relu): output %a is already produced by %a");

  auto arity = g.add_op(Op{"f", OpKind::Add, {"x"}, {"f"}, {}});
  ASSERT_FALSE(arity.ok());
  EXPECT_EQ(arity.reason(), "%f (Add): takes 2 inputs, got 1");
}

TEST(Graph, add_op_fills_schema_defaults) {
  Graph g = chain();
  auto id = g.add_op(
      Op{"p", OpKind::MaxPool, {"c"}, {"p"}, {{"kernel", std::vector<std::int64_t>{2, 2}}}});
  ASSERT_TRUE(id.ok()) << id.reason();
  const WindowGeometry geometry = window_geometry(g.op(id.value()));
  EXPECT_EQ(geometry.stride_h, 1);
  EXPECT_EQ(geometry.pad_bottom, 0);
  EXPECT_FALSE(geometry.ceil_mode);
}

TEST(Graph, replace_all_uses_rewires_edges_and_outputs) {
  Graph g = chain();
  ASSERT_TRUE(g.replace_all_uses("b", "x").ok());
  ASSERT_TRUE(g.replace_all_uses("c", "a").ok());
  EXPECT_TRUE(g.consumers("b").empty());
  EXPECT_EQ(g.outputs(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(g.predecessors(*g.find_op("c")), (std::vector<OpId>{*g.find_op("x"), *g.find_op("a")}));
}

TEST(Graph, remove_ops_renumbers_and_keeps_edges_consistent) {
  Graph g = chain();
  ASSERT_TRUE(g.replace_all_uses("c", "b").ok());
  g.remove_ops({*g.find_op("c")});
  EXPECT_EQ(g.num_ops(), 3u);
  EXPECT_EQ(g.remove_unused_tensors(), 1u);  // %c
  EXPECT_FALSE(g.has_tensor("c"));
  EXPECT_EQ(g.successors(*g.find_op("a")), (std::vector<OpId>{*g.find_op("b")}));
  EXPECT_TRUE(validate(g).ok()) << validate(g).reason();
}

TEST(Graph, validation_names_cycle_members_and_dangling_results) {
  const Graph g = parse_text(R"(graph loop {
  input %x : f32[1,1,2,2]
  %a = Add(%x, %c) : f32[1,1,2,2]
  %b = Relu(%a) : f32[1,1,2,2]
  %c = Relu(%b) : f32[1,1,2,2]
  %d = Relu(%x) : f32[1,1,2,2]
  output %b
})");
  const auto errors = validation_errors(g);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "cycle among ops: %a, %b, %c");
  EXPECT_EQ(errors[1], "%d (Relu): result %d is dangling (never read, not an output)");
}

TEST(Graph, validation_reports_tensor_never_produced) {
  Graph g("g");
  ASSERT_TRUE(g.add_input("x", {1, 1, 2, 2}).ok());
  Tensor ghost;
  ghost.name = "ghost";
  ASSERT_TRUE(g.declare_tensor(ghost).ok());
  ASSERT_TRUE(g.add_op(Op{"y", OpKind::Add, {"x", "ghost"}, {"y"}, {}}).ok());
  ASSERT_TRUE(g.set_outputs({"y"}).ok());
  EXPECT_EQ(validate(g).reason(), "%y (Add): input %ghost is never produced");
}

TEST(Graph, a_producer_added_after_its_reader_is_linked_to_it) {
  // add_op scans earlier ops for readers only when an output existed before it (issue 41:
  // in-order building is linear); a declared tensor, or one whose producer was removed, does.
  Graph g("g");
  ASSERT_TRUE(g.add_input("x", {1, 1, 2, 2}).ok());
  Tensor t;
  t.name = "t";
  ASSERT_TRUE(g.declare_tensor(t).ok());
  const OpId reader = g.add_op(Op{"r", OpKind::Relu, {"t"}, {"y"}, {}}).value();
  const OpId producer = g.add_op(Op{"p", OpKind::Relu, {"x"}, {"t"}, {}}).value();
  EXPECT_EQ(g.successors(producer), std::vector<OpId>{reader});
  EXPECT_EQ(g.predecessors(reader), std::vector<OpId>{producer});
  g.remove_ops({producer});  // %t stays, without a producer; %r keeps reading it
  const OpId again = g.add_op(Op{"p2", OpKind::Relu, {"x"}, {"t"}, {}}).value();
  const OpId r = g.find_op("r").value();
  EXPECT_EQ(g.successors(again), std::vector<OpId>{r});
  ASSERT_TRUE(g.set_outputs({"y"}).ok());
  EXPECT_TRUE(validate(g).ok()) << validate(g).reason();
}

TEST(Graph, parameter_count_excludes_batchnorm_statistics) {
  const Graph g = parse_text(R"(graph bn {
  input %x : f32[1,2,1,1]
  const %g : f32[2] = [1, 1]
  const %b : f32[2] = [0, 0]
  const %m : f32[2] = [0, 0]
  const %v : f32[2] = [1, 1]
  %y = BatchNormalization(%x, %g, %b, %m, %v) : f32[1,2,1,1]
  output %y
})");
  EXPECT_EQ(parameter_count(g), 4);
}

}  // namespace
}  // namespace tessel::ir
