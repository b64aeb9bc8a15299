// Machine view construction and the per-instruction timing formulas.
#include "scheduler/machine.hpp"

#include <algorithm>
#include <cmath>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "support/int_ops.hpp"

namespace tessel::sched {

const char* to_string(BufferKind kind) {
  switch (kind) {
    case BufferKind::Activations:
      return "activations";
    case BufferKind::Weights:
      return "weights";
    case BufferKind::Accumulators:
      return "accumulators";
    case BufferKind::Outputs:
      return "outputs";
  }
  return "?";
}

std::vector<int64_t> Machine::capacities() const {
  std::vector<int64_t> out;
  for (const auto& pad : scratchpads) out.push_back(pad.size_bytes);
  return out;
}

Machine machine_from_config(const HwConfig& config) {
  Machine m;
  m.name = config.name;
  m.energy = std::make_shared<const EnergyTable>(energy_table(config));
  for (const auto& pad : config.scratchpads) m.scratchpads.push_back({pad.name, pad.size_bytes});
  const DataKind kinds[4] = {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators,
                             DataKind::kOutputs};
  for (int k = 0; k < 4; ++k) {
    const auto holding = config.scratchpads_holding(kinds[k]);
    m.scratchpad_for[k] = holding.empty() ? 0 : static_cast<int>(holding.front());
  }
  m.matrix_rows = config.matrix.rows;
  m.matrix_cols = config.matrix.cols;
  m.matrix_fill_cycles = config.matrix.fill_cycles;
  m.matrix_drain_cycles = config.matrix.drain_cycles;
  m.weight_load_rows = config.matrix.weight_load_rows;
  m.vector_lanes = config.vector.lanes;
  m.activation_bytes = config.matrix.input_bits / 8;
  m.weight_bytes = config.matrix.weight_bits / 8;
  m.accumulator_bytes = 4;  // accumulators live in SRAM as i32 (docs/isa.md)
  m.dram_bytes_per_cycle = config.dram_bytes_per_cycle();
  m.dram_latency_cycles = config.dram_latency_cycles();
  m.burst_bytes = config.dram.burst_bytes;
  m.max_outstanding = config.dram.max_outstanding_requests;
  m.dma_mover_bytes = config.dma_mover_bytes_per_cycle();
  m.clock_mhz = config.clock_mhz;
  m.lookup_table = config.vector.lookup_table;
  m.broadcast_multiply = config.vector.broadcast_multiply;
  m.row_normalise = config.vector.row_normalise;
  m.activation_operands = config.matrix.activation_operands;
  return m;
}

Machine unified_machine(int64_t bytes, int64_t rows, int64_t cols, double dram_bytes_per_cycle) {
  Machine m;
  m.name = "unified";
  m.scratchpads = {{"sram", bytes}};
  m.matrix_rows = rows;
  m.matrix_cols = cols;
  m.matrix_fill_cycles = rows;
  m.matrix_drain_cycles = cols;
  m.vector_lanes = cols;
  m.dram_bytes_per_cycle = dram_bytes_per_cycle;
  return m;
}

namespace {
using intops::ceil_div;

// W: cycles to load one held block, weight_load_rows rows (columns, transposed) a cycle
// (docs/timing.md "conv").
int64_t block_load_cycles(const Machine& machine, bool transposed) {
  return ceil_div(transposed ? machine.matrix_cols : machine.matrix_rows,
                  std::max<int64_t>(1, machine.weight_load_rows));
}
}  // namespace

int64_t conv_instruction_cycles(const Machine& machine, int64_t pixels, int64_t out_channels,
                                int64_t in_channels, int64_t kernel_h, int64_t kernel_w,
                                bool depthwise) {
  if (pixels <= 0 || out_channels <= 0) return 0;
  const int64_t oc_blocks = ceil_div(out_channels, machine.matrix_cols);
  const int64_t passes =
      depthwise ? oc_blocks * kernel_h * kernel_w
                : oc_blocks * ceil_div(in_channels, machine.matrix_rows) * kernel_h * kernel_w;
  const int64_t weight_load = depthwise ? 1 : block_load_cycles(machine, false);
  return weight_load + passes * std::max(pixels, weight_load) + machine.matrix_fill_cycles +
         machine.matrix_drain_cycles;
}

int64_t conv_groups_per_block(const Machine& machine, int64_t groups, int64_t in_per_group,
                              int64_t out_per_group) {
  if (groups <= 1 || out_per_group <= 0 || in_per_group <= 0) return 1;
  if (out_per_group >= machine.matrix_cols) return 1;
  return std::max<int64_t>(1, std::min({machine.matrix_cols / out_per_group, groups,
                                        machine.matrix_rows / in_per_group}));
}

int64_t vector_instruction_cycles(const Machine& machine, int64_t pixels, int64_t channels) {
  if (pixels <= 0 || channels <= 0) return 0;
  return pixels * ceil_div(channels, machine.vector_lanes) + kVectorPipelineCycles;
}

int64_t matmul_instruction_cycles(const Machine& machine, int64_t m, int64_t n, int64_t k,
                                  bool transpose_b) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const int64_t passes = ceil_div(n, machine.matrix_cols) * ceil_div(k, machine.matrix_rows);
  const int64_t load = block_load_cycles(machine, transpose_b);
  return load + passes * std::max(m, load) + machine.matrix_fill_cycles +
         machine.matrix_drain_cycles;
}

int64_t softmax_instruction_cycles(const Machine& machine, int64_t rows, int64_t row) {
  if (rows <= 0 || row <= 0) return 0;
  return ceil_div(512, machine.vector_lanes) +
         rows * (3 * ceil_div(row, machine.vector_lanes) + 31) + kVectorPipelineCycles;
}

int64_t norm_instruction_cycles(const Machine& machine, int64_t rows, int64_t row) {
  if (rows <= 0 || row <= 0) return 0;
  return rows * (2 * ceil_div(row, machine.vector_lanes) + 56) + kVectorPipelineCycles;
}

int64_t pool_instruction_cycles(const Machine& machine, int64_t out_pixels, int64_t window,
                                int64_t channels) {
  if (out_pixels <= 0 || channels <= 0) return 0;
  return out_pixels * window * ceil_div(channels, machine.vector_lanes) + kVectorPipelineCycles;
}

int64_t dma_instruction_cycles(const Machine& machine, int64_t bursts) {
  if (bursts <= 0) return 0;
  const long double burst_cycles =
      static_cast<long double>(machine.burst_bytes) / machine.dram_bytes_per_cycle;
  const auto latency = static_cast<long double>(machine.dram_latency_cycles);
  long double cycles = latency + static_cast<long double>(bursts) * burst_cycles;
  if ((static_cast<long double>(machine.max_outstanding) - 1) * burst_cycles < latency + 1) {
    // Too few slots to hide the latency: every group of O bursts waits one round trip.
    const int64_t rounds = ceil_div(bursts, machine.max_outstanding);
    cycles = std::max(cycles, static_cast<long double>(rounds) * (latency + burst_cycles));
  }
  return static_cast<int64_t>(std::ceil(cycles - 1e-9L));
}

int64_t bursts_covering(int64_t address, int64_t bytes, int64_t burst_bytes) {
  if (bytes <= 0) return 0;
  return (address + bytes - 1) / burst_bytes - address / burst_bytes + 1;
}

}  // namespace tessel::sched
