// Per-output-element definitions of every GPU kernel over NHWC views, host- and device-callable:
// the CUDA kernels are thin thread-index wrappers around them, and the host emulator loops over
// them, so the emulator's bit-exactness vs the golden executor covers the kernels' arithmetic.
// (The dp4a implicit-GEMM kernel tiles the same sum differently; its epilogue is shared.)
#pragma once

#include <cmath>
#include <cstdint>

#include "compiler/targets/cuda/epilogue.cuh"

namespace tessel::cuda {

/// A 4-D NHWC window onto a device buffer: element (n, y, x, c) lives at
/// ((n * h + y) * w + x) * pixel_stride + channel_offset + c. A slice of the channel axis
/// (a Concat input, a Split output) is a view with a channel offset into a wider buffer.
struct TensorView {
  void* data = nullptr;
  std::int32_t type = kI8;
  std::int64_t n = 0, h = 0, w = 0, c = 0;
  std::int64_t pixel_stride = 0;
  std::int64_t channel_offset = 0;
};

TESSEL_HD std::int64_t view_index(const TensorView& v, std::int64_t n, std::int64_t y,
                                  std::int64_t x, std::int64_t c) {
  return ((n * v.h + y) * v.w + x) * v.pixel_stride + v.channel_offset + c;
}

/// Window geometry as in ir::WindowGeometry (pad_bottom/pad_right matter only to pools).
struct Window {
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
};

/// A convolution (Gemm is the 1x1 case over a 1x1 image) with its fused epilogue.
/// Weights are packed [O][KH][KW][weight_c_stride] (input channels of the group innermost,
/// zero beyond the group's channel count).
struct ConvArgs {
  TensorView x, y, residual;
  const void* weights = nullptr;
  std::int32_t weight_type = kI8;
  std::int64_t weight_c_stride = 0;
  std::int64_t group = 1;
  Window window;
  Epilogue epilogue;
};

/// The exact integer sum of output (n, oh, ow, o) before the epilogue (int64, returned with
/// int32 wrap-around: the golden executor rejects sums outside int32).
TESSEL_HD std::int32_t conv_sum(const ConvArgs& a, std::int64_t n, std::int64_t oh, std::int64_t ow,
                                std::int64_t o) {
  const std::int64_t channels_per_group = a.x.c / a.group;
  const std::int64_t group_index = o / (a.y.c / a.group);
  std::int64_t sum = 0;
  for (std::int64_t kh = 0; kh < a.window.kernel_h; ++kh) {
    const std::int64_t ih = oh * a.window.stride_h - a.window.pad_top + kh * a.window.dilation_h;
    if (ih < 0 || ih >= a.x.h) continue;
    for (std::int64_t kw = 0; kw < a.window.kernel_w; ++kw) {
      const std::int64_t iw = ow * a.window.stride_w - a.window.pad_left + kw * a.window.dilation_w;
      if (iw < 0 || iw >= a.x.w) continue;
      const std::int64_t x_base = view_index(a.x, n, ih, iw, group_index * channels_per_group);
      const std::int64_t w_base =
          ((o * a.window.kernel_h + kh) * a.window.kernel_w + kw) * a.weight_c_stride;
      for (std::int64_t c = 0; c < channels_per_group; ++c)
        sum += static_cast<std::int64_t>(load_int(a.x.data, a.x.type, x_base + c)) *
               load_int(a.weights, a.weight_type, w_base + c);
    }
  }
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum)));
}

/// Residual operand of output (n, oh, ow, o), 0 when the epilogue has no add.
TESSEL_HD std::int32_t residual_at(const TensorView& r, const Epilogue& e, std::int64_t n,
                                   std::int64_t y, std::int64_t x, std::int64_t c) {
  return e.has_add ? load_int(r.data, r.type, view_index(r, n, y, x, c)) : 0;
}

/// Max or average pooling (GlobalAveragePool is the whole-image window).
struct PoolArgs {
  TensorView x, y;
  Window window;
  std::int32_t is_max = 1;
  Epilogue epilogue;  ///< average: the requantization s_in / (s_out * kh * kw)
};

/// Max: the integer max over in-image window positions (padding never wins); the smallest value
/// of the type when none is in the image. Average: the int32 sum over in-image positions (padding
/// adds zeros), to which the caller applies the epilogue. Mirrors the golden max_pool and
/// window_sums loops, including the ceil-mode clip of the window to the padded extent.
TESSEL_HD std::int32_t pool_value(const PoolArgs& a, std::int64_t n, std::int64_t oh,
                                  std::int64_t ow, std::int64_t c) {
  const Window& g = a.window;
  if (a.is_max) {
    std::int32_t best = a.x.type == kI8 ? -128 : a.x.type == kI16 ? -32768 : (-2147483647 - 1);
    for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const std::int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      if (ih < 0 || ih >= a.x.h) continue;
      for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const std::int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        if (iw < 0 || iw >= a.x.w) continue;
        const std::int32_t v = load_int(a.x.data, a.x.type, view_index(a.x, n, ih, iw, c));
        best = v > best ? v : best;
      }
    }
    return best;
  }
  const std::int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
  const std::int64_t h1 =
      h0 + g.kernel_h < a.x.h + g.pad_bottom ? h0 + g.kernel_h : a.x.h + g.pad_bottom;
  const std::int64_t w1 =
      w0 + g.kernel_w < a.x.w + g.pad_right ? w0 + g.kernel_w : a.x.w + g.pad_right;
  const std::int64_t hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
  const std::int64_t he = h1 < a.x.h ? h1 : a.x.h, we = w1 < a.x.w ? w1 : a.x.w;
  std::int64_t sum = 0;
  for (std::int64_t ih = hs; ih < he; ++ih)
    for (std::int64_t iw = ws; iw < we; ++iw)
      sum += load_int(a.x.data, a.x.type, view_index(a.x, n, ih, iw, c));
  return static_cast<std::int32_t>(sum);
}

/// Float NCHW network input -> integer NHWC: clamp(round_half_away(x / scale) + z, lo, hi),
/// NaN -> z (the golden Quantize: std::round of the double quotient, then clamp).
struct QuantizeArgs {
  const float* x = nullptr;  ///< NCHW, logical channels
  TensorView y;
  double scale = 1.0;
  std::int32_t zero_point = 0, lo = -128, hi = 127;
};

TESSEL_HD std::int32_t quantize_element(const QuantizeArgs& a, std::int64_t n, std::int64_t y,
                                        std::int64_t x, std::int64_t c) {
  const float v = a.x[((n * a.y.c + c) * a.y.h + y) * a.y.w + x];
  double r = 0.0;
  if (v == v) {  // not NaN: round half away from zero, exactly (no q + 0.5 double rounding)
#if defined(__CUDA_ARCH__)
    r = ::round(static_cast<double>(v) / a.scale);
#else
    r = std::round(static_cast<double>(v) / a.scale);
#endif
  }
  const double shifted = r + a.zero_point;
  const double clamped = shifted < a.lo ? a.lo : shifted > a.hi ? a.hi : shifted;
  return static_cast<std::int32_t>(clamped);
}

}  // namespace tessel::cuda
