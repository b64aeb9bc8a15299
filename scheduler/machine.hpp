// The scheduler's view of the hardware (from an HwConfig) and the timing formulas it plans with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
struct HwConfig;
}

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
  int64_t vector_lanes = 16;             ///< elements per cycle
  int64_t activation_bytes = 1;          ///< bytes per activation element
  int64_t weight_bytes = 1;              ///< bytes per weight element
  int64_t accumulator_bytes = 4;         ///< bytes per accumulator element
  double dram_bytes_per_cycle = 16;      ///< sustained DRAM bandwidth / clock
  int64_t dram_latency_cycles = 0;       ///< first-byte latency of one DMA transfer
  double clock_mhz = 100;

  int64_t macs_per_cycle() const { return matrix_rows * matrix_cols; }
  int scratchpad(BufferKind kind) const { return scratchpad_for[static_cast<int>(kind)]; }
  std::vector<int64_t> capacities() const;
};

/// Builds the view of a validated config (first scratchpad holding each kind; bytes from bits).
Machine machine_from_config(const HwConfig& config);

/// A machine with one unified scratchpad of `bytes` (tests).
Machine unified_machine(int64_t bytes, int64_t rows = 16, int64_t cols = 16,
                        double dram_bytes_per_cycle = 16);

// ---- timing formulas (one matrix instruction per output row of a tile, see docs) -------------

/// Cycles of one DMA transfer of `bytes` (0 bytes: 0 cycles): latency + ceil(bytes / rate).
int64_t dma_cycles(const Machine& machine, int64_t bytes);

/// Cycles of the matrix unit for a conv tile producing `out_rows` rows of `out_cols` points and
/// `out_channels` channels (`groups` channel groups, `in_channels_per_group` inputs each, a
/// kh x kw window): one instruction per output row, each
/// fill + out_cols * kh * kw * ceil(cin_g / rows) * ceil(cout_g / cols) * groups_in_tile + drain.
int64_t matrix_cycles(const Machine& machine, int64_t out_rows, int64_t out_cols,
                      int64_t out_channels, int64_t groups_in_tile, int64_t in_channels_per_group,
                      int64_t kernel_h, int64_t kernel_w);

/// Cycles of the vector unit over `elements` elements: ceil(elements / lanes).
int64_t vector_cycles(const Machine& machine, int64_t elements);

}  // namespace tessel::sched
