// Cross-group weight prefetch: hand-computed buffers, lifetimes, bytes and cycles; the checker.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scheduler/checker.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched::prefetch_test {
namespace {

// x (8 x 4 x 4, 8-bit) -> conv a (1x1, 8 out, bias) -> relu_a -> conv b (1x1, 8 out, bias)
// -> relu_b, on a 4 x 4 array (fill 4, drain 4, 4 vector lanes), 16 B/cycle, 64-byte bursts,
// no DRAM latency: a burst takes 4 cycles.
Net two_convs() {
  NetBuilder b("two_convs", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int a = b.conv("a", x, 8, 1, 1, 0, 1, 1, true);
  const int ra = b.eltwise("relu_a", a);
  const int c = b.conv("b", ra, 8, 1, 1, 0, 1, 1, true);
  b.eltwise("relu_b", c);
  return b.build();
}

const std::vector<int> kFirst = {1, 2};   // a, relu_a
const std::vector<int> kSecond = {3, 4};  // b, relu_b

const BufferAlloc& buffer(const GroupSchedule& g, const std::string& name) {
  for (const auto& b : g.buffers)
    if (b.name == name) return b;
  static const BufferAlloc none;
  ADD_FAILURE() << "no buffer " << name;
  return none;
}

GroupSchedule one_tile(const Net& net, const Machine& machine, const std::vector<int>& ops) {
  auto r = evaluate_mapping(net, machine, ops, Mapping{}, PlanOptions{});
  EXPECT_TRUE(r.ok()) << r.reason();
  return r.ok() ? r.value() : GroupSchedule{};
}

bool disjoint(const BufferAlloc& a, const BufferAlloc& b) {
  return a.offset >= b.offset + b.size_bytes || b.offset >= a.offset + a.size_bytes;
}

// Each group alone, one tile, resident weights, serialised (docs/scheduler.md, "Cycles"):
//   weights a: 8 x 8 + bias 8 x 4 = 96 B + table 8 x 8 = 64 B = 160 B = 3 bursts = 12 cycles
//   x (or relu_a) 4 x 4 x 8 = 128 B = 2 bursts = 8; the stored output 8
//   compute: 4 conv rows of 4 pixels, each R 4 + 4 passes x 4 + fill 4 + drain 4 = 28, and a
//   requant 4 x 2 + 4 = 12 -> 160; relu 16 x 2 + 4 = 36 -> 196
//   cycles = 12 + 8 + 196 + 8 = 224; tail (after the last load) = 196 + 8 = 204, its DMA 8.
// Prefetched, the second group's 12 weight cycles run in the first group's tail, whose DMA
// (8) leaves 204 - 8 = 196 cycles free: no wait, 224 - 12 = 212.
TEST(Prefetch, second_group_loads_its_weights_in_the_first_groups_tail) {
  const Net net = two_convs();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  const GroupSchedule first = one_tile(net, machine, kFirst);
  const GroupSchedule second = one_tile(net, machine, kSecond);
  EXPECT_EQ(first.cycles, 224);
  EXPECT_EQ(first.prologue_weight_cycles, 12);
  EXPECT_EQ(first.tail_cycles, 204);
  EXPECT_EQ(first.tail_dma_cycles, 8);
  EXPECT_EQ(second.cycles, 224);
  EXPECT_EQ(second.prologue_weight_cycles, 12);

  auto r = plan_prefetched(net, machine, first, second, PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  const GroupSchedule& g = r.value();
  EXPECT_TRUE(g.prefetched);
  EXPECT_EQ(g.prefetch_wait_cycles, 0);
  EXPECT_EQ(g.cycles, 212);
  // Same mapping, same bytes: 128 in, 128 out, 96 weights, 64 table.
  EXPECT_EQ(g.traffic.activations_read, 128);
  EXPECT_EQ(g.traffic.activations_written, 128);
  EXPECT_EQ(g.traffic.weights_read, 96);
  EXPECT_EQ(g.traffic.requant_tables_read, 64);
  EXPECT_EQ(g.traffic.total(), second.traffic.total());
  // w:b (packed 2 x 2 blocks x 16 B = 64, bias 2 x 4 x 4 = 32, table 64: 160 B) lives from
  // step -1 (the first group's tail) and shares no byte with any buffer of the first group.
  const BufferAlloc& w = buffer(g, "w:b");
  EXPECT_EQ(w.size_bytes, 160);
  EXPECT_EQ(w.first_step, -1);
  EXPECT_EQ(w.last_step, 3);
  for (const auto& q : first.buffers) EXPECT_TRUE(disjoint(w, q)) << q.name;
  // Every other buffer keeps its lifetime within the group.
  for (const auto& b : g.buffers)
    if (b.name != "w:b") {
      EXPECT_GE(b.first_step, 0) << b.name;
    }

  Schedule s;
  s.groups = {first, g};
  finalize_schedule(net, machine, s);
  EXPECT_EQ(s.cycles, 224 + 212);
  EXPECT_TRUE(check_schedule(net, machine, s).ok()) << check_schedule(net, machine, s).reason();
}

// A long prefetch waits: with 1 B/cycle, the second group's 160 weight bytes take 3 bursts x 64
// = 192 cycles, x and relu_a 128 cycles each; the first group's tail is 196 + 128 = 324 with
// 128 of DMA: the prefetch ends 192 + 128 - 324 = -4 cycles before, no wait. At 0.5 B/cycle the
// DMA doubles (384 + 256 > 196 + 256): it waits 384 + 256 - 452 = 188 cycles.
TEST(Prefetch, the_wait_is_what_the_previous_tail_does_not_cover) {
  const Net net = two_convs();
  for (const auto& [bandwidth, expected_wait] :
       {std::pair{1.0, int64_t{0}}, std::pair{0.5, int64_t{188}}}) {
    const Machine machine = unified_machine(1024, 4, 4, bandwidth);
    const GroupSchedule first = one_tile(net, machine, kFirst);
    const GroupSchedule second = one_tile(net, machine, kSecond);
    auto r = plan_prefetched(net, machine, first, second, PlanOptions{});
    ASSERT_TRUE(r.ok()) << r.reason();
    EXPECT_EQ(r.value().prefetch_wait_cycles, expected_wait) << bandwidth;
    EXPECT_EQ(r.value().cycles, second.cycles - second.prologue_weight_cycles + expected_wait)
        << bandwidth;
  }
}

// The prefetch (LOAD engine) and the tail's stores (STORE engine) share the DRAM, they do not
// queue behind each other: at 16 B/cycle with a 400-cycle latency and 128 request slots (enough
// to cover it) every DMA here is latency-bound. A conv's weights are three DMAs (the blocks 64
// B, the bias 32 B, the table 64 B: one burst each, 404 cycles), so the second group's prologue
// is 1212 cycles of 160 bytes; x, relu_a and the stored output (2 bursts) take 408 each. The
// first group: 1212 + 408 + 196 + 408 = 2224, tail 196 + 408 = 604 with 408 (128 B) of stores.
// Both streams together: max(1212, 408, one DMA of their 288 bytes, 5 bursts: 420) = 1212, a
// wait of 1212 - 604 = 608 (taken one after the other, 1212 + 408 - 604 = 1016). At 0.5 B/cycle
// (the test above) the DRAM's time for both, 5 bursts x 128 = 640, is their sum.
TEST(Prefetch, on_a_latency_bound_dram_the_prefetch_overlaps_the_tail_stores) {
  const Net net = two_convs();
  Machine machine = unified_machine(1024, 4, 4, 16);
  machine.dram_latency_cycles = 400;
  machine.max_outstanding = 128;
  const GroupSchedule first = one_tile(net, machine, kFirst);
  const GroupSchedule second = one_tile(net, machine, kSecond);
  EXPECT_EQ(first.cycles, 2224);
  EXPECT_EQ(first.tail_cycles, 604);
  EXPECT_EQ(first.tail_dma_cycles, 408);
  EXPECT_EQ(first.tail_dma_bytes, 128);
  EXPECT_EQ(second.prologue_weight_cycles, 1212);
  EXPECT_EQ(second.prologue_weight_bytes, 160);
  auto r = plan_prefetched(net, machine, first, second, PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  EXPECT_EQ(r.value().prefetch_wait_cycles, 608);
  EXPECT_EQ(r.value().cycles, second.cycles - 1212 + 608);
}

// No room: the first group occupies every byte the second one could put its weights in (the
// capacity is the first group's peak, and the second group needs it all too), so nothing is
// prefetched and `optimal` keeps the serial schedule.
TEST(Prefetch, nothing_is_prefetched_when_no_byte_is_free_in_the_previous_tail) {
  const Net net = two_convs();
  const Machine roomy = unified_machine(1024, 4, 4, 16);
  const int64_t peak = one_tile(net, roomy, kFirst).peak_bytes[0];
  const Machine tight = unified_machine(peak, 4, 4, 16);
  const GroupSchedule first = one_tile(net, tight, kFirst);
  const GroupSchedule second = one_tile(net, tight, kSecond);
  auto r = plan_prefetched(net, tight, first, second, PlanOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.reason().rfind("prefetch: allocation failed: scratchpad 0", 0), 0u) << r.reason();

  MapSpaceFeatures features;
  features.prefetch = true;
  auto with = run_policy(net, tight, "optimal", Objective::Latency, features);
  features.prefetch = false;
  auto without = run_policy(net, tight, "optimal", Objective::Latency, features);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with.value().cycles, without.value().cycles);
  for (const auto& g : with.value().groups) EXPECT_FALSE(g.prefetched);
}

// `optimal` sees the benefit: with room, the latency schedule prefetches and is faster by the
// hidden weight loads; bytes are the same.
TEST(Prefetch, optimal_prefetches_when_it_pays_and_keeps_the_bytes) {
  const Net net = two_convs();
  const Machine machine = unified_machine(4096, 4, 4, 16);
  MapSpaceFeatures features;
  features.prefetch = false;
  auto without = run_policy(net, machine, "optimal", Objective::Bytes, features);
  features.prefetch = true;
  auto with = run_policy(net, machine, "optimal", Objective::Bytes, features);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with.value().traffic.total(), without.value().traffic.total());
  int64_t hidden = 0;
  for (const auto& g : with.value().groups)
    if (g.prefetched) hidden += g.prologue_weight_cycles - g.prefetch_wait_cycles;
  if (without.value().groups.size() > 1) {
    EXPECT_GT(hidden, 0);
  }
  EXPECT_EQ(with.value().cycles + hidden, without.value().cycles);
}

// The checker: a prefetched buffer over a byte of the previous group, a buffer live from step
// -1 in a group that is not prefetched, and a prefetched buffer declared live from step 0 only
// are located errors.
TEST(Prefetch, checker_rejects_overlap_with_the_previous_group_and_stray_lifetimes) {
  const Net net = two_convs();
  const Machine machine = unified_machine(1024, 4, 4, 16);
  const GroupSchedule first = one_tile(net, machine, kFirst);
  auto r = plan_prefetched(net, machine, first, one_tile(net, machine, kSecond), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.reason();
  Schedule s;
  s.groups = {first, r.value()};
  // Move w:b to the lowest offset that is free within its own group but used by the first.
  const GroupSchedule& second = r.value();
  const BufferAlloc& w = buffer(second, "w:b");
  int64_t moved = -1;
  for (int64_t o = 0; o + w.size_bytes <= 1024 && moved < 0; o += 16) {
    BufferAlloc at = w;
    at.offset = o;
    const bool own_free =
        std::all_of(second.buffers.begin(), second.buffers.end(),
                    [&](const BufferAlloc& b) { return b.name == "w:b" || disjoint(at, b); });
    const bool used_before = std::any_of(first.buffers.begin(), first.buffers.end(),
                                         [&](const BufferAlloc& b) { return !disjoint(at, b); });
    if (own_free && used_before) moved = o;
  }
  ASSERT_GE(moved, 0);
  for (auto& b : s.groups[1].buffers)
    if (b.name == "w:b") b.offset = moved;
  Status status = check_schedule(net, machine, s);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason().rfind("group 1: prefetched buffer 'w:b' [" + std::to_string(moved) +
                                      ", " + std::to_string(moved + 160) + ") overlaps buffer '",
                                  0),
            0u)
      << status.reason();
  EXPECT_NE(status.reason().find("of group 0 in scratchpad 'sram' while that group runs"),
            std::string::npos)
      << status.reason();

  s.groups = {first, r.value()};
  s.groups[1].prefetched = false;
  status = check_schedule(net, machine, s);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "group 1: buffer 'w:b' is declared live from step -1 but the group is not prefetched");

  s.groups = {first, r.value()};
  for (auto& b : s.groups[1].buffers)
    if (b.name == "w:b") b.first_step = 0;
  status = check_schedule(net, machine, s);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "group 1: buffer 'w:b' is declared live over steps [0, 3] but is used over [-1, 3]");
}

}  // namespace
}  // namespace tessel::sched::prefetch_test
