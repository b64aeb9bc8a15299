// The schedule's hardware view (Machine) <-> JSON: the `machine` object of a schedule JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "scheduler/machine.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Every field of `machine` that planning, costing and code generation read (docs/scheduler-
/// mapping.md, "The hardware view"): name, clock_mhz, matrix {rows, cols, fill_cycles,
/// drain_cycles, activation_operands}, vector {lanes, lookup_table, broadcast_multiply,
/// row_normalise}, element_bytes {activations, weights, accumulators}, dram {bytes_per_cycle,
/// latency_cycles, burst_bytes, max_outstanding, mover_bytes_per_cycle}, scratchpads [{name, size}]
/// and scratchpad_for {activations, weights, accumulators, outputs} (indices into scratchpads). The
/// energy table is not written: it is the config's, read from the config.
nlohmann::ordered_json machine_to_json(const Machine& machine);

/// Reads what machine_to_json wrote; fails naming the key (`machine.dram.burst_bytes: ...`) that
/// is missing, mistyped, out of range or unknown. The result has no energy table.
Result<Machine> machine_from_json(const nlohmann::json& json);

/// Reads `json` (a schedule's `machine`) and compares it with `config_view`, the view of the
/// config the schedule is read for; fails naming the first key that differs, e.g.
/// `machine.scratchpads[1].size: schedule made for 131072, config has 65536`.
Status check_machine_json(const nlohmann::json& json, const Machine& config_view);

}  // namespace tessel::sched
