// The per-instruction cost formulas of docs/timing.md.
#include "isa/timing.hpp"

#include <algorithm>
#include <type_traits>

#include "support/int_ops.hpp"

namespace tessel::isa::timing {
namespace {

std::uint64_t elem_bytes(Elem elem) {
  return elem == Elem::kI8 ? 1 : elem == Elem::kI16 ? 2 : 4;
}

using intops::ceil_div;

std::int64_t conv_passes(const Conv& conv) {
  const std::int64_t kernel = std::int64_t{conv.kh} * conv.kw;
  return conv.depthwise ? conv.oc_blocks * kernel
                        : std::int64_t{conv.oc_blocks} * conv.ic_blocks * kernel;
}

template <class Dma>
std::vector<DramRun> requests(const Dma& dma) {
  const std::uint64_t eb = elem_bytes(dma.elem);
  const std::uint64_t run_bytes = std::uint64_t{dma.c_size} * eb;
  std::vector<DramRun> runs;
  for (std::uint64_t y = 0; y < dma.y_size; ++y) {
    for (std::uint64_t x = 0; x < dma.x_size; ++x) {
      const std::uint64_t address =
          dma.dram_addr + (y * dma.dram_stride_y + x * dma.dram_stride_x) * eb;
      if (!runs.empty() && runs.back().address + runs.back().bytes == address)
        runs.back().bytes += run_bytes;
      else
        runs.push_back({address, run_bytes});
    }
  }
  return runs;
}

}  // namespace

std::int64_t block_load_cycles(const ComputeParams& params, bool transposed) {
  return ceil_div(transposed ? params.matrix_cols : params.matrix_rows,
                  std::max<std::int64_t>(1, params.weight_load_rows));
}

std::int64_t conv_cycles(const Conv& conv, const ComputeParams& params) {
  const std::int64_t positions = std::int64_t{conv.out_h} * conv.out_w;
  const std::int64_t weight_load = conv.depthwise ? 1 : block_load_cycles(params);
  return weight_load + conv_passes(conv) * std::max(positions, weight_load) + params.fill_cycles +
         params.drain_cycles;
}

std::int64_t conv_macs(const Conv& conv, const ComputeParams& params) {
  const std::int64_t positions = std::int64_t{conv.out_h} * conv.out_w;
  const std::int64_t per_vector =
      conv.depthwise ? params.matrix_cols : params.matrix_rows * params.matrix_cols;
  return positions * conv_passes(conv) * per_vector;
}

namespace {

std::int64_t matmul_passes(const Matmul& matmul, const ComputeParams& params) {
  return ceil_div(matmul.n_size, params.matrix_cols) * ceil_div(matmul.k_size, params.matrix_rows);
}

}  // namespace

std::int64_t matmul_cycles(const Matmul& matmul, const ComputeParams& params) {
  const std::int64_t load = block_load_cycles(params, matmul.transpose_b);
  return load + matmul_passes(matmul, params) * std::max<std::int64_t>(matmul.m_size, load) +
         params.fill_cycles + params.drain_cycles;
}

std::int64_t matmul_macs(const Matmul& matmul, const ComputeParams& params) {
  return std::int64_t{matmul.m_size} * matmul_passes(matmul, params) * params.matrix_rows *
         params.matrix_cols;
}

std::int64_t softmax_cycles(const Softmax& x, std::int64_t lanes) {
  return ceil_div(kSoftmaxTableEntries, lanes) +
         std::int64_t{x.y_size} * x.x_size *
             (3 * ceil_div(x.c_size, lanes) + kSoftmaxReciprocalCycles) +
         kVectorPipelineCycles;
}

std::int64_t norm_cycles(const Norm& x, std::int64_t lanes) {
  return std::int64_t{x.y_size} * x.x_size * (2 * ceil_div(x.c_size, lanes) + kNormScaleCycles) +
         kVectorPipelineCycles;
}

std::int64_t compute_cycles(const Instruction& instruction, const ComputeParams& params) {
  return std::visit(
      [&](const auto& x) -> std::int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Load> || std::is_same_v<T, Store> ||
                      std::is_same_v<T, Gather>) {
          return 0;
        } else if constexpr (std::is_same_v<T, Conv>) {
          return conv_cycles(x, params);
        } else if constexpr (std::is_same_v<T, Matmul>) {
          return matmul_cycles(x, params);
        } else if constexpr (std::is_same_v<T, Requant> || std::is_same_v<T, Add> ||
                             std::is_same_v<T, Copy> || std::is_same_v<T, Reduce> ||
                             std::is_same_v<T, Mul>) {
          return std::int64_t{x.y_size} * x.x_size * ceil_div(x.c_size, params.vector_lanes) +
                 kVectorPipelineCycles;
        } else if constexpr (std::is_same_v<T, Softmax>) {
          return softmax_cycles(x, params.vector_lanes);
        } else if constexpr (std::is_same_v<T, Norm>) {
          return norm_cycles(x, params.vector_lanes);
        } else if constexpr (std::is_same_v<T, Lut>) {
          return ceil_div(kLutEntries, params.vector_lanes) +
                 std::int64_t{x.y_size} * x.x_size * ceil_div(x.c_size, params.vector_lanes) +
                 kVectorPipelineCycles;
        } else if constexpr (std::is_same_v<T, Pool>) {
          return std::int64_t{x.out_h} * x.out_w * x.kh * x.kw *
                     ceil_div(x.c_size, params.vector_lanes) +
                 kVectorPipelineCycles;
        } else {
          return 1;  // nop, vcfg, finish
        }
      },
      instruction);
}

std::vector<DramRun> dma_requests(const Load& load) {
  return requests(load);
}

std::vector<DramRun> dma_requests(const Store& store) {
  return requests(store);
}

std::vector<DramRun> dma_requests(const Gather& gather) {
  const std::uint64_t eb = elem_bytes(gather.elem);
  std::vector<DramRun> runs{{gather.ids_addr, 4 * std::uint64_t{gather.y_size}}};
  for (std::uint64_t r = 0; r < gather.y_size; ++r)
    runs.push_back({gather.dram_addr + r * gather.dram_stride_y * eb, gather.c_size * eb});
  return runs;
}

std::int64_t gather_mover_cycles(const Gather& gather, std::int64_t mover_bytes) {
  const auto row_bytes = static_cast<std::int64_t>(gather.c_size * elem_bytes(gather.elem));
  return 2 + std::int64_t{gather.y_size} * (2 + ceil_div(row_bytes, mover_bytes));
}

std::uint64_t bursts_covering(const DramRun& run, std::uint64_t burst_bytes) {
  return (run.address + run.bytes - 1) / burst_bytes - run.address / burst_bytes + 1;
}

std::uint64_t dma_bytes(const Load& load) {
  return std::uint64_t{load.y_size} * load.x_size * load.c_size * elem_bytes(load.elem);
}

std::uint64_t dma_bytes(const Gather& gather) {
  return std::uint64_t{gather.y_size} * gather.c_size * elem_bytes(gather.elem);
}

std::uint64_t dma_bytes(const Store& store) {
  return std::uint64_t{store.y_size} * store.x_size * store.c_size * elem_bytes(store.elem);
}

}  // namespace tessel::isa::timing
