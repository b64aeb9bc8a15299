// Machine view construction and the per-instruction timing formulas.
#include "scheduler/machine.hpp"

#include <cmath>

#include "configs/hw_config.hpp"

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
  m.vector_lanes = config.vector.lanes;
  m.activation_bytes = config.matrix.input_bits / 8;
  m.weight_bytes = config.matrix.weight_bits / 8;
  m.accumulator_bytes = config.matrix.accumulator_bits / 8;
  m.dram_bytes_per_cycle = config.dram_bytes_per_cycle();
  m.dram_latency_cycles = config.dram_latency_cycles();
  m.clock_mhz = config.clock_mhz;
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

int64_t dma_cycles(const Machine& machine, int64_t bytes) {
  if (bytes <= 0) return 0;
  return machine.dram_latency_cycles +
         static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / machine.dram_bytes_per_cycle));
}

namespace {
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

int64_t matrix_cycles(const Machine& machine, int64_t out_rows, int64_t out_cols,
                      int64_t out_channels, int64_t groups_in_tile, int64_t in_channels_per_group,
                      int64_t kernel_h, int64_t kernel_w) {
  if (out_rows <= 0 || out_cols <= 0 || out_channels <= 0) return 0;
  const int64_t out_per_group = ceil_div(out_channels, groups_in_tile);
  const int64_t steady = out_cols * kernel_h * kernel_w *
                         ceil_div(in_channels_per_group, machine.matrix_rows) *
                         ceil_div(out_per_group, machine.matrix_cols) * groups_in_tile;
  return out_rows * (machine.matrix_fill_cycles + steady + machine.matrix_drain_cycles);
}

int64_t vector_cycles(const Machine& machine, int64_t elements) {
  return elements <= 0 ? 0 : ceil_div(elements, machine.vector_lanes);
}

}  // namespace tessel::sched
