// The MLP's hidden chunks (issue 36, item 2; docs/scheduler-mapping.md "The MLP's hidden
// chunks"): LayerNorm, then Linear 32 -> 64, GELU, Linear 64 -> 32, the residual Add and a
// LayerNorm on 16 tokens, whose two Linears do not fit the 4 KiB weight scratchpad of
// tests/e2e/mlp-chunks.yaml together. One group in two chunks of 32 hidden channels: the bytes
// and buffers by hand, the refused counts, and the schedule `optimal` picks, checked and
// simulated bit exact with the scheduled bytes class by class and the predicted energy counts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/plan.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e {
namespace {

HwConfig chunk_config() {
  return load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/tests/e2e/mlp-chunks.yaml");
}

ir::Graph tiny_mlp_block() {
  zoo::NetBuilder net("tiny_mlp_block", {});
  const std::string x = net.layer_norm(net.input_shaped("input", {1, 16, 32}), "norm0", 1e-5);
  std::string f = net.dense(x, "linear1", 64, 2.0);
  f = net.op("gelu", ir::OpKind::Gelu, {f});
  f = net.dense(f, "linear2", 32);
  return net.finish({net.layer_norm(net.add(x, f, "add"), "norm", 1e-5)});
}

std::vector<int> ops_named(const sched::Net& net, const std::vector<std::string>& names) {
  std::vector<int> ops;
  for (const std::string& name : names)
    for (int i = 0; i < net.size(); ++i)
      if (net.op(i).name == name) ops.push_back(i);
  return ops;
}

std::vector<int> mlp_ops(const sched::Net& net) {
  return ops_named(net, {"linear1", "gelu", "linear2", "add", "norm"});
}

// A transformer layer's tail after attention: the output projection of the context, the
// residual Add and LayerNorm (the prefix, run whole by the first chunk), then the MLP of
// tiny_mlp_block.
ir::Graph tiny_post_attention() {
  zoo::NetBuilder net("tiny_post_attention", {});
  const std::string context = net.input_shaped("context", {1, 16, 32});
  const std::string residual = net.input_shaped("residual", {1, 16, 32});
  const std::string projected = net.dense(context, "out_proj", 32);
  const std::string x = net.layer_norm(net.add(residual, projected, "add1"), "norm1", 1e-5);
  std::string f = net.dense(x, "linear1", 64, 2.0);
  f = net.op("gelu", ir::OpKind::Gelu, {f});
  f = net.dense(f, "linear2", 32);
  return net.finish({net.layer_norm(net.add(x, f, "add2"), "norm2", 1e-5)});
}

const std::vector<std::string> kPostAttention = {"out_proj", "add1",    "norm1", "linear1",
                                                 "gelu",     "linear2", "add2",  "norm2"};

// mlp-chunks.yaml with a 6 KiB weight scratchpad: out_proj's 1,408 packed bytes beside a chunk
// of each Linear (1,408 + 1,408), the norms' 520 each and the GELU table fit; both Linears whole
// (2,816 + 2,432) beside out_proj do not.
HwConfig prefix_config() {
  HwConfig config = chunk_config();
  for (auto& pad : config.scratchpads)
    if (pad.name == "weights") pad.size_bytes = 6144;
  return config;
}

const sched::BufferAlloc* buffer(const sched::GroupSchedule& gs, const std::string& name) {
  for (const sched::BufferAlloc& b : gs.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

// Two chunks of 32 hidden channels (4 blocks of the 8 matrix rows), one tile of 16 tokens.
//   DRAM: x 16 x 32 = 512 read once (linear1's input and the Add's, kept), the norm's output 512
//   written. Weights: linear1 32 x 64 + 64 x 4 bias = 2,304 (a 32-channel slice a chunk), linear2
//   64 x 32 + 32 x 4 = 2,176 (chunk k: its inputs [32k, 32k + 32) of all 32 outputs; the bias
//   with chunk 0), the GELU table 256 per chunk = 512, the norm's 8 + 16 x 32 = 520 once (the last
//   chunk); requant tables 64 x 8 + 32 x 8 = 768 once.
//   Buffers: w:linear1 one 32-channel slice, 4 x 4 blocks of 8 x 8 + 4 x 8 x 4 bias + 32 x 8 =
//   1,408; w:linear2 one chunk, 4 output x 4 input blocks, the same 1,408; acc:linear2 every row,
//   16 x 32 x 4 = 2,048, over whole tiles (steps 0 to 6, the stores); the hidden tile 16 x 32.
TEST(HiddenChunks, two_chunks_move_every_byte_once_by_hand) {
  const HwConfig config = chunk_config();
  const sched::Machine machine = sched::machine_from_config(config);
  auto net = sched::net_from_graph(tiny_mlp_block(), machine, sched::NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const std::vector<int> ops = mlp_ops(net.value());
  ASSERT_EQ(ops.size(), 5u);
  const sched::Mapping chunked{1, 1, 2, sched::HaloMode::Recompute, false, false};
  auto r = sched::evaluate_mapping(net.value(), machine, ops, chunked, sched::PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const sched::GroupSchedule& gs = r.value();
  EXPECT_EQ(gs.traffic.activations_read, 512);
  EXPECT_EQ(gs.traffic.activations_written, 512);
  EXPECT_EQ(gs.traffic.weights_read, 2304 + 2176 + 512 + 520);
  EXPECT_EQ(gs.traffic.requant_tables_read, 768);
  EXPECT_EQ(gs.reduction_chunk_inputs, (std::vector<int64_t>{0, 0, 32, 0, 0}));
  ASSERT_NE(buffer(gs, "w:linear1"), nullptr);
  EXPECT_EQ(buffer(gs, "w:linear1")->size_bytes, 1408);
  ASSERT_NE(buffer(gs, "w:linear2"), nullptr);
  EXPECT_EQ(buffer(gs, "w:linear2")->size_bytes, 1408);
  ASSERT_NE(buffer(gs, "acc:linear2"), nullptr);
  EXPECT_EQ(buffer(gs, "acc:linear2")->size_bytes, 2048);
  EXPECT_EQ(buffer(gs, "acc:linear2")->first_step, 0);
  EXPECT_EQ(buffer(gs, "acc:linear2")->last_step, 6);
  ASSERT_NE(buffer(gs, "linear1"), nullptr);
  EXPECT_EQ(buffer(gs, "linear1")->size_bytes, 512);

  // 64 / 3 is no whole chunk; double-buffered chunks are not in the map space.
  sched::Mapping three = chunked;
  three.channel_tiles = 3;
  const Status refused = sched::check_mapping(net.value(), machine, ops, three);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.reason().find("3 chunks of the 64 hidden channels of 'linear1'"),
            std::string::npos)
      << refused.reason();
  sched::Mapping doubled = chunked;
  doubled.double_buffered = true;
  EXPECT_FALSE(sched::check_mapping(net.value(), machine, ops, doubled).ok());
}

TEST(HiddenChunks, optimal_chunks_the_mlp_and_the_simulation_is_bit_exact) {
  const HwConfig config = chunk_config();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(tiny_mlp_block(), qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, "optimal");
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  EXPECT_LE(cycle_ratio(r.value()), 1.05);
  EXPECT_GE(cycle_ratio(r.value()), 0.95);
  expect_energy_matches("tiny_mlp_block mlp-chunks optimal", r.value(), config,
                        CountMatch::ExactWithoutLeakage);
  const sched::ScheduledNet& scheduled = r.value().scheduled;
  // norm0 joins as the prefix (run by the first chunk): its output, linear1's input and the
  // Add's, never crosses the bus.
  const std::vector<int> ops =
      ops_named(scheduled.net, {"norm0", "linear1", "gelu", "linear2", "add", "norm"});
  const sched::GroupSchedule* mlp = nullptr;
  for (const sched::GroupSchedule& g : scheduled.schedule.groups)
    if (g.ops == ops) mlp = &g;
  ASSERT_NE(mlp, nullptr) << "the MLP is not one group";
  // Four chunks: with norm0's 520 bytes of parameters beside them, two chunks' weights (1,408 +
  // 1,408, the GELU table 256, the norm's 520) exceed the 4 KiB scratchpad by 16 bytes; four
  // (704 + 896 + 256 + 520 + 520 = 2,896) fit.
  EXPECT_EQ(mlp->channel_tiles, 4);
  EXPECT_EQ(mlp->row_tiles, 1);
  EXPECT_FALSE(mlp->weights_resident);
  const Status checked =
      sched::check_schedule(scheduled.net, scheduled.machine, scheduled.schedule);
  EXPECT_TRUE(checked.ok()) << checked.reason();
  // The bytes bound stays at or below the schedule (before session 30 it ruled the group out).
  EXPECT_LE(sched::bytes_lower_bound(scheduled.net, scheduled.machine).bytes,
            scheduled.schedule.traffic.total());
}

// The prefix: out_proj, add1 and norm1 run whole in the first of two chunks; norm1's output
// (linear1's input every chunk, add2's in the last) stays on chip over the tiles.
//   DRAM: context and residual 16 x 32 = 512 each, read once (kept); norm2's output 512 written.
//   Weights: out_proj 32 x 32 + 32 x 4 bias = 1,152 and norm1's 8 + 16 x 32 = 520, once (the
//   first chunk); the MLP's as in two_chunks_move_every_byte_once_by_hand, 2,304 + 2,176 + 2 x 256
//   + 520. Requant tables: out_proj 32 x 8 = 256, the Linears' 768.
//   Buffers: w:out_proj 4 x 4 blocks of 8 x 8 + 4 x 8 x 4 bias + 32 x 8 = 1,408, from the loads
//   to its step (1); norm1's output 16 x 32 = 512 over whole tiles (steps 0 to 9, the stores);
//   acc:linear2 16 x 32 x 4 = 2,048, also over whole tiles.
TEST(HiddenChunks, a_prefix_runs_in_the_first_chunk_by_hand) {
  const HwConfig config = prefix_config();
  const sched::Machine machine = sched::machine_from_config(config);
  auto net = sched::net_from_graph(tiny_post_attention(), machine, sched::NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const std::vector<int> ops = ops_named(net.value(), kPostAttention);
  ASSERT_EQ(ops.size(), 8u);
  const sched::HiddenChunks hc = sched::hidden_chunks(net.value(), ops);
  EXPECT_EQ(hc.producer, 3);
  EXPECT_EQ(hc.reducer, 5);
  const sched::Mapping chunked{1, 1, 2, sched::HaloMode::Recompute, false, false};
  auto r = sched::evaluate_mapping(net.value(), machine, ops, chunked, sched::PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const sched::GroupSchedule& gs = r.value();
  EXPECT_EQ(gs.traffic.activations_read, 1024);
  EXPECT_EQ(gs.traffic.activations_written, 512);
  EXPECT_EQ(gs.traffic.weights_read, 1152 + 520 + 2304 + 2176 + 512 + 520);
  EXPECT_EQ(gs.traffic.requant_tables_read, 256 + 768);
  ASSERT_NE(buffer(gs, "w:out_proj"), nullptr);
  EXPECT_EQ(buffer(gs, "w:out_proj")->size_bytes, 1408);
  EXPECT_EQ(buffer(gs, "w:out_proj")->last_step, 1);
  ASSERT_NE(buffer(gs, "norm1"), nullptr);
  EXPECT_EQ(buffer(gs, "norm1")->size_bytes, 512);
  EXPECT_EQ(buffer(gs, "norm1")->first_step, 0);
  EXPECT_EQ(buffer(gs, "norm1")->last_step, 9);
  ASSERT_NE(buffer(gs, "acc:linear2"), nullptr);
  EXPECT_EQ(buffer(gs, "acc:linear2")->size_bytes, 2048);

  // Without add2 and norm2, norm1's output is read outside: the last chunk stores it (512 bytes)
  // beside linear2's output (512), from its buffer over whole tiles; out_proj's and norm1's
  // weights still load once, norm2's not at all.
  const std::vector<int> cut(ops.begin(), ops.begin() + 6);
  auto c = sched::evaluate_mapping(net.value(), machine, cut, chunked, sched::PlanOptions{});
  ASSERT_TRUE(c.ok()) << c.reason();
  EXPECT_EQ(c.value().traffic.activations_read, 1024);
  EXPECT_EQ(c.value().traffic.activations_written, 1024);
  EXPECT_EQ(c.value().traffic.weights_read, 1152 + 520 + 2304 + 2176 + 512);
  ASSERT_NE(buffer(c.value(), "norm1"), nullptr);
  EXPECT_EQ(buffer(c.value(), "norm1")->first_step, 0);
  EXPECT_EQ(buffer(c.value(), "norm1")->last_step, 7);
}

TEST(HiddenChunks, optimal_runs_the_prefix_with_the_chunks_bit_exact) {
  const HwConfig config = prefix_config();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(tiny_post_attention(), qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, "optimal");
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  EXPECT_LE(cycle_ratio(r.value()), 1.05);
  EXPECT_GE(cycle_ratio(r.value()), 0.95);
  expect_energy_matches("tiny_post_attention mlp-chunks 6 KiB optimal", r.value(), config,
                        CountMatch::ExactWithoutLeakage);
  const sched::ScheduledNet& scheduled = r.value().scheduled;
  const std::vector<int> ops = ops_named(scheduled.net, kPostAttention);
  const sched::GroupSchedule* group = nullptr;
  for (const sched::GroupSchedule& g : scheduled.schedule.groups)
    if (g.ops == ops) group = &g;
  ASSERT_NE(group, nullptr) << "the projection, norm and MLP are not one group";
  EXPECT_GT(group->channel_tiles, 1);
  // Every byte once but the GELU table (once a chunk): the inputs, the output, the weights.
  const int64_t k = group->channel_tiles;
  EXPECT_EQ(group->traffic.activations_read, 1024);
  EXPECT_EQ(group->traffic.activations_written, 512);
  EXPECT_EQ(group->traffic.weights_read, 1152 + 520 + 2304 + 2176 + 256 * k + 520);
  const Status checked =
      sched::check_schedule(scheduled.net, scheduled.machine, scheduled.schedule);
  EXPECT_TRUE(checked.ok()) << checked.reason();
  EXPECT_LE(sched::bytes_lower_bound(scheduled.net, scheduled.machine).bytes,
            scheduled.schedule.traffic.total());
}

// The bytes bound with a 2 KiB weight scratchpad: linear2's 2,176 compact bytes alone exceed it,
// so without the chunks its input (gelu's output) could never share a group with gelu; a group
// chunking the hidden dimension holds a chunk of each Linear, so the bound forces neither hidden
// tensor across DRAM.
TEST(HiddenChunks, the_bytes_bound_forces_no_hidden_tensor_across_dram) {
  sched::Machine machine = sched::machine_from_config(chunk_config());
  machine.scratchpads[static_cast<size_t>(machine.scratchpad(sched::BufferKind::Weights))]
      .size_bytes = 2048;
  auto net = sched::net_from_graph(tiny_mlp_block(), machine, sched::NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const sched::BytesBound bound = sched::bytes_lower_bound(net.value(), machine);
  for (const sched::ForcedTraffic& f : bound.forced) {
    EXPECT_NE(net.value().tensor(f.tensor).name, "linear1") << f.why;
    EXPECT_NE(net.value().tensor(f.tensor).name, "gelu") << f.why;
  }
}

}  // namespace
}  // namespace tessel::e2e
