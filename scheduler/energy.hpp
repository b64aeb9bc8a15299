// The energy a schedule predicts from the actions its cost model counts (docs/energy.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"

namespace tessel::sched {

/// Predicted counts and energy per group (schedule order) and in total.
struct ScheduleEnergy {
  std::vector<ActionCounts> group_counts;
  std::vector<EnergyBreakdown> groups;
  ActionCounts counts;  ///< the sum, with the schedule's cycles and instruction fetch
  EnergyBreakdown total;
  /// The program's instruction fetch in `counts.dram_bytes` (Schedule::instruction_fetch_bytes;
  /// in no group), or nullopt where the schedule has no program yet and the total leaves it out.
  std::optional<int64_t> instruction_fetch_bytes;
  /// Op kinds in the schedule whose actions the count model does not follow (counts_kind:
  /// none since the transformer kinds `matmul`, `norm`, `rowsoftmax` are counted). Empty: every
  /// action is counted as the simulator counts it; otherwise the JSON names them
  /// (`predicted_energy_unmodelled_kinds`).
  std::vector<std::string> unmodelled_kinds;
};

/// energy_table(config) x what the cost model counts (count_group_actions: MAC slots, SRAM
/// bytes per scratchpad, vector operations, the groups' DRAM bytes), the schedule's instruction
/// fetch where its program is known (Schedule::instruction_fetch_bytes, docs/energy.md
/// "Instruction fetch") and the schedule's cycles (leakage). `net` is the net the schedule was
/// made for.
ScheduleEnergy predict_energy(const Schedule& schedule, const Net& net, const HwConfig& config);

/// The same for `groups` run back to back in `cycles` on `machine` (which must carry its
/// energy table, as machine_from_config sets it), plus `fetch_bytes` of instruction fetch
/// (nullopt: not counted). The policies compare candidate schedules with this, so that their
/// choice and the reported prediction are the same arithmetic.
ScheduleEnergy predict_energy(const std::vector<GroupSchedule>& groups, int64_t cycles,
                              std::optional<int64_t> fetch_bytes, const Net& net,
                              const Machine& machine);

/// Adds the prediction to a schedule's JSON (`tessel schedule --json` and the Python API's
/// `Schedule.to_json` both write it through here): predicted_energy_pj {mac, sram,
/// sram_by_scratchpad, vector, dram, leakage, total, by_group}, predicted_counts,
/// predicted_edp_pj_s and area_mm2.
void add_predicted_energy(nlohmann::ordered_json& j, const ScheduleEnergy& energy,
                          const HwConfig& config);

}  // namespace tessel::sched
