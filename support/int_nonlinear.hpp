// The integer rules of the transformer and modern-CNN ops (docs/quantization.md, "Modern
// workloads"): table lookups, broadcast multiply, subtract, integer softmax and layer/RMS norm
// of one row, the integer square root. One definition for every executor.
//
// Header-only and dependency-free like int_ops.hpp, and plain on purpose: the SystemC simulator,
// the RTL and the CUDA backend mirror these functions line for line. Integers only (int64
// intermediates, each bound stated where it matters); the tables and multipliers come from the
// quantizer (compiler/quant/workload_params.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "support/int_ops.hpp"

namespace tessel::intops {

/// Number of significant bits of v (0 for 0): 1 + floor(log2 v).
constexpr int bit_length(std::uint64_t v) {
  int n = 0;
  while (v != 0) {
    v >>= 1;
    ++n;
  }
  return n;
}

/// floor(sqrt(v)), exact for every uint64, bit by bit (two result bits per step, no division):
/// the restoring method of hardware square rooters.
constexpr std::uint64_t isqrt(std::uint64_t v) {
  std::uint64_t remainder = v, root = 0;
  std::uint64_t bit = std::uint64_t{1} << 62;  // the highest power of 4 in a uint64
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (remainder >= root + bit) {
      remainder -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}

// --- unary functions: one table per op -----------------------------------------------------

/// Entries of a unary table: 256 for an 8-bit input (T[x + 128]), 257 for a 16-bit input
/// (E[j] = f at code 256 * (j - 128) in output codes times 2^kTableFractionBits, interpolated
/// on the low byte).
constexpr int table_entries(int input_bits) {
  return input_bits == 8 ? 256 : 257;
}

/// Fraction bits of a 16-bit input's table entries: E[j] holds the output code times 2^8, so
/// the interpolated value is rounded once, to the output code (docs/quantization.md).
constexpr int kTableFractionBits = 8;

/// The 16-bit interpolated lookup without the final clamp:
/// rha(E[h + 128] * 256 + (E[h + 129] - E[h + 128]) * l, 8 + kTableFractionBits) with
/// h = x >> 8 (arithmetic) and l = x & 255. |E| <= 2^23, so every term fits in int64.
constexpr std::int64_t interpolate16(const std::int32_t* table, std::int32_t x) {
  const std::int32_t h = x >> 8, l = x & 255;
  const std::int64_t low = table[h + 128], high = table[h + 129];
  return round_half_away(low * 256 + (high - low) * l, 8 + kTableFractionBits);
}

/// y = T[x] of a unary op: table[x + 128] for 256 entries (8-bit input; the quantizer already
/// clamped every entry), the clamped interpolation for 257 entries (16-bit input).
constexpr std::int32_t table_lookup(const std::int32_t* table, int entries, std::int32_t x,
                                    std::int32_t lo, std::int32_t hi) {
  if (entries == 256) return table[x + 128];
  return clamp(interpolate16(table, x), lo, hi);
}

// --- elementwise binary ops ----------------------------------------------------------------

/// Mul: y = clamp(rha(a * b * M, r) + z, lo, hi). |a * b| <= 2^30 at 16 bits and M < 2^31, so
/// the product stays below 2^61.
constexpr std::int32_t mul_requantize(std::int32_t a, std::int32_t b, const Requant& q) {
  const std::int64_t product = static_cast<std::int64_t>(a) * b;
  return clamp(round_half_away(product * q.multiplier, q.shift) + q.zero_point, q.lo, q.hi);
}

/// Sub: the residual add with the second product negated,
/// y = clamp(rha(a * M_a - b * M_b, r) + z, lo, hi).
constexpr std::int32_t sub_requantize(std::int32_t a, std::int32_t b, const AddRequant& q) {
  const std::int64_t diff =
      static_cast<std::int64_t>(a) * q.multiplier_a - static_cast<std::int64_t>(b) * q.multiplier_b;
  return clamp(round_half_away(diff, q.shift) + q.zero_point, q.lo, q.hi);
}

// --- MatMul of two activations -------------------------------------------------------------

/// The right shift u applied (rha) to both operands of an activation x activation MatMul so
/// that no input can overflow the int32 accumulator: the smallest u >= 0 with
/// 2^(bits_a - 1 - u) * 2^(bits_b - 1 - u) * k <= 2^31 - 1. It is 0 for two 8-bit operands
/// whenever k < 2^17; two 16-bit operands need u = ceil((log2(k + 1) - 1) / 2)-ish (k = 64:
/// u = 3). Returns -1 when no u leaves at least 2 bits per operand.
constexpr int matmul_operand_shift(int bits_a, int bits_b, std::int64_t k) {
  for (int u = 0; u <= bits_a - 2 && u <= bits_b - 2; ++u) {
    const std::int64_t bound =
        (std::int64_t{1} << (bits_a - 1 - u)) * (std::int64_t{1} << (bits_b - 1 - u));  // <= 2^30
    if (k <= (std::int64_t{2147483647} / bound)) return u;
  }
  return -1;
}

// --- softmax ----------------------------------------------------------------------------------

/// The integers of one integer softmax: exp as the product of two 256-entry tables of
/// unsigned 16-bit values, and the output requantization.
struct SoftmaxParams {
  /// exp_high[a] = rha(2^15 * exp(-s_x * 256 * a)), a in [0, 255]; exp_high[0] = 2^15.
  std::array<std::int32_t, 256> exp_high{};
  /// exp_low[b] = rha(2^15 * exp(-s_x * b)), b in [0, 255]; exp_low[0] = 2^15.
  std::array<std::int32_t, 256> exp_low{};
  /// M * 2^-r ~ 2^-30 / s_y, clamp to the output type.
  Requant output;
};

/// e = 2^15 * exp(s_x * d) for d <= 0 (d >= -65535): with u = -d,
/// rha(exp_high[u >> 8] * exp_low[u & 255], 15). At 8 bits u <= 255, so e = exp_low[u].
constexpr std::int64_t softmax_exp(const SoftmaxParams& p, std::int32_t d) {
  const std::int32_t u = -d;
  return round_half_away(static_cast<std::int64_t>(p.exp_high[static_cast<std::size_t>(u >> 8)]) *
                             p.exp_low[static_cast<std::size_t>(u & 255)],
                         15);
}

/// Softmax of one row of codes x[0..n) (n <= 2^16) with `keep` (nullptr: every position kept;
/// else keep[j] != 0 keeps position j), written to y[0..n):
/// m = max of the kept x; e_j = softmax_exp(x_j - m) (0 when masked); S = sum e_j (int64);
/// R = floor(2^45 / S); p_j = rha(e_j * R, 15) (probability * 2^30); y_j = requantize(p_j).
/// A row without a kept position is all 0.
constexpr void softmax_row(const std::int32_t* x, const std::uint8_t* keep, std::int64_t n,
                           const SoftmaxParams& p, std::int32_t* y) {
  bool any = false;
  std::int32_t m = 0;
  for (std::int64_t j = 0; j < n; ++j)
    if (keep == nullptr || keep[j] != 0) {
      m = any ? (x[j] > m ? x[j] : m) : x[j];
      any = true;
    }
  if (!any) {
    for (std::int64_t j = 0; j < n; ++j) y[j] = 0;
    return;
  }
  std::int64_t sum = 0;
  for (std::int64_t j = 0; j < n; ++j)
    if (keep == nullptr || keep[j] != 0) sum += softmax_exp(p, x[j] - m);
  const std::int64_t reciprocal = (std::int64_t{1} << 45) / sum;  // in (0, 2^30]
  for (std::int64_t j = 0; j < n; ++j) {
    if (keep != nullptr && keep[j] == 0) {
      y[j] = 0;
      continue;
    }
    const std::int64_t e = softmax_exp(p, x[j] - m);
    const auto probability = static_cast<std::int32_t>(round_half_away(e * reciprocal, 15));
    y[j] = requantize(probability, p.output);
  }
}

// --- LayerNormalization / RMSNormalization --------------------------------------------------

/// The affine map of normalised element k: y_k = clamp(rha(t_k * G_k + B_k, r_k)).
struct NormAffine {
  std::int32_t multiplier = 0;  ///< G_k, |G_k| < 2^31, the sign of gamma_k
  int shift = 0;                ///< r_k in [0, 62]
  std::int64_t bias = 0;        ///< B_k = rha(beta_k / s_y * 2^r_k), |B_k| <= 2^61
};

/// A row's normalising scale (below): `inv` = floor(2^54 / s) and `g`, from its sums S1, S2.
struct NormScale {
  std::int64_t inv = 0;
  int g = 0;
};
constexpr NormScale norm_scale(std::int64_t n, std::int64_t s1, std::int64_t s2, bool centre,
                               std::int64_t epsilon_term) {
  const std::int64_t d = centre ? n * s2 - s1 * s1 : n * s2;    // <= 2^58
  const auto w = static_cast<std::uint64_t>(d + epsilon_term);  // < 2^61
  if (w == 0) return {};
  const int g = (61 - bit_length(w)) >> 1;
  const std::uint64_t s = isqrt(w << (2 * g));  // in [2^29.5, 2^30.5)
  return {static_cast<std::int64_t>((std::uint64_t{1} << 54) / s), g};
}

/// Normalises one row x[0..n) (n <= 2^14, codes of at most 16 bits) and writes y[0..n):
/// S1 = sum x, S2 = sum x^2; c_k = n x_k - S1 and D = n S2 - S1^2 (`centre`, LayerNorm) or
/// c_k = n x_k and D = n S2 (RMSNorm); W = D + epsilon_term; g = (61 - bit_length(W)) >> 1;
/// s = isqrt(W << 2g); inv = floor(2^54 / s); t_k = rha(c_k * inv, 38 - g) (the normalised
/// value times 2^16; every t_k = 0 when W = 0); then the affine map of `affine[k]`.
constexpr void norm_row(const std::int32_t* x, std::int64_t n, bool centre,
                        std::int64_t epsilon_term, const NormAffine* affine, std::int32_t lo,
                        std::int32_t hi, std::int32_t* y) {
  std::int64_t s1 = 0, s2 = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    s1 += x[k];
    s2 += static_cast<std::int64_t>(x[k]) * x[k];
  }
  const auto [inv, g] = norm_scale(n, s1, s2, centre, epsilon_term);
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t c = centre ? n * x[k] - s1 : n * x[k];
    const std::int64_t t = round_half_away(c * inv, 38 - g);
    const NormAffine& a = affine[k];
    y[k] = clamp(round_half_away(t * a.multiplier + a.bias, a.shift), lo, hi);
  }
}

}  // namespace tessel::intops
