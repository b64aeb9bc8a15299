// The vectorised NHWC kernels against the scalar contract (support/int_ops.hpp), edge by edge.
#include "compiler/targets/cpu/nhwc_kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace tessel::cpu::nhwc {
namespace {

TEST(NhwcKernels, TransposeRoundTripsAndPlacesChannelsInnermost) {
  // [1, 2, 3] NCHW (2 channels, 3 pixels) -> NHWC [1, 3, 2].
  const std::int16_t nchw[] = {1, 2, 3, 10, 20, 30};
  std::int16_t nhwc[6] = {}, back[6] = {};
  nchw_to_nhwc(nchw, nhwc, 1, 2, 3, 2);
  EXPECT_EQ(std::vector<std::int16_t>(nhwc, nhwc + 6),
            (std::vector<std::int16_t>{1, 10, 2, 20, 3, 30}));
  nhwc_to_nchw(nhwc, back, 1, 2, 3, 2);
  EXPECT_EQ(std::vector<std::int16_t>(back, back + 6), std::vector<std::int16_t>(nchw, nchw + 6));
}

TEST(NhwcKernels, RequantizeRoundsTiesAwayFromZeroPerChannel) {
  // Channel 0: M = 2^30, r = 31 (x 0.5): 3 -> 1.5 -> 2, -3 -> -2, 1 -> 0.5 -> 1, -1 -> -1.
  // Channel 1: r = 0, M = 1 (identity) with saturation at 127 / -128.
  const std::vector<intops::Requant> params = {{1 << 30, 31, 0, -128, 127}, {1, 0, 0, -128, 127}};
  const ChannelRequant q = channel_requant(params, 2);
  const std::int32_t acc[] = {3, 500, -3, -500, 1, 127, -1, -128};
  std::int8_t y[8];
  ASSERT_TRUE(requantize(acc, nullptr, y, 4, 2, q));
  EXPECT_EQ(std::vector<int>(y, y + 8), (std::vector<int>{2, 127, -2, -128, 1, 127, -1, -128}));
}

TEST(NhwcKernels, RequantizeWithBiasReportsInt32Overflow) {
  const ChannelRequant q = channel_requant({{1, 0, 0, -128, 127}}, 1);
  const std::int32_t acc[] = {std::numeric_limits<std::int32_t>::max()};
  const std::int32_t bias[] = {1};
  std::int8_t y[1];
  EXPECT_FALSE(requantize(acc, bias, y, 1, 1, q));
  const std::int32_t fine[] = {-5};
  ASSERT_TRUE(requantize(fine, bias, y, 1, 1, q));
  EXPECT_EQ(y[0], -4);
  std::int32_t in_place[] = {std::numeric_limits<std::int32_t>::min()};
  const std::int32_t minus[] = {-1};
  EXPECT_FALSE(add_bias(in_place, minus, 1, 1));
  EXPECT_EQ(in_place[0], std::numeric_limits<std::int32_t>::min()) << "left unchanged on failure";
}

// Random accumulators, multipliers and shifts (0..62) against intops::requantize, all three
// output types; odd channel counts exercise the vector loops' remainders.
TEST(NhwcKernels, RequantizeEqualsTheScalarContractOnRandomValues) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int32_t> acc_dist(std::numeric_limits<std::int32_t>::min(),
                                                       std::numeric_limits<std::int32_t>::max());
  std::uniform_int_distribution<std::int32_t> m_dist(0, std::numeric_limits<std::int32_t>::max());
  std::uniform_int_distribution<int> shift_dist(0, 62);
  for (const std::int64_t channels : {1, 3, 17, 64}) {
    std::vector<intops::Requant> params(static_cast<std::size_t>(channels));
    for (auto& p : params) p = {m_dist(rng), shift_dist(rng), 3, -100, 90};
    params[0].shift = 0;
    const ChannelRequant q = channel_requant(params, channels);
    const std::int64_t pixels = 37;
    std::vector<std::int32_t> acc(static_cast<std::size_t>(pixels * channels));
    for (auto& a : acc) a = acc_dist(rng) >> (rng() % 31);  // small and large magnitudes
    std::vector<std::int8_t> y8(acc.size());
    std::vector<std::int16_t> y16(acc.size());
    std::vector<std::uint8_t> yu8(acc.size());
    ASSERT_TRUE(requantize(acc.data(), nullptr, y8.data(), pixels, channels, q));
    ASSERT_TRUE(requantize(acc.data(), nullptr, y16.data(), pixels, channels, q));
    ASSERT_TRUE(requantize(acc.data(), nullptr, yu8.data(), pixels, channels, q));
    for (std::size_t i = 0; i < acc.size(); ++i) {
      auto p = params[i % static_cast<std::size_t>(channels)];
      p.zero_point = 3;
      const std::int32_t want = intops::requantize(acc[i], p);
      ASSERT_EQ(y8[i], want) << "element " << i;
      ASSERT_EQ(y16[i], want) << "element " << i;
      ASSERT_EQ(yu8[i], static_cast<std::uint8_t>(want)) << "element " << i;
    }
  }
}

TEST(NhwcKernels, AddRequantizeEqualsTheScalarContract) {
  const auto q = intops::make_add_requant(0.37, 1.9, 0, 127);  // ReLU folded: lo = 0
  std::vector<std::int8_t> a, b;
  for (int va = -128; va <= 127; va += 5)
    for (int vb = -128; vb <= 127; vb += 3) {
      a.push_back(static_cast<std::int8_t>(va));
      b.push_back(static_cast<std::int8_t>(vb));
    }
  std::vector<std::int8_t> y(a.size());
  add_requantize(a.data(), b.data(), y.data(), static_cast<std::int64_t>(a.size()), q);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(y[i], intops::add_requantize(a[i], b[i], q)) << int{a[i]} << " + " << int{b[i]};
}

TEST(NhwcKernels, ClampKeepsStdClampOrderEvenForInvertedBounds) {
  const std::int8_t x[] = {-128, -1, 0, 5, 127};
  std::int8_t y[5];
  clamp(x, y, 5, 0, 6);  // ReLU6 on a unit scale
  EXPECT_EQ(std::vector<int>(y, y + 5), (std::vector<int>{0, 0, 0, 5, 6}));
  clamp(x, y, 5, 4, 2);  // std::clamp(v, 4, 2): below 4 -> 4, else above 2 -> 2
  EXPECT_EQ(std::vector<int>(y, y + 5), (std::vector<int>{4, 4, 4, 2, 2}));
}

TEST(NhwcKernels, QuantizeRoundsHalfAwayAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float x[] = {0.25f, -0.25f, 0.75f, 0.2499f, 1000.0f, -1000.0f, nan, inf, -inf, -0.0f};
  std::int8_t y[10];
  quantize(x, y, 10, 0.5, 0, -128, 127);  // x / 0.5: 0.5 -> 1, -0.5 -> -1, 1.5 -> 2
  EXPECT_EQ(std::vector<int>(y, y + 10),
            (std::vector<int>{1, -1, 2, 0, 127, -128, 0, 127, -128, 0}));
  quantize(x, y, 3, 0.5, 10, -128, 127);  // zero point added after rounding
  EXPECT_EQ(std::vector<int>(y, y + 3), (std::vector<int>{11, 9, 12}));
}

TEST(NhwcKernels, QuantizeEqualsStdRoundOnRandomValues) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 40.0f);
  std::vector<float> x(1001);
  for (auto& v : x) v = dist(rng);
  std::vector<std::int8_t> y(x.size());
  const double scale = 0.3137;
  quantize(x.data(), y.data(), static_cast<std::int64_t>(x.size()), scale, 0, -128, 127);
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[i], std::clamp(std::round(double{x[i]} / scale), -128.0, 127.0)) << x[i];
}

TEST(NhwcKernels, MaxPoolAndWindowSumsOnAHandComputedNhwcCase) {
  // 1 x 2 x 2 x 2 NHWC (channel 0: 1 2 / 3 4, channel 1: -1 -2 / -3 -4), 2x2 window, pad 1 on
  // the bottom/right, stride 2: one output pixel, then a padded edge pixel case with stride 1.
  const std::int8_t x[] = {1, -1, 2, -2, 3, -3, 4, -4};
  ir::WindowGeometry g;
  g.kernel_h = g.kernel_w = 2;
  g.stride_h = g.stride_w = 1;
  g.pad_bottom = g.pad_right = 1;
  std::int8_t y[8];
  max_pool(x, y, 1, 2, 2, 2, 2, 2, g);
  EXPECT_EQ(std::vector<int>(y, y + 8), (std::vector<int>{4, -1, 4, -2, 4, -3, 4, -4}));
  std::int64_t sums[8], counts[4];
  window_sums(x, sums, counts, 1, 2, 2, 2, 2, 2, g, /*count_include_pad=*/false);
  EXPECT_EQ(std::vector<std::int64_t>(sums, sums + 8),
            (std::vector<std::int64_t>{10, -10, 6, -6, 7, -7, 4, -4}));
  EXPECT_EQ(std::vector<std::int64_t>(counts, counts + 4), (std::vector<std::int64_t>{4, 2, 2, 1}));
  window_sums(x, sums, counts, 1, 2, 2, 2, 2, 2, g, /*count_include_pad=*/true);
  EXPECT_EQ(std::vector<std::int64_t>(counts, counts + 4), (std::vector<std::int64_t>{4, 4, 4, 4}));
}

TEST(NhwcKernels, GemmIsExactAndReportsOverflowAfterTheBias) {
  // a = [1, -2, 3], b rows [[4, 5, 6], [-128, -128, -128]], bias [10, 0].
  const std::int8_t a[] = {1, -2, 3};
  const std::int8_t b[] = {4, 5, 6, -128, -128, -128};
  const std::int32_t bias[] = {10, 0};
  std::int32_t y[2];
  ASSERT_TRUE(gemm_s8(a, b, bias, y, 1, 2, 3));
  EXPECT_EQ(y[0], 4 - 10 + 18 + 10);
  EXPECT_EQ(y[1], -128 * (1 - 2 + 3));
  const std::int8_t one[] = {127};
  const std::int8_t w[] = {127};
  const std::int32_t big[] = {std::numeric_limits<std::int32_t>::max() - 100};
  EXPECT_FALSE(gemm_s8(one, w, big, y, 1, 1, 1));
}

}  // namespace
}  // namespace tessel::cpu::nhwc
