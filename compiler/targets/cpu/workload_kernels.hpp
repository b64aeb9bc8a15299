// Vectorised kernels of the modern-workload integer ops (docs/quantization.md, "Modern
// workloads"): broadcast-free runs of Add/Sub/Mul, unary table lookups, softmax and layer/RMS
// norm rows.
//
// Each computes exactly what support/int_ops.hpp and support/int_nonlinear.hpp define element by
// element (tests/cpu/workload_fast_test.cpp checks them against those scalar functions on
// hand-made and seeded cases); they are written as branch-free loops the compiler vectorises,
// compiled for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and baseline x86-64, chosen at load time,
// as nhwc_kernels.hpp. T is std::int8_t or std::int16_t (the activation types).
#pragma once

#include <cstdint>

#include "support/int_nonlinear.hpp"
#include "support/int_ops.hpp"

namespace tessel::cpu::fast {

/// y[i] = intops::add_requantize(a[i * a_step], b[i * b_step], q) for i < n; a_step and b_step
/// are 0 (one value for the whole run) or 1. Sub is the same with q.multiplier_b negated
/// (intops::sub_requantize computes a * M_a - b * M_b, the same int64 sum).
void add_requantize(const std::int8_t* a, std::int64_t a_step, const std::int8_t* b,
                    std::int64_t b_step, std::int8_t* y, std::int64_t n,
                    const intops::AddRequant& q);
void add_requantize(const std::int16_t* a, std::int64_t a_step, const std::int16_t* b,
                    std::int64_t b_step, std::int16_t* y, std::int64_t n,
                    const intops::AddRequant& q);

/// y[i] = intops::mul_requantize(a[i * a_step], b[i * b_step], q) (steps 0 or 1).
void mul_requantize(const std::int8_t* a, std::int64_t a_step, const std::int8_t* b,
                    std::int64_t b_step, std::int8_t* y, std::int64_t n, const intops::Requant& q);
void mul_requantize(const std::int16_t* a, std::int64_t a_step, const std::int16_t* b,
                    std::int64_t b_step, std::int16_t* y, std::int64_t n, const intops::Requant& q);

/// y[i] = intops::table_lookup(table, 256, x[i], ...) = table[x[i] + 128] (8-bit input; the
/// quantizer clamped every entry to y's type).
void table_lookup(const std::int8_t* x, const std::int32_t* table, std::int8_t* y, std::int64_t n);
void table_lookup(const std::int8_t* x, const std::int32_t* table, std::int16_t* y, std::int64_t n);
/// y[i] = intops::table_lookup(table, 257, x[i], lo, hi) (16-bit input, interpolated).
void table_lookup(const std::int16_t* x, const std::int32_t* table, std::int8_t* y, std::int64_t n,
                  std::int32_t lo, std::int32_t hi);
void table_lookup(const std::int16_t* x, const std::int32_t* table, std::int16_t* y, std::int64_t n,
                  std::int32_t lo, std::int32_t hi);

/// intops::softmax_row on `rows` contiguous rows of `len` codes: y[r * len + j]. `keep` is null
/// (every position kept) or rows x len flags (!= 0 keeps). `scratch` holds len int64 values.
void softmax_rows(const std::int8_t* x, const std::uint8_t* keep, std::int8_t* y, std::int64_t rows,
                  std::int64_t len, const intops::SoftmaxParams& p, std::int64_t* scratch);
void softmax_rows(const std::int16_t* x, const std::uint8_t* keep, std::int16_t* y,
                  std::int64_t rows, std::int64_t len, const intops::SoftmaxParams& p,
                  std::int64_t* scratch);

/// The affine map of intops::norm_row as lanes: G_k, B_k, r_k and 2^(r_k - 1) (0 when r_k = 0).
struct NormLanes {
  const std::int64_t* multiplier;
  const std::int64_t* bias;
  const std::int64_t* shift;
  const std::int64_t* half;
};

/// intops::norm_row on `rows` contiguous rows of n codes (same arguments, the affine map as
/// lanes).
void norm_rows(const std::int8_t* x, std::int8_t* y, std::int64_t rows, std::int64_t n, bool centre,
               std::int64_t epsilon_term, const NormLanes& affine, std::int32_t lo,
               std::int32_t hi);
void norm_rows(const std::int16_t* x, std::int16_t* y, std::int64_t rows, std::int64_t n,
               bool centre, std::int64_t epsilon_term, const NormLanes& affine, std::int32_t lo,
               std::int32_t hi);

/// The float MatMul's rows [m0, m1) of y[M, N] = a[M, K] x b[K, N], as ops/matmul.cpp defines it:
/// each y[m, n] is a double sum, 0 + a[m, 0] * b[0, n] + a[m, 1] * b[1, n] + ... in k order (one
/// rounding per multiply and per add: this file is compiled without FMA contraction), rounded
/// once to float. Blocked over rows and columns; the order of every sum is unchanged, so the
/// values are bit-identical to the plain loop.
void matmul_f32_rows(const float* a, const float* b, float* y, std::int64_t m0, std::int64_t m1,
                     std::int64_t k, std::int64_t n);

/// The float Gemm's row block (kernels.cpp gemm_f32): acc[r * n + j] += a[r * lda + t] *
/// b_kn[t * n + j] for t = 0, 1, ..., k - 1 in order, r < rows, j < n, in float with one rounding
/// per multiply and per add (no FMA), in column tiles: each element's sum is the plain loop's.
void gemm_f32_rows(const float* a, std::int64_t lda, const float* b_kn, float* acc,
                   std::int64_t rows, std::int64_t k, std::int64_t n);

}  // namespace tessel::cpu::fast
