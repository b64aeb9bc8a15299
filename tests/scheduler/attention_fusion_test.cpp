// Attention fusion (issue 36, part 3, item 2; docs/scheduler-mapping.md "Attention fusion"):
// the chain scale -> scores -> softmax -> context of tiny_attention as one group of row blocks,
// its refusals, and its bytes, buffers and compute cycles by hand; a LayerNorm in a group.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"
#include "tests/support/net_ops.hpp"

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

TEST(AttentionFusion, an_attention_group_takes_the_token_ops_around_the_chain) {
  const Machine machine = attention_machine();
  const Net net = tiny_attention_net(machine);
  const PlanOptions options;
  EXPECT_TRUE(check_group(net, chain(net), options).ok());
  const std::vector<int> whole = chain(net);
  const std::vector<int> tail(whole.begin() + 1, whole.end());
  EXPECT_TRUE(check_group(net, tail, options).ok());  // scores -> softmax -> context
  // The projections before (q by rows; k and v, read whole by the MatMuls, run once), the
  // output projection and the residual Add after.
  std::vector<int> block;
  for (const char* name : {".q.linear", ".k.linear", ".v.linear", ".q_scaled", ".scores",
                           ".softmax", ".context", ".out_proj"})
    block.push_back(index_of(net, kAttn + name));
  block.push_back(index_of(net, "layers.0.add1"));
  EXPECT_TRUE(check_group(net, block, options).ok()) << check_group(net, block, options).reason();
  const std::vector<char> once = attention_whole_ops(net, block);
  EXPECT_EQ(once, (std::vector<char>{0, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(runs_once(net, block, 1, 1, 1).once.empty());  // one tile: nothing to hoist
  EXPECT_EQ(runs_once(net, block, 4, 1, 1).once, once);
  // A Norm may share its group (the Add before it).
  const std::vector<int> add_norm = {index_of(net, "layers.0.add1"),
                                     index_of(net, "layers.0.norm1")};
  EXPECT_TRUE(check_group(net, add_norm, options).ok());
}

// What row blocks cannot run: an op of another kind; a MatMul's second operand that another op
// of the group reads by rows (the first row block would have to make it whole and every block
// its rows); one made by an op whose accumulators hold a row block only (a RowSoftmax).
TEST(AttentionFusion, an_attention_group_refuses_what_row_blocks_cannot_run) {
  Net net;
  net.name = "refusals";
  const int q = test_support::add_input(net, "q", {16, 16, 1});
  const int x = test_support::add_input(net, "x", {16, 16, 1});
  using test_support::add_row_op;
  const int k = add_row_op(net, "k", OpKind::Eltwise, {x}, {16, 16, 1});
  const int scores = add_row_op(net, "scores", OpKind::MatMul, {q, k}, {16, 16, 1});
  const int sum = add_row_op(net, "sum", OpKind::Add, {k, scores}, {16, 16, 1});
  const int pool = add_row_op(net, "pool", OpKind::MaxPool, {sum}, {16, 16, 1});
  const int p = add_row_op(net, "p", OpKind::RowSoftmax, {x}, {16, 16, 1});
  add_row_op(net, "pv", OpKind::MatMul, {pool, p}, {16, 16, 1});
  net.finalize();
  auto reason = [&](std::vector<int> ops) { return check_attention_group(net, ops).reason(); };
  EXPECT_TRUE(check_attention_group(net, {2, 3}).ok());  // k run once, scores by rows
  EXPECT_NE(reason({2, 3, 4}).find("'scores' reads 'k' whole as its second operand, but other "
                                   "ops of the group read it by rows"),
            std::string::npos)
      << reason({2, 3, 4});
  EXPECT_NE(reason({3, 4, 5}).find("'pool' (maxpool) is not a MatMul, RowSoftmax, lookup table or "
                                   "token op"),
            std::string::npos)
      << reason({3, 4, 5});
  // check_group names the group's first MatMul and gives the reason once.
  const Status grouped = check_group(net, {3, 4, 5}, PlanOptions{});
  EXPECT_EQ(grouped.reason(),
            "op 'scores' (matmul) runs alone or in an attention group: " + reason({3, 4, 5}));
  EXPECT_NE(reason({6, 7}).find("'p' (rowsoftmax) is read whole (a MatMul's second operand) but "
                                "is not a token op"),
            std::string::npos)
      << reason({6, 7});
}

// vit_b_16, one layer (197 tokens) on cloud-large with 4, 1 and 1 MiB of scratchpads: the
// attention group (q, k, v projections, the chain, out_proj, add1) needs row blocks there, so
// k.linear and v.linear run once. Every policy's schedule passes the checker; under
// `fusion+reuse` the search's own tile geometry once left out the ops run once, and K's buffer
// was planned live over two steps of the first row block only.
TEST(AttentionFusion, row_blocked_attention_groups_pass_the_checker_under_every_policy) {
  Machine machine = machine_from_config(
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/cloud-large.yaml"));
  machine.scratchpads[0].size_bytes = 4 << 20;
  machine.scratchpads[1].size_bytes = 1 << 20;
  machine.scratchpads[2].size_bytes = 1 << 20;
  auto graph = zoo::build_model("vit_b_16", {.with_weights = false, .layers = 1});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  for (const std::string policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    SCOPED_TRACE(policy);
    auto s = run_policy(net.value(), machine, policy, Objective::Bytes);
    ASSERT_TRUE(s.ok()) << s.reason();
    const Status checked = check_schedule(net.value(), machine, s.value());
    EXPECT_TRUE(checked.ok()) << checked.reason();
    bool once = false;
    for (const GroupSchedule& g : s.value().groups)
      once |=
          !runs_once(net.value(), g.ops, g.row_tiles, g.col_tiles, g.channel_tiles).once.empty();
    if (policy == "fusion+reuse" || policy == "optimal") {
      EXPECT_TRUE(once);
    }
  }
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
  ASSERT_NE(buffer(gs, kAttn + ".scores"), nullptr);
  EXPECT_EQ(buffer(gs, "acc:" + kAttn + ".scores")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, "acc:" + kAttn + ".context")->size_bytes, 512);
  ASSERT_NE(buffer(gs, kAttn + ".k.linear"), nullptr);
  ASSERT_NE(buffer(gs, kAttn + ".v.linear"), nullptr);
  EXPECT_EQ(buffer(gs, kAttn + ".k.linear")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, kAttn + ".v.linear")->size_bytes, 512);
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
  bool fused = false;  // the chain in one group (with the token ops around it)
  const std::vector<int> ops = chain(net);
  for (const GroupSchedule& g : s.value().groups)
    fused |= std::includes(g.ops.begin(), g.ops.end(), ops.begin(), ops.end());
  EXPECT_TRUE(fused);
}

}  // namespace
}  // namespace tessel::sched
