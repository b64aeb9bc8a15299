// Hand-computed cases for support/int_nonlinear.hpp: isqrt, table lookups, multiply/subtract,
// the MatMul operand shift, the integer softmax row and the layer/RMS norm row.
#include "support/int_nonlinear.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace tessel::intops {
namespace {

static_assert(isqrt(0) == 0 && isqrt(1) == 1 && isqrt(2) == 1 && isqrt(3) == 1 && isqrt(4) == 2);
static_assert(bit_length(0) == 0 && bit_length(1) == 1 && bit_length(56) == 6);

TEST(Isqrt, EdgesAndPerfectSquaresPlusMinusOne) {
  EXPECT_EQ(isqrt(0), 0u);
  EXPECT_EQ(isqrt(1), 1u);
  EXPECT_EQ(isqrt(2), 1u);
  EXPECT_EQ(isqrt((std::uint64_t{1} << 62) - 1), 2147483647u);  // (2^31)^2 = 2^62 is above
  EXPECT_EQ(isqrt(std::uint64_t{1} << 62), 2147483648u);
  EXPECT_EQ(isqrt(std::numeric_limits<std::uint64_t>::max()), 4294967295u);
  for (const std::uint64_t k : {std::uint64_t{3}, std::uint64_t{1000}, std::uint64_t{46341},
                                std::uint64_t{2147483647}, std::uint64_t{4294967295}}) {
    const std::uint64_t square = k * k;
    EXPECT_EQ(isqrt(square), k) << k;
    EXPECT_EQ(isqrt(square - 1), k - 1) << k;
    EXPECT_EQ(isqrt(square + 1), k) << k;
  }
}

TEST(TableLookup, EightBitIndexesCodePlus128) {
  std::vector<std::int32_t> table(256);
  for (int i = 0; i < 256; ++i) table[static_cast<std::size_t>(i)] = 1000 + i;
  EXPECT_EQ(table_lookup(table.data(), 256, -128, -128, 127), 1000);
  EXPECT_EQ(table_lookup(table.data(), 256, 0, -128, 127), 1128);  // entries are pre-clamped
  EXPECT_EQ(table_lookup(table.data(), 256, 127, -128, 127), 1255);
}

TEST(TableLookup, SixteenBitInterpolatesTheLowByteAtBothEndsOfTheRange) {
  // Entries in output codes times 2^8 (kTableFractionBits); one rounding, of the interpolation.
  ASSERT_EQ(kTableFractionBits, 8);
  std::vector<std::int32_t> table(257, 0);
  table[0] = -500 * 256;
  table[1] = -500 * 256 + 3 * 256;  // slope 3 codes per 256 input codes
  table[128] = 7 * 256 + 128;       // 7.5 codes
  table[129] = 4 * 256;             // slope -3.5
  table[255] = 1000 * 256;
  table[256] = 1256 * 256;  // the entry one step past code 32767
  // x = -32768: h = -128, l = 0 -> E[0] / 256 = -500.
  EXPECT_EQ(table_lookup(table.data(), 257, -32768, -32768, 32767), -500);
  // x = -32768 + 128: l = 128: -500 + 3 * 128 / 256 = -498.5 -> -499 (half away from zero).
  EXPECT_EQ(table_lookup(table.data(), 257, -32640, -32768, 32767), -499);
  // x = 0: the fractional entry itself, 7.5 -> 8.
  EXPECT_EQ(table_lookup(table.data(), 257, 0, -32768, 32767), 8);
  // x = 128: 7.5 - 3.5 * 128 / 256 = 5.75 -> 6. x = 32: 7.5 - 0.4375 = 7.0625 -> 7, where
  // integer entries (8, then the step rounded to 0) would give 8: one rounding, not two.
  EXPECT_EQ(table_lookup(table.data(), 257, 128, -32768, 32767), 6);
  EXPECT_EQ(table_lookup(table.data(), 257, 32, -32768, 32767), 7);
  // x = 32767: h = 127, l = 255: 1000 + 256 * 255 / 256 = 1255.
  EXPECT_EQ(table_lookup(table.data(), 257, 32767, -32768, 32767), 1255);
  // The clamp to the output type comes last.
  EXPECT_EQ(table_lookup(table.data(), 257, 32767, -128, 127), 127);
  EXPECT_EQ(interpolate16(table.data(), 32767), 1255);
}

TEST(MulRequantize, OneRoundingTiesAwayAndSaturation) {
  const Requant half{std::int32_t{1} << 30, 31, 0, -128, 127};  // M * 2^-r = 0.5
  EXPECT_EQ(mul_requantize(10, -7, half), -35);
  EXPECT_EQ(mul_requantize(3, 3, half), 5);    // 4.5
  EXPECT_EQ(mul_requantize(-3, 3, half), -5);  // -4.5
  EXPECT_EQ(mul_requantize(-128, -128, half), 127);
  const Requant wide{std::int32_t{1} << 30, 30, 0, -32768, 32767};  // 1.0 at 16 bits
  EXPECT_EQ(mul_requantize(-32768, -32768, wide), 32767);           // 2^30, no overflow
  EXPECT_EQ(mul_requantize(181, -181, wide), -32761);
}

TEST(SubRequantize, NegatesTheSecondProduct) {
  const AddRequant q{std::int32_t{1} << 30, std::int32_t{1} << 29, 30, 0, -128, 127};  // 1, 0.5
  EXPECT_EQ(sub_requantize(10, 4, q), 8);
  EXPECT_EQ(sub_requantize(10, 5, q), 8);     // 7.5 -> 8
  EXPECT_EQ(sub_requantize(-10, 5, q), -13);  // -12.5 -> -13
  EXPECT_EQ(add_requantize(10, 5, q), 13);    // 12.5 -> 13
  EXPECT_EQ(sub_requantize(-128, 127, q), -128);
}

TEST(MatmulOperandShift, KeepsEveryInt32SumForTheWorstInput) {
  EXPECT_EQ(matmul_operand_shift(8, 8, 64), 0);
  EXPECT_EQ(matmul_operand_shift(8, 8, 131071), 0);  // 2^14 * 131071 < 2^31
  EXPECT_EQ(matmul_operand_shift(8, 8, 131072), 1);  // 2^14 * 2^17 = 2^31
  EXPECT_EQ(matmul_operand_shift(16, 16, 1), 0);     // 2^30
  EXPECT_EQ(matmul_operand_shift(16, 16, 2), 1);
  EXPECT_EQ(matmul_operand_shift(16, 16, 7), 1);  // 7 * 2^28 < 2^31
  EXPECT_EQ(matmul_operand_shift(16, 16, 8), 2);
  EXPECT_EQ(matmul_operand_shift(16, 16, 64), 3);  // 64 * 2^24 = 2^30
  EXPECT_EQ(matmul_operand_shift(16, 8, 64), 0);   // 2^15 * 2^7 * 64 = 2^28
  EXPECT_EQ(matmul_operand_shift(16, 8, 512), 1);  // 2^31 without, 2^29 with u = 1
}

// s_x = ln 2, so exp_low[b] = 2^15 * 2^-b exactly; s_y = 1 / 127: M * 2^-r = 127 * 2^-30.
SoftmaxParams ln2_softmax() {
  SoftmaxParams p;
  p.exp_high[0] = 32768;
  for (int b = 0; b < 16; ++b) p.exp_low[static_cast<std::size_t>(b)] = 32768 >> b;
  p.output = Requant{127 << 23, 53, 0, -128, 127};
  return p;
}

TEST(SoftmaxRow, FourCodesByHand) {
  // x = [5, 3, 4, 5]: d = [0, -2, -1, 0], e = [32768, 8192, 16384, 32768], S = 90112,
  // R = floor(2^45 / 90112) = 390451572, p = [R, R / 4, R / 2, R] = [390451572, 97612893,
  // 195225786, 390451572]; y = rha(p * 127, 30) = [46.18, 11.55, 23.09, 46.18] -> 46, 12, 23, 46
  // (the float softmax times 127: 46.18, 11.55, 23.09, 46.18).
  const SoftmaxParams p = ln2_softmax();
  const std::int32_t x[4] = {5, 3, 4, 5};
  std::int32_t y[4] = {};
  softmax_row(x, nullptr, 4, p, y);
  EXPECT_EQ(std::vector<std::int32_t>(y, y + 4), (std::vector<std::int32_t>{46, 12, 23, 46}));
}

TEST(SoftmaxRow, MaskedPositionsLeaveTheMaximumAndTheSum) {
  // keep = [1, 0, 1, 0]: m = 5, e = [32768, -, 16384, -], S = 49152, R = 715827882;
  // y = rha([R, R / 2] * 127, 30) = [84.67, 42.33] -> 85, 42; masked -> 0.
  const SoftmaxParams p = ln2_softmax();
  const std::int32_t x[4] = {5, 3, 4, 9};  // the masked 9 does not set the maximum
  const std::uint8_t keep[4] = {1, 0, 1, 0};
  std::int32_t y[4] = {-1, -1, -1, -1};
  softmax_row(x, keep, 4, p, y);
  EXPECT_EQ(std::vector<std::int32_t>(y, y + 4), (std::vector<std::int32_t>{85, 0, 42, 0}));
  const std::uint8_t none[4] = {0, 0, 0, 0};
  softmax_row(x, none, 4, p, y);
  EXPECT_EQ(std::vector<std::int32_t>(y, y + 4), (std::vector<std::int32_t>{0, 0, 0, 0}));
}

TEST(SoftmaxExp, SixteenBitDifferencesMultiplyTheHighAndLowTables) {
  SoftmaxParams p = ln2_softmax();
  p.exp_high[1] = 16384;
  p.exp_low[3] = 4096;
  EXPECT_EQ(softmax_exp(p, 0), 32768);
  EXPECT_EQ(softmax_exp(p, -3), 4096);               // u < 256: exp_low alone (8-bit case)
  EXPECT_EQ(softmax_exp(p, -259), 2048);             // u = 256 + 3: 16384 * 4096 / 2^15
  EXPECT_EQ(softmax_exp(p, -(255 * 256 + 255)), 0);  // the tables' zeros
}

TEST(NormRow, LayerNormOfFourCodesByHand) {
  // x = [1, 2, 3, 6]: S1 = 12, S2 = 50, c = 4x - 12 = [-8, -4, 0, 12], D = 4 * 50 - 144 = 56.
  // W = 56 (bit length 6) -> g = 27, s = isqrt(56 * 2^54) = 1004393506,
  // inv = floor(2^54 / s) = 17935598, t = rha(c * inv, 11) = [-70061, -35030, 0, 105091]
  // (the float (x - 3) / sqrt(3.5) * 2^16: -70057.6, -35028.8, 0, 105086.4).
  // gamma / (2^16 s_y) = 2^-11 (G = 2^30, r = 41); beta_2 / s_y = 16 (B = 16 * 2^41):
  // y = rha(t / 2048) + [0, 0, 16, 0] = [-34, -17, 16, 51].
  const std::int32_t x[4] = {1, 2, 3, 6};
  const std::int64_t bias16 = std::int64_t{16} << 41;
  const NormAffine affine[4] = {
      {1 << 30, 41, 0}, {1 << 30, 41, 0}, {1 << 30, 41, bias16}, {1 << 30, 41, 0}};
  std::int32_t y[4] = {};
  norm_row(x, 4, true, 0, affine, -128, 127, y);
  EXPECT_EQ(std::vector<std::int32_t>(y, y + 4), (std::vector<std::int32_t>{-34, -17, 16, 51}));
  // The identity affine (G = 1, r = 0) exposes t.
  const NormAffine identity[4] = {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}};
  norm_row(x, 4, true, 0, identity, std::numeric_limits<std::int32_t>::min(),
           std::numeric_limits<std::int32_t>::max(), y);
  EXPECT_EQ(std::vector<std::int32_t>(y, y + 4),
            (std::vector<std::int32_t>{-70061, -35030, 0, 105091}));
}

TEST(NormRow, RmsNormAndTheZeroRow) {
  // x = [3, -4]: c = 2x = [6, -8], D = 2 * 25 = 50 -> g = 27, s = 949062656, inv = 18981253,
  // t = [55609, -74146] (float x / sqrt(12.5) * 2^16: 55608.5, -74144.7); y = rha(t / 2048).
  const std::int32_t x[2] = {3, -4};
  const NormAffine affine[2] = {{1 << 30, 41, 0}, {1 << 30, 41, 0}};
  std::int32_t y[2] = {};
  norm_row(x, 2, false, 0, affine, -128, 127, y);
  EXPECT_EQ(y[0], 27);
  EXPECT_EQ(y[1], -36);
  // A constant row under LayerNorm without epsilon: W = 0, every t = 0, y = the bias alone.
  const std::int32_t flat[2] = {7, 7};
  const NormAffine biased[2] = {{1 << 30, 41, std::int64_t{5} << 41}, {1 << 30, 41, 0}};
  norm_row(flat, 2, true, 0, biased, -128, 127, y);
  EXPECT_EQ(y[0], 5);
  EXPECT_EQ(y[1], 0);
}

TEST(NormRow, SixteenBitExtremesStayWithinInt64) {
  // n = 2^14 codes alternating -32768 / 32767 (the largest D); t_k ~ +-2^16 for every k.
  const std::int64_t n = 1 << 14;
  std::vector<std::int32_t> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) x[static_cast<std::size_t>(k)] = k % 2 ? 32767 : -32768;
  std::vector<NormAffine> identity(static_cast<std::size_t>(n), NormAffine{1, 0, 0});
  norm_row(x.data(), n, true, 0, identity.data(), std::numeric_limits<std::int32_t>::min(),
           std::numeric_limits<std::int32_t>::max(), y.data());
  EXPECT_NEAR(y[0], -65536, 2);
  EXPECT_NEAR(y[1], 65536, 2);
}

}  // namespace
}  // namespace tessel::intops
