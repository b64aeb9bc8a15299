// HwConfig -> HwParams -> the SystemVerilog package tessel_cfg_pkg.
#include "hw/gen/hwgen.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "support/diagnostic.hpp"

namespace tessel::hw {
namespace {

std::uint32_t clog2(std::uint64_t value) {
  std::uint32_t bits = 0;
  while ((std::uint64_t{1} << bits) < value) ++bits;
  return bits;
}

std::uint32_t holds_mask(const ScratchpadConfig& sp) {
  std::uint32_t mask = 0;
  for (DataKind kind : sp.holds) mask |= 1u << static_cast<unsigned>(kind);
  return mask;
}

}  // namespace

Result<HwParams> derive_hw_params(const HwConfig& config) {
  HwParams p;
  p.config_name = config.name;
  p.config_hash = content_hash(config);
  p.matrix_rows = static_cast<std::uint32_t>(config.matrix.rows);
  p.matrix_cols = static_cast<std::uint32_t>(config.matrix.cols);
  p.input_bits = static_cast<std::uint32_t>(config.matrix.input_bits);
  p.weight_bits = static_cast<std::uint32_t>(config.matrix.weight_bits);
  p.accumulator_bits = static_cast<std::uint32_t>(config.matrix.accumulator_bits);
  p.fill_cycles = static_cast<std::uint32_t>(config.matrix.fill_cycles);
  p.drain_cycles = static_cast<std::uint32_t>(config.matrix.drain_cycles);
  p.vector_lanes = static_cast<std::uint32_t>(config.vector.lanes);
  p.vector_lookup_table = config.vector.lookup_table ? 1 : 0;
  p.vector_row_reduce = config.vector.row_reduce ? 1 : 0;
  p.vector_broadcast_multiply = config.vector.broadcast_multiply ? 1 : 0;
  p.matrix_activation_operands = config.matrix.activation_operands ? 1 : 0;
  p.vector_row_normalise = config.vector.row_normalise ? 1 : 0;
  // The RTL's shadow buffer takes one row (column) of a block a cycle (hw/rtl/tessel_matrix.sv);
  // a wider load path is modelled by the timing contract and the simulator only.
  if (config.matrix.weight_load_rows != 1)
    return fail("matrix.weight_load_rows: " + std::to_string(config.matrix.weight_load_rows) +
                " rows a cycle; the RTL loads one row of a held block a cycle (1)");
  if (config.scratchpads.size() > static_cast<std::size_t>(kMaxScratchpads))
    return fail("scratchpads: " + std::to_string(config.scratchpads.size()) +
                " scratchpads; the RTL supports at most 16 (the ISA's 4-bit sp field)");
  std::uint64_t largest = 1;
  for (std::size_t k = 0; k < config.scratchpads.size(); ++k) {
    const ScratchpadConfig& sp = config.scratchpads[k];
    if (sp.size_bytes >= (std::int64_t{1} << 31))
      return fail("scratchpads[" + std::to_string(k) + "].size: " + std::to_string(sp.size_bytes) +
                  " bytes; the RTL supports less than 2 GiB");
    p.scratchpads.push_back({sp.name, static_cast<std::uint32_t>(sp.size_bytes),
                             static_cast<std::uint32_t>(sp.banks),
                             static_cast<std::uint32_t>(sp.port_width_bytes), holds_mask(sp)});
    largest = std::max<std::uint64_t>(largest, static_cast<std::uint64_t>(sp.size_bytes));
  }
  p.sp_addr_bits = std::max<std::uint32_t>(1, clog2(largest));
  p.dram_burst_bytes = static_cast<std::uint32_t>(config.dram.burst_bytes);
  p.dram_max_outstanding = static_cast<std::uint32_t>(config.dram.max_outstanding_requests);
  p.dram_latency_cycles = static_cast<std::uint32_t>(config.dram_latency_cycles());
  p.dma_bytes_per_cycle = static_cast<std::uint32_t>(config.dma_mover_bytes_per_cycle());
  if (config.queues.instruction_queue_depth > 65535)
    return fail(
        "queues.instruction_queue_depth: " + std::to_string(config.queues.instruction_queue_depth) +
        "; the RTL supports at most 65535");
  if (config.queues.token_fifo_depth > 65535)
    return fail("queues.token_fifo_depth: " + std::to_string(config.queues.token_fifo_depth) +
                "; the RTL supports at most 65535");
  p.insn_queue_depth = static_cast<std::uint32_t>(config.queues.instruction_queue_depth);
  p.token_fifo_depth = static_cast<std::uint32_t>(config.queues.token_fifo_depth);
  p.clock_mhz = static_cast<std::uint32_t>(std::lround(config.clock_mhz));
  p.fpga_clock_mhz = static_cast<std::uint32_t>(
      std::lround(config.fpga ? config.fpga->clock_mhz : config.clock_mhz));
  return p;
}

std::string config_package_sv(const HwConfig& config) {
  auto params = derive_hw_params(config);
  if (!params.ok()) throw_input_error({config.name, 0, 0}, "", params.reason());
  return config_package_sv(params.value());
}

std::string config_package_sv(const HwParams& p) {
  std::ostringstream out;
  auto param = [&](const char* name, std::uint64_t value, const char* comment) {
    out << "  localparam int unsigned " << name << " = " << value << ";";
    if (*comment) out << "  // " << comment;
    out << "\n";
  };
  auto table = [&](const char* name, auto field, const char* comment) {
    out << "  // " << comment << "; entry k at [32*k +: 32]\n";
    out << "  localparam logic [" << kMaxScratchpads * 32 - 1 << ":0] " << name << " = {";
    for (int k = kMaxScratchpads - 1; k >= 0; --k) {
      const std::uint32_t value =
          static_cast<std::size_t>(k) < p.scratchpads.size() ? field(p.scratchpads[k]) : 0;
      out << "32'd" << value << (k ? ", " : "");
    }
    out << "};\n";
  };
  out << "// Generated by `tessel hwgen` (hw/gen) from hardware config '" << p.config_name
      << "' (content hash " << p.config_hash << "). Do not edit.\n"
      << "// The RTL's parameters; hw/rtl reads them as tessel_cfg_pkg::NAME (Yosys 0.23 needs\n"
      << "// package-qualified names). Units are in the names; cycles are accelerator cycles.\n"
      << "/* verilator lint_off UNUSEDPARAM */\n"
      << "package tessel_cfg_pkg;\n\n";
  out << "  // Matrix unit (docs/timing.md: R, C, F, D).\n";
  param("MATRIX_ROWS", p.matrix_rows, "R: reduction (input-channel) width");
  param("MATRIX_COLS", p.matrix_cols, "C: output-channel width");
  param("INPUT_BITS", p.input_bits, "activation bits (8 or 16)");
  param("WEIGHT_BITS", p.weight_bits, "weight bits (8 or 16)");
  param("ACCUMULATOR_BITS", p.accumulator_bits, "config figure; SRAM accumulators are int32");
  param("FILL_CYCLES", p.fill_cycles, "F");
  param("DRAIN_CYCLES", p.drain_cycles, "D");
  param("MATRIX_ACTIVATION_OPERANDS", p.matrix_activation_operands,
        "1: matmul's activation operand path is built");
  out << "\n  // Vector unit.\n";
  param("VECTOR_LANES", p.vector_lanes, "V: elements per cycle");
  param("VECTOR_PIPE_CYCLES", p.vector_pipe_cycles, "P_v: vector pipeline latency");
  param("VECTOR_LOOKUP_TABLE", p.vector_lookup_table, "1: lut's 256-entry table is built");
  param("VECTOR_ROW_REDUCE", p.vector_row_reduce, "1: reduce's row reducer is built");
  param("VECTOR_BROADCAST_MULTIPLY", p.vector_broadcast_multiply,
        "1: mul's operand-b path is built");
  param("VECTOR_ROW_NORMALISE", p.vector_row_normalise,
        "1: softmax's and norm's row normaliser is built");
  out << "\n  // Scratchpads, in config order (sp id = index).\n";
  param("MAX_SCRATCHPADS", kMaxScratchpads, "the ISA's 4-bit sp field");
  param("NUM_SCRATCHPADS", p.scratchpads.size(), "");
  param("SP_ADDR_BITS", p.sp_addr_bits, "byte address bits of the largest scratchpad");
  for (std::size_t k = 0; k < p.scratchpads.size(); ++k) {
    const HwScratchpad& sp = p.scratchpads[k];
    const std::string prefix = "SP" + std::to_string(k) + "_";
    out << "  // sp " << k << ": " << sp.name << "\n";
    param((prefix + "SIZE_BYTES").c_str(), sp.size_bytes, "");
    param((prefix + "BANKS").c_str(), sp.banks, "");
    param((prefix + "PORT_BYTES").c_str(), sp.port_width_bytes, "");
    param((prefix + "HOLDS").c_str(), sp.holds_mask,
          "bit 0 activations, 1 weights, 2 accumulators, 3 outputs");
  }
  table(
      "SP_SIZE_BYTES", [](const HwScratchpad& s) { return s.size_bytes; }, "sizes in bytes");
  table(
      "SP_BANKS", [](const HwScratchpad& s) { return s.banks; }, "banks");
  table(
      "SP_PORT_BYTES", [](const HwScratchpad& s) { return s.port_width_bytes; },
      "bytes per bank access");
  table(
      "SP_HOLDS", [](const HwScratchpad& s) { return s.holds_mask; }, "holds masks");
  out << "\n  // DRAM port and DMA.\n";
  param("DRAM_ADDR_BITS", p.dram_addr_bits, "the ISA's dram_addr field");
  param("DRAM_BURST_BYTES", p.dram_burst_bytes, "B");
  param("DRAM_MAX_OUTSTANDING", p.dram_max_outstanding, "O: bursts in flight");
  param("DRAM_LATENCY_CYCLES", p.dram_latency_cycles, "L (timed by the harness's DramModel)");
  param("DMA_BYTES_PER_CYCLE", p.dma_bytes_per_cycle, "DMA data mover width");
  out << "\n  // Queues (docs/timing.md: Q, K).\n";
  param("INSN_QUEUE_DEPTH", p.insn_queue_depth, "Q: per-engine instruction queue");
  param("TOKEN_FIFO_DEPTH", p.token_fifo_depth, "K: per dependency-token FIFO");
  out << "\n  // Clocks.\n";
  param("CLOCK_MHZ", p.clock_mhz, "modelled accelerator clock");
  param("FPGA_CLOCK_MHZ", p.fpga_clock_mhz, "synthesis target (fpga.clock_mhz)");
  out << "\nendpackage\n/* verilator lint_on UNUSEDPARAM */\n";
  return out.str();
}

}  // namespace tessel::hw
