// A Llama layer in the scheduler's view (docs/scheduler-transformers.md "Transformers", "Rotary
// embeddings and grouped-query attention"): tiny_llama (sequence 8, d 32, 4 query heads of 8 on 2
// key/value heads) by hand: the rotary embedding runs on head pixels (8 rows of H pixels of 8
// channels), its slices are channel views, its tables constant operands broadcast over the
// heads, and the scores read each key head for two query heads.
#include <gtest/gtest.h>

#include <map>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/from_ir_shapes.hpp"
#include "scheduler/machine.hpp"
#include "tests/support/net_ops.hpp"

namespace tessel::sched {
namespace {

Net tiny_llama_net() {
  auto graph = zoo::build_model("tiny_llama", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  Machine machine = unified_machine(1024 * 1024);
  machine.lookup_table = machine.row_normalise = machine.activation_operands = true;
  machine.broadcast_multiply = true;
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  EXPECT_TRUE(net.ok()) << net.reason();
  return std::move(net).value();
}

using test_support::op_named;

// q [8][4 x 8] is seen as 8 rows of 4 head pixels of 8 channels (a Reshape view); x1 and x2
// are its channels [0, 4) and [4, 8); Neg and the Concat work on 4-channel head pixels.
TEST(Rotary, slices_of_the_head_dimension_are_channel_views_of_head_pixels) {
  const Net net = tiny_llama_net();
  const Op& pixels = op_named(net, "self_attn.q_proj.head_pixels");
  EXPECT_EQ(pixels.kind, OpKind::Reshape);
  EXPECT_EQ(net.tensor(pixels.inputs[0]).shape, (Shape3{32, 8, 1}));
  EXPECT_EQ(net.tensor(pixels.output).shape, (Shape3{8, 8, 4}));
  const Op& x1 = op_named(net, "self_attn.q_rotary.x1");
  const Op& x2 = op_named(net, "self_attn.q_rotary.x2");
  EXPECT_EQ(x1.kind, OpKind::Slice);
  EXPECT_EQ(x1.channel_offset, 0);
  EXPECT_EQ(x2.channel_offset, 4);
  EXPECT_EQ(x1.inputs[0], pixels.output);
  EXPECT_EQ(net.tensor(x2.output).shape, (Shape3{4, 8, 4}));
  const Op& neg = op_named(net, "self_attn.q_rotary.neg");
  EXPECT_TRUE(neg.lookup_table);
  const Op& rotate = op_named(net, "self_attn.q_rotary.rotate_half");
  EXPECT_EQ(rotate.kind, OpKind::Concat);
  EXPECT_EQ(rotate.concat_offsets, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(net.tensor(rotate.output).shape, (Shape3{8, 8, 4}));
  // k: 2 heads.
  EXPECT_EQ(net.tensor(op_named(net, "self_attn.k_proj.head_pixels").output).shape,
            (Shape3{8, 8, 2}));
}

// cos/sin [8, 8] against [1, H, 8, 8]: row s of the table for every head, so b strides
// (y 8, x 0) and 64 one-byte elements loaded whole.
TEST(Rotary, the_cos_and_sin_tables_are_constant_operands_broadcast_over_the_heads) {
  const Net net = tiny_llama_net();
  for (const char* name : {"self_attn.q_rotary.cos", "self_attn.q_rotary.sin",
                           "self_attn.k_rotary.cos", "self_attn.k_rotary.sin"}) {
    SCOPED_TRACE(name);
    const Op& mul = op_named(net, name);
    EXPECT_EQ(mul.kind, OpKind::Mul);
    EXPECT_TRUE(mul.constant_operand);
    EXPECT_EQ(mul.inputs.size(), 1u);
    EXPECT_EQ(mul.constant_stride_y, 8);
    EXPECT_EQ(mul.constant_stride_x, 0);
    EXPECT_EQ(mul.weight_bytes, 64);
  }
  EXPECT_EQ(net.tensor(op_named(net, "self_attn.q_rotary.cos").output).shape, (Shape3{8, 8, 4}));
}

// The strides of a constant against [1, 4, 8, 8] head pixels (4 heads, 8 rows, 8 channels) and
// against [1, 8, 8] tokens, by hand; and the constants the mul cannot address.
TEST(Rotary, constant_strides_follow_the_broadcast_and_refuse_what_mul_cannot_address) {
  using Strides = std::pair<int64_t, int64_t>;
  EXPECT_EQ(constant_strides({8, 8}, {1, 4, 8, 8}, true).value(), (Strides{8, 0}));
  EXPECT_EQ(constant_strides({4, 1, 8}, {1, 4, 8, 8}, true).value(), (Strides{0, 8}));
  EXPECT_EQ(constant_strides({1, 4, 8, 8}, {1, 4, 8, 8}, true).value(), (Strides{8, 64}));
  EXPECT_EQ(constant_strides({8}, {1, 8, 8}, false).value(), (Strides{0, 0}));
  EXPECT_EQ(constant_strides({8, 8}, {1, 8, 8}, false).value(), (Strides{8, 0}));
  EXPECT_EQ(constant_strides({2, 8, 8}, {1, 4, 8, 8}, true).reason(), "does not broadcast");
  EXPECT_EQ(constant_strides({8, 1}, {1, 4, 8, 8}, true).reason(),
            "is broadcast along the channels (only whole channels are supported)");
  EXPECT_EQ(constant_strides({4, 8, 8}, {1, 4, 8, 8}, false).reason(),
            "varies along axis 1, which the accelerator path does not address");
}

// Grouped-query attention: the Expand of 2 key/value heads to 4 is no op; head h of the
// scores and the context reads stored head h / 2 of K (transposed) and V.
TEST(Rotary, grouped_query_heads_share_their_stored_key_and_value_head) {
  const Net net = tiny_llama_net();
  const Op& scores = op_named(net, "self_attn.scores");
  EXPECT_EQ(scores.matmul.heads, 4);
  EXPECT_EQ(scores.matmul.b_head_repeat, 2);
  EXPECT_EQ(scores.matmul.b_head_stride, 8);
  EXPECT_TRUE(scores.matmul.transpose_b);
  EXPECT_EQ(net.tensor(scores.inputs[1]).shape, (Shape3{16, 8, 1}));  // k_rotary's tokens
  const Op& context = op_named(net, "self_attn.context");
  EXPECT_EQ(context.matmul.b_head_repeat, 2);
  EXPECT_EQ(net.tensor(context.inputs[1]).shape, (Shape3{16, 8, 1}));  // v_proj
  for (const Op& op : net.ops) EXPECT_NE(op.type, "Expand") << op.name;
}

}  // namespace
}  // namespace tessel::sched
