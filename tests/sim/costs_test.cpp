// The simulator's cost formulas (sim/core/costs) agree with isa/timing.hpp, written
// independently from docs/timing.md, over a sweep of instruction shapes; plus hand cases and
// the predecoder's engine of a word.
#include "sim/core/costs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "isa/timing.hpp"
#include "sim/core/predecoder.hpp"
#include "sim/simulator.hpp"

namespace tessel::sim {
namespace {

HwConfig micro_like(int rows, int cols, int lanes, int load_rows = 1) {
  HwConfig config;
  config.matrix = {rows, cols, 8, 8, 32, 4, 5};
  config.matrix.weight_load_rows = load_rows;
  config.vector.lanes = lanes;
  return config;
}

isa::timing::ComputeParams params_of(const HwConfig& c) {
  return {c.matrix.rows,         c.matrix.cols,  c.matrix.fill_cycles,
          c.matrix.drain_cycles, c.vector.lanes, c.matrix.weight_load_rows};
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
    const int rows = pick(1, 32), cols = pick(1, 32);
    const HwConfig config =
        micro_like(rows, cols, pick(1, 64), pick(0, 1) ? 1 : pick(1, std::max(rows, cols)));
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
    isa::Matmul matmul;
    matmul.m_size = static_cast<std::uint32_t>(pick(1, 300));
    matmul.n_size = static_cast<std::uint32_t>(pick(1, 300));
    matmul.k_size = static_cast<std::uint32_t>(pick(1, 300));
    matmul.transpose_b = pick(0, 1) == 1;
    ASSERT_EQ(fixed_cost_cycles(matmul, config),
              static_cast<std::uint64_t>(isa::timing::matmul_cycles(matmul, params_of(config))));
    ASSERT_EQ(mac_count(matmul, config),
              static_cast<std::uint64_t>(isa::timing::matmul_macs(matmul, params_of(config))));
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

// HwConfig::dram_sustained_bytes_per_cycle, the closed form `tessel config show` prints,
// against the DRAM model itself on every shipped config: after a first request of 4 x O bursts
// (the pipeline filling), a request of 100 x O more bursts, both issued at cycle 0, moves its
// bytes at that rate (to 0.1%: the completion cycles are whole).
TEST(SimCosts, the_dram_model_sustains_the_configs_derived_rate_on_every_shipped_config) {
  for (const char* name : {"npc19-deepfusion", "edge-small", "cloud-large", "vta-pynq"}) {
    SCOPED_TRACE(name);
    const HwConfig config =
        load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml");
    auto model = DramModel::create(dram_params(config));
    ASSERT_TRUE(model.ok()) << model.reason();
    const std::uint64_t slots = static_cast<std::uint64_t>(config.dram.max_outstanding_requests);
    const std::uint64_t burst = static_cast<std::uint64_t>(config.dram.burst_bytes);
    const std::uint64_t first = 4 * slots * burst, stream = 100 * slots * burst;
    const auto warm = model.value().access_burst_by_burst(
        {0, first, DramDirection::kRead, TrafficKind::kWeights, 0});
    const auto done = model.value().access_burst_by_burst(
        {first, stream, DramDirection::kRead, TrafficKind::kWeights, 0});
    const double achieved = static_cast<double>(stream) /
                            static_cast<double>(done.completion_cycle - warm.completion_cycle);
    EXPECT_NEAR(achieved / config.dram_sustained_bytes_per_cycle(), 1.0, 0.001);
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
  Predecoder predecoder(config, target);
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

// The decode cache against decoding every word: 3,000 distinct loads (more than the cache's
// 1,024 slots, so slots are overwritten and words collide) in and out of order, each several
// times, with words that do not decode (opcode 0) or that validate rejects (a scratchpad past
// the one there is; an SRAM box past its end) among them. Every record equals the uncached one
// field by field, whether it came from the cache or not, and most come from the cache.
TEST(SimPredecoder, cached_records_equal_decoding_every_word) {
  HwConfig config = micro_like(4, 4, 4);
  config.scratchpads = {{"unified", 4096, 1, 4, {DataKind::kActivations}}};
  isa::TargetInfo target;
  target.scratchpads.push_back({"unified", 4096, {isa::SramKind::kActivations}});
  target.matrix_rows = target.matrix_cols = 4;
  std::vector<isa::Word> words;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    isa::Load load;
    load.sp = i % 500 == 7 ? 1 : 0;  // scratchpad 1 does not exist: illegal
    load.sram_addr = i % 64 * 16;
    load.dram_addr = std::uint64_t{i} * 64;
    load.y_size = 1 + i % 3;
    load.x_size = 1 + i % 5;
    load.c_size = i % 700 == 9 ? 4000 : 1 + i % 16;  // 4000 bytes past sram_addr: out of bounds
    load.sram_stride_x = load.c_size;
    load.sram_stride_y = load.x_size * load.c_size;
    load.dram_stride_x = load.c_size;
    load.dram_stride_y = load.x_size * load.c_size + 3;
    load.push_next = i % 2 == 1;
    words.push_back(isa::encode(isa::Instruction{load}).value());
  }
  words.push_back(isa::Word{});  // opcode 0
  std::mt19937 rng(3);
  std::vector<std::size_t> order;
  for (int pass = 0; pass < 3; ++pass)
    for (std::size_t i = 0; i < words.size(); ++i) order.push_back(i);  // in order
  for (int n = 0; n < 6000; ++n) order.push_back(rng() % 40);           // a small set, shuffled
  Predecoder cached(config, target);
  const Predecoder fresh(config, target);
  int statuses[4] = {};
  for (const std::size_t i : order) {
    DecodedInstruction got, want;
    got.macs = 99;  // stale fields must not survive
    cached.decode(words[i], got);
    fresh.decode_uncached(words[i], want);
    ++statuses[static_cast<int>(want.status)];
    ASSERT_EQ(got.status, want.status) << i;
    if (want.status == DecodedInstruction::Status::kUndecodable) {
      EXPECT_EQ(got.macs, 0u) << i;  // a failed record carries nothing of an earlier one
      continue;
    }
    ASSERT_EQ(got.instruction, want.instruction) << i;
    EXPECT_EQ(got.engine, want.engine) << i;
    EXPECT_EQ(got.push_next, want.push_next) << i;
    EXPECT_EQ(got.fixed_cost_cycles, want.fixed_cost_cycles) << i;
    EXPECT_EQ(got.macs, want.macs) << i;
    EXPECT_EQ(got.dma.address, want.dma.address) << i;
    EXPECT_EQ(got.dma.row_stride_bytes, want.dma.row_stride_bytes) << i;
    EXPECT_EQ(got.dma.pixel_stride_bytes, want.dma.pixel_stride_bytes) << i;
    EXPECT_EQ(got.dma.run_bytes, want.dma.run_bytes) << i;
    EXPECT_EQ(got.dma.rows, want.dma.rows) << i;
    EXPECT_EQ(got.dma.pixels, want.dma.pixels) << i;
    ASSERT_EQ(got.sram_count, want.sram_count) << i;
    for (std::size_t k = 0; k < want.sram_count; ++k) {
      EXPECT_EQ(got.sram[k].read_bytes, want.sram[k].read_bytes) << i;
      EXPECT_EQ(got.sram[k].write_bytes, want.sram[k].write_bytes) << i;
    }
  }
  // Each kind of record was met; the shuffled small set and the later passes hit the cache.
  EXPECT_GT(statuses[static_cast<int>(DecodedInstruction::Status::kOk)], 0);
  EXPECT_GT(statuses[static_cast<int>(DecodedInstruction::Status::kUndecodable)], 0);
  EXPECT_GT(statuses[static_cast<int>(DecodedInstruction::Status::kIllegal)], 0);
  EXPECT_GT(statuses[static_cast<int>(DecodedInstruction::Status::kOutOfBounds)], 0);
  EXPECT_GE(cached.cache_hits(), 5000u);
  EXPECT_LT(cached.cache_hits(), order.size());
}

}  // namespace tessel::sim
