// The SIMD forms of kernels.hpp's loops, for kernels.cpp's dispatch alone: AVX-512 (VNNI conv,
// vector unit) in kernels_avx512.cpp, AVX2 in kernels_avx2.cpp (the AMX conv is amx_conv.*).
// Declared on x86-64 GCC/Clang (TESSEL_SIM_VNNI); each runs only where its cpu_has_* is true,
// and computes the same bytes as the portable loop in kernels.cpp.
#pragma once

#include <cstdint>

#include "sim/core/kernels.hpp"
#include "support/int_ops.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSEL_SIM_VNNI 1
#endif

namespace tessel::sim::kernels::detail {

/// Little-endian signed loads (the scratchpads' byte order on every host; GCC merges the bytes
/// into one load on little-endian ones).
inline std::int32_t load_i32(const std::uint8_t* p) {
  return static_cast<std::int32_t>(std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) |
                                   (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24));
}
inline std::int16_t load_i16(const std::uint8_t* p) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}

#ifdef TESSEL_SIM_VNNI
/// The CPU has the features (and simd_kernels_enabled / avx512_kernels_enabled allow them).
bool cpu_has_vnni();
bool cpu_has_avx2();
bool cpu_has_avx512();

/// An add's parameters for add_requantize_store_narrow: each multiplier M = high * 2^16 + low
/// with low its sign-extended low 16 bits and |high| < 2^15, as int16 pairs (operand a's in
/// the low word); the shift r in [17, 46] as s = r - 16; |z| * 2^s + 2^(s+1) < 2^31; lo and hi
/// inside the element's range.
struct AddNarrow {
  std::int32_t low_pair = 0, high_pair = 0;
  int s = 0;
  std::int32_t bias = 0;  // 2^(s-1) + z * 2^s
};

/// The operand an add passes through unscaled (shift 0, multipliers (1, 0) or (0, 1): a ReLU or a
/// copy) when its zero point and clamp lie inside the element's range, so that the clamp can run
/// in the element's own width (clamp_store_avx512, clamp_store_avx2); else null.
inline const std::uint8_t* pass_through_operand(const std::uint8_t* a, const std::uint8_t* b,
                                                int bytes, const intops::AddRequant& q) {
  const std::int32_t type_max = bytes == 1 ? 127 : 32767;
  const bool in_range = q.zero_point >= -type_max - 1 && q.zero_point <= type_max &&
                        q.lo >= -type_max - 1 && q.hi <= type_max;
  if (q.shift != 0 || !in_range) return nullptr;
  if (q.multiplier_a == 1 && q.multiplier_b == 0) return a;
  if (q.multiplier_a == 0 && q.multiplier_b == 1) return b;
  return nullptr;
}

/// The AddNarrow of `q` for elements of `bytes`, or false where one of its conditions fails.
inline bool add_narrow_of(const intops::AddRequant& q, int bytes, AddNarrow& out) {
  const std::int64_t type_max = bytes == 1 ? 127 : 32767;
  if (q.shift < 17 || q.shift > 46 || q.lo < -type_max - 1 || q.hi > type_max) return false;
  const int s = q.shift - 16;
  const std::int64_t z = q.zero_point;
  if ((z < 0 ? -z : z) * (std::int64_t{1} << s) + (std::int64_t{2} << s) >= (std::int64_t{1} << 31))
    return false;
  std::int32_t low[2], high[2];
  const std::int64_t m[2] = {q.multiplier_a, q.multiplier_b};
  for (int k = 0; k < 2; ++k) {
    const auto l = static_cast<std::int16_t>(static_cast<std::uint16_t>(m[k] & 0xffff));
    const std::int64_t h = (m[k] - l) / 65536;  // exact: m - l is a multiple of 2^16
    if (h < -32767 || h > 32767) return false;
    low[k] = static_cast<std::uint16_t>(l);
    high[k] = static_cast<std::uint16_t>(h);
  }
  out.low_pair = static_cast<std::int32_t>(static_cast<std::uint32_t>(low[0]) |
                                           (static_cast<std::uint32_t>(low[1]) << 16));
  out.high_pair = static_cast<std::int32_t>(static_cast<std::uint32_t>(high[0]) |
                                            (static_cast<std::uint32_t>(high[1]) << 16));
  out.s = s;
  out.bias = static_cast<std::int32_t>((std::int64_t{1} << (s - 1)) + z * (std::int64_t{1} << s));
  return true;
}

/// conv_dense with AVX-512 VNNI (one column block of every output channel).
void conv_dense_vnni(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                     std::int64_t pixel_count, const std::int64_t* tap_offsets,
                     std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                     std::int64_t out_channels, AccInit init, const std::uint8_t* bias,
                     std::uint8_t* acc, const std::int64_t* slot_offsets);

/// conv_dense with AVX2 (column blocks of `block` channels).
void conv_dense_avx2_blocks(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                            std::int64_t pixel_count, const std::int64_t* tap_offsets,
                            std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                            std::int64_t out_channels, std::int64_t block, AccInit init,
                            const std::uint8_t* bias, std::uint8_t* acc,
                            const std::int64_t* slot_offsets);

/// requantize_store_pixels for `bytes` 1 or 2, with AVX-512 (cpu_has_avx512).
void avx512_requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step,
                                    std::int64_t pixels, std::int64_t count,
                                    const std::uint8_t* table, const intops::Requant& q,
                                    std::uint64_t bytes, std::uint8_t* dst, std::int64_t dst_step);

/// requantize_store_pixels for `bytes` 1 or 2, with AVX2 (cpu_has_avx2).
void avx2_requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step,
                                  std::int64_t pixels, std::int64_t count,
                                  const std::uint8_t* table, const intops::Requant& q,
                                  std::uint64_t bytes, std::uint8_t* dst, std::int64_t dst_step);

/// add_requantize_store for `bytes` 1 or 2, with AVX-512 (cpu_has_avx512): every element.
void avx512_add_requantize_store(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                                 std::int64_t count, const intops::AddRequant& q,
                                 std::uint8_t* dst);

/// add_requantize_store for `bytes` 1 or 2, with AVX2 (cpu_has_avx2), where its narrow or
/// pass-through forms hold: returns how many leading elements it stored (the rest are the
/// caller's, possibly all of them).
std::int64_t avx2_add_requantize_store(const std::uint8_t* a, const std::uint8_t* b,
                                       std::uint64_t bytes, std::int64_t count,
                                       const intops::AddRequant& q, std::uint8_t* dst);

/// max_of_taps for `bytes` 1 or 2, with AVX-512 BW (cpu_has_avx512).
void avx512_max_of_taps(const std::uint8_t* const* src, std::int64_t tap_count, std::int64_t count,
                        std::uint64_t bytes, std::uint8_t* best);
#endif

}  // namespace tessel::sim::kernels::detail
