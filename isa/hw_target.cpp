// Conversion from HwConfig to the ISA's view of the target.
#include "isa/hw_target.hpp"

namespace tessel::isa {

TargetInfo target_from_config(const HwConfig& config) {
  TargetInfo target;
  for (const auto& pad : config.scratchpads) {
    ScratchpadInfo info{pad.name, pad.size_bytes, {}};
    for (const auto kind : pad.holds) {
      switch (kind) {
        case DataKind::kActivations:
          info.holds.push_back(SramKind::kActivations);
          break;
        case DataKind::kWeights:
          info.holds.push_back(SramKind::kWeights);
          break;
        case DataKind::kAccumulators:
          info.holds.push_back(SramKind::kAccumulators);
          break;
        case DataKind::kOutputs:
          info.holds.push_back(SramKind::kOutputs);
          break;
      }
    }
    target.scratchpads.push_back(std::move(info));
  }
  target.matrix_rows = config.matrix.rows;
  target.matrix_cols = config.matrix.cols;
  target.input_bits = config.matrix.input_bits;
  target.weight_bits = config.matrix.weight_bits;
  target.lookup_table = config.vector.lookup_table;
  target.row_reduce = config.vector.row_reduce;
  target.broadcast_multiply = config.vector.broadcast_multiply;
  target.activation_operands = config.matrix.activation_operands;
  target.row_normalise = config.vector.row_normalise;
  target.dram_burst_bytes = config.dram.burst_bytes;
  return target;
}

timing::ComputeParams compute_params_from_config(const HwConfig& config) {
  return {config.matrix.rows,
          config.matrix.cols,
          config.matrix.fill_cycles,
          config.matrix.drain_cycles,
          config.vector.lanes,
          config.matrix.weight_load_rows,
          config.dma_mover_bytes_per_cycle()};
}

std::vector<std::string> scratchpad_names(const HwConfig& config) {
  std::vector<std::string> names;
  for (const auto& pad : config.scratchpads) names.push_back(pad.name);
  return names;
}

}  // namespace tessel::isa
