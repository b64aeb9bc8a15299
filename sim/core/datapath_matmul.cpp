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

void Datapath::execute_matmul(const isa::Matmul& x) {
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
