// kernels.hpp's loops in AVX-512: the dense conv with VNNI (register-tiled) and the vector
// unit's requantize, residual add and max pool (kernels_simd.hpp declares the entry points).
#include "sim/core/kernels_simd.hpp"

#ifdef TESSEL_SIM_VNNI
#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace tessel::sim::kernels::detail {

namespace {

#define TESSEL_SIM_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/// acc += vpdpwssd(x, w), in place. GCC 12 compiles _mm512_dpwssd_epi32 into a fresh register
/// and a copy back per call, and with 24 accumulators live it spills them to the stack; the
/// tied operand keeps each accumulator in its register.
TESSEL_SIM_VNNI_TARGET inline void dpwssd(__m512i& acc, __m512i x, __m512i w) {
  asm("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
}

/// The words of a 16-lane int32 mask as a 32-lane int16 mask (a weight vector is 16 output
/// channels x 2 input channels).
inline __mmask32 word_mask_of(__mmask16 mask) {
  std::uint32_t words = 0;
  for (int bit = 0; bit < 16; ++bit)
    if (mask >> bit & 1u) words |= 3u << (2 * bit);
  return words;
}

/// conv_dense for kPixels pixels x kVectors x 16 output channels (the last vector masked to
/// `tail_mask`): the accumulators stay in registers over every tap and channel pair.
template <int kPixels, int kVectors>
TESSEL_SIM_VNNI_TARGET inline void conv_block(const std::uint8_t* const* pixels,
                                              const std::int64_t* tap_offsets,
                                              std::int64_t tap_count, std::int64_t in_pairs,
                                              const std::int16_t* w, std::int64_t out_channels,
                                              AccInit init, const std::uint8_t* bias,
                                              std::uint8_t* const* slots, __mmask16 tail_mask) {
  const auto mask_of = [&](int v) -> __mmask16 {
    return v == kVectors - 1 ? tail_mask : static_cast<__mmask16>(0xffff);
  };
  const __mmask32 last_words = word_mask_of(tail_mask);
  __m512i acc[kPixels][kVectors];
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v) {
    const __m512i start = init == AccInit::kBias
                              ? _mm512_maskz_loadu_epi32(mask_of(v), bias + 64 * v)
                              : _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int p = 0; p < kPixels; ++p)
      acc[p][v] =
          init == AccInit::kSelf ? _mm512_maskz_loadu_epi32(mask_of(v), slots[p] + 64 * v) : start;
  }
  const std::int64_t tap_weights = 2 * in_pairs * out_channels;
  for (std::int64_t t = 0; t < tap_count; ++t) {
    const std::uint8_t* a[kPixels];
#pragma GCC unroll 8
    for (int p = 0; p < kPixels; ++p) a[p] = pixels[p] + tap_offsets[t];
    const std::int16_t* wt = w + t * tap_weights;
    for (std::int64_t k = 0; k < in_pairs; ++k) {
      __m512i wv[kVectors];
      const std::int16_t* wk = wt + 2 * k * out_channels;
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v)
        wv[v] = v == kVectors - 1 ? _mm512_maskz_loadu_epi16(last_words, wk + 32 * v)
                                  : _mm512_loadu_si512(wk + 32 * v);
#pragma GCC unroll 8
      for (int p = 0; p < kPixels; ++p) {
        std::int32_t pair;
        std::memcpy(&pair, a[p] + 4 * k, sizeof pair);
        const __m512i x = _mm512_set1_epi32(pair);
#pragma GCC unroll 8
        for (int v = 0; v < kVectors; ++v) dpwssd(acc[p][v], x, wv[v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < kPixels; ++p)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v)
      _mm512_mask_storeu_epi32(slots[p] + 64 * v, mask_of(v), acc[p][v]);
}

/// The pixels left after the full blocks of conv_columns: one conv_block of `rest` < kPixels.
template <int kPixels, int kVectors>
TESSEL_SIM_VNNI_TARGET inline void conv_rest(int rest, const std::uint8_t* const* pixels,
                                             const std::int64_t* tap_offsets,
                                             std::int64_t tap_count, std::int64_t in_pairs,
                                             const std::int16_t* w, std::int64_t out_channels,
                                             AccInit init, const std::uint8_t* bias,
                                             std::uint8_t* const* slots, __mmask16 tail_mask) {
  if constexpr (kPixels > 0) {
    if (rest == kPixels) {
      conv_block<kPixels, kVectors>(pixels, tap_offsets, tap_count, in_pairs, w, out_channels, init,
                                    bias, slots, tail_mask);
      return;
    }
    conv_rest<kPixels - 1, kVectors>(rest, pixels, tap_offsets, tap_count, in_pairs, w,
                                     out_channels, init, bias, slots, tail_mask);
  }
}

/// One chunk of kVectors x 16 output channels over every pixel, kPixels at a time.
template <int kPixels, int kVectors>
TESSEL_SIM_VNNI_TARGET void conv_columns(const std::uint8_t* image,
                                         const std::int64_t* pixel_offsets,
                                         std::int64_t pixel_count, const std::int64_t* tap_offsets,
                                         std::int64_t tap_count, std::int64_t in_pairs,
                                         const std::int16_t* w, std::int64_t out_channels,
                                         AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                                         const std::int64_t* slot_offsets, __mmask16 tail_mask) {
  const std::uint8_t* pixels[kPixels];
  std::uint8_t* slots[kPixels];
  for (std::int64_t p0 = 0; p0 < pixel_count; p0 += kPixels) {
    const int count = static_cast<int>(std::min<std::int64_t>(kPixels, pixel_count - p0));
    for (int p = 0; p < count; ++p) {
      pixels[p] = image + pixel_offsets[p0 + p];
      slots[p] = acc + slot_offsets[p0 + p];
    }
    if (count == kPixels) {
      conv_block<kPixels, kVectors>(pixels, tap_offsets, tap_count, in_pairs, w, out_channels, init,
                                    bias, slots, tail_mask);
    } else {
      conv_rest<kPixels - 1, kVectors>(count, pixels, tap_offsets, tap_count, in_pairs, w,
                                       out_channels, init, bias, slots, tail_mask);
    }
  }
}

TESSEL_SIM_VNNI_TARGET void conv_dense_vnni_loop(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t out_channels, AccInit init, const std::uint8_t* bias,
    std::uint8_t* acc, const std::int64_t* slot_offsets) {
  // Output channels in chunks of 64 (four vectors; 6 pixels x 4 accumulators + 4 weight
  // vectors + 1 broadcast of the 32 registers), the last chunk 1-64 channels in 1-4 vectors (8
  // pixels at a time when it has at most three).
  for (std::int64_t o = 0; o < out_channels; o += 64) {
    const std::int64_t left = std::min<std::int64_t>(64, out_channels - o);
    const std::int64_t vectors = (left + 15) / 16;
    const auto tail = static_cast<__mmask16>((1u << (left - 16 * (vectors - 1))) - 1u);
    const __mmask16 tail_mask = tail == 0 ? static_cast<__mmask16>(0xffff) : tail;
    const std::int16_t* wo = w + 2 * o;
    const std::uint8_t* bo = bias ? bias + 4 * o : nullptr;
    std::uint8_t* ao = acc + 4 * o;
    switch (vectors) {
      case 1:
        conv_columns<8, 1>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                           out_channels, init, bo, ao, slot_offsets, tail_mask);
        break;
      case 2:
        conv_columns<8, 2>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                           out_channels, init, bo, ao, slot_offsets, tail_mask);
        break;
      case 3:
        conv_columns<8, 3>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                           out_channels, init, bo, ao, slot_offsets, tail_mask);
        break;
      default:
        conv_columns<6, 4>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                           out_channels, init, bo, ao, slot_offsets, tail_mask);
        break;
    }
  }
}

// GCC 12's AVX-512 headers pass _mm512_undefined_*() (a self-initialised variable) to the
// builtins of unmasked intrinsics, which -W(maybe-)uninitialized reports once they are inlined.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no -Wmaybe-uninitialized (and its headers do not warn)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#define TESSEL_SIM_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/// One rounding right shift per int64 lane, exactly intops::round_half_away for |p| < 2^62:
/// (p + half - [p < 0 and r > 0]) >> r, arithmetic. For p >= 0 that is (p + half) >> r; for
/// p < 0, -((-p + half) >> r) = ceil((p - half) / 2^r) = floor((p + half - 1) / 2^r) since
/// 2^r - half = half when r > 0; r = 0 (half = 0) returns p.
struct Rounding {
  __m512i half;      // (1 << r) >> 1
  __m512i shift;     // r
  __m512i positive;  // all ones where r > 0
};

TESSEL_SIM_AVX512_TARGET inline Rounding rounding_of(__m512i shift) {
  const __m512i half = _mm512_srli_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), shift), 1);
  const __m512i positive =
      _mm512_movm_epi64(_mm512_cmpgt_epi64_mask(shift, _mm512_setzero_si512()));
  return {half, shift, positive};
}

TESSEL_SIM_AVX512_TARGET inline __m512i round_shift(__m512i p, const Rounding& r) {
  const __m512i below = _mm512_and_si512(_mm512_srai_epi64(p, 63), r.positive);  // -1 or 0
  return _mm512_srav_epi64(_mm512_add_epi64(_mm512_add_epi64(p, r.half), below), r.shift);
}

/// clamp(v + z, lo, hi) per int64 lane.
TESSEL_SIM_AVX512_TARGET inline __m512i offset_clamp(__m512i v, __m512i zero_point, __m512i lo,
                                                     __m512i hi) {
  return _mm512_min_epi64(_mm512_max_epi64(_mm512_add_epi64(v, zero_point), lo), hi);
}

/// The 16 results of even (low 32 bits of each int64 lane) and odd lanes, clamped to int32
/// range or narrower, back in channel order as 16 int32.
TESSEL_SIM_AVX512_TARGET inline __m512i interleave(__m512i even, __m512i odd) {
  return _mm512_mask_blend_epi32(0xaaaa, even, _mm512_slli_epi64(odd, 32));
}

/// Stores the low `kBytes` bytes of 16 int32 (the first `left` of them when left < 16).
template <int kBytes>
TESSEL_SIM_AVX512_TARGET inline void store16(std::uint8_t* dst, __m512i values, std::int64_t left) {
  if constexpr (kBytes == 1) {
    const __m128i narrow = _mm512_cvtepi32_epi8(values);
    if (left >= 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), narrow);
    } else {
      _mm_mask_storeu_epi8(dst, static_cast<__mmask16>((1u << left) - 1u), narrow);
    }
  } else {
    const __m256i narrow = _mm512_cvtepi32_epi16(values);
    if (left >= 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), narrow);
    } else {
      _mm256_mask_storeu_epi16(dst, static_cast<__mmask16>((1u << left) - 1u), narrow);
    }
  }
}

/// store16 of int32 values saturated to the element's range (vpmovsdw / vpmovsdb): the same
/// bytes as clamping them to that range first.
template <int kBytes>
TESSEL_SIM_AVX512_TARGET inline void store16_saturated(std::uint8_t* dst, __m512i values,
                                                       std::int64_t left) {
  const auto mask = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1u);
  if constexpr (kBytes == 1) {
    _mm512_mask_cvtsepi32_storeu_epi8(dst, mask, values);
  } else {
    _mm512_mask_cvtsepi32_storeu_epi16(dst, mask, values);
  }
}

/// The requantize parameters of 16 channels, split into even and odd channels (int64 lanes):
/// from the table's entries (int32 multiplier, int32 shift) or the uniform `q`.
struct Requant16 {
  __m512i multiplier_even, multiplier_odd;
  Rounding even, odd;
};

/// Table entries 0-7 and 8-15 of a 16-channel step (8 bytes each: the int32 multiplier, then the
/// int32 shift), zero past channel `left`: the 32-bit words M0 r0 M1 r1 ... of low:high.
struct TableHalves {
  __m512i low, high;
};
TESSEL_SIM_AVX512_TARGET inline TableHalves load_table16(const std::uint8_t* table,
                                                         std::int64_t left) {
  const auto entries = static_cast<__mmask8>(left >= 8 ? 0xff : (1u << left) - 1u);
  const auto entries_high = static_cast<__mmask8>(left >= 16  ? 0xff
                                                  : left <= 8 ? 0
                                                              : (1u << (left - 8)) - 1u);
  return {_mm512_maskz_loadu_epi64(entries, table),
          _mm512_maskz_loadu_epi64(entries_high, table + 64)};
}

TESSEL_SIM_AVX512_TARGET inline Requant16 requant16(const std::uint8_t* table, std::int64_t left,
                                                    const intops::Requant& q) {
  if (table == nullptr) {
    const Rounding r = rounding_of(_mm512_set1_epi64(q.shift));
    const __m512i m = _mm512_set1_epi64(q.multiplier);
    return {m, m, r, r};
  }
  const auto [low, high] = load_table16(table, left);
  // Channel k's multiplier is word 2k, its shift word 2k + 1 of low:high; even channels to the
  // low words of the int64 lanes, zero-extended.
  const __m512i even_m = _mm512_setr_epi32(0, 0, 4, 0, 8, 0, 12, 0, 16, 0, 20, 0, 24, 0, 28, 0);
  const __m512i odd_m = _mm512_setr_epi32(2, 0, 6, 0, 10, 0, 14, 0, 18, 0, 22, 0, 26, 0, 30, 0);
  const __m512i one = _mm512_set1_epi32(1);
  const __mmask16 low_words = 0x5555;
  return {_mm512_maskz_permutex2var_epi32(low_words, low, even_m, high),
          _mm512_maskz_permutex2var_epi32(low_words, low, odd_m, high),
          rounding_of(
              _mm512_maskz_permutex2var_epi32(low_words, low, _mm512_add_epi32(even_m, one), high)),
          rounding_of(
              _mm512_maskz_permutex2var_epi32(low_words, low, _mm512_add_epi32(odd_m, one), high))};
}

/// clamp(round_shift(acc * M) + z, lo, hi) of 16 int32 accumulators, in channel order.
TESSEL_SIM_AVX512_TARGET inline __m512i requantize16(__m512i acc, const Requant16& p,
                                                     __m512i zero_point, __m512i lo, __m512i hi) {
  // vpmuldq: the signed low 32 bits of each int64 lane times the multiplier, exactly.
  const __m512i even = round_shift(_mm512_mul_epi32(acc, p.multiplier_even), p.even);
  const __m512i odd =
      round_shift(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), p.multiplier_odd), p.odd);
  return interleave(offset_clamp(even, zero_point, lo, hi), offset_clamp(odd, zero_point, lo, hi));
}

/// The requantize parameters of 16 channels for requantize16_narrow, which holds when every
/// channel's multiplier M is in [0, 2^31) and its shift r in [32, 62]: then |acc| * M + 2^(r-1)
/// < 2^63 and its high 32 bits shifted right by r - 32 are < 2^31.
struct Requant16Narrow {
  __m512i multiplier_even;      // M of channel 2k in the low 32 bits of int64 lane k
  __m512i multiplier_odd;       // M of channel 2k + 1 there
  __m512i half_even, half_odd;  // 2^(r-1) of those channels, per int64 lane
  __m512i shift;                // r - 32 per channel (int32 lanes, channel order)
};

/// Requant16Narrow of channels [0, min(left, 16)) from the table (or the uniform `q`); false
/// when a channel's multiplier or shift is outside the ranges above.
TESSEL_SIM_AVX512_TARGET inline bool requant16_narrow(const std::uint8_t* table, std::int64_t left,
                                                      const intops::Requant& q,
                                                      Requant16Narrow& out) {
  __m512i m, r;
  if (table == nullptr) {
    if (q.multiplier < 0 || q.shift < 32 || q.shift > 62) return false;
    m = _mm512_set1_epi32(q.multiplier);
    r = _mm512_set1_epi32(q.shift);
  } else {
    const auto channels = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1u);
    const auto [low, high] = load_table16(table, left);
    // Words M0 r0 M1 r1 ... of low:high; multipliers and shifts in channel order.
    const __m512i m_index =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    m = _mm512_permutex2var_epi32(low, m_index, high);
    r = _mm512_permutex2var_epi32(low, _mm512_add_epi32(m_index, _mm512_set1_epi32(1)), high);
    const __mmask16 outside = _mm512_mask_cmplt_epi32_mask(channels, m, _mm512_setzero_si512()) |
                              _mm512_mask_cmplt_epi32_mask(channels, r, _mm512_set1_epi32(32)) |
                              _mm512_mask_cmpgt_epi32_mask(channels, r, _mm512_set1_epi32(62));
    if (outside != 0) return false;
    r = _mm512_mask_blend_epi32(channels, _mm512_set1_epi32(32), r);  // unused lanes: r = 32
  }
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i r_even = _mm512_and_si512(r, _mm512_set1_epi64(0xffffffff));
  const __m512i r_odd = _mm512_srli_epi64(r, 32);
  out = {m, _mm512_srli_epi64(m, 32), _mm512_sllv_epi64(one, _mm512_sub_epi64(r_even, one)),
         _mm512_sllv_epi64(one, _mm512_sub_epi64(r_odd, one)),
         _mm512_sub_epi32(r, _mm512_set1_epi32(32))};
  return true;
}

/// round_half_away(acc * M, r) of 16 channels (requantize16 before its zero point and clamp)
/// in int32 lanes: round_half_away(acc * M, r) = sign(acc) *
/// ((|acc| * M + 2^(r-1)) >> r), |acc| * M by vpmuludq (|INT32_MIN| = 2^31 unsigned), the
/// high words of the even and odd products gathered by one permutation and shifted by r - 32.
/// The result's magnitude is < 1.5 * 2^30: adding |z| <= 2^29 cannot overflow.
TESSEL_SIM_AVX512_TARGET inline __m512i requantize16_narrow(__m512i acc, const Requant16Narrow& p) {
  const __m512i magnitude = _mm512_abs_epi32(acc);
  const __m512i even =
      _mm512_add_epi64(_mm512_mul_epu32(magnitude, p.multiplier_even), p.half_even);
  const __m512i odd = _mm512_add_epi64(
      _mm512_mul_epu32(_mm512_srli_epi64(magnitude, 32), p.multiplier_odd), p.half_odd);
  const __m512i high_words =
      _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  const __m512i rounded =
      _mm512_srlv_epi32(_mm512_permutex2var_epi32(even, high_words, odd), p.shift);
  return _mm512_mask_sub_epi32(rounded, _mm512_movepi32_mask(acc), _mm512_setzero_si512(), rounded);
}

/// requantize_store of `pixels` pixels, 16 channels per step: the step's parameters are loaded
/// (and, from a table, rearranged) once for every pixel; in int32 lanes
/// (requantize16_narrow) where the step's parameters allow it.
template <int kBytes>
TESSEL_SIM_AVX512_TARGET void requantize_pixels_avx512(
    const std::uint8_t* src, std::int64_t src_step, std::int64_t pixels, std::int64_t count,
    const std::uint8_t* table, const intops::Requant& q, std::uint8_t* dst, std::int64_t dst_step) {
  const __m512i zero_point = _mm512_set1_epi64(q.zero_point);
  const __m512i lo = _mm512_set1_epi64(q.lo), hi = _mm512_set1_epi64(q.hi);
  const __m512i zero_point32 = _mm512_set1_epi32(q.zero_point);
  const __m512i lo32 = _mm512_set1_epi32(q.lo), hi32 = _mm512_set1_epi32(q.hi);
  const bool narrow_zero_point = q.zero_point >= -(1 << 29) && q.zero_point <= (1 << 29);
  // z = 0 and the clamp is the element's range: the saturating narrowing store clamps.
  constexpr std::int32_t kTypeMax = kBytes == 1 ? 127 : 32767;
  const bool saturate = q.zero_point == 0 && q.lo == -kTypeMax - 1 && q.hi == kTypeMax;
  // Blocks of pixels whose accumulators fit in the L1 cache (~32 KiB), each block 16 channels
  // at a time.
  const std::int64_t block = std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(count, 1));
  for (std::int64_t first = 0; first < pixels; first += block) {
    const std::int64_t last = std::min(pixels, first + block);
    for (std::int64_t c = 0; c < count; c += 16) {
      const std::int64_t left = count - c;
      const auto mask = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1u);
      const std::uint8_t* s = src + first * src_step + 4 * c;
      std::uint8_t* d = dst + first * dst_step + kBytes * c;
      Requant16Narrow narrow;
      if (narrow_zero_point && requant16_narrow(table ? table + 8 * c : nullptr, left, q, narrow)) {
        if (saturate) {
          for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step)
            store16_saturated<kBytes>(
                d, requantize16_narrow(_mm512_maskz_loadu_epi32(mask, s), narrow), left);
          continue;
        }
        for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step) {
          const __m512i v = requantize16_narrow(_mm512_maskz_loadu_epi32(mask, s), narrow);
          store16<kBytes>(
              d, _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zero_point32), lo32), hi32),
              left);
        }
        continue;
      }
      const Requant16 p = requant16(table ? table + 8 * c : nullptr, left, q);
      for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step)
        store16<kBytes>(d, requantize16(_mm512_maskz_loadu_epi32(mask, s), p, zero_point, lo, hi),
                        left);
    }
  }
}

/// add_requantize_store on 16 channels per step: exactly intops::add_requantize in int64
/// lanes (|a * M_a + b * M_b| < 2^47).
template <int kBytes>
TESSEL_SIM_AVX512_TARGET void add_requantize_store_avx512(const std::uint8_t* a,
                                                          const std::uint8_t* b, std::int64_t count,
                                                          const intops::AddRequant& q,
                                                          std::uint8_t* dst) {
  const __m512i multiplier_a = _mm512_set1_epi64(q.multiplier_a);
  const __m512i multiplier_b = _mm512_set1_epi64(q.multiplier_b);
  const Rounding r = rounding_of(_mm512_set1_epi64(q.shift));
  const __m512i zero_point = _mm512_set1_epi64(q.zero_point);
  const __m512i lo = _mm512_set1_epi64(q.lo), hi = _mm512_set1_epi64(q.hi);
  for (std::int64_t c = 0; c < count; c += 16) {
    const std::int64_t left = count - c;
    const auto mask = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1u);
    __m512i va, vb;  // 16 sign-extended int32
    if constexpr (kBytes == 1) {
      va = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, a + c));
      vb = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, b + c));
    } else {
      va = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(mask, a + 2 * c));
      vb = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(mask, b + 2 * c));
    }
    const __m512i even =
        _mm512_add_epi64(_mm512_mul_epi32(va, multiplier_a), _mm512_mul_epi32(vb, multiplier_b));
    const __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(va, 32), multiplier_a),
                                         _mm512_mul_epi32(_mm512_srli_epi64(vb, 32), multiplier_b));
    store16<kBytes>(dst + kBytes * c,
                    interleave(offset_clamp(round_shift(even, r), zero_point, lo, hi),
                               offset_clamp(round_shift(odd, r), zero_point, lo, hi)),
                    left);
  }
}

/// add_requantize_store of an add that passes one operand through (shift 0, multipliers (1, 0)
/// or (0, 1): a ReLU or a copy): clamp(x + z, lo, hi) of that operand `x`, 64 / kBytes
/// elements per step in their own width. With z, lo and hi inside the element's range the
/// saturating x + z clamps to the same value as the exact one.
template <int kBytes>
TESSEL_SIM_AVX512_TARGET void clamp_store_avx512(const std::uint8_t* x, std::int64_t count,
                                                 const intops::AddRequant& q, std::uint8_t* dst) {
  constexpr std::int64_t kStep = 64 / kBytes;
  const auto step_mask = [](std::int64_t left) -> std::uint64_t {
    return left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1u;
  };
  if constexpr (kBytes == 1) {
    const __m512i z = _mm512_set1_epi8(static_cast<char>(q.zero_point));
    const __m512i lo = _mm512_set1_epi8(static_cast<char>(q.lo));
    const __m512i hi = _mm512_set1_epi8(static_cast<char>(q.hi));
    for (std::int64_t c = 0; c < count; c += kStep) {
      const __mmask64 mask = step_mask(count - c);
      const __m512i v = _mm512_maskz_loadu_epi8(mask, x + c);
      _mm512_mask_storeu_epi8(dst + c, mask,
                              _mm512_min_epi8(_mm512_max_epi8(_mm512_adds_epi8(v, z), lo), hi));
    }
  } else {
    const __m512i z = _mm512_set1_epi16(static_cast<short>(q.zero_point));
    const __m512i lo = _mm512_set1_epi16(static_cast<short>(q.lo));
    const __m512i hi = _mm512_set1_epi16(static_cast<short>(q.hi));
    for (std::int64_t c = 0; c < count; c += kStep) {
      const auto mask = static_cast<__mmask32>(step_mask(count - c));
      const __m512i v = _mm512_maskz_loadu_epi16(mask, x + 2 * c);
      _mm512_mask_storeu_epi16(dst + 2 * c, mask,
                               _mm512_min_epi16(_mm512_max_epi16(_mm512_adds_epi16(v, z), lo), hi));
    }
  }
}

/// max_of_taps with AVX-512 BW: 64 / kBytes channels per step, the taps' max in a register.
template <int kBytes>
TESSEL_SIM_AVX512_TARGET void max_of_taps_avx512(const std::uint8_t* const* src,
                                                 std::int64_t tap_count, std::int64_t count,
                                                 std::uint8_t* best) {
  constexpr std::int64_t kStep = 64 / kBytes;
  for (std::int64_t c = 0; c < count; c += kStep) {
    const std::int64_t left = count - c;
    const std::uint64_t mask = left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1u;
    if constexpr (kBytes == 1) {
      __m512i m = _mm512_set1_epi8(-128);
      for (std::int64_t t = 0; t < tap_count; ++t)
        m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(mask, src[t] + c));
      _mm512_mask_storeu_epi8(best + c, mask, m);
    } else {
      const auto words = static_cast<__mmask32>(mask);
      __m512i m = _mm512_set1_epi16(-32768);
      for (std::int64_t t = 0; t < tap_count; ++t)
        m = _mm512_max_epi16(m, _mm512_maskz_loadu_epi16(words, src[t] + 2 * c));
      _mm512_mask_storeu_epi16(best + 2 * c, words, m);
    }
  }
}

#define TESSEL_SIM_AVX512_VNNI_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

/// intops::add_requantize of 16 (a, b) int16 pairs in int32 lanes. With the true sum
/// t = a * M_a + b * M_b (|t| < 2^47 - 2^31): lo' = a * low_a + b * low_b - 2^16 and
/// hi1 = a * high_a + b * high_b + 1 (vpdpwssd, mod 2^32; lo' in [-2^31, 2^31 - 2^16] so exact),
/// t = H * 2^16 + l0 with H = hi1 + (lo' >> 16) (|H| < 2^31) and l0 = lo' & 0xffff. Then
/// round_half_away(t, r) = floor((t + 2^(r-1) - [t < 0]) / 2^r) = floor((H + 2^(s-1) - n) / 2^s)
/// with n = [H < 0 and l0 = 0], computed as (H >> s) + (((H & (2^s - 1)) + 2^(s-1) - n) >> s)
/// (no overflow); z * 2^s rides in the second term.
TESSEL_SIM_AVX512_VNNI_TARGET inline __m512i add16_narrow(__m512i pairs, __m512i low_pair,
                                                          __m512i high_pair, __m512i s,
                                                          __m512i low_mask, __m512i bias,
                                                          __m512i lo, __m512i hi) {
  const __m512i low = _mm512_dpwssd_epi32(_mm512_set1_epi32(-65536), pairs, low_pair);
  const __m512i high = _mm512_dpwssd_epi32(_mm512_set1_epi32(1), pairs, high_pair);
  const __m512i h = _mm512_add_epi32(high, _mm512_srai_epi32(low, 16));
  const __mmask16 n =
      _mm512_mask_testn_epi32_mask(_mm512_movepi32_mask(h), low, _mm512_set1_epi32(0xffff));
  __m512i rest = _mm512_add_epi32(_mm512_and_si512(h, low_mask), bias);
  rest = _mm512_mask_sub_epi32(rest, n, rest, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_srav_epi32(h, s), _mm512_srav_epi32(rest, s));
  return _mm512_min_epi32(_mm512_max_epi32(rounded, lo), hi);
}

/// add_requantize_store in int32 lanes (add16_narrow), 32 elements per step: a and b
/// interleaved into int16 pairs (unpack within 128-bit lanes, which the saturating pack after
/// undoes; lo and hi inside the element's range, so the pack is exact).
template <int kBytes>
TESSEL_SIM_AVX512_VNNI_TARGET void add_requantize_store_narrow(
    const std::uint8_t* a, const std::uint8_t* b, std::int64_t count, const intops::AddRequant& q,
    const AddNarrow& n, std::uint8_t* dst) {
  const __m512i low_pair = _mm512_set1_epi32(n.low_pair);
  const __m512i high_pair = _mm512_set1_epi32(n.high_pair);
  const __m512i s = _mm512_set1_epi32(n.s);
  const __m512i low_mask = _mm512_set1_epi32(static_cast<std::int32_t>((1u << n.s) - 1u));
  const __m512i bias = _mm512_set1_epi32(n.bias);
  const __m512i lo = _mm512_set1_epi32(q.lo), hi = _mm512_set1_epi32(q.hi);
  for (std::int64_t c = 0; c < count; c += 32) {
    const std::int64_t left = count - c;
    const auto mask = static_cast<__mmask32>(left >= 32 ? 0xffffffffu : (1u << left) - 1u);
    __m512i va, vb;  // 32 int16
    if constexpr (kBytes == 1) {
      va = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, a + c));
      vb = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, b + c));
    } else {
      va = _mm512_maskz_loadu_epi16(mask, a + 2 * c);
      vb = _mm512_maskz_loadu_epi16(mask, b + 2 * c);
    }
    const __m512i first =
        add16_narrow(_mm512_unpacklo_epi16(va, vb), low_pair, high_pair, s, low_mask, bias, lo, hi);
    const __m512i second =
        add16_narrow(_mm512_unpackhi_epi16(va, vb), low_pair, high_pair, s, low_mask, bias, lo, hi);
    const __m512i packed = _mm512_packs_epi32(first, second);  // 32 int16 in element order
    if constexpr (kBytes == 1) {
      _mm256_mask_storeu_epi8(dst + c, mask, _mm512_cvtepi16_epi8(packed));
    } else {
      _mm512_mask_storeu_epi16(dst + 2 * c, mask, packed);
    }
  }
}

#pragma GCC diagnostic pop

}  // namespace

bool cpu_has_vnni() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni") && avx512_kernels_enabled();
  return has;
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && avx512_kernels_enabled();
  return has;
}

void conv_dense_vnni(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                     std::int64_t pixel_count, const std::int64_t* tap_offsets,
                     std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                     std::int64_t out_channels, AccInit init, const std::uint8_t* bias,
                     std::uint8_t* acc, const std::int64_t* slot_offsets) {
  conv_dense_vnni_loop(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                       out_channels, init, bias, acc, slot_offsets);
}

void avx512_requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step,
                                    std::int64_t pixels, std::int64_t count,
                                    const std::uint8_t* table, const intops::Requant& q,
                                    std::uint64_t bytes, std::uint8_t* dst, std::int64_t dst_step) {
  if (bytes == 1) {
    requantize_pixels_avx512<1>(src, src_step, pixels, count, table, q, dst, dst_step);
  } else {
    requantize_pixels_avx512<2>(src, src_step, pixels, count, table, q, dst, dst_step);
  }
}

void avx512_add_requantize_store(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                                 std::int64_t count, const intops::AddRequant& q,
                                 std::uint8_t* dst) {
  if (const std::uint8_t* x = pass_through_operand(a, b, static_cast<int>(bytes), q)) {
    if (bytes == 1) {
      clamp_store_avx512<1>(x, count, q, dst);
    } else {
      clamp_store_avx512<2>(x, count, q, dst);
    }
    return;
  }
  AddNarrow narrow;
  if (cpu_has_vnni() && add_narrow_of(q, static_cast<int>(bytes), narrow)) {
    if (bytes == 1) {
      add_requantize_store_narrow<1>(a, b, count, q, narrow, dst);
    } else {
      add_requantize_store_narrow<2>(a, b, count, q, narrow, dst);
    }
    return;
  }
  if (bytes == 1) {
    add_requantize_store_avx512<1>(a, b, count, q, dst);
  } else {
    add_requantize_store_avx512<2>(a, b, count, q, dst);
  }
}

void avx512_max_of_taps(const std::uint8_t* const* src, std::int64_t tap_count, std::int64_t count,
                        std::uint64_t bytes, std::uint8_t* best) {
  if (bytes == 1) {
    max_of_taps_avx512<1>(src, tap_count, count, best);
  } else {
    max_of_taps_avx512<2>(src, tap_count, count, best);
  }
}

}  // namespace tessel::sim::kernels::detail

#endif  // TESSEL_SIM_VNNI
