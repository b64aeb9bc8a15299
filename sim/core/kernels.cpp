// The datapath's multiply-accumulate loops (kernels.hpp), compiled -O3 for the auto-vectoriser;
// the dense conv also in AVX-512 VNNI and in AVX2 intrinsics (register-tiled), chosen at run time.
#include "sim/core/kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

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

bool simd_kernels_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TESSEL_SIM_PORTABLE_KERNELS");
    return value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0;
  }();
  return enabled;
}

bool avx512_kernels_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TESSEL_SIM_NO_AVX512");
    return simd_kernels_enabled() &&
           (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0);
  }();
  return enabled;
}

namespace {

/// A product in the ISA's int32 arithmetic: exact for int16 operands (|a * w| <= 2^30), then
/// taken mod 2^32 so that sums wrap instead of overflowing.
inline std::uint32_t product(std::int32_t a, std::int16_t w) {
  return static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(std::int32_t{w});
}

}  // namespace

namespace {

/// The portable dense conv: one pixel at a time, the output channels vectorised.
TESSEL_SIM_CLONES void conv_dense_generic(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t out_channels, std::int64_t block, AccInit init,
    const std::uint8_t* bias, std::uint8_t* acc, const std::int64_t* slot_offsets) {
  std::vector<std::uint32_t> sums(static_cast<std::size_t>(out_channels));
  std::vector<std::int16_t> x(static_cast<std::size_t>(2 * in_pairs));
  for (std::int64_t p = 0; p < pixel_count; ++p) {
    std::fill(sums.begin(), sums.end(), 0u);
    for (std::int64_t t = 0; t < tap_count; ++t) {
      std::memcpy(x.data(), image + pixel_offsets[p] + tap_offsets[t],
                  static_cast<std::size_t>(4 * in_pairs));
      for (std::int64_t first = 0; first < out_channels; first += block) {
        const std::int64_t width = std::min(block, out_channels - first);
        const std::int16_t* wt =
            w + dense_index(t, 0, first, tap_count, in_pairs, out_channels, block);
        std::uint32_t* __restrict out = sums.data() + first;
        for (std::int64_t k = 0; k < in_pairs; ++k) {
          const std::int16_t a0 = x[static_cast<std::size_t>(2 * k)];
          const std::int16_t a1 = x[static_cast<std::size_t>(2 * k + 1)];
          const std::int16_t* __restrict wk = wt + 2 * k * width;
          for (std::int64_t o = 0; o < width; ++o)
            out[o] += product(a0, wk[2 * o]) + product(a1, wk[2 * o + 1]);
        }
      }
    }
    std::uint8_t* slot = acc + slot_offsets[p];
    const std::uint8_t* start = init == AccInit::kBias   ? bias
                                : init == AccInit::kSelf ? slot
                                                         : nullptr;
    store_accumulators(sums.data(), start, out_channels, slot);
  }
}

#ifdef TESSEL_SIM_VNNI
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

TESSEL_SIM_VNNI_TARGET void conv_dense_vnni(
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

bool cpu_has_vnni() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni") && avx512_kernels_enabled();
  return has;
}

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

TESSEL_SIM_AVX2_TARGET void conv_dense_avx2_blocks(
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

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") && simd_kernels_enabled();
  return has;
}
#endif

}  // namespace

std::int64_t dense_block(std::int64_t out_channels) {
#ifdef TESSEL_SIM_VNNI
  if (!cpu_has_vnni() && cpu_has_avx2()) return 16;
#endif
  return out_channels;
}

void conv_dense(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                std::int64_t pixel_count, const std::int64_t* tap_offsets, std::int64_t tap_count,
                std::int64_t in_pairs, const std::int16_t* w, std::int64_t out_channels,
                std::int64_t block, AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                const std::int64_t* slot_offsets) {
#ifdef TESSEL_SIM_VNNI
  // The VNNI loop reads one block (its 64-channel chunks would straddle narrower ones).
  if (cpu_has_vnni() && block >= out_channels) {
    conv_dense_vnni(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                    out_channels, init, bias, acc, slot_offsets);
    return;
  }
  if (cpu_has_avx2()) {
    conv_dense_avx2_blocks(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                           out_channels, block, init, bias, acc, slot_offsets);
    return;
  }
#endif
  conv_dense_generic(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                     out_channels, block, init, bias, acc, slot_offsets);
}

bool conv_dense_avx2(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                     std::int64_t pixel_count, const std::int64_t* tap_offsets,
                     std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                     std::int64_t out_channels, std::int64_t block, AccInit init,
                     const std::uint8_t* bias, std::uint8_t* acc,
                     const std::int64_t* slot_offsets) {
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_avx2()) {
    conv_dense_avx2_blocks(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                           out_channels, block, init, bias, acc, slot_offsets);
    return true;
  }
#endif
  return false;
}

std::vector<std::int32_t> drop_zero_pairs(PairWeights& w, std::int64_t tap_count,
                                          std::int64_t in_pairs, std::int64_t out_channels,
                                          std::int64_t block) {
  // Pair k's weights in tap t of the block starting at channel `first`: one run of 2 * width.
  const auto run = [&](std::int64_t pairs, std::int64_t first, std::int64_t t, std::int64_t k) {
    return dense_index(t, 2 * k, first, tap_count, pairs, out_channels, block);
  };
  // One pass in memory order; a pair found nonzero is not read again.
  std::vector<char> nonzero(static_cast<std::size_t>(in_pairs), 0);
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t width = std::min(block, out_channels - first);
    for (std::int64_t t = 0; t < tap_count; ++t)
      for (std::int64_t k = 0; k < in_pairs; ++k) {
        char& seen = nonzero[static_cast<std::size_t>(k)];
        if (seen) continue;
        const std::int16_t* pair = w.data() + run(in_pairs, first, t, k);
        seen = std::any_of(pair, pair + 2 * width, [](std::int16_t v) { return v != 0; });
      }
  }
  std::vector<std::int64_t> kept;
  for (std::int64_t k = 0; k < in_pairs; ++k)
    if (nonzero[static_cast<std::size_t>(k)]) kept.push_back(k);
  const auto count = static_cast<std::int64_t>(kept.size());
  if (count == 0 || 4 * count > 3 * in_pairs) return {};
  // In place, front to back (block, tap, kept pair): each run moves to where the narrower
  // layout puts it, never past where it came from, and the destinations ascend.
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t width = std::min(block, out_channels - first);
    for (std::int64_t t = 0; t < tap_count; ++t)
      for (std::int64_t j = 0; j < count; ++j)
        std::memmove(w.data() + run(count, first, t, j),
                     w.data() + run(in_pairs, first, t, kept[static_cast<std::size_t>(j)]),
                     static_cast<std::size_t>(2 * width) * sizeof(std::int16_t));
  }
  w.resize(static_cast<std::size_t>(tap_count * count * 2 * out_channels));
  std::vector<std::int32_t> channels;
  for (const std::int64_t k : kept) {
    channels.push_back(static_cast<std::int32_t>(2 * k));
    channels.push_back(static_cast<std::int32_t>(2 * k + 1));
  }
  return channels;
}

void conv_dense_portable(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                         std::int64_t pixel_count, const std::int64_t* tap_offsets,
                         std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                         std::int64_t out_channels, std::int64_t block, AccInit init,
                         const std::uint8_t* bias, std::uint8_t* acc,
                         const std::int64_t* slot_offsets) {
  conv_dense_generic(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                     out_channels, block, init, bias, acc, slot_offsets);
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

namespace {

#ifdef TESSEL_SIM_VNNI
// GCC 12's AVX-512 headers pass _mm512_undefined_*() (a self-initialised variable) to the
// builtins of unmasked intrinsics, which -W(maybe-)uninitialized reports once they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && avx512_kernels_enabled();
  return has;
}
#endif

}  // namespace

void requantize_store(const std::uint8_t* src, std::int64_t count, const std::uint8_t* table,
                      const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst) {
  requantize_store_pixels(src, 0, 1, count, table, q, bytes, dst, 0);
}

void requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step, std::int64_t pixels,
                             std::int64_t count, const std::uint8_t* table,
                             const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst,
                             std::int64_t dst_step) {
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
    if (bytes == 1) {
      requantize_pixels_avx512<1>(src, src_step, pixels, count, table, q, dst, dst_step);
    } else {
      requantize_pixels_avx512<2>(src, src_step, pixels, count, table, q, dst, dst_step);
    }
    return;
  }
  if (cpu_has_avx2() && (bytes == 1 || bytes == 2)) {
    if (bytes == 1) {
      requantize_pixels_avx2<1>(src, src_step, pixels, count, table, q, dst, dst_step);
    } else {
      requantize_pixels_avx2<2>(src, src_step, pixels, count, table, q, dst, dst_step);
    }
    return;
  }
#endif
  // Portable: 8 channels at a time through a small buffer, the same read-before-write order.
  std::int32_t values[8];
  for (std::int64_t pixel = 0; pixel < pixels; ++pixel, src += src_step, dst += dst_step)
    for (std::int64_t c = 0; c < count; c += 8) {
      const std::int64_t n = std::min<std::int64_t>(8, count - c);
      requantize(src + 4 * c, n, table ? table + 8 * c : nullptr, q, values);
      store_elements(values, n, bytes, dst + static_cast<std::int64_t>(bytes) * c);
    }
}

void add_requantize_store(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                          std::int64_t count, const intops::AddRequant& q, std::uint8_t* dst) {
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
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
    return;
  }
#endif
  const auto step = static_cast<std::int64_t>(bytes);
  std::int64_t done = 0;  // elements the AVX2 loops stored (whole steps), the rest below
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_avx2() && (bytes == 1 || bytes == 2)) {
    AddNarrow narrow;
    if (const std::uint8_t* x = pass_through_operand(a, b, static_cast<int>(bytes), q)) {
      done = bytes == 1 ? clamp_store_avx2<1>(x, count, q, dst)
                        : clamp_store_avx2<2>(x, count, q, dst);
    } else if (add_narrow_of(q, static_cast<int>(bytes), narrow)) {
      done = bytes == 1 ? add_requantize_store_narrow_avx2<1>(a, b, count, q, narrow, dst)
                        : add_requantize_store_narrow_avx2<2>(a, b, count, q, narrow, dst);
    }
  }
#endif
  std::int32_t values[8];
  for (std::int64_t c = done; c < count; c += 8) {
    const std::int64_t n = std::min<std::int64_t>(8, count - c);
    add_requantize(a + step * c, b + step * c, bytes, n, q, values);
    store_elements(values, n, bytes, dst + step * c);
  }
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

TESSEL_SIM_CLONES void max_elements(const std::uint8_t* src, std::int64_t count,
                                    std::uint64_t bytes, std::uint8_t* best) {
  // memcpy per element: unaligned, alias-safe loads the vectoriser turns into vector ones.
  std::uint8_t* __restrict out = best;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto v = static_cast<std::int8_t>(src[c]);
      const auto b = static_cast<std::int8_t>(out[c]);
      out[c] = static_cast<std::uint8_t>(std::max(v, b));
    }
    return;
  }
  for (std::int64_t c = 0; c < count; ++c) {
    std::int16_t v, b;
    std::memcpy(&v, src + 2 * c, 2);
    std::memcpy(&b, out + 2 * c, 2);
    b = std::max(v, b);
    std::memcpy(out + 2 * c, &b, 2);
  }
}

void max_of_taps(const std::uint8_t* const* src, std::int64_t tap_count, std::int64_t count,
                 std::uint64_t bytes, std::uint8_t* best) {
#ifdef TESSEL_SIM_VNNI
  if (cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
    if (bytes == 1) {
      max_of_taps_avx512<1>(src, tap_count, count, best);
    } else {
      max_of_taps_avx512<2>(src, tap_count, count, best);
    }
    return;
  }
#endif
  const std::uint32_t lowest = bytes == 1 ? 0x80u : 0x8000u;  // -128 / -32768, little-endian
  for (std::int64_t c = 0; c < count; ++c)
    for (std::uint64_t k = 0; k < bytes; ++k)
      best[static_cast<std::uint64_t>(c) * bytes + k] =
          static_cast<std::uint8_t>(lowest >> (8 * k));
  for (std::int64_t t = 0; t < tap_count; ++t) max_elements(src[t], count, bytes, best);
}

TESSEL_SIM_CLONES void add_elements(const std::uint8_t* src, std::int64_t count,
                                    std::uint64_t bytes, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c)
      out[c] += static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(src[c])});
    return;
  }
  for (std::int64_t c = 0; c < count; ++c) {
    std::int16_t v;
    std::memcpy(&v, src + 2 * c, 2);
    out[c] += static_cast<std::uint32_t>(std::int32_t{v});
  }
}

TESSEL_SIM_CLONES void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w,
                                            std::int64_t channels, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  for (std::int64_t c = 0; c < channels; ++c) out[c] += product(a[c], w[c]);
}

}  // namespace tessel::sim::kernels
