// The RTL's parameters derived from a hardware config, and the SystemVerilog package holding them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"

namespace tessel::hw {

/// Scratchpads the RTL supports (the ISA's 4-bit `sp` field).
inline constexpr int kMaxScratchpads = 16;

/// One scratchpad as the RTL instantiates it.
struct HwScratchpad {
  std::string name;
  std::uint32_t size_bytes = 0;
  std::uint32_t banks = 0;
  std::uint32_t port_width_bytes = 0;
  std::uint32_t holds_mask = 0;  ///< bit 0 activations, 1 weights, 2 accumulators, 3 outputs
};

/// Every parameter of the RTL, derived from an HwConfig. The harness and the FPGA flow use the
/// same struct, so the C++ side and the generated package cannot disagree.
struct HwParams {
  std::string config_name;
  std::string config_hash;
  std::uint32_t matrix_rows = 0;  ///< R (reduction width)
  std::uint32_t matrix_cols = 0;  ///< C (output width)
  std::uint32_t input_bits = 0;
  std::uint32_t weight_bits = 0;
  std::uint32_t accumulator_bits = 0;  ///< the config's; SRAM accumulators are int32 (ISA)
  std::uint32_t fill_cycles = 0;
  std::uint32_t drain_cycles = 0;
  std::uint32_t matrix_activation_operands = 0;  ///< 1: the array runs `matmul`
  std::uint32_t vector_lanes = 0;
  std::uint32_t vector_pipe_cycles = 4;   ///< P_v of docs/timing.md
  std::uint32_t vector_lookup_table = 0;  ///< 1: the unit has `lut`'s table (vector.lookup_table)
  std::uint32_t vector_row_reduce = 0;    ///< 1: the unit has `reduce` (vector.row_reduce)
  std::uint32_t vector_broadcast_multiply = 0;  ///< 1: the unit has `mul`
  std::uint32_t vector_row_normalise = 0;       ///< 1: the unit has `softmax` and `norm`
  std::vector<HwScratchpad> scratchpads;
  std::uint32_t sp_addr_bits = 0;  ///< bits of a byte address in the largest scratchpad
  std::uint32_t dram_addr_bits = 40;
  std::uint32_t dram_burst_bytes = 0;
  std::uint32_t dram_max_outstanding = 0;
  std::uint32_t dram_latency_cycles = 0;
  /// Width of the DMA data movers (bytes per cycle between the DRAM data port and SRAM):
  /// the burst size clamped to [16, 64].
  std::uint32_t dma_bytes_per_cycle = 0;
  std::uint32_t insn_queue_depth = 0;
  std::uint32_t token_fifo_depth = 0;
  std::uint32_t clock_mhz = 0;       ///< modelled clock, rounded
  std::uint32_t fpga_clock_mhz = 0;  ///< the config's fpga.clock_mhz, else clock_mhz
};

/// Derives the RTL parameters. Fails (naming the key) where the RTL cannot be built for the
/// config: more than 16 scratchpads, a scratchpad of 2 GiB or more, queue or FIFO depths
/// above 65535.
Result<HwParams> derive_hw_params(const HwConfig& config);

/// The SystemVerilog text of `package tessel_cfg_pkg`: one `localparam int unsigned` per
/// parameter (MATRIX_ROWS, ..., SP<k>_SIZE_BYTES) plus packed per-scratchpad tables
/// (SP_SIZE_BYTES[32*k +: 32], SP_PORT_BYTES, SP_BANKS, SP_HOLDS) for generate loops.
/// Precondition: derive_hw_params(config) succeeds (throws InputError otherwise).
std::string config_package_sv(const HwConfig& config);

/// As above, from derived parameters.
std::string config_package_sv(const HwParams& params);

}  // namespace tessel::hw
