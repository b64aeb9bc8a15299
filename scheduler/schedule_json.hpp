// Schedule <-> JSON (nlohmann): the text form of a schedule, written and read back identically.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// The schedule as JSON: model/config/policy/objective/tool_version, `dram_bytes` {read, write,
/// total, weights, activations_in, activations_out}, compulsory_bytes, cycles, roofline_cycles,
/// lower_bound_cycles, lower_bound_barrier, lower_bound_tensor, macs, search_seconds, and
/// `groups` (ops by index and name, tiling, halo mode, flags, traffic, cycles, buffers with
/// offset/size/lifetime/reuse). Names come from `net`.
nlohmann::ordered_json to_json(const Schedule& schedule, const Net& net);

/// The same with the hardware view the schedule was made for as `machine` (machine_json.hpp),
/// after `config`: what `tessel schedule --json` and a compile folder's schedule.json write.
nlohmann::ordered_json to_json(const Schedule& schedule, const Net& net, const Machine& machine);

/// Reads what to_json wrote (names are informative and not checked against a net); fails
/// naming the first missing or mistyped key. A `machine` is read and checked for form
/// (machine_from_json) but not kept: Schedule has no hardware view (ScheduledNet has).
Result<Schedule> schedule_from_json(const nlohmann::json& json);

}  // namespace tessel::sched
