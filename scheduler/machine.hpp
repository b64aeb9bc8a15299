// The scheduler's view of the hardware (from an HwConfig) and the timing formulas it plans with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
struct HwConfig;
struct EnergyTable;
}  // namespace tessel

namespace tessel::sched {

/// What a buffer holds; selects the scratchpad (the config's `holds`).
enum class BufferKind { Activations, Weights, Accumulators, Outputs };
const char* to_string(BufferKind kind);

/// One on-chip SRAM as the allocator sees it.
struct ScratchpadView {
  std::string name;
  int64_t size_bytes = 0;
};

/// Rates and capacities the cost model needs, all per accelerator clock cycle.
struct Machine {
  std::string name;
  std::vector<ScratchpadView> scratchpads;
  int scratchpad_for[4] = {0, 0, 0, 0};  ///< by BufferKind: the scratchpad holding it
  int64_t matrix_rows = 16;              ///< reduction (input-channel) width
  int64_t matrix_cols = 16;              ///< output-channel width
  int64_t matrix_fill_cycles = 16;       ///< per matrix instruction, before the first result
  int64_t matrix_drain_cycles = 16;      ///< per matrix instruction, after the last input
  int64_t weight_load_rows = 1;          ///< rows (columns) of a held block loaded a cycle
  int64_t vector_lanes = 16;             ///< elements per cycle
  int64_t activation_bytes = 1;          ///< bytes per activation element
  int64_t weight_bytes = 1;              ///< bytes per weight element
  int64_t accumulator_bytes = 4;         ///< bytes per accumulator element (ISA: i32)
  double dram_bytes_per_cycle = 16;      ///< sustained DRAM bandwidth / clock
  int64_t dram_latency_cycles = 0;       ///< L: request latency
  int64_t burst_bytes = 64;              ///< B: DRAM burst
  int64_t max_outstanding = 8;           ///< O: bursts in flight
  int64_t dma_mover_bytes = 64;          ///< the DMA mover's bytes a cycle (a gather's rows)
  double clock_mhz = 100;
  /// The vector unit's optional instructions (docs/config.md): `lut` (vector.lookup_table),
  /// `mul` (vector.broadcast_multiply). net_from_graph refuses an op that needs a missing one.
  bool lookup_table = false;
  bool broadcast_multiply = false;
  /// `softmax` and `norm` (vector.row_normalise); `matmul` (matrix.activation_operands).
  bool row_normalise = false;
  bool activation_operands = false;
  /// The config's energy table (configs/energy_model.hpp), for the energy and EDP objectives;
  /// null for hand-built machines (those objectives then fail, naming why).
  std::shared_ptr<const EnergyTable> energy;

  int64_t macs_per_cycle() const { return matrix_rows * matrix_cols; }
  int scratchpad(BufferKind kind) const { return scratchpad_for[static_cast<int>(kind)]; }
  std::vector<int64_t> capacities() const;
};

/// Builds the view of a validated config (first scratchpad holding each kind; bytes from bits).
Machine machine_from_config(const HwConfig& config);

/// A machine with one unified scratchpad of `bytes` (tests).
Machine unified_machine(int64_t bytes, int64_t rows = 16, int64_t cols = 16,
                        double dram_bytes_per_cycle = 16);

// ---- timing formulas: docs/timing.md, re-derived for whole tiles --------------------------

/// Vector pipeline latency P_v (docs/timing.md).
inline constexpr int64_t kVectorPipelineCycles = 4;

/// One `conv` instruction over P = `pixels` output positions: W + passes * max(P, W) + F + D,
/// dense: passes = ceil(oc/C) * ceil(ic/R) * kh * kw, W = R; depthwise: passes =
/// ceil(oc/C) * kh * kw, W = 1. A fully connected layer is P = 1, kh = kw = 1.
int64_t conv_instruction_cycles(const Machine& machine, int64_t pixels, int64_t out_channels,
                                int64_t in_channels, int64_t kernel_h, int64_t kernel_w,
                                bool depthwise);

/// Groups of a grouped (not depthwise) conv that one conv instruction runs, packed
/// block-diagonally into one R x C array block (docs/codegen.md, "Grouped convolution"):
/// k = min(floor(C / out_per_group), groups, floor(R / in_per_group)) when out_per_group < C,
/// at least 1; 1 otherwise (a conv instruction per group, each group dense on its own channels).
/// Where k * out_per_group is not a whole number of blocks, each unit of k groups starts a block
/// of its own (column_blocks in weight_loads.hpp).
int64_t conv_groups_per_block(const Machine& machine, int64_t groups, int64_t in_per_group,
                              int64_t out_per_group);

/// `requant`, `add`, `copy`: pixels * ceil(channels / V) + P_v (0 for no pixels).
int64_t vector_instruction_cycles(const Machine& machine, int64_t pixels, int64_t channels);

/// `pool`: out_pixels * kh * kw * ceil(channels / V) + P_v.
int64_t pool_instruction_cycles(const Machine& machine, int64_t out_pixels, int64_t window,
                                int64_t channels);

/// `matmul` of m rows by n columns over a reduction of k (docs/timing.md "matmul"): W +
/// ceil(n / C) * ceil(k / R) * max(m, W) + F + D, W = R (C when transpose_b).
int64_t matmul_instruction_cycles(const Machine& machine, int64_t m, int64_t n, int64_t k,
                                  bool transpose_b);

/// `softmax` of rows x pixels rows of `row` elements: ceil(512 / V) + rows * (3 ceil(row / V) +
/// 31) + P_v (docs/timing.md "softmax, norm").
int64_t softmax_instruction_cycles(const Machine& machine, int64_t rows, int64_t row);

/// `norm` of `rows` rows of `row` elements: rows * (2 ceil(row / V) + 56) + P_v.
int64_t norm_instruction_cycles(const Machine& machine, int64_t rows, int64_t row);

/// A DMA instruction of `bursts` bursts alone on an idle DRAM: ceil(L + N * T), T = B / b
/// (exact when (O - 1) * T >= L + 1, the slots covering the latency; otherwise each group of O
/// bursts pays the round trip: ceil(ceil(N / O) * (L + T) + ...), see docs/scheduler.md).
int64_t dma_instruction_cycles(const Machine& machine, int64_t bursts);

/// Aligned bursts covering [address, address + bytes).
int64_t bursts_covering(int64_t address, int64_t bytes, int64_t burst_bytes);

}  // namespace tessel::sched
