// The decode step in the scheduler's view (issue 36 item 3; docs/scheduler-transformers.md
// "Decode"): the KV cache append as a row Concat view over the past (a network input) and a copy of
// the new row, by hand on tiny_decode (d 32, 2 heads of 16, cache L = 16); every policy schedules
// it with the append a view and the copy one row.
#include <gtest/gtest.h>

#include <map>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "tests/support/net_ops.hpp"

namespace tessel::sched {
namespace {

Machine decode_machine() {
  Machine m = unified_machine(1024 * 1024);  // 16 x 16 array, V = 16
  m.name = "test";
  m.lookup_table = m.row_normalise = m.activation_operands = true;
  return m;
}

Net tiny_decode_net() {
  auto graph = zoo::build_model("tiny_decode", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), decode_machine(), NetForm::Folded);
  EXPECT_TRUE(net.ok()) << net.reason();
  return std::move(net).value();
}

using test_support::op_named;

// key_cache = Concat(past.0.key [16 rows], the new key [1 row]) of 32 channels: a row view whose
// input 1 is the copy `h.0.attn.key_cache.append.1` of the key projection; the copy keeps the
// graph output's name (its source view is `h.0.attn.k/view`), so that the run reads it.
TEST(Decode, the_append_is_a_row_view_over_the_past_and_a_copy_of_the_new_row) {
  const Net net = tiny_decode_net();
  const Op& cache = op_named(net, "h.0.attn.key_cache");
  EXPECT_EQ(cache.kind, OpKind::Concat);
  EXPECT_TRUE(cache.concat_rows);
  EXPECT_EQ(cache.concat_offsets, (std::vector<int64_t>{0, 16}));
  EXPECT_EQ(net.tensor(cache.output).shape, (Shape3{32, 17, 1}));
  ASSERT_EQ(cache.inputs.size(), 2u);
  EXPECT_EQ(net.tensor(cache.inputs[0]).name, "past.0.key");
  EXPECT_EQ(net.op(net.tensor(cache.inputs[0]).producer).kind, OpKind::Input);
  const Tensor& row = net.tensor(cache.inputs[1]);
  EXPECT_EQ(row.name, "h.0.attn.k");
  EXPECT_EQ(row.shape, (Shape3{32, 1, 1}));
  EXPECT_TRUE(row.network_output);  // a graph output, though the append reads it
  const Op& copy = net.op(row.producer);
  EXPECT_EQ(copy.name, "h.0.attn.key_cache.append.1");
  EXPECT_TRUE(copy.copy_only);
  EXPECT_EQ(net.tensor(copy.inputs[0]).name, "h.0.attn.k/view");
  // The key projection (c_attn's k slice, split-sliced-linear), unflattened by a Reshape view.
  const Op& source = net.op(net.tensor(copy.inputs[0]).producer);
  EXPECT_EQ(source.kind, OpKind::Reshape);
  ASSERT_EQ(source.inputs.size(), 1u);
  const Op& projection = net.op(net.tensor(source.inputs[0]).producer);
  EXPECT_EQ(projection.name, "h.0.attn.k.linear");
  EXPECT_EQ(projection.kind, OpKind::Gemm);  // one token: a Gemm
  EXPECT_EQ(net.tensor(projection.output).shape, (Shape3{32, 1, 1}));
  // q K^T reads the 17 cached keys transposed: one query row, 17 columns per head.
  const Op& scores = op_named(net, "h.0.attn.scores");
  EXPECT_EQ(scores.inputs[1], cache.output);
  EXPECT_TRUE(scores.matmul.transpose_b);
  EXPECT_EQ(scores.matmul.m_size, 1);
  EXPECT_EQ(scores.matmul.n_size, 17);
  EXPECT_EQ(scores.matmul.k_size, 16);
  // Compulsory: the past (2 x 16 x 32) and the token (32) in, the new rows and the hidden
  // state (3 x 32) out; never the whole cache as an output.
  EXPECT_EQ(net.io_bytes(), 2 * 16 * 32 + 32 + 3 * 32);
}

// Under every policy the append is a DRAM view that moves nothing and each copy one group that
// loads and stores 32 bytes; the checker accepts the schedule.
TEST(Decode, every_policy_runs_the_append_as_a_view_and_the_copy_as_one_row) {
  const Net net = tiny_decode_net();
  const Machine machine = decode_machine();
  for (const std::string policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    SCOPED_TRACE(policy);
    auto schedule = run_policy(net, machine, policy, Objective::Bytes);
    ASSERT_TRUE(schedule.ok()) << schedule.reason();
    int views = 0, copies = 0;
    for (const GroupSchedule& g : schedule.value().groups) {
      const Op& first = net.op(g.ops.front());
      if (first.concat_rows) {
        EXPECT_TRUE(g.dram_view);
        EXPECT_EQ(g.traffic.total(), 0);
        ++views;
      }
      if (first.copy_only) {
        EXPECT_EQ(g.ops.size(), 1u);
        EXPECT_EQ(g.traffic.activations_read, 32);
        EXPECT_EQ(g.traffic.activations_written, 32);
        ++copies;
      }
    }
    EXPECT_EQ(views, 2);
    EXPECT_EQ(copies, 2);
    EXPECT_TRUE(check_schedule(net, machine, schedule.value()).ok());
  }
}

// tiny_decode --batch 2: the Linears see the 2 tokens as 2 rows (c_attn a 1x1 conv over 2
// pixels); sequence 1's attention reads row 1 of q|k|v through a row-slice view
// (`h.0.attn.s1.qkv`, row_offset 1) and its own cache `past.0.key.1`; the two contexts return
// as rows 0 and 1 of a row Concat view, each stored there by its context MatMul (no copy: only
// a view or a graph output is copied into a row slice).
TEST(Decode, a_batch_shares_the_linears_and_slices_each_sequence_by_rows) {
  auto graph = zoo::build_model("tiny_decode", {.batch = 2, .with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto built = net_from_graph(graph.value(), decode_machine(), NetForm::Folded);
  ASSERT_TRUE(built.ok()) << built.reason();
  const Net& net = built.value();
  const Op& c_attn = op_named(net, "h.0.attn.c_attn");
  EXPECT_EQ(c_attn.kind, OpKind::Conv);
  EXPECT_EQ(net.tensor(c_attn.output).shape, (Shape3{96, 2, 1}));
  EXPECT_EQ(c_attn.macs, 2 * 32 * 96);
  const Op& row = op_named(net, "h.0.attn.s1.qkv");
  EXPECT_EQ(row.kind, OpKind::Slice);
  EXPECT_EQ(row.row_offset, 1);
  EXPECT_EQ(row.channel_offset, 0);
  EXPECT_EQ(net.tensor(row.output).shape, (Shape3{96, 1, 1}));
  const Op& cache = op_named(net, "h.0.attn.s1.key_cache");
  EXPECT_TRUE(cache.concat_rows);
  EXPECT_EQ(net.tensor(cache.inputs[0]).name, "past.0.key.1");
  const Op& contexts = op_named(net, "h.0.attn.contexts");
  EXPECT_TRUE(contexts.concat_rows);
  EXPECT_EQ(contexts.concat_offsets, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(net.tensor(contexts.output).shape, (Shape3{32, 2, 1}));
  EXPECT_EQ(net.op(net.tensor(contexts.inputs[1]).producer).kind, OpKind::MatMul);
  EXPECT_EQ(net.op(net.tensor(contexts.inputs[1]).producer).name, "h.0.attn.s1.context");
}

}  // namespace
}  // namespace tessel::sched
