// The causal-mask recogniser (scheduler/causal_mask.hpp) on hand-written masks: the band's
// diagonal from its values, and every mask it must refuse; then tiny_causal's RowSoftmax in the
// scheduler's view, and the exported q|k|v Split as slice views (the rest of what GPT-2 needs).
#include <gtest/gtest.h>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/causal_mask.hpp"
#include "scheduler/from_ir.hpp"

namespace tessel::sched {
namespace {

/// Softmax(scores [1, 2, 4, 5], mask) over the last axis: 4 queries, 5 keys, 2 heads.
ir::Graph masked_softmax(const ir::Shape& mask_shape, std::vector<float> keep) {
  ir::Graph graph;
  EXPECT_TRUE(graph.add_input("scores", {1, 2, 4, 5}).ok());
  ir::Tensor mask;
  mask.name = "mask";
  mask.shape = mask_shape;
  mask.constant = true;
  mask.f32_values = std::move(keep);
  EXPECT_TRUE(graph.add_constant(std::move(mask)).ok());
  EXPECT_TRUE(graph
                  .add_op(ir::Op{"softmax",
                                 ir::OpKind::Softmax,
                                 {"scores", "mask"},
                                 {"probs"},
                                 {{"axis", std::int64_t{-1}}}})
                  .ok());
  return graph;
}

std::optional<std::int64_t> diagonal_of(const ir::Shape& shape, std::vector<float> keep) {
  const ir::Graph graph = masked_softmax(shape, std::move(keep));
  return causal_diagonal(graph, graph.op(*graph.find_op("softmax")));
}

/// keep[i][j] = j <= i + k over `queries` x 5 keys.
std::vector<float> band(std::int64_t k, std::int64_t queries = 4) {
  std::vector<float> keep;
  for (std::int64_t i = 0; i < queries; ++i)
    for (std::int64_t j = 0; j < 5; ++j) keep.push_back(j <= i + k ? 1.0f : 0.0f);
  return keep;
}

TEST(CausalMask, a_lower_triangle_is_the_band_of_diagonal_zero) {
  // Row 0 keeps key 0, row 3 keys 0..3; key 4 is never kept (5 keys, 4 queries).
  EXPECT_EQ(diagonal_of({4, 5}, {1, 0, 0, 0, 0,  //
                                 1, 1, 0, 0, 0,  //
                                 1, 1, 1, 0, 0,  //
                                 1, 1, 1, 1, 0}),
            0);
}

TEST(CausalMask, a_band_past_the_diagonal_is_recognised_with_its_offset) {
  // A prefill chunk after one cached token: query i sees keys 0..i+1.
  EXPECT_EQ(diagonal_of({4, 5}, band(1)), 1);
  EXPECT_EQ(diagonal_of({1, 1, 4, 5}, band(1)), 1);  // leading broadcast dims
  EXPECT_EQ(diagonal_of({4, 5}, band(4)), 4);        // everything kept: still one band
}

TEST(CausalMask, the_same_band_in_every_head_is_recognised) {
  std::vector<float> two = band(0);
  const std::vector<float> again = band(0);
  two.insert(two.end(), again.begin(), again.end());
  EXPECT_EQ(diagonal_of({2, 4, 5}, two), 0);
}

TEST(CausalMask, masks_that_are_not_one_causal_band_are_refused) {
  // A padding mask: the last key masked for every query.
  std::vector<float> padding(20, 1.0f);
  for (int i = 0; i < 4; ++i) padding[static_cast<std::size_t>(i * 5 + 4)] = 0.0f;
  EXPECT_FALSE(diagonal_of({4, 5}, padding).has_value());
  // The band of row 0 broken further down (query 2 misses key 1).
  std::vector<float> broken = band(0);
  broken[2 * 5 + 1] = 0.0f;
  EXPECT_FALSE(diagonal_of({4, 5}, broken).has_value());
  // Query 0 keeps nothing (k = -1): the ISA's band would differ from the golden empty row.
  EXPECT_FALSE(diagonal_of({4, 5}, band(-1)).has_value());
  // An upper triangle (keys at or after the query).
  std::vector<float> upper;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) upper.push_back(j >= i ? 1.0f : 0.0f);
  EXPECT_FALSE(diagonal_of({4, 5}, upper).has_value());
  // Two heads with different bands.
  std::vector<float> two = band(0);
  const std::vector<float> other = band(1);
  two.insert(two.end(), other.begin(), other.end());
  EXPECT_FALSE(diagonal_of({2, 4, 5}, two).has_value());
  // A mask broadcast along the queries ([1, 5]) is a padding mask, whatever its values.
  EXPECT_FALSE(diagonal_of({1, 5}, {1, 1, 1, 1, 1}).has_value());
}

TEST(CausalMask, a_mask_without_values_is_refused) {
  EXPECT_FALSE(diagonal_of({4, 5}, {}).has_value());
}

// A Softmax on the accelerator with any other mask is refused by name, naming the mask:
// tiny_causal with its mask made a padding mask (the last key of every query masked).
TEST(CausalMask, the_scheduler_refuses_a_padding_mask_naming_the_op_and_the_mask) {
  auto graph = zoo::build_model("tiny_causal", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  std::vector<float>& keep = graph.value().tensor_mut("causal_mask").f32_values;
  ASSERT_EQ(keep.size(), 256u);
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = i % 16 == 15 ? 0.0f : 1.0f;
  Machine machine = unified_machine(1024 * 1024);
  machine.lookup_table = machine.row_normalise = machine.activation_operands = true;
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.reason().find("'h.0.attn.softmax' (Softmax)"), std::string::npos) << net.reason();
  EXPECT_NE(net.reason().find("its mask 'causal_mask' is not a constant causal band"),
            std::string::npos)
      << net.reason();
}

// An exported q|k|v Split of a token tensor's last axis ([1, 16, 96] -> three [1, 16, 32]) is
// three channel-slice views at offsets 0, 32 and 64, as the zoo's Slices are.
TEST(SplitView, a_split_of_the_last_axis_is_one_channel_slice_per_output) {
  ir::Graph graph;
  ASSERT_TRUE(graph.add_input("qkv", {1, 16, 96}).ok());
  ASSERT_TRUE(graph
                  .add_op(ir::Op{"split",
                                 ir::OpKind::Split,
                                 {"qkv"},
                                 {"q", "k", "v"},
                                 {{"axis", std::int64_t{-1}},
                                  {"split", std::vector<std::int64_t>{32, 32, 32}}}})
                  .ok());
  ASSERT_TRUE(graph.add_op(ir::Op{"qk", ir::OpKind::Add, {"q", "k"}, {"qk"}, {}}).ok());
  ASSERT_TRUE(graph.add_op(ir::Op{"qkv_sum", ir::OpKind::Add, {"qk", "v"}, {"sum"}, {}}).ok());
  ASSERT_TRUE(graph.set_outputs({"sum"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(graph).ok());
  auto net = net_from_graph(graph, unified_machine(1024 * 1024), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  std::vector<std::pair<std::string, int64_t>> slices;
  for (const Op& op : net.value().ops)
    if (op.kind == OpKind::Slice) {
      slices.emplace_back(op.name, op.channel_offset);
      EXPECT_EQ(net.value().tensor(op.output).shape, (Shape3{32, 16, 1})) << op.name;
    }
  EXPECT_EQ(slices, (std::vector<std::pair<std::string, int64_t>>{
                        {"split.0", 0}, {"split.1", 32}, {"split.2", 64}}));
}

// tiny_causal (one GPT-2 block, sequence 16, 2 heads of 16): its softmax is one RowSoftmax of
// 16-key rows with the causal band of diagonal 0, even in a shape-only graph.
TEST(CausalMask, tiny_causal_softmax_is_a_causal_row_softmax) {
  auto graph = zoo::build_model("tiny_causal", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  Machine machine = unified_machine(1024 * 1024);
  machine.lookup_table = machine.row_normalise = machine.activation_operands = true;
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  int softmaxes = 0;
  for (const Op& op : net.value().ops) {
    if (op.kind != OpKind::RowSoftmax) continue;
    ++softmaxes;
    EXPECT_EQ(op.name, "h.0.attn.softmax");
    EXPECT_TRUE(op.causal);
    EXPECT_EQ(op.mask_diagonal, 0);
    EXPECT_EQ(op.row_length, 16);
    EXPECT_EQ(net.value().tensor(op.output).shape, (Shape3{32, 16, 1}));
  }
  EXPECT_EQ(softmaxes, 1);
}

}  // namespace
}  // namespace tessel::sched
