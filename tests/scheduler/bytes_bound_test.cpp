// The DRAM-bytes bound per capacity (docs/bounds.md, "Lower bounds: DRAM bytes per
// capacity"): each step on hand-computed nets (a single conv, a conv chain, a residual block, a
// Gemm chain), and every registered policy's bytes at or above it on the tiny zoo nets and on
// random DAGs at several capacities.
#include "scheduler/bytes_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"
#include "tests/scheduler/random_net.hpp"
#include "tests/support/net_ops.hpp"

namespace tessel::sched {
namespace {

/// Every registered policy, both objectives, on `machine`: each schedule that exists moves at
/// least the bound. Returns how many schedules were found and the fewest bytes among them.
struct Found {
  int schedules = 0;
  int64_t least_bytes = -1;
};
Found expect_every_policy_at_least(const Net& net, const Machine& machine, int64_t bound) {
  Found found;
  for (const Policy& policy : policies()) {
    for (Objective objective : {Objective::Bytes, Objective::Latency}) {
      auto s = run_policy(net, machine, policy.name, objective);
      if (!s.ok()) continue;  // nothing fits (the model's own tests check the messages)
      ++found.schedules;
      const int64_t bytes = s.value().traffic.total();
      found.least_bytes = found.least_bytes < 0 ? bytes : std::min(found.least_bytes, bytes);
      EXPECT_GE(bytes, bound) << net.name << " " << policy.name << " " << to_string(objective)
                              << " @" << machine.scratchpads[0].size_bytes;
    }
  }
  return found;
}

/// On a 4 x 4 array (the packed weights of these nets are then their compact bytes plus bias
/// blocks and tables), at each capacity: every schedule at or above the bound; at the first
/// capacity, where everything fits, the best schedule reaches it.
void expect_schedules_at_least(const Net& net, const BytesBoundModel& model,
                               std::initializer_list<int64_t> capacities) {
  bool first = true;
  for (int64_t capacity : capacities) {
    const Machine machine = unified_machine(capacity, 4, 4);
    const int64_t bound = model.at(machine).bytes;
    const Found found = expect_every_policy_at_least(net, machine, bound);
    EXPECT_EQ(found.schedules, 10) << net.name << " @" << capacity;
    if (first) {
      EXPECT_EQ(found.least_bytes, bound) << net.name << " @" << capacity;
    }
    first = false;
  }
}

/// The hand-computed cases' machine: one unified buffer of `bytes` and a 1 x 1 matrix array, on
/// which a weight slice of c output channels packs (docs/scheduler.md, "Byte accounting") to its
/// compact weights, a 4-byte bias and an 8-byte requant entry per channel, rounded up to 8 B.
Machine flat(int64_t bytes) {
  return unified_machine(bytes, 1, 1);
}

// x (4, 16, 16) = 1024 B -> conv 3x3 pad 1 -> 64 channels (16,384 B); 1-byte elements, no bias:
// 64 * 4 * 9 = 2304 weight bytes (36 a channel) and a 512-byte requant table. Compulsory:
// 2304 + 512 + 1024 + 16,384 = 20,224.
//
// F9, one axis (16 input and output rows, 3 taps, pad 1): n near-equal parts of the output rows
// (part i = [16i/n, 16(i+1)/n)) read the input rows [b - 1, e + 1) clamped to [0, 16):
//   n = 1: 16 rows;  n = 2: 9 + 9 = 18 (widest 9);  n = 3: 6 + 7 + 7 = 20 (7);
//   n = 4: 5 + 6 + 6 + 5 = 22 (6);  n = 5: 4 + 5 + 5 + 5 + 5 = 24 (5);
//   n = 8: 3 + 6 * 4 + 3 = 30 (4);  n = 15 (one part of 2 rows, the last): 2 + 13 * 3 + 3 = 44
//   (3); every other n is beaten in both (n = 6: 26 rows, widest 5; n = 9: 32, widest 4;
//   n = 16: 46, widest 3).
//
// With S bytes on chip (one buffer) the weights exceed S, so the conv streams k >= ceil(64 /
// floor(S / 36)) channel parts; each part loads every tile's input box, and the widest slice
// and the largest box (its pixels * 4 B) are on chip together. The input stays whole (loaded
// once) only in one tile, beside a slice. streamed_input_loads alone, slices of compact
// weights (ceil(64 / k) * 36 B; the input stays whole from 1024 + 36 = 1060 B):
//   S = 4096: the weights fit: 20,224;
//   S = 1024: k = 3: 22 channels (792 B), 232 B left: boxes of at most 58 pixels; rows n = 4
//             (widest 6) by columns n = 2 (widest 9): 54 pixels, 22 * 18 = 396 pixel loads a
//             part (n = 3 by 3: 400; n = 5 by 2: 432): 3 * 396 * 4 = 4752; k = 4 (16
//             channels, 576 B, 112 pixels): n = 3 by 1 (7 * 16), 20 * 16 = 320 a part: 5120;
//             k = 5 loads at least 5 * 1024 = 5120. Bound 20,224 - 1024 + 4752 = 23,952;
//   S = 1000: k = 3, 208 B left, 52 pixels: n = 3 by 3 (49 pixels, 20 * 20 = 400): 4800;
//             k = 4 (106 pixels): n = 2 by 2 (81 pixels, 18 * 18 = 324): 5184; k = 5: >= 5120.
//             Bound 20,224 - 1024 + 4800 = 24,000;
//   S = 500:  k = 5 (13 channels, 468 B) leaves 8 pixels, under the 3 * 3 window; k = 6: 26
//             pixels, n = 5 by 5 (24 * 24 = 576): 13,824; k = 7: 35, n = 5 by 3 (24 * 20 =
//             480): 13,440; k = 8 (8 channels, 288 B): 53 pixels, n = 3 by 3 (400): 12,800;
//             k = 9 .. 12 more (14,400, 15,840, 15,840, 17,280); k = 13 loads >= 13,312.
//             (12,800 B of loads.)
// The model packs slices (flat(): 48 B a channel; the input stays whole from 1072 B):
//   S = 4096: the weights fit: 20,224;
//   S = 1024: k = 3 (22 channels, 1056 B) does not fit; k = 4 (768 B) leaves 64 pixels:
//             n = 3 by 2 (7 * 9), 20 * 18 = 360 a part, 5760 (n = 4 by 2: 396); k = 5 (624 B,
//             100 pixels): n = 2 by 2, 324 a part, 6480; k = 6 loads >= 6144. Bound 20,224 -
//             1024 + 5760 = 24,960;
//   S = 1000: k = 4 leaves 58 pixels: n = 4 by 2 (54), 396 a part, 6336; k = 5 (94 pixels):
//             6480; k = 6 (11 channels, 528 B, 118 pixels): n = 3 by 1, 320 a part, 7680; k = 7
//             >= 7168. Bound 20,224 - 1024 + 6336 = 25,536;
//   S = 500:  k = 5, 6 (624, 528 B) do not fit; k = 7 (480 B) leaves 5 pixels; k = 8 (384 B,
//             29 pixels): n = 5 by 5, 576 a part, 18,432; k = 9: 20,736; k = 10 (336 B, 41
//             pixels): n = 5 by 3, 480, 19,200; k = 11 (6 channels, 288 B, 53 pixels): n = 3 by
//             3, 400, 17,600; k = 12 .. 17 more (19,200, 18,720, 20,160, 21,600, 23,040,
//             24,480); k = 18 >= 18,432. Bound 20,224 - 1024 + 17,600 = 36,800.
TEST(BytesBound, a_single_conv_reloads_its_input_once_per_weight_part) {
  NetBuilder b("single_conv", 1, 1);
  const int x = b.input("x", {4, 16, 16});
  b.conv("c", x, 64, 3, 1, 1);
  const Net net = b.build();
  EXPECT_EQ(fewest_channel_parts(64, 36, 1000), 3);
  EXPECT_EQ(fewest_channel_parts(64, 36, 500), 5);
  EXPECT_EQ(fewest_channel_parts(64, 36, 35), 64);  // not one channel fits: no schedule
  const std::vector<AxisTiling> rows = axis_tilings(16, 16, 3, 1, 1, 1);
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> expected_rows = {
      {15, 3, 44}, {8, 4, 30}, {5, 5, 24}, {4, 6, 22}, {3, 7, 20}, {2, 9, 18}, {1, 16, 16}};
  ASSERT_EQ(rows.size(), expected_rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(std::make_tuple(rows[i].parts, rows[i].widest, rows[i].total), expected_rows[i]);
  const ConvTiles tiles = conv_tiles(net, 1);
  EXPECT_EQ(tiles.pixel_bytes, 4);
  EXPECT_EQ(tiles.per_channel, 36);
  EXPECT_EQ(tiles.whole_box_bytes, 1024);
  EXPECT_EQ(tiles.min_box_bytes(), 36);  // an inner pixel's 3 x 3 window
  const std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> loads[] = {
      {1060, 1024, 64, 1, 1},  // one tile: kept whole beside one channel
      {1024, 4752, 3, 4, 2},
      {1000, 4800, 3, 3, 3},
      {500, 12800, 8, 3, 3}};
  for (const auto& [capacity, bytes, parts, row_tiles, col_tiles] : loads) {
    const StreamedLoads l = streamed_input_loads(tiles, capacity, capacity, true);
    EXPECT_EQ(std::make_tuple(l.bytes, l.parts, l.row_tiles, l.col_tiles),
              std::make_tuple(bytes, parts, row_tiles, col_tiles))
        << capacity;
  }
  // Split scratchpads: the boxes have the activations' buffer to themselves (k = 3: n = 2 by 1,
  // 9 * 16 = 144 pixels <= 150; 18 * 16 * 3 * 4 = 3456).
  EXPECT_EQ(streamed_input_loads(tiles, 1000, 600, false).bytes, 3456);
  // Packed slices, as the model's on flat(): 48 B a channel.
  const auto packed = [](int64_t k) { return (64 + k - 1) / k * 48; };
  const std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> packed_loads[] = {
      {1072, 1024, 64, 1, 1}, {1024, 5760, 4, 3, 2}, {1000, 6336, 4, 4, 2}, {500, 17600, 11, 3, 3}};
  for (const auto& [capacity, bytes, parts, row_tiles, col_tiles] : packed_loads) {
    const StreamedLoads l = streamed_input_loads(tiles, capacity, capacity, true, false, packed);
    EXPECT_EQ(std::make_tuple(l.bytes, l.parts, l.row_tiles, l.col_tiles),
              std::make_tuple(bytes, parts, row_tiles, col_tiles))
        << capacity;
  }
  EXPECT_EQ(streamed_input_loads(tiles, 1071, 1071, true, false, packed).parts, 4);  // not kept
  const BytesBoundModel model(net);
  const std::pair<int64_t, int64_t> cases[] = {
      {4096, 20224}, {1024, 24960}, {1000, 25536}, {500, 36800}};
  for (const auto& [capacity, expected] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 20224);
    EXPECT_EQ(bound.base_bytes, 20224);
    EXPECT_EQ(bound.crossing_bytes, 0) << capacity;
    EXPECT_EQ(bound.chain_bytes, expected) << capacity;  // one group, the same loads
    EXPECT_EQ(bound.bytes, expected) << capacity;
  }
  // Per tensor (step 3 needs the input over S): 1024 B fits, so only the chain sees S = 1024.
  EXPECT_EQ(model.at(flat(1024)).per_tensor_bytes, 20224);
  const BytesBound small = model.at(flat(1000));
  EXPECT_EQ(small.per_tensor_bytes, 25536);
  ASSERT_EQ(small.forced.size(), 1u);
  EXPECT_EQ(small.forced[0].tensor, x);
  EXPECT_EQ(small.forced[0].reread_bytes, 6336 - 1024);
  EXPECT_EQ(small.forced[0].why, "reread");
  // Measured (on a 4 x 4 array): at 2000 B the best policy moves the bound; at 1000 B 31,872,
  // at 500 B 44,544 (power-of-two parts, weights reloaded).
  expect_schedules_at_least(net, model, {2000, 1024, 1000, 500});
}

// x (32, 4, 4) = 512 B -> c1 3x3 pad 1 -> a (64, 4, 4) = 1024 B -> MaxPool 3x3 s1 pad 1 -> p
// (64, 4, 4) = 1024 B -> c2 1x1 -> y (16, 4, 4) = 256 B. Weights 64 * 288 = 18,432 and 16 * 64
// = 1024 B, tables 512 + 128; compulsory 19,456 + 640 + 512 + 256 = 20,864. No tiled group
// holds c1 with the pool (F4: 18,432 B; a pool is no streaming op), so `a` stays on chip only
// in a sweep {c1, pool, c2} (at least two convs). Its maps (F5): at c1's first phase x and a
// (read by the pool, past c1's block): 1536 B; at the pool's block (a block of its own) a and
// p, whole: 2048 B; at c2's first phase p and y (the network output): 1280 B. Two slice copies
// of at least c1's packed one-channel slice (flat(): 288 + 4 + 8 = 300, rounded up to 304 B):
// 608 B. So the sweep fits from 2656 B (before the pool's block counted: 1536 + 608 = 2144).
//   S = 2400: the sweep does not fit, `a` crosses (its store and one load: 2048 B): c1 alone
//             streams its weights but keeps x whole beside a slice (512 + 304 B), {pool, c2}
//             is tiled (c2's 16 * (64 + 12) = 1216 B packed): 20,864 + 2048 = 22,912
//             (before: 20,864);
//   S = 2656: the sweep fits: 20,864.
// The per-tensor cut of `a`'s span {c1, pool} (tensors made before the op, readers in the span)
// is x's 512 B at c1's phase and a's 1024 B at the pool's block: it fits at 2400 B.
TEST(BytesBound, a_sweep_holds_a_pools_input_and_output_whole_at_its_block) {
  NetBuilder b("pool_sweep", 1, 1);
  const int x = b.input("x", {32, 4, 4});
  const int a = b.conv("c1", x, 64, 3, 1, 1);
  const int p = b.pool("pool", a, OpKind::MaxPool, 3, 1, 1);
  b.conv("c2", p, 16, 1);
  const Net net = b.build();
  const BytesBoundModel model(net);
  const auto& all = model.groups_from(0).at(2);
  EXPECT_EQ(all.sweep_maps, 2048);
  EXPECT_EQ(all.traffic, 512);                           // loads x; y is the network output
  EXPECT_EQ(model.groups_from(0).at(1).sweep_maps, -1);  // one conv: no sweep
  const auto& terms = model.terms();
  const auto a_terms =
      std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.tensor == a; });
  ASSERT_NE(a_terms, terms.end());
  EXPECT_EQ(a_terms->sweep_cut, 1024);
  EXPECT_EQ(a_terms->span_weights, 18432);
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {
      {2400, 20864, 22912}, {2655, 20864, 22912}, {2656, 20864, 20864}};
  for (const auto& [capacity, per_tensor, chain] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 20864);
    EXPECT_EQ(bound.per_tensor_bytes, per_tensor) << capacity;
    EXPECT_EQ(bound.chain_bytes, chain) << capacity;
  }
  EXPECT_EQ(model.at(flat(2400)).chain_groups, (std::vector<int>{0, 1}));
  EXPECT_EQ(model.group_floor(0, 3, flat(2655)), -1);
  EXPECT_EQ(model.group_floor(0, 3, flat(2656)), 512 + 19456 + 640 + 256);
  // Every policy, both objectives, at or above the bound (4 x 4 array) at and around the
  // capacities where the pool's block decides.
  for (int64_t capacity : {2400, 2656, 3000, 4096}) {
    const Machine machine = unified_machine(capacity, 4, 4);
    expect_every_policy_at_least(net, machine, model.at(machine).bytes);
  }
}

// Attention, 16 tokens, 2 heads of 8 (docs/scheduler-transformers.md "Transformers": a token tensor
// is C = d, H = S, W = 1): q, k, v network inputs (16 x 16 x 1, 256 B each), scores = q k^T per
// head (2 heads x 16 keys = 32 channels of 16 rows: 512 B), RowSoftmax -> probs (512 B), context =
// probs v (256 B, the network output). Compulsory: 768 + 256 = 1024. A MatMul's output rows need
// all of its `b` (deduce_input), so at the scores MatMul's step of a group holding both
// MatMuls, k and v (loaded: live from step 0 to their reader) are on chip whole: 512 B (F10).
//   S >= 512: one group, the scores and probs never leave: 1024;
//   256 <= S < 512: no group holds both MatMuls; {scores} {softmax, context} stores and loads
//             the scores (+1024), {scores, softmax} {context} the probs (+1024): 2048;
//   S < 256: no group holds a MatMul (its b alone): no partition (chain -1), the per-tensor
//             bound (1024) stands.
TEST(BytesBound, attention_scores_cross_where_k_and_v_do_not_fit_together) {
  Net net;
  net.name = "attention";
  const int q = test_support::add_input(net, "q", {16, 16, 1});
  const int k = test_support::add_input(net, "k", {16, 16, 1});
  const int v = test_support::add_input(net, "v", {16, 16, 1});
  using test_support::add_row_op;
  const int scores = add_row_op(net, "scores", OpKind::MatMul, {q, k}, {32, 16, 1});
  const int probs = add_row_op(net, "softmax", OpKind::RowSoftmax, {scores}, {32, 16, 1});
  add_row_op(net, "context", OpKind::MatMul, {probs, v}, {16, 16, 1});
  net.finalize();
  const BytesBoundModel model(net);
  EXPECT_EQ(model.groups_from(0).at(2).matmul_maps, 512);  // at scores: k and v
  EXPECT_EQ(model.groups_from(0).at(0).matmul_maps, 256);  // k
  EXPECT_EQ(model.groups_from(1).at(1).matmul_maps, 256);  // {softmax, context}: v
  EXPECT_EQ(model.groups_from(1).at(0).matmul_maps, 0);
  const std::tuple<int64_t, int64_t> cases[] = {
      {4096, 1024}, {512, 1024}, {511, 2048}, {256, 2048}, {255, -1}};
  for (const auto& [capacity, chain] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 1024) << capacity;
    EXPECT_EQ(bound.per_tensor_bytes, 1024) << capacity;
    EXPECT_EQ(bound.chain_bytes, chain) << capacity;
    EXPECT_EQ(bound.bytes, std::max<int64_t>(1024, chain)) << capacity;
  }
  EXPECT_EQ(model.group_floor(0, 3, flat(511)), -1);
  EXPECT_EQ(model.group_floor(0, 3, flat(512)), 768 + 256);
  // tiny_attention (k and v: 512 B each, loaded by the chain's group or made in it by their
  // projections): every policy, both objectives, at or above the bound.
  Machine units = unified_machine(1 << 20);
  units.lookup_table = units.row_normalise = units.activation_operands = true;
  auto graph = zoo::build_model("tiny_attention", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto tiny = net_from_graph(graph.value(), units, NetForm::Folded);
  ASSERT_TRUE(tiny.ok()) << tiny.reason();
  const BytesBoundModel tiny_model(tiny.value());
  int found = 0;
  for (int64_t capacity : {2048, 8192, 65536}) {
    Machine machine = units;
    machine.scratchpads[0].size_bytes = capacity;
    found +=
        expect_every_policy_at_least(tiny.value(), machine, tiny_model.at(machine).bytes).schedules;
  }
  EXPECT_GT(found, 0);
}

// x (8, 8, 8) = 512 B -> c1 3x3 pad 1 -> a (16, 8, 8) = 1024 B -> c2 3x3 pad 1 -> y (16, 8, 8).
// Weights 16 * 72 = 1152 and 16 * 144 = 2304 B, tables 128 + 128. Compulsory: 3456 + 256 + 512 +
// 1024 = 5248. `a` stays on chip only in a group holding c1 and c2: tiled, both convs' weights
// at once (F4: packed on flat(), 16 * (72 + 12) + 16 * (144 + 12) = 3840 B; compact 3456); as a
// weight sweep, at c2's first phase `a` whole (the cut: 1024 B), c2's output y (stored: 1024 B)
// and two weight-slice copies of at least one packed channel of c2 (F5: 2 * 160 B; compact
// 2 * 144): 2368 B (compact 2336). The per-tensor bound checks the cut alone (1024 B); the chain
// bound the whole group.
//   S = 4096: 3840 (and c1's 72-byte window of x beside them, F9) fits: 5248;
//   S = 2350: per tensor 5248; chain: the sweep needs 2368 B: `a` crosses, 7296 (with compact
//             slices 2336 B fit: 5248);
//   S = 2048: per tensor 5248; chain: neither 3840 nor 2368 fit, `a` crosses (stored 1024 +
//             loaded 1024): 7296; c2's weights (2304) exceed S but its input fits whole beside
//             a one-channel slice (1024 + 160): one tile, no reread;
//   S = 1024: per tensor the cut fits exactly: 5248; chain: c2 streams and `a` does not fit
//             beside a slice. F9 on 8 rows (3 taps, pad 1): n = 1: 8 rows; n = 2: 5 + 5 = 10
//             (widest 5); n = 4: 3 + 4 + 4 + 3 = 14 (4); n = 7: 2 + 5 * 3 + 3 = 20 (3).
//             Pixels are 16 B. c2's slices pack on flat() to 156 B a channel, rounded up to
//             8 B: k = 3 (936 B) leaves 5 pixels, under the 3 x 3 window; k = 4 (624 B): 25
//             pixels, n = 2 by 2 (25), 10 * 10 * 16 * 4 = 6400; k = 5: 8000; k = 6 (472 B, 34
//             pixels): n = 2 by 2 again, 9600; k = 7 >= 7168. So c2 loads `a` 6400 B: 5248 -
//             512 + {c1} (512 + 1024) + {c2} 6400 = 12,672 (c1's weights exceed S too, but x
//             fits whole beside an 88-byte slice);
//   S = 1000: `a` crosses (per tensor too: the cut exceeds S), and c2 streams: k = 3 leaves 4
//             pixels; k = 4 (624 B) 23 pixels: n = 4 by 2 (4 * 5), 14 * 10 * 16 * 4 = 8960;
//             k = 5: 11,200; k = 6 (472 B, 33 pixels): n = 2 by 2, 9600; k = 7: 11,200; k = 8
//             (312 B, 43 pixels): n = 2 by 1, 10,240; k = 9 >= 9216. Both bounds 5248 + 2048 +
//             (8960 - 1024) = 15,232 (before F9: 2 more loads of `a` in 3 parts, 9344).
TEST(BytesBound, a_conv_chain_crosses_where_neither_both_weights_nor_the_map_fit) {
  NetBuilder b("chain", 1, 1);
  const int x = b.input("x", {8, 8, 8});
  const int a = b.conv("c1", x, 16, 3, 1, 1);
  b.conv("c2", a, 16, 3, 1, 1);
  const Net net = b.build();
  const BytesBoundModel model(net);
  const auto& terms = model.terms();
  const auto a_terms =
      std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.tensor == a; });
  ASSERT_NE(a_terms, terms.end());
  EXPECT_EQ(a_terms->span_weights, 3456);
  EXPECT_TRUE(a_terms->sweep_shaped);
  EXPECT_EQ(a_terms->sweep_cut, 1024);
  EXPECT_EQ(a_terms->store_bytes, 1024);
  EXPECT_EQ(a_terms->min_load_bytes, 1024);
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {{4096, 5248, 5248},
                                                         {2350, 5248, 7296},
                                                         {2048, 5248, 7296},
                                                         {1024, 5248, 12672},
                                                         {1000, 15232, 15232}};
  for (const auto& [capacity, per_tensor, chain] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.per_tensor_bytes, per_tensor) << capacity;
    EXPECT_EQ(bound.chain_bytes, chain) << capacity;
    EXPECT_EQ(bound.bytes, chain) << capacity;
  }
  // The candidate group {c1, c2}: loads x (512), stores nothing (y is the network output).
  const auto& both = model.groups_from(0).at(1);
  EXPECT_EQ(both.traffic, 512);
  EXPECT_EQ(both.conv_weights, 3456);
  EXPECT_EQ(both.sweep_maps, 2048);  // at c2: a + y; at c1: x + a = 1536
  EXPECT_EQ(both.sweep_weights, 288);
  EXPECT_FALSE(both.streams);
  EXPECT_EQ(model.group_floor(0, 2, flat(2350)), -1);  // F5: packed slices (2368 B) do not fit
  EXPECT_EQ(model.group_floor(0, 2, flat(2368)), 512 + 3456 + 256 + 1024);  // they fit
  EXPECT_EQ(model.group_floor(0, 2, flat(3911)), 512 + 3456 + 256 + 1024);  // swept
  EXPECT_EQ(model.at(flat(2048)).chain_groups, (std::vector<int>{0, 1}));
  EXPECT_EQ(model.at(flat(4096)).chain_groups, (std::vector<int>{0}));
  const BytesBound small = model.at(flat(1000));
  EXPECT_EQ(small.crossing_bytes, 2048);
  EXPECT_EQ(small.reread_bytes, 8960 - 1024);
  ASSERT_EQ(small.forced.size(), 1u);
  EXPECT_EQ(small.forced[0].why, "span");
  // Measured (4 x 4 array): 5248 at 4096 B; 20,544 at 1000 B; 36,480 at 800 B.
  expect_schedules_at_least(net, model, {4096, 2048, 1024, 1000, 800});
}

// x (8, 16, 16) -> c1 -> a -> c2 -> b -> c3 -> y, each 3x3 pad 1 to 8 channels: every map
// 2048 B, weights 576 B each (72 a channel), tables 64 each; compulsory 1728 + 192 + 2048 +
// 2048 = 6016. A tiled group holds its convs' weights (F4: packed on flat(), 8 * (72 + 4 + 8) =
// 672 B a conv) and its first conv's largest input box, at least one inner pixel's 3 x 3 window
// of 8 channels (72 B, F9): two convs 1416 B, three 2088 B. A sweep holds 4096 B of maps at each
// conv's first phase (its input and its output, stored or read by the next block) and two
// packed one-channel slices (F5: 2 * 88 B): 4272 B, for two or three.
//   S = 2400: all three convs in one group: 6016;
//   S = 2048: per tensor `a` (span c1 c2: 1152 B of compact weights) and `b` (c2 c3) may each
//             stay, so 6016; but groups are contiguous: keeping both needs c1 .. c3 in one
//             group, which fits neither tiled (2088) nor swept (4272), so one of them crosses:
//             6016 + 4096 = 10,112 (with compact weights three convs took 1800 B: 6016);
//   S = 1300: no two convs share a group (1416 B beside their weights, 4272 swept): a and b
//             cross: 6016 + 8192 = 14,208 (compact: 1224 B a pair, 10,112);
//   S = 1200: the same, 14,208 (and without F9's window, compact pairs would fit: 10,112).
TEST(BytesBound, groups_are_contiguous_so_a_chain_of_pairs_that_fit_still_crosses_once) {
  NetBuilder b("chain3", 1, 1);
  const int x = b.input("x", {8, 16, 16});
  const int a = b.conv("c1", x, 8, 3, 1, 1);
  const int c = b.conv("c2", a, 8, 3, 1, 1);
  b.conv("c3", c, 8, 3, 1, 1);
  const Net net = b.build();
  const BytesBoundModel model(net);
  const auto& three = model.groups_from(0).at(2);
  EXPECT_EQ(three.conv_weights, 1728);
  EXPECT_EQ(three.sweep_maps, 4096);
  EXPECT_EQ(three.sweep_weights, 144);
  EXPECT_EQ(three.traffic, 2048);                       // loads x; y is the network output
  EXPECT_EQ(model.groups_from(0).at(1).traffic, 4096);  // {c1, c2}: loads x, stores b
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {
      {2400, 6016, 6016}, {2048, 6016, 10112}, {1300, 6016, 14208}, {1200, 6016, 14208}};
  for (const auto& [capacity, per_tensor, chain] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 6016);
    EXPECT_EQ(bound.per_tensor_bytes, per_tensor) << capacity;
    EXPECT_EQ(bound.bytes, chain) << capacity;
  }
  EXPECT_EQ(model.at(flat(1200)).chain_groups, (std::vector<int>{0, 1, 2}));
  // On a 4 x 4 array a conv packs to 672 B too (2 column blocks x 2 row blocks x 9 taps x 16 +
  // 32 B of bias + 64 of table).
  for (int64_t capacity : {2048, 1300, 1200}) {
    const Machine machine = unified_machine(capacity, 4, 4);
    EXPECT_EQ(model.at(machine).bytes, model.at(flat(capacity)).bytes) << capacity;
    EXPECT_GT(expect_every_policy_at_least(net, machine, model.at(machine).bytes).schedules, 0);
  }
}

// F11, an inverted residual without its skip: x (2, 4, 4) -> e 1x1 -> 8 channels -> d 3x3 pad 1
// depthwise -> p 1x1 -> 2 channels (y, the output). Compulsory: weights 16 + 72 + 16, tables
// 8 B a channel (64 + 64 + 16), x and y 32 B each: 312. Packed on flat() (a channel: its
// compact weights, a 4-byte bias, an 8-byte table entry): e 8 x 14 = 112, d 8 x 21 = 168,
// p 2 x 20 = 40. At each conv's step of a tiled group with no channel tiles: the weights of it
// and of every later conv, the larger of its input box and its output box (each at least its
// conv reader's widest 3 x 3 or 1 x 1 window, every channel: d's 72 B), and its accumulator,
// 4 B a channel, as wide as that reader's window (3 columns for d's input):
//   {e, d, p}: e's step 320 + 72 + 3 x 32 = 488; d's 208 + 72 + 32 = 312; p's 40 + 8 + 8 = 56;
//   {e, d}: e's 280 + 72 + 96 = 448;  {d, p}: d's 312;  {d}: 272;  {e}: 112 + 2 + 32 = 146.
// (F9 alone, the head's 2-byte window beside the 320 B of weights: {e, d, p} from 322 B.)
//   S >= 488: one group: 312;
//   S = 487 .. 312: {e} {d, p} or {e, d} {p}: 128 B stored and loaded once more: 568;
//   S = 311 .. 272: three groups, both 128-byte maps cross: 824.
TEST(BytesBound, a_tiled_group_holds_each_convs_window_beside_the_later_weights) {
  NetBuilder b("inverted", 1, 1);
  const int x = b.input("x", {2, 4, 4});
  const int e = b.conv("e", x, 8, 1);
  const int d = b.conv("d", e, 8, 3, 1, 1, 8);
  b.conv("p", d, 2, 1);
  const Net net = b.build();
  const BytesBoundModel model(net);
  const std::tuple<int64_t, int64_t> cases[] = {{1024, 312}, {488, 312}, {487, 568}, {400, 568},
                                                {312, 568},  {311, 824}, {272, 824}};
  for (const auto& [capacity, bytes] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 312);
    EXPECT_EQ(bound.per_tensor_bytes, 312) << capacity;
    EXPECT_EQ(bound.bytes, bytes) << capacity;
  }
  EXPECT_EQ(model.group_floor(0, 3, flat(488)), 312);
  EXPECT_EQ(model.group_floor(0, 3, flat(487)), -1);
  EXPECT_EQ(model.group_floor(0, 2, flat(448)), 32 + 128 + 88 + 128);  // x in, d's map out
  EXPECT_EQ(model.group_floor(0, 2, flat(447)), -1);
  EXPECT_EQ(model.group_floor(1, 2, flat(312)), 128 + 88 + 80 + 32);
  EXPECT_EQ(model.group_floor(1, 2, flat(311)), -1);
  EXPECT_EQ(model.at(flat(300)).chain_groups, (std::vector<int>{0, 1, 2}));
  for (int64_t capacity : {1024, 600, 488, 487, 400, 312}) {
    const Machine machine = flat(capacity);
    const Found found = expect_every_policy_at_least(net, machine, model.at(machine).bytes);
    EXPECT_EQ(found.schedules, 10) << capacity;
    // Tight where the whole chain fits with room, and just under F11's 488 B: {e} {d, p}.
    if (capacity == 1024 || capacity == 487) {
      EXPECT_EQ(found.least_bytes, model.at(machine).bytes) << capacity;
    }
  }
}

// z (8, 8, 8) -> c0 1x1 -> x -> c1 3x3 pad 1 -> a -> c2 3x3 pad 1 -> b; y = b + x (the network
// output). Every map is 512 B; weights 64 + 576 + 576 = 1216, tables 3 * 64 = 192; compulsory
// 1216 + 192 + 512 + 512 = 2432. The residual x lives from c0 to the Add, so a group keeping it
// holds c0 .. add: all three convs' weights (1216 B), or as a sweep x and a whole at c2 (1024 B).
// `a` needs c1 and c2 (1152 B) or, swept, a alone at c2 (512 B). b feeds only the Add, which a
// channel-tiled c2 group runs: never forced. Per tensor:
//   S = 2048: 2432;  S = 1024: x's cut fits exactly: 2432;
//   S = 1000: x crosses (512 + 512): 3456;
//   S = 500:  x and a cross (2 * 1024), and c1 and c2 (576 B of weights, 72 a channel) stream
//             their weights in parts, each part loading its input's tile boxes (F9: 8 rows, 3
//             taps, pad 1: n = 1: 8 rows; n = 2: 10, widest 5; n = 4: 14, widest 4; n = 7: 20,
//             widest 3; 8-byte pixels). Slices pack on flat() to 84 B a channel, rounded up
//             to 8 B, so the input (512 B) never fits beside one (88 B). k = 2 (4 channels,
//             336 B) leaves 20 pixels: n = 4 by 2 (4 * 5), 14 * 10 * 8 * 2 = 2240; k = 3
//             (256 B, 30 pixels): n = 2 by 2, 2400; k = 4 (168 B, 41 pixels): n = 2 by 1,
//             2560; k = 5 loads >= 2560. So each loads 2240 B: 2432 + 2048 + 2 * (2240 - 512)
//             = 7936.
// The chain bound also counts, in a sweep, each conv's output at its first phase (c0: z + x;
// c1: x + a; c2: x + a, c slice-local: 1024 B each) and two 72-byte weight slices: 1168 B.
//   S = 1024, 1000: x stays only in c0 .. add (1216 tiled, 1168 swept): it crosses. Its readers
//             c1 and the Add share a group only in c1 .. add (1152, 1168): so x is loaded
//             twice, or c0 and c1 share a group ({c0, c1}: 640 B) and then c1 and c2 do not,
//             and `a` crosses: {c0, c1} {c2, add} moves x 512 + 512, a 512 + 512: 2432 + 2048
//             = 4480;
//   S = 500:  c1 and c2 head their own streaming groups ({c0, c1} needs 640 B, or 1024 B of
//             maps swept), so {c0} {c1} {c2, add}: x stored once and loaded by c1's group
//             (2240) and by the Add's (512), a stored (512) and loaded by c2's (2240):
//             2432 + 512 + 2240 + 512 + 512 + 2240 = 8448.
TEST(BytesBound, a_residual_block_keeps_its_input_only_in_a_group_spanning_the_block) {
  NetBuilder b("residual", 1, 1);
  const int z = b.input("z", {8, 8, 8});
  const int x = b.conv("c0", z, 8, 1);
  const int a = b.conv("c1", x, 8, 3, 1, 1);
  const int c = b.conv("c2", a, 8, 3, 1, 1);
  b.add("add", c, x);
  const Net net = b.build();
  const BytesBoundModel model(net);
  for (const auto& t : model.terms()) {
    if (t.tensor == x) {
      EXPECT_EQ(t.span_weights, 1216);
      EXPECT_EQ(t.sweep_cut, 1024);
    } else if (t.tensor == a) {
      EXPECT_EQ(t.span_weights, 1152);
      EXPECT_EQ(t.sweep_cut, 512);
    } else if (t.tensor == c) {
      EXPECT_EQ(t.span_weights, 0);  // conv + Add: channel tiles can stream c2's weights
    }
  }
  const std::tuple<int64_t, int64_t, int64_t> cases[] = {
      {2048, 2432, 2432}, {1024, 2432, 4480}, {1000, 3456, 4480}, {500, 7936, 8448}};
  for (const auto& [capacity, per_tensor, chain] : cases) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.per_tensor_bytes, per_tensor) << capacity;
    EXPECT_EQ(bound.bytes, chain) << capacity;
  }
  EXPECT_EQ(model.at(flat(1024)).chain_groups, (std::vector<int>{0, 2}));
  EXPECT_EQ(model.at(flat(500)).chain_groups, (std::vector<int>{0, 1, 2}));
  const BytesBound small = model.at(flat(500));
  EXPECT_EQ(small.crossing_bytes, 2048);
  EXPECT_EQ(small.reread_bytes, 2 * (2240 - 512));
  // Measured (4 x 4 array): 2432 at 2400 B; 6368 at 1000 B; 13,376 at 500 B.
  expect_schedules_at_least(net, model, {2400, 1000, 500});
}

// x (16, 4, 4) = 256 B -> flatten (a view of the input: never stored) -> fc1 100 -> fc2 10 ->
// softmax. Weights 256 * 100 + 400 = 26,000 and 1000 + 40 = 1040 B, tables 800 + 80; compulsory
// 26,000 + 1040 + 880 + 256 + 10 = 28,186. Gemm weights are never counted as held whole (a Gemm
// may split its reduction in chunks), so fc1 -> fc2 is never forced; a Softmax runs alone (on
// the host), so fc2's 10-byte output crosses at every capacity: 28,206.
TEST(BytesBound, a_gemm_chain_forces_only_the_softmax_input) {
  NetBuilder b("mlp", 1, 1);
  const int x = b.input("x", {16, 4, 4});
  const int r = b.reshape("flatten", x, {256, 1, 1});
  const int f1 = b.gemm("fc1", r, 100);
  const int f2 = b.gemm("fc2", f1, 10);
  b.softmax("softmax", f2);
  const Net net = b.build();
  // F9 is for dense convs only: a Gemm's one output pixel needs its whole input, kept across
  // its channel parts (one tile), so its parts never reload it.
  EXPECT_FALSE(conv_tiles(net, net.tensor(f1).producer).valid);
  const BytesBoundModel model(net);
  for (int64_t capacity : {64, 1024, 1 << 20}) {
    const BytesBound bound = model.at(flat(capacity));
    EXPECT_EQ(bound.compulsory_bytes, 28186);
    EXPECT_EQ(bound.bytes, 28206) << capacity;
    // The chain: {flatten} (a view: nothing), {fc1, fc2} (loads the 256 input bytes, stores
    // fc2's 10), {softmax} (loads 10): the input's compulsory load is the second group's.
    EXPECT_EQ(bound.chain_bytes, 28206) << capacity;
    EXPECT_EQ(bound.chain_groups, (std::vector<int>{0, 1, 3})) << capacity;
    ASSERT_EQ(bound.forced.size(), 1u);
    EXPECT_EQ(bound.forced[0].tensor, f2);
  }
  for (int64_t capacity : {64 * 1024, 32 * 1024})
    EXPECT_GT(expect_every_policy_at_least(net, unified_machine(capacity), 28206).schedules, 0);
}

// x (4, 4, 4) = 64 B through 33 depthwise 3x3 convs (36 B of weights each, maps 64 B). With
// everything on chip the whole chain is one group: compulsory. The planner's caps (F8: at most
// 32 ops in a tiled group; depthwise convs are never swept) split it in two, so one 64-byte map
// is stored and loaded again: compulsory + 128, only with `group_caps`.
TEST(BytesBound, the_group_caps_split_a_long_chain_only_when_asked) {
  NetBuilder b("long", 1, 1);
  int t = b.input("x", {4, 4, 4});
  for (int i = 0; i < 33; ++i) t = b.conv("dw" + std::to_string(i), t, 4, 3, 1, 1, 4);
  const Net net = b.build();
  const Machine roomy = unified_machine(1 << 20);
  const BytesBound plain = BytesBoundModel(net).at(roomy);
  const BytesBound capped = BytesBoundModel(net, true).at(roomy);
  EXPECT_EQ(plain.bytes, plain.compulsory_bytes);
  EXPECT_EQ(plain.chain_groups, (std::vector<int>{0}));
  EXPECT_EQ(capped.bytes, capped.compulsory_bytes + 128);
  EXPECT_EQ(capped.chain_groups.size(), 2u);
}

// The group floor on its own (BytesBoundModel::group_floor, which `optimal` uses to skip
// planning and to stop a group's search): on the tiny zoo nets and random DAGs, every candidate
// group of up to 6 ops at several capacities, planned alone with `optimal`'s options (bytes):
// where the floor rules the group out, planning fails; where a mapping exists, it moves at
// least the floor. And `optimal` with and without the early stop gives the same schedule.
TEST(BytesBound, the_group_floor_never_rules_out_a_group_that_fits_nor_exceeds_its_bytes) {
  int ruled_out = 0, planned = 0;
  const auto check = [&](const Net& net, const Machine& machine) {
    const BytesBoundModel model(net, true);
    const std::vector<int> seq = schedulable_ops(net);
    PlanOptions options;
    options.allow_weight_sweep = true;
    options.column_tiles_every_row = true;
    for (size_t first = 0; first < seq.size(); ++first) {
      for (size_t length = 1; length <= 6 && first + length <= seq.size(); ++length) {
        const std::vector<int> ops(seq.begin() + static_cast<long>(first),
                                   seq.begin() + static_cast<long>(first + length));
        if (!check_group(net, ops, options).ok()) break;
        const int64_t floor = model.group_floor(first, length, machine);
        auto plan = plan_group(net, machine, ops, options);
        ruled_out += floor < 0;
        planned += plan.ok();
        if (floor < 0) {
          EXPECT_FALSE(plan.ok()) << net.name << " @" << machine.scratchpads[0].size_bytes
                                  << " first " << first << " length " << length;
        } else if (plan.ok()) {
          EXPECT_GE(plan.value().traffic.total(), floor)
              << net.name << " @" << machine.scratchpads[0].size_bytes << " first " << first
              << " length " << length;
        }
      }
    }
    MapSpaceFeatures without;
    without.bound_stop = false;
    auto a = run_policy(net, machine, "optimal", Objective::Bytes);
    auto b = run_policy(net, machine, "optimal", Objective::Bytes, without);
    ASSERT_EQ(a.ok(), b.ok()) << net.name;
    if (!a.ok()) return;
    EXPECT_EQ(a.value().traffic.total(), b.value().traffic.total()) << net.name;
    EXPECT_EQ(a.value().cycles, b.value().cycles) << net.name;
    EXPECT_EQ(a.value().groups.size(), b.value().groups.size()) << net.name;
  };
  for (const char* name : {"tiny_conv", "tiny_residual", "tiny_inception", "tiny_depthwise"}) {
    auto graph = zoo::build_model(name, {.with_weights = false});
    ASSERT_TRUE(graph.ok()) << graph.reason();
    auto net =
        net_from_graph(graph.value(), unified_machine(1 << 20), NetForm::FoldedPoolsBeforeConcat);
    ASSERT_TRUE(net.ok()) << net.reason();
    for (int64_t capacity : {1024, 4096}) check(net.value(), unified_machine(capacity, 4, 4));
  }
  for (uint64_t seed = 1; seed <= testing::random_seeds(6); ++seed) {
    const Net net = testing::random_net(seed, 10);
    for (int64_t capacity : {1024, 4096}) check(net, unified_machine(capacity, 4, 4));
  }
  std::printf("%d groups ruled out, %d planned\n", ruled_out, planned);
  EXPECT_GT(ruled_out, 20);  // the check must have cases to check
  EXPECT_GT(planned, 100);
}

// A 1x1 stride-2 conv reads rows and columns 0, 2, 4, 6 of an 8x8 input: 16 of 64 pixels. As
// the only reader of a network input, only those count in the base.
TEST(BytesBound, a_skipping_window_reads_only_the_rows_and_columns_it_touches) {
  NetBuilder b("skip", 1, 1);
  const int x = b.input("x", {4, 8, 8});
  b.conv("down", x, 4, 1, 2, 0);
  const Net net = b.build();
  EXPECT_EQ(bytes_read_by(net, 1, x), 4 * 4 * 4);
  const BytesBound bound = bytes_lower_bound(net, unified_machine(4096));
  EXPECT_EQ(bound.compulsory_bytes, 16 + 32 + 256 + 64);
  EXPECT_EQ(bound.base_bytes, bound.compulsory_bytes - (256 - 64));
}

// Split scratchpads scale together: 32 + 96 KiB scaled to 64 KiB total are 16 + 48 KiB.
TEST(BytesBound, scaling_keeps_the_split_between_scratchpads) {
  Machine m = unified_machine(32 * 1024);
  m.scratchpads.push_back({"wgt", 96 * 1024});
  m.scratchpad_for[static_cast<int>(BufferKind::Weights)] = 1;
  const Machine scaled = scale_scratchpads(m, 64 * 1024);
  EXPECT_EQ(scaled.scratchpads[0].size_bytes, 16 * 1024);
  EXPECT_EQ(scaled.scratchpads[1].size_bytes, 48 * 1024);
}

// The tiny zoo nets (each policy's own form) and random DAGs, at several capacities: every
// policy's schedule moves at least the bound, and the bound is at least compulsory and equals
// it where everything fits (base: compulsory less input bytes no op reads). Some of these cases
// must force traffic, or the check says little.
TEST(BytesBound, every_policy_moves_at_least_the_bound_on_tiny_and_random_nets) {
  int forced_cases = 0, schedules = 0;
  const auto check = [&](const Net& net, const Machine& machine) {
    const BytesBound bound = bytes_lower_bound(net, machine);
    EXPECT_GE(bound.bytes, bound.base_bytes) << net.name;
    EXPECT_LE(bound.base_bytes, bound.compulsory_bytes) << net.name;
    // Everything fits: only a Softmax's input and a Reshape's output (both run alone) cross.
    const BytesBound roomy = bytes_lower_bound(net, unified_machine(int64_t{1} << 40));
    EXPECT_EQ(roomy.reread_bytes, 0) << net.name;
    EXPECT_EQ(roomy.chain_bytes, roomy.per_tensor_bytes) << net.name;
    for (const ForcedTraffic& f : roomy.forced) {
      const Tensor& t = net.tensor(f.tensor);
      EXPECT_TRUE(net.op(t.consumers[0]).kind == OpKind::Softmax ||
                  net.op(t.producer).kind == OpKind::Reshape)
          << net.name << " " << t.name;
    }
    forced_cases += bound.bytes > roomy.bytes;
    // With the planner's group caps (F8) the bound only grows; every policy obeys them.
    const BytesBound capped = BytesBoundModel(net, true).at(machine);
    EXPECT_GE(capped.bytes, bound.bytes) << net.name;
    schedules += expect_every_policy_at_least(net, machine, capped.bytes).schedules;
  };
  for (const char* model : {"tiny_conv", "tiny_residual", "tiny_inception", "tiny_mlp",
                            "tiny_depthwise", "tiny_stem"}) {
    auto graph = zoo::build_model(model, {.with_weights = false});
    ASSERT_TRUE(graph.ok()) << graph.reason();
    for (NetForm form : {NetForm::Caffe, NetForm::Folded, NetForm::FoldedPoolsBeforeConcat}) {
      auto net = net_from_graph(graph.value(), unified_machine(1 << 20), form);
      ASSERT_TRUE(net.ok()) << net.reason();
      for (int64_t capacity : {512, 1024, 2048, 8192}) {
        if (testing::kSanitized && (capacity == 1024 || capacity == 8192)) continue;
        check(net.value(), unified_machine(capacity));
      }
    }
  }
  for (uint64_t seed = 1; seed <= testing::random_seeds(12); ++seed) {
    const Net net = testing::random_net(seed, 10);
    for (int64_t capacity : {1024, 2048, 4096, 8192, 16384}) {
      // Under the sanitizers two of the five (the test's largest cost there: 105 s of
      // scheduler_tests' 293 under ASan, session 46).
      if (testing::kSanitized && capacity != 2048 && capacity != 8192) continue;
      check(net, unified_machine(capacity, 4, 4));
    }
  }
  std::printf("%d schedules, %d cases with forced traffic\n", schedules, forced_cases);
  // Under ASan half the tiny capacities, a quarter of the seeds and two of the random nets'
  // five capacities run (testing::kSanitized): 180 schedules there in session 46.
  EXPECT_GT(schedules, testing::kSanitized ? 150 : 500);
  EXPECT_GT(forced_cases, testing::kSanitized ? 4 : 10);
}

}  // namespace
}  // namespace tessel::sched
