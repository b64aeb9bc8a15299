// Vectorised kernels of the executor's fast path: channels-last (NHWC) data, integer ops exact.
//
// Every integer kernel here computes exactly what support/int_ops.hpp defines element by element
// (tests/cpu/nhwc_kernels_test.cpp checks them against it); they are only written as branch-free
// loops over the innermost (channel) axis so that the compiler vectorises them. Each is compiled
// for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and baseline x86-64, chosen at load time.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/op.hpp"
#include "support/int_ops.hpp"

namespace tessel::cpu::nhwc {

/// Transposes [N, C, HW] <-> [N, HW, C] (elements of `element_bytes` = 1, 2 or 4 bytes).
void nchw_to_nhwc(const void* src, void* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  int element_bytes);
void nhwc_to_nchw(const void* src, void* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  int element_bytes);

/// Per-channel requantization parameters in the form the loops use (int64 lanes).
struct ChannelRequant {
  std::vector<std::int64_t> multiplier;  ///< M[c]
  std::vector<std::int64_t> half;        ///< 2^(r[c]-1), 0 when r[c] = 0
  std::vector<std::int64_t> shift;       ///< r[c]
  std::int32_t zero_point = 0;
  std::int32_t lo = -128, hi = 127;  ///< one clamp for all channels (ReLU/Clip may be folded in)
};

/// Expands per-channel (or one per-tensor) intops::Requant to `channels` lanes. The clamp bounds
/// and zero point come from `params[0]` (the quantizer gives every channel the same).
ChannelRequant channel_requant(const std::vector<intops::Requant>& params, std::int64_t channels);

/// y[p, c] = intops::requantize(acc[p, c] + bias[c], q[c]) over `pixels` x `channels`
/// (channels innermost); `bias` may be null. Returns false (leaving `y` unspecified) when some
/// acc + bias leaves int32 — the caller reports it.
bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::int8_t* y,
                std::int64_t pixels, std::int64_t channels, const ChannelRequant& q);
bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::int16_t* y,
                std::int64_t pixels, std::int64_t channels, const ChannelRequant& q);
bool requantize(const std::int32_t* acc, const std::int32_t* bias, std::uint8_t* y,
                std::int64_t pixels, std::int64_t channels, const ChannelRequant& q);

/// acc[p, c] += bias[c]; false (acc unchanged) when a sum would leave int32.
bool add_bias(std::int32_t* acc, const std::int32_t* bias, std::int64_t pixels,
              std::int64_t channels);

/// y[i] = intops::add_requantize(a[i], b[i], q) for i < n (same-typed a, b, y).
void add_requantize(const std::int8_t* a, const std::int8_t* b, std::int8_t* y, std::int64_t n,
                    const intops::AddRequant& q);
void add_requantize(const std::int16_t* a, const std::int16_t* b, std::int16_t* y, std::int64_t n,
                    const intops::AddRequant& q);

/// y[i] = clamp(x[i], lo, hi) (ReLU/Clip on integers).
void clamp(const std::int8_t* x, std::int8_t* y, std::int64_t n, std::int32_t lo, std::int32_t hi);
void clamp(const std::int16_t* x, std::int16_t* y, std::int64_t n, std::int32_t lo,
           std::int32_t hi);

/// y[i] = clamp(round_half_away(double(x[i]) / scale) + zero_point, lo, hi); NaN -> zero_point
/// clamped (as the scalar executor: NaN rounds to 0).
void quantize(const float* x, std::int8_t* y, std::int64_t n, double scale, std::int32_t zero_point,
              std::int32_t lo, std::int32_t hi);

/// Max pool over NHWC [n, h, w, c] -> [n, oh, ow, c] (padding never wins).
template <class T>
void max_pool(const T* x, T* y, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
              std::int64_t oh, std::int64_t ow, const ir::WindowGeometry& g);

/// Window sums over NHWC (padding contributes zeros): sums[((n*oh + i)*ow + j)*c + ch] and the
/// element count ONNX divides by (count_include_pad or not) per output pixel in `counts`.
/// Integer inputs sum exactly in int64, float inputs in double.
template <class T, class Acc>
void window_sums(const T* x, Acc* sums, std::int64_t* counts, std::int64_t n, std::int64_t c,
                 std::int64_t h, std::int64_t w, std::int64_t oh, std::int64_t ow,
                 const ir::WindowGeometry& g, bool count_include_pad);

/// Integer matrix product y[M,N] = a[M,K] x b[N,K]^T + bias[n] (bias may be null), exact: the
/// dot products accumulate in int32, which cannot overflow for K < 2^17 (|a*b| <= 2^14), and the
/// bias is added in int64. Returns false when a result leaves int32. Requires K < 2^17.
bool gemm_s8(const std::int8_t* a, const std::int8_t* b_nk, const std::int32_t* bias,
             std::int32_t* y, std::int64_t m, std::int64_t n, std::int64_t k);

/// Integer convolution for what oneDNN cannot run exactly (16-bit data): im2col of blocks of
/// output pixels into int16 rows, then int64-accumulated dot products with the weights.
/// `x`: NHWC [n, h, w, c] widened to int16 (any of i8/u8/i16 fits), `w_ohwc`: weights reordered
/// [o][kh][kw][c / group] as int16 (see reorder_weights_ohwc), `bias`: int32 per output channel
/// or null. Writes y NHWC [n, oh, ow, o] as int32 and returns false when a result leaves int32
/// (y then unspecified; the caller reports the element).
bool conv_im2col_s16(const std::int16_t* x, const std::int16_t* w_ohwc, const std::int32_t* bias,
                     std::int32_t* y, std::int64_t n, std::int64_t c, std::int64_t h,
                     std::int64_t w, std::int64_t o, std::int64_t oh, std::int64_t ow,
                     const ir::WindowGeometry& g);

/// OIHW weights (any integer type, widened) -> [o][kh][kw][c / group] int16 for conv_im2col_s16.
template <class T>
std::vector<std::int16_t> reorder_weights_ohwc(const T* oihw, std::int64_t o, std::int64_t cg,
                                               std::int64_t kh, std::int64_t kw);

}  // namespace tessel::cpu::nhwc
