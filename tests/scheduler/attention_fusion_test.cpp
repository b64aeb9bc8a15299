// Attention fusion (issue 36, part 3, item 2; docs/scheduler-mapping.md "Attention fusion"):
// the chain scale -> scores -> softmax -> context of tiny_attention as one group of row blocks,
// its refusals, and its bytes, buffers and compute cycles by hand; a LayerNorm in a group.
#include <gtest/gtest.h>

#include <map>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {
namespace {

Machine attention_machine() {
  Machine m = unified_machine(1024 * 1024);  // 16 x 16 array, V = 16, F = D = 16
  m.name = "test";
  m.lookup_table = m.row_normalise = m.activation_operands = true;
  return m;
}

Net tiny_attention_net(const Machine& machine) {
  auto graph = zoo::build_model("tiny_attention", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  EXPECT_TRUE(net.ok()) << net.reason();
  return net.value();
}

int index_of(const Net& net, const std::string& name) {
  for (int i = 0; i < net.size(); ++i)
    if (net.op(i).name == name) return i;
  ADD_FAILURE() << "no op " << name;
  return -1;
}

const std::string kAttn = "layers.0.self_attn";

std::vector<int> chain(const Net& net) {
  return {index_of(net, kAttn + ".q_scaled"), index_of(net, kAttn + ".scores"),
          index_of(net, kAttn + ".softmax"), index_of(net, kAttn + ".context")};
}

const BufferAlloc* buffer(const GroupSchedule& gs, const std::string& name) {
  for (const BufferAlloc& b : gs.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

TEST(AttentionFusion, only_an_attention_chain_shares_a_group_with_matmul_or_softmax) {
  const Machine machine = attention_machine();
  const Net net = tiny_attention_net(machine);
  const PlanOptions options;
  EXPECT_TRUE(check_group(net, chain(net), options).ok());
  const std::vector<int> whole = chain(net);
  const std::vector<int> tail(whole.begin() + 1, whole.end());
  EXPECT_TRUE(check_group(net, tail, options).ok());  // scores -> softmax -> context
  // The context's consumer (a 1x1 conv) is no attention op.
  std::vector<int> with_out_proj = chain(net);
  with_out_proj.push_back(index_of(net, kAttn + ".out_proj"));
  const Status refused = check_group(net, with_out_proj, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.reason().find("'" + kAttn + ".out_proj' (conv) is not a MatMul, RowSoftmax"),
            std::string::npos)
      << refused.reason();
  // scores and context without the softmax between: the context reads no op of the group.
  const Status gap = check_group(
      net, {index_of(net, kAttn + ".scores"), index_of(net, kAttn + ".context")}, options);
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.reason().find("'" + kAttn + ".context' does not read '" + kAttn + ".scores'"),
            std::string::npos)
      << gap.reason();
  // A Norm may share its group (the Add before it).
  const std::vector<int> add_norm = {index_of(net, "layers.0.add1"),
                                     index_of(net, "layers.0.norm1")};
  EXPECT_TRUE(check_group(net, add_norm, options).ok());
}

// S = 16, d = 32, H = 2 heads of hd = 16; 8-bit activations. Four row blocks of r = 4 queries.
//   DRAM: Q 16 x 32 = 512 read by the blocks (128 each), K and V 512 each read once (kept), the
//   context 512 written; tables: the lut's 256 and the softmax's 1,024 once. Layerwise the four
//   ops read 512 + (512 + 512) + 512 + (512 + 512) = 3,072 and write 4 x 512 = 2,048.
//   Buffers: acc:scores r x H x S x 4 = 4 x 32 x 4 = 512, acc:context r x d x 4 = 512; K, V
//   16 x 32 = 512 each (whole); the scores r x H x S = 128.
//   Compute per block (R = C = V = 16, F = D = 16): lut 4 x 2 + 4 + 256 / 16 = 28; scores per
//   head 16 + 1 x max(4, 16) + 16 + 16 = 64, two heads 128 + requant 4 x 2 + 4 = 140; softmax of
//   8 rows of 16: 512 / 16 + 8 x (3 + 31) + 4 = 308; context as scores, 140: 616, x4 = 2,464.
TEST(AttentionFusion, row_blocks_move_q_k_v_and_the_context_once_by_hand) {
  const Machine machine = attention_machine();
  const Net net = tiny_attention_net(machine);
  Mapping m;
  m.row_tiles = 4;
  auto fused = evaluate_mapping(net, machine, chain(net), m, PlanOptions{});
  ASSERT_TRUE(fused.ok()) << fused.reason();
  const GroupSchedule& gs = fused.value();
  EXPECT_EQ(gs.traffic.activations_read, 512 + 512 + 512);
  EXPECT_EQ(gs.traffic.activations_written, 512);
  EXPECT_EQ(gs.traffic.weight_traffic(), 256 + 1024);
  EXPECT_EQ(gs.compute_cycles, 4 * 616);
  ASSERT_NE(buffer(gs, "acc:" + kAttn + ".scores"), nullptr);
  EXPECT_EQ(buffer(gs, "acc:" + kAttn + ".scores")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, "acc:" + kAttn + ".context")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, kAttn + ".k")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, kAttn + ".v")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, kAttn + ".scores")->size_bytes, 128);
  EXPECT_EQ(gs.outputs, (std::vector<int>{net.op(chain(net).back()).output}));

  int64_t read = 0, written = 0;
  for (int op : chain(net)) {
    auto alone = evaluate_mapping(net, machine, {op}, Mapping{}, PlanOptions{});
    ASSERT_TRUE(alone.ok()) << alone.reason();
    read += alone.value().traffic.activations_read;
    written += alone.value().traffic.activations_written;
  }
  EXPECT_EQ(read, 3072);
  EXPECT_EQ(written, 2048);
}

// LayerNorm in a group (docs/scheduler-mapping.md "LayerNorm in a group"): add1 -> norm1 of
// tiny_attention, one tile of 16 tokens x 32 channels. DRAM: add1 reads x and the attention
// output (512 each), norm1 writes its output (512), add1's output (read by norm1 alone) never
// leaves the chip; the norm's parameters 8 + 16 x 32 = 520 once. Alone the two read 1,024 + 512
// and write 512 + 512. Compute: the Add 16 x ceil(32 / 16) + 4 = 36, the norm 16 x (2 x 2 + 56)
// + 4 = 964.
TEST(AttentionFusion, a_norm_fused_after_its_add_keeps_the_sum_on_chip_by_hand) {
  const Machine machine = attention_machine();
  const Net net = tiny_attention_net(machine);
  const std::vector<int> ops = {index_of(net, "layers.0.add1"), index_of(net, "layers.0.norm1")};
  auto fused = evaluate_mapping(net, machine, ops, Mapping{}, PlanOptions{});
  ASSERT_TRUE(fused.ok()) << fused.reason();
  EXPECT_EQ(fused.value().traffic.activations_read, 1024);
  EXPECT_EQ(fused.value().traffic.activations_written, 512);
  EXPECT_EQ(fused.value().traffic.weight_traffic(), 520);
  EXPECT_EQ(fused.value().compute_cycles, 36 + 964);
  int64_t read = 0, written = 0;
  for (int op : ops) {
    auto alone = evaluate_mapping(net, machine, {op}, Mapping{}, PlanOptions{});
    ASSERT_TRUE(alone.ok()) << alone.reason();
    read += alone.value().traffic.activations_read;
    written += alone.value().traffic.activations_written;
  }
  EXPECT_EQ(read, 1024 + 512);
  EXPECT_EQ(written, 512 + 512);
}

TEST(AttentionFusion, optimal_fuses_the_chain_and_the_checker_accepts_it) {
  const Machine machine = attention_machine();
  const Net net = tiny_attention_net(machine);
  auto s = run_policy(net, machine, "optimal", Objective::Bytes);
  ASSERT_TRUE(s.ok()) << s.reason();
  const Status checked = check_schedule(net, machine, s.value());
  EXPECT_TRUE(checked.ok()) << checked.reason();
  bool fused = false;
  for (const GroupSchedule& g : s.value().groups) fused |= g.ops == chain(net);
  EXPECT_TRUE(fused);
}

}  // namespace
}  // namespace tessel::sched
