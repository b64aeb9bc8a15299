// One call from a graph IR and a hardware config to a checked schedule (CLI, experiments).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/net.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// A schedule together with the Net it indexes and the hardware view it was made for.
struct ScheduledNet {
  Net net;
  Schedule schedule;
  /// The scheduler's view of the config the schedule was made for (machine_from_config):
  /// code generation lowers against it rather than rebuilding it (issue 35), and refuses a
  /// config that is not the one it describes.
  Machine machine;
};

/// Builds the policy's form of `graph` for `config`, runs `policy`, stamps the config name and
/// runs the independent checker (a checker failure is returned as a failure).
Result<ScheduledNet> schedule_graph(const ir::Graph& graph, const HwConfig& config,
                                    const std::string& policy, Objective objective,
                                    const MapSpaceFeatures& features = {});

/// Costs and checks the explicit mappings of `json` (a schedule JSON, as `tessel schedule
/// --json` writes it or by hand; mapped_schedule.hpp) instead of searching: the net in the
/// form of the JSON's `policy` and `map_space`, schedule_from_mappings, the checker. Fails
/// naming the group, op and key of a malformed, inconsistent or infeasible mapping.
Result<ScheduledNet> schedule_graph_from_mappings(const ir::Graph& graph, const HwConfig& config,
                                                  const nlohmann::json& json);

/// Sets `scheduled.schedule.instruction_fetch_bytes` to the program's size predicted from its
/// mappings (predict_instruction_fetch_bytes, docs/energy.md "Instruction fetch"), as
/// `tessel schedule` and `tessel.schedule` report it; returns why not ("" when set) where the
/// lowering has no count for an op, leaving the fetch out.
std::string add_predicted_fetch(ScheduledNet& scheduled);

/// The per-group table `tessel schedule` prints (tiles, halo, residency, bytes, engine cycles)
/// followed by the totals.
std::string format_table(const ScheduledNet& result);

/// Every objective, in the order the CLIs list them (bytes, latency, energy, edp).
const std::vector<Objective>& objectives();

/// Their names joined by `separator` ("bytes | latency | energy | edp"): the one list that
/// parse_objective's refusal and every CLI's --objective help (tessel schedule, compile, run)
/// print.
std::string objective_names(const std::string& separator = " | ");

/// Parses one of objective_names() ("bytes", "latency", "energy", "edp").
Result<Objective> parse_objective(const std::string& text);

/// The value of a CLI's `--objective` option: parse_objective, or the input error naming
/// `--objective` (thrown, as support/diagnostic.hpp's CLIs report bad options).
Objective objective_option(const std::string& text);

}  // namespace tessel::sched
