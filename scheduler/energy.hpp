// The energy a schedule predicts from the actions its cost model counts (docs/energy.md).
#pragma once

#include <vector>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/schedule.hpp"

namespace tessel::sched {

/// Predicted energy per group (schedule order) and in total.
struct ScheduleEnergy {
  std::vector<EnergyBreakdown> groups;
  EnergyBreakdown total;
};

/// energy_table(config) x what the cost model counts: each group's useful MACs, its DRAM bytes
/// (instruction fetch excluded) and its cycles (leakage). The cost model counts neither SRAM
/// bytes nor vector-unit operations, so those terms are 0 here; MACs are the network's, not
/// the array's padded slots that the simulator counts.
ScheduleEnergy predict_energy(const Schedule& schedule, const HwConfig& config);

}  // namespace tessel::sched
