// DramModel: hand-computed completion cycles for bursts, outstanding limits and splitting.
#include "sim/dram/dram_model.hpp"

#include <gtest/gtest.h>

#include <random>

namespace tessel::sim {
namespace {

// 4 bytes per cycle (400 MB/s at 100 MHz), 10 cycles latency, 64-byte bursts: one burst is
// 16 cycles on the bus.
DramModel make(std::uint64_t outstanding, std::uint64_t latency = 10) {
  auto model = DramModel::create({400'000'000, 100'000'000, latency, 64, outstanding});
  EXPECT_TRUE(model.ok()) << model.reason();
  return std::move(model).value();
}

DramRequest read(std::uint64_t address, std::uint64_t bytes, std::uint64_t cycle = 0,
                 TrafficKind kind = TrafficKind::kActivations) {
  return {address, bytes, DramDirection::kRead, kind, cycle};
}

TEST(DramModel, OneBurstCostsLatencyPlusTransfer) {
  auto dram = make(4);
  const auto done = dram.access(read(0, 64, 5));
  EXPECT_EQ(done.bursts, 1u);
  EXPECT_EQ(done.first_data_cycle, 15u);  // 5 + 10
  EXPECT_EQ(done.completion_cycle, 31u);  // 15 + 64 / 4
  EXPECT_EQ(dram.burst_transfer_cycles_ceil(), 16u);
}

TEST(DramModel, BackToBackBurstsSerialiseOnTheBus) {
  auto dram = make(4);
  EXPECT_EQ(dram.access(read(0, 64)).completion_cycle, 26u);
  const auto second = dram.access(read(64, 64));
  EXPECT_EQ(second.first_data_cycle, 26u);  // latency hidden, waits for the bus
  EXPECT_EQ(second.completion_cycle, 42u);
}

TEST(DramModel, OneOutstandingRequestExposesLatencyPerBurst) {
  auto dram = make(1);
  // Four bursts, each issued only when the previous completed: 4 * (10 + 16).
  EXPECT_EQ(dram.access(read(0, 256)).completion_cycle, 104u);
}

TEST(DramModel, FourOutstandingRequestsHideLatency) {
  auto dram = make(4);
  // All four issued at 0; the bus streams from cycle 10: 10 + 4 * 16.
  EXPECT_EQ(dram.access(read(0, 256)).completion_cycle, 74u);
}

TEST(DramModel, TwoOutstandingWithLongLatencyStallsOnSlots) {
  auto dram = make(2, 40);
  // b0: issue 0, data 40..56; b1: issue 0, data 56..72; b2: issue 56 (b0 done), data 96..112;
  // b3: issue 72, data 112..128.
  EXPECT_EQ(dram.access(read(0, 256)).completion_cycle, 128u);
}

TEST(DramModel, UnalignedAccessSplitsIntoCoveringBursts) {
  auto dram = make(4);
  const auto done = dram.access(read(60, 8));  // bytes 60..67 straddle bursts 0 and 1
  EXPECT_EQ(done.bursts, 2u);
  EXPECT_EQ(done.completion_cycle, 42u);
  EXPECT_EQ(dram.counters().read_bytes(), 8u);  // requested bytes, not burst bytes
  EXPECT_EQ(dram.counters().bursts, 2u);
}

TEST(DramModel, FractionalBytesPerCycleIsExact) {
  // 1.5 GB/s at 390.625 MHz = 96/25 = 3.84 bytes per cycle; a 64-byte burst is 16 2/3 cycles.
  auto created = DramModel::create({1'500'000'000, 390'625'000, 0, 64, 8});
  ASSERT_TRUE(created.ok());
  auto dram = std::move(created).value();
  EXPECT_EQ(dram.bytes_per_cycle_numerator(), 96u);
  EXPECT_EQ(dram.bytes_per_cycle_denominator(), 25u);
  EXPECT_EQ(dram.access(read(0, 64)).completion_cycle, 17u);    // ceil(16.67)
  EXPECT_EQ(dram.access(read(64, 64)).completion_cycle, 34u);   // ceil(33.33)
  EXPECT_EQ(dram.access(read(128, 64)).completion_cycle, 50u);  // exactly 50, no drift
}

TEST(DramModel, IdleBusRestartsAtIssuePlusLatency) {
  auto dram = make(4);
  EXPECT_EQ(dram.access(read(0, 64)).completion_cycle, 26u);
  EXPECT_EQ(dram.access(read(0, 64, 100)).completion_cycle, 126u);
}

TEST(DramModel, CountersSplitByDirectionAndKind) {
  auto dram = make(4);
  dram.access(read(0, 100, 0, TrafficKind::kWeights));
  dram.access(read(0, 20, 0, TrafficKind::kInstructions));
  dram.access({0, 48, DramDirection::kWrite, TrafficKind::kOutputs, 0});
  const auto& c = dram.counters();
  EXPECT_EQ(c.read_bytes_by_kind[static_cast<int>(TrafficKind::kWeights)], 100u);
  EXPECT_EQ(c.read_bytes_by_kind[static_cast<int>(TrafficKind::kInstructions)], 20u);
  EXPECT_EQ(c.write_bytes_by_kind[static_cast<int>(TrafficKind::kOutputs)], 48u);
  EXPECT_EQ(c.read_bytes(), 120u);
  EXPECT_EQ(c.write_bytes(), 48u);
  EXPECT_EQ(c.total_bytes(), 168u);
  EXPECT_EQ(c.requests, 3u);
  EXPECT_EQ(c.bursts, 4u);  // 100 bytes from 0 = 2 bursts, 20 = 1, 48 = 1
}

TEST(DramModel, RejectsZeroParametersByName) {
  EXPECT_EQ(DramModel::create({0, 1, 0, 64, 1}).reason(), "dram.bandwidth must be > 0");
  EXPECT_EQ(DramModel::create({1, 1, 0, 0, 1}).reason(), "dram.burst_bytes must be > 0");
  EXPECT_EQ(DramModel::create({1, 1, 0, 64, 0}).reason(),
            "dram.max_outstanding_requests must be > 0");
}

// access() times a request in closed form when the slots cannot bind; it must equal the
// burst-by-burst definition on every request: random rates (fractional bytes per cycle),
// latencies, burst sizes and slot counts on both sides of the condition, random request sizes,
// alignments, directions and issue gaps (an idle bus, back to back, a backlog).
TEST(DramModel, ClosedFormEqualsBurstByBurstOnRandomTraffic) {
  std::mt19937_64 rng(5);
  int closed = 0, looped = 0;
  for (int config = 0; config < 60; ++config) {
    const DramParams params{100'000'000 + rng() % 20'000'000'000ull,
                            50'000'000 + rng() % 2'000'000'000ull, rng() % 200,
                            16ull << (rng() % 5), 1 + rng() % 24};
    auto fast = DramModel::create(params), reference = DramModel::create(params);
    ASSERT_TRUE(fast.ok() && reference.ok());
    (fast.value().slots_never_bind() ? closed : looped) += 1;
    std::uint64_t cycle = 0;
    for (int r = 0; r < 400; ++r) {
      const std::uint64_t gap = rng() % 4;
      cycle += gap == 0 ? 0 : gap == 1 ? rng() % 8 : rng() % 2000;
      const DramRequest request{rng() % (1u << 20), 1 + rng() % 6000,
                                rng() % 2 ? DramDirection::kRead : DramDirection::kWrite,
                                static_cast<TrafficKind>(rng() % kTrafficKindCount), cycle};
      const DramCompletion a = fast.value().access(request);
      const DramCompletion b = reference.value().access_burst_by_burst(request);
      ASSERT_EQ(a.first_data_cycle, b.first_data_cycle) << "config " << config << " request " << r;
      ASSERT_EQ(a.completion_cycle, b.completion_cycle) << "config " << config << " request " << r;
      ASSERT_EQ(a.bursts, b.bursts);
    }
    EXPECT_EQ(fast.value().counters().bursts, reference.value().counters().bursts);
    EXPECT_EQ(fast.value().counters().read_bytes_by_kind,
              reference.value().counters().read_bytes_by_kind);
    EXPECT_EQ(fast.value().counters().write_bytes_by_kind,
              reference.value().counters().write_bytes_by_kind);
  }
  EXPECT_GT(closed, 10);  // both sides of the condition were drawn
  EXPECT_GT(looped, 10);
}

// The condition by hand: 16 cycles per burst, latency 10: (N - 1) * 16 >= 12 from N = 2.
TEST(DramModel, SlotsNeverBindOnceNMinusOneBurstsCoverTheLatency) {
  EXPECT_FALSE(make(1).slots_never_bind());
  EXPECT_TRUE(make(2).slots_never_bind());
  EXPECT_FALSE(make(2, 15).slots_never_bind());  // 16 < 17
  EXPECT_TRUE(make(2, 14).slots_never_bind());   // 16 >= 16
}

}  // namespace
}  // namespace tessel::sim
