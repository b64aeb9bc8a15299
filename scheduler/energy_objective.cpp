// The energy and EDP objectives' per-group costs (scheduler/energy_objective.hpp).
#include "scheduler/energy_objective.hpp"

#include "configs/energy_model.hpp"
#include "scheduler/energy.hpp"
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

Result<std::vector<GroupSchedule>> plan_group_candidates(const Net& net, const Machine& machine,
                                                         const std::vector<int>& ops,
                                                         PlanOptions options) {
  options.objective = Objective::Bytes;
  auto bytes = plan_group(net, machine, ops, options);
  options.objective = Objective::Latency;
  auto latency = plan_group(net, machine, ops, options);
  if (!bytes.ok() && !latency.ok()) return latency.failure();
  std::vector<GroupSchedule> out;
  if (bytes.ok()) out.push_back(std::move(bytes).value());
  if (latency.ok()) out.push_back(std::move(latency).value());
  return out;
}

Result<GroupSchedule> plan_group_for_energy(const Net& net, const Machine& machine,
                                            const std::vector<int>& ops, PlanOptions options,
                                            double lambda) {
  auto candidates = plan_group_candidates(net, machine, ops, options);
  if (!candidates.ok()) return candidates.failure();
  std::vector<GroupSchedule>& c = candidates.value();
  // The latency-best only where strictly cheaper (the bytes-best first, as before).
  if (c.size() == 2 &&
      energy_cost(net, machine, c[1], lambda) < energy_cost(net, machine, c[0], lambda))
    return std::move(c[1]);
  return std::move(c[0]);
}

double schedule_score(const Net& net, const Machine& machine,
                      const std::vector<GroupSchedule>& groups, Objective objective) {
  int64_t cycles = 0;
  for (const auto& g : groups) cycles += g.cycles;  // as finalize_schedule totals them
  const EnergyBreakdown total = predict_energy(groups, cycles, std::nullopt, net, machine).total;
  return objective == Objective::Edp ? total.edp_pj_s() : total.total_pj();
}

int least_score(const Net& net, const Machine& machine,
                const std::vector<std::vector<GroupSchedule>>& candidates, Objective objective) {
  int best = -1;
  double best_score = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double score = schedule_score(net, machine, candidates[i], objective);
    if (best < 0 || score < best_score) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

}  // namespace tessel::sched
