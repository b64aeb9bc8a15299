// schedule_graph: IR -> Net (policy's form) -> policy -> totals -> checker.
#include "scheduler/driver.hpp"

#include <cstdio>

#include "scheduler/checker.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/machine_json.hpp"
#include "scheduler/mapped_schedule.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/program_size.hpp"
#include "support/cancel.hpp"
#include "support/diagnostic.hpp"
#include "support/version.hpp"

namespace tessel::sched {

const std::vector<Objective>& objectives() {
  static const std::vector<Objective> all = {Objective::Bytes, Objective::Latency,
                                             Objective::Energy, Objective::Edp};
  return all;
}

std::string objective_names(const std::string& separator) {
  std::string out;
  for (Objective objective : objectives())
    out += (out.empty() ? "" : separator) + std::string(to_string(objective));
  return out;
}

Result<Objective> parse_objective(const std::string& text) {
  for (Objective objective : objectives())
    if (text == to_string(objective)) return objective;
  return fail("unknown objective '" + text + "' (known: " + objective_names(", ") + ")");
}

Objective objective_option(const std::string& text) {
  auto objective = parse_objective(text);
  if (!objective.ok()) throw_input_error({"--objective", 0, 0}, "", objective.reason());
  return objective.value();
}

Result<ScheduledNet> schedule_graph(const ir::Graph& graph, const HwConfig& config,
                                    const std::string& policy, Objective objective,
                                    const MapSpaceFeatures& features) {
  auto found = find_policy(policy);
  if (!found.ok()) return found.failure();
  const Machine machine = machine_from_config(config);
  auto net = net_from_graph(graph, machine, found.value()->form, features);
  if (!net.ok()) return net.failure();
  auto schedule = run_policy(net.value(), machine, policy, objective, features);
  if (cancel_requested()) return cancelled();  // whatever the policy made of failed groups
  if (!schedule.ok()) return schedule.failure();
  if (auto checked = check_schedule(net.value(), machine, schedule.value()); !checked.ok()) {
    return fail("schedule failed the allocation checker: " + checked.reason());
  }
  ScheduledNet out{std::move(net).value(), std::move(schedule).value(), machine};
  out.schedule.config = config.name;
  return out;
}

Result<ScheduledNet> schedule_graph_from_mappings(const ir::Graph& graph, const HwConfig& config,
                                                  const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("policy") || !json["policy"].is_string())
    return fail("policy: missing (it decides the net's form)");
  auto found = find_policy(json["policy"].get<std::string>());
  if (!found.ok()) return fail("policy: " + found.reason());
  auto features = features_from_json(json);
  if (!features.ok()) return features.failure();
  const Machine machine = machine_from_config(config);
  // The hardware view the schedule was made for must be this config's (docs/scheduler-
  // mapping.md, "The hardware view"); a schedule without one is read for the config given.
  if (json.contains("machine")) {
    if (auto same = check_machine_json(json.at("machine"), machine); !same.ok())
      return same.failure();
  }
  auto net = net_from_graph(graph, machine, found.value()->form, features.value());
  if (!net.ok()) return net.failure();
  auto schedule = schedule_from_mappings(net.value(), machine, json);
  if (!schedule.ok()) return schedule.failure();
  if (auto checked = check_schedule(net.value(), machine, schedule.value()); !checked.ok())
    return fail("schedule failed the allocation checker: " + checked.reason());
  ScheduledNet out{std::move(net).value(), std::move(schedule).value(), machine};
  out.schedule.config = config.name;
  out.schedule.tool_version = version();
  return out;
}

std::string add_predicted_fetch(ScheduledNet& scheduled) {
  auto fetch =
      predict_instruction_fetch_bytes(scheduled.net, scheduled.machine, scheduled.schedule);
  if (!fetch.ok()) return fetch.reason();
  scheduled.schedule.instruction_fetch_bytes = fetch.value();
  return "";
}

}  // namespace tessel::sched

namespace tessel::sched {

namespace {
template <typename... Args>
void append(std::string& out, const char* format, Args... args) {
  char line[512];
  std::snprintf(line, sizeof line, format, args...);
  out += line;
}
}  // namespace

std::string format_table(const ScheduledNet& result) {
  const Schedule& s = result.schedule;
  std::string out;
  append(out, "%-4s %-28s %4s %5s %11s %-9s %3s %3s %12s %11s %11s %11s %11s %9s\n", "grp",
         "first..last op", "ops", "tiles", "tile", "halo", "wr", "db", "dram_bytes", "load_cyc",
         "compute_cyc", "store_cyc", "cycles", "peak_B");
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const auto& g = s.groups[i];
    std::string span = result.net.op(g.ops.front()).name;
    if (g.ops.size() > 1) span += ".." + result.net.op(g.ops.back()).name;
    if (span.size() > 28) span = span.substr(0, 12) + "..." + span.substr(span.size() - 13);
    int64_t peak = 0;
    for (int64_t p : g.peak_bytes) peak += p;
    const std::string tile = g.dram_view
                                 ? "view"
                                 : std::to_string(g.tile_rows) + "x" + std::to_string(g.tile_cols) +
                                       "x" + std::to_string(g.tile_channels);
    append(out,
           "%-4zu %-28s %4zu %5lld %11s %-9s %3s %3s %12lld %11lld %11lld %11lld %11lld %9lld\n", i,
           span.c_str(), g.ops.size(), static_cast<long long>(g.tiles()), tile.c_str(),
           to_string(g.halo),
           g.weight_sweep       ? "swp"
           : g.weights_resident ? "y"
                                : "n",
           g.double_buffered ? "y" : "n", static_cast<long long>(g.traffic.total()),
           static_cast<long long>(g.load_cycles), static_cast<long long>(g.compute_cycles),
           static_cast<long long>(g.store_cycles), static_cast<long long>(g.cycles),
           static_cast<long long>(peak));
  }
  append(out,
         "\n%s on %s, policy %s (objective %s): %zu groups\n"
         "dram_bytes %lld (read %lld, write %lld; weights %lld, activations in %lld, out %lld)\n",
         s.model.c_str(), s.config.c_str(), s.policy.c_str(), s.objective.c_str(), s.groups.size(),
         static_cast<long long>(s.traffic.total()), static_cast<long long>(s.traffic.read()),
         static_cast<long long>(s.traffic.write()), static_cast<long long>(s.traffic.weights_read),
         static_cast<long long>(s.traffic.activations_read),
         static_cast<long long>(s.traffic.activations_written));
  append(
      out,
      "compulsory_bytes %lld (x%.3f)\ncycles %lld, roofline_cycles %lld (x%.3f)\n"
      "lower_bound_cycles %lld (x%.3f roofline, cycles x%.3f)%s%s%s%s\nmacs %lld, search %.3f s\n",
      static_cast<long long>(s.compulsory_bytes),
      static_cast<double>(s.traffic.total()) / static_cast<double>(s.compulsory_bytes),
      static_cast<long long>(s.cycles), static_cast<long long>(s.roofline_cycles),
      static_cast<double>(s.cycles) / static_cast<double>(s.roofline_cycles),
      static_cast<long long>(s.lower_bound_cycles),
      static_cast<double>(s.lower_bound_cycles) / static_cast<double>(s.roofline_cycles),
      static_cast<double>(s.cycles) / static_cast<double>(s.lower_bound_cycles),
      s.lower_bound_barrier.empty() ? "" : ": barrier ", s.lower_bound_barrier.c_str(),
      s.lower_bound_tensor.empty() ? "" : " after tensor ", s.lower_bound_tensor.c_str(),
      static_cast<long long>(s.macs), s.search_seconds);
  return out;
}

}  // namespace tessel::sched
