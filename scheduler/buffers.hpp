// The on-chip buffers of a group tiling's mapping and their allocation requests, the demand
// check that rejects a tiling before its boxes are built, and what every mapping's buffers
// share (lifetimes without memory reuse, names). Internal to scheduler/.
#pragma once

#include <vector>

#include "scheduler/alloc.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/schedule.hpp"
#include "scheduler/tiling.hpp"

namespace tessel::sched {

/// Appends `b` to `buffers` in its kind's scratchpad and returns its index; without memory
/// reuse (options.memory_reuse false) it lives over the whole tile, steps [0, store_step].
int add_buffer(std::vector<BufferAlloc>& buffers, BufferAlloc b, const Machine& machine,
               const PlanOptions& options, int store_step);

/// Names each buffer (BufferAlloc::name): its tensor's name, "w:<op>" (a weight sweep's shared
/// slice pair, of no op: "w:sweep"), "acc:<op>"; "#1" marks the second copy.
void name_buffers(const Net& net, std::vector<BufferAlloc>& buffers);

/// The allocation requests of a group's buffers, one per buffer in order, then the previous
/// group's pinned bytes where prefetched (options.prefetch_occupied). A buffer's `reuses` is a
/// deep-reuse claim (a tiling's: the allocator's pair, with its gap), or with
/// `in_place_chains` (a weight sweep's in-place outputs) a chain whose members share one
/// offset: one request per chain, of the largest member's size over the union of their
/// lifetimes. `request_of`, when given, receives each buffer's request.
std::vector<AllocRequest> allocation_requests(const std::vector<BufferAlloc>& buffers,
                                              const PlanOptions& options, bool in_place_chains,
                                              std::vector<int>* request_of);

/// The one allocation of every mapping's buffers: places `gs.buffers` (allocation_requests,
/// then `allocate`) and sets their offsets and `gs.peak_bytes`.
Status allocate_buffers(const Machine& machine, const PlanOptions& options, bool in_place_chains,
                        GroupSchedule& gs);

/// The buffers of mapping `m` (activation tiles, weight slices, accumulators; deep reuse) into
/// `buffers`, and their allocation requests, prefetched weights pinned before the group
/// included. Deep-reuse gaps come from `geo`; without one they are 0, which the demand check
/// (check_demand) does not read: it counts a reuse pair as its larger member whatever the gap.
std::vector<AllocRequest> buffer_requests(const Net& net, const Machine& machine,
                                          const GroupInfo& g, const BufferSizes& sizes,
                                          const TileGeometry* geo, const Mapping& m,
                                          const PlanOptions& options, const std::vector<char>& kept,
                                          bool keep_slices, std::vector<BufferAlloc>& buffers);

/// Whether a tiling whose buffers have `sizes` may fit in some mapping: at each op's step,
/// every mapping holds the op's inputs, its output, its accumulators and its weights (at least
/// the widest streamed slice), and deep reuse lets the output share bytes with one input at
/// most. Those live bytes, per scratchpad, must fit: a necessary condition for the demand check
/// of every mapping of the tiling, whatever its residency, halo mode or buffering.
bool tiling_may_fit(const Machine& machine, const GroupInfo& g, const BufferSizes& sizes,
                    const PlanOptions& options, const std::vector<int64_t>& capacities);

/// The buffers of mapping `m` and their places in the scratchpads, into `gs`.
Status place_buffers(const Net& net, const Machine& machine, const GroupInfo& g,
                     const TileGeometry& geo, const Mapping& m, const PlanOptions& options,
                     const std::vector<char>& kept, bool keep_slices, GroupSchedule& gs);

}  // namespace tessel::sched
