// Derived integers of the modern-workload ops, per docs/quantization.md ("Modern workloads").
#include "compiler/quant/workload_params.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "compiler/ir/unary.hpp"
#include "compiler/quant/realize.hpp"

namespace tessel::quant {

namespace {

using ir::where;

double scale(const ir::Tensor& t) {
  return static_cast<double>(t.quant->scales.at(0));
}

// rha of a double (std::round: half away from zero), clamped to [lo, hi] (NaN -> 0).
std::int64_t round_clamped(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  return static_cast<std::int64_t>(std::clamp(std::round(v), lo, hi));
}

}  // namespace

std::vector<std::int32_t> function_table(const std::function<double(double)>& f, double s_x,
                                         int bits_x, double s_y, int bits_y) {
  const double lo = intops::qmin(bits_y), hi = intops::qmax(bits_y);
  std::vector<std::int32_t> table;
  if (bits_x == 8) {
    for (int i = -128; i <= 127; ++i)
      table.push_back(static_cast<std::int32_t>(round_clamped(f(s_x * i) / s_y, lo, hi)));
  } else {  // output codes times 2^kTableFractionBits: the interpolation rounds once
    const double one = std::ldexp(1.0, intops::kTableFractionBits);
    for (int j = 0; j <= 256; ++j)
      table.push_back(static_cast<std::int32_t>(
          round_clamped(f(s_x * 256.0 * (j - 128)) / s_y * one, lo * one, hi * one)));
  }
  return table;
}

Result<std::function<double(double)>> table_function(const ir::Graph& graph, const ir::Op& op) {
  if (ir::is_unary_function(op.kind))
    return std::function<double(double)>([op](double x) { return ir::unary_function(op, x); });
  if (op.kind == ir::OpKind::Pow && op.inputs.size() >= 2) {
    const ir::Tensor& e = graph.tensor(op.inputs[1]);
    if (e.constant && e.f32_values.size() == 1) {
      const double exponent = e.f32_values[0];
      return std::function<double(double)>([exponent](double x) { return std::pow(x, exponent); });
    }
    return fail(where(op) + ": the exponent %" + op.inputs[1] +
                " must be a constant scalar to become a table");
  }
  return fail(where(op) + ": not a unary function");
}

Result<std::vector<std::int32_t>> unary_table(const ir::Graph& float_graph, const ir::Op& op,
                                              const ir::Tensor& x, const ir::Tensor& y) {
  auto f = table_function(float_graph, op);
  if (!f) return f.failure();
  return function_table(f.value(), scale(x), dtype_bits(x.dtype), scale(y), dtype_bits(y.dtype));
}

intops::Requant mul_params(const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor& y) {
  const int bits = dtype_bits(y.dtype);
  return intops::make_requant(scale(a) * scale(b) / scale(y), intops::qmin(bits),
                              intops::qmax(bits));
}

intops::SoftmaxParams softmax_params(const ir::Tensor& x, const ir::Tensor& y) {
  intops::SoftmaxParams p;
  const double s_x = scale(x);
  constexpr double kOne = 32768.0;  // 2^15
  for (int i = 0; i < 256; ++i) {
    p.exp_high[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(std::round(kOne * std::exp(-s_x * 256.0 * i)));
    p.exp_low[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(std::round(kOne * std::exp(-s_x * i)));
  }
  const int bits = dtype_bits(y.dtype);
  p.output =
      intops::make_requant(std::ldexp(1.0, -30) / scale(y), intops::qmin(bits), intops::qmax(bits));
  return p;
}

namespace {

// G_k, r_k, B_k for gamma_k / (2^16 s_y) and beta_k / s_y: B_k stays within 2^61 by lowering
// r_k (and G_k with it) where beta_k / s_y * 2^r_k would not; a bias that large saturates the
// output whatever G_k is.
intops::NormAffine norm_affine(double multiplier, double bias_codes) {
  constexpr double kBiasLimit = 2305843009213693952.0;  // 2^61
  intops::NormAffine a;
  int shift = 0;
  double magnitude = std::fabs(multiplier);
  if (magnitude > 0.0) shift = intops::quantize_multiplier(magnitude).shift;
  while (shift > 0 && std::fabs(bias_codes) * std::ldexp(1.0, shift) >= kBiasLimit) --shift;
  if (magnitude > 0.0) {
    const double m = std::round(std::ldexp(magnitude, shift));
    a.multiplier = static_cast<std::int32_t>(multiplier < 0.0 ? -m : m);
  }
  a.shift = shift;
  a.bias = static_cast<std::int64_t>(
      std::clamp(std::round(bias_codes * std::ldexp(1.0, shift)), -kBiasLimit, kBiasLimit));
  return a;
}

}  // namespace

Result<NormParams> norm_params(const ir::Graph& graph, const ir::Op& op) {
  const ir::Tensor& x = graph.tensor(op.inputs[0]);
  const ir::Tensor& y = graph.tensor(op.outputs[0]);
  NormParams p;
  p.centre = op.kind == ir::OpKind::LayerNormalization;
  std::int64_t axis = op.get_int("axis");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  if (axis < 0) axis += rank;
  p.n = 1;
  for (std::int64_t d = axis; d < rank; ++d) p.n *= x.shape[static_cast<std::size_t>(d)];
  if (p.n > (std::int64_t{1} << 14))
    return fail(where(op) + ": rows of " + std::to_string(p.n) +
                " elements; the integer form normalises at most 16384 (int64 sums)");
  const double s_x = scale(x), s_y = scale(y);
  const double n = static_cast<double>(p.n);
  const double e = std::round(n * n * op.get_float("epsilon") / (s_x * s_x));
  if (!(e < std::ldexp(1.0, 60)))
    return fail(where(op) + ": epsilon / s_x^2 is too large for the integer form (E >= 2^60)");
  p.epsilon_term = static_cast<std::int64_t>(e);
  const auto values = [&](std::size_t slot) -> Result<const std::vector<float>*> {
    if (slot >= op.inputs.size()) return static_cast<const std::vector<float>*>(nullptr);
    const ir::Tensor& t = graph.tensor(op.inputs[slot]);
    const auto count = static_cast<std::int64_t>(t.f32_values.size());
    if (!t.constant || (count != p.n && count != 1))
      return fail(where(op) + ": %" + t.name + " must be a float constant of 1 or " +
                  std::to_string(p.n) + " values");
    return &t.f32_values;
  };
  auto gamma = values(1);
  if (!gamma) return gamma.failure();
  auto beta = values(2);
  if (!beta) return beta.failure();
  for (std::int64_t k = 0; k < p.n; ++k) {
    const auto at = [k](const std::vector<float>& v) {
      return static_cast<double>(v[v.size() == 1 ? 0 : static_cast<std::size_t>(k)]);
    };
    const double g = at(*gamma.value()) / (65536.0 * s_y);
    if (!(std::fabs(g) < std::ldexp(1.0, 31)))
      return fail(where(op) + ": scale element " + std::to_string(k) +
                  " over the output scale is too large for a 31-bit multiplier");
    p.affine.push_back(norm_affine(g, beta.value() ? at(*beta.value()) / s_y : 0.0));
  }
  const int bits = dtype_bits(y.dtype);
  p.lo = intops::qmin(bits);
  p.hi = intops::qmax(bits);
  return p;
}

Result<intops::Requant> reduce_params(const ir::Op& op, const ir::Tensor& x, const ir::Tensor& y) {
  const std::int64_t n = ir::element_count(x.shape) / ir::element_count(y.shape);
  const std::int64_t magnitude = -static_cast<std::int64_t>(intops::qmin(dtype_bits(x.dtype)));
  if (n > std::int64_t{2147483647} / magnitude)
    return fail(where(op) + ": a sum of " + std::to_string(n) + " codes of " +
                std::to_string(dtype_bits(x.dtype)) + " bits can leave int32");
  double ratio = scale(x) / scale(y);
  if (op.kind == ir::OpKind::ReduceMean) ratio /= static_cast<double>(n);
  const int bits = dtype_bits(y.dtype);
  return intops::make_requant(ratio, intops::qmin(bits), intops::qmax(bits));
}

int matmul_shift(const ir::Op& op, const ir::Tensor& a, const ir::Tensor& b) {
  if (b.constant && b.quant && b.quant->per_channel()) return 0;
  const int rule =
      intops::matmul_operand_shift(dtype_bits(a.dtype), dtype_bits(b.dtype), a.shape.back());
  const std::int64_t u = op.attrs.count("operand_shift") ? op.get_int("operand_shift") : -1;
  if (u == -1) return rule;  // the schema's default: no attribute written
  return u >= 0 && u <= rule ? static_cast<int>(u) : -1;
}

int softmax_operand_shift(const intops::Requant& probabilities, int bits_a, int bits_b,
                          std::int64_t k) {
  if (k <= 0 || k >= (std::int64_t{1} << 30)) return -1;
  // Every row's codes sum to at most S_a (docs/quantization.md, "MatMul of two activations"):
  // sum p_j <= 2^30 + K / 2, each output y_j <= p_j * M / 2^r + 1/2 (and <= qmax). M < 2^31 and
  // 2^30 + K < 2^31: the product fits 62 bits.
  const std::uint64_t scaled = static_cast<std::uint64_t>(probabilities.multiplier) *
                                   static_cast<std::uint64_t>((std::int64_t{1} << 30) + k) >>
                               probabilities.shift;
  const std::int64_t sum = std::min(static_cast<std::int64_t>(scaled) + k,
                                    k * static_cast<std::int64_t>(intops::qmax(bits_a)));
  for (int u = 0; u <= bits_a - 2 && u <= bits_b - 2; ++u) {
    const std::int64_t b_max = std::int64_t{1} << (bits_b - 1 - u);
    const std::int64_t a_sum = (sum >> u) + 1 + k;
    if (a_sum <= std::int64_t{2147483647} / b_max) return u;
  }
  return -1;
}

WeightChannelStats weight_channel_stats(const ir::Tensor& w, int axis) {
  const auto& shape = w.shape;
  const std::int64_t channels = shape[static_cast<std::size_t>(axis)];
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const auto total = static_cast<std::int64_t>(w.f32_values.size());
  WeightChannelStats out;
  out.per_channel = channels > 0 ? total / channels : 0;
  const auto n = static_cast<std::size_t>(channels);
  out.max_abs.assign(n, 0.0);
  out.sum_abs.assign(n, 0.0);
  out.sum_squares.assign(n, 0.0);
  out.sum_positive.assign(n, 0.0);
  out.sum_negative.assign(n, 0.0);
  // Element i belongs to channel (i / inner) % channels: walk [outer][channel][inner] in
  // storage order, so each sum adds in the order a flat loop would.
  const std::int64_t outer = channels * inner > 0 ? total / (channels * inner) : 0;
  std::size_t i = 0;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t c = 0; c < n; ++c)
      for (std::int64_t k = 0; k < inner; ++k, ++i) {
        const double signed_v = static_cast<double>(w.f32_values[i]);
        const double v = std::fabs(signed_v);
        out.max_abs[c] = std::max(out.max_abs[c], v);
        out.sum_abs[c] += v;
        (signed_v > 0.0 ? out.sum_positive : out.sum_negative)[c] += v;
        out.sum_squares[c] += v * v;
      }
  return out;
}

std::vector<double> WeightChannelStats::headroom_sums(bool nonnegative_input) const {
  if (!nonnegative_input) return sum_abs;
  std::vector<double> sums(sum_abs.size());
  for (std::size_t c = 0; c < sums.size(); ++c)
    sums[c] = std::max(sum_positive[c], sum_negative[c]);
  return sums;
}

double headroom_weight_scale(double max_abs, double sum_abs, double bias_abs, std::int64_t k,
                             int weight_bits, int input_bits, double input_scale) {
  const double magnitude = -static_cast<double>(intops::qmin(input_bits));
  const double room = 2147483647.0 - 1.0 - magnitude * static_cast<double>(k) / 2.0;
  const double s = max_abs > 0.0 ? max_abs / intops::qmax(weight_bits) : 1.0;
  const double needed =
      (magnitude * sum_abs + bias_abs / input_scale) * (1.0 + std::ldexp(1.0, -20)) / room;
  return std::max(s, needed);
}

int choose_input_shift(const WeightChannelStats& w, const std::vector<double>& bias_abs,
                       int weight_bits, int input_bits, double input_scale,
                       double input_mean_square, bool nonnegative_input) {
  const auto k = static_cast<double>(w.per_channel);
  const std::vector<double> sums = w.headroom_sums(nonnegative_input);
  double weight_power = 0.0;
  for (const double v : w.sum_squares) weight_power += v;
  int best = -1;
  double best_noise = 0.0;
  for (int u = 0; u <= input_bits - 2; ++u) {
    const int bits = input_bits - u;
    const double magnitude = -static_cast<double>(intops::qmin(bits));
    if (2147483647.0 - 1.0 - magnitude * k / 2.0 <= 0.0) continue;
    if (best >= 0 && input_mean_square <= 0.0) break;  // no statistics: the first u with room
    const double s_x = std::ldexp(input_scale, u);
    double weight_noise = 0.0;
    for (std::size_t c = 0; c < w.max_abs.size(); ++c) {
      const double s =
          headroom_weight_scale(w.max_abs[c], sums[c], bias_abs.empty() ? 0.0 : bias_abs[c],
                                w.per_channel, weight_bits, bits, s_x);
      weight_noise += s * s;
    }
    const double noise = s_x * s_x * weight_power + k * input_mean_square * weight_noise;
    if (best < 0 || noise < best_noise) {
      best = u;
      best_noise = noise;
    }
  }
  return best;
}

}  // namespace tessel::quant
