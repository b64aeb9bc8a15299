// Layout views (docs/scheduler-transformers.md "Layout views"): Transposes and Reshapes that move
// no byte in the accelerator's pixel-major, channels-innermost layout, by hand; tiny_layout's
// permutes as no ops at all; and the refusals of a transpose that reorders pixels, a norm over an
// NCHW tensor's width and a global pool of an NHWC view.
#include <gtest/gtest.h>

#include <map>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/layout_view.hpp"

namespace tessel::sched {
namespace {

using Ints = std::vector<int64_t>;

TEST(LayoutView, channels_default_to_nchw_axis_one_and_the_last_axis_of_tokens) {
  EXPECT_EQ(default_channel_axis(4), 1);
  EXPECT_EQ(default_channel_axis(3), 2);
  EXPECT_EQ(default_channel_axis(2), 1);
}

TEST(LayoutView, the_shape_is_the_channel_axis_by_the_other_axes_in_order) {
  EXPECT_EQ(layout_shape({1, 6, 5, 16}, 3).value(), (Shape3{16, 6, 5}));  // NHWC
  EXPECT_EQ(layout_shape({1, 16, 6, 5}, 1).value(), (Shape3{16, 6, 5}));  // NCHW
  EXPECT_EQ(layout_shape({1, 16, 30}, 1).value(), (Shape3{16, 30, 1}));   // [1, C, H*W]
  EXPECT_EQ(layout_shape({30, 16}, 1).value(), (Shape3{16, 30, 1}));      // tokens
  EXPECT_EQ(layout_shape({1, 1, 1, 16}, 3).value(), (Shape3{16, 1, 1}));
  auto batch = layout_shape({2, 16, 6, 5}, 1);
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.reason().find("batch 2 is not 1"), std::string::npos) << batch.reason();
  EXPECT_FALSE(layout_shape({1, 2, 3, 4, 5}, 1).ok());  // three pixel axes
}

TEST(LayoutView, an_activation_of_another_rank_is_its_elements_as_channels) {
  EXPECT_EQ(activation_shape({1, 16, 6, 5}, std::nullopt).value(), (Shape3{16, 6, 5}));
  EXPECT_EQ(activation_shape({1, 6, 5, 16}, 3).value(), (Shape3{16, 6, 5}));
  EXPECT_EQ(activation_shape({1, 2, 3, 4, 5}, std::nullopt).value(), (Shape3{120, 1, 1}));
  EXPECT_FALSE(activation_shape({2, 2, 3, 4, 5}, std::nullopt).ok());
  EXPECT_FALSE(activation_shape({}, std::nullopt).ok());
}

TEST(LayoutView, a_constant_broadcasts_per_channel_when_only_its_channel_axis_is_not_one) {
  EXPECT_TRUE(broadcasts_per_channel({16, 1, 1}, {1, 16, 6, 5}, 1));  // ConvNeXt's layer scale
  EXPECT_TRUE(broadcasts_per_channel({1, 16, 1, 1}, {1, 16, 6, 5}, 1));
  EXPECT_TRUE(broadcasts_per_channel({16}, {1, 6, 5, 16}, 3));   // channels last
  EXPECT_FALSE(broadcasts_per_channel({16}, {1, 16, 6, 5}, 1));  // aligns with W
  EXPECT_FALSE(broadcasts_per_channel({16, 6, 1}, {1, 16, 6, 5}, 1));
  EXPECT_FALSE(broadcasts_per_channel({1, 1}, {1, 16, 6, 5}, 1));  // a scalar: not per channel
}

TEST(LayoutView, a_transpose_is_a_view_when_the_pixels_keep_their_order) {
  EXPECT_EQ(transpose_channel_axis({1, 16, 6, 5}, 1, {0, 2, 3, 1}), 3);  // NCHW -> NHWC
  EXPECT_EQ(transpose_channel_axis({1, 6, 5, 16}, 3, {0, 3, 1, 2}), 1);  // and back
  EXPECT_EQ(transpose_channel_axis({1, 16, 30}, 1, {0, 2, 1}), 2);       // ViT's to tokens
  EXPECT_EQ(transpose_channel_axis({1, 16, 6, 1}, 1, {0, 3, 2, 1}), 3);  // W of one moves
  EXPECT_FALSE(transpose_channel_axis({1, 16, 6, 5}, 1, {0, 1, 3, 2}));  // H and W swap
  EXPECT_FALSE(transpose_channel_axis({1, 6, 5, 16}, 3, {0, 2, 1, 3}));
  EXPECT_FALSE(transpose_channel_axis({1, 16, 6, 5}, 1, {0, 2, 1}));  // wrong rank
}

TEST(LayoutView, a_reshape_is_a_view_when_it_merges_or_splits_only_pixels) {
  EXPECT_EQ(reshape_channel_axis({1, 16, 6, 5}, 1, {1, 16, 30}), 1);    // ViT's flatten
  EXPECT_EQ(reshape_channel_axis({1, 6, 5, 16}, 3, {30, 16}), 1);       // a Linear's flatten
  EXPECT_EQ(reshape_channel_axis({30, 32}, 1, {1, 6, 5, 32}), 3);       // and its unflatten
  EXPECT_FALSE(reshape_channel_axis({1, 16, 6, 5}, 1, {1, 4, 4, 30}));  // splits channels
  EXPECT_FALSE(reshape_channel_axis({1, 30, 32}, 2, {1, 30, 2, 16}));   // a head split
  EXPECT_FALSE(reshape_channel_axis({1, 16, 6, 5}, 1, {1, 6, 16, 5}));  // mixes them
}

Machine layout_machine() {
  Machine m = unified_machine(1024 * 1024);
  m.name = "test";
  m.lookup_table = m.row_normalise = m.activation_operands = m.broadcast_multiply = true;
  return m;
}

// conv -> NHWC LayerNorm, Linear, GELU, Linear -> NCHW x layer scale + skip -> tokens
// LayerNorm, Linear, LayerNorm: eleven ops (the input's one of them), none a Transpose or a
// Reshape; every tensor on the 6 x 6 grid.
TEST(LayoutView, tiny_layouts_permutes_and_flattens_are_no_ops) {
  auto graph = zoo::build_model("tiny_layout", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), layout_machine(), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Net& n = net.value();
  std::map<std::string, const Op*> ops;
  for (const Op& op : n.ops) ops[op.name] = &op;
  EXPECT_EQ(n.ops.size(), 11u);
  const Op& conv = *ops.at("conv");
  const Op& norm = *ops.at("norm");
  const Op& fc1 = *ops.at("fc1");
  const Op& add = *ops.at("add");
  EXPECT_EQ(norm.kind, OpKind::Norm);
  EXPECT_EQ(norm.inputs, (std::vector<int>{conv.output}));  // the NHWC view is the conv's tensor
  EXPECT_EQ(fc1.kind, OpKind::Conv);                        // a 1x1 conv over the 36 pixels
  EXPECT_EQ(fc1.inputs, (std::vector<int>{norm.output}));
  EXPECT_EQ(n.tensor(fc1.output).shape, (Shape3{32, 6, 6}));
  EXPECT_EQ(fc1.macs, 36 * 16 * 32);
  EXPECT_EQ(ops.at("gelu")->lookup_table, true);
  // The layer scale: a Mul of fc2's output (NCHW again: no op) by 16 constant codes, its weights.
  const Op& scale = *ops.at("layer_scale.mul");
  EXPECT_EQ(scale.kind, OpKind::Mul);
  EXPECT_EQ(scale.inputs, (std::vector<int>{ops.at("fc2")->output}));
  EXPECT_EQ(scale.weight_bytes, 16);
  EXPECT_EQ(add.inputs, (std::vector<int>{conv.output, scale.output}));
  const Op& tokens_norm = *ops.at("tokens.norm");
  EXPECT_EQ(tokens_norm.inputs, (std::vector<int>{add.output}));  // flatten, permute: no op
  EXPECT_EQ(n.tensor(tokens_norm.output).shape, (Shape3{16, 6, 6}));
  EXPECT_EQ(n.tensor(ops.at("tokens.out_norm")->output).shape, (Shape3{24, 6, 6}));
  for (const Op& op : n.ops) EXPECT_NE(op.kind, OpKind::Reshape) << op.name;
}

// input [1, 4, 2, 3] -> `kind` (attrs) -> ..., the graph's output the last op's.
Result<Net> chain(const std::vector<std::pair<ir::OpKind, ir::Attrs>>& steps) {
  ir::Graph g("layout");
  EXPECT_TRUE(g.add_input("x", {1, 4, 2, 3}).ok());
  std::string x = "x";
  int i = 0;
  for (const auto& [kind, attrs] : steps) {
    const std::string name = "op" + std::to_string(i++);
    std::vector<std::string> inputs = {x};
    if (kind == ir::OpKind::LayerNormalization) {
      for (const char* p : {".w", ".b"}) {
        ir::Tensor t;
        t.name = name + p;
        t.shape = {3};
        t.f32_values = {1, 1, 1};
        EXPECT_TRUE(g.add_constant(std::move(t)));
        inputs.push_back(name + p);
      }
    }
    auto added = g.add_op(ir::Op{name, kind, inputs, {name}, attrs});
    EXPECT_TRUE(added.ok()) << added.reason();
    x = name;
  }
  EXPECT_TRUE(ir::infer_all_shapes(g));
  EXPECT_TRUE(g.set_outputs({x}));
  return net_from_graph(g, layout_machine(), NetForm::Folded);
}

void expect_refused(const Result<Net>& net, const std::string& op, const std::string& why) {
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.reason().find(op), std::string::npos) << net.reason();
  EXPECT_NE(net.reason().find(why), std::string::npos) << net.reason();
}

TEST(LayoutView, a_mul_by_a_constant_of_other_than_one_value_per_channel_is_refused) {
  ir::Graph g("mul");
  ASSERT_TRUE(g.add_input("x", {1, 4, 2, 3}).ok());
  ir::Tensor c;
  c.name = "c";
  c.shape = {3};  // one value per column, not per channel
  c.f32_values = {1, 2, 3};
  ASSERT_TRUE(g.add_constant(std::move(c)));
  ASSERT_TRUE(g.add_op(ir::Op{"scale", ir::OpKind::Mul, {"x", "c"}, {"y"}, {}}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(g));
  ASSERT_TRUE(g.set_outputs({"y"}));
  expect_refused(net_from_graph(g, layout_machine(), NetForm::Folded), "'scale' (Mul)",
                 "a Mul by the constant 'c' [3] of [1,4,2,3] (only one value per channel, or a "
                 "constant broadcast over the rows or heads of a token tensor");
}

TEST(LayoutView, what_is_no_view_is_refused_naming_the_op) {
  using K = ir::OpKind;
  // A Transpose of an NCHW map's height and width is a pixel view (docs/scheduler-transformers.md
  // "Pixel gathers"), stored only where an op reads it.
  expect_refused(chain({{K::Transpose, {{"perm", Ints{0, 1, 3, 2}}}}}),
                 "graph output 'op0' (made by op 'op0')", "is a reordering of the pixels of 'x'");
  expect_refused(chain({{K::LayerNormalization, {{"axis", int64_t{-1}}}}}),
                 "'op0' (LayerNormalization)",
                 "only a norm over the last axis, holding the channels");
  expect_refused(chain({{K::Transpose, {{"perm", Ints{0, 2, 3, 1}}}}, {K::GlobalAveragePool, {}}}),
                 "'op1' (GlobalAveragePool) reads 'op0' with its channels at axis 3",
                 "layout view");
}

// ViT-B/16's patch embedding (conv, flatten, permute to tokens) passes as views; its class
// token's Concat along the tokens is the row Concat of a KV-cache append
// (docs/scheduler-transformers.md "Decode"), not a channel concat, and is refused by name because
// its first input, the class token, is a constant. vit_b_16's patch conv output [1, 768, 14, 14],
// flattened and permuted to [1, 196, 768], is the conv's own tensor, stored from row 1 of the
// class-token Concat's 197 rows (tests/scheduler/row_views_test.cpp has the rest, on tiny_vit).
TEST(LayoutView, vits_patch_permute_is_a_view_stored_into_the_class_token_concat) {
  auto graph = zoo::build_model("vit_b_16", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), layout_machine(), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Net& n = net.value();
  for (const Op& op : n.ops) {
    if (op.name != "class_token.concat") continue;
    EXPECT_TRUE(op.concat_rows);
    EXPECT_EQ(op.concat_offsets, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(n.op(n.tensor(op.inputs[1]).producer).name, "conv_proj");
    EXPECT_EQ(n.tensor(op.inputs[1]).shape, (Shape3{768, 14, 14}));
    EXPECT_EQ(n.tensor(op.output).shape, (Shape3{768, 197, 1}));
    return;
  }
  ADD_FAILURE() << "no class_token.concat";
}

}  // namespace
}  // namespace tessel::sched
