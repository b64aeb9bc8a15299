// MatMul: NumPy matmul of two operands (activations or constants), batch dims broadcast.
#include <omp.h>

#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/int_gemm.hpp"
#include "compiler/targets/cpu/ops/common.hpp"
#include "compiler/targets/cpu/workload_kernels.hpp"

namespace tessel::cpu {
namespace {

/// For every broadcast batch index of the output, calls f(batch, a_offset, b_offset) with the
/// element offsets of the matching [M, K] and [K, N] matrices.
template <class F>
void for_each_batch(const ir::Shape& a, const ir::Shape& b, const ir::Shape& y, F&& f) {
  const ir::Shape batch(y.begin(), y.end() - 2);
  if (batch.empty()) {
    f(0, 0, 0);
    return;
  }
  const ir::Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const std::int64_t a_matrix = a[a.size() - 2] * a.back(), b_matrix = b[b.size() - 2] * b.back();
  ops::for_each_broadcast<2>(batch, {a_batch, b_batch},
                             [&](std::int64_t i, const std::array<std::int64_t, 2>& at) {
                               f(i, at[0] * a_matrix, at[1] * b_matrix);
                             });
}

/// The batch structure of an int8 MatMul as gemm_s8_exact runs it: `batches` products of
/// [rows, K] x [K, N], both operands contiguous batch after batch.
struct BatchPlan {
  std::int64_t batches = 1, rows = 0;
};

/// The plan of y = a x b when its batches are uniform: b without batch (or all ones) folds a's
/// batch into the rows; equal batch dims give a strided batch. nullopt: a broadcast pattern
/// that needs the per-batch loop.
std::optional<BatchPlan> batch_plan(const ir::Shape& a, const ir::Shape& b, const ir::Shape& y) {
  const std::int64_t M = a[a.size() - 2];
  const std::int64_t a_batch = ops::dims_product(a, 0, a.size() - 2);
  const std::int64_t b_batch = ops::dims_product(b, 0, b.size() - 2);
  const std::int64_t y_batch = ops::dims_product(y, 0, y.size() - 2);
  if (b_batch == 1 && a_batch == y_batch) return BatchPlan{1, a_batch * M};
  const ir::Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2),
      yb(y.begin(), y.end() - 2);
  if (ab == yb && bb == yb) return BatchPlan{y_batch, M};
  return std::nullopt;
}

/// y = a x b on int8 codes into int32, exact (gemm_s8_exact): one call when the batches are
/// uniform (batch_plan), else one per broadcast batch.
void matmul_s8(const std::int8_t* a, const std::int8_t* b, std::int32_t* y, const ir::Shape& as,
               const ir::Shape& bs, const ir::Shape& ys) {
  const std::int64_t M = as[as.size() - 2], K = as.back(), N = ys.back();
  if (const auto plan = batch_plan(as, bs, ys)) {
    gemm_s8_exact(a, b, false, y, plan->batches, plan->rows, K, N);
    return;
  }
  for_each_batch(as, bs, ys, [&](std::int64_t batch, std::int64_t ao, std::int64_t bo) {
    gemm_s8_exact(a + ao, b + bo, false, y + batch * M * N, 1, M, K, N);
  });
}

Result<std::vector<TensorData>> matmul(const KernelArgs& args) {
  const TensorData &a = args.input(0), &b = args.input(1);
  TensorData y = args.allocate();
  const auto &as = a.shape(), &ys = y.shape();
  const std::int64_t M = as[as.size() - 2], K = as.back(), N = ys.back();
  if (a.dtype() == ir::DType::f32 && b.dtype() == ir::DType::f32) {
    const float *av = a.data<float>(), *bv = b.data<float>();
    float* out = y.data<float>();
    // Double sums in k order per element (workload_kernels.hpp), row blocks over the threads.
    for_each_batch(as, b.shape(), ys, [&](std::int64_t batch, std::int64_t ao, std::int64_t bo) {
      const std::int64_t blocks = (M + 3) / 4;
      const std::int64_t threads =
          std::clamp<std::int64_t>(M * N * K / (1 << 18), 1, omp_get_max_threads());
#pragma omp parallel for num_threads(static_cast <int>(threads)) schedule(static)
      for (std::int64_t t = 0; t < threads; ++t) {
        const std::int64_t m0 = blocks * t / threads * 4,
                           m1 = std::min(M, blocks * (t + 1) / threads * 4);
        if (m0 < m1) fast::matmul_f32_rows(av + ao, bv + bo, out + batch * M * N, m0, m1, K, N);
      }
    });
    return ops::one(std::move(y));
  }
  if (!ir::is_integer(a.dtype()) || !ir::is_integer(b.dtype()) || y.dtype() != ir::DType::i32)
    return fail(args.where() + ": operands " + std::string(ir::to_string(a.dtype())) + " x " +
                std::string(ir::to_string(b.dtype())) + " -> " +
                std::string(ir::to_string(y.dtype())) +
                " (float x float, or integers into an i32 accumulator)");
  // Integers: int64 sums, checked against int32 (the accumulator never saturates). Two 16-bit
  // activations are first rounded right by the operand shift that keeps every sum in int32.
  const int shift = quant::matmul_shift(args.op, args.input_tensor(0), args.input_tensor(1));
  if (shift < 0)
    return fail(args.where() + ": K = " + std::to_string(K) +
                " is too long for int32, or its operand_shift lies outside 0 .. the dtypes' shift");
  // A MatMul by a constant weight matrix (shift 0) rounds a alone by its input_shift
  // (docs/quantization.md, "Input shift on Conv/Gemm").
  const std::int64_t in_shift = args.op.get_int("input_shift");
  const int bits_a = a.dtype() == ir::DType::i16 ? 16 : a.dtype() == ir::DType::i8 ? 8 : 0;
  if (in_shift != 0 && (shift != 0 || in_shift < 0 || in_shift > bits_a - 2))
    return fail(
        args.where() + ": input_shift " + std::to_string(in_shift) +
        " (only a MatMul by a constant per-channel weight matrix takes one, 0 .. bits - 2)");
  if (a.dtype() == ir::DType::i8 && b.dtype() == ir::DType::i8 && shift == 0 && in_shift == 0) {
    matmul_s8(a.data<std::int8_t>(), b.data<std::int8_t>(), y.data<std::int32_t>(), as, b.shape(),
              ys);
    return ops::one(std::move(y));
  }
  auto av = a.to_i32(), bv = b.to_i32();
  if (shift > 0) {
    for (auto& v : av) v = static_cast<std::int32_t>(intops::round_half_away(v, shift));
    for (auto& v : bv) v = static_cast<std::int32_t>(intops::round_half_away(v, shift));
  }
  if (in_shift > 0)
    for (auto& v : av)
      v = static_cast<std::int32_t>(intops::round_half_away(v, static_cast<int>(in_shift)));
  std::int32_t* out = y.data<std::int32_t>();
  std::vector<std::int64_t> row(static_cast<std::size_t>(N));
  bool overflow = false;
  for_each_batch(as, b.shape(), ys, [&](std::int64_t batch, std::int64_t ao, std::int64_t bo) {
    for (std::int64_t m = 0; m < M; ++m) {
      std::fill(row.begin(), row.end(), 0);
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t x = av[static_cast<std::size_t>(ao + m * K + k)];
        const std::int32_t* brow = bv.data() + bo + k * N;
        for (std::int64_t n = 0; n < N; ++n) row[static_cast<std::size_t>(n)] += x * brow[n];
      }
      std::int32_t* dst = out + (batch * M + m) * N;
      for (std::int64_t n = 0; n < N; ++n) {
        const std::int64_t v = row[static_cast<std::size_t>(n)];
        overflow |= v < INT32_MIN || v > INT32_MAX;
        dst[n] = static_cast<std::int32_t>(v);
      }
    }
  });
  if (overflow) return fail(args.where() + ": an accumulator left int32");
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> matmul_kernels() {
  return {{ir::OpKind::MatMul, matmul}};
}

}  // namespace tessel::cpu
