// The energy and EDP objectives' per-group costs (scheduler/energy_objective.hpp).
#include "scheduler/energy_objective.hpp"

#include "configs/energy_model.hpp"
#include "scheduler/energy_counts.hpp"

namespace tessel::sched {

const char* objective_name(Objective objective) {
  return to_string(objective);
}

Status require_energy_table(const Machine& machine) {
  if (machine.energy == nullptr)
    return fail("the energy and edp objectives need the config's energy table (machine '" +
                machine.name + "' has none)");
  return {};
}

double group_energy_pj(const Net& net, const Machine& machine, const GroupSchedule& group) {
  ActionCounts counts =
      count_group_actions(net, machine, group, machine.energy->scratchpads.size());
  counts.cycles = static_cast<std::uint64_t>(group.cycles);
  return energy_of(*machine.energy, counts, machine.clock_mhz).total_pj();
}

double energy_cost(const Net& net, const Machine& machine, const GroupSchedule& group,
                   double lambda) {
  return group_energy_pj(net, machine, group) + lambda * static_cast<double>(group.cycles);
}

double energy_cost_bound(const Net& net, const Machine& machine, const std::vector<int>& ops,
                         double lambda) {
  const GroupBound bound = group_lower_bound(net, machine, ops);
  return static_cast<double>(bound.bytes) * machine.energy->dram_pj_per_byte +
         lambda * static_cast<double>(bound.cycles);
}

Result<GroupSchedule> plan_group_for_energy(const Net& net, const Machine& machine,
                                            const std::vector<int>& ops, PlanOptions options,
                                            double lambda) {
  options.objective = Objective::Bytes;
  auto bytes = plan_group(net, machine, ops, options);
  options.objective = Objective::Latency;
  auto latency = plan_group(net, machine, ops, options);
  if (!bytes.ok()) return latency;
  if (!latency.ok()) return bytes;
  return energy_cost(net, machine, latency.value(), lambda) <
                 energy_cost(net, machine, bytes.value(), lambda)
             ? std::move(latency)
             : std::move(bytes);
}

}  // namespace tessel::sched
