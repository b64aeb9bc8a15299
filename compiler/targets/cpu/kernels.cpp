// Reference kernels (kernels.hpp): the int64-accumulating integer conv/gemm and the float gemm.
#include "compiler/targets/cpu/kernels.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "compiler/targets/cpu/workload_kernels.hpp"

namespace tessel::cpu {

Status conv_int_reference(const TensorData& x, const TensorData& w, const TensorData* bias,
                          const ir::WindowGeometry& g, TensorData& y, std::int32_t x_zero_point,
                          std::int32_t w_zero_point) {
  const auto xs = x.shape(), ws = w.shape(), ys = y.shape();
  const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const std::int64_t O = ws[0], KH = ws[2], KW = ws[3], OH = ys[2], OW = ys[3];
  const std::int64_t G = g.group, CG = C / G, OG = O / G;
  const auto xv = x.to_i32();
  const auto wv = w.to_i32();
  const std::vector<std::int32_t> bv = bias ? bias->to_i32() : std::vector<std::int32_t>();
  auto* out = y.data<std::int32_t>();
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o) {
      const std::int64_t grp = o / OG;
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          std::int64_t acc = bias ? bv[static_cast<std::size_t>(o)] : 0;
          for (std::int64_t c = 0; c < CG; ++c) {
            const std::int64_t ci = grp * CG + c;
            for (std::int64_t kh = 0; kh < KH; ++kh) {
              const std::int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              if (ih < 0 || ih >= H) continue;
              for (std::int64_t kw = 0; kw < KW; ++kw) {
                const std::int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
                if (iw < 0 || iw >= W) continue;
                const std::int64_t xval =
                    xv[static_cast<std::size_t>(((n * C + ci) * H + ih) * W + iw)] - x_zero_point;
                const std::int64_t wval =
                    wv[static_cast<std::size_t>(((o * CG + c) * KH + kh) * KW + kw)] - w_zero_point;
                acc += xval * wval;
              }
            }
          }
          const std::int64_t index = ((n * O + o) * OH + oh) * OW + ow;
          if (acc > std::numeric_limits<std::int32_t>::max() ||
              acc < std::numeric_limits<std::int32_t>::min())
            return fail("int32 accumulator overflow at output element " + std::to_string(index) +
                        " (value " + std::to_string(acc) + ")");
          out[index] = static_cast<std::int32_t>(acc);
        }
    }
  return {};
}

Status gemm_int_reference(const TensorData& a, const TensorData& b, const TensorData* bias,
                          bool trans_b, TensorData& y, std::int32_t a_zero_point,
                          std::int32_t b_zero_point) {
  const std::int64_t M = a.shape()[0], K = a.shape()[1];
  const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const auto av = a.to_i32();
  const auto bv = b.to_i32();
  const std::vector<std::int32_t> cv = bias ? bias->to_i32() : std::vector<std::int32_t>();
  auto* out = y.data<std::int32_t>();
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      std::int64_t acc = bias ? cv[static_cast<std::size_t>(n)] : 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t bval = trans_b ? bv[static_cast<std::size_t>(n * K + k)]
                                          : bv[static_cast<std::size_t>(k * N + n)];
        acc += (static_cast<std::int64_t>(av[static_cast<std::size_t>(m * K + k)]) - a_zero_point) *
               (bval - b_zero_point);
      }
      if (acc > std::numeric_limits<std::int32_t>::max() ||
          acc < std::numeric_limits<std::int32_t>::min())
        return fail("int32 accumulator overflow at output element " + std::to_string(m * N + n) +
                    " (value " + std::to_string(acc) + ")");
      out[m * N + n] = static_cast<std::int32_t>(acc);
    }
  return {};
}

void gemm_f32(const TensorData& a, const TensorData& b, const TensorData* c, bool trans_b,
              double alpha, double beta, TensorData& y) {
  const std::int64_t M = a.shape()[0], K = a.shape()[1];
  const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const float* av = a.data<float>();
  const float* out_b = b.data<float>();
  // B as [K, N] rows, so that every output row is updated k by k along contiguous n: each
  // element still sums its K products in k order from 0.0f, in float, exactly as the dot
  // product over k did, so the results are bit-identical to it; the loop over n vectorises,
  // and blocks of rows share each row of B while it is in cache.
  std::vector<float> transposed;
  if (trans_b) {
    transposed.resize(static_cast<std::size_t>(K * N));
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k)
        transposed[static_cast<std::size_t>(k * N + n)] = out_b[n * K + k];
  }
  const float* bkn = trans_b ? transposed.data() : out_b;
  float* out = y.data<float>();
  constexpr std::int64_t kRows = 8;
  const std::int64_t blocks = (M + kRows - 1) / kRows;
#pragma omp parallel for schedule(static) if (M * N * K >= (1 << 22))
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t m0 = block * kRows, rows = std::min(kRows, M - m0);
    std::vector<float> acc(static_cast<std::size_t>(rows * N), 0.0f);
    fast::gemm_f32_rows(av + m0 * K, K, bkn, acc.data(), rows, K, N);  // vectorised, same sums
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t n = 0; n < N; ++n) {
        const std::int64_t m = m0 + r;
        double v = alpha * acc[static_cast<std::size_t>(r * N + n)];
        if (c) {
          const std::int64_t cs = c->size();
          const std::int64_t ci = cs == M * N ? m * N + n : cs == 1 ? 0 : n;
          v += beta * c->data<float>()[ci];
        }
        out[m * N + n] = static_cast<float>(v);
      }
  }
}

}  // namespace tessel::cpu
