// The datapath on its own thread (DatapathWorker, `--threads 2`) leaves DRAM and the
// scratchpads exactly as the same instructions executed in order on the calling thread do.
#include "sim/core/datapath_worker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "sim/core/amx_conv.hpp"
#include "sim/core/datapath.hpp"

namespace tessel::sim::datapath_worker_test {
namespace {

constexpr std::uint32_t kScratchpadBytes = 1 << 17;
constexpr std::uint32_t kDramBytes = 1 << 16;
/// DRAM's first bytes hold requantize table entries (M, r) at every 8-byte boundary.
constexpr std::uint32_t kTableBytes = 4096;

/// Random DRAM bytes, but for valid requantize table entries in the first kTableBytes (stores
/// go to the upper half: they stay).
std::vector<std::uint8_t> random_dram(std::mt19937& rng) {
  std::vector<std::uint8_t> dram(kDramBytes);
  for (auto& b : dram) b = static_cast<std::uint8_t>(rng() >> 24);
  for (std::uint32_t at = 0; at < kTableBytes; at += 8) {
    write_element(dram.data() + at, 4, static_cast<std::int32_t>(rng() >> 1));  // M < 2^31
    write_element(dram.data() + at + 4, 4, static_cast<std::int32_t>(32 + rng() % 31));
  }
  return dram;
}

HwConfig small_config() {
  HwConfig config;
  config.matrix = {4, 4, 8, 8, 32, 4, 4};
  config.vector.lanes = 4;
  config.scratchpads = {
      {"unified",
       kScratchpadBytes,
       1,
       4,
       {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators, DataKind::kOutputs}}};
  return config;
}

/// `count` random small instructions over the whole scratchpad and DRAM (loads, stores, copies,
/// adds, requantizes, max pools, 1x1 convs, half of them over the last loaded weights;
/// operands may overlap one another), after loads that fill the scratchpad.
std::vector<isa::Instruction> random_program(std::mt19937& rng, int count) {
  const auto below = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  std::vector<isa::Instruction> out;
  for (std::uint32_t at = 0; at < kScratchpadBytes; at += kDramBytes) {
    isa::Load fill;
    fill.sram_addr = at;
    fill.y_size = kDramBytes / 1024;
    fill.c_size = fill.dram_stride_x = fill.sram_stride_x = 1024;
    fill.dram_stride_y = fill.sram_stride_y = 1024;
    out.push_back(fill);
  }
  isa::Vcfg vcfg;
  vcfg.mult_a = 1518500250u;
  vcfg.mult_b = 1073741824u;
  vcfg.shift = 37;
  vcfg.lo = -128;
  vcfg.hi = 127;
  out.push_back(vcfg);
  std::uint32_t last_weights = 0;  // scratchpad address of the last weights load
  for (int i = 0; i < count; ++i) {
    switch (i % 7) {
      case 0: {
        isa::Load x;  // 4 rows of 64 bytes, weights or activations
        x.kind = i % 2 ? isa::Traffic::kWeights : isa::Traffic::kActivations;
        x.dram_addr = below(kDramBytes - 256);
        x.sram_addr = below(kScratchpadBytes - 256);
        x.y_size = 4;
        x.c_size = x.dram_stride_x = x.sram_stride_x = 64;
        x.dram_stride_y = x.sram_stride_y = 64;
        if (x.kind == isa::Traffic::kWeights) last_weights = x.sram_addr;
        out.push_back(x);
        break;
      }
      case 1: {
        isa::Store x;  // to the upper half of DRAM: loads from the lower half stay copies
        x.sram_addr = below(kScratchpadBytes - 128);
        x.dram_addr = kDramBytes / 2 + below(kDramBytes / 2 - 128);
        x.c_size = x.dram_stride_x = x.sram_stride_x = 128;
        out.push_back(x);
        break;
      }
      case 2: {
        isa::Copy x;  // 4 x 4 x 8, pixels apart in the destination
        x.src_addr = below(kScratchpadBytes - 256);
        x.dst_addr = below(kScratchpadBytes - 256);
        x.y_size = x.x_size = 4;
        x.c_size = x.src_stride_x = 8;
        x.dst_stride_x = 12;
        x.src_stride_y = 32;
        x.dst_stride_y = 48;
        out.push_back(x);
        break;
      }
      case 3: {
        isa::Add x;  // 2 x 4 x 16
        x.a_addr = below(kScratchpadBytes - 256);
        x.b_addr = below(kScratchpadBytes - 256);
        x.dst_addr = below(kScratchpadBytes - 256);
        x.y_size = 2;
        x.x_size = 4;
        x.c_size = x.a_stride_x = x.b_stride_x = x.dst_stride_x = 16;
        x.a_stride_y = x.b_stride_y = x.dst_stride_y = 64;
        out.push_back(x);
        break;
      }
      case 4: {
        // Half of them with a table (docs/isa.md: valid entries only), loaded just before
        // from DRAM's table area: a weights load of 128 bytes, of which it reads 64.
        isa::Requant x;  // 2 x 3 x 8, pixels apart in the source
        x.per_channel = i % 2 != 0;
        if (x.per_channel) {
          isa::Load table;
          table.kind = isa::Traffic::kWeights;
          table.dram_addr = below(kTableBytes - 128) & ~7u;
          table.sram_addr = below(kScratchpadBytes - 128);
          table.c_size = table.dram_stride_x = table.sram_stride_x = 128;
          out.push_back(table);
          x.param_addr = table.sram_addr + below(2) * 64;
        }
        x.src_addr = below(kScratchpadBytes - 512);
        x.dst_addr = below(kScratchpadBytes - 64);
        x.y_size = 2;
        x.x_size = 3;
        x.c_size = x.dst_stride_x = 8;
        x.src_stride_x = 12;
        x.src_stride_y = 40;
        x.dst_stride_y = 24;
        out.push_back(x);
        break;
      }
      case 5: {
        isa::Pool x;  // max 2 x 2, stride 2, 3 x 3 out, 8 channels, pixels apart in the source
        // Its source spans 6 rows of 64 bytes: over the last weights where they fit.
        x.src_addr =
            i % 2 ? std::min(last_weights, kScratchpadBytes - 512) : below(kScratchpadBytes - 512);
        x.dst_addr = below(kScratchpadBytes - 128);
        x.out_h = x.out_w = 3;
        x.c_size = 8;
        x.kh = x.kw = x.stride_h = x.stride_w = 2;
        x.src_stride_x = 10;
        x.src_stride_y = 64;
        x.dst_stride_x = 8;
        x.dst_stride_y = 24;
        out.push_back(x);
        break;
      }
      default: {
        isa::Conv x;  // 1x1, 8 -> 8 channels, 2 x 3 pixels, every init
        x.init = static_cast<isa::Init>(i % 3);
        x.kh = x.kw = 1;
        x.ic_blocks = x.oc_blocks = 2;
        x.out_h = 2;
        x.out_w = 3;
        x.in_addr = below(kScratchpadBytes - 64);
        x.in_stride_x = 8;
        x.in_stride_y = 24;
        // Half of them on loaded weights (a copy of DRAM bytes: packed ahead by the
        // worker's caller, unless a store wrote those DRAM bytes or a write hit the copy).
        x.w_addr = i % 2 ? last_weights + below(4) * 64 : below(kScratchpadBytes - 64);
        x.bias_addr = below(kScratchpadBytes - 32);
        x.acc_addr = below(kScratchpadBytes - 256);
        x.acc_stride_x = 8;
        x.acc_stride_y = 24;
        out.push_back(x);
      }
    }
  }
  return out;
}

// 6000 instructions (the queue of 1024 wraps, and the caller waits for room), with pauses
// that put the worker to sleep between some of them: the same bytes as one thread.
TEST(SimDatapathWorker, equals_the_datapath_on_the_calling_thread) {
  std::mt19937 rng(99);
  const HwConfig config = small_config();
  const std::vector<isa::Instruction> program = random_program(rng, 6000);
  for (const auto& instruction : program) {
    const Status status = isa::check(instruction);
    ASSERT_TRUE(status.ok()) << status.reason();
  }
  const std::vector<std::uint8_t> dram = random_dram(rng);
  std::vector<std::uint8_t> dram_one = dram, dram_two = dram;
  Datapath one(config, dram_one);
  std::vector<sim::ScratchpadBytes> two_scratchpads;
  {
    DatapathWorker two(config, dram_two, 1);
    for (std::size_t i = 0; i < program.size(); ++i) {
      one.execute(program[i]);
      two.execute(program[i]);
      if (i % 2000 == 1999) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    two_scratchpads = two.take_scratchpads();
    // Without AMX (its tiles are packed on the worker) the caller packs loaded weights ahead,
    // and the datapath defers the weight loads, copying only some of their bytes.
    if (!kernels::amx::available()) {
      EXPECT_GT(two.prepacked_convs(), 100u);
      const Datapath& datapath = two.datapath();
      EXPECT_GT(datapath.deferred_weight_bytes(), 100000u);
      EXPECT_GT(datapath.settled_weight_bytes(), 0u);
      EXPECT_LT(datapath.settled_weight_bytes(), datapath.deferred_weight_bytes());
    }
  }
  const auto one_scratchpads = one.take_scratchpads();
  ASSERT_EQ(one_scratchpads.size(), two_scratchpads.size());
  EXPECT_TRUE(one_scratchpads[0] == two_scratchpads[0]);
  EXPECT_TRUE(dram_one == dram_two);
  EXPECT_FALSE(dram_one == dram) << "the program must change DRAM";
}

// A worker dropped without take_scratchpads still runs every queued instruction before it
// goes (its DRAM is complete when the destructor returns).
TEST(SimDatapathWorker, destructor_finishes_the_queue) {
  std::mt19937 rng(7);
  const HwConfig config = small_config();
  const std::vector<isa::Instruction> program = random_program(rng, 3000);
  const std::vector<std::uint8_t> dram = random_dram(rng);
  std::vector<std::uint8_t> dram_one = dram, dram_two = dram;
  Datapath one(config, dram_one);
  {
    DatapathWorker two(config, dram_two, 2);  // with the split helper too (threads 3)
    for (const auto& instruction : program) {
      one.execute(instruction);
      two.execute(instruction);
    }
  }
  EXPECT_TRUE(dram_one == dram_two);
}

}  // namespace
}  // namespace tessel::sim::datapath_worker_test
