// The per-instruction cost formulas of docs/timing.md, as plain functions of the config's numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/instruction.hpp"

namespace tessel::isa::timing {

/// Vector pipeline latency P_v (read, multiply, round/shift, clamp/write), a design constant.
inline constexpr std::int64_t kVectorPipelineCycles = 4;

/// Entries of a `lut` table (one per 8-bit input code); the unit loads V of them per cycle.
inline constexpr std::int64_t kLutEntries = 256;

/// `softmax`'s reciprocal R = floor(2^45 / S): a restoring divider, one quotient bit a cycle
/// (R <= 2^30: 31 bits), once per row between the sum and the normalising pass.
inline constexpr std::int64_t kSoftmaxReciprocalCycles = 31;

/// `norm`'s row scale (intops::norm_scale): isqrt of a number below 2^62, two root bits a
/// cycle (31), then inv = floor(2^54 / s) with s >= 2^29.5, one quotient bit a cycle (25).
inline constexpr std::int64_t kNormScaleCycles = 56;

/// The config numbers the formulas use.
struct ComputeParams {
  std::int64_t matrix_rows = 0;       ///< R
  std::int64_t matrix_cols = 0;       ///< C
  std::int64_t fill_cycles = 0;       ///< F
  std::int64_t drain_cycles = 0;      ///< D
  std::int64_t vector_lanes = 0;      ///< V
  std::int64_t weight_load_rows = 1;  ///< K: rows (columns) of a held block loaded a cycle
  std::int64_t dma_mover_bytes = 64;  ///< W: the DMA mover's bytes a cycle (a gather's rows)
};

/// W: the cycles to load one held block, ceil(R / K) (b transposed in a matmul: ceil(C / K)).
std::int64_t block_load_cycles(const ComputeParams& params, bool transposed = false);

/// conv: W + passes * max(P, W) + F + D, W = ceil(R / K) dense, 1 depthwise (docs/timing.md,
/// "conv").
std::int64_t conv_cycles(const Conv& conv, const ComputeParams& params);

/// MACs the array performs for a conv (padded channels included): P * passes * R * C, or
/// P * passes * C when depthwise.
std::int64_t conv_macs(const Conv& conv, const ComputeParams& params);

/// matmul: W + passes * max(m_size, W) + F + D with passes = ceil(n_size / C) * ceil(k_size / R)
/// and W = ceil(R / K) (b row-major: K array rows a cycle) or ceil(C / K) (transposed: K array
/// columns a cycle) (docs/timing.md, "matmul").
std::int64_t matmul_cycles(const Matmul& matmul, const ComputeParams& params);

/// MACs the array performs for a matmul (masked rows and columns included, as conv counts
/// padded channels): m_size * passes * R * C.
std::int64_t matmul_macs(const Matmul& matmul, const ComputeParams& params);
/// softmax: ceil(512 / V) (the exp tables enter V entries a cycle) + y * x * (3 * ceil(c / V)
/// + kSoftmaxReciprocalCycles) + P_v: per row a max pass, a sum-of-exp pass, the reciprocal
/// and the normalising pass (docs/timing.md, "softmax").
std::int64_t softmax_cycles(const Softmax& x, std::int64_t lanes);

/// norm: y * x * (2 * ceil(c / V) + kNormScaleCycles) + P_v: per row a statistics pass, the
/// row scale and the normalising pass (docs/timing.md, "norm").
std::int64_t norm_cycles(const Norm& x, std::int64_t lanes);

/// The cost of any COMPUTE-engine instruction or nop (conv, vector ops, vcfg, finish, nop).
/// Returns 0 for load and store, whose cost depends on the DRAM model.
std::int64_t compute_cycles(const Instruction& instruction, const ComputeParams& params);

/// One DRAM request of a DMA instruction: a maximal contiguous byte run.
struct DramRun {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;

  bool operator==(const DramRun&) const = default;
};

/// The requests of a load or store, in presentation order (y, then x; adjacent runs merged).
std::vector<DramRun> dma_requests(const Load& load);
std::vector<DramRun> dma_requests(const Store& store);
/// A gather's requests: its ids' run (4 bytes an id), then one per row at the table's row
/// stride (row r at dram_addr + r * dram_stride_y * e, never merged): the rows start on bursts,
/// so these are the bursts of any ids (docs/timing.md "gather").
std::vector<DramRun> dma_requests(const Gather& gather);
/// The gather's mover, which the instruction waits for: 2 + y_size * (2 + ceil(row bytes / W))
/// cycles from its start (an id read, the row's address, the row W bytes a cycle).
std::int64_t gather_mover_cycles(const Gather& gather, std::int64_t mover_bytes);

/// Aligned bursts covering [address, address + bytes): floor((a+n-1)/B) - floor(a/B) + 1.
std::uint64_t bursts_covering(const DramRun& run, std::uint64_t burst_bytes);

/// Bytes a DMA instruction moves over DRAM: y_size * x_size * c_size * element bytes.
std::uint64_t dma_bytes(const Load& load);
/// A gather's rows, counted by its `kind`; its ids add 4 * y_size bytes of activations.
std::uint64_t dma_bytes(const Gather& gather);
std::uint64_t dma_bytes(const Store& store);

}  // namespace tessel::isa::timing
