// Weight sweeps: hand-computed tiles, slices, bytes, buffers, lifetimes, cycles and the checker.
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

#include "scheduler/checker.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {
namespace {

// x (8 x 4 x 4, 8-bit) -> conv a (1x1, 16 out, bias) -> relu -> conv b (1x1, 8 out, bias)
// -> add(b, x) -> relu: a bottleneck block in miniature on a 4 x 4 array.
Net mini_block() {
  NetBuilder b("mini_block", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int a = b.conv("a", x, 16, 1, 1, 0, 1, 1, true);
  const int ra = b.eltwise("relu_a", a);
  const int bb = b.conv("b", ra, 8, 1, 1, 0, 1, 1, true);
  const int sum = b.add("add", bb, x);
  b.eltwise("relu_out", sum);
  return b.build();
}

Mapping two_slices_each() {
  Mapping m;
  m.weights_resident = false;
  m.double_buffered = true;
  m.weight_sweep = true;
  m.op_slices = {2, 0, 2, 0, 0};  // a: 2 x 8 channels, b: 2 x 4 channels
  return m;
}

const BufferAlloc& buffer(const GroupSchedule& g, const std::string& name) {
  for (const auto& b : g.buffers)
    if (b.name == name) return b;
  static const BufferAlloc none;
  ADD_FAILURE() << "no buffer " << name;
  return none;
}

// A buffer's expected size, pixel stride and lifetime (size -1: not checked).
struct Expected {
  const char* name;
  int64_t size, pixel;
  int first, last;
};

void expect_buffers(const GroupSchedule& g, std::initializer_list<Expected> expected) {
  for (const Expected& e : expected) {
    const BufferAlloc& b = buffer(g, e.name);
    if (e.size >= 0) {
      EXPECT_EQ(b.size_bytes, e.size) << e.name;
      EXPECT_EQ(b.pixel_bytes, e.pixel) << e.name;
    }
    EXPECT_EQ(b.first_step, e.first) << e.name;
    EXPECT_EQ(b.last_step, e.last) << e.name;
  }
}

// The checker on a schedule of `g` alone, after `alter` changed its buffer named `name` (none:
// unchanged).
Status check_alone(const Net& net, const Machine& machine, GroupSchedule g,
                   const std::string& name = "",
                   const std::function<void(BufferAlloc&)>& alter = nullptr) {
  for (auto& b : g.buffers)
    if (b.name == name && alter) alter(b);
  Schedule s;
  s.groups = {std::move(g)};
  return check_schedule(net, machine, s);
}

TEST(WeightSweep, mini_block_is_a_sweep_group_and_a_lone_conv_is_not) {
  const Net net = mini_block();
  EXPECT_TRUE(is_weight_sweep_group(net, {1, 2, 3, 4, 5}));
  EXPECT_TRUE(is_weight_sweep_group(net, {1, 2, 3}));
  EXPECT_FALSE(is_weight_sweep_group(net, {1, 2}));     // one conv: channel tiles do this
  EXPECT_FALSE(is_weight_sweep_group(net, {2, 3, 4}));  // starts with an elementwise op
}

// Bytes: every input, stored output, weight and table once (the compulsory bytes of the net).
// Buffers (1-byte elements, channels of conv inputs padded to R = 4):
//   x, add, relu_out: one in-place chain, 4x4 pixels x 8 B = 128 B, one offset
//   a (made and consumed by block a: one slice, 8 channels) 128 B; relu_a (read by conv b)
//   16 x 16 = 256 B; b (one slice, 4 channels) 64 B
//   w:sweep, w:sweep#1: the widest packed slice, conv a's 8 channels: 2 x 2 blocks x 16 B + bias
//   2 x 4 x 4 B + table 8 x 8 B = 160 B
//   acc:a 1 row x 4 x 8 x 4 B = 128 B, acc:b 1 x 4 x 4 x 4 B = 64 B
// Steps: a 1, relu_a 2 (block a = [1, 2]), b 3, add 4, relu_out 5 (block b = [3, 5]), store 6.
TEST(WeightSweep, mini_block_bytes_buffers_and_lifetimes_are_exact) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, two_slices_each(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const GroupSchedule& g = r.value();
  EXPECT_TRUE(g.weight_sweep);
  EXPECT_EQ(g.tiles(), 1);
  EXPECT_EQ(g.traffic.activations_read, 128);
  EXPECT_EQ(g.traffic.activations_written, 128);
  EXPECT_EQ(g.traffic.weights_read, 192 + 160);  // 16 x 8 + 16 x 4 bias; 8 x 16 + 8 x 4
  EXPECT_EQ(g.traffic.requant_tables_read, 128 + 64);
  EXPECT_EQ(g.traffic.total(), 800);
  EXPECT_EQ(g.traffic.total(),
            net.total_weight_bytes() + net.total_requant_table_bytes() + net.io_bytes());

  expect_buffers(g, {{"x", 128, 8, 0, 5},
                     {"add", 128, 8, 3, 5},
                     {"relu_out", 128, 8, 3, 6},
                     {"a", 128, 8, 1, 2},
                     {"relu_a", 256, 16, 1, 5},
                     {"b", 64, 4, 3, 5},
                     {"w:sweep", 160, 0, 0, 6},
                     {"w:sweep#1", 160, 0, 0, 6},
                     {"acc:a", 128, 0, 1, 2},
                     {"acc:b", 64, 0, 3, 5}});
  // The chain shares one offset; the add writes over x, the final relu over the add.
  EXPECT_EQ(buffer(g, "add").offset, buffer(g, "x").offset);
  EXPECT_EQ(buffer(g, "relu_out").offset, buffer(g, "x").offset);
  EXPECT_EQ(g.buffers[static_cast<size_t>(buffer(g, "add").reuses)].name, "x");
  EXPECT_EQ(g.buffers[static_cast<size_t>(buffer(g, "relu_out").reuses)].name, "add");
  // Steps 1-2 hold chain 128 + a 128 + relu_a 256 + acc:a 128 + two slices 320 = 960 bytes.
  EXPECT_GE(g.peak_bytes[0], 960);
  EXPECT_LE(g.peak_bytes[0], 1024);

  Schedule s;
  s.groups = {g};
  EXPECT_TRUE(check_schedule(net, machine, s).ok()) << check_schedule(net, machine, s).reason();
}

// DMA: 16 B/cycle, 64-byte bursts, no latency: 4 cycles a burst. x 128 B = 2 bursts = 8; a
// slice is three DMAs as codegen emits them (weight blocks in one run, bias, requant table),
// each of whole bursts: a's 64 + 32 + 64 B = 3 bursts = 12 (twice); b's 64 + 16 + 32 B = 3
// bursts = 12 (twice; 2 bursts = 8 when the model took a slice as one DMA); the stored 128 B = 8.
// Compute per slice of a: 4 conv rows of 4 pixels, each R + 4 passes x 4 + fill 4 + drain 4 = 28
// and a requant 4 x 2 + 4 = 12 -> 160; relu 16 x 2 + 4 = 36 -> 196.
// Per slice of b: 4 x (4 + 4 x 4 + 8 = 28, requant 4 x 1 + 4 = 8) = 144; add 20; relu 20 -> 184.
// Loads run ahead by one slice (two copies): load ends 20, 32, 228 (waits for phase 0 to free
// its copy at 216), 424 (waits for phase 1 at 412); compute ends 216, 412, 596, 780; + store 8.
TEST(WeightSweep, mini_block_cycles_overlap_slice_loads_with_compute) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, two_slices_each(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  EXPECT_EQ(r.value().load_cycles, 8 + 12 + 12 + 12 + 12);
  EXPECT_EQ(r.value().compute_cycles, 2 * 196 + 2 * 184);
  EXPECT_EQ(r.value().store_cycles, 8);
  EXPECT_EQ(r.value().cycles, 788);
  EXPECT_EQ(r.value().rows_per_step, (std::vector<int64_t>{1, 1, 1, 1, 1}));
}

// Everything live at steps 1-2 needs 960 bytes: one byte less and the mapping is rejected.
TEST(WeightSweep, mini_block_is_rejected_when_block_a_does_not_fit) {
  const Net net = mini_block();
  auto r = evaluate_mapping(net, unified_machine(959, 4, 4, 16), {1, 2, 3, 4, 5}, two_slices_each(),
                            PlanOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.reason(),
            "allocation failed: scratchpad 0 needs up to 960 live bytes at one step, has 959");
}

TEST(WeightSweep, malformed_mappings_are_rejected_with_their_reason) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  Mapping m = two_slices_each();
  m.op_slices = {2, 1, 2, 0, 0};
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, m, PlanOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.reason(), "weight sweep: op 'relu_a' has 1 slices");
  m = two_slices_each();
  m.row_tiles = 2;
  r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, m, PlanOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.reason(), "a weight sweep has one tile");
}

// The checker restates the in-place rule: moving the add off x's offset while both live fails.
TEST(WeightSweep, checker_rejects_an_in_place_output_at_another_offset) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, two_slices_each(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const Status status =
      check_alone(net, machine, r.value(), "add", [](BufferAlloc& b) { b.offset += 8; });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "group 0: weight sweep: buffer 'add' cannot overwrite 'x' in place (same offset and "
            "layout, an elementwise op over an input it reads last that its block's conv does "
            "not read)");
  // A sweep declared with one weight copy fails too.
  GroupSchedule one = r.value();
  std::erase_if(one.buffers, [](const BufferAlloc& b) { return b.name == "w:sweep#1"; });
  for (auto& b : one.buffers) b.reuses = -1;  // indices moved; drop the claims
  const Status one_copy = check_alone(net, machine, one);
  ASSERT_FALSE(one_copy.ok());
  EXPECT_EQ(one_copy.reason(), "group 0: weight sweep: needs two weight slice buffers");
}

// One buffer checker serves both loop nests (issue 35): a buffer must hold what every tile
// needs, which in a sweep is one slice for a tensor made and consumed within its block: a
// (conv a's output, read by relu_a only) holds 16 / 2 = 8 channels of 1 B per pixel, 4 x 4
// pixels; b (conv b's, read by the add of its block) 8 / 2 = 4 channels. An op's buffer must
// belong to an op of the group, in a sweep and in a group tiling alike.
TEST(WeightSweep, one_checker_holds_slices_and_op_buffers_to_the_nest) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, two_slices_each(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  EXPECT_TRUE(check_alone(net, machine, r.value()).ok());
  EXPECT_EQ(
      check_alone(net, machine, r.value(), "a", [](BufferAlloc& b) { b.pixel_bytes = 4; }).reason(),
      "group 0: weight sweep: buffer 'a' has 128 bytes of 4-byte pixels but a tile needs 16 "
      "pixels of 8 bytes");
  EXPECT_EQ(
      check_alone(net, machine, r.value(), "b", [](BufferAlloc& b) { b.size_bytes = 63; }).reason(),
      "group 0: weight sweep: buffer 'b' has 63 bytes of 4-byte pixels but a tile needs 16 "
      "pixels of 4 bytes");
  EXPECT_EQ(
      check_alone(net, machine, r.value(), "acc:a", [](BufferAlloc& b) { b.op = -1; }).reason(),
      "group 0: weight sweep: buffer 'acc:a' belongs to no op of the group");
  // The same ops as a group tiling (one tile, resident weights, on 4 KiB): acc:a claimed by an
  // op outside the group (index 7: there are six ops).
  const Machine larger = unified_machine(4096, 4, 4, 16);
  auto tiled = evaluate_mapping(net, larger, {1, 2, 3, 4, 5}, Mapping{}, PlanOptions{});
  ASSERT_TRUE(tiled.ok()) << tiled.reason();
  EXPECT_TRUE(check_alone(net, larger, tiled.value()).ok());
  EXPECT_EQ(
      check_alone(net, larger, tiled.value(), "acc:a", [](BufferAlloc& b) { b.op = 7; }).reason(),
      "group 0: buffer 'acc:a' belongs to no op of the group");
}

// A per-slice op may not write over an input its block's conv reads: the conv reads all of it
// in every slice, after earlier slices' outputs landed. Here conv c and the add both read relu_a.
TEST(WeightSweep, no_in_place_output_over_an_input_its_block_conv_reads) {
  NetBuilder b("reads_twice", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int a = b.conv("a", x, 8, 1, 1, 0, 1, 1, true);
  const int ra = b.eltwise("relu_a", a);
  const int c = b.conv("c", ra, 8, 1, 1, 0, 1, 1, true);
  const int sum = b.add("add", c, ra);
  b.eltwise("relu_out", sum);
  const Net net = b.build();
  const Machine machine = unified_machine(4096, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, two_slices_each(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const GroupSchedule& g = r.value();
  // The add takes c's slice in place (both one slice of block c), never relu_a.
  EXPECT_EQ(g.buffers[static_cast<size_t>(buffer(g, "add").reuses)].name, "c");
  for (const auto& buf : g.buffers)
    if (buf.reuses >= 0) {
      EXPECT_NE(g.buffers[static_cast<size_t>(buf.reuses)].name, "relu_a");
    }
  EXPECT_EQ(buffer(g, "relu_out").reuses, -1);  // stored whole: a slice cannot hold it
  Schedule s;
  s.groups = {g};
  EXPECT_TRUE(check_schedule(net, machine, s).ok()) << check_schedule(net, machine, s).reason();
  // Claiming relu_a's bytes for the add anyway is what the checker refuses.
  for (auto& buf : s.groups[0].buffers) {
    if (buf.name != "add") continue;
    for (size_t i = 0; i < s.groups[0].buffers.size(); ++i)
      if (s.groups[0].buffers[i].name == "relu_a") buf.reuses = static_cast<int>(i);
  }
  const Status status = check_schedule(net, machine, s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("buffer 'add' cannot overwrite 'relu_a' in place"),
            std::string::npos)
      << status.reason();
}

// x (8 x 4 x 4, 8-bit) -> conv a (1x1, 8 out, bias) -> relu_a -> p (3x3/1 max pool, pad 1)
// -> conv b (1x1, 8 out, bias) -> relu_b: a pool between two convs, as in a VGG stage or an
// inception branch, on a 4 x 4 array.
Net pool_block() {
  NetBuilder b("pool_block", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int a = b.conv("a", x, 8, 1, 1, 0, 1, 1, true);
  const int ra = b.eltwise("relu_a", a);
  const int p = b.pool("p", ra, OpKind::MaxPool, 3, 1, 1);
  const int bb = b.conv("b", p, 8, 1, 1, 0, 1, 1, true);
  b.eltwise("relu_b", bb);
  return b.build();
}

Mapping pool_block_slices() {
  Mapping m = two_slices_each();
  m.op_slices = {2, 0, 0, 2, 0};  // a: 2 x 4 channels, p: none (whole), b: 2 x 4 channels
  return m;
}

TEST(WeightSweep, a_pool_is_a_block_of_its_own) {
  const Net net = pool_block();
  EXPECT_TRUE(is_weight_sweep_group(net, {1, 2, 3, 4, 5}));
  EXPECT_TRUE(is_weight_sweep_group(net, {1, 2, 3, 4}));
  EXPECT_FALSE(is_weight_sweep_group(net, {1, 2, 3}));  // one conv
  EXPECT_FALSE(is_weight_sweep_group(net, {3, 4, 5}));  // starts with the pool
  // Nothing runs per slice after a pool: an elementwise op there belongs to no conv's block.
  NetBuilder b("relu_after_pool", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int a = b.conv("a", x, 8, 1, 1, 0, 1, 1, true);
  const int p = b.pool("p", a, OpKind::MaxPool, 3, 1, 1);
  const int r = b.eltwise("relu", p);
  b.conv("c", r, 8, 1, 1, 0, 1, 1, true);
  EXPECT_FALSE(is_weight_sweep_group(b.build(), {1, 2, 3, 4}));
}

// Bytes: compulsory (x 128 + relu_b 128 + weights 2 x (64 + 32 bias) + tables 2 x 64 = 576).
// Buffers (1-byte elements, conv inputs padded to R = 4; no in-place link: a pool has a window,
// and relu_a / relu_b hold whole maps over one-slice inputs):
//   x 16 px x 8 B = 128 [0, 2]; a (one slice of 4) 64 [1, 2]; relu_a 128 [1, 3] (the pool,
//   block [3, 3], reads it); p 128 [3, 5] (conv b reads it); b (one slice) 64 [4, 5]; relu_b
//   128 [4, 6] (stored); slices: 4 channels x 8 in = 32 + bias 16 + table 32 = 80 B each;
//   acc:a, acc:b 1 row x 4 px x 4 ch x 4 B = 64.
// Peak: steps 1-2 and 4-5 hold 128 + 64 + 128 + 64 + 160 = 544 bytes.
TEST(WeightSweep, pool_block_bytes_buffers_and_lifetimes_are_exact) {
  const Net net = pool_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, pool_block_slices(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const GroupSchedule& g = r.value();
  EXPECT_TRUE(g.weight_sweep);
  EXPECT_EQ(g.traffic.activations_read, 128);
  EXPECT_EQ(g.traffic.activations_written, 128);
  EXPECT_EQ(g.traffic.weights_read, 2 * (64 + 32));
  EXPECT_EQ(g.traffic.requant_tables_read, 2 * 64);
  EXPECT_EQ(g.traffic.total(), 576);
  EXPECT_EQ(g.traffic.total(),
            net.total_weight_bytes() + net.total_requant_table_bytes() + net.io_bytes());
  expect_buffers(g, {{"x", 128, 8, 0, 2},
                     {"a", 64, 4, 1, 2},
                     {"relu_a", 128, 8, 1, 3},
                     {"p", 128, 8, 3, 5},
                     {"b", 64, 4, 4, 5},
                     {"relu_b", 128, 8, 4, 6},
                     {"w:sweep", 80, 0, 0, 6},
                     {"w:sweep#1", 80, 0, 0, 6},
                     {"acc:a", 64, 0, 1, 2},
                     {"acc:b", 64, 0, 4, 5}});
  for (const BufferAlloc& b : g.buffers) EXPECT_EQ(b.reuses, -1) << b.name;
  EXPECT_EQ(g.peak_bytes[0], 544);
  EXPECT_TRUE(check_alone(net, machine, g).ok()) << check_alone(net, machine, g).reason();
  EXPECT_FALSE(evaluate_mapping(net, unified_machine(543, 4, 4, 16), {1, 2, 3, 4, 5},
                                pool_block_slices(), PlanOptions{})
                   .ok());
}

// DMA (16 B/cycle, 64-byte bursts, no latency: 4 cycles a burst): x 128 B = 8; each slice is
// three DMAs (weights 32 B, bias 16 B, requant table 32 B), a burst each = 12 (8 when the model
// took the 80 bytes as one DMA); the stored 128 B = 8. Compute per slice of a: 4 rows of (conv
// 4 + 2 passes x 4 + fill 4 + drain 4 = 20, requant 4 + 4 = 8) = 112, relu_a 16 + 4 = 20 ->
// 132; the pool, 16 px x 9 taps x 2 lane groups + 4 = 292, joins a's last phase; b's slices as
// a's. Loads end 20, 32, 164 (phase 0 frees its copy at 152), 588 (phase 1 frees at 576);
// compute ends 152, 576, 708, 840; + store 8 = 848.
TEST(WeightSweep, pool_block_cycles_put_the_pool_in_the_phase_before_it) {
  const Net net = pool_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, pool_block_slices(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  EXPECT_EQ(r.value().load_cycles, 8 + 4 * 12);
  EXPECT_EQ(r.value().compute_cycles, 4 * 132 + 292);
  EXPECT_EQ(r.value().store_cycles, 8);
  EXPECT_EQ(r.value().cycles, 848);
}

// The checker restates the pool's block (step 3): a pool output declared live only from conv
// b's block on is refused.
TEST(WeightSweep, checker_knows_when_a_pool_output_is_used) {
  const Net net = pool_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5}, pool_block_slices(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const Status status =
      check_alone(net, machine, r.value(), "p", [](BufferAlloc& b) { b.first_step = 4; });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "group 0: weight sweep: buffer 'p' is declared live over steps [4, 5] but is used "
            "over [3, 5]");
}

// x (8 x 4 x 4) -> conv a (8, bias) -> relu_a (a network output); x -> conv b -> relu_b ->
// conv c -> relu_c (the other output): one slice per conv, so three phases, and relu_a is
// complete after phase 0, two phases before the last.
Net two_outputs() {
  NetBuilder b("two_outputs", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  b.eltwise("relu_a", b.conv("a", x, 8, 1, 1, 0, 1, 1, true));
  const int rb = b.eltwise("relu_b", b.conv("b", x, 8, 1, 1, 0, 1, 1, true));
  b.eltwise("relu_c", b.conv("c", rb, 8, 1, 1, 0, 1, 1, true));
  return b.build();
}

// Early stores: relu_a is stored right after phase 0 and phase 2's compute waits for that
// store, so relu_a's buffer lives through phase 1 (block b, steps 3-4): [1, 4], not to the
// store step 7; relu_c, completed by the last phase, lives to 7.
// DMA (4 cycles a burst): x 128 B = 8; each slice 64 + 32 + 64 = 160 B = 12; each store 8.
// Compute per phase: 4 rows of (conv 4 + 4 passes x 4 + 8 = 28, requant 4 x 2 + 4 = 12) = 160,
// relu 16 x 2 + 4 = 36 -> 196. Loads end 20, 32, 228 (phase 0 frees its copy at 216); relu_a's
// store follows on the bus, 228-236; compute ends 216, 412, max(228, 412, 236) + 196 = 608;
// relu_c's store 608-616 = cycles (624 with every store after the last phase).
TEST(WeightSweep, an_output_complete_two_phases_early_is_stored_early) {
  const Net net = two_outputs();
  const Machine machine = unified_machine(4096, 4, 4, 16);
  Mapping m = two_slices_each();
  m.op_slices = {1, 0, 1, 0, 1, 0};
  auto r = evaluate_mapping(net, machine, {1, 2, 3, 4, 5, 6}, m, PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const GroupSchedule& g = r.value();
  ASSERT_TRUE(g.weight_sweep);
  expect_buffers(g, {{"x", -1, 0, 0, 4},
                     {"a", -1, 0, 1, 2},
                     {"relu_a", -1, 0, 1, 4},
                     {"b", -1, 0, 3, 4},
                     {"relu_b", -1, 0, 3, 6},
                     {"c", -1, 0, 5, 6},
                     {"relu_c", -1, 0, 5, 7}});
  EXPECT_EQ(g.load_cycles, 8 + 3 * 12);
  EXPECT_EQ(g.compute_cycles, 3 * 196);
  EXPECT_EQ(g.store_cycles, 16);
  EXPECT_EQ(g.cycles, 616);
  EXPECT_EQ(g.tail_cycles, 616 - 228);
  EXPECT_EQ(g.tail_dma_cycles, 16);
  EXPECT_TRUE(check_alone(net, machine, g).ok()) << check_alone(net, machine, g).reason();
  // The checker restates it: relu_a's store still reads it during phase 1 (steps 3-4).
  const Status status =
      check_alone(net, machine, g, "relu_a", [](BufferAlloc& b) { b.last_step = 3; });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "group 0: weight sweep: buffer 'relu_a' is declared live over steps [1, 3] but is used "
            "over [1, 4]");
}

// 17 conv + relu pairs (34 ops, 8 x 4 x 4 maps): longer than max_group_ops (32). Such a group is
// allowed only as a sweep (sweeps on, at most max_sweep_ops), and then planned as one.
TEST(WeightSweep, only_a_sweep_may_pass_max_group_ops) {
  NetBuilder b("long_chain", 1, 1);
  int x = b.input("x", {8, 4, 4});
  for (int i = 0; i < 17; ++i) {
    const std::string n = std::to_string(i);
    x = b.eltwise("relu" + n, b.conv("conv" + n, x, 8, 1, 1, 0, 1, 1, true));
  }
  const Net net = b.build();
  std::vector<int> ops;
  for (int op = 1; op <= 34; ++op) ops.push_back(op);
  const Machine machine = unified_machine(4096, 4, 4, 16);
  PlanOptions options;
  ASSERT_EQ(options.max_group_ops, 32);
  ASSERT_EQ(options.max_sweep_ops, 64);
  options.allow_weight_sweep = false;
  const Status off = check_group(net, ops, options);
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.reason(), "group longer than 32 ops");
  options.allow_weight_sweep = true;
  EXPECT_TRUE(check_group(net, ops, options).ok());
  auto planned = plan_group(net, machine, ops, options);
  ASSERT_TRUE(planned.ok()) << planned.reason();
  EXPECT_TRUE(planned.value().weight_sweep);
  options.max_sweep_ops = 33;
  EXPECT_FALSE(check_group(net, ops, options).ok());
  // Not sweep-shaped (starts with a relu): refused however sweeps are set.
  options.max_sweep_ops = 64;
  const std::vector<int> from_relu(ops.begin() + 1, ops.end());
  ASSERT_EQ(from_relu.size(), 33u);
  EXPECT_FALSE(check_group(net, from_relu, options).ok());
}

// `optimal` weighs sweeps by default and not when switched off; with them it never moves more
// bytes, and on the mini block with 1 KiB it reaches the compulsory bytes.
TEST(WeightSweep, optimal_chooses_a_sweep_by_cost_only_when_enabled) {
  const Net net = mini_block();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  MapSpaceFeatures off;
  off.weight_sweep = false;
  auto without = run_policy(net, machine, "optimal", Objective::Bytes, off);
  ASSERT_TRUE(without.ok()) << without.reason();
  for (const auto& g : without.value().groups) EXPECT_FALSE(g.weight_sweep);
  for (Objective objective : {Objective::Bytes, Objective::Latency}) {
    MapSpaceFeatures features;
    features.weight_sweep = true;
    auto with = run_policy(net, machine, "optimal", objective, features);
    ASSERT_TRUE(with.ok()) << with.reason();
    EXPECT_TRUE(check_schedule(net, machine, with.value()).ok());
    if (objective == Objective::Bytes) {
      EXPECT_LE(with.value().traffic.total(), without.value().traffic.total());
      EXPECT_EQ(with.value().traffic.total(), with.value().compulsory_bytes);
    }
  }
}

}  // namespace
}  // namespace tessel::sched
