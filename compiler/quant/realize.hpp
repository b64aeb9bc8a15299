// Annotate and realize: which tensors share a scale, which width each gets, and the quantized
// graph.
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.hpp"
#include "compiler/quant/calibration.hpp"
#include "compiler/quant/config.hpp"
#include "support/int_ops.hpp"
#include "support/result.hpp"

namespace tessel::quant {

/// Annotation of a float graph (fold-batchnorm and shape inference already run): the activation
/// tensors to calibrate and how they group into scale classes.
///
/// Ops that move data without changing values — MaxPool, Relu, Clip, Flatten, Reshape, Pad,
/// Split, Concat — put their inputs and outputs in one class (one scale), so they run on raw
/// integers; this is also how Concat's inputs get the concat's scale. Every class has one
/// width: the widest demanded by a Conv/Gemm reading a member (per-layer override), else the
/// default bits. A class's threshold is the largest threshold of its members, leaving out
/// pre-activation tensors (every reader is a Relu/Clip), whose clipped-away part does not count.
struct ScalePlan {
  std::vector<std::string> observed;              ///< every activation tensor, topological order
  std::map<std::string, int> class_of;            ///< activation tensor -> class index
  std::vector<std::vector<std::string>> classes;  ///< members, in `observed` order
  std::vector<int> class_bits;                    ///< 8 or 16 per class
  std::set<std::string> pre_activation;           ///< tensors left out of their class threshold
  std::map<std::string, int> op_bits;             ///< Conv/Gemm op -> weight width
  /// Constants that are values of a class (a Concat's class token, Where's constant branch):
  /// class index -> (constant, max |c|). Each widens its class's threshold to max |c| and is
  /// quantized at the class's scale (docs/quantization.md, "Constants in a scale class").
  std::map<int, std::vector<std::pair<std::string, double>>> class_constants;
};

/// Per-layer overrides that name no op of `graph`, or an op other than Conv/Gemm, each located
/// at the override's key in the config file (with a did-you-mean over the op names).
std::vector<Diagnostic> override_errors(const ir::Graph& graph, const QuantConfig& config);

/// Builds the plan. Fails with a message naming the op (and the config file/line for an
/// override) when: an op cannot be quantized (BatchNormalization or Scale left unfolded, an
/// AveragePool with count_include_pad=0 and padding, a Gemm whose C is not a constant vector),
/// a weight or bias holds NaN/Inf (naming the tensor and the element), or an override names no
/// Conv/Gemm op (with a did-you-mean over the op names).
Result<ScalePlan> plan_scales(const ir::Graph& graph, const QuantConfig& config);

/// A calibrated threshold per class (same indexing as ScalePlan::classes).
struct ClassThreshold {
  double threshold = 0.0;
  std::string from_tensor;  ///< the member that set it
};

/// Class thresholds from per-tensor thresholds, widened to the max |c| of the class's constants
/// (ScalePlan::class_constants). An all-zero class fails naming its tensors unless
/// config.allow_zero_range, which gives it threshold 1.0 (scale 1 / qmax).
Result<std::vector<ClassThreshold>> class_thresholds(
    const ScalePlan& plan, const std::map<std::string, double>& tensor_thresholds,
    const QuantConfig& config);

/// Realizes the quantized graph from the float graph, the plan and the class thresholds
/// (docs/quantization.md, "The quantized graph"):
/// - each graph input x stays f32 and feeds `Quantize` -> `x.q`;
/// - Conv/Gemm read integer weights (per-output-channel symmetric, scale max|w_c| / qmax) and an
///   i32 bias (scale s_in * s_w[c]), produce an i32 accumulator `<op>.acc` (per-channel scales
///   on axis 1), and a `Requantize` op `<op>.requantize` writes the op's original output;
/// - MaxPool/Relu/Clip/Flatten/Reshape/Pad/Split/Concat/Add/AveragePool/GlobalAveragePool keep
///   their names and run on integers with their tensors' scales;
/// - Softmax runs in float after a `Dequantize`; an integer graph output `y` is renamed `y.q`
///   and a `Dequantize` writes the f32 `y`, so output names do not change.
///
/// `mean_squares` (E[x^2] per calibrated tensor, TensorStats::mean_square) lets a Conv/Gemm/
/// MatMul by a constant choose an input shift (docs/quantization.md, "Input shift on
/// Conv/Gemm"); without it every input shift is 0. `moments` (per-channel E[x], E[x^2] per
/// calibrated tensor, TensorStats::moments) turns on bias correction of every Conv/Gemm with a
/// bias (docs/quantization.md, "Bias correction"); null: biases are beta * b rounded.
Result<ir::Graph> realize(const ir::Graph& graph, const ScalePlan& plan,
                          const std::vector<ClassThreshold>& thresholds,
                          const std::map<std::string, double>* mean_squares = nullptr,
                          const std::map<std::string, ChannelMoments>* moments = nullptr);

/// The integer parameters an executor derives from a quantized graph's scales: one place,
/// so the CPU executor, codegen and q.json agree.
/// Requantize: per channel of the input's QuantParams, M * 2^-r ~ s_acc[c] / s_out (double
/// division of the stored float scales); clamp to the output dtype's range.
std::vector<intops::Requant> requantize_params(const ir::Tensor& input, const ir::Tensor& output);
/// Add: M_a, M_b sharing r for s_a / s_y and s_b / s_y.
intops::AddRequant add_params(const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor& y);
/// AveragePool / GlobalAveragePool over windows of `window_elements`: s_in / (s_out * N).
intops::Requant average_params(const ir::Tensor& input, const ir::Tensor& output,
                               std::int64_t window_elements);
/// Clip bounds on integers: [max(qmin, rha(min / s)), min(qmax, rha(max / s))].
std::pair<std::int32_t, std::int32_t> clip_bounds(const ir::Tensor& tensor, double min, double max);
/// Bits of an integer dtype (8 for i8/u8, 16, 32).
int dtype_bits(ir::DType dtype);

/// False when the environment sets TESSEL_QUANT_NO_AVX512 (to anything but "" or "0"): then
/// quantize_values and the calibration histogram take their AVX2 forms (or the scalar ones),
/// what a CPU without AVX-512 runs (read once per process; ctest's `quant_tests_avx2` runs
/// their tests so on AVX-512 machines).
bool quant_avx512_allowed();

/// out[i] = intops::quantize_value(x[i], scale, bits) for every i (`out` as long as `x`), 8 at a
/// time on a CPU with AVX-512, 4 at a time with AVX2 and not AVX-512 (same integers: IEEE
/// division, then round half away from zero as trunc plus a step where |q - trunc(q)| >= 1/2,
/// exact for doubles). Returns sum |out[i]|.
/// Realize quantizes every weight with it (ResNet-50: 25.6 M).
std::int64_t quantize_values(std::span<const float> x, float scale, int bits,
                             std::span<std::int32_t> out);

/// q.json: the model, the config, every quantized tensor's dtype and scale(s), and the integer
/// parameters of every Requantize/Add/AveragePool/GlobalAveragePool op (per docs).
nlohmann::json scales_json(const ir::Graph& quantized, const QuantConfig& config,
                           const ScalePlan& plan, const std::vector<ClassThreshold>& thresholds);

}  // namespace tessel::quant
