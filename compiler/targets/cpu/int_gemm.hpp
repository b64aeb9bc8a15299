// The exact int8 matrix product of the executor's MatMul and Gemm: oneDNN's s8 x s8 -> s32
// matmul where its 8-bit arithmetic is exact, else nhwc::gemm_s8.
#pragma once

#include <cstdint>

namespace tessel::cpu {

/// y[t] = a[t] x b[t] for t < batches: a[t] row-major [rows, k] at a + t * rows * k, b[t] at
/// b + t * k * n, row-major [k, n] (b_is_nk false) or [n, k] (b_is_nk true), y[t] [rows, n] int32
/// at y + t * rows * n. Exact: |sum| <= k * 2^14 < 2^31 for k < 2^17 (required). oneDNN's matmul
/// (one primitive per shape, created on first use and kept for the process) where
/// onednn_int8_conv_exact() (VNNI or AMX: no saturating int16 pair sums), else nhwc::gemm_s8 with
/// rows split over the OpenMP threads.
void gemm_s8_exact(const std::int8_t* a, const std::int8_t* b, bool b_is_nk, std::int32_t* y,
                   std::int64_t batches, std::int64_t rows, std::int64_t k, std::int64_t n);

}  // namespace tessel::cpu
