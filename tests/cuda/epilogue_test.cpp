// The shared host/device epilogue (epilogue.cuh, device_ops.cuh) against support/int_ops.hpp,
// the golden executor's scalar operations: hand-computed cases, then exhaustive edge grids.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compiler/targets/cuda/device_ops.cuh"
#include "compiler/targets/cuda/epilogue.cuh"
#include "support/int_ops.hpp"

namespace tessel::cuda {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

/// Accumulators around every power of two, the int32 extremes and small values.
std::vector<std::int32_t> edge_accumulators() {
  std::vector<std::int32_t> v = {0,   1,    -1,   2,    -2,       3,    -3,      127,
                                 128, -128, -129, kMin, kMin + 1, kMax, kMax - 1};
  for (int k = 1; k < 31; ++k) {
    const std::int64_t p = std::int64_t{1} << k;
    for (const std::int64_t d : {-1, 0, 1}) {
      v.push_back(static_cast<std::int32_t>(p + d));
      v.push_back(static_cast<std::int32_t>(-(p + d)));
    }
  }
  return v;
}

const std::vector<std::int32_t> kMultipliers = {0,          1,        3,   1 << 30, (1 << 30) + 1,
                                                1518500250, kMax - 1, kMax};

TEST(CudaEpilogue, RoundHalfAwayHandCases) {
  EXPECT_EQ(round_half_away(3, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(round_half_away(-3, 1), -2);  // -1.5 -> -2
  EXPECT_EQ(round_half_away(5, 2), 1);    // 1.25 -> 1
  EXPECT_EQ(round_half_away(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(round_half_away(-6, 2), -2);
  EXPECT_EQ(round_half_away(-5, 2), -1);
  EXPECT_EQ(round_half_away(7, 0), 7);
}

TEST(CudaEpilogue, RequantizeHandCases) {
  // M = 2^30, r = 31: a multiplier of 0.5.
  EXPECT_EQ(requantize(100, 1 << 30, 31, 0, -128, 127), 50);
  EXPECT_EQ(requantize(101, 1 << 30, 31, 0, -128, 127), 51);    // 50.5 -> 51
  EXPECT_EQ(requantize(-101, 1 << 30, 31, 0, -128, 127), -51);  // -50.5 -> -51
  EXPECT_EQ(requantize(1000, 1 << 30, 30, 0, -128, 127), 127);  // saturates
  EXPECT_EQ(requantize(-1000, 1 << 30, 30, 0, -128, 127), -128);
  EXPECT_EQ(requantize(-7, 1 << 30, 30, 5, 0, 127), 0);  // -7 + 5 = -2 -> ReLU
}

TEST(CudaEpilogue, AddRequantizeHandCases) {
  // 10 * 1 + (-3) * 0.5 = 8.5 -> 9 (r = 30)
  EXPECT_EQ(add_requantize(10, -3, 1 << 30, 1 << 29, 30, 0, -128, 127), 9);
  EXPECT_EQ(add_requantize(1, 0, 1 << 29, 0, 30, 0, -128, 127), 1);    // 0.5 -> 1
  EXPECT_EQ(add_requantize(-1, 0, 1 << 29, 0, 30, 0, -128, 127), -1);  // -0.5 -> -1
  EXPECT_EQ(add_requantize(127, 127, 1 << 30, 1 << 30, 30, 0, -128, 127), 127);
}

TEST(CudaEpilogue, RequantizeMatchesIntOpsOnEveryEdgeCase) {
  std::int64_t checked = 0;
  for (const std::int32_t acc : edge_accumulators())
    for (const std::int32_t m : kMultipliers)
      for (int shift = 0; shift <= 62; ++shift)
        for (const std::int32_t zp : {0, -3, 7})
          for (const auto& [lo, hi] : {std::pair{-128, 127}, std::pair{0, 127},
                                       std::pair{-32768, 32767}, std::pair{0, 6}}) {
            const intops::Requant q{m, shift, zp, lo, hi};
            ASSERT_EQ(requantize(acc, m, shift, zp, lo, hi), intops::requantize(acc, q))
                << "acc " << acc << " M " << m << " r " << shift << " z " << zp;
            ++checked;
          }
  EXPECT_GT(checked, 400000);
}

TEST(CudaEpilogue, ExactTiesRoundAwayLikeIntOps) {
  // acc * M = (2k + 1) * 2^(r - 1): exactly half way, for every shift up to 31.
  for (int r = 1; r <= 31; ++r)
    for (std::int64_t k = -40; k <= 40; ++k) {
      const std::int64_t t = (2 * k + 1) * (std::int64_t{1} << (r - 1));
      if (t < kMin || t > kMax) continue;
      const auto acc = static_cast<std::int32_t>(t);
      const intops::Requant q{1, r, 0, kMin, kMax};
      ASSERT_EQ(requantize(acc, 1, r, 0, kMin, kMax), intops::requantize(acc, q));
      ASSERT_EQ(requantize(acc, 1, r, 0, kMin, kMax), k >= 0 ? k + 1 : k);
    }
}

TEST(CudaEpilogue, AddRequantizeMatchesIntOpsOnEveryEdgeCase) {
  const std::vector<std::int32_t> values = {-32768, -32767, -129, -128, -127, -2,    -1,   0,
                                            1,      2,      126,  127,  128,  32766, 32767};
  for (const std::int32_t a : values)
    for (const std::int32_t b : values)
      for (const std::int32_t ma : kMultipliers)
        for (const std::int32_t mb : {0, 1, 1 << 29, (1 << 30) + 12345, kMax})
          for (const int shift : {0, 1, 2, 15, 30, 31, 32, 45, 62})
            for (const std::int32_t zp : {0, 4}) {
              intops::AddRequant q{ma, mb, shift, zp, -128, 127};
              ASSERT_EQ(add_requantize(a, b, ma, mb, shift, zp, -128, 127),
                        intops::add_requantize(a, b, q))
                  << a << " " << b << " " << ma << " " << mb << " " << shift;
            }
}

TEST(CudaEpilogue, FusedStagesEqualTheGoldenOpSequence) {
  // Conv bias -> Requantize (per channel) -> Relu -> Add (residual as operand b) -> Clip.
  const std::vector<std::int32_t> bias = {5, -1000};
  const std::vector<std::int32_t> multiplier = {1 << 30, 1518500250};
  const std::vector<std::int32_t> shift = {36, 40};
  Epilogue e;
  e.bias = bias.data();
  e.multiplier = multiplier.data();
  e.shift = shift.data();
  e.per_channel = 1;
  e.requant_lo = -128;
  e.requant_hi = 127;
  e.has_clamp = 1;
  e.clamp_lo = 0;
  e.clamp_hi = kMax;
  e.has_add = 1;
  e.residual_is_a = 0;
  e.add_multiplier_a = 1 << 30;
  e.add_multiplier_b = 1 << 29;
  e.add_shift = 30;
  e.add_lo = -128;
  e.add_hi = 127;
  e.has_post_clamp = 1;
  e.post_lo = 0;
  e.post_hi = 100;
  const intops::AddRequant add{1 << 30, 1 << 29, 30, 0, -128, 127};
  for (const std::int32_t acc : edge_accumulators())
    for (int c = 0; c < 2; ++c)
      for (const std::int32_t residual : {-128, -1, 0, 1, 127}) {
        if (acc > 0 && bias[c] > kMax - acc) continue;  // the golden executor rejects these
        if (acc < 0 && bias[c] < kMin - acc) continue;
        std::int32_t v = acc + bias[static_cast<std::size_t>(c)];
        v = intops::requantize(v, intops::Requant{multiplier[c], shift[c], 0, -128, 127});
        v = std::clamp<std::int32_t>(v, 0, kMax);
        v = intops::add_requantize(v, residual, add);
        v = std::clamp<std::int32_t>(v, 0, 100);
        ASSERT_EQ(apply_epilogue(e, acc, c, residual), v) << acc << " c" << c << " " << residual;
      }
  // The residual as operand a swaps the multipliers.
  e.residual_is_a = 1;
  e.has_post_clamp = 0;
  EXPECT_EQ(apply_epilogue(e, 0, 0, 100), intops::add_requantize(100, 0, add));
}

TEST(CudaEpilogue, EmptyEpilogueStoresTheAccumulator) {
  const Epilogue e;
  EXPECT_EQ(apply_epilogue(e, kMin, 3, 0), kMin);
  EXPECT_EQ(apply_epilogue(e, 12345, 0, 99), 12345);
}

TEST(CudaEpilogue, QuantizeInputMatchesIntOpsQuantizeValue) {
  const std::vector<float> xs = {0.0f,
                                 -0.0f,
                                 0.5f,
                                 -0.5f,
                                 1.5f,
                                 -1.5f,
                                 2.5f,
                                 126.5f,
                                 127.5f,
                                 -128.5f,
                                 -129.0f,
                                 1e30f,
                                 -1e30f,
                                 0.49999997f,
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN()};
  for (const float scale : {1.0f, 0.5f, 0.1f, 3.0e-5f})
    for (const int bits : {8, 16}) {
      std::vector<float> data(xs);
      QuantizeArgs a;
      a.x = data.data();
      a.y = TensorView{
          nullptr, bits == 8 ? kI8 : kI16, 1, 1, static_cast<std::int64_t>(data.size()), 1, 4, 0};
      a.scale = static_cast<double>(scale);
      a.lo = intops::qmin(bits);
      a.hi = intops::qmax(bits);
      for (std::size_t i = 0; i < data.size(); ++i)
        ASSERT_EQ(quantize_element(a, 0, 0, static_cast<std::int64_t>(i), 0),
                  intops::quantize_value(data[i], scale, bits))
            << data[i] << " / " << scale;
    }
}

TEST(CudaEpilogue, LoadAndStoreRoundTripEveryType) {
  std::int8_t b8[2] = {};
  std::int16_t b16[2] = {};
  std::int32_t b32[2] = {};
  store_int(b8, kI8, 1, -128);
  store_int(b16, kI16, 1, -32768);
  store_int(b32, kI32, 1, kMin);
  EXPECT_EQ(load_int(b8, kI8, 1), -128);
  EXPECT_EQ(load_int(b16, kI16, 1), -32768);
  EXPECT_EQ(load_int(b32, kI32, 1), kMin);
  EXPECT_EQ(elem_bytes(kI8) + elem_bytes(kI16) + elem_bytes(kI32), 7);
}

}  // namespace
}  // namespace tessel::cuda
