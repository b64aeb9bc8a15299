// The datapath's multiply-accumulate kernels against scalar int64 sums taken mod 2^32.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/core/datapath.hpp"
#include "sim/core/kernels.hpp"

namespace tessel::sim {
namespace {

// Every (pixels, in channels, out channels) the pair kernel blocks differently: 1-13 pixels
// (blocks of 4 and the rest), odd and even input channels, output channels below, at
// and across the 16-lane vectors and 64-channel chunks (masked tails of 1-63).
TEST(SimKernels, dense_pairs_equal_int64_sums_mod_2_32_on_every_blocking) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(std::numeric_limits<std::int16_t>::min(),
                                           std::numeric_limits<std::int16_t>::max());
  for (const std::int64_t pixels : {1, 2, 3, 4, 5, 6, 7, 13}) {
    for (const std::int64_t in : {1, 2, 7, 32}) {
      // Every count of channels left after the 64-channel chunks (1-64, the VNNI kernel's
      // one to four tail vectors), then several chunks with tails.
      std::vector<std::int64_t> outs;
      for (std::int64_t out = 1; out <= 65; ++out) outs.push_back(out);
      for (const std::int64_t out : {100, 113, 127, 128, 144}) outs.push_back(out);
      for (const std::int64_t out : outs) {
        const std::int64_t pairs = kernels::channel_pairs(in);
        const std::int64_t stride = 2 * pairs + 3;  // a gap between pixels
        std::vector<std::int16_t> a(static_cast<std::size_t>(pixels * stride), 0);
        std::vector<std::int16_t> w(static_cast<std::size_t>(2 * pairs * out), 0);
        std::vector<std::int16_t> dense(static_cast<std::size_t>(in * out));
        for (std::int64_t p = 0; p < pixels; ++p)
          for (std::int64_t i = 0; i < in; ++i) {
            // The extremes often: -32768 * -32768 pairs are where a 32-bit pair sum wraps.
            const int v = rng() % 4 == 0 ? std::numeric_limits<std::int16_t>::min() : value(rng);
            a[static_cast<std::size_t>(p * stride + i)] = static_cast<std::int16_t>(v);
          }
        for (std::int64_t i = 0; i < in; ++i)
          for (std::int64_t o = 0; o < out; ++o) {
            const int v = rng() % 4 == 0 ? std::numeric_limits<std::int16_t>::min() : value(rng);
            dense[static_cast<std::size_t>(i * out + o)] = static_cast<std::int16_t>(v);
            w[static_cast<std::size_t>(kernels::pair_index(i, o, out))] =
                static_cast<std::int16_t>(v);
          }
        std::vector<std::uint32_t> sums(static_cast<std::size_t>(pixels * out));
        for (std::size_t k = 0; k < sums.size(); ++k) sums[k] = static_cast<std::uint32_t>(rng());
        std::vector<std::uint32_t> expected = sums;
        for (std::int64_t p = 0; p < pixels; ++p)
          for (std::int64_t o = 0; o < out; ++o) {
            std::int64_t sum = expected[static_cast<std::size_t>(p * out + o)];
            for (std::int64_t i = 0; i < in; ++i)
              sum += std::int64_t{a[static_cast<std::size_t>(p * stride + i)]} *
                     dense[static_cast<std::size_t>(i * out + o)];
            expected[static_cast<std::size_t>(p * out + o)] = static_cast<std::uint32_t>(sum);
          }
        std::vector<std::uint32_t> portable = sums;
        kernels::accumulate_dense_pairs(a.data(), stride, pixels, pairs, w.data(), out,
                                        sums.data());
        kernels::accumulate_dense_pairs_portable(a.data(), stride, pixels, pairs, w.data(), out,
                                                 portable.data());
        ASSERT_EQ(sums, expected) << pixels << " pixels, " << in << " in, " << out << " out";
        ASSERT_EQ(portable, expected) << pixels << " pixels, " << in << " in, " << out << " out";
      }
    }
  }
}

// A hand case: 2 inputs x 1 output, both pairs at -32768: 2^30 + 2^30 = 2^31 wraps to INT32_MIN.
TEST(SimKernels, dense_pair_of_two_minimum_products_wraps_to_int32_min) {
  const std::int16_t a[2] = {-32768, -32768};
  const std::int16_t w[2] = {-32768, -32768};
  std::uint32_t sum = 0;
  kernels::accumulate_dense_pairs(a, 2, 1, 1, w, 1, &sum);
  EXPECT_EQ(static_cast<std::int32_t>(sum), std::numeric_limits<std::int32_t>::min());
  std::uint32_t portable = 0;
  kernels::accumulate_dense_pairs_portable(a, 2, 1, 1, w, 1, &portable);
  EXPECT_EQ(static_cast<std::int32_t>(portable), std::numeric_limits<std::int32_t>::min());
}

// The vector unit's kernels equal the scalar definitions (support/int_ops.hpp) element for
// element: accumulators at the int32 extremes, shifts 0 (no rounding) to 62, negative ties.
TEST(SimKernels, requantize_and_add_equal_int_ops_on_every_element) {
  std::mt19937 rng(11);
  const auto le32 = [](std::vector<std::uint8_t>& bytes, std::size_t at, std::int32_t v) {
    for (int k = 0; k < 4; ++k)
      bytes[at + static_cast<std::size_t>(k)] =
          static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * k));
  };
  const std::int64_t count = 37;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint8_t> acc(4 * count), table(8 * count);
    std::vector<std::int32_t> acc_values(count);
    std::vector<intops::Requant> per_channel(count);
    intops::Requant q{static_cast<std::int32_t>(rng() >> 1), static_cast<int>(rng() % 63),
                      static_cast<std::int32_t>(rng() % 7) - 3, -128, 127};
    if (trial % 3 == 0) q.lo = 0;
    for (std::int64_t c = 0; c < count; ++c) {
      const auto k = static_cast<std::size_t>(c);
      acc_values[k] = trial % 5 == 0 && c < 4
                          ? std::array<std::int32_t, 4>{std::numeric_limits<std::int32_t>::min(),
                                                        std::numeric_limits<std::int32_t>::max(),
                                                        -(1 << 20), 1 << 20}[k]
                          : static_cast<std::int32_t>(rng());
      le32(acc, 4 * k, acc_values[k]);
      per_channel[k] = q;
      per_channel[k].multiplier = static_cast<std::int32_t>(rng() >> 1);
      per_channel[k].shift = static_cast<int>(rng() % 63);
      le32(table, 8 * k, per_channel[k].multiplier);
      le32(table, 8 * k + 4, per_channel[k].shift);
    }
    std::vector<std::int32_t> got(count), got_table(count);
    kernels::requantize(acc.data(), count, nullptr, q, got.data());
    kernels::requantize(acc.data(), count, table.data(), q, got_table.data());
    for (std::int64_t c = 0; c < count; ++c) {
      const auto k = static_cast<std::size_t>(c);
      ASSERT_EQ(got[k], intops::requantize(acc_values[k], q)) << "trial " << trial << " c " << c;
      ASSERT_EQ(got_table[k], intops::requantize(acc_values[k], per_channel[k]))
          << "trial " << trial << " c " << c;
    }
    // Residual adds of 8- and 16-bit operands.
    for (const std::uint64_t bytes : {1u, 2u}) {
      intops::AddRequant add{static_cast<std::int32_t>(rng() >> 1),
                             static_cast<std::int32_t>(rng() >> 1),
                             static_cast<int>(rng() % 63),
                             static_cast<std::int32_t>(rng() % 5) - 2,
                             bytes == 1 ? -128 : -32768,
                             bytes == 1 ? 127 : 32767};
      std::vector<std::uint8_t> a(bytes * count), b(bytes * count);
      for (auto& v : a) v = static_cast<std::uint8_t>(rng());
      for (auto& v : b) v = static_cast<std::uint8_t>(rng());
      std::vector<std::int32_t> sum(count);
      kernels::add_requantize(a.data(), b.data(), bytes, count, add, sum.data());
      for (std::int64_t c = 0; c < count; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const auto element = [&](const std::vector<std::uint8_t>& v) -> std::int32_t {
          return bytes == 1 ? static_cast<std::int8_t>(v[k])
                            : static_cast<std::int16_t>(
                                  static_cast<std::uint16_t>(v[2 * k] | (v[2 * k + 1] << 8)));
        };
        ASSERT_EQ(sum[k], intops::add_requantize(element(a), element(b), add))
            << "trial " << trial << " bytes " << bytes << " c " << c;
      }
    }
  }
}

// The datapath reuses a dense conv's repacked weights while the weight bytes and geometry stay
// the same: a conv after new weights were written (a reload), after new inputs, and after a
// depthwise conv in between must still equal the reference loop.
TEST(SimKernels, repacked_weights_follow_every_change_of_the_weight_bytes) {
  HwConfig config;
  config.matrix = {4, 4, 16, 16, 32, 4, 4};
  config.vector.lanes = 4;
  config.scratchpads = {
      {"unified",
       1 << 14,
       1,
       4,
       {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators, DataKind::kOutputs}}};
  std::vector<std::uint8_t> dram;
  Datapath fast(config, dram), reference(config, dram, true);
  std::mt19937 rng(3);
  auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
  const auto scribble = [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i)
      fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng());
  };
  scribble(0, fast_sp.size());
  isa::Conv conv;
  conv.elem = isa::Elem::kI16;
  conv.init = isa::Init::kBias;
  conv.kh = 3;
  conv.kw = 1;
  conv.stride_h = conv.stride_w = conv.dil_h = conv.dil_w = 1;
  conv.out_h = 2;
  conv.out_w = 5;
  conv.ic_blocks = 2;
  conv.oc_blocks = 3;
  conv.in_addr = 0;
  conv.in_stride_x = 8;
  conv.in_stride_y = 5 * 8;  // 4 x 5 pixels of 8 channels, 640 bytes
  conv.w_addr = 1024;        // 3 taps x 8 x 12 x 2 bytes = 576
  conv.bias_addr = 2048;     // 12 x 4
  conv.acc_addr = 4096;      // 2 x 5 x 12 x 4 = 480
  conv.acc_stride_x = 12;
  conv.acc_stride_y = 5 * 12;
  isa::Conv depthwise = conv;
  depthwise.depthwise = true;
  depthwise.ic_blocks = 1;
  depthwise.oc_blocks = 2;  // 8 channels, 3 taps x 8 x 2 bytes of weights at w_addr
  depthwise.acc_addr = 8192;
  depthwise.acc_stride_x = 8;
  depthwise.acc_stride_y = 5 * 8;
  const auto run = [&](const isa::Instruction& instruction, const char* step) {
    fast.execute(instruction);
    reference.execute(instruction);
    ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin())) << step;
  };
  run(conv, "first conv");
  scribble(0, 640);
  run(conv, "same weights, new inputs");
  scribble(1024 + 100, 1024 + 102);
  run(conv, "two weight bytes rewritten");
  run(depthwise, "depthwise in between");
  run(conv, "dense again after the depthwise conv");
}

// Little-endian low bytes, as write_element stores them, for every element width.
TEST(SimKernels, store_elements_writes_little_endian_low_bytes) {
  const std::int32_t values[3] = {-2, 0x1234, -0x1234567};
  std::uint8_t one[3], two[6], four[12];
  kernels::store_elements(values, 3, 1, one);
  kernels::store_elements(values, 3, 2, two);
  kernels::store_elements(values, 3, 4, four);
  EXPECT_EQ(std::vector<std::uint8_t>(one, one + 3), (std::vector<std::uint8_t>{0xfe, 0x34, 0x99}));
  EXPECT_EQ(std::vector<std::uint8_t>(two, two + 6),
            (std::vector<std::uint8_t>{0xfe, 0xff, 0x34, 0x12, 0x99, 0xba}));
  EXPECT_EQ(std::vector<std::uint8_t>(four, four + 12),
            (std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xff, 0x34, 0x12, 0, 0, 0x99, 0xba, 0xdc,
                                       0xfe}));
}

}  // namespace
}  // namespace tessel::sim
