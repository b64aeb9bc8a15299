// The analytic evaluator: the scheduler's search + cost model on each point (no simulation).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "experiments/sweep/evaluator.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"

namespace tessel::sweep {

/// `mode: analytic` — schedules the point's model on its hw config with its policy and the
/// spec's objective (scheduler/policy.hpp run_policy, then the independent checker
/// check_schedule, as sched::schedule_graph does) and reports the schedule's figures.
/// Per-point work is only the search: each model is loaded once (shapes only), and its
/// scheduler Net is built once per (model, policy form, element widths) and shared read-only
/// by all threads. A policy that finds no schedule (a buffer too small for one tile) makes the
/// point invalid with its reason. Options (`analytic:` in the spec): `check: false` skips the
/// checker (default true). Fails for a model or policy name the zoo or scheduler does not know.
Result<std::unique_ptr<PointEvaluator>> make_analytic_evaluator(const SweepSpec& spec);

/// The analytic figures of a schedule on `hw` (docs/sweep.md "Modes"): dram_bytes{...},
/// compulsory_bytes, macs, cycles, roofline_cycles, lower_bound_cycles (max of the roofline and
/// the barrier bound, scheduler/bound.hpp), latency_ms, roofline_latency_ms,
/// onchip_bytes, onchip_capacity_bytes, dram_bandwidth_gbps, groups; bound_bytes, the DRAM-bytes
/// bound of `net` (the schedule's) at `hw`'s capacity (scheduler/bytes_bound.hpp).
nlohmann::ordered_json schedule_figures(const sched::Schedule& schedule, const sched::Net& net,
                                        const HwConfig& hw);

/// The map space the spec asks for (its `tiles_2d` key; the rest MapSpaceFeatures' defaults).
sched::MapSpaceFeatures features_of(const SweepSpec& spec);

/// What the analytic and sim modes check alike before evaluating anything: the spec's objective
/// and policy names, and its one boolean option `flag` under `mode` (`analytic:` / `sim:`),
/// `fallback` when absent. Any other key, or a non-boolean value, is an error naming
/// `mode.key`.
Result<bool> validate_scheduled_spec(const SweepSpec& spec, const std::string& mode,
                                     const std::string& flag, bool fallback);

}  // namespace tessel::sweep
