// `opfusion`: Relay/TVM-style fusion: BN folded, elementwise ops fused into their producer.
#include "scheduler/energy_objective.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

bool is_elementwise(const Op& op) {
  return op.kind == OpKind::Eltwise || op.kind == OpKind::Add;
}

Result<std::vector<GroupSchedule>> run(const Net& net, const Machine& machine, Objective objective,
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
    // and is that result's only consumer (the producer's output then never reaches DRAM).
    if (!groups.empty() && is_elementwise(o) &&
        net.op(groups.back().back()).kind != OpKind::Reshape) {
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
  std::vector<GroupSchedule> out;
  // Energy: each group's cheaper mapping (plan_group_for_energy). EDP over fixed groups: the
  // same at lambda = E / T of the energy choice (docs/energy.md, "Optimising energy").
  double lambda = 0;
  if (objective == Objective::Edp) {
    double energy = 0, cycles = 0;
    for (const auto& group : groups) {
      auto plan = plan_group_for_energy(net, machine, group, options, 0);
      if (!plan.ok()) return fail("group at '" + net.op(group[0]).name + "': " + plan.reason());
      energy += group_energy_pj(net, machine, plan.value());
      cycles += static_cast<double>(plan.value().cycles);
    }
    lambda = cycles > 0 ? energy / cycles : 0;
  }
  for (const auto& group : groups) {
    auto plan = is_energy_objective(objective)
                    ? plan_group_for_energy(net, machine, group, options, lambda)
                    : plan_group(net, machine, group, options);
    if (!plan.ok()) return fail("group at '" + net.op(group[0]).name + "': " + plan.reason());
    out.push_back(std::move(plan).value());
  }
  return out;
}

}  // namespace

Policy make_opfusion_policy() {
  return {"opfusion",
          "BN folded, elementwise ops fused into their producer, every conv output to DRAM",
          NetForm::Folded, run};
}

}  // namespace tessel::sched
