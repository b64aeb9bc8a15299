// The policy table and the driver that runs one policy and totals its schedule.
#include "scheduler/policy.hpp"

#include <chrono>

#include "scheduler/energy_objective.hpp"
#include "support/strings.hpp"
#include "support/version.hpp"

namespace tessel::sched {

const std::vector<Policy>& policies() {
  static const std::vector<Policy> table = {make_layerwise_policy(), make_opfusion_policy(),
                                            make_fusion_policy(), make_fusion_reuse_policy(),
                                            make_optimal_policy()};
  return table;
}

Result<const Policy*> find_policy(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& p : policies()) {
    if (p.name == name) return &p;
    names.push_back(p.name);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return fail("unknown policy '" + name + "' (known: " + list + ")" + did_you_mean(name, names));
}

std::vector<int> schedulable_ops(const Net& net) {
  std::vector<int> out;
  for (int i = 0; i < net.size(); ++i) {
    if (net.op(i).kind != OpKind::Input) out.push_back(i);
  }
  return out;
}

Result<Schedule> run_policy(const Net& net, const Machine& machine, const std::string& policy_name,
                            Objective objective, const MapSpaceFeatures& features) {
  auto policy = find_policy(policy_name);
  if (!policy.ok()) return policy.failure();
  if (is_energy_objective(objective)) {
    if (policy_name != "optimal" && policy_name != "opfusion")
      return fail(std::string("objective ") + objective_name(objective) +
                  " is for the optimal and opfusion policies (not '" + policy_name + "')");
    if (auto ok = require_energy_table(machine); !ok.ok()) return ok.failure();
  }
  const auto start = std::chrono::steady_clock::now();
  auto groups = policy.value()->run(net, machine, objective, features);
  const auto stop = std::chrono::steady_clock::now();
  if (!groups.ok()) return groups.failure();
  Schedule schedule;
  schedule.model = net.name;
  schedule.config = machine.name;
  schedule.policy = policy_name;
  schedule.objective = objective_name(objective);
  schedule.features = features;
  schedule.tool_version = version();
  schedule.groups = std::move(groups).value();
  schedule.search_seconds = std::chrono::duration<double>(stop - start).count();
  finalize_schedule(net, machine, schedule);
  return schedule;
}

Result<std::vector<GroupSchedule>> greedy_fusion(const Net& net, const Machine& machine,
                                                 const PlanOptions& options) {
  const std::vector<int> seq = schedulable_ops(net);
  std::vector<GroupSchedule> out;
  size_t i = 0;
  while (i < seq.size()) {
    std::vector<int> group = {seq[i]};
    auto plan = plan_group_first_fit(net, machine, group, options);
    if (!plan.ok()) {
      return fail("op '" + net.op(seq[i]).name +
                  "' does not fit on chip even alone: " + plan.reason());
    }
    size_t j = i + 1;
    // A lone view (Reshape, aliased Concat) is not grown: it costs nothing as it is.
    // Growing requires the weights to stay resident (the paper allocates them with the
    // group); only a lone op may stream its weights per tile.
    PlanOptions grow_options = options;
    grow_options.allow_streamed_weights = false;
    while (j < seq.size() && !plan.value().dram_view) {
      group.push_back(seq[j]);
      const GroupSchedule& current = plan.value();
      const Mapping start{current.row_tiles, current.col_tiles, current.channel_tiles};
      auto grown = plan_group_first_fit(net, machine, group, grow_options, &start);
      if (!grown.ok()) {
        group.pop_back();
        break;
      }
      plan = std::move(grown);
      ++j;
    }
    out.push_back(std::move(plan).value());
    i = j;
  }
  return out;
}

}  // namespace tessel::sched
