// kernels.hpp's loops in AVX2, for hosts without AVX-512 (the AMD EPYC hosts of session 17):
// the dense conv (register-tiled, column blocks of 16 channels) and the vector unit's
// requantize and residual add (kernels_simd.hpp declares the entry points).
#include "sim/core/kernels_simd.hpp"

#ifdef TESSEL_SIM_VNNI
#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace tessel::sim::kernels::detail {

namespace {

// The dense conv on AVX2 hosts (without AVX-512 VNNI; the AMD EPYC hosts of session 17):
// `vpmaddwd` multiplies a channel pair by 8 output channels' weight pairs and adds each pair
// of products into one int32 lane, mod 2^32 (-32768 * -32768 twice gives 2^31, read as
// INT32_MIN, as vpdpwssd and the portable loop give), and `vpaddd` adds that to the
// accumulator, mod 2^32. So the sums are the same as the other paths'.
#define TESSEL_SIM_AVX2_TARGET __attribute__((target("avx2")))

/// The int32 lanes of `at` (any alignment) that `lanes` selects, the others 0 and not read.
TESSEL_SIM_AVX2_TARGET inline __m256i maskload32(const void* at, __m256i lanes) {
  return _mm256_maskload_epi32(static_cast<const int*>(at), lanes);
}

/// One vector's 8 int32 lanes at `at` (any alignment): with `masked` only the lanes `lanes`
/// selects (vpmaskmovd; the others 0 and not read or written), else all of them. `masked` is a
/// constant wherever conv_block_avx2 calls these (its vector loops are unrolled).
TESSEL_SIM_AVX2_TARGET inline __m256i load_lanes(const void* at, __m256i lanes, bool masked) {
  return masked ? maskload32(at, lanes) : _mm256_loadu_si256(static_cast<const __m256i*>(at));
}
TESSEL_SIM_AVX2_TARGET inline void store_lanes(void* at, __m256i lanes, bool masked,
                                               __m256i value) {
  if (masked) {
    _mm256_maskstore_epi32(static_cast<int*>(at), lanes, value);
  } else {
    _mm256_storeu_si256(static_cast<__m256i*>(at), value);
  }
}

/// conv_dense for kPixels pixels x kVectors x 8 output channels; with kMasked the last vector
/// holds only its first `tail` = 1-7 channels (vpmaskmovd, which costs several times a plain
/// load or store on the Zen hosts: only a chunk that ends short of 8 channels pays it). The
/// accumulators stay in the 16 ymm registers over every tap and pair. `w` is the chunk's first
/// weight in a column block `width` channels wide (dense_index).
template <int kPixels, int kVectors, bool kMasked>
TESSEL_SIM_AVX2_TARGET inline void conv_block_avx2(const std::uint8_t* const* pixels,
                                                   const std::int64_t* tap_offsets,
                                                   std::int64_t tap_count, std::int64_t in_pairs,
                                                   const std::int16_t* w, std::int64_t width,
                                                   AccInit init, const std::uint8_t* bias,
                                                   std::uint8_t* const* slots, int tail) {
  // Which lanes each vector loads and stores: all but the last vector's are full.
  __m256i lanes[kVectors];
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v)
    lanes[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(v == kVectors - 1 ? tail : 8),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  constexpr auto masked = [](int v) { return kMasked && v == kVectors - 1; };
  __m256i acc[kPixels][kVectors];
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v) {
    const __m256i start = init == AccInit::kBias ? load_lanes(bias + 32 * v, lanes[v], masked(v))
                                                 : _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int p = 0; p < kPixels; ++p)
      acc[p][v] =
          init == AccInit::kSelf ? load_lanes(slots[p] + 32 * v, lanes[v], masked(v)) : start;
  }
  const std::int64_t tap_weights = 2 * in_pairs * width;
  for (std::int64_t t = 0; t < tap_count; ++t) {
    const std::uint8_t* a[kPixels];
#pragma GCC unroll 8
    for (int p = 0; p < kPixels; ++p) a[p] = pixels[p] + tap_offsets[t];
    const std::int16_t* wt = w + t * tap_weights;
    for (std::int64_t k = 0; k < in_pairs; ++k) {
      __m256i wv[kVectors];
      const std::int16_t* wk = wt + 2 * k * width;
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) wv[v] = load_lanes(wk + 16 * v, lanes[v], masked(v));
#pragma GCC unroll 8
      for (int p = 0; p < kPixels; ++p) {
        std::int32_t pair;
        std::memcpy(&pair, a[p] + 4 * k, sizeof pair);
        const __m256i x = _mm256_set1_epi32(pair);
#pragma GCC unroll 8
        for (int v = 0; v < kVectors; ++v)
          acc[p][v] = _mm256_add_epi32(acc[p][v], _mm256_madd_epi16(x, wv[v]));
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < kPixels; ++p)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v)
      store_lanes(slots[p] + 32 * v, lanes[v], masked(v), acc[p][v]);
}

/// The last `count` (< kPixels) pixels of a chunk in one block of `count` pixels (one pixel at
/// a time, each block re-reads every weight: the rest of a 4-pixel tile row took 30% of the
/// conv's time that way).
template <int kPixels, int kVectors, bool kMasked>
TESSEL_SIM_AVX2_TARGET void conv_rest_avx2(int count, const std::uint8_t* const* pixels,
                                           const std::int64_t* tap_offsets, std::int64_t tap_count,
                                           std::int64_t in_pairs, const std::int16_t* w,
                                           std::int64_t width, AccInit init,
                                           const std::uint8_t* bias, std::uint8_t* const* slots,
                                           int tail) {
  if constexpr (kPixels > 1) {
    if (count == kPixels - 1) {
      conv_block_avx2<kPixels - 1, kVectors, kMasked>(pixels, tap_offsets, tap_count, in_pairs, w,
                                                      width, init, bias, slots, tail);
      return;
    }
    conv_rest_avx2<kPixels - 1, kVectors, kMasked>(count, pixels, tap_offsets, tap_count, in_pairs,
                                                   w, width, init, bias, slots, tail);
  }
}

/// One chunk of kVectors x 8 output channels over every pixel, kPixels at a time, the rest in
/// one smaller block.
template <int kPixels, int kVectors, bool kMasked>
TESSEL_SIM_AVX2_TARGET void conv_columns_avx2(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t width, AccInit init, const std::uint8_t* bias,
    std::uint8_t* acc, const std::int64_t* slot_offsets, int tail) {
  const std::uint8_t* pixels[kPixels];
  std::uint8_t* slots[kPixels];
  std::int64_t p0 = 0;
  for (; p0 + kPixels <= pixel_count; p0 += kPixels) {
    for (int p = 0; p < kPixels; ++p) {
      pixels[p] = image + pixel_offsets[p0 + p];
      slots[p] = acc + slot_offsets[p0 + p];
    }
    conv_block_avx2<kPixels, kVectors, kMasked>(pixels, tap_offsets, tap_count, in_pairs, w, width,
                                                init, bias, slots, tail);
  }
  const auto rest = static_cast<int>(pixel_count - p0);
  if (rest == 0) return;
  for (int p = 0; p < rest; ++p) {
    pixels[p] = image + pixel_offsets[p0 + p];
    slots[p] = acc + slot_offsets[p0 + p];
  }
  conv_rest_avx2<kPixels, kVectors, kMasked>(rest, pixels, tap_offsets, tap_count, in_pairs, w,
                                             width, init, bias, slots, tail);
}

/// conv_columns_avx2 with the mask only where the chunk's last vector is short.
template <int kPixels, int kVectors>
TESSEL_SIM_AVX2_TARGET void conv_chunk_avx2(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t width, AccInit init, const std::uint8_t* bias,
    std::uint8_t* acc, const std::int64_t* slot_offsets, int tail) {
  if (tail == 8) {
    conv_columns_avx2<kPixels, kVectors, false>(image, pixel_offsets, pixel_count, tap_offsets,
                                                tap_count, in_pairs, w, width, init, bias, acc,
                                                slot_offsets, tail);
  } else {
    conv_columns_avx2<kPixels, kVectors, true>(image, pixel_offsets, pixel_count, tap_offsets,
                                               tap_count, in_pairs, w, width, init, bias, acc,
                                               slot_offsets, tail);
  }
}

TESSEL_SIM_AVX2_TARGET void conv_dense_avx2_loop(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t out_channels, std::int64_t block, AccInit init,
    const std::uint8_t* bias, std::uint8_t* acc, const std::int64_t* slot_offsets) {
  // Output channels in chunks of 16 (two vectors; 6 pixels x 2 accumulators + 2 weight vectors
  // + the broadcast: 15 of the 16 registers), the last chunk 1-16 channels in one or two
  // vectors (6 pixels at a time with one). Measured on the EPYC host (Zen 3, AVX2) over 3 x 3
  // and 1 x 1 convs of 48-256 channels (session 17): 5 x 2 at 56-70 G multiply-accumulates/s,
  // 6 x 2 and 4 x 2 within 10% of it, 3 x 3 and 3 x 4 slower, 4 x 3 (17 registers: it spills)
  // 40-50; the portable loop 8.5-10. Session 18, with the leftover pixels in one block: 6 x 2
  // 3-4% above 5 x 2 on a 3 x 3 128 -> 128 conv (more weights re-read per block lose to 2 x 4,
  // 3 x 4, 2 x 6: 35-48), and the ResNet-50 programs simulate in 0.95x the time of 5 x 2's.
  // The weights of a chunk lie in one column block (dense_index): its pair rows are `width`
  // pairs apart.
  for (std::int64_t o = 0; o < out_channels; o += 16) {
    const std::int64_t left = std::min<std::int64_t>(16, out_channels - o);
    const std::int64_t vectors = (left + 7) / 8;
    const auto tail = static_cast<int>(left - 8 * (vectors - 1));
    const std::int64_t first = o - o % block;
    const std::int64_t width = std::min(block, out_channels - first);
    const std::int16_t* wo = w + dense_index(0, 0, o, tap_count, in_pairs, out_channels, block);
    const std::uint8_t* bo = bias ? bias + 4 * o : nullptr;
    std::uint8_t* ao = acc + 4 * o;
    if (vectors == 1) {
      conv_chunk_avx2<6, 1>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                            width, init, bo, ao, slot_offsets, tail);
    } else {
      conv_chunk_avx2<6, 2>(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, wo,
                            width, init, bo, ao, slot_offsets, tail);
    }
  }
}

// The vector unit's requantize and residual add on AVX2 hosts without AVX-512 (session 17): 8
// or 16 channels per step in int32 lanes where the narrow forms above hold, with the same
// arithmetic (vpmuludq for requantize16_narrow, vpmaddwd + vpaddd for add16_narrow's vpdpwssd:
// both sums are taken mod 2^32), and the pass-through clamp in the element's own width. A step
// whose parameters are outside the narrow ranges, and the channels past the last full step of
// an add, take the portable loops, which compute the same values.

/// The low `kBytes` bytes of each of 8 int32, in order (truncating, as store_elements does).
template <int kBytes>
TESSEL_SIM_AVX2_TARGET inline void store8(std::uint8_t* dst, __m256i values) {
  if constexpr (kBytes == 1) {
    const __m256i low_bytes = _mm256_shuffle_epi8(
        values, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4,
                                 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    const auto first = static_cast<std::uint32_t>(_mm256_extract_epi32(low_bytes, 0));
    const auto second = static_cast<std::uint32_t>(_mm256_extract_epi32(low_bytes, 4));
    std::memcpy(dst, &first, 4);
    std::memcpy(dst + 4, &second, 4);
  } else {
    const __m256i low_words = _mm256_shuffle_epi8(
        values, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4,
                                 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(low_words, 0xd8)));
  }
}

/// Requant16Narrow's parameters for 8 channels (int32 lanes in channel order, int64 lanes for
/// the even and odd products).
struct Requant8Narrow {
  __m256i multiplier_even, multiplier_odd, half_even, half_odd, shift;
};

/// Requant8Narrow of channels [0, min(left, 8)) from the table (or the uniform `q`); false when
/// a channel's multiplier is outside [0, 2^31) or its shift outside [32, 62].
TESSEL_SIM_AVX2_TARGET inline bool requant8_narrow(const std::uint8_t* table, std::int64_t left,
                                                   const intops::Requant& q, Requant8Narrow& out) {
  // Vector loads (8 scalar stores read back as one vector would stall store forwarding, once
  // per 8 channels of every requant: a third of the requant's time on the ResNet-50 programs).
  __m256i mv, rv;
  if (table && left >= 8) {
    // The table's (multiplier, shift) pairs of 8 channels, split into the two vectors.
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i low = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table)), split);
    const __m256i high = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 32)), split);
    mv = _mm256_permute2x128_si256(low, high, 0x20);
    rv = _mm256_permute2x128_si256(low, high, 0x31);
  } else if (!table) {
    const __m256i used = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    mv = _mm256_and_si256(_mm256_set1_epi32(q.multiplier), used);
    rv = _mm256_blendv_epi8(_mm256_set1_epi32(32), _mm256_set1_epi32(q.shift), used);
  } else {
    alignas(32) std::int32_t m[8], r[8];
    for (std::int64_t k = 0; k < 8; ++k) {
      m[k] = k >= left ? 0 : load_i32(table + 8 * k);
      r[k] = k >= left ? 32 : load_i32(table + 8 * k + 4);
    }
    mv = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
    rv = _mm256_load_si256(reinterpret_cast<const __m256i*>(r));
  }
  const __m256i bad =
      _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), mv),
                      _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(32), rv),
                                      _mm256_cmpgt_epi32(rv, _mm256_set1_epi32(62))));
  if (!_mm256_testz_si256(bad, bad)) return false;
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256i r_even = _mm256_and_si256(rv, _mm256_set1_epi64x(0xffffffff));
  const __m256i r_odd = _mm256_srli_epi64(rv, 32);
  out = {mv, _mm256_srli_epi64(mv, 32), _mm256_sllv_epi64(one, _mm256_sub_epi64(r_even, one)),
         _mm256_sllv_epi64(one, _mm256_sub_epi64(r_odd, one)),
         _mm256_sub_epi32(rv, _mm256_set1_epi32(32))};
  return true;
}

/// requantize16_narrow of 8 channels: sign(acc) * ((|acc| * M + 2^(r-1)) >> r), the high words of
/// the even and odd 64-bit products blended into channel order and shifted by r - 32 (for acc = 0
/// that is 0, as vpsignd gives).
TESSEL_SIM_AVX2_TARGET inline __m256i requantize8_narrow(__m256i acc, const Requant8Narrow& p) {
  const __m256i magnitude = _mm256_abs_epi32(acc);
  const __m256i even =
      _mm256_add_epi64(_mm256_mul_epu32(magnitude, p.multiplier_even), p.half_even);
  const __m256i odd = _mm256_add_epi64(
      _mm256_mul_epu32(_mm256_srli_epi64(magnitude, 32), p.multiplier_odd), p.half_odd);
  const __m256i high_words = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xaa);
  return _mm256_sign_epi32(_mm256_srlv_epi32(high_words, p.shift), acc);
}

/// requantize_store_pixels on AVX2: 8 channels of a block of pixels per step, as
/// requantize_pixels_avx512 goes 16.
template <int kBytes>
TESSEL_SIM_AVX2_TARGET void requantize_pixels_avx2(const std::uint8_t* src, std::int64_t src_step,
                                                   std::int64_t pixels, std::int64_t count,
                                                   const std::uint8_t* table,
                                                   const intops::Requant& q, std::uint8_t* dst,
                                                   std::int64_t dst_step) {
  const __m256i zero_point = _mm256_set1_epi32(q.zero_point);
  const __m256i lo = _mm256_set1_epi32(q.lo), hi = _mm256_set1_epi32(q.hi);
  const bool narrow_zero_point = q.zero_point >= -(1 << 29) && q.zero_point <= (1 << 29);
  const std::int64_t block = std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(count, 1));
  alignas(32) std::int32_t values[8];
  for (std::int64_t first = 0; first < pixels; first += block) {
    const std::int64_t last = std::min(pixels, first + block);
    for (std::int64_t c = 0; c < count; c += 8) {
      const std::int64_t n = std::min<std::int64_t>(8, count - c);
      const std::uint8_t* s = src + first * src_step + 4 * c;
      std::uint8_t* d = dst + first * dst_step + kBytes * c;
      const std::uint8_t* step_table = table ? table + 8 * c : nullptr;
      Requant8Narrow p;
      if (!narrow_zero_point || !requant8_narrow(step_table, n, q, p)) {
        for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step) {
          requantize(s, n, step_table, q, values);
          store_elements(values, n, kBytes, d);
        }
        continue;
      }
      const auto clamp = [&](__m256i acc) TESSEL_SIM_AVX2_TARGET {
        return _mm256_min_epi32(
            _mm256_max_epi32(_mm256_add_epi32(requantize8_narrow(acc, p), zero_point), lo), hi);
      };
      if (n == 8) {  // plain loads: vpmaskmovd costs several times one on the Zen hosts
        for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step)
          store8<kBytes>(d, clamp(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s))));
        continue;
      }
      const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                               _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      for (std::int64_t pixel = first; pixel < last; ++pixel, s += src_step, d += dst_step) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(values),
                           clamp(_mm256_maskload_epi32(reinterpret_cast<const int*>(s), lanes)));
        store_elements(values, n, kBytes, d);
      }
    }
  }
}

/// add16_narrow on 8 (a, b) int16 pairs.
TESSEL_SIM_AVX2_TARGET inline __m256i add8_narrow(__m256i pairs, __m256i low_pair,
                                                  __m256i high_pair, __m256i s, __m256i low_mask,
                                                  __m256i bias, __m256i lo, __m256i hi) {
  const __m256i low =
      _mm256_add_epi32(_mm256_set1_epi32(-65536), _mm256_madd_epi16(pairs, low_pair));
  const __m256i high = _mm256_add_epi32(_mm256_set1_epi32(1), _mm256_madd_epi16(pairs, high_pair));
  const __m256i h = _mm256_add_epi32(high, _mm256_srai_epi32(low, 16));
  // -1 where H < 0 and l0 = 0, else 0.
  const __m256i n = _mm256_and_si256(
      _mm256_srai_epi32(h, 31),
      _mm256_cmpeq_epi32(_mm256_and_si256(low, _mm256_set1_epi32(0xffff)), _mm256_setzero_si256()));
  const __m256i rest = _mm256_add_epi32(_mm256_add_epi32(_mm256_and_si256(h, low_mask), bias), n);
  const __m256i rounded = _mm256_add_epi32(_mm256_srav_epi32(h, s), _mm256_srav_epi32(rest, s));
  return _mm256_min_epi32(_mm256_max_epi32(rounded, lo), hi);
}

/// add_requantize_store_narrow on AVX2, 16 elements per step over the first count - count % 16;
/// returns how many it stored.
template <int kBytes>
TESSEL_SIM_AVX2_TARGET std::int64_t add_requantize_store_narrow_avx2(
    const std::uint8_t* a, const std::uint8_t* b, std::int64_t count, const intops::AddRequant& q,
    const AddNarrow& n, std::uint8_t* dst) {
  const __m256i low_pair = _mm256_set1_epi32(n.low_pair);
  const __m256i high_pair = _mm256_set1_epi32(n.high_pair);
  const __m256i s = _mm256_set1_epi32(n.s);
  const __m256i low_mask = _mm256_set1_epi32(static_cast<std::int32_t>((1u << n.s) - 1u));
  const __m256i bias = _mm256_set1_epi32(n.bias);
  const __m256i lo = _mm256_set1_epi32(q.lo), hi = _mm256_set1_epi32(q.hi);
  const std::int64_t full = count - count % 16;
  for (std::int64_t c = 0; c < full; c += 16) {
    __m256i va, vb;  // 16 int16
    if constexpr (kBytes == 1) {
      va = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + c)));
      vb = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + c)));
    } else {
      va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2 * c));
      vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2 * c));
    }
    const __m256i first =
        add8_narrow(_mm256_unpacklo_epi16(va, vb), low_pair, high_pair, s, low_mask, bias, lo, hi);
    const __m256i second =
        add8_narrow(_mm256_unpackhi_epi16(va, vb), low_pair, high_pair, s, low_mask, bias, lo, hi);
    const __m256i packed = _mm256_packs_epi32(first, second);  // 16 int16 in element order
    if constexpr (kBytes == 1) {
      const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packs_epi16(packed, packed), 0xd8);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c), _mm256_castsi256_si128(bytes));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * c), packed);
    }
  }
  return full;
}

/// clamp_store_avx512 on AVX2, 32 bytes per step over the first count - count % (32 / kBytes)
/// elements; returns how many it stored.
template <int kBytes>
TESSEL_SIM_AVX2_TARGET std::int64_t clamp_store_avx2(const std::uint8_t* x, std::int64_t count,
                                                     const intops::AddRequant& q,
                                                     std::uint8_t* dst) {
  constexpr std::int64_t kStep = 32 / kBytes;
  const std::int64_t full = count - count % kStep;
  for (std::int64_t c = 0; c < full; c += kStep) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + kBytes * c));
    __m256i clamped;
    if constexpr (kBytes == 1) {
      clamped = _mm256_min_epi8(
          _mm256_max_epi8(_mm256_adds_epi8(v, _mm256_set1_epi8(static_cast<char>(q.zero_point))),
                          _mm256_set1_epi8(static_cast<char>(q.lo))),
          _mm256_set1_epi8(static_cast<char>(q.hi)));
    } else {
      clamped = _mm256_min_epi16(
          _mm256_max_epi16(
              _mm256_adds_epi16(v, _mm256_set1_epi16(static_cast<short>(q.zero_point))),
              _mm256_set1_epi16(static_cast<short>(q.lo))),
          _mm256_set1_epi16(static_cast<short>(q.hi)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + kBytes * c), clamped);
  }
  return full;
}

}  // namespace

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") && simd_kernels_enabled();
  return has;
}

void conv_dense_avx2_blocks(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                            std::int64_t pixel_count, const std::int64_t* tap_offsets,
                            std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                            std::int64_t out_channels, std::int64_t block, AccInit init,
                            const std::uint8_t* bias, std::uint8_t* acc,
                            const std::int64_t* slot_offsets) {
  conv_dense_avx2_loop(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                       out_channels, block, init, bias, acc, slot_offsets);
}

void avx2_requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step,
                                  std::int64_t pixels, std::int64_t count,
                                  const std::uint8_t* table, const intops::Requant& q,
                                  std::uint64_t bytes, std::uint8_t* dst, std::int64_t dst_step) {
  if (bytes == 1) {
    requantize_pixels_avx2<1>(src, src_step, pixels, count, table, q, dst, dst_step);
  } else {
    requantize_pixels_avx2<2>(src, src_step, pixels, count, table, q, dst, dst_step);
  }
}

std::int64_t avx2_add_requantize_store(const std::uint8_t* a, const std::uint8_t* b,
                                       std::uint64_t bytes, std::int64_t count,
                                       const intops::AddRequant& q, std::uint8_t* dst) {
  AddNarrow narrow;
  if (const std::uint8_t* x = pass_through_operand(a, b, static_cast<int>(bytes), q))
    return bytes == 1 ? clamp_store_avx2<1>(x, count, q, dst)
                      : clamp_store_avx2<2>(x, count, q, dst);
  if (add_narrow_of(q, static_cast<int>(bytes), narrow))
    return bytes == 1 ? add_requantize_store_narrow_avx2<1>(a, b, count, q, narrow, dst)
                      : add_requantize_store_narrow_avx2<2>(a, b, count, q, narrow, dst);
  return 0;
}

}  // namespace tessel::sim::kernels::detail

#endif  // TESSEL_SIM_VNNI
