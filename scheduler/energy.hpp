// The energy a schedule predicts from the actions its cost model counts (docs/energy.md).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"

namespace tessel::sched {

/// Predicted counts and energy per group (schedule order) and in total.
struct ScheduleEnergy {
  std::vector<ActionCounts> group_counts;
  std::vector<EnergyBreakdown> groups;
  ActionCounts counts;  ///< the sum, with the schedule's cycles
  EnergyBreakdown total;
};

/// energy_table(config) x what the cost model counts (count_group_actions: MAC slots, SRAM
/// bytes per scratchpad, vector operations, DRAM bytes without instruction fetch) and the
/// schedule's cycles (leakage). `net` is the net the schedule was made for.
ScheduleEnergy predict_energy(const Schedule& schedule, const Net& net, const HwConfig& config);

/// Adds the prediction to a schedule's JSON (`tessel schedule --json` and the Python API's
/// `Schedule.to_json` both write it through here): predicted_energy_pj {mac, sram,
/// sram_by_scratchpad, vector, dram, leakage, total, by_group}, predicted_counts,
/// predicted_edp_pj_s and area_mm2.
void add_predicted_energy(nlohmann::ordered_json& j, const ScheduleEnergy& energy,
                          const HwConfig& config);

}  // namespace tessel::sched
