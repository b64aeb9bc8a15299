// `opfusion`: Relay/TVM-style fusion: BN folded, elementwise ops fused into their producer.
#include "scheduler/energy_objective.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

bool is_elementwise(const Op& op) {
  return op.kind == OpKind::Eltwise || op.kind == OpKind::Add;
}

/// Energy: each group's cheaper of its bytes-best and latency-best mappings
/// (plan_group_for_energy). EDP over fixed groups: the same at lambda = E / T of the energy
/// choice. Either way the result is the least under the objective, on the schedule's total
/// (least_score), of those choices and the all-bytes-best and all-latency-best schedules (which
/// are opfusion's bytes and latency schedules): never worse than either (docs/energy.md).
Result<std::vector<GroupSchedule>> choose_for_energy(const Net& net, const Machine& machine,
                                                     Objective objective,
                                                     const std::vector<std::vector<int>>& groups,
                                                     const PlanOptions& options) {
  std::vector<std::vector<GroupSchedule>> per_group;  // each group's bytes-best, latency-best
  for (const auto& group : groups) {
    auto plans = plan_group_candidates(net, machine, group, options);
    if (!plans.ok()) return fail("group at '" + net.op(group[0]).name + "': " + plans.reason());
    per_group.push_back(std::move(plans).value());
  }
  // The choice at lambda: the latency-best where strictly cheaper (plan_group_for_energy's).
  auto choose = [&](double lambda) {
    std::vector<GroupSchedule> out;
    for (const auto& plans : per_group) {
      const bool latency = plans.size() == 2 && energy_cost(net, machine, plans[1], lambda) <
                                                    energy_cost(net, machine, plans[0], lambda);
      out.push_back(plans[latency ? 1 : 0]);
    }
    return out;
  };
  std::vector<std::vector<GroupSchedule>> candidates = {choose(0)};
  if (objective == Objective::Edp) {
    double energy = 0, cycles = 0;
    for (const auto& g : candidates[0]) {
      energy += group_energy_pj(net, machine, g);
      cycles += static_cast<double>(g.cycles);
    }
    candidates.push_back(choose(cycles > 0 ? energy / cycles : 0));
  }
  // The bytes and latency schedules, where every group has that mapping.
  for (const bool latency : {false, true}) {
    std::vector<GroupSchedule> all;
    for (const auto& plans : per_group) {
      if (plans.size() != 2) break;
      all.push_back(plans[latency ? 1 : 0]);
    }
    if (all.size() == per_group.size()) candidates.push_back(std::move(all));
  }
  return std::move(candidates[least_score(net, machine, candidates, objective)]);
}

Result<std::vector<GroupSchedule>> run_opfusion(const Net& net, const Machine& machine,
                                                Objective objective,
                                                const MapSpaceFeatures& features) {
  PlanOptions options;
  options.objective = objective;
  options.search_depth_bytes = features.search_depth_bytes;
  options.search_depth_latency = features.search_depth_latency;
  options.column_tiles_every_row = features.column_tiles_every_row;
  std::vector<std::vector<int>> groups;
  for (int op : schedulable_ops(net)) {
    const Op& o = net.op(op);
    // Fuse an elementwise op into the current group when it reads the group's last result
    // and is that result's only consumer (the producer's output then never reaches DRAM); a
    // DRAM view (Reshape, Slice, a row Concat) stays alone.
    const OpKind last_kind = groups.empty() ? OpKind::Input : net.op(groups.back().back()).kind;
    if (!groups.empty() && is_elementwise(o) && last_kind != OpKind::Reshape &&
        last_kind != OpKind::Slice && !net.op(groups.back().back()).concat_rows) {
      const int last = net.op(groups.back().back()).output;
      bool reads_last = false;
      for (int input : o.inputs) reads_last |= input == last;
      if (reads_last && net.tensor(last).consumers.size() == 1) {
        groups.back().push_back(op);
        continue;
      }
    }
    groups.push_back({op});
  }
  if (is_energy_objective(objective))
    return choose_for_energy(net, machine, objective, groups, options);
  std::vector<GroupSchedule> out;
  for (const auto& group : groups) {
    auto plan = plan_group(net, machine, group, options);
    if (!plan.ok()) return fail("group at '" + net.op(group[0]).name + "': " + plan.reason());
    out.push_back(std::move(plan).value());
  }
  return out;
}

}  // namespace

Policy make_opfusion_policy() {
  return {"opfusion",
          "BN folded, elementwise ops fused into their producer, every conv output to DRAM",
          NetForm::Folded, run_opfusion};
}

}  // namespace tessel::sched
