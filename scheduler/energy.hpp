// The energy a schedule predicts from the actions its cost model counts (docs/energy.md).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

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

/// Adds the prediction to a schedule's JSON (`tessel schedule --json` and the Python API's
/// `Schedule.to_json` both write it through here): predicted_energy_pj {mac, dram, leakage,
/// total, by_group, not_counted}, predicted_edp_pj_s and area_mm2.
void add_predicted_energy(nlohmann::ordered_json& j, const ScheduleEnergy& energy);

}  // namespace tessel::sched
