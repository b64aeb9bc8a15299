// Hand-computed cases for support/int_ops.hpp: every rounding tie, saturation and zero point.
#include "support/int_ops.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace tessel::intops {
namespace {

constexpr std::int32_t k2p29 = std::int32_t{1} << 29;
constexpr std::int32_t k2p30 = std::int32_t{1} << 30;

TEST(RoundHalfAway, TiesGoAwayFromZero) {
  EXPECT_EQ(round_half_away(1, 1), 1);    // 0.5
  EXPECT_EQ(round_half_away(-1, 1), -1);  // -0.5
  EXPECT_EQ(round_half_away(3, 1), 2);    // 1.5
  EXPECT_EQ(round_half_away(-3, 1), -2);  // -1.5
  EXPECT_EQ(round_half_away(5, 1), 3);    // 2.5 (not banker's 2)
  EXPECT_EQ(round_half_away(-5, 1), -3);
  EXPECT_EQ(round_half_away(6, 2), 2);  // 1.5
  EXPECT_EQ(round_half_away(-6, 2), -2);
}

TEST(RoundHalfAway, NonTiesRoundToNearest) {
  EXPECT_EQ(round_half_away(5, 2), 1);    // 1.25
  EXPECT_EQ(round_half_away(7, 2), 2);    // 1.75
  EXPECT_EQ(round_half_away(-5, 2), -1);  // -1.25
  EXPECT_EQ(round_half_away(-7, 2), -2);  // -1.75
  EXPECT_EQ(round_half_away(4, 2), 1);
  EXPECT_EQ(round_half_away(0, 17), 0);
}

TEST(RoundHalfAway, ShiftZeroIsIdentity) {
  EXPECT_EQ(round_half_away(-12345, 0), -12345);
  EXPECT_EQ(round_half_away(7, 0), 7);
}

TEST(Requantize, HalvingMultiplierRoundsTiesAway) {
  const Requant half{k2p30, 31, 0, -128, 127};  // M * 2^-r = 0.5
  EXPECT_EQ(requantize(100, half), 50);
  EXPECT_EQ(requantize(101, half), 51);    // 50.5
  EXPECT_EQ(requantize(-101, half), -51);  // -50.5
  EXPECT_EQ(requantize(99, half), 50);     // 49.5
  EXPECT_EQ(requantize(1, half), 1);       // 0.5
  EXPECT_EQ(requantize(-1, half), -1);
}

TEST(Requantize, ThreeQuartersMultiplier) {
  const Requant q{3 * k2p29, 31, 0, -128, 127};  // 0.75
  EXPECT_EQ(requantize(10, q), 8);               // 7.5
  EXPECT_EQ(requantize(-10, q), -8);             // -7.5
  EXPECT_EQ(requantize(2, q), 2);                // 1.5
  EXPECT_EQ(requantize(1, q), 1);                // 0.75
  EXPECT_EQ(requantize(-2, q), -2);
  EXPECT_EQ(requantize(3, q), 2);  // 2.25
}

TEST(Requantize, SaturatesAtInt8Limits) {
  const Requant half{k2p30, 31, 0, qmin(8), qmax(8)};
  EXPECT_EQ(requantize(254, half), 127);
  EXPECT_EQ(requantize(255, half), 127);  // 127.5 -> 128 -> clamp 127
  EXPECT_EQ(requantize(-256, half), -128);
  EXPECT_EQ(requantize(-257, half), -128);  // -128.5 -> -129 -> clamp -128
  EXPECT_EQ(requantize(1000, half), 127);
  EXPECT_EQ(requantize(-1000, half), -128);
}

TEST(Requantize, SaturatesAtInt16Limits) {
  const Requant half{k2p30, 31, 0, qmin(16), qmax(16)};
  EXPECT_EQ(qmin(16), -32768);
  EXPECT_EQ(qmax(16), 32767);
  EXPECT_EQ(requantize(65534, half), 32767);
  EXPECT_EQ(requantize(65536, half), 32767);
  EXPECT_EQ(requantize(-65536, half), -32768);
  EXPECT_EQ(requantize(-65538, half), -32768);
  EXPECT_EQ(requantize(100000, half), 32767);
}

TEST(Requantize, ReluAndRelu6FoldIntoClamp) {
  const Requant relu{k2p30, 31, 0, 0, 127};
  EXPECT_EQ(requantize(-3, relu), 0);
  EXPECT_EQ(requantize(-1, relu), 0);        // -0.5 -> -1 -> clamp 0
  EXPECT_EQ(requantize(9, relu), 5);         // 4.5 -> 5
  const Requant relu6{k2p30, 31, 0, 0, 60};  // hi = round(6 / s_out) with s_out = 0.1
  EXPECT_EQ(requantize(121, relu6), 60);     // 60.5 -> 61 -> clamp 60
  EXPECT_EQ(requantize(119, relu6), 60);     // 59.5 -> 60
  EXPECT_EQ(requantize(117, relu6), 59);     // 58.5 -> 59
}

// compose_clamps: one clamp equal to two in a row, checked against the two clamps for every
// pair of ranges in [-6, 6] (nested, overlapping, touching, disjoint either way, a point) and
// every value around them; then the folds codegen makes (docs/scheduler.md "Activation
// folding"): int8 requantize then ReLU -> [0, 127]; int16 then ReLU6 (hi 60) -> [0, 60].
TEST(ComposeClamps, EqualsTwoClampsForEveryPairOfRanges) {
  int pairs = 0;
  for (std::int32_t a = -6; a <= 6; ++a)
    for (std::int32_t b = a; b <= 6; ++b)
      for (std::int32_t c = -6; c <= 6; ++c)
        for (std::int32_t d = c; d <= 6; ++d) {
          const ClampRange one = compose_clamps({a, b}, {c, d});
          ++pairs;
          for (std::int32_t v = -8; v <= 8; ++v)
            ASSERT_EQ(clamp(v, one.lo, one.hi), clamp(clamp(v, a, b), c, d))
                << "v " << v << " inner [" << a << ", " << b << "] outer [" << c << ", " << d
                << "]";
        }
  EXPECT_EQ(pairs, 91 * 91);
  const ClampRange relu8 = compose_clamps({qmin(8), qmax(8)}, {0, qmax(8)});
  EXPECT_EQ(relu8.lo, 0);
  EXPECT_EQ(relu8.hi, 127);
  const ClampRange relu6 = compose_clamps({qmin(16), qmax(16)}, {0, 60});
  EXPECT_EQ(relu6.lo, 0);
  EXPECT_EQ(relu6.hi, 60);
  // Disjoint: a Clip above everything the requantize can give is the constant 5.
  const ClampRange above = compose_clamps({-3, 2}, {5, 9});
  EXPECT_EQ(above.lo, 5);
  EXPECT_EQ(above.hi, 5);
}

TEST(Requantize, ZeroPointIsAddedAfterRoundingThenClamped) {
  const Requant q{k2p30, 31, 10, -128, 127};
  EXPECT_EQ(requantize(100, q), 60);
  EXPECT_EQ(requantize(-3, q), 8);     // -1.5 -> -2, + 10
  EXPECT_EQ(requantize(240, q), 127);  // 120 + 10 -> clamp
  const Requant negative_zp{k2p30, 31, -5, -128, 127};
  EXPECT_EQ(requantize(-250, negative_zp), -128);  // -125 - 5 -> clamp
}

TEST(Requantize, ExtremeAccumulatorAndMultiplierStayExactInInt64) {
  // |INT32_MIN * (2^31 - 1)| = 2^62 - 2^31; / 2^62 = 0.99999999953 -> rounds to 1.
  const Requant q{std::numeric_limits<std::int32_t>::max(), 62, 0, -128, 127};
  EXPECT_EQ(requantize(std::numeric_limits<std::int32_t>::min(), q), -1);
  EXPECT_EQ(requantize(std::numeric_limits<std::int32_t>::max(), q), 1);
  const Requant identity{k2p30, 30, 0, std::numeric_limits<std::int32_t>::min(),
                         std::numeric_limits<std::int32_t>::max()};
  EXPECT_EQ(requantize(std::numeric_limits<std::int32_t>::min(), identity),
            std::numeric_limits<std::int32_t>::min());
}

TEST(QuantizeMultiplier, NormalisesIntoThirtyOneBits) {
  EXPECT_EQ(quantize_multiplier(0.5).multiplier, k2p30);
  EXPECT_EQ(quantize_multiplier(0.5).shift, 31);
  EXPECT_EQ(quantize_multiplier(0.75).multiplier, 3 * k2p29);
  EXPECT_EQ(quantize_multiplier(0.75).shift, 31);
  EXPECT_EQ(quantize_multiplier(1.0).multiplier, k2p30);
  EXPECT_EQ(quantize_multiplier(1.0).shift, 30);
  EXPECT_EQ(quantize_multiplier(3.0).multiplier, 3 * k2p29);
  EXPECT_EQ(quantize_multiplier(3.0).shift, 29);
  // 0.1 = 0.8 * 2^-3; 0.8 * 2^31 = 1717986918.4
  EXPECT_EQ(quantize_multiplier(0.1).multiplier, 1717986918);
  EXPECT_EQ(quantize_multiplier(0.1).shift, 34);
}

TEST(QuantizeMultiplier, RoundingUpToTwoPow31Renormalises) {
  const FixedPoint fp = quantize_multiplier(1.0 - 0x1p-40);  // fraction*2^31 rounds to 2^31
  EXPECT_EQ(fp.multiplier, k2p30);
  EXPECT_EQ(fp.shift, 30);
}

TEST(QuantizeMultiplier, TinyRatiosClampTheShiftAt62) {
  const FixedPoint fp = quantize_multiplier(0x1p-40);  // would need r = 70
  EXPECT_EQ(fp.shift, 62);
  EXPECT_EQ(fp.multiplier, 1 << 22);  // 2^22 * 2^-62 = 2^-40 exactly
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(0.0).shift, 0);
}

TEST(AddRequantize, SharedShiftAndSingleRounding) {
  const AddRequant q = make_add_requant(0.5, 0.25, -128, 127);
  EXPECT_EQ(q.multiplier_a, k2p30);
  EXPECT_EQ(q.multiplier_b, k2p29);
  EXPECT_EQ(q.shift, 31);
  EXPECT_EQ(add_requantize(3, 2, q), 2);    // 1.5 + 0.5
  EXPECT_EQ(add_requantize(3, 1, q), 2);    // 1.75
  EXPECT_EQ(add_requantize(1, 0, q), 1);    // 0.5 tie -> 1
  EXPECT_EQ(add_requantize(-1, 0, q), -1);  // -0.5 tie -> -1
  EXPECT_EQ(add_requantize(1, -2, q), 0);   // 0.5 - 0.5
  // 0.5 - 0.25 = 0.25 -> 0 with one rounding; rounding each term first would give 1 + 0 = 1.
  EXPECT_EQ(add_requantize(1, -1, q), 0);
}

TEST(AddRequantize, SaturatesAndFoldsRelu) {
  const AddRequant q = make_add_requant(1.0, 1.0, -128, 127);
  EXPECT_EQ(add_requantize(127, 127, q), 127);
  EXPECT_EQ(add_requantize(-128, -128, q), -128);
  EXPECT_EQ(add_requantize(100, -30, q), 70);
  const AddRequant relu = make_add_requant(1.0, 1.0, 0, 127);
  EXPECT_EQ(add_requantize(-100, 30, relu), 0);
}

TEST(QuantizeValue, RoundsHalfAwayAndSaturates) {
  EXPECT_EQ(quantize_value(0.5f, 1.0f, 8), 1);
  EXPECT_EQ(quantize_value(-0.5f, 1.0f, 8), -1);
  EXPECT_EQ(quantize_value(0.25f, 0.5f, 8), 1);
  EXPECT_EQ(quantize_value(0.2f, 0.5f, 8), 0);
  EXPECT_EQ(quantize_value(200.0f, 1.0f, 8), 127);
  EXPECT_EQ(quantize_value(-200.0f, 1.0f, 8), -128);
  EXPECT_EQ(quantize_value(1e9f, 1.0f, 16), 32767);
  EXPECT_EQ(quantize_value(std::numeric_limits<float>::quiet_NaN(), 1.0f, 8), 0);
}

}  // namespace
}  // namespace tessel::intops
