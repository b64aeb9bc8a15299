// Vectorised NHWC kernels: branch-free loops over channels, cloned per x86-64 ISA level.
#include "compiler/targets/cpu/nhwc_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "compiler/targets/cpu/lanes.hpp"

namespace tessel::cpu::nhwc {

namespace {

template <class T>
TESSEL_INLINE void transpose(const T* src, T* dst, std::int64_t rows, std::int64_t cols) {
  // dst[c][r] = src[r][c], in 16 x 16 blocks to keep both sides in cache lines.
  constexpr std::int64_t kBlock = 16;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::int64_t r1 = std::min(r0 + kBlock, rows), c1 = std::min(c0 + kBlock, cols);
      for (std::int64_t c = c0; c < c1; ++c)
        for (std::int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

template <class T>
void transpose_batches(const void* src, void* dst, std::int64_t n, std::int64_t rows,
                       std::int64_t cols) {
  const auto* s = static_cast<const T*>(src);
  auto* d = static_cast<T*>(dst);
  for (std::int64_t b = 0; b < n; ++b)
    transpose(s + b * rows * cols, d + b * rows * cols, rows, cols);
}

void transpose_any(const void* src, void* dst, std::int64_t n, std::int64_t rows, std::int64_t cols,
                   int element_bytes) {
  switch (element_bytes) {
    case 1:
      transpose_batches<std::uint8_t>(src, dst, n, rows, cols);
      break;
    case 2:
      transpose_batches<std::uint16_t>(src, dst, n, rows, cols);
      break;
    default:
      transpose_batches<std::uint32_t>(src, dst, n, rows, cols);
      break;
  }
}

using lanes::clamp_lane;
using lanes::rha_lane;

template <class T>
TESSEL_INLINE bool requantize_body(const std::int32_t* acc, const std::int32_t* bias, T* y,
                                   std::int64_t pixels, std::int64_t channels,
                                   const ChannelRequant& q) {
  const std::int64_t* m = q.multiplier.data();
  const std::int64_t* half = q.half.data();
  const std::int64_t* shift = q.shift.data();
  const std::int64_t zp = q.zero_point, lo = q.lo, hi = q.hi;
  std::int64_t min_sum = 0, max_sum = 0;
  for (std::int64_t p = 0; p < pixels; ++p) {
    const std::int32_t* a = acc + p * channels;
    T* out = y + p * channels;
    if (bias) {
      for (std::int64_t c = 0; c < channels; ++c) {
        const std::int64_t v = std::int64_t{a[c]} + bias[c];
        min_sum = std::min(min_sum, v);
        max_sum = std::max(max_sum, v);
        // An out-of-range v is reported below; its (unused) lane result is harmless.
        out[c] = static_cast<T>(clamp_lane(rha_lane(v * m[c], half[c], shift[c]) + zp, lo, hi));
      }
    } else {
      for (std::int64_t c = 0; c < channels; ++c)
        out[c] = static_cast<T>(
            clamp_lane(rha_lane(std::int64_t{a[c]} * m[c], half[c], shift[c]) + zp, lo, hi));
    }
  }
  return min_sum >= std::numeric_limits<std::int32_t>::min() &&
         max_sum <= std::numeric_limits<std::int32_t>::max();
}

template <class T>
TESSEL_INLINE void add_requantize_body(const T* a, const T* b, T* y, std::int64_t n,
                                       const intops::AddRequant& q) {
  const std::int64_t ma = q.multiplier_a, mb = q.multiplier_b, shift = q.shift;
  const std::int64_t half = shift > 0 ? std::int64_t{1} << (shift - 1) : 0;
  const std::int64_t zp = q.zero_point, lo = q.lo, hi = q.hi;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t sum = std::int64_t{a[i]} * ma + std::int64_t{b[i]} * mb;
    y[i] = static_cast<T>(clamp_lane(rha_lane(sum, half, shift) + zp, lo, hi));
  }
}

template <class T>
TESSEL_INLINE void clamp_body(const T* x, T* y, std::int64_t n, std::int32_t lo, std::int32_t hi) {
  // std::clamp's order (lo wins below, then hi above), in int32 as the scalar executor.
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t v = x[i];
    y[i] = static_cast<T>(v < lo ? lo : (hi < v ? hi : v));
  }
}

}  // namespace

void nchw_to_nhwc(const void* src, void* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  int element_bytes) {
  transpose_any(src, dst, n, c, hw, element_bytes);
}

void nhwc_to_nchw(const void* src, void* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  int element_bytes) {
  transpose_any(src, dst, n, hw, c, element_bytes);
}

ChannelRequant channel_requant(const std::vector<intops::Requant>& params, std::int64_t channels) {
  ChannelRequant q;
  const auto lanes = static_cast<std::size_t>(channels);
  q.multiplier.resize(lanes);
  q.half.resize(lanes);
  q.shift.resize(lanes);
  for (std::size_t c = 0; c < lanes; ++c) {
    const auto& p = params.size() == 1 ? params[0] : params[c];
    q.multiplier[c] = p.multiplier;
    q.shift[c] = p.shift;
    q.half[c] = p.shift > 0 ? std::int64_t{1} << (p.shift - 1) : 0;
  }
  q.zero_point = params.at(0).zero_point;
  q.lo = params[0].lo;
  q.hi = params[0].hi;
  return q;
}

TESSEL_CLONES bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::int8_t* y,
                              std::int64_t pixels, std::int64_t channels, const ChannelRequant& q) {
  return requantize_body(acc, bias, y, pixels, channels, q);
}
TESSEL_CLONES bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::int16_t* y,
                              std::int64_t pixels, std::int64_t channels, const ChannelRequant& q) {
  return requantize_body(acc, bias, y, pixels, channels, q);
}
TESSEL_CLONES bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::uint8_t* y,
                              std::int64_t pixels, std::int64_t channels, const ChannelRequant& q) {
  return requantize_body(acc, bias, y, pixels, channels, q);
}

TESSEL_CLONES bool add_bias(std::int32_t* acc, const std::int32_t* bias, std::int64_t pixels,
                            std::int64_t channels) {
  // Check first, then add: on failure the accumulators stay as they were for the report.
  std::int64_t min_sum = 0, max_sum = 0;
  for (std::int64_t p = 0; p < pixels; ++p) {
    const std::int32_t* a = acc + p * channels;
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t v = std::int64_t{a[c]} + bias[c];
      min_sum = std::min(min_sum, v);
      max_sum = std::max(max_sum, v);
    }
  }
  if (min_sum < std::numeric_limits<std::int32_t>::min() ||
      max_sum > std::numeric_limits<std::int32_t>::max())
    return false;
  for (std::int64_t p = 0; p < pixels; ++p) {
    std::int32_t* a = acc + p * channels;
    for (std::int64_t c = 0; c < channels; ++c) a[c] += bias[c];
  }
  return true;
}

TESSEL_CLONES void add_requantize(const std::int8_t* a, const std::int8_t* b, std::int8_t* y,
                                  std::int64_t n, const intops::AddRequant& q) {
  add_requantize_body(a, b, y, n, q);
}
TESSEL_CLONES void add_requantize(const std::int16_t* a, const std::int16_t* b, std::int16_t* y,
                                  std::int64_t n, const intops::AddRequant& q) {
  add_requantize_body(a, b, y, n, q);
}

TESSEL_CLONES void clamp(const std::int8_t* x, std::int8_t* y, std::int64_t n, std::int32_t lo,
                         std::int32_t hi) {
  clamp_body(x, y, n, lo, hi);
}
TESSEL_CLONES void clamp(const std::int16_t* x, std::int16_t* y, std::int64_t n, std::int32_t lo,
                         std::int32_t hi) {
  clamp_body(x, y, n, lo, hi);
}

TESSEL_CLONES void quantize(const float* x, std::int8_t* y, std::int64_t n, double scale,
                            std::int32_t zero_point, std::int32_t lo, std::int32_t hi) {
  const double dlo = lo, dhi = hi, zp = zero_point;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]) / scale;
    // round half away from zero, exactly: t = trunc(v), v - t is exact for |v| < 2^52.
    const double t = std::trunc(v);
    const double frac = v - t;
    double r = t + (frac >= 0.5 ? 1.0 : 0.0) - (frac <= -0.5 ? 1.0 : 0.0);
    r = v != v ? 0.0 : r;  // NaN -> 0
    double q = r + zp;
    q = q < dlo ? dlo : q;
    q = q > dhi ? dhi : q;
    y[i] = static_cast<std::int8_t>(static_cast<std::int32_t>(q));
  }
}

template <class T>
void max_pool(const T* x, T* y, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
              std::int64_t oh, std::int64_t ow, const ir::WindowGeometry& g) {
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        T* out = y + ((b * oh + i) * ow + j) * c;
        std::fill(out, out + c, std::numeric_limits<T>::lowest());
        for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const std::int64_t ih = i * g.stride_h - g.pad_top + kh * g.dilation_h;
          if (ih < 0 || ih >= h) continue;
          for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const std::int64_t iw = j * g.stride_w - g.pad_left + kw * g.dilation_w;
            if (iw < 0 || iw >= w) continue;
            const T* in = x + ((b * h + ih) * w + iw) * c;
            for (std::int64_t ch = 0; ch < c; ++ch) out[ch] = std::max(out[ch], in[ch]);
          }
        }
      }
}

template <class T, class Acc>
void window_sums(const T* x, Acc* sums, std::int64_t* counts, std::int64_t n, std::int64_t c,
                 std::int64_t h, std::int64_t w, std::int64_t oh, std::int64_t ow,
                 const ir::WindowGeometry& g, bool count_include_pad) {
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        const std::int64_t h0 = i * g.stride_h - g.pad_top, w0 = j * g.stride_w - g.pad_left;
        const std::int64_t h1 = std::min(h0 + g.kernel_h, h + g.pad_bottom);
        const std::int64_t w1 = std::min(w0 + g.kernel_w, w + g.pad_right);
        const std::int64_t hs = std::max<std::int64_t>(h0, 0), ws = std::max<std::int64_t>(w0, 0);
        const std::int64_t he = std::min(h1, h), we = std::min(w1, w);
        const std::int64_t pixel = (b * oh + i) * ow + j;
        Acc* out = sums + pixel * c;
        std::fill(out, out + c, Acc{0});
        for (std::int64_t ih = hs; ih < he; ++ih)
          for (std::int64_t iw = ws; iw < we; ++iw) {
            const T* in = x + ((b * h + ih) * w + iw) * c;
            for (std::int64_t ch = 0; ch < c; ++ch) out[ch] += static_cast<Acc>(in[ch]);
          }
        counts[pixel] = count_include_pad ? (h1 - h0) * (w1 - w0) : (he - hs) * (we - ws);
      }
}

#define TESSEL_POOLS(T)                                                                           \
  template void max_pool<T>(const T*, T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, \
                            std::int64_t, std::int64_t, const ir::WindowGeometry&);
TESSEL_POOLS(float)
TESSEL_POOLS(std::int8_t)
TESSEL_POOLS(std::uint8_t)
TESSEL_POOLS(std::int16_t)
TESSEL_POOLS(std::int32_t)
#undef TESSEL_POOLS

#define TESSEL_SUMS(T, Acc)                                                                    \
  template void window_sums<T, Acc>(const T*, Acc*, std::int64_t*, std::int64_t, std::int64_t, \
                                    std::int64_t, std::int64_t, std::int64_t, std::int64_t,    \
                                    const ir::WindowGeometry&, bool);
TESSEL_SUMS(float, double)
TESSEL_SUMS(std::int8_t, std::int64_t)
TESSEL_SUMS(std::uint8_t, std::int64_t)
TESSEL_SUMS(std::int16_t, std::int64_t)
TESSEL_SUMS(std::int32_t, std::int64_t)
#undef TESSEL_SUMS

TESSEL_CLONES bool gemm_s8(const std::int8_t* a, const std::int8_t* b_nk, const std::int32_t* bias,
                           std::int32_t* y, std::int64_t m, std::int64_t n, std::int64_t k) {
  bool in_range = true;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int8_t* ap = a + i * k;
      const std::int8_t* bp = b_nk + j * k;
      std::int32_t dot = 0;  // |dot| <= k * 2^14 < 2^31
      for (std::int64_t t = 0; t < k; ++t)
        dot += static_cast<std::int32_t>(ap[t]) * static_cast<std::int32_t>(bp[t]);
      const std::int64_t v = std::int64_t{dot} + (bias ? bias[j] : 0);
      in_range = in_range && v >= std::numeric_limits<std::int32_t>::min() &&
                 v <= std::numeric_limits<std::int32_t>::max();
      y[i * n + j] = static_cast<std::int32_t>(v);
    }
  return in_range;
}

namespace {

TESSEL_INLINE std::int64_t dot_s16(const std::int16_t* a, const std::int16_t* b, std::int64_t k) {
  std::int64_t acc = 0;  // |a * b| <= 2^30: the int32 product is exact, the sum is not
  for (std::int64_t t = 0; t < k; ++t)
    acc += static_cast<std::int32_t>(a[t]) * static_cast<std::int32_t>(b[t]);
  return acc;
}

}  // namespace

TESSEL_CLONES bool conv_im2col_s16(const std::int16_t* x, const std::int16_t* w_ohwc,
                                   const std::int32_t* bias, std::int32_t* y, std::int64_t n,
                                   std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t o,
                                   std::int64_t oh, std::int64_t ow, const ir::WindowGeometry& g) {
  const std::int64_t groups = g.group, cg = c / groups, og = o / groups;
  const std::int64_t k = g.kernel_h * g.kernel_w * cg;  // one im2col row
  constexpr std::int64_t kBlock = 32;                   // output pixels per im2col block
  std::vector<std::int16_t> rows(static_cast<std::size_t>(kBlock * k));
  std::int64_t lowest = 0, highest = 0;
  const std::int64_t pixels = n * oh * ow;
  for (std::int64_t grp = 0; grp < groups; ++grp)
    for (std::int64_t p0 = 0; p0 < pixels; p0 += kBlock) {
      const std::int64_t p1 = std::min(p0 + kBlock, pixels);
      for (std::int64_t p = p0; p < p1; ++p) {  // im2col: zeros where the window leaves x
        const std::int64_t b = p / (oh * ow), i = (p / ow) % oh, j = p % ow;
        std::int16_t* row = rows.data() + (p - p0) * k;
        for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const std::int64_t ih = i * g.stride_h - g.pad_top + kh * g.dilation_h;
          for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const std::int64_t iw = j * g.stride_w - g.pad_left + kw * g.dilation_w;
            std::int16_t* dst = row + (kh * g.kernel_w + kw) * cg;
            if (ih < 0 || ih >= h || iw < 0 || iw >= w)
              std::fill(dst, dst + cg, std::int16_t{0});
            else
              std::copy_n(x + ((b * h + ih) * w + iw) * c + grp * cg, cg, dst);
          }
        }
      }
      for (std::int64_t oc = grp * og; oc < (grp + 1) * og; ++oc) {
        const std::int16_t* wr = w_ohwc + oc * k;
        const std::int64_t b0 = bias ? bias[oc] : 0;
        for (std::int64_t p = p0; p < p1; ++p) {
          const std::int64_t v = dot_s16(rows.data() + (p - p0) * k, wr, k) + b0;
          lowest = std::min(lowest, v);
          highest = std::max(highest, v);
          y[p * o + oc] = static_cast<std::int32_t>(v);
        }
      }
    }
  return lowest >= std::numeric_limits<std::int32_t>::min() &&
         highest <= std::numeric_limits<std::int32_t>::max();
}

template <class T>
std::vector<std::int16_t> reorder_weights_ohwc(const T* oihw, std::int64_t o, std::int64_t cg,
                                               std::int64_t kh, std::int64_t kw) {
  std::vector<std::int16_t> out(static_cast<std::size_t>(o * cg * kh * kw));
  for (std::int64_t oc = 0; oc < o; ++oc)
    for (std::int64_t ch = 0; ch < cg; ++ch)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j)
          out[static_cast<std::size_t>(((oc * kh + i) * kw + j) * cg + ch)] =
              static_cast<std::int16_t>(oihw[((oc * cg + ch) * kh + i) * kw + j]);
  return out;
}
template std::vector<std::int16_t> reorder_weights_ohwc<std::int8_t>(const std::int8_t*,
                                                                     std::int64_t, std::int64_t,
                                                                     std::int64_t, std::int64_t);
template std::vector<std::int16_t> reorder_weights_ohwc<std::int16_t>(const std::int16_t*,
                                                                      std::int64_t, std::int64_t,
                                                                      std::int64_t, std::int64_t);

}  // namespace tessel::cpu::nhwc
