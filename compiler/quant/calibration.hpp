// Calibration: statistics of a tensor over sample inputs, and the clipping threshold they give.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::quant {

/// How a tensor's clipping threshold T (scale = T / qmax) is chosen from its samples.
enum class CalibrationMethod {
  minmax,      ///< T = max |x| over every sample
  percentile,  ///< T = the p-th percentile of |x| (histogram resolution)
  entropy,     ///< TensorRT's KL-divergence: T minimising KL(P || Q) of the clipped histogram
               ///< of the non-zero |x|
  mse,         ///< T minimising the expected squared quantization error over the histogram
};

std::string_view to_string(CalibrationMethod method);
/// "minmax", "percentile", "entropy" (alias "kl"), "mse".
Result<CalibrationMethod> parse_calibration_method(std::string_view text);
/// The accepted spellings, for did-you-mean suggestions.
std::vector<std::string> calibration_method_names();

/// First and second moments of a tensor per index of one axis, over every other axis and every
/// sample: what bias correction needs (docs/quantization.md, "Bias correction").
struct AxisMoments {
  std::vector<double> mean, mean_square;  ///< E[x], E[x^2] per index of the axis
  double count = 0.0;                     ///< values averaged per index
  bool empty() const { return mean.empty(); }
};

/// A tensor's moments per index of axis 1 (a Conv's input channels, a Gemm's K) and, for a
/// tensor of rank >= 3 in plain (not channels-last) layout, per index of its last axis (the K
/// of a MatMul by a constant).
struct ChannelMoments {
  AxisMoments channel;
  AxisMoments last;
};

/// The statistics of one tensor's |x| across calibration samples, in two passes: pass 1 finds
/// max |x|; pass 2 fills a histogram of |x| over [0, max |x|] with `bins` equal bins (values at
/// the top edge fall into the last bin). The minmax method needs pass 1 only.
class TensorStats {
 public:
  /// Pass 1. Fails (naming nothing: the caller adds the tensor) on NaN or Inf, reporting the
  /// flat index of the first one.
  Status observe_range(std::span<const float> values);
  /// Starts pass 2 with `bins` >= 1 bins over [0, max_abs()].
  void start_histogram(int bins);
  /// Pass 2: counts |x| (values above max_abs(), impossible for the same samples, clamp).
  void observe_histogram(std::span<const float> values);

  double max_abs() const { return max_abs_; }
  std::int64_t count() const { return count_; }
  /// E[x^2] over every value pass 1 saw (0 before any): the input statistic of the input-shift
  /// choice (docs/quantization.md, "Input shift on Conv/Gemm").
  double mean_square() const {
    return count_ > 0 ? sum_squares_ / static_cast<double>(count_) : 0.0;
  }
  /// Moments per index of axis 1 and of the last axis (ChannelMoments) of `values`, whose
  /// logical shape is `shape` (NCHW), stored NHWC when `channels_last` (rank 4 only).
  void observe_moments(std::span<const float> values, std::span<const std::int64_t> shape,
                       bool channels_last);
  /// The moments observe_moments saw (empty axes before any).
  ChannelMoments moments() const;
  /// How many of the histogrammed values were exactly 0 (they are also counted in bin 0).
  /// Entropy calibration leaves them out: zero is exact under any symmetric scale, and the
  /// exact zeros of a post-ReLU tensor (about half of it) would otherwise dominate bin 0.
  double zero_count() const { return zero_count_; }
  const std::vector<double>& histogram() const { return histogram_; }
  /// Width of one bin (max_abs / bins); 0 before start_histogram or for an all-zero tensor.
  double bin_width() const { return bin_width_; }

  /// Builds the stats directly (tests, or a caller with precomputed histograms).
  static TensorStats from_histogram(double max_abs, std::vector<double> histogram,
                                    double zero_count = 0.0);

 private:
  double max_abs_ = 0.0;
  std::int64_t count_ = 0;
  double sum_squares_ = 0.0;
  std::vector<double> channel_sum_, channel_squares_, last_sum_, last_squares_;
  double channel_count_ = 0.0, last_count_ = 0.0;
  std::vector<double> histogram_;
  double zero_count_ = 0.0;
  double bin_width_ = 0.0;
};

/// Options of the threshold search.
struct ThresholdOptions {
  CalibrationMethod method = CalibrationMethod::entropy;
  double percentile = 99.99;  ///< for `percentile`, in (0, 100]
  int bits = 8;               ///< quantized width: 2^(bits-1) - 1 positive levels
  /// Wider than 8 bits and > 0: T = wide_headroom * max |x| whatever `method` says (a 16-bit
  /// tensor has range to spare, and clipping, not rounding, is its error; docs/quantization.md,
  /// "Width-aware thresholds"). 0: every width uses `method`.
  double wide_headroom = 0.0;
};

/// The clipping threshold T >= 0 for `stats` under `options` (0 only for an all-zero tensor).
/// `entropy` with more quantization levels than histogram bins (16 bits over 2048 bins) has
/// nothing to merge and returns max_abs (documented in docs/quantization.md). A width above 8
/// bits with `wide_headroom > 0` returns wide_headroom * max_abs for every method.
double choose_threshold(const TensorStats& stats, const ThresholdOptions& options);

/// KL(p || q) of two histograms after TVM/TensorRT's smoothing (zeros get eps = 1e-4 of mass
/// taken evenly from the non-zeros); exposed for tests.
double kl_divergence(std::span<const double> p, std::span<const double> q);

}  // namespace tessel::quant
