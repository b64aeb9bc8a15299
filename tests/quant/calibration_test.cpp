// Threshold selection on hand-built statistics: each method's rule, checked with exact numbers.
#include "compiler/quant/calibration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tessel::quant {
namespace {

TEST(Calibration, MinMaxIsTheLargestMagnitude) {
  TensorStats stats;
  ASSERT_TRUE(stats.observe_range(std::vector<float>{1.0f, -3.0f, 2.0f}).ok());
  ASSERT_TRUE(stats.observe_range(std::vector<float>{0.5f}).ok());
  EXPECT_EQ(stats.count(), 4);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::minmax, 99.99, 8}), 3.0);
}

TEST(Calibration, NanAndInfAreReportedWithTheirIndex) {
  TensorStats stats;
  const auto nan =
      stats.observe_range(std::vector<float>{1.0f, 2.0f, std::numeric_limits<float>::quiet_NaN()});
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.reason(), "NaN at element 2");
  const auto inf = stats.observe_range(std::vector<float>{-std::numeric_limits<float>::infinity()});
  ASSERT_FALSE(inf.ok());
  EXPECT_EQ(inf.reason(), "Inf at element 0");
}

TEST(Calibration, HistogramBinsMagnitudesAndPutsTheMaximumInTheLastBin) {
  TensorStats stats;
  const std::vector<float> v = {0.0f, -0.5f, 1.2f, 3.9f, -4.0f};
  ASSERT_TRUE(stats.observe_range(v).ok());
  stats.start_histogram(4);  // bins of width 1 over [0, 4]
  stats.observe_histogram(v);
  EXPECT_EQ(stats.histogram(), (std::vector<double>{2, 1, 0, 2}));
  EXPECT_EQ(stats.bin_width(), 1.0);
}

TEST(Calibration, PercentileTakesTheUpperEdgeOfTheBinReachingTheTarget) {
  // Ten bins of width 1, one value each: 50% is reached in bin 4 -> edge 5.
  const auto stats = TensorStats::from_histogram(10.0, std::vector<double>(10, 1.0));
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::percentile, 50.0, 8}), 5.0);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::percentile, 91.0, 8}), 10.0);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::percentile, 100.0, 8}), 10.0);
}

TEST(Calibration, MseTradesClippingAgainstRounding) {
  // bits 2 -> qmax 1. One value at bin centre 3.5 of four unit bins. Candidate T = 1..4:
  // T=1 -> 1 (err 6.25), T=2 -> 2 (2.25), T=3 -> 3 (0.25), T=4 -> 4 (0.25); the first minimum wins.
  const auto stats = TensorStats::from_histogram(4.0, {0, 0, 0, 1});
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::mse, 99.99, 2}), 3.0);
}

TEST(Calibration, MseClipsARareOutlier) {
  std::vector<double> hist(2048, 0.0);
  for (int b = 0; b < 100; ++b) hist[b] = 1e7;  // enough mass that rounding noise dominates
  hist[2047] = 1.0;                             // one outlier at the top
  const auto stats = TensorStats::from_histogram(2048.0, hist);
  const double t = choose_threshold(stats, {CalibrationMethod::mse, 99.99, 8});
  EXPECT_LT(t, 400.0);
  EXPECT_GE(t, 100.0);
}

TEST(Calibration, EntropyKeepsAnUnclippedUniformRangeExactly) {
  // Uniform mass on bins [0, 256) of 2048 unit bins: at i = 256 P has no clipped mass and Q
  // (pairs of bins merged, then spread back) equals P, so KL = 0 there and T = 256.
  std::vector<double> hist(2048, 0.0);
  for (int b = 0; b < 256; ++b) hist[b] = 1e4;  // enough values that no bins merge
  const auto stats = TensorStats::from_histogram(2048.0, hist);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::entropy, 99.99, 8}), 256.0);
}

TEST(Calibration, EntropyLeavesExactZerosOutOfTheReferenceDistribution) {
  // A post-ReLU tensor: half its values are exactly 0 (bin 0), the rest uniform on [0, 256).
  // Without the zeros the rule above applies (T = 256). Counted in bin 0, they make every Q
  // that merges bin 0 with a neighbour (i >= 256) differ from P, and the search clips.
  std::vector<double> hist(2048, 0.0);
  for (int b = 0; b < 256; ++b) hist[b] = 1e4;
  hist[0] += 2.56e6;
  const ThresholdOptions entropy{CalibrationMethod::entropy, 99.99, 8};
  EXPECT_EQ(choose_threshold(TensorStats::from_histogram(2048.0, hist, 2.56e6), entropy), 256.0);
  EXPECT_LT(choose_threshold(TensorStats::from_histogram(2048.0, hist, 0.0), entropy), 256.0);
}

TEST(Calibration, EntropyMergesBinsOfASmallTensorAndKeepsItsMaximum) {
  // 2048 values, one per bin: fewer than 16 per bin, so pairs merge down to 128 bins, where the
  // only candidate is the whole range.
  const auto stats = TensorStats::from_histogram(2048.0, std::vector<double>(2048, 1.0));
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::entropy, 99.99, 8}), 2048.0);
  // 4096 values in bins [0, 256): pairs merge while 4096 < 16 x bins, down to 256 bins of width
  // 8; the data then fills merged bins [0, 32), and the first candidate (128 bins, T = 1024)
  // already clips nothing, so KL = 0 there.
  std::vector<double> hist(2048, 0.0);
  for (int b = 0; b < 256; ++b) hist[b] = 16.0;
  EXPECT_EQ(choose_threshold(TensorStats::from_histogram(2048.0, hist),
                             {CalibrationMethod::entropy, 99.99, 8}),
            1024.0);
}

TEST(Calibration, HistogramCountsExactZeros) {
  TensorStats stats;
  const std::vector<float> values{0.0f, -0.0f, 1.0f, 0.25f, 0.0f};
  ASSERT_TRUE(stats.observe_range(values).ok());
  stats.start_histogram(4);
  stats.observe_histogram(values);
  EXPECT_EQ(stats.zero_count(), 3.0);
  EXPECT_EQ(stats.histogram(), (std::vector<double>{3.0, 1.0, 0.0, 1.0}));
}

// A large tensor through the four interleaved count arrays and their tail (3 x 2^16 + 3
// values): each value is counted once, in its bin, zeros both in bin 0 and apart.
TEST(Calibration, HistogramOfALargeTensorCountsEachValueOnce) {
  constexpr std::size_t kCount = 3 * (std::size_t{1} << 16) + 3;
  std::vector<float> values(kCount);
  for (std::size_t i = 0; i < kCount; ++i)  // bins of width 1: value i lands in bin i % 7
    values[i] = i % 5 == 0 ? 0.0f : static_cast<float>(i % 7) + 0.5f;
  values[kCount - 1] = -7.0f;  // max |x| = 7: the last bin's upper edge
  TensorStats stats;
  ASSERT_TRUE(stats.observe_range(values).ok());
  stats.start_histogram(7);
  stats.observe_histogram(values);
  std::vector<double> expected(7, 0.0);
  double zeros = 0.0;
  for (std::size_t i = 0; i + 1 < kCount; ++i) {
    expected[i % 5 == 0 ? 0 : i % 7] += 1.0;
    zeros += i % 5 == 0;
  }
  expected[6] += 1.0;  // |-7| clamps into the last bin
  EXPECT_EQ(stats.histogram(), expected);
  EXPECT_EQ(stats.zero_count(), zeros);
}

TEST(Calibration, EntropyAtSixteenBitsFallsBackToMax) {
  const auto stats = TensorStats::from_histogram(7.0, std::vector<double>(2048, 1.0));
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::entropy, 99.99, 16}), 7.0);
}

TEST(Calibration, WideHeadroomScalesTheMaximumAtSixteenBitsOnly) {
  // Ten unit bins over [0, 10], one value each: percentile 50 gives 5 at 8 bits; at 16 bits with
  // headroom 2 every method gives 2 * 10, and headroom 0 leaves the method's own threshold.
  const auto stats = TensorStats::from_histogram(10.0, std::vector<double>(10, 1.0));
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::percentile, 50.0, 8, 2.0}), 5.0);
  for (auto m : {CalibrationMethod::minmax, CalibrationMethod::percentile,
                 CalibrationMethod::entropy, CalibrationMethod::mse})
    EXPECT_EQ(choose_threshold(stats, {m, 50.0, 16, 2.0}), 20.0);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::percentile, 50.0, 16, 0.0}), 5.0);
  EXPECT_EQ(choose_threshold(stats, {CalibrationMethod::minmax, 50.0, 16, 1.5}), 15.0);
}

TEST(Calibration, AllZeroTensorHasThresholdZero) {
  TensorStats stats;
  ASSERT_TRUE(stats.observe_range(std::vector<float>{0.0f, 0.0f}).ok());
  stats.start_histogram(2048);
  stats.observe_histogram(std::vector<float>{0.0f, 0.0f});
  for (auto m : {CalibrationMethod::minmax, CalibrationMethod::percentile,
                 CalibrationMethod::entropy, CalibrationMethod::mse})
    for (int bits : {8, 16}) EXPECT_EQ(choose_threshold(stats, {m, 99.99, bits, 2.0}), 0.0);
}

TEST(Calibration, KlDivergenceOfEqualDistributionsIsZero) {
  const std::vector<double> p = {1, 2, 3, 0};
  EXPECT_EQ(kl_divergence(p, p), 0.0);
  EXPECT_GT(kl_divergence(p, std::vector<double>{3, 2, 1, 0}), 0.0);
}

TEST(Calibration, MethodNamesParseWithSuggestions) {
  EXPECT_EQ(parse_calibration_method("kl").value(), CalibrationMethod::entropy);
  const auto bad = parse_calibration_method("percentil");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(),
            "unknown calibration method 'percentil' (expected minmax, percentile, entropy (or kl) "
            "or mse); did you mean 'percentile'?");
}

}  // namespace
}  // namespace tessel::quant

namespace tessel::quant {
namespace {

// observe_histogram counts 16 values at a time on an AVX-512 CPU (exact zeros apart), 8 with AVX2
// and not AVX-512 (ctest's quant_tests_avx2 takes that path on any AVX2 CPU): the bins
// must be those of the one-value rule, |x| * (1 / width) truncated and clamped to the last bin.
TEST(Calibration, HistogramCountsEveryValueByTheScalarRule) {
  std::uint64_t state = 0x243f6a8885a308d3ull;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<float> v;
  for (int i = 0; i < 10007; ++i) {
    const std::uint64_t r = next();
    const float magnitude = static_cast<float>(static_cast<double>(r % 1000003) / 1000003.0 * 6.0);
    // About a third exact zeros (both signs), as after a ReLU; the rest of both signs.
    const float x = r % 3 == 0 ? 0.0f : magnitude;
    v.push_back((r >> 63) ? -x : x);
  }
  v[17] = 6.0f;  // the maximum: the last bin
  v[18] = -6.0f;
  v[19] = 0.75f;  // the first edge of the 8-bin histogram below (width 0.75)
  TensorStats stats;
  ASSERT_TRUE(stats.observe_range(v).ok());
  stats.start_histogram(8);
  ASSERT_EQ(stats.bin_width(), 0.75);
  for (const std::size_t length : {v.size(), std::size_t{15}, std::size_t{16}, std::size_t{33}})
    stats.observe_histogram(std::span<const float>(v.data(), length));
  std::vector<double> want(8, 0.0);
  double zeros = 0;
  for (const std::size_t length : {v.size(), std::size_t{15}, std::size_t{16}, std::size_t{33}})
    for (std::size_t i = 0; i < length; ++i) {
      const auto bin = static_cast<std::int64_t>(std::fabs(static_cast<double>(v[i])) * (1 / 0.75));
      want[static_cast<std::size_t>(std::min<std::int64_t>(bin, 7))] += 1;
      zeros += v[i] == 0.0f;
    }
  EXPECT_EQ(stats.histogram(), want);
  EXPECT_EQ(stats.zero_count(), zeros);
  EXPECT_GT(zeros, 3000);
}

}  // namespace
}  // namespace tessel::quant
