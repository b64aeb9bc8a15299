// Independent allocation checker: replays a schedule's buffers and proves them safe.
#pragma once

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Replays `schedule` on `net` and `machine` without using the allocator or the planner:
///  - every non-Input op is in exactly one group and every tensor a group loads is in DRAM by
///    then (a network input, or stored by an earlier group);
///  - each buffer lies inside its scratchpad;
///  - each buffer is large enough for every tile (shape transfer of the tiling rule) and is
///    declared live over every step it is written or read (lifetimes derived here from the
///    group's ops, the halo mode, weight residency and double buffering; a streamed weight
///    slice is written by the tile's loads at step 0 and read at its op's step);
///  - no two buffers that are live at the same step share a byte, unless one is declared to
///    deep-reuse the other; such a claim is replayed byte by byte, output row by output row,
///    and fails if any row overwrites input bytes a later row still reads.
/// The first violation is returned, naming the group, buffers, step and byte ranges.
Status check_schedule(const Net& net, const Machine& machine, const Schedule& schedule);

}  // namespace tessel::sched
