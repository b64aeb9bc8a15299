// Threshold selection from calibration statistics: min/max, percentile, KL-divergence, MSE.
#include "compiler/quant/calibration.hpp"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "compiler/quant/realize.hpp"
#include "support/strings.hpp"

namespace tessel::quant {

std::string_view to_string(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::minmax:
      return "minmax";
    case CalibrationMethod::percentile:
      return "percentile";
    case CalibrationMethod::entropy:
      return "entropy";
    case CalibrationMethod::mse:
      return "mse";
  }
  return "?";
}

std::vector<std::string> calibration_method_names() {
  return {"minmax", "percentile", "entropy", "kl", "mse"};
}

Result<CalibrationMethod> parse_calibration_method(std::string_view text) {
  if (text == "minmax") return CalibrationMethod::minmax;
  if (text == "percentile") return CalibrationMethod::percentile;
  if (text == "entropy" || text == "kl") return CalibrationMethod::entropy;
  if (text == "mse") return CalibrationMethod::mse;
  return fail("unknown calibration method '" + std::string(text) +
              "' (expected minmax, percentile, entropy (or kl) or mse)" +
              did_you_mean(text, calibration_method_names()));
}

Status TensorStats::observe_range(std::span<const float> values) {
  // max |x| on the bit patterns: clearing the sign bit gives |x|, and non-negative floats order
  // as their patterns do, so an integer max (which vectorises) equals the float max; any
  // pattern at or above +Inf's is an Inf or a NaN.
  constexpr std::uint32_t kMagnitude = 0x7fffffffu, kInfinity = 0x7f800000u;
  std::uint32_t max_bits = 0;
  for (const float v : values)
    max_bits = std::max(max_bits, std::bit_cast<std::uint32_t>(v) & kMagnitude);
  if (max_bits >= kInfinity) {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        return fail(std::string(std::isnan(values[i]) ? "NaN" : "Inf") + " at element " +
                    std::to_string(i));
  }
  max_abs_ = std::max(max_abs_, static_cast<double>(std::bit_cast<float>(max_bits)));
  // Sum of squares in four double lanes (vectorises; the order is the values' own, fixed for a
  // given executor layout).
  double lanes[4] = {0.0, 0.0, 0.0, 0.0};
  const std::size_t n = values.size(), whole = n / 4 * 4;
  for (std::size_t i = 0; i < whole; i += 4)
    for (std::size_t j = 0; j < 4; ++j) {
      const double v = values[i + j];
      lanes[j] += v * v;
    }
  for (std::size_t i = whole; i < n; ++i) lanes[i % 4] += double{values[i]} * values[i];
  sum_squares_ += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  count_ += static_cast<std::int64_t>(values.size());
  return {};
}

void TensorStats::observe_moments(std::span<const float> values,
                                  std::span<const std::int64_t> shape, bool channels_last) {
  if (shape.size() < 2 || values.empty()) return;
  const auto channels = static_cast<std::size_t>(shape[1]);
  std::size_t inner = 1;
  for (std::size_t d = 2; d < shape.size(); ++d) inner *= static_cast<std::size_t>(shape[d]);
  if (channels == 0 || values.size() % (channels * inner) != 0) return;
  const std::size_t outer = values.size() / (channels * inner);
  if (channel_sum_.empty()) {
    channel_sum_.assign(channels, 0.0);
    channel_squares_.assign(channels, 0.0);
  }
  if (channel_sum_.size() != channels) return;
  // Per channel in a fixed order (the executor's layout), so the sums are deterministic.
  for (std::size_t o = 0, i = 0; o < outer; ++o) {
    if (channels_last) {
      for (std::size_t p = 0; p < inner; ++p)
        for (std::size_t c = 0; c < channels; ++c, ++i) {
          const double v = values[i];
          channel_sum_[c] += v;
          channel_squares_[c] += v * v;
        }
    } else {
      for (std::size_t c = 0; c < channels; ++c) {
        double sum = 0.0, squares = 0.0;
        for (std::size_t p = 0; p < inner; ++p, ++i) {
          const double v = values[i];
          sum += v;
          squares += v * v;
        }
        channel_sum_[c] += sum;
        channel_squares_[c] += squares;
      }
    }
  }
  channel_count_ += static_cast<double>(outer * inner);
  if (shape.size() < 3 || channels_last) return;
  const auto last = static_cast<std::size_t>(shape.back());
  if (last_sum_.empty()) {
    last_sum_.assign(last, 0.0);
    last_squares_.assign(last, 0.0);
  }
  if (last_sum_.size() != last || values.size() % last != 0) return;
  for (std::size_t i = 0; i < values.size();)
    for (std::size_t j = 0; j < last; ++j, ++i) {
      const double v = values[i];
      last_sum_[j] += v;
      last_squares_[j] += v * v;
    }
  last_count_ += static_cast<double>(values.size() / last);
}

ChannelMoments TensorStats::moments() const {
  const auto axis = [](const std::vector<double>& sum, const std::vector<double>& squares,
                       double count) {
    AxisMoments m;
    if (count <= 0.0) return m;
    m.count = count;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      m.mean.push_back(sum[i] / count);
      m.mean_square.push_back(squares[i] / count);
    }
    return m;
  };
  return {axis(channel_sum_, channel_squares_, channel_count_),
          axis(last_sum_, last_squares_, last_count_)};
}

void TensorStats::start_histogram(int bins) {
  histogram_.assign(static_cast<std::size_t>(std::max(bins, 1)), 0.0);
  zero_count_ = 0.0;
  bin_width_ = max_abs_ / static_cast<double>(histogram_.size());
}

namespace {

// Counted in integers (exact, like the sums of 1.0 they replace) and without a branch: zeros
// (about half of a post-ReLU tensor, in no predictable order) fall into bin 0 like any value
// below the first edge. Four count arrays, one per element mod 4, cut the chains of increments
// of one bin (bin 0 again) that each wait for the previous store.
constexpr std::size_t kWays = 4;

// The bin of |v|: what every path below computes, in double, truncated, clamped to the last.
std::size_t bin_of(float v, double inverse_width, std::int64_t last) {
  const auto bin = static_cast<std::int64_t>(std::fabs(static_cast<double>(v)) * inverse_width);
  return static_cast<std::size_t>(std::min(bin, last));
}

// Scalar: counts[way * bins + bin] for every value; returns the number of exact zeros.
std::int64_t count_scalar(std::span<const float> values, double inverse_width, std::int64_t last,
                          std::int64_t* counts) {
  const auto bins = static_cast<std::size_t>(last + 1);
  std::int64_t zeros = 0;
  std::size_t i = 0;
  for (; i + kWays <= values.size(); i += kWays)
    for (std::size_t way = 0; way < kWays; ++way) {
      zeros += values[i + way] == 0.0f;
      ++counts[way * bins + bin_of(values[i + way], inverse_width, last)];
    }
  for (; i < values.size(); ++i) {
    zeros += values[i] == 0.0f;
    ++counts[bin_of(values[i], inverse_width, last)];
  }
  return zeros;
}

// Counts the bins pending[0 .. filled) into the kWays interleaved copies of the histogram, as
// count_scalar does for its values.
template <class Index>
void count_bins(const Index* pending, std::size_t filled, std::size_t bins, std::int64_t* counts) {
  std::size_t k = 0;
  for (; k + kWays <= filled; k += kWays)
    for (std::size_t way = 0; way < kWays; ++way)
      ++counts[way * bins + static_cast<std::size_t>(pending[k + way])];
  for (; k < filled; ++k) ++counts[static_cast<std::size_t>(pending[k])];
}

#define TESSEL_HISTOGRAM_TARGET __attribute__((target("avx512f,avx512dq")))

// The bins of the 8 values of `x` selected by `mask`, stored packed at `out`; returns how many.
TESSEL_HISTOGRAM_TARGET inline std::size_t pack_bins(__m256 x, __mmask8 mask, __m512d inverse_width,
                                                     __m512i last, std::int64_t* out) {
  // The zero-masking forms (all lanes kept): GCC 12's unmasked ones start from an "undefined"
  // vector that -Wmaybe-uninitialized reports.
  constexpr __mmask8 kAll = 0xff;
  const __m512d magnitude = _mm512_abs_pd(_mm512_maskz_cvtps_pd(kAll, x));
  const __m512i bin = _mm512_maskz_min_epi64(
      kAll, _mm512_maskz_cvttpd_epi64(kAll, _mm512_mul_pd(magnitude, inverse_width)), last);
  _mm512_mask_compressstoreu_epi64(out, mask, bin);
  return static_cast<std::size_t>(__builtin_popcount(mask));
}

// AVX-512: the bins of 16 values at a time, computed as bin_of does (widen to double, clear the
// sign, multiply, truncate to int64, clamp), exact zeros counted by a compare and left out of
// the increments (they are added to bin 0 once at the end), the other bins packed into a small
// buffer and counted by the scalar loop. Same counts as count_scalar.
TESSEL_HISTOGRAM_TARGET std::int64_t count_avx512(std::span<const float> values,
                                                  double inverse_width, std::int64_t last,
                                                  std::int64_t* counts) {
  const auto bins = static_cast<std::size_t>(last + 1);
  constexpr std::size_t kBuffer = 1024;
  alignas(64) std::int64_t pending[kBuffer + 16];
  const __m512d scale = _mm512_set1_pd(inverse_width);
  const __m512i top = _mm512_set1_epi64(last);
  std::int64_t zeros = 0;
  std::size_t i = 0, filled = 0;
  const auto flush = [&] {
    count_bins(pending, filled, bins, counts);
    filled = 0;
  };
  for (; i + 16 <= values.size(); i += 16) {
    const __m512 x = _mm512_loadu_ps(values.data() + i);
    const __mmask16 nonzero = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    zeros += 16 - __builtin_popcount(nonzero);
    filled += pack_bins(_mm256_loadu_ps(values.data() + i), static_cast<__mmask8>(nonzero), scale,
                        top, pending + filled);
    filled += pack_bins(_mm256_loadu_ps(values.data() + i + 8), static_cast<__mmask8>(nonzero >> 8),
                        scale, top, pending + filled);
    if (filled >= kBuffer) flush();
  }
  flush();
  counts[0] += zeros;
  return zeros + count_scalar(values.subspan(i), inverse_width, last, counts);
}

#define TESSEL_HISTOGRAM_AVX2_TARGET __attribute__((target("avx2")))

// count_avx512 on CPUs with AVX2 and not AVX-512 (session 17's AMD EPYC host): 8 values a step,
// each bin as bin_of computes it, except that the clamp to the last bin comes before the
// truncation (the same bin for every finite |v| * (1 / width): both are the last bin from there
// on), so that the truncation fits int32. Zeros are counted by a compare and take bin 0 with
// the rest (no compress store in AVX2).
TESSEL_HISTOGRAM_AVX2_TARGET std::int64_t count_avx2(std::span<const float> values,
                                                     double inverse_width, std::int64_t last,
                                                     std::int64_t* counts) {
  const auto bins = static_cast<std::size_t>(last + 1);
  constexpr std::size_t kBuffer = 1024;
  alignas(32) std::int32_t pending[kBuffer + 8];
  const __m256d scale = _mm256_set1_pd(inverse_width);
  const __m256d top = _mm256_set1_pd(static_cast<double>(last));
  const __m256d sign = _mm256_set1_pd(-0.0);
  std::int64_t zeros = 0;
  std::size_t i = 0, filled = 0;
  const auto flush = [&] {
    count_bins(pending, filled, bins, counts);
    filled = 0;
  };
  for (; i + 8 <= values.size(); i += 8) {
    const __m256 x = _mm256_loadu_ps(values.data() + i);
    zeros += __builtin_popcount(static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ))));
    const __m128 halves[2] = {_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1)};
    for (const __m128 half : halves) {
      const __m256d magnitude = _mm256_andnot_pd(sign, _mm256_cvtps_pd(half));
      const __m128i bin = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_mul_pd(magnitude, scale), top));
      _mm_store_si128(reinterpret_cast<__m128i*>(pending + filled), bin);
      filled += 4;
    }
    if (filled >= kBuffer) flush();
  }
  flush();
  return zeros + count_scalar(values.subspan(i), inverse_width, last, counts);
}

bool histogram_avx512_available() {
  static const bool available = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512dq") && quant_avx512_allowed();
  return available;
}

}  // namespace

void TensorStats::observe_histogram(std::span<const float> values) {
  const auto last = static_cast<std::int64_t>(histogram_.size()) - 1;
  if (bin_width_ <= 0.0) {  // all-zero tensor: every value in bin 0
    histogram_[0] += static_cast<double>(values.size());
    zero_count_ += static_cast<double>(values.size());
    return;
  }
  const std::size_t bins = histogram_.size();
  std::vector<std::int64_t> counts(kWays * bins, 0);
  const double inverse_width = 1.0 / bin_width_;
  static const bool avx2 = __builtin_cpu_supports("avx2");
  const std::int64_t zeros = histogram_avx512_available()
                                 ? count_avx512(values, inverse_width, last, counts.data())
                             : avx2 ? count_avx2(values, inverse_width, last, counts.data())
                                    : count_scalar(values, inverse_width, last, counts.data());
  for (std::size_t b = 0; b < bins; ++b) {
    std::int64_t total = 0;
    for (std::size_t way = 0; way < kWays; ++way) total += counts[way * bins + b];
    histogram_[b] += static_cast<double>(total);
  }
  zero_count_ += static_cast<double>(zeros);
}

TensorStats TensorStats::from_histogram(double max_abs, std::vector<double> histogram,
                                        double zero_count) {
  TensorStats stats;
  stats.zero_count_ = zero_count;
  stats.max_abs_ = max_abs;
  stats.count_ =
      static_cast<std::int64_t>(std::accumulate(histogram.begin(), histogram.end(), 0.0));
  stats.histogram_ = std::move(histogram);
  stats.bin_width_ =
      stats.histogram_.empty() ? 0.0 : max_abs / static_cast<double>(stats.histogram_.size());
  return stats;
}

namespace {

// Normalises to a probability distribution, then moves eps of mass onto each zero bin, taken
// evenly from the non-zero bins (TVM's _smooth_distribution). Empty or all-zero -> false.
bool smooth(std::vector<double>& p) {
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  if (total <= 0.0) return false;
  std::size_t zeros = 0;
  for (auto& v : p) {
    v /= total;
    if (v == 0.0) ++zeros;
  }
  const std::size_t nonzeros = p.size() - zeros;
  constexpr double eps = 1e-4;
  const double eps1 = eps * static_cast<double>(zeros) / static_cast<double>(nonzeros);
  for (auto& v : p) v += v == 0.0 ? eps : -eps1;
  return true;
}

double entropy_threshold(const TensorStats& stats, int levels) {
  // Exact zeros leave the reference distribution: merging bin 0's zeros with their neighbours
  // is what made Q differ from P most, so the search chose the smallest candidate (128 bins,
  // 1/16 of the range) on every post-ReLU tensor — the 5-10 dB of session 1.
  std::vector<double> hist = stats.histogram();
  if (levels >= static_cast<int>(hist.size())) return stats.max_abs();
  hist[0] = std::max(0.0, hist[0] - stats.zero_count());
  // A small tensor (ResNet's 512 pooled features x 4 samples = 2048 values in 2048 bins) gives a
  // histogram of isolated ones whose KL prefers clipping at random (0.57 x max on ResNet-18's
  // avgpool, feeding the logits). Merge pairs of bins until each holds kMinValuesPerBin values
  // on average or only `levels` bins remain (then T = max |x|).
  constexpr double kMinValuesPerBin = 16.0;
  const double nonzero_values = std::accumulate(hist.begin(), hist.end(), 0.0);
  while (static_cast<int>(hist.size()) > levels && hist.size() % 2 == 0 &&
         nonzero_values < kMinValuesPerBin * static_cast<double>(hist.size())) {
    std::vector<double> merged(hist.size() / 2);
    for (std::size_t b = 0; b < merged.size(); ++b) merged[b] = hist[2 * b] + hist[2 * b + 1];
    hist = std::move(merged);
  }
  const int bins = static_cast<int>(hist.size());
  if (levels >= bins) return stats.max_abs();
  const double bin_width = stats.max_abs() / static_cast<double>(bins);
  double best_kl = std::numeric_limits<double>::infinity();
  int best_i = bins;
  std::vector<double> suffix(hist.size() + 1, 0.0);  // suffix[i] = sum(hist[i:])
  for (int i = bins - 1; i >= 0; --i) suffix[i] = suffix[i + 1] + hist[i];
  for (int i = levels; i <= bins; ++i) {
    std::vector<double> p(hist.begin(), hist.begin() + i);
    p[i - 1] += suffix[i];  // outliers clipped into the last bin
    // Q: hist[0:i] merged into `levels` chunks, then spread back evenly over each chunk's
    // non-zero bins of P.
    std::vector<double> q(i, 0.0);
    const int merged = i / levels;
    for (int j = 0; j < levels; ++j) {
      const int start = j * merged;
      const int stop = j == levels - 1 ? i : start + merged;
      double sum = 0.0;
      int nonzero = 0;
      for (int k = start; k < stop; ++k) {
        sum += hist[k];
        nonzero += p[k] != 0.0;
      }
      if (nonzero == 0) continue;
      for (int k = start; k < stop; ++k)
        if (p[k] != 0.0) q[k] = sum / nonzero;
    }
    if (!smooth(p) || !smooth(q)) continue;
    double kl = 0.0;
    for (int k = 0; k < i; ++k)
      if (p[k] > 0.0 && q[k] > 0.0) kl += p[k] * std::log(p[k] / q[k]);
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  return best_i * bin_width;
}

double percentile_threshold(const TensorStats& stats, double percentile) {
  const auto& hist = stats.histogram();
  const double total = std::accumulate(hist.begin(), hist.end(), 0.0);
  if (percentile >= 100.0 || total <= 0.0) return stats.max_abs();
  const double target = percentile / 100.0 * total;
  double cumulative = 0.0;
  for (std::size_t b = 0; b < hist.size(); ++b) {
    cumulative += hist[b];
    if (cumulative >= target) return static_cast<double>(b + 1) * stats.bin_width();
  }
  return stats.max_abs();
}

double mse_threshold(const TensorStats& stats, int levels) {
  const auto& hist = stats.histogram();
  const double w = stats.bin_width();
  const double qmax = levels - 1;
  double best_error = std::numeric_limits<double>::infinity();
  double best_t = stats.max_abs();
  for (std::size_t i = 1; i <= hist.size(); ++i) {
    const double t = static_cast<double>(i) * w;
    const double scale = t / qmax;
    double error = 0.0;
    for (std::size_t b = 0; b < hist.size(); ++b) {
      if (hist[b] == 0.0) continue;
      const double centre = (static_cast<double>(b) + 0.5) * w;
      const double q = std::min(std::round(centre / scale), qmax) * scale;
      error += hist[b] * (centre - q) * (centre - q);
    }
    if (error < best_error) {
      best_error = error;
      best_t = t;
    }
  }
  return best_t;
}

}  // namespace

double kl_divergence(std::span<const double> p_in, std::span<const double> q_in) {
  std::vector<double> p(p_in.begin(), p_in.end()), q(q_in.begin(), q_in.end());
  if (p.size() != q.size() || !smooth(p) || !smooth(q))
    return std::numeric_limits<double>::infinity();
  double kl = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k)
    if (p[k] > 0.0 && q[k] > 0.0) kl += p[k] * std::log(p[k] / q[k]);
  return kl;
}

double choose_threshold(const TensorStats& stats, const ThresholdOptions& options) {
  if (stats.max_abs() <= 0.0) return 0.0;
  if (options.bits > 8 && options.wide_headroom > 0.0)
    return options.wide_headroom * stats.max_abs();
  const int levels = 1 << (options.bits - 1);  // 128 for int8
  if (options.method == CalibrationMethod::minmax || stats.histogram().empty())
    return stats.max_abs();
  switch (options.method) {
    case CalibrationMethod::percentile:
      return percentile_threshold(stats, options.percentile);
    case CalibrationMethod::entropy:
      return entropy_threshold(stats, levels);
    case CalibrationMethod::mse:
      return mse_threshold(stats, levels);
    case CalibrationMethod::minmax:
      break;
  }
  return stats.max_abs();
}

}  // namespace tessel::quant
