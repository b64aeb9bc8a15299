// The energy and EDP objectives (docs/energy.md, "Optimising energy"): a group's predicted
// energy as the search sees it, and the choice between the mappings the group search ranks.
#pragma once

#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Bytes, latency, energy, edp.
const char* objective_name(Objective objective);

/// True for Energy and Edp.
inline bool is_energy_objective(Objective objective) {
  return objective == Objective::Energy || objective == Objective::Edp;
}

/// The predicted energy of one group in pJ (count_group_actions x machine.energy, leakage over
/// the group's cycles); the machine must carry its energy table.
double group_energy_pj(const Net& net, const Machine& machine, const GroupSchedule& group);

/// A group's cost under `energy + lambda x cycles` (lambda in pJ per cycle; 0: energy alone).
double energy_cost(const Net& net, const Machine& machine, const GroupSchedule& group,
                   double lambda);

/// A lower bound on that cost: the group's DRAM bytes bound x the table's pJ/B plus lambda x its
/// cycles bound (every other term is non-negative).
double energy_cost_bound(const Net& net, const Machine& machine, const std::vector<int>& ops,
                         double lambda);

/// The group planned for `energy + lambda x cycles`: the group search ranks mappings by bytes or
/// by cycles only (plan.hpp), so both are planned and the cheaper under the cost is taken.
/// `options.objective` is ignored. Fails as plan_group does when neither fits.
Result<GroupSchedule> plan_group_for_energy(const Net& net, const Machine& machine,
                                            const std::vector<int>& ops, PlanOptions options,
                                            double lambda);

/// The group's bytes-best and latency-best mappings (those that fit, in that order): the
/// candidates plan_group_for_energy chooses between. Fails as plan_group does when neither fits.
Result<std::vector<GroupSchedule>> plan_group_candidates(const Net& net, const Machine& machine,
                                                         const std::vector<int>& ops,
                                                         PlanOptions options);

/// What the energy objectives minimise over whole schedules, as predict_energy totals it (the
/// groups' counts summed, then x the table once; leakage over the sum of the groups' cycles;
/// instruction fetch, the program's, left out): Energy: the total pJ; Edp: pJ x seconds.
/// `objective` must be Energy or Edp.
double schedule_score(const Net& net, const Machine& machine,
                      const std::vector<GroupSchedule>& groups, Objective objective);

/// The index of the least schedule_score among `candidates` (the first of equals; -1 when
/// empty). The policies end with it, so that their schedule is never worse under the objective
/// than any candidate they also made, the bytes and latency schedules among them.
int least_score(const Net& net, const Machine& machine,
                const std::vector<std::vector<GroupSchedule>>& candidates, Objective objective);

/// Fails unless `machine` carries an energy table (machine_from_config sets one).
Status require_energy_table(const Machine& machine);

}  // namespace tessel::sched
