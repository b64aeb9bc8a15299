// The simulator's cost formulas (sim/core/costs) agree with isa/timing.hpp, written
// independently from docs/timing.md, over a sweep of instruction shapes; plus hand cases and
// the predecoder's engine of a word.
#include "sim/core/costs.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <utility>
#include <vector>

#include "isa/timing.hpp"
#include "sim/core/predecoder.hpp"

namespace tessel::sim {
namespace {

HwConfig micro_like(int rows, int cols, int lanes) {
  HwConfig config;
  config.matrix = {rows, cols, 8, 8, 32, 4, 5};
  config.vector.lanes = lanes;
  return config;
}

isa::timing::ComputeParams params_of(const HwConfig& c) {
  return {c.matrix.rows, c.matrix.cols, c.matrix.fill_cycles, c.matrix.drain_cycles,
          c.vector.lanes};
}

TEST(SimCosts, conv_tile_is_weight_load_plus_passes_plus_fill_and_drain) {
  const HwConfig config = micro_like(4, 4, 4);
  isa::Conv conv;
  conv.out_h = conv.out_w = 2;  // P = 4 = W: 4 + 1 * 4 + 4 + 5 (timing.md worked example, D=5)
  EXPECT_EQ(fixed_cost_cycles(conv, config), 17u);
  conv.kh = conv.kw = 3;
  conv.ic_blocks = 2;  // passes = 18: 4 + 18 * 4 + 9
  EXPECT_EQ(fixed_cost_cycles(conv, config), 85u);
  EXPECT_EQ(mac_count(conv, config), 4u * 18 * 16);
}

TEST(SimCosts, agree_with_isa_timing_over_random_shapes) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 2000; ++trial) {
    const HwConfig config = micro_like(pick(1, 32), pick(1, 32), pick(1, 64));
    isa::Conv conv;
    conv.out_h = static_cast<std::uint32_t>(pick(1, 40));
    conv.out_w = static_cast<std::uint32_t>(pick(1, 40));
    conv.kh = static_cast<std::uint32_t>(pick(1, 7));
    conv.kw = static_cast<std::uint32_t>(pick(1, 7));
    conv.oc_blocks = static_cast<std::uint32_t>(pick(1, 8));
    conv.depthwise = pick(0, 1) == 1;
    conv.ic_blocks = conv.depthwise ? 1 : static_cast<std::uint32_t>(pick(1, 8));
    ASSERT_EQ(fixed_cost_cycles(conv, config),
              static_cast<std::uint64_t>(isa::timing::conv_cycles(conv, params_of(config))));
    ASSERT_EQ(mac_count(conv, config),
              static_cast<std::uint64_t>(isa::timing::conv_macs(conv, params_of(config))));
    isa::Pool pool;
    pool.out_h = static_cast<std::uint32_t>(pick(1, 20));
    pool.out_w = static_cast<std::uint32_t>(pick(1, 20));
    pool.kh = static_cast<std::uint32_t>(pick(1, 5));
    pool.kw = static_cast<std::uint32_t>(pick(1, 5));
    pool.c_size = static_cast<std::uint32_t>(pick(1, 300));
    ASSERT_EQ(fixed_cost_cycles(pool, config),
              static_cast<std::uint64_t>(isa::timing::compute_cycles(pool, params_of(config))));
    isa::Requant rq;
    rq.y_size = static_cast<std::uint32_t>(pick(1, 20));
    rq.x_size = static_cast<std::uint32_t>(pick(1, 20));
    rq.c_size = static_cast<std::uint32_t>(pick(1, 300));
    ASSERT_EQ(fixed_cost_cycles(rq, config),
              static_cast<std::uint64_t>(isa::timing::compute_cycles(rq, params_of(config))));
    isa::Load load;
    load.elem = static_cast<isa::Elem>(pick(0, 2));
    load.dram_addr = static_cast<std::uint64_t>(pick(0, 4096));
    load.y_size = static_cast<std::uint32_t>(pick(1, 6));
    load.x_size = static_cast<std::uint32_t>(pick(1, 6));
    load.c_size = static_cast<std::uint32_t>(pick(1, 64));
    load.dram_stride_x = static_cast<std::uint32_t>(pick(0, 1) ? load.c_size : pick(0, 100));
    load.dram_stride_y = static_cast<std::uint32_t>(
        pick(0, 1) ? load.x_size * load.dram_stride_x : static_cast<std::uint32_t>(pick(0, 500)));
    const auto mine = dma_requests(load, 0);
    const auto theirs = isa::timing::dma_requests(load);
    ASSERT_EQ(mine.size(), theirs.size());
    for (std::size_t i = 0; i < mine.size(); ++i) {
      ASSERT_EQ(mine[i].address, theirs[i].address);
      ASSERT_EQ(mine[i].bytes, theirs[i].bytes);
    }
  }
}

TEST(SimCosts, contiguous_rows_merge_into_one_request_strided_ones_do_not) {
  isa::Load load;
  load.y_size = 2;
  load.x_size = 4;
  load.c_size = 4;
  load.dram_stride_x = 4;
  load.dram_stride_y = 16;  // dense: one 32-byte run
  EXPECT_EQ(dma_requests(load, 0).size(), 1u);
  load.dram_stride_y = 32;  // rows 32 bytes apart: two 16-byte runs
  const auto runs = dma_requests(load, 0);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].address, 32u);
  EXPECT_EQ(runs[1].bytes, 16u);
}

}  // namespace
TEST(SimCosts, buffer_overload_clears_the_buffer_and_gives_the_same_runs) {
  isa::Load load;
  load.y_size = 2;
  load.x_size = 4;
  load.c_size = 4;
  load.dram_stride_x = 4;
  load.dram_stride_y = 32;
  std::vector<DramRequest> buffer{{7, 7, DramDirection::kWrite, TrafficKind::kOutputs, 9}};
  dma_requests(load, 5, buffer);
  ASSERT_EQ(buffer.size(), 2u);
  EXPECT_EQ(buffer[0].address, 0u);
  EXPECT_EQ(buffer[0].bytes, 16u);
  EXPECT_EQ(buffer[1].address, 32u);
  EXPECT_EQ(buffer[1].issue_cycle, 5u);
  EXPECT_EQ(buffer[1].direction, DramDirection::kRead);
  dma_requests(isa::Instruction{isa::Finish{}}, 5, buffer);
  EXPECT_TRUE(buffer.empty());
}

TEST(SimCosts, dma_walk_ends_at_its_last_run_and_overlapping_strides_stay_in_walk_order) {
  isa::Store store;
  store.elem = isa::Elem::kI16;
  store.dram_addr = 100;
  store.y_size = 3;
  store.x_size = 2;
  store.c_size = 5;         // 10-byte runs
  store.dram_stride_x = 4;  // pixels 8 bytes apart: each run overlaps the next
  store.dram_stride_y = 1;  // rows 2 bytes apart
  const DmaWalk walk = dma_walk(store);
  EXPECT_EQ(walk.direction, DramDirection::kWrite);
  EXPECT_EQ(walk.run_bytes, 10u);
  // Last run: 100 + 2 * 2 + 1 * 8 = 112, ends at 122; every other run ends lower.
  EXPECT_EQ(walk.end_address(), 122u);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  walk.for_each_request(3, [&](const DramRequest& r) {
    EXPECT_EQ(r.issue_cycle, 3u);
    runs.emplace_back(r.address, r.bytes);
  });
  // No run starts where the previous one ends, so none merge: y, then x.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want{{100, 10}, {108, 10}, {102, 10},
                                                                  {110, 10}, {104, 10}, {112, 10}};
  EXPECT_EQ(runs, want);
  EXPECT_EQ(dma_walk(isa::Instruction{isa::Conv{}}).rows, 0u);  // no DMA
}

TEST(SimCosts, sram_traffic_into_a_fixed_array_counts_all_and_writes_what_fits) {
  const HwConfig config = micro_like(4, 4, 4);
  isa::Conv conv;
  conv.init = isa::Init::kBias;  // input, weights, bias, accumulators: 4 entries
  const auto listed = sram_traffic(isa::Instruction{conv}, config);
  std::array<SramTraffic, 4> all{};
  ASSERT_EQ(sram_traffic(isa::Instruction{conv}, config, all), 4u);
  std::array<SramTraffic, 2> two{};
  EXPECT_EQ(sram_traffic(isa::Instruction{conv}, config, two), 4u);
  ASSERT_EQ(listed.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(all[i].read_bytes, listed[i].read_bytes) << i;
    EXPECT_EQ(all[i].write_bytes, listed[i].write_bytes) << i;
  }
  EXPECT_EQ(two[1].read_bytes, listed[1].read_bytes);
  EXPECT_EQ(listed[2].read_bytes, 16u);  // the bias: 4 int32
}

TEST(SimPredecoder, a_word_names_its_engine_by_opcode_or_by_a_nops_engine_field) {
  const HwConfig config = micro_like(4, 4, 4);
  const isa::TargetInfo target;
  const Predecoder predecoder(config, target);
  auto word = [](const isa::Instruction& x) { return isa::encode(x).value(); };
  isa::Nop nop;
  nop.engine = isa::Engine::kStore;
  EXPECT_EQ(predecoder.engine_of(word(nop)), 2u);
  nop.engine = isa::Engine::kCompute;
  EXPECT_EQ(predecoder.engine_of(word(nop)), 1u);
  EXPECT_EQ(predecoder.engine_of(word(isa::Store{})), 2u);
  EXPECT_EQ(predecoder.engine_of(word(isa::Conv{})), 1u);
  EXPECT_EQ(predecoder.engine_of(word(isa::Load{})), 0u);
  EXPECT_EQ(predecoder.engine_of(isa::Word{}), 0u);  // opcode 0: no instruction
  DecodedInstruction decoded;
  predecoder.decode(word(nop), decoded);
  EXPECT_EQ(decoded.engine, 1u);
  predecoder.decode(isa::Word{}, decoded);
  EXPECT_EQ(decoded.status, DecodedInstruction::Status::kUndecodable);
  EXPECT_EQ(predecoder.fault_message(isa::Word{}, decoded), "unknown opcode 0x00");
}

}  // namespace tessel::sim
