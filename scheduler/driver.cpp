// schedule_graph: IR -> Net (policy's form) -> policy -> totals -> checker.
#include "scheduler/driver.hpp"

#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {

Result<Objective> parse_objective(const std::string& text) {
  if (text == "bytes") return Objective::Bytes;
  if (text == "latency") return Objective::Latency;
  return fail("unknown objective '" + text + "' (known: bytes, latency)");
}

Result<ScheduledNet> schedule_graph(const ir::Graph& graph, const HwConfig& config,
                                    const std::string& policy, Objective objective) {
  auto found = find_policy(policy);
  if (!found.ok()) return found.failure();
  const Machine machine = machine_from_config(config);
  auto net = net_from_graph(graph, machine, found.value()->form);
  if (!net.ok()) return net.failure();
  auto schedule = run_policy(net.value(), machine, policy, objective);
  if (!schedule.ok()) return schedule.failure();
  if (auto checked = check_schedule(net.value(), machine, schedule.value()); !checked.ok()) {
    return fail("schedule failed the allocation checker: " + checked.reason());
  }
  ScheduledNet out{std::move(net).value(), std::move(schedule).value()};
  out.schedule.config = config.name;
  return out;
}

}  // namespace tessel::sched
