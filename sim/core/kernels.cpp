// The datapath's multiply-accumulate loops (kernels.hpp), compiled -O3 for the auto-vectoriser;
// the dense pair kernel also in AVX-512 VNNI intrinsics, chosen at run time.
#include "sim/core/kernels.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TESSEL_SIM_VNNI 1
#endif

// Each loop is compiled once per x86-64 ISA level and picked by the CPU at load time (GCC
// ifunc), as compiler/targets/cpu/nhwc_kernels.cpp does; the results are the same on every
// level (integer arithmetic mod 2^32).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define TESSEL_SIM_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSEL_SIM_CLONES
#endif

namespace tessel::sim::kernels {

namespace {

/// A product in the ISA's int32 arithmetic: exact for int16 operands (|a * w| <= 2^30), then
/// taken mod 2^32 so that sums wrap instead of overflowing.
inline std::uint32_t product(std::int32_t a, std::int16_t w) {
  return static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(std::int32_t{w});
}

}  // namespace

TESSEL_SIM_CLONES void accumulate_dense(const std::int32_t* a, std::int64_t in_channels,
                                        const std::int16_t* w, std::int64_t out_channels,
                                        std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  std::int64_t i = 0;
  // Four input channels per pass over `sums`: a quarter of the loads and stores of the sums.
  for (; i + 4 <= in_channels; i += 4) {
    const std::int32_t a0 = a[i], a1 = a[i + 1], a2 = a[i + 2], a3 = a[i + 3];
    const std::int16_t* __restrict w0 = w + i * out_channels;
    const std::int16_t* __restrict w1 = w0 + out_channels;
    const std::int16_t* __restrict w2 = w1 + out_channels;
    const std::int16_t* __restrict w3 = w2 + out_channels;
    for (std::int64_t o = 0; o < out_channels; ++o)
      out[o] += product(a0, w0[o]) + product(a1, w1[o]) + product(a2, w2[o]) + product(a3, w3[o]);
  }
  for (; i < in_channels; ++i) {
    const std::int32_t ai = a[i];
    const std::int16_t* __restrict wi = w + i * out_channels;
    for (std::int64_t o = 0; o < out_channels; ++o) out[o] += product(ai, wi[o]);
  }
}

namespace {

/// The portable dense pair kernel: one pixel at a time, the output channels vectorised.
TESSEL_SIM_CLONES void dense_pairs_generic(const std::int16_t* pixels, std::int64_t pixel_stride,
                                           std::int64_t pixel_count, std::int64_t in_pairs,
                                           const std::int16_t* w, std::int64_t out_channels,
                                           std::uint32_t* sums) {
  for (std::int64_t p = 0; p < pixel_count; ++p) {
    const std::int16_t* a = pixels + p * pixel_stride;
    std::uint32_t* __restrict out = sums + p * out_channels;
    for (std::int64_t k = 0; k < in_pairs; ++k) {
      const std::int16_t a0 = a[2 * k], a1 = a[2 * k + 1];
      const std::int16_t* __restrict wk = w + 2 * k * out_channels;
      for (std::int64_t o = 0; o < out_channels; ++o)
        out[o] += product(a0, wk[2 * o]) + product(a1, wk[2 * o + 1]);
    }
  }
}

#ifdef TESSEL_SIM_VNNI
#define TESSEL_SIM_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/// kPixels pixels x kVectors x 16 output channels (the last vector masked to `tail_mask`) in
/// registers; every weight load serves kPixels pixels; vpdpwssd adds a[2k] * w[2k][o] +
/// a[2k + 1] * w[2k + 1][o] to each int32 lane, wrapping mod 2^32 (no saturation), which is the
/// ISA's arithmetic.
template <int kPixels, int kVectors>
TESSEL_SIM_VNNI_TARGET inline void dense_pairs_block(const std::int16_t* pixels,
                                                     std::int64_t pixel_stride,
                                                     std::int64_t in_pairs, const std::int16_t* w,
                                                     std::int64_t out_channels, std::uint32_t* sums,
                                                     __mmask16 tail_mask) {
  __m512i acc[kPixels][kVectors];
  const auto mask_of = [&](int v) -> __mmask16 {
    return v == kVectors - 1 ? tail_mask : static_cast<__mmask16>(0xffff);
  };
  // A weight vector is 16 output channels x 2 input channels = 32 int16: each bit of the
  // channel mask covers two words.
  __mmask32 word_mask[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    const std::uint32_t m = mask_of(v);
    std::uint32_t words = 0;
    for (int bit = 0; bit < 16; ++bit)
      if (m >> bit & 1u) words |= 3u << (2 * bit);
    word_mask[v] = words;
  }
  for (int p = 0; p < kPixels; ++p)
    for (int v = 0; v < kVectors; ++v)
      acc[p][v] = _mm512_maskz_loadu_epi32(mask_of(v), sums + p * out_channels + 16 * v);
  for (std::int64_t k = 0; k < in_pairs; ++k) {
    __m512i wv[kVectors];
    const std::int16_t* wk = w + 2 * k * out_channels;
    for (int v = 0; v < kVectors; ++v) wv[v] = _mm512_maskz_loadu_epi16(word_mask[v], wk + 32 * v);
    for (int p = 0; p < kPixels; ++p) {
      std::int32_t pair;
      std::memcpy(&pair, pixels + p * pixel_stride + 2 * k, sizeof pair);
      const __m512i a = _mm512_set1_epi32(pair);
      for (int v = 0; v < kVectors; ++v) acc[p][v] = _mm512_dpwssd_epi32(acc[p][v], a, wv[v]);
    }
  }
  for (int p = 0; p < kPixels; ++p)
    for (int v = 0; v < kVectors; ++v)
      _mm512_mask_storeu_epi32(sums + p * out_channels + 16 * v, mask_of(v), acc[p][v]);
}

template <int kVectors>
TESSEL_SIM_VNNI_TARGET void dense_pairs_columns(const std::int16_t* pixels,
                                                std::int64_t pixel_stride, std::int64_t pixel_count,
                                                std::int64_t in_pairs, const std::int16_t* w,
                                                std::int64_t out_channels, std::uint32_t* sums,
                                                __mmask16 tail_mask) {
  constexpr int kPixels = 4;
  std::int64_t p = 0;
  for (; p + kPixels <= pixel_count; p += kPixels)
    dense_pairs_block<kPixels, kVectors>(pixels + p * pixel_stride, pixel_stride, in_pairs, w,
                                         out_channels, sums + p * out_channels, tail_mask);
  for (; p < pixel_count; ++p)
    dense_pairs_block<1, kVectors>(pixels + p * pixel_stride, pixel_stride, in_pairs, w,
                                   out_channels, sums + p * out_channels, tail_mask);
}

TESSEL_SIM_VNNI_TARGET void dense_pairs_vnni(const std::int16_t* pixels, std::int64_t pixel_stride,
                                             std::int64_t pixel_count, std::int64_t in_pairs,
                                             const std::int16_t* w, std::int64_t out_channels,
                                             std::uint32_t* sums) {
  // Output channels in chunks of 64 (four vectors), then one chunk of the 1-63 left.
  constexpr std::int64_t kChunk = 64;
  std::int64_t o = 0;
  for (; o + kChunk <= out_channels; o += kChunk)
    dense_pairs_columns<4>(pixels, pixel_stride, pixel_count, in_pairs, w + 2 * o, out_channels,
                           sums + o, 0xffff);
  const std::int64_t left = out_channels - o;
  if (left == 0) return;
  const std::int64_t vectors = (left + 15) / 16;
  const auto tail = static_cast<__mmask16>((1u << (left - 16 * (vectors - 1))) - 1u);
  const __mmask16 tail_mask = tail == 0 ? static_cast<__mmask16>(0xffff) : tail;
  const std::int16_t* wo = w + 2 * o;
  std::uint32_t* so = sums + o;
  switch (vectors) {
    case 1:
      dense_pairs_columns<1>(pixels, pixel_stride, pixel_count, in_pairs, wo, out_channels, so,
                             tail_mask);
      break;
    case 2:
      dense_pairs_columns<2>(pixels, pixel_stride, pixel_count, in_pairs, wo, out_channels, so,
                             tail_mask);
      break;
    case 3:
      dense_pairs_columns<3>(pixels, pixel_stride, pixel_count, in_pairs, wo, out_channels, so,
                             tail_mask);
      break;
    default:  // 4: 49-63 channels left
      dense_pairs_columns<4>(pixels, pixel_stride, pixel_count, in_pairs, wo, out_channels, so,
                             tail_mask);
      break;
  }
}

bool cpu_has_vnni() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni");
  return has;
}
#endif

}  // namespace

void accumulate_dense_pairs(const std::int16_t* pixels, std::int64_t pixel_stride,
                            std::int64_t pixel_count, std::int64_t in_pairs, const std::int16_t* w,
                            std::int64_t out_channels, std::uint32_t* sums) {
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_vnni()) {
    dense_pairs_vnni(pixels, pixel_stride, pixel_count, in_pairs, w, out_channels, sums);
    return;
  }
#endif
  dense_pairs_generic(pixels, pixel_stride, pixel_count, in_pairs, w, out_channels, sums);
}

void accumulate_dense_pairs_portable(const std::int16_t* pixels, std::int64_t pixel_stride,
                                     std::int64_t pixel_count, std::int64_t in_pairs,
                                     const std::int16_t* w, std::int64_t out_channels,
                                     std::uint32_t* sums) {
  dense_pairs_generic(pixels, pixel_stride, pixel_count, in_pairs, w, out_channels, sums);
}

namespace {

/// round_half_away(t, r) (support/int_ops.hpp) without branches: on |t|, then the sign back;
/// r = 0 adds a half of 0. Exact for |t| < 2^62, as the scalar one.
inline std::int64_t round_half_away_lanes(std::int64_t t, std::int64_t r) {
  const std::int64_t sign = t >> 63;  // 0 or -1
  const std::int64_t magnitude = (t ^ sign) - sign;
  const std::int64_t half = (std::int64_t{1} << r) >> 1;
  const std::int64_t rounded = (magnitude + half) >> r;
  return (rounded ^ sign) - sign;
}

inline std::int32_t clamp_lanes(std::int64_t v, std::int32_t lo, std::int32_t hi) {
  return static_cast<std::int32_t>(std::min<std::int64_t>(std::max<std::int64_t>(v, lo), hi));
}

/// Little-endian signed loads (the scratchpads' byte order on every host; GCC merges the bytes
/// into one load on little-endian ones).
inline std::int32_t load_i32(const std::uint8_t* p) {
  return static_cast<std::int32_t>(std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) |
                                   (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24));
}
inline std::int16_t load_i16(const std::uint8_t* p) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}

}  // namespace

TESSEL_SIM_CLONES void requantize(const std::uint8_t* src, std::int64_t count,
                                  const std::uint8_t* table, const intops::Requant& q,
                                  std::int32_t* out) {
  // The parameters in locals and `out` restrict: otherwise every store to `out` could change
  // `q`, and the loops stay scalar.
  std::int32_t* __restrict result = out;
  const std::int64_t multiplier = q.multiplier, shift = q.shift, zero_point = q.zero_point;
  const std::int32_t lo = q.lo, hi = q.hi;
  if (table == nullptr) {
    for (std::int64_t c = 0; c < count; ++c)
      result[c] = clamp_lanes(
          round_half_away_lanes(std::int64_t{load_i32(src + 4 * c)} * multiplier, shift) +
              zero_point,
          lo, hi);
    return;
  }
  for (std::int64_t c = 0; c < count; ++c)
    result[c] = clamp_lanes(
        round_half_away_lanes(std::int64_t{load_i32(src + 4 * c)} * load_i32(table + 8 * c),
                              std::int64_t{load_i32(table + 8 * c + 4)}) +
            zero_point,
        lo, hi);
}

TESSEL_SIM_CLONES void add_requantize(const std::uint8_t* a, const std::uint8_t* b,
                                      std::uint64_t bytes, std::int64_t count,
                                      const intops::AddRequant& q, std::int32_t* out) {
  std::int32_t* __restrict result = out;
  const std::int64_t multiplier_a = q.multiplier_a, multiplier_b = q.multiplier_b;
  const std::int64_t shift = q.shift, zero_point = q.zero_point;
  const std::int32_t lo = q.lo, hi = q.hi;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c)
      result[c] = clamp_lanes(
          round_half_away_lanes(std::int64_t{static_cast<std::int8_t>(a[c])} * multiplier_a +
                                    std::int64_t{static_cast<std::int8_t>(b[c])} * multiplier_b,
                                shift) +
              zero_point,
          lo, hi);
    return;
  }
  for (std::int64_t c = 0; c < count; ++c)
    result[c] =
        clamp_lanes(round_half_away_lanes(std::int64_t{load_i16(a + 2 * c)} * multiplier_a +
                                              std::int64_t{load_i16(b + 2 * c)} * multiplier_b,
                                          shift) +
                        zero_point,
                    lo, hi);
}

TESSEL_SIM_CLONES void store_elements(const std::int32_t* values, std::int64_t count,
                                      std::uint64_t bytes, std::uint8_t* dst) {
  std::uint8_t* __restrict out = dst;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c) out[c] = static_cast<std::uint8_t>(values[c]);
  } else if (bytes == 2) {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto u = static_cast<std::uint32_t>(values[c]);
      out[2 * c] = static_cast<std::uint8_t>(u);
      out[2 * c + 1] = static_cast<std::uint8_t>(u >> 8);
    }
  } else {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto u = static_cast<std::uint32_t>(values[c]);
      for (std::uint64_t k = 0; k < bytes; ++k)
        out[static_cast<std::int64_t>(bytes) * c + static_cast<std::int64_t>(k)] =
            static_cast<std::uint8_t>(u >> (8 * k));
    }
  }
}

TESSEL_SIM_CLONES void store_accumulators(const std::uint32_t* sums, const std::uint8_t* start,
                                          std::int64_t count, std::uint8_t* slot) {
  for (std::int64_t o = 0; o < count; ++o) {
    const std::uint32_t value =
        (start ? static_cast<std::uint32_t>(load_i32(start + 4 * o)) : 0u) + sums[o];
    std::uint8_t* p = slot + 4 * o;
    p[0] = static_cast<std::uint8_t>(value);
    p[1] = static_cast<std::uint8_t>(value >> 8);
    p[2] = static_cast<std::uint8_t>(value >> 16);
    p[3] = static_cast<std::uint8_t>(value >> 24);
  }
}

TESSEL_SIM_CLONES void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w,
                                            std::int64_t channels, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  for (std::int64_t c = 0; c < channels; ++c) out[c] += product(a[c], w[c]);
}

}  // namespace tessel::sim::kernels
