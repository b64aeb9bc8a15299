// The datapath's vectorised conv equals the loop-by-loop transcription of docs/isa.md bit for
// bit (random shapes, both element widths, every init mode), plus hand-computed cases; pool
// equals the same transcription of its loops.
#include "sim/core/datapath.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "support/int_ops.hpp"

namespace tessel::sim {
namespace {

constexpr std::int64_t kScratchpadBytes = 1 << 17;

HwConfig matrix_config(int rows, int cols, int bits) {
  HwConfig config;
  config.matrix = {rows, cols, bits, bits, 32, rows, cols};
  config.vector.lanes = cols;
  config.scratchpads = {
      {"unified",
       kScratchpadBytes,
       1,
       4,
       {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators, DataKind::kOutputs}}};
  return config;
}

std::int32_t int32_at(std::span<const std::uint8_t> bytes, std::uint64_t address) {
  return read_element(bytes.data() + address, 4);
}

// Input channel 0 of a 2x2 image holds 1, 2, 3, 4 (i8, four channels per pixel). Output column 0
// sums the whole 3x3 window (weights 1 on input channel 0), column 1 doubles the centre tap;
// with pad 1 every window covers the four stored pixels.
TEST(SimDatapath, conv_3x3_padded_on_a_2x2_image_is_hand_computed) {
  const HwConfig config = matrix_config(4, 4, 8);
  for (const bool reference : {false, true}) {
    std::vector<std::uint8_t> dram;
    Datapath datapath(config, dram, reference);
    std::span<std::uint8_t> sp = datapath.scratchpad(0);
    const std::uint32_t in_addr = 0, w_addr = 0x100, bias_addr = 0x400, acc_addr = 0x800;
    for (int p = 0; p < 4; ++p) sp[in_addr + p * 4] = static_cast<std::uint8_t>(p + 1);
    // Block [ky][kx][r][c]: row r = input channel, column c = output channel.
    for (int tap = 0; tap < 9; ++tap) {
      sp[w_addr + tap * 16 + 0 * 4 + 0] = 1;
      if (tap == 4) sp[w_addr + tap * 16 + 0 * 4 + 1] = 2;
    }
    write_element(sp.data() + bias_addr, 4, 100);
    write_element(sp.data() + bias_addr + 8, 4, -7);  // output channel 2: bias only
    isa::Conv conv;
    conv.in_addr = in_addr;
    conv.w_addr = w_addr;
    conv.bias_addr = bias_addr;
    conv.acc_addr = acc_addr;
    conv.init = isa::Init::kBias;
    conv.out_h = conv.out_w = 2;
    conv.kh = conv.kw = 3;
    conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = 1;
    conv.in_stride_y = 8;
    conv.in_stride_x = 4;
    conv.acc_stride_y = 8;
    conv.acc_stride_x = 4;
    datapath.execute(conv);
    for (int p = 0; p < 4; ++p) {
      const std::uint64_t pixel = acc_addr + p * 16;
      EXPECT_EQ(int32_at(sp, pixel + 0), 110) << "pixel " << p << " reference " << reference;
      EXPECT_EQ(int32_at(sp, pixel + 4), 2 * (p + 1)) << "pixel " << p;
      EXPECT_EQ(int32_at(sp, pixel + 8), -7) << "pixel " << p;
      EXPECT_EQ(int32_at(sp, pixel + 12), 0) << "pixel " << p;
    }
  }
}

// docs/isa.md writes output channel o before it reads the inputs of o + 1. With the
// accumulators over the input, channel 0's int32 result (4) zeroes input bytes 1-3, so the
// identity columns 1-3 then read 0. The fast loop would read 1s; the datapath must not use it.
TEST(SimDatapath, conv_whose_accumulators_overlap_its_input_follows_the_documented_order) {
  const HwConfig config = matrix_config(4, 4, 8);
  std::vector<std::uint8_t> dram;
  Datapath datapath(config, dram);
  std::span<std::uint8_t> sp = datapath.scratchpad(0);
  for (int i = 0; i < 4; ++i) sp[i] = 1;
  const std::uint32_t w_addr = 0x100;
  for (int r = 0; r < 4; ++r) sp[w_addr + r * 4 + 0] = 1;  // column 0: sum of all
  for (int c = 1; c < 4; ++c) sp[w_addr + c * 4 + c] = 1;  // column c: input c
  isa::Conv conv;
  conv.w_addr = w_addr;
  conv.in_stride_y = conv.in_stride_x = 4;
  conv.acc_stride_y = conv.acc_stride_x = 4;
  datapath.execute(conv);
  EXPECT_EQ(int32_at(sp, 0), 4);
  EXPECT_EQ(int32_at(sp, 4), 0);
  EXPECT_EQ(int32_at(sp, 8), 0);
  EXPECT_EQ(int32_at(sp, 12), 0);
}

// int32 sums wrap around (docs/isa.md): 4 products of (-32768)^2 = 2^32 -> 0, plus bias 5.
TEST(SimDatapath, conv_sums_wrap_around_in_int32) {
  const HwConfig config = matrix_config(4, 4, 16);
  for (const bool reference : {false, true}) {
    std::vector<std::uint8_t> dram;
    Datapath datapath(config, dram, reference);
    std::span<std::uint8_t> sp = datapath.scratchpad(0);
    const std::uint32_t w_addr = 0x100, bias_addr = 0x200, acc_addr = 0x400;
    for (int r = 0; r < 4; ++r) {
      write_element(sp.data() + r * 2, 2, -32768);
      write_element(sp.data() + w_addr + (r * 4) * 2, 2, -32768);
    }
    write_element(sp.data() + bias_addr, 4, 5);
    isa::Conv conv;
    conv.elem = isa::Elem::kI16;
    conv.w_addr = w_addr;
    conv.bias_addr = bias_addr;
    conv.acc_addr = acc_addr;
    conv.init = isa::Init::kBias;
    conv.in_stride_y = conv.in_stride_x = 4;
    conv.acc_stride_y = conv.acc_stride_x = 4;
    datapath.execute(conv);
    EXPECT_EQ(int32_at(sp, acc_addr), 5) << "reference " << reference;
  }
}

// The input shift rounds every input element half away from zero before the products
// (docs/isa.md, conv): codes 24, -40, 8, -8 with in_shift 4 are 2, -3, 1, -1 (1.5, -2.5, 0.5,
// -0.5 away from 0). Dense: column 0 sums them (-1), column 1 triples input 0 (6). Depthwise:
// channel c is rha(x_c) * (c + 1): 2, -6, 3, -4. Both loops, both widths.
TEST(SimDatapath, conv_input_shift_rounds_each_input_half_away_by_hand) {
  const std::int32_t x[4] = {24, -40, 8, -8};
  for (const int bits : {8, 16}) {
    const HwConfig config = matrix_config(4, 4, bits);
    const int e = bits / 8;
    for (const bool reference : {false, true}) {
      for (const bool depthwise : {false, true}) {
        std::vector<std::uint8_t> dram;
        Datapath datapath(config, dram, reference);
        std::span<std::uint8_t> sp = datapath.scratchpad(0);
        const std::uint32_t w_addr = 0x100, acc_addr = 0x400;
        for (int i = 0; i < 4; ++i) write_element(sp.data() + i * e, e, x[i]);
        if (depthwise) {
          for (int c = 0; c < 4; ++c) write_element(sp.data() + w_addr + c * e, e, c + 1);
        } else {
          for (int r = 0; r < 4; ++r) write_element(sp.data() + w_addr + (r * 4) * e, e, 1);
          write_element(sp.data() + w_addr + 1 * e, e, 3);  // row 0 (input 0), column 1
        }
        isa::Conv conv;
        conv.elem = bits == 8 ? isa::Elem::kI8 : isa::Elem::kI16;
        conv.depthwise = depthwise;
        conv.in_shift = 4;
        conv.w_addr = w_addr;
        conv.acc_addr = acc_addr;
        conv.in_stride_y = conv.in_stride_x = 4;
        conv.acc_stride_y = conv.acc_stride_x = 4;
        datapath.execute(conv);
        const std::vector<std::int32_t> expected = depthwise
                                                       ? std::vector<std::int32_t>{2, -6, 3, -4}
                                                       : std::vector<std::int32_t>{-1, 6, 0, 0};
        for (int c = 0; c < 4; ++c)
          EXPECT_EQ(int32_at(sp, acc_addr + c * 4), expected[c])
              << "channel " << c << " i" << bits << (reference ? " reference" : " fast")
              << (depthwise ? " depthwise" : " dense");
      }
    }
  }
}

/// A random conv whose operands lie apart in one scratchpad (so the fast loop applies).
isa::Conv random_conv(std::mt19937& rng, const HwConfig& config, bool depthwise) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  isa::Conv conv;
  conv.elem = config.matrix.input_bits == 8 ? isa::Elem::kI8 : isa::Elem::kI16;
  conv.depthwise = depthwise;
  conv.init = static_cast<isa::Init>(pick(0, 2));
  conv.kh = static_cast<std::uint32_t>(pick(1, 3));
  conv.kw = static_cast<std::uint32_t>(pick(1, 3));
  conv.stride_h = static_cast<std::uint32_t>(pick(1, 2));
  conv.stride_w = static_cast<std::uint32_t>(pick(1, 2));
  conv.dil_h = static_cast<std::uint32_t>(pick(1, 2));
  conv.dil_w = static_cast<std::uint32_t>(pick(1, 2));
  conv.out_h = static_cast<std::uint32_t>(pick(1, 5));
  conv.out_w = static_cast<std::uint32_t>(pick(1, 5));
  conv.ic_blocks = depthwise ? 1 : static_cast<std::uint32_t>(pick(1, 3));
  conv.oc_blocks = static_cast<std::uint32_t>(pick(1, 3));
  // Pads keep at least one stored row and column.
  const int span_h =
      static_cast<int>((conv.out_h - 1) * conv.stride_h + (conv.kh - 1) * conv.dil_h);
  const int span_w =
      static_cast<int>((conv.out_w - 1) * conv.stride_w + (conv.kw - 1) * conv.dil_w);
  conv.pad_top = static_cast<std::uint32_t>(pick(0, std::min(2, span_h)));
  conv.pad_bottom =
      static_cast<std::uint32_t>(pick(0, std::min(2, span_h - static_cast<int>(conv.pad_top))));
  conv.pad_left = static_cast<std::uint32_t>(pick(0, std::min(2, span_w)));
  conv.pad_right =
      static_cast<std::uint32_t>(pick(0, std::min(2, span_w - static_cast<int>(conv.pad_left))));
  const std::uint32_t in_h =
      static_cast<std::uint32_t>(span_h + 1) - conv.pad_top - conv.pad_bottom;
  const std::uint32_t in_w =
      static_cast<std::uint32_t>(span_w + 1) - conv.pad_left - conv.pad_right;
  const std::uint32_t channels =
      depthwise ? conv.oc_blocks * config.matrix.cols : conv.ic_blocks * config.matrix.rows;
  const std::uint32_t out_channels = conv.oc_blocks * config.matrix.cols;
  conv.in_stride_x = channels + static_cast<std::uint32_t>(pick(0, 3));
  conv.in_stride_y = in_w * conv.in_stride_x + static_cast<std::uint32_t>(pick(0, 5));
  conv.acc_stride_x = out_channels + static_cast<std::uint32_t>(pick(0, 2));
  conv.acc_stride_y = conv.out_w * conv.acc_stride_x + static_cast<std::uint32_t>(pick(0, 3));
  const std::uint32_t in_bytes =
      in_h * conv.in_stride_y * static_cast<std::uint32_t>(config.matrix.input_bits / 8);
  conv.in_addr = static_cast<std::uint32_t>(pick(0, 7));
  conv.w_addr = (conv.in_addr + in_bytes + 64) & ~1u;
  const std::uint32_t weight_bytes =
      (depthwise ? out_channels * conv.kh * conv.kw
                 : conv.ic_blocks * config.matrix.rows * out_channels * conv.kh * conv.kw) *
      static_cast<std::uint32_t>(config.matrix.weight_bits / 8);
  conv.bias_addr = conv.w_addr + weight_bytes + 4 * static_cast<std::uint32_t>(pick(0, 3));
  conv.acc_addr = conv.bias_addr + out_channels * 4 + 4 * static_cast<std::uint32_t>(pick(0, 3));
  // The input shift on a third of the convs (docs/isa.md: up to bits - 2).
  if (pick(0, 2) == 0)
    conv.in_shift = static_cast<std::uint32_t>(pick(1, config.matrix.input_bits - 2));
  return conv;
}

// Deferred weight loads (the datapath thread's, docs/sim.md "The datapath thread") by hand,
// beside a datapath that copies at once. DRAM byte i holds i % 251 + 1, but for a requantize
// table of 8 channels at 4288 (valid entries: others are outside the ISA). A 256-byte weights load
// to 0-255 (from DRAM 4096) is deferred; a requantize reading its table at 192-255 (8
// channels, 8 bytes each) copies those 64 bytes alone; a 64-byte weights load to 64-127 cuts
// the first one into 0-63 and 128-191; a store to DRAM 4224-4287, the source of 128-191, copies
// those first; an activations load is not deferred; a weights load to 64-127 again drops the
// second one, never copied; reading the scratchpad out copies 0-63 and the third load.
// Deferred 256 + 64 + 64 = 384 bytes, copied 64 + 64 + 64 + 64 = 256.
TEST(SimDatapath, deferred_weight_loads_copy_only_the_bytes_read_by_hand) {
  const HwConfig config = matrix_config(4, 4, 8);
  std::vector<std::uint8_t> dram(8192);
  for (std::size_t i = 0; i < dram.size(); ++i) dram[i] = static_cast<std::uint8_t>(i % 251 + 1);
  for (std::uint64_t c = 0; c < 8; ++c) {  // the table: M = 2^30 + c, r = 40 (docs/isa.md)
    write_element(dram.data() + 4096 + 192 + 8 * c, 4, (1 << 30) + static_cast<int>(c));
    write_element(dram.data() + 4096 + 192 + 8 * c + 4, 4, 40);
  }
  const std::vector<std::uint8_t> original = dram;
  std::vector<std::uint8_t> dram_now = dram;
  Datapath later(config, dram), now(config, dram_now);
  later.defer_weight_loads();
  const auto load = [](std::uint32_t sram, std::uint64_t from, std::uint32_t bytes,
                       isa::Traffic kind) {
    isa::Load x;
    x.kind = kind;
    x.sram_addr = sram;
    x.dram_addr = from;
    x.c_size = x.sram_stride_x = x.dram_stride_x = bytes;
    return isa::Instruction{x};
  };
  isa::Requant requant;
  requant.per_channel = true;
  requant.param_addr = 192;
  requant.src_addr = 1024;
  requant.dst_addr = 2048;
  requant.c_size = requant.src_stride_x = requant.dst_stride_x = 8;
  isa::Store store;
  store.sram_addr = 3000;
  store.dram_addr = 4224;
  store.c_size = store.sram_stride_x = store.dram_stride_x = 64;
  const std::vector<isa::Instruction> program = {
      load(0, 4096, 256, isa::Traffic::kWeights),      requant,
      load(64, 6000, 64, isa::Traffic::kWeights),      store,
      load(512, 7000, 64, isa::Traffic::kActivations), load(64, 6100, 64, isa::Traffic::kWeights)};
  const std::uint64_t settled_after[] = {0, 64, 64, 128, 128, 128};
  for (std::size_t i = 0; i < program.size(); ++i) {
    ASSERT_TRUE(isa::check(program[i]).ok()) << i;
    later.execute(program[i]);
    now.execute(program[i]);
    EXPECT_EQ(later.settled_weight_bytes(), settled_after[i]) << "after instruction " << i;
  }
  EXPECT_EQ(later.deferred_weight_bytes(), 384u);
  const std::span<std::uint8_t> later_sp = later.scratchpad(0), now_sp = now.scratchpad(0);
  EXPECT_EQ(later.settled_weight_bytes(), 256u);
  EXPECT_TRUE(std::equal(later_sp.begin(), later_sp.end(), now_sp.begin()));
  EXPECT_EQ(later_sp[200], original[4096 + 200]);  // the table
  EXPECT_EQ(later_sp[64], original[6100]);         // the last load
  EXPECT_EQ(later_sp[130], original[4096 + 130]);  // copied before the store overwrote its source
  EXPECT_NE(dram[4096 + 130], original[4096 + 130]) << "the store must change the source";
  EXPECT_TRUE(dram == dram_now);
}

TEST(SimDatapath, vectorised_conv_equals_the_reference_loop_over_random_shapes) {
  std::mt19937 rng(2024);
  const std::vector<std::tuple<int, int, int>> shapes = {
      {4, 4, 8},
      {8, 8, 8},
      {16, 16, 16},
      {4, 8, 16},
      {8, 4, 8},
      // Output blocks wider than the AVX2 path's column blocks of 16, and straddling them.
      {4, 32, 16},
      {2, 24, 8}};  // rows, cols, bits
  for (const auto& [rows, cols, bits] : shapes) {
    const HwConfig config = matrix_config(rows, cols, bits);
    for (int trial = 0; trial < 100; ++trial) {
      const bool depthwise = trial % 4 == 3;
      const isa::Conv conv = random_conv(rng, config, depthwise);
      std::vector<std::uint8_t> dram;
      Datapath fast(config, dram), reference(config, dram, true);
      std::span<std::uint8_t> fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
      for (std::size_t i = 0; i < fast_sp.size(); ++i)
        fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng() >> 24);
      fast.execute(conv);
      reference.execute(conv);
      ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin()))
          << rows << "x" << cols << " i" << bits << " trial " << trial
          << (depthwise ? " depthwise" : " dense");
    }
  }
}

// A conv large enough for the second thread (pixels split in half) equals the reference loop
// and the one-thread datapath, for every init mode, padded (a copied input) and not (read in
// place), over many runs (a lost hand-over would hang or leave stale accumulators).
TEST(SimDatapath, two_thread_conv_equals_the_reference_loop) {
  std::mt19937 rng(99);
  const HwConfig config = matrix_config(16, 16, 16);
  for (int trial = 0; trial < 24; ++trial) {
    isa::Conv conv;
    conv.elem = isa::Elem::kI16;
    conv.init = static_cast<isa::Init>(trial % 3);
    conv.kh = conv.kw = 3;
    conv.stride_h = conv.stride_w = conv.dil_h = conv.dil_w = 1;
    conv.out_h = 4;
    conv.out_w = static_cast<std::uint32_t>(7 + trial % 6);  // 28-48 pixels
    conv.ic_blocks = 2;
    conv.oc_blocks = 4;  // 9 taps x 16 pairs x 64 channels x 28+ pixels > 2^18 pair MACs
    const bool padded = trial % 2 == 1;
    conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = padded ? 1 : 0;
    const std::uint32_t in_h = conv.out_h + 2 - (padded ? 2 : 0);
    const std::uint32_t in_w = conv.out_w + 2 - (padded ? 2 : 0);
    conv.in_stride_x = 32;
    conv.in_stride_y = in_w * 32;
    conv.in_addr = 0;
    conv.w_addr = 16384;                   // 9 x 32 x 64 x 2 = 36864 bytes
    conv.bias_addr = conv.w_addr + 36864;  // 64 x 4
    conv.acc_addr = conv.bias_addr + 256;  // 4 x 12 x 64 x 4 = 12288 at most
    conv.acc_stride_x = 64;
    conv.acc_stride_y = conv.out_w * 64;
    ASSERT_LE(std::uint64_t{in_h} * conv.in_stride_y * 2, 16384u);
    std::vector<std::uint8_t> dram;
    Datapath two(config, dram, false, 2), one(config, dram), reference(config, dram, true);
    auto two_sp = two.scratchpad(0), one_sp = one.scratchpad(0),
         reference_sp = reference.scratchpad(0);
    for (std::size_t i = 0; i < two_sp.size(); ++i)
      two_sp[i] = one_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng() >> 24);
    for (int repeat = 0; repeat < 3; ++repeat) {
      two.execute(conv);
      one.execute(conv);
      reference.execute(conv);
    }
    ASSERT_TRUE(std::equal(two_sp.begin(), two_sp.end(), reference_sp.begin()))
        << "trial " << trial;
    ASSERT_TRUE(std::equal(one_sp.begin(), one_sp.end(), reference_sp.begin()))
        << "trial " << trial;
  }
}

// Pool (max and avg, i8, i16 and i32) equals a transcription of docs/isa.md's loops: per output
// pixel and channel, the max or the requantized int64 sum of the window's stored elements. The
// i32 trials take the datapath's general path (element by element, the one big-endian hosts
// run for every width); i8 and i16 the vectorised one.
TEST(SimDatapath, pool_equals_the_isa_loops_over_random_windows) {
  std::mt19937 rng(77);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const int bits = 8 << (trial % 3);
    const HwConfig config = matrix_config(4, 4, bits == 32 ? 16 : bits);
    const std::uint64_t e = static_cast<std::uint64_t>(bits / 8);
    isa::Pool pool;
    pool.elem = bits == 8 ? isa::Elem::kI8 : bits == 16 ? isa::Elem::kI16 : isa::Elem::kI32;
    pool.mode = trial % 6 < 3 ? isa::PoolMode::kMax : isa::PoolMode::kAvg;
    pool.kh = static_cast<std::uint32_t>(pick(1, 4));
    pool.kw = static_cast<std::uint32_t>(pick(1, 4));
    pool.stride_h = static_cast<std::uint32_t>(pick(1, 3));
    pool.stride_w = static_cast<std::uint32_t>(pick(1, 3));
    pool.out_h = static_cast<std::uint32_t>(pick(1, 4));
    pool.out_w = static_cast<std::uint32_t>(pick(1, 4));
    pool.pad_top = static_cast<std::uint32_t>(pick(0, static_cast<int>(pool.kh) - 1));
    pool.pad_left = static_cast<std::uint32_t>(pick(0, static_cast<int>(pool.kw) - 1));
    pool.c_size = static_cast<std::uint32_t>(pick(1, 40));
    const std::int64_t in_h = (pool.out_h - 1) * pool.stride_h + pool.kh - pool.pad_top;
    const std::int64_t in_w = (pool.out_w - 1) * pool.stride_w + pool.kw - pool.pad_left;
    pool.src_stride_x = pool.c_size + static_cast<std::uint32_t>(pick(0, 3));
    pool.src_stride_y = static_cast<std::uint32_t>(in_w) * pool.src_stride_x;
    pool.src_addr = static_cast<std::uint32_t>(pick(0, 9));
    pool.dst_stride_x = pool.c_size + static_cast<std::uint32_t>(pick(0, 2));
    pool.dst_stride_y = pool.out_w * pool.dst_stride_x;
    pool.dst_addr = 40000;
    const std::int32_t hi =
        bits == 32 ? std::numeric_limits<std::int32_t>::max() : (std::int32_t{1} << (bits - 1)) - 1;
    const intops::Requant q{static_cast<std::int32_t>(rng() >> 1), pick(20, 40), pick(-3, 3),
                            -hi - 1, hi};
    std::vector<std::uint8_t> dram;
    Datapath datapath(config, dram);
    isa::Vcfg vcfg;
    vcfg.mult_a = q.multiplier;
    vcfg.shift = static_cast<std::uint32_t>(q.shift);
    vcfg.zp = q.zero_point;
    vcfg.lo = q.lo;
    vcfg.hi = q.hi;
    datapath.execute(vcfg);
    std::span<std::uint8_t> sp = datapath.scratchpad(0);
    for (std::size_t i = 0; i < 40000; ++i) sp[i] = static_cast<std::uint8_t>(rng());
    const std::vector<std::uint8_t> before(sp.begin(), sp.end());
    datapath.execute(pool);
    for (std::int64_t oy = 0; oy < pool.out_h; ++oy)
      for (std::int64_t ox = 0; ox < pool.out_w; ++ox)
        for (std::int64_t c = 0; c < pool.c_size; ++c) {
          std::int64_t sum = 0;
          std::int32_t best = std::numeric_limits<std::int32_t>::min();
          for (std::int64_t ky = 0; ky < pool.kh; ++ky)
            for (std::int64_t kx = 0; kx < pool.kw; ++kx) {
              const std::int64_t iy = oy * pool.stride_h + ky - pool.pad_top;
              const std::int64_t ix = ox * pool.stride_w + kx - pool.pad_left;
              if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;
              const std::int32_t v =
                  read_element(before.data() + pool.src_addr +
                                   static_cast<std::uint64_t>(iy * pool.src_stride_y +
                                                              ix * pool.src_stride_x + c) *
                                       e,
                               e);
              sum += v;
              best = std::max(best, v);
            }
          const std::int32_t want = pool.mode == isa::PoolMode::kMax
                                        ? best
                                        : intops::requantize(static_cast<std::int32_t>(sum), q);
          const std::uint64_t at =
              pool.dst_addr +
              static_cast<std::uint64_t>(oy * pool.dst_stride_y + ox * pool.dst_stride_x + c) * e;
          ASSERT_EQ(read_element(sp.data() + at, e),
                    read_element(reinterpret_cast<const std::uint8_t*>(&want), e))
              << "trial " << trial << " pixel " << oy << "," << ox << " channel " << c;
        }
  }
}

// Requant, add, pool, copy, load and store large enough for the second thread (>= 4096
// elements) leave the scratchpad and DRAM exactly as the one-thread datapath does: outputs
// apart from their operands (split), in place (one thread keeps docs/isa.md's order), i8 and
// i16, per-channel and uniform requant, max and avg pool; each executed 4 times in a row.
TEST(SimDatapath, two_thread_vector_and_dma_instructions_equal_one_thread) {
  std::mt19937 rng(4242);
  const HwConfig config = matrix_config(16, 16, 8);
  isa::Vcfg vcfg;
  vcfg.mult_a = 1518500250u;
  vcfg.mult_b = 1073741824u;
  vcfg.shift = 37;
  vcfg.zp = -3;
  vcfg.lo = -128;
  vcfg.hi = 127;
  std::vector<isa::Instruction> cases;
  for (const bool wide : {false, true}) {
    const isa::Elem elem = wide ? isa::Elem::kI16 : isa::Elem::kI8;
    const std::uint32_t e = wide ? 2 : 1;
    for (const bool per_channel : {false, true}) {
      isa::Requant r;  // 8 x 9 pixels x 64 channels, int32 at 0, output at 40000
      r.dst_elem = elem;
      r.per_channel = per_channel;
      r.param_addr = 120000;
      r.src_addr = 0;
      r.dst_addr = 40000;
      r.y_size = 8;
      r.x_size = 9;
      r.c_size = 64;
      r.src_stride_x = 64;
      r.src_stride_y = 9 * 64;
      r.dst_stride_x = 70;
      r.dst_stride_y = 9 * 70;
      cases.push_back(r);
      r.dst_addr = r.src_addr;  // in-place narrowing: one thread
      r.dst_stride_x = 64;
      r.dst_stride_y = 9 * 64;
      cases.push_back(r);
    }
    isa::Add a;  // 8 x 8 x 72
    a.elem = elem;
    a.a_addr = 0;
    a.b_addr = 20000;
    a.dst_addr = 50000;
    a.y_size = a.x_size = 8;
    a.c_size = 72;
    a.a_stride_x = a.b_stride_x = a.dst_stride_x = 72;
    a.a_stride_y = a.b_stride_y = a.dst_stride_y = 8 * 72;
    cases.push_back(a);
    a.dst_addr = a.b_addr;  // in place over b, pixel over pixel: split
    cases.push_back(a);
    a.dst_addr = a.b_addr + 8 * e;  // partly over b: one thread
    cases.push_back(a);
    for (const auto mode : {isa::PoolMode::kMax, isa::PoolMode::kAvg}) {
      isa::Pool p;  // 3x3 stride 2, padded, 8 x 8 out x 64
      p.elem = elem;
      p.mode = mode;
      p.kh = p.kw = 3;
      p.stride_h = p.stride_w = 2;
      p.pad_top = p.pad_left = 1;
      p.out_h = p.out_w = 8;
      p.c_size = 64;
      p.src_stride_x = 64;
      p.src_stride_y = 16 * 64;
      p.src_addr = 0;
      p.dst_addr = 60000;
      p.dst_stride_x = 64;
      p.dst_stride_y = 8 * 64;
      cases.push_back(p);
      p.dst_addr = 64;  // over the source: one thread
      cases.push_back(p);
    }
    isa::Copy c;
    c.elem = elem;
    c.src_addr = 3;
    c.dst_addr = 70001;
    c.y_size = 16;
    c.x_size = 8;
    c.c_size = 40;
    c.src_stride_x = 40;
    c.src_stride_y = 8 * 40;
    c.dst_stride_x = 41;
    c.dst_stride_y = 8 * 41 + 5;
    cases.push_back(c);
    isa::Load l;
    l.elem = elem;
    l.dram_addr = 1000;
    l.sram_addr = 17;
    l.y_size = 14;
    l.x_size = 14;
    l.c_size = 24;
    l.dram_stride_x = 24;
    l.dram_stride_y = 14 * 24;
    l.pad_top = l.pad_bottom = l.pad_left = l.pad_right = 1;
    l.sram_stride_x = 24;
    l.sram_stride_y = 16 * 24;
    l.pad_value = -5;
    cases.push_back(l);
    isa::Store s;
    s.elem = elem;
    s.sp = 0;
    s.sram_addr = 5;
    s.dram_addr = 20001;
    s.y_size = 16;
    s.x_size = 16;
    s.c_size = 20;
    s.sram_stride_x = 20;
    s.sram_stride_y = 16 * 20;
    s.dram_stride_x = 21;
    s.dram_stride_y = 16 * 21;
    cases.push_back(s);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::uint8_t> dram_one(65536), dram_two(65536);
    for (std::size_t b = 0; b < dram_one.size(); ++b)
      dram_one[b] = dram_two[b] = static_cast<std::uint8_t>(rng() >> 24);
    Datapath one(config, dram_one), two(config, dram_two, false, 2);
    auto one_sp = one.scratchpad(0), two_sp = two.scratchpad(0);
    for (std::size_t b = 0; b < one_sp.size(); ++b)
      one_sp[b] = two_sp[b] = static_cast<std::uint8_t>(rng() >> 24);
    // Per-channel table entries: multiplier, shift in [30, 40).
    for (std::uint32_t c = 0; c < 64; ++c) {
      const std::uint32_t shift = 30 + c % 10;
      for (int k = 0; k < 4; ++k)
        one_sp[120000 + 8 * c + 4 + static_cast<std::uint32_t>(k)] =
            two_sp[120000 + 8 * c + 4 + static_cast<std::uint32_t>(k)] =
                static_cast<std::uint8_t>(shift >> (8 * k));
    }
    one.execute(vcfg);
    two.execute(vcfg);
    for (int repeat = 0; repeat < 4; ++repeat) {
      one.execute(cases[i]);
      two.execute(cases[i]);
    }
    ASSERT_TRUE(std::equal(one_sp.begin(), one_sp.end(), two_sp.begin())) << "case " << i;
    ASSERT_EQ(dram_one, dram_two) << "case " << i;
  }
}

/// A 1x1 conv of 8 -> 8 channels (a 4 x 4 matrix) over 2 x 3 pixels: input at 0, 64 bytes of
/// weights at 0, accumulators at 0x4000.
isa::Conv small_conv() {
  isa::Conv conv;
  conv.kh = conv.kw = 1;
  conv.ic_blocks = conv.oc_blocks = 2;
  conv.out_h = 2;
  conv.out_w = 3;
  conv.in_stride_x = 8;
  conv.in_stride_y = 24;
  conv.acc_addr = 0x4000;
  conv.acc_stride_x = 8;
  conv.acc_stride_y = 24;
  return conv;
}

// The dense conv's packed-weight cache is valid only while no instruction wrote its weights:
// after each kind of scratchpad write (load, copy, requant, add, pool, a conv's accumulators)
// changes one byte inside the cached conv's weights, the conv again equals the reference loop.
TEST(SimDatapath, weight_cache_sees_every_kind_of_write_to_the_weights) {
  const HwConfig config = matrix_config(4, 4, 8);
  std::mt19937 rng(5);
  isa::Conv conv = small_conv();  // weights 64 bytes at 0x2000
  conv.w_addr = 0x2000;
  const std::uint32_t target = conv.w_addr + 37;  // one weight byte
  std::vector<isa::Instruction> writers;
  isa::Load load;
  load.dram_addr = 5;
  load.sram_addr = target;
  writers.push_back(load);
  isa::Copy copy;
  copy.src_addr = 0x3000;
  copy.dst_addr = target;
  writers.push_back(copy);
  isa::Requant requant;
  requant.src_addr = 0x3100;
  requant.dst_addr = target;
  writers.push_back(requant);
  isa::Add add;
  add.a_addr = 0x3200;
  add.b_addr = 0x3300;
  add.dst_addr = target;
  writers.push_back(add);
  isa::Pool pool;
  pool.src_addr = 0x3400;
  pool.dst_addr = target;
  writers.push_back(pool);
  isa::Conv over = conv;  // accumulators over weight bytes 32-47
  over.out_h = over.out_w = 1;
  over.oc_blocks = 1;
  over.acc_addr = conv.w_addr + 32;
  writers.push_back(over);
  isa::Vcfg vcfg;
  vcfg.mult_a = 1u << 30;
  vcfg.mult_b = 1u << 29;
  vcfg.shift = 30;
  vcfg.lo = -128;
  vcfg.hi = 127;
  for (std::size_t w = 0; w < writers.size(); ++w) {
    std::vector<std::uint8_t> dram(64);
    for (auto& b : dram) b = static_cast<std::uint8_t>(rng() >> 24);
    Datapath fast(config, dram), reference(config, dram, true);
    auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
    for (std::size_t i = 0; i < fast_sp.size(); ++i)
      fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng() >> 24);
    fast.execute(vcfg);
    reference.execute(vcfg);
    fast.execute(conv);  // packs and caches the weights
    reference.execute(conv);
    const std::uint8_t old_byte = reference_sp[target];
    fast.execute(writers[w]);
    reference.execute(writers[w]);
    ASSERT_NE(reference_sp[target], old_byte) << "writer " << w << " must change the weight";
    fast.execute(conv);
    reference.execute(conv);
    ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin())) << "writer " << w;
  }
}

// Weights loaded from DRAM take the cache entry of any earlier load of the same DRAM bytes,
// at any scratchpad address, without repacking; after a store writes those DRAM bytes, or an
// instruction writes the loaded copy, or the copy comes from non-contiguous DRAM runs, the conv
// still equals the reference loop (repacked).
TEST(SimDatapath, weight_cache_follows_loaded_dram_bytes_and_sees_stores_to_them) {
  const HwConfig config = matrix_config(4, 4, 8);
  std::mt19937 rng(17);
  const isa::Conv conv = small_conv();
  // Loads of DRAM [dram, dram + bytes) to scratchpad `sram`, one row or two rows of half.
  const auto load = [](std::uint64_t dram, std::uint32_t sram, std::uint32_t bytes, bool rows) {
    isa::Load x;
    x.kind = isa::Traffic::kWeights;
    x.dram_addr = dram;
    x.sram_addr = sram;
    x.y_size = rows ? 2 : 1;
    x.c_size = rows ? bytes / 2 : bytes;
    x.dram_stride_x = x.sram_stride_x = x.c_size;
    x.dram_stride_y = x.sram_stride_y = x.c_size;
    return x;
  };
  std::vector<std::uint8_t> dram(512);
  for (auto& b : dram) b = static_cast<std::uint8_t>(rng() >> 24);
  Datapath fast(config, dram), reference(config, dram, true);
  {
    auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
    for (std::size_t i = 0; i < fast_sp.size(); ++i)
      fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng() >> 24);
  }
  std::uint64_t packings = 0;
  // Runs `steps` on both datapaths, then the conv with weights at `w_addr`; expects the fast
  // one to pack `packs` more times.
  const auto run = [&](const std::vector<isa::Instruction>& steps, std::uint32_t w_addr,
                       std::uint64_t packs, const char* what) {
    for (const auto& step : steps) {
      fast.execute(step);
      reference.execute(step);
    }
    isa::Conv at = conv;
    at.w_addr = w_addr;
    fast.execute(at);
    reference.execute(at);
    packings += packs;
    EXPECT_EQ(fast.weight_packings(), packings) << what;
    const auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
    ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin())) << what;
  };
  run({load(0, 0x2000, 64, false)}, 0x2000, 1, "first load");
  run({load(0, 0x2800, 64, true)}, 0x2800, 0, "the same DRAM bytes elsewhere, in two rows");
  run({load(0, 0x2000, 32, false), load(32, 0x2020, 32, false)}, 0x2000, 0,
      "the same DRAM bytes in two loads");
  // Bytes 0-31 and 96-127 of DRAM: the first half is the cached entry's, the whole is not.
  run({load(0, 0x2000, 32, false), load(96, 0x2020, 32, false)}, 0x2000, 1,
      "two loads from apart DRAM runs");
  isa::Copy copy;  // one weight byte of the 0x2800 copy overwritten
  copy.src_addr = 0x3100;
  copy.dst_addr = 0x2800 + 37;
  run({load(0, 0x2800, 64, false), copy}, 0x2800, 1, "a loaded copy written after the load");
  isa::Store store;  // 64 other bytes over the weights' DRAM bytes 16-79
  store.sram_addr = 0x3000;
  store.dram_addr = 16;
  store.c_size = 64;
  store.dram_stride_x = store.sram_stride_x = 64;
  run({store, load(0, 0x2000, 64, false)}, 0x2000, 1, "after a store to the weights' DRAM");
  run({load(0, 0x2800, 64, false)}, 0x2800, 1, "the stored DRAM bytes, reloaded elsewhere");
}

// Load (padding included) and store equal a transcription of docs/isa.md's loops, element by
// element, over random boxes: pixels back to back (one copy or fill per row) and strided,
// int8 and int16, pad values whose bytes differ (0x1234, -5) or agree (0, -1).
TEST(SimDatapath, load_and_store_equal_the_isa_loops_over_random_boxes) {
  std::mt19937 rng(31);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const HwConfig config = matrix_config(4, 4, 8);
  const std::int32_t pads[] = {0, -1, -5, 0x1234, 77};
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint64_t e = (trial / 2) % 2 ? 2 : 1;  // even trials load, odd ones store
    const auto elem = e == 2 ? isa::Elem::kI16 : isa::Elem::kI8;
    const bool dense = trial % 3 != 0;
    const auto c = static_cast<std::uint32_t>(pick(1, 20));
    const auto y = static_cast<std::uint32_t>(pick(1, 6));
    const auto x = static_cast<std::uint32_t>(pick(1, 6));
    std::vector<std::uint8_t> dram(8192);
    for (auto& b : dram) b = static_cast<std::uint8_t>(rng());
    std::vector<std::uint8_t> expected_dram = dram;
    Datapath datapath(config, dram);
    std::span<std::uint8_t> sp = datapath.scratchpad(0);
    for (auto& b : sp) b = static_cast<std::uint8_t>(rng());
    std::vector<std::uint8_t> expected(sp.begin(), sp.end());
    if (trial % 2 == 0) {
      isa::Load load;
      load.elem = elem;
      load.c_size = c;
      load.y_size = y;
      load.x_size = x;
      load.pad_top = static_cast<std::uint32_t>(pick(0, 2));
      load.pad_bottom = static_cast<std::uint32_t>(pick(0, 2));
      load.pad_left = static_cast<std::uint32_t>(pick(0, 2));
      load.pad_right = static_cast<std::uint32_t>(pick(0, 2));
      load.pad_value = e == 1 && (trial / 4) % 5 == 3 ? -7 : pads[(trial / 4) % 5];
      const std::uint32_t padded_w = load.pad_left + x + load.pad_right;
      load.dram_stride_x = c + (dense ? 0 : static_cast<std::uint32_t>(pick(1, 3)));
      load.dram_stride_y = x * load.dram_stride_x + static_cast<std::uint32_t>(pick(0, 4));
      load.sram_stride_x = c + (dense ? 0 : static_cast<std::uint32_t>(pick(1, 3)));
      load.sram_stride_y = padded_w * load.sram_stride_x + static_cast<std::uint32_t>(pick(0, 4));
      load.dram_addr = static_cast<std::uint64_t>(pick(0, 100));
      load.sram_addr = static_cast<std::uint32_t>(pick(0, 100));
      for (std::uint64_t py = 0; py < load.pad_top + y + load.pad_bottom; ++py)
        for (std::uint64_t px = 0; px < padded_w; ++px)
          for (std::uint64_t ch = 0; ch < c; ++ch) {
            std::uint8_t* to = expected.data() + load.sram_addr +
                               (py * load.sram_stride_y + px * load.sram_stride_x + ch) * e;
            const bool inside = py >= load.pad_top && py < load.pad_top + y &&
                                px >= load.pad_left && px < load.pad_left + x;
            const std::int32_t value =
                inside ? read_element(dram.data() + load.dram_addr +
                                          ((py - load.pad_top) * load.dram_stride_y +
                                           (px - load.pad_left) * load.dram_stride_x + ch) *
                                              e,
                                      e)
                       : load.pad_value;
            write_element(to, e, value);
          }
      datapath.execute(load);
    } else {
      isa::Store store;
      store.elem = elem;
      store.c_size = c;
      store.y_size = y;
      store.x_size = x;
      store.sram_stride_x = c + (dense ? 0 : static_cast<std::uint32_t>(pick(1, 3)));
      store.sram_stride_y = x * store.sram_stride_x + static_cast<std::uint32_t>(pick(0, 4));
      store.dram_stride_x = c + (dense ? 0 : static_cast<std::uint32_t>(pick(1, 3)));
      store.dram_stride_y = x * store.dram_stride_x + static_cast<std::uint32_t>(pick(0, 4));
      store.dram_addr = static_cast<std::uint64_t>(pick(0, 100));
      store.sram_addr = static_cast<std::uint32_t>(pick(0, 100));
      for (std::uint64_t yy = 0; yy < y; ++yy)
        for (std::uint64_t xx = 0; xx < x; ++xx)
          for (std::uint64_t ch = 0; ch < c; ++ch)
            write_element(
                expected_dram.data() + store.dram_addr +
                    (yy * store.dram_stride_y + xx * store.dram_stride_x + ch) * e,
                e,
                read_element(sp.data() + store.sram_addr +
                                 (yy * store.sram_stride_y + xx * store.sram_stride_x + ch) * e,
                             e));
      datapath.execute(store);
    }
    ASSERT_TRUE(std::equal(sp.begin(), sp.end(), expected.begin())) << "trial " << trial;
    ASSERT_EQ(dram, expected_dram) << "trial " << trial;
  }
}

}  // namespace
}  // namespace tessel::sim
