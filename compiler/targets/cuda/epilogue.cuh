// The per-element integer epilogue of every GPU kernel (bias, requantize, clamp, residual add),
// host- and device-callable: the one copy the CUDA kernels and the host emulator share.
//
// It mirrors support/int_ops.hpp (docs/quantization.md) operation for operation; that header is
// constexpr C++ with <algorithm>, which device code cannot call, so the arithmetic is restated
// here with no includes beyond <cstdint>. tests/cuda/epilogue_test.cpp proves the two agree
// exhaustively on the edge cases (ties, saturation, zero points, shifts 0..62). When the host
// compiler sees this file (no __CUDACC__), TESSEL_HD expands to nothing.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TESSEL_HD __host__ __device__ __forceinline__
#else
#define TESSEL_HD inline
#endif

namespace tessel::cuda {

/// Element types of device tensors (codes shared by host plans and kernels).
enum ElemType : std::int32_t { kI8 = 0, kI16 = 1, kI32 = 2 };

/// Bytes of one element of `type`.
TESSEL_HD int elem_bytes(std::int32_t type) {
  return type == kI8 ? 1 : type == kI16 ? 2 : 4;
}

/// Element `index` of an integer array of `type`, widened to int32.
TESSEL_HD std::int32_t load_int(const void* data, std::int32_t type, std::int64_t index) {
  if (type == kI8) return static_cast<const std::int8_t*>(data)[index];
  if (type == kI16) return static_cast<const std::int16_t*>(data)[index];
  return static_cast<const std::int32_t*>(data)[index];
}

/// Stores `value` (already within the type's range, which every epilogue guarantees by its
/// final clamp) as element `index` of `type`.
TESSEL_HD void store_int(void* data, std::int32_t type, std::int64_t index, std::int32_t value) {
  if (type == kI8)
    static_cast<std::int8_t*>(data)[index] = static_cast<std::int8_t>(value);
  else if (type == kI16)
    static_cast<std::int16_t*>(data)[index] = static_cast<std::int16_t>(value);
  else
    static_cast<std::int32_t*>(data)[index] = value;
}

/// intops::round_half_away: sign(t) * ((|t| + 2^(r-1)) >> r), r = 0 returns t.
TESSEL_HD std::int64_t round_half_away(std::int64_t t, int r) {
  if (r == 0) return t;
  const std::int64_t half = std::int64_t{1} << (r - 1);
  return t >= 0 ? (t + half) >> r : -((-t + half) >> r);
}

/// intops::clamp: min(max(v, lo), hi) (hi wins when lo > hi, as std::min(std::max) does).
TESSEL_HD std::int32_t clamp_int(std::int64_t v, std::int32_t lo, std::int32_t hi) {
  const std::int64_t a = v < lo ? lo : v;
  return static_cast<std::int32_t>(a > hi ? hi : a);
}

/// intops::requantize: clamp(rha(int64(acc) * M, r) + z, lo, hi).
TESSEL_HD std::int32_t requantize(std::int32_t acc, std::int32_t multiplier, int shift,
                                  std::int32_t zero_point, std::int32_t lo, std::int32_t hi) {
  const std::int64_t scaled = round_half_away(static_cast<std::int64_t>(acc) * multiplier, shift);
  return clamp_int(scaled + zero_point, lo, hi);
}

/// intops::add_requantize: clamp(rha(a * M_a + b * M_b, r) + z, lo, hi), one rounding.
TESSEL_HD std::int32_t add_requantize(std::int32_t a, std::int32_t b, std::int32_t multiplier_a,
                                      std::int32_t multiplier_b, int shift, std::int32_t zero_point,
                                      std::int32_t lo, std::int32_t hi) {
  const std::int64_t sum =
      static_cast<std::int64_t>(a) * multiplier_a + static_cast<std::int64_t>(b) * multiplier_b;
  return clamp_int(round_half_away(sum, shift) + zero_point, lo, hi);
}

/// What a kernel does to each int32 value v of output channel c before storing it; each stage
/// is one op of the quantized graph fused into the producer, applied in graph order:
///   1. bias:    v = v + bias[c]                       (Conv/Gemm's int32 bias)
///   2. requant: v = requantize(v, M[c], r[c], z, lo, hi)   (Requantize; pools: one channel)
///   3. clamp:   v = clamp(v, clamp_lo, clamp_hi)      (Relu/Clip after it)
///   4. add:     v = add_requantize(v, res, ...) or (res, v) when residual_is_a   (Add)
///   5. clamp:   v = clamp(v, post_lo, post_hi)        (Relu/Clip after the Add)
/// Pointers address device memory in kernels and host memory in the emulator. All-zero
/// (default) parameters mean "no stage": the value is stored unchanged.
struct Epilogue {
  const std::int32_t* bias = nullptr;  ///< [channels] or null
  const std::int32_t* multiplier =
      nullptr;                          ///< [channels], or [1] when !per_channel; null: no requant
  const std::int32_t* shift = nullptr;  ///< same indexing as multiplier
  std::int32_t per_channel = 0;         ///< multiplier/shift indexed by channel
  std::int32_t zero_point = 0;
  std::int32_t requant_lo = 0, requant_hi = 0;
  std::int32_t has_clamp = 0, clamp_lo = 0, clamp_hi = 0;
  std::int32_t has_add = 0, residual_is_a = 0;
  std::int32_t add_multiplier_a = 0, add_multiplier_b = 0, add_shift = 0, add_zero_point = 0;
  std::int32_t add_lo = 0, add_hi = 0;
  std::int32_t has_post_clamp = 0, post_lo = 0, post_hi = 0;
};

/// Applies `e` to accumulator `acc` of channel `channel`; `residual` is read only by stage 4.
/// Bias addition wraps in int32 like the GPU's adder; the golden executor rejects the overflow
/// instead, so on every graph it accepts the two agree.
TESSEL_HD std::int32_t apply_epilogue(const Epilogue& e, std::int32_t acc, std::int64_t channel,
                                      std::int32_t residual) {
  std::int32_t v = acc;
  if (e.bias)
    v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) +
                                  static_cast<std::uint32_t>(e.bias[channel]));
  if (e.multiplier) {
    const std::int64_t k = e.per_channel ? channel : 0;
    v = requantize(v, e.multiplier[k], e.shift[k], e.zero_point, e.requant_lo, e.requant_hi);
  }
  if (e.has_clamp) v = clamp_int(v, e.clamp_lo, e.clamp_hi);
  if (e.has_add) {
    const std::int32_t a = e.residual_is_a ? residual : v;
    const std::int32_t b = e.residual_is_a ? v : residual;
    v = add_requantize(a, b, e.add_multiplier_a, e.add_multiplier_b, e.add_shift, e.add_zero_point,
                       e.add_lo, e.add_hi);
  }
  if (e.has_post_clamp) v = clamp_int(v, e.post_lo, e.post_hi);
  return v;
}

}  // namespace tessel::cuda
