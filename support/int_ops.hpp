// The scalar integer operations of docs/quantization.md: the one definition every executor uses.
//
// Header-only and dependency-free so that every layer may include it: the golden CPU executor
// (compiler/targets/cpu), the quantizer (compiler/quant), the SystemC simulator (sim/), the RTL
// harness (hw/) and the CUDA host code all call — or mirror line for line — these functions.
// Every function is constexpr and exact: int64 intermediates, one rounding, no floating point
// except in quantize_multiplier(), which only the quantizer calls (executors consume its
// integer results).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tessel::intops {

/// Smallest and largest value of a signed `bits`-wide integer (bits in 2..32).
constexpr std::int32_t qmin(int bits) {
  return static_cast<std::int32_t>(-(std::int64_t{1} << (bits - 1)));
}
constexpr std::int32_t qmax(int bits) {
  return static_cast<std::int32_t>((std::int64_t{1} << (bits - 1)) - 1);
}

/// round_half_away(t / 2^r) = sign(t) * ((|t| + 2^(r-1)) >> r); r = 0 returns t.
/// Ties go away from zero (gemmlowp). Precondition: 0 <= r <= 62 and |t| < 2^62, which every
/// caller satisfies (|acc| < 2^31 times M < 2^31, or the sum of two such products).
constexpr std::int64_t round_half_away(std::int64_t t, int r) {
  if (r == 0) return t;
  const std::int64_t half = std::int64_t{1} << (r - 1);
  return t >= 0 ? (t + half) >> r : -((-t + half) >> r);
}

/// Clamps `v` to [lo, hi].
constexpr std::int32_t clamp(std::int64_t v, std::int32_t lo, std::int32_t hi) {
  return static_cast<std::int32_t>(std::min<std::int64_t>(std::max<std::int64_t>(v, lo), hi));
}

/// The one clamp equal to clamping to `inner` and then to `outer` (both non-empty:
/// lo <= hi): clamp(clamp(v, a, b), c, d) = clamp(v, clamp(a, c, d), clamp(b, c, d)) for every
/// v, also when the ranges are disjoint (then a constant). A ReLU or Clip after a requantize or
/// add folds into its clamp this way (docs/scheduler.md, "Activation folding").
struct ClampRange {
  std::int32_t lo = 0;
  std::int32_t hi = 0;
};
constexpr ClampRange compose_clamps(ClampRange inner, ClampRange outer) {
  return {clamp(inner.lo, outer.lo, outer.hi), clamp(inner.hi, outer.lo, outer.hi)};
}

/// The parameters of one requantization: y = clamp(rha(acc * M, r) + z, lo, hi).
struct Requant {
  std::int32_t multiplier = 0;  ///< M, 0 <= M < 2^31 (the quantizer makes it >= 2^30)
  int shift = 0;                ///< r, 0 <= r <= 62 (right shift)
  std::int32_t zero_point = 0;  ///< z, 0 in Tessel's symmetric flow
  std::int32_t lo = -128;       ///< clamp bounds; ReLU folds in as lo = 0
  std::int32_t hi = 127;
};

/// int32 accumulator -> int8/int16 value per docs/quantization.md "Requantize".
constexpr std::int32_t requantize(std::int32_t acc, const Requant& q) {
  const std::int64_t scaled =
      round_half_away(static_cast<std::int64_t>(acc) * q.multiplier, q.shift);
  return clamp(scaled + q.zero_point, q.lo, q.hi);
}

/// The parameters of a residual add with rescale: two multipliers sharing one shift.
struct AddRequant {
  std::int32_t multiplier_a = 0;  ///< M_a ~ s_a / s_y * 2^r
  std::int32_t multiplier_b = 0;  ///< M_b ~ s_b / s_y * 2^r
  int shift = 0;                  ///< r, shared
  std::int32_t zero_point = 0;
  std::int32_t lo = -128;
  std::int32_t hi = 127;
};

/// y = clamp(rha(a * M_a + b * M_b, r) + z, lo, hi): one rounding, exact in int64.
constexpr std::int32_t add_requantize(std::int32_t a, std::int32_t b, const AddRequant& q) {
  const std::int64_t sum =
      static_cast<std::int64_t>(a) * q.multiplier_a + static_cast<std::int64_t>(b) * q.multiplier_b;
  return clamp(round_half_away(sum, q.shift) + q.zero_point, q.lo, q.hi);
}

/// A real multiplier as M * 2^-r.
struct FixedPoint {
  std::int32_t multiplier = 0;
  int shift = 0;
};

/// Chooses M in [2^30, 2^31) and r with M * 2^-r ~ real (31 significant bits, M rounded to
/// nearest, ties away). Requires 0 <= real < 2^31 and finite (the quantizer checks this and
/// reports the node); real = 0 gives {0, 0}. When r would exceed 62 (real < 2^-32), M is shifted
/// right to r = 62 (losing precision; M may become 0, i.e. the output is all zero point).
inline FixedPoint quantize_multiplier(double real) {
  if (!(real > 0.0)) return {};
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);      // real = fraction * 2^exponent
  std::int64_t m = std::llround(std::ldexp(fraction, 31));  // in [2^30, 2^31]
  if (m == (std::int64_t{1} << 31)) {
    m >>= 1;
    ++exponent;
  }
  int shift = 31 - exponent;
  if (shift > 62) {
    m = round_half_away(m, shift - 62);
    shift = 62;
  }
  return {static_cast<std::int32_t>(m), shift};
}

/// Same as quantize_multiplier but for a given shift r: M = round(real * 2^r). Used for the
/// second multiplier of an add, which shares the first one's shift. Requires real * 2^r < 2^31.
inline std::int32_t multiplier_for_shift(double real, int shift) {
  if (!(real > 0.0)) return 0;
  return static_cast<std::int32_t>(std::llround(std::ldexp(real, shift)));
}

/// The fixed-point pair for a residual add: the larger ratio gets a normalised multiplier and
/// both share its shift (so M_a, M_b < 2^31 and the larger one is in [2^30, 2^31)).
inline AddRequant make_add_requant(double ratio_a, double ratio_b, std::int32_t lo,
                                   std::int32_t hi) {
  const FixedPoint big = quantize_multiplier(std::max(ratio_a, ratio_b));
  AddRequant q;
  q.shift = big.shift;
  q.multiplier_a = multiplier_for_shift(ratio_a, big.shift);
  q.multiplier_b = multiplier_for_shift(ratio_b, big.shift);
  q.lo = lo;
  q.hi = hi;
  return q;
}

/// A requantization for a real multiplier (s_in * s_w / s_out for a conv channel, s_in / (s_out *
/// N) for an average pool of N elements) with clamp bounds [lo, hi] and zero point 0.
inline Requant make_requant(double real_multiplier, std::int32_t lo, std::int32_t hi) {
  const FixedPoint fp = quantize_multiplier(real_multiplier);
  return Requant{fp.multiplier, fp.shift, 0, lo, hi};
}

/// Float -> integer quantization of one value: clamp(round_half_away(x / scale)) in the type's
/// range (used for network inputs and weights; NaN maps to 0). `scale` > 0.
inline std::int32_t quantize_value(float x, float scale, int bits) {
  if (std::isnan(x)) return 0;
  const double q = std::round(static_cast<double>(x) / static_cast<double>(scale));  // half away
  const double lo = qmin(bits), hi = qmax(bits);
  return static_cast<std::int32_t>(std::clamp(q, lo, hi));
}

/// ceil(a / b) for a >= 0 and b > 0: tile counts, passes, words (the one rounding-up division
/// of sizes; overflow-free while a + b fits in 64 bits).
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace tessel::intops
