// ViT's three ops around its encoder in the scheduler's view (docs/scheduler.md "Constants in
// DRAM, constant operands of an Add, row selection"), by hand on tiny_vit (3x16x16 image, 4x4
// patches of d 32: 16 patch tokens and the class token): the class token a constant placed in
// DRAM at row 0 of a row Concat view whose row 1 on the patch conv stores itself, the position
// embedding an Add of a constant loaded like a table, token 0 a row-slice view; every policy
// schedules them with the Concat and the slice moving nothing.
#include <gtest/gtest.h>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "tests/support/net_ops.hpp"

namespace tessel::sched {
namespace {

using test_support::op_named;
using Ints = std::vector<int64_t>;

Machine vit_machine() {
  Machine m = unified_machine(1024 * 1024);
  m.name = "test";
  m.lookup_table = m.row_normalise = m.activation_operands = true;
  return m;
}

Net tiny_vit_net() {
  auto graph = zoo::build_model("tiny_vit", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), vit_machine(), NetForm::Folded);
  EXPECT_TRUE(net.ok()) << net.reason();
  return std::move(net).value();
}

// class_token.concat = Concat(class_token [1, 1, 32], the patch tokens [1, 16, 32]) along the
// tokens: a row view of 17 rows; the constant an Input op of type Constant at row 0, the
// conv's 4 x 4 grid (16 pixels, no copy) from row 1.
TEST(RowViews, the_class_token_is_a_constant_in_dram_before_the_conv_rows) {
  const Net net = tiny_vit_net();
  const Op& concat = op_named(net, "class_token.concat");
  EXPECT_TRUE(concat.concat_rows);
  EXPECT_EQ(net.tensor(concat.output).shape, (Shape3{32, 17, 1}));
  EXPECT_EQ(concat.concat_offsets, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(concat.inputs.size(), 2u);
  const Tensor& token = net.tensor(concat.inputs[0]);
  EXPECT_EQ(token.name, "class_token");
  EXPECT_TRUE(is_dram_constant(net, concat.inputs[0]));
  EXPECT_EQ(token.shape, (Shape3{32, 1, 1}));
  EXPECT_EQ(net.op(token.producer).kind, OpKind::Input);
  EXPECT_EQ(net.op(token.producer).type, "Constant");
  const Op& conv = op_named(net, "conv_proj");
  EXPECT_EQ(concat.inputs[1], conv.output);
  EXPECT_EQ(net.tensor(conv.output).shape, (Shape3{32, 4, 4}));
  EXPECT_FALSE(is_dram_constant(net, conv.inputs[0]));  // the image, a network input
  // Compulsory inputs and outputs: the image (3 x 16 x 16), the class token (32), the logits.
  EXPECT_EQ(net.io_bytes(), 3 * 16 * 16 + 32 + 10);
}

// encoder.pos_add: the concat's 17 x 32 tokens plus the [1, 17, 32] constant, row y at 32 y
// (stride 32 along the rows, 0 along the one column), its 544 codes the op's weights.
TEST(RowViews, the_position_embedding_is_an_add_of_a_constant_operand) {
  const Net net = tiny_vit_net();
  const Op& add = op_named(net, "encoder.pos_add");
  EXPECT_EQ(add.kind, OpKind::Add);
  EXPECT_TRUE(add.constant_operand);
  EXPECT_EQ(add.inputs, (std::vector<int>{op_named(net, "class_token.concat").output}));
  EXPECT_EQ(add.constant_stride_y, 32);
  EXPECT_EQ(add.constant_stride_x, 0);
  EXPECT_EQ(add.weight_bytes, 17 * 32);
}

// class_token.select, Gather of token 0: a Slice view of row 0 of encoder.ln's 17 rows, read
// by the head as a 32 x 1 x 1 vector.
TEST(RowViews, token_zero_is_a_row_slice_view) {
  const Net net = tiny_vit_net();
  const Op& select = op_named(net, "class_token.select");
  EXPECT_EQ(select.kind, OpKind::Slice);
  EXPECT_EQ(select.row_offset, 0);
  EXPECT_EQ(select.channel_offset, 0);
  EXPECT_EQ(select.inputs, (std::vector<int>{op_named(net, "encoder.ln").output}));
  EXPECT_EQ(net.tensor(select.output).shape, (Shape3{32, 1, 1}));
  const Op& head = op_named(net, "heads.head");
  EXPECT_EQ(head.kind, OpKind::Gemm);
  EXPECT_EQ(head.inputs, (std::vector<int>{select.output}));
  EXPECT_EQ(head.macs, 32 * 10);
}

// Under every policy the Concat and the slice are DRAM views that move nothing, the position
// Add loads its 544 bytes of constant, and the checker accepts the schedule.
TEST(RowViews, every_policy_runs_the_concat_and_the_slice_as_views) {
  const Net net = tiny_vit_net();
  const Machine machine = vit_machine();
  for (const std::string policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    SCOPED_TRACE(policy);
    auto schedule = run_policy(net, machine, policy, Objective::Bytes);
    ASSERT_TRUE(schedule.ok()) << schedule.reason();
    int views = 0;
    for (const GroupSchedule& g : schedule.value().groups) {
      const Op& first = net.op(g.ops.front());
      if (first.concat_rows || first.kind == OpKind::Slice) {
        EXPECT_TRUE(g.dram_view);
        EXPECT_EQ(g.traffic.total(), 0);
        ++views;
      }
    }
    EXPECT_EQ(views, 2);  // the Concat and the select (in_proj's q, k, v: three projections)
    EXPECT_TRUE(check_schedule(net, machine, schedule.value()).ok());
  }
}

// x [1, 5, 8] -> Gather(axis 1, indices) -> y, the graph's output.
Result<Net> gather(const Ints& indices, int64_t axis = 1) {
  ir::Graph g("gather");
  EXPECT_TRUE(g.add_input("x", {1, 5, 8}).ok());
  const Ints shape = {static_cast<int64_t>(indices.size())};
  auto added = g.add_op(ir::Op{"select",
                               ir::OpKind::Gather,
                               {"x"},
                               {"y"},
                               {{"axis", axis}, {"indices", indices}, {"indices_shape", shape}}});
  EXPECT_TRUE(added.ok()) << added.reason();
  EXPECT_TRUE(ir::infer_all_shapes(g));
  EXPECT_TRUE(g.set_outputs({"y"}));
  return net_from_graph(g, vit_machine(), NetForm::Folded);
}

TEST(RowViews, a_gather_of_consecutive_tokens_is_a_row_slice_and_any_other_is_refused) {
  auto rows = gather({2, 3});
  ASSERT_TRUE(rows.ok()) << rows.reason();
  const Op& select = op_named(rows.value(), "select");
  EXPECT_EQ(select.kind, OpKind::Slice);
  EXPECT_EQ(select.row_offset, 2);
  EXPECT_EQ(rows.value().tensor(select.output).shape, (Shape3{8, 2, 1}));
  for (const auto& [indices, axis] : {std::pair<Ints, int64_t>{{0, 2}, 1}, {{1}, 2}}) {
    auto refused = gather(indices, axis);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.reason().find("op 'select' (Gather)"), std::string::npos) << refused.reason();
    EXPECT_NE(refused.reason().find("only a Gather of consecutive tokens"), std::string::npos)
        << refused.reason();
  }
}

}  // namespace
}  // namespace tessel::sched
