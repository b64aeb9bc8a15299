// The matrix unit's matmul (docs/isa.md "matmul"): MatMul of two activations, b row-major or
// read transposed, bit exact with the golden executor's integer MatMul (docs/quantization.md).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/costs.hpp"
#include "sim/core/datapath.hpp"
#include "sim/core/kernels.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {

bool Datapath::execute_matmul_dense(const isa::Matmul& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::int64_t M = x.m_size, N = x.n_size, K = x.k_size;
  // Operands of 1 or 2 bytes rounded right (u >= 0) are int16 values, whose int32 products
  // kernels::conv_dense sums mod 2^32 as the loop below does; the accumulator rows must lie
  // apart (a row's start is its value before the instruction).
  if (reference_kernels_ || e > 2 || (M > 1 && std::int64_t{x.acc_stride} < N)) return false;
  const int u = static_cast<int>(x.operand_shift);
  const std::int64_t in_pairs = kernels::channel_pairs(K), row = 2 * in_pairs;
  // a as M pixels of K int16 channels (an odd K's filler 0), read before any accumulator is
  // written (acc may share a scratchpad with a, b or the bias), as are b and the bias.
  const std::uint8_t* a_base = scratchpads_[x.a_sp].data() + x.a_addr;
  image_.resize(static_cast<std::size_t>(M * row));
  for (std::int64_t m = 0; m < M; ++m) {
    std::int16_t* pixel = image_.data() + m * row;
    widen_elements(a_base + m * std::uint64_t{x.a_stride} * e, e, K, pixel, u);
    if (K % 2 != 0) pixel[K] = 0;
  }
  // b as a 1x1 conv's weights, input channel k to output channel n (kernels::dense_index).
  const std::int64_t block = kernels::dense_block(N);
  const std::uint8_t* b_base = scratchpads_[x.b_sp].data() + x.b_addr;
  matmul_weights_.resize(static_cast<std::size_t>(row * N));
  for (std::int64_t k = 0; k < row; ++k)
    for (std::int64_t n = 0; n < N; ++n) {
      const std::uint64_t at =
          x.transpose_b ? n * std::uint64_t{x.b_stride} + k : k * std::uint64_t{x.b_stride} + n;
      matmul_weights_[static_cast<std::size_t>(
          kernels::dense_index(0, k, n, 1, in_pairs, N, block))] =
          k < K ? static_cast<std::int16_t>(
                      intops::round_half_away(read_element(b_base + at * e, e), u))
                : std::int16_t{0};
    }
  const std::uint8_t* bias = scratchpads_[x.bias_sp].data() + x.bias_addr;
  if (x.init == isa::Init::kBias) matmul_bias_.assign(bias, bias + N * 4);
  pixel_offsets_.clear();
  slot_offsets_.clear();
  for (std::int64_t m = 0; m < M; ++m) {
    pixel_offsets_.push_back(m * row * 2);
    slot_offsets_.push_back(m * std::int64_t{x.acc_stride} * 4);
  }
  tap_offsets_.assign(1, 0);
  const kernels::AccInit init = x.init == isa::Init::kBias  ? kernels::AccInit::kBias
                                : x.init == isa::Init::kAcc ? kernels::AccInit::kSelf
                                                            : kernels::AccInit::kZero;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;
  const auto run = [&](std::int64_t begin, std::int64_t end) {
    kernels::conv_dense(reinterpret_cast<const std::uint8_t*>(image_.data()),
                        pixel_offsets_.data() + begin, end - begin, tap_offsets_.data(), 1,
                        in_pairs, matmul_weights_.data(), N, block, init, matmul_bias_.data(), acc,
                        slot_offsets_.data() + begin);
  };
  // As execute_conv: two threads from ~0.5 M multiply-accumulates.
  if (split_ && M * in_pairs * N >= (std::int64_t{1} << 18) && M >= 12)
    split_->run(M, M / 2, run);
  else
    run(0, M);
  return true;
}

void Datapath::execute_matmul(const isa::Matmul& x) {
  if (execute_matmul_dense(x)) return;
  const std::uint64_t e = element_bytes(x.elem);
  const std::int64_t M = x.m_size, N = x.n_size, K = x.k_size;
  const int u = static_cast<int>(x.operand_shift);
  // Both operands rounded right by the operand shift first (intops::round_half_away; u = 0
  // keeps them), as the golden executor does before its products.
  const auto operand = [&](const std::uint8_t* p) {
    return static_cast<std::int32_t>(intops::round_half_away(read_element(p, e), u));
  };
  // b as [K][N] whatever its stored order: the transposed read is b[k][n] = stored[n][k].
  const std::uint8_t* b_base = scratchpads_[x.b_sp].data() + x.b_addr;
  std::vector<std::int32_t> b(static_cast<std::size_t>(K * N));
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t n = 0; n < N; ++n) {
      const std::uint64_t at =
          x.transpose_b ? n * std::uint64_t{x.b_stride} + k : k * std::uint64_t{x.b_stride} + n;
      b[static_cast<std::size_t>(k * N + n)] = operand(b_base + at * e);
    }
  const std::uint8_t* a_base = scratchpads_[x.a_sp].data() + x.a_addr;
  const std::uint8_t* bias = scratchpads_[x.bias_sp].data() + x.bias_addr;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;
  // Every operand is read before any accumulator is written (acc may share a scratchpad with
  // a or b): the results go through `out`.
  // int32 arithmetic wraps (docs/isa.md; the quantizer's operand shift keeps it exact): the
  // sums are taken mod 2^32 from the start, in uint32 (kernels::accumulate_scaled).
  std::vector<std::int32_t> out(static_cast<std::size_t>(M * N));
  std::vector<std::uint32_t> row(static_cast<std::size_t>(N));
  for (std::int64_t m = 0; m < M; ++m) {
    std::uint8_t* acc_row = acc + m * std::uint64_t{x.acc_stride} * 4;
    for (std::int64_t n = 0; n < N; ++n) {
      std::int64_t start = 0;
      if (x.init == isa::Init::kBias) start = read_element(bias + n * 4, 4);
      if (x.init == isa::Init::kAcc) start = read_element(acc_row + n * 4, 4);
      row[static_cast<std::size_t>(n)] = static_cast<std::uint32_t>(start);
    }
    const std::uint8_t* a_row = a_base + m * std::uint64_t{x.a_stride} * e;
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int32_t av = operand(a_row + k * e);
      if (av != 0) kernels::accumulate_scaled(av, b.data() + k * N, N, row.data());
    }
    for (std::int64_t n = 0; n < N; ++n)
      out[static_cast<std::size_t>(m * N + n)] =
          static_cast<std::int32_t>(row[static_cast<std::size_t>(n)]);
  }
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n)
      write_element(acc + (m * std::uint64_t{x.acc_stride} + n) * 4, 4,
                    out[static_cast<std::size_t>(m * N + n)]);
}

}  // namespace tessel::sim
