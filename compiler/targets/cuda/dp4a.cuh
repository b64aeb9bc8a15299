// The dp4a implicit-GEMM convolution, phase by phase, host- and device-callable: the CUDA kernel
// runs each phase in its 256 threads between barriers, and the host emulator runs the same
// phases thread by thread, so the emulator executes the kernel's own tiling and indexing.
#pragma once

#include <cstdint>
#include <cstring>

#include "compiler/targets/cuda/device_ops.cuh"

namespace tessel::cuda {

/// Tile shape of the kernel (plan.hpp's kDp4aTile* and the launch geometry match these).
inline constexpr int kDp4aM = 64;       ///< output pixels per block
inline constexpr int kDp4aN = 64;       ///< output channels per block
inline constexpr int kDp4aWords = 8;    ///< K slice: 8 words of 4 int8 channels (32 bytes)
inline constexpr int kDp4aBlock = 256;  ///< threads; thread t owns rows 4*(t/16).., cols 4*(t%16)..
inline constexpr int kDp4aPad = 4;      ///< words of padding per shared-memory row

/// Shared-memory tiles, K-major: tile_a[word][pixel], tile_b[word][channel].
struct Dp4aTiles {
  std::int32_t a[kDp4aWords][kDp4aM + kDp4aPad];
  std::int32_t b[kDp4aWords][kDp4aN + kDp4aPad];
};

/// __dp4a(a, b, c): c + the sum of the four products of the signed bytes of a and b, in int32
/// with wrap-around (the hardware instruction on the device, the same arithmetic on the host).
TESSEL_HD std::int32_t dot4(std::int32_t a, std::int32_t b, std::int32_t c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, c);
#else
  std::uint32_t sum = static_cast<std::uint32_t>(c);
  for (int i = 0; i < 4; ++i) {
    const auto x = static_cast<std::int8_t>(static_cast<std::uint32_t>(a) >> (8 * i));
    const auto y = static_cast<std::int8_t>(static_cast<std::uint32_t>(b) >> (8 * i));
    sum += static_cast<std::uint32_t>(static_cast<std::int32_t>(x) * y);
  }
  return static_cast<std::int32_t>(sum);
#endif
}

/// The 4-byte word at `byte_offset` (4-aligned) of `base`: a plain load on the device, memcpy on
/// the host (where the buffer is a byte vector and a cast would break aliasing rules).
TESSEL_HD std::int32_t load_word(const void* base, std::int64_t byte_offset) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::int32_t*>(static_cast<const char*>(base) + byte_offset);
#else
  std::int32_t w;
  std::memcpy(&w, static_cast<const char*>(base) + byte_offset, 4);
  return w;
#endif
}

/// Words of K: taps x (weight_c_stride / 4).
TESSEL_HD std::int64_t dp4a_k_words(const ConvArgs& a) {
  return a.window.kernel_h * a.window.kernel_w * (a.weight_c_stride / 4);
}

/// Phase 1, thread `tid` of block (m0, o0): stages its share of the K slice starting at word
/// `k0` (the im2col word of input pixels, zero outside the image or past K; the packed weight
/// words). Requires 4-byte-aligned x words (pixel_stride and channel_offset multiples of 4).
TESSEL_HD void dp4a_load(const ConvArgs& a, std::int64_t m0, std::int64_t o0, std::int64_t k0,
                         int tid, Dp4aTiles& t) {
  const std::int64_t pixels = a.y.n * a.y.h * a.y.w;
  const std::int64_t words_per_tap = a.weight_c_stride / 4;
  const std::int64_t k_words = dp4a_k_words(a);
  for (int e = tid; e < kDp4aM * kDp4aWords; e += kDp4aBlock) {
    const int row = e / kDp4aWords, word = e % kDp4aWords;
    const std::int64_t k = k0 + word, m = m0 + row;
    std::int32_t value = 0;
    if (k < k_words && m < pixels) {
      const std::int64_t tap = k / words_per_tap, c4 = k % words_per_tap;
      const std::int64_t kh = tap / a.window.kernel_w, kw = tap % a.window.kernel_w;
      const std::int64_t ow = m % a.y.w, oh = (m / a.y.w) % a.y.h, n = m / (a.y.w * a.y.h);
      const std::int64_t ih = oh * a.window.stride_h - a.window.pad_top + kh * a.window.dilation_h;
      const std::int64_t iw = ow * a.window.stride_w - a.window.pad_left + kw * a.window.dilation_w;
      if (ih >= 0 && ih < a.x.h && iw >= 0 && iw < a.x.w)
        value = load_word(a.x.data, view_index(a.x, n, ih, iw, c4 * 4));
    }
    t.a[word][row] = value;
  }
  for (int e = tid; e < kDp4aN * kDp4aWords; e += kDp4aBlock) {
    const int col = e / kDp4aWords, word = e % kDp4aWords;
    const std::int64_t k = k0 + word, o = o0 + col;
    t.b[word][col] = (k < k_words && o < a.y.c) ? load_word(a.weights, (o * k_words + k) * 4) : 0;
  }
}

/// Phase 2, thread `tid`: its 4 x 4 accumulators += the staged slice.
TESSEL_HD void dp4a_accumulate(const Dp4aTiles& t, int tid, std::int32_t (&acc)[4][4]) {
  const int tx = tid % 16, ty = tid / 16;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kDp4aWords; ++k) {
    std::int32_t av[4], bv[4];
    for (int i = 0; i < 4; ++i) {
      av[i] = t.a[k][ty * 4 + i];
      bv[i] = t.b[k][tx * 4 + i];
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) acc[i][j] = dot4(av[i], bv[j], acc[i][j]);
  }
}

/// Phase 3, thread `tid`: the fused epilogue and the stores of its outputs in the block.
TESSEL_HD void dp4a_store(const ConvArgs& a, std::int64_t m0, std::int64_t o0, int tid,
                          const std::int32_t (&acc)[4][4]) {
  const int tx = tid % 16, ty = tid / 16;
  const std::int64_t pixels = a.y.n * a.y.h * a.y.w;
  for (int i = 0; i < 4; ++i) {
    const std::int64_t m = m0 + ty * 4 + i;
    if (m >= pixels) continue;
    const std::int64_t ow = m % a.y.w, oh = (m / a.y.w) % a.y.h, n = m / (a.y.w * a.y.h);
    for (int j = 0; j < 4; ++j) {
      const std::int64_t o = o0 + tx * 4 + j;
      if (o >= a.y.c) continue;
      const std::int32_t v = apply_epilogue(a.epilogue, acc[i][j], o,
                                            residual_at(a.residual, a.epilogue, n, oh, ow, o));
      store_int(a.y.data, a.y.type, view_index(a.y, n, oh, ow, o), v);
    }
  }
}

}  // namespace tessel::cuda
