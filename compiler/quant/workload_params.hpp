// The derived integers of the modern-workload ops (docs/quantization.md, "Modern workloads"):
// unary tables, multiply and subtract multipliers, softmax exp tables, layer-norm constants and
// reduction requantizers, each computed from the stored float scales (and the op's float
// constants) in double, so that the CPU executor, codegen and q.json cannot disagree.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/int_nonlinear.hpp"
#include "support/result.hpp"

namespace tessel::quant {

/// The table of a unary function f from codes of scale s_x (`bits_x` wide) to codes of scale s_y
/// (`bits_y` wide): for 8-bit inputs 256 entries T[i + 128] = clamp(rha(f(s_x * i) / s_y)), for
/// 16-bit inputs 257 entries E[j] = clamp(rha(2^8 * f(s_x * 256 * (j - 128)) / s_y)) in output
/// codes times 2^kTableFractionBits (clamped to 2^8 * [qmin, qmax]). A NaN f gives 0, an infinite
/// one qmin/qmax by sign.
std::vector<std::int32_t> function_table(const std::function<double(double)>& f, double s_x,
                                         int bits_x, double s_y, int bits_y);

/// The real function a unary op's table holds: ir::unary_function for the unary kinds, x^e for
/// a Pow whose exponent is the constant scalar e. Fails naming the op for anything else.
Result<std::function<double(double)>> table_function(const ir::Graph& graph, const ir::Op& op);

/// The table of a unary op (or Pow by a constant) between the quantized tensors x and y.
Result<std::vector<std::int32_t>> unary_table(const ir::Graph& float_graph, const ir::Op& op,
                                              const ir::Tensor& x, const ir::Tensor& y);

/// Mul: M * 2^-r ~ s_a * s_b / s_y, clamp to y's type.
intops::Requant mul_params(const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor& y);

/// Softmax: the two exp tables of s_x and the output requantizer 2^-30 / s_y.
intops::SoftmaxParams softmax_params(const ir::Tensor& x, const ir::Tensor& y);

/// LayerNormalization / RMSNormalization over `n` elements per row.
struct NormParams {
  bool centre = true;                      ///< LayerNorm (subtract the mean) or RMSNorm
  std::int64_t n = 0;                      ///< elements per row (<= 2^14)
  std::int64_t epsilon_term = 0;           ///< E = rha(n^2 * epsilon / s_x^2), < 2^60
  std::vector<intops::NormAffine> affine;  ///< G_k, r_k, B_k per element of the row
  std::int32_t lo = 0, hi = 0;             ///< y's type range
};
/// The parameters of `op` (x, scale, [bias] as in the quantized graph: x and y integer tensors,
/// scale and bias f32 constants). Fails naming the op when n > 2^14, E >= 2^60, a scale or bias
/// is not one value or one per element, or gamma / (2^16 s_y) >= 2^31.
Result<NormParams> norm_params(const ir::Graph& graph, const ir::Op& op);

/// ReduceSum (s_x / s_y) and ReduceMean (s_x / (s_y * n)) over n reduced elements; fails naming
/// the op when an n-element sum of x's codes can leave int32.
Result<intops::Requant> reduce_params(const ir::Op& op, const ir::Tensor& x, const ir::Tensor& y);

/// The operand shift of an integer MatMul `op` (a x b): the op's `operand_shift` attribute when
/// the quantizer wrote one (softmax_operand_shift; -1, the default, means none), else
/// intops::matmul_operand_shift for the dtypes of a and b and the reduced length K = a's last dim;
/// 0 when b is a constant weight matrix (the headroom rule already bounds it). -1 when no shift
/// fits int32 or the attribute lies outside [0, the dtype rule's shift].
int matmul_shift(const ir::Op& op, const ir::Tensor& a, const ir::Tensor& b);

/// The operand shift of a MatMul whose first operand holds the codes of an integer Softmax over
/// its last axis (K = the row length), with the Softmax's output requantizer `probabilities`
/// (docs/quantization.md, "MatMul of two activations"): the smallest u >= 0 with
/// 2^(bits_b - 1 - u) * (floor(S_a / 2^u) + 1 + K) <= 2^31 - 1, where
/// S_a = min(K * qmax_a, floor(M * (2^30 + K) / 2^r) + K) bounds every row's sum of codes. -1 when
/// none leaves 2 bits.
int softmax_operand_shift(const intops::Requant& probabilities, int bits_a, int bits_b,
                          std::int64_t k);

/// Per output channel statistics of a weight tensor (the headroom rule's and the input-shift
/// choice's inputs).
struct WeightChannelStats {
  std::vector<double> max_abs, sum_abs, sum_squares;
  std::vector<double> sum_positive, sum_negative;  ///< sums of the w > 0 and of |w| for w < 0
  std::int64_t per_channel = 0;                    ///< K: weights per output channel

  /// The weights' accumulator sum per channel: sum |w| for an input of either sign;
  /// max(sum w+, sum |w-|) for an input >= 0 (docs/quantization.md, "Accumulator headroom").
  std::vector<double> headroom_sums(bool nonnegative_input) const;
};
/// The statistics of `w` (f32) with output channels on `axis`, each sum in storage order.
WeightChannelStats weight_channel_stats(const ir::Tensor& w, int axis);

/// The headroom rule's scale of one channel (docs/quantization.md, "Accumulator headroom"):
/// max(max|w| / qmax(weight_bits), (A * sum|w| + bias_abs / input_scale) * (1 + 2^-20) / room)
/// (`sum_abs`: WeightChannelStats::headroom_sums, max(sum w+, sum |w-|) for an input >= 0)
/// with A = 2^(input_bits - 1) and room = 2^31 - 2 - A * K / 2 (in double; the caller rounds it
/// up to a float). `bias_abs` is |beta * b_c| / alpha. Requires room > 0.
double headroom_weight_scale(double max_abs, double sum_abs, double bias_abs, std::int64_t k,
                             int weight_bits, int input_bits, double input_scale);

/// The input shift u of a Conv/Gemm/MatMul by a constant (docs/quantization.md, "Input shift on
/// Conv/Gemm"): the smallest u in [0, input_bits - 2] with room minimising
/// N(u) = 4^u s_x^2 sum w^2 + K m_x sum_c s_w[c](u)^2, where s_w[c](u) is the headroom scale
/// for an (input_bits - u)-bit input at scale s_x 2^u. 0 when `input_mean_square` <= 0 (no
/// statistics). -1 when no u leaves room (K too long for int32 at any shift).
/// `nonnegative_input`: the input's codes are >= 0 by construction (the headroom rule then
/// bounds max(sum w+, sum |w-|) instead of sum |w|).
int choose_input_shift(const WeightChannelStats& w, const std::vector<double>& bias_abs,
                       int weight_bits, int input_bits, double input_scale,
                       double input_mean_square, bool nonnegative_input = false);

}  // namespace tessel::quant
