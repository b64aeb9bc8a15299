// A schedule from explicit mappings (group_mapping.hpp): each group's mapping, written by
// `tessel schedule` or by hand, costed by the model and checked, without any search.
#pragma once

#include <nlohmann/json.hpp>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Costs the mappings of a schedule JSON on `net`: for each of `groups`, its ops (`ops`, op
/// indices, or `op_names`) evaluated with its `mapping` (evaluate_mapping; plan_prefetched
/// after the previous group that moves data where `prefetched`), and the mapping the model
/// builds compared with the written one key by key (compare_mappings: a hand-written mapping
/// may leave out what the model derives, but what it says must hold). The header (model,
/// config, policy, objective, map_space) is copied, the totals filled, search_seconds 0.
/// Fails naming the group, op and key: a malformed or inconsistent mapping, or one whose
/// buffers do not fit (the allocator's reason).
Result<Schedule> schedule_from_mappings(const Net& net, const Machine& machine,
                                        const nlohmann::json& json);

/// The map-space features a schedule JSON records (`map_space`; the defaults where absent).
Result<MapSpaceFeatures> features_from_json(const nlohmann::json& json);

}  // namespace tessel::sched
