// Group planning (Timeloop's model + search): cost a mapping of a group, search the map space
// (map_space.hpp) for the best one, prefetch weights across groups, total a schedule.
#pragma once

#include <vector>

#include "scheduler/alloc.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "scheduler/shape.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Cycles of the DMA that loads `box` of activation `tensor` from DRAM (docs/timing.md), alone
/// on an idle DRAM: one instruction, or two for a space-to-depth input (one per row parity;
/// docs/scheduler.md, "Space-to-depth stem").
int64_t dma_cycles_for_box(const Net& net, const Machine& machine, int tensor, const Box& box);

/// The model: evaluates one mapping of a group (shape transfer per tile, allocation, bytes,
/// cycles). Fails when the buffers do not fit, with the allocator's reason.
Result<GroupSchedule> evaluate_mapping(const Net& net, const Machine& machine,
                                       const std::vector<int>& ops, const Mapping& mapping,
                                       const PlanOptions& options);

/// Cross-group weight prefetch: `next` (a planned group) re-evaluated with its prologue
/// weights (GroupSchedule::prologue_weight_cycles) loaded during `previous`'s tail, after its
/// last load, into bytes that no buffer of `previous` uses (the allocation proves it: those
/// bytes are pinned at step -1, where the prologue buffers start). Its cycles are the group's
/// with the prologue on chip plus the wait
///   max(0, prologue_weight_cycles + previous.tail_dma_cycles - previous.tail_cycles)
/// (the prefetch shares the DMA with the tail's stores). Fails when either is a DRAM view,
/// `next` has no prologue weights, or the prologue does not fit beside `previous`.
Result<GroupSchedule> plan_prefetched(const Net& net, const Machine& machine,
                                      const GroupSchedule& previous, const GroupSchedule& next,
                                      const PlanOptions& options);

/// Best feasible mapping by the objective; fails when none fits. With `cycle_cutoff` >= 0
/// (objective latency), only mappings of at most that many cycles matter to the caller: past
/// the first mapping that fits, others are rejected on their cycles before allocation and
/// tilings whose compute alone exceeds it are skipped, so the result is the best mapping when
/// that is within the cutoff, else a feasible mapping over it (docs/scheduler.md "Search
/// speed").
Result<GroupSchedule> plan_group(const Net& net, const Machine& machine,
                                 const std::vector<int>& ops, const PlanOptions& options,
                                 int64_t cycle_cutoff = -1);

/// The most cycles cross-group prefetch can take off a mapping of `ops`: the DMA cycles of
/// every op's weights and requant table, each loaded whole (plan_prefetched removes the
/// prologue weights' loads, which are at most these).
int64_t prefetch_saving_bound(const Net& net, const Machine& machine, const std::vector<int>& ops);

/// First feasible mapping in enumeration order (largest tile first): the paper's "shrink the
/// tile until allocation succeeds". With `start`, tilings coarser than `start`'s
/// (fewer row, column, channel tiles, in that order) are skipped: the paper keeps the tile size of
/// the group it grows and shrinks from there.
Result<GroupSchedule> plan_group_first_fit(const Net& net, const Machine& machine,
                                           const std::vector<int>& ops, const PlanOptions& options,
                                           const Mapping* start = nullptr);

/// What no mapping of a group can beat: DRAM bytes (every input, stored output, weight and
/// requant table once) and cycles (max of MACs / MACs-per-cycle and the larger of the read and
/// written bytes over the DRAM bandwidth: the engines overlap at best). For search pruning.
struct GroupBound {
  int64_t bytes = 0;
  int64_t cycles = 0;
};
GroupBound group_lower_bound(const Net& net, const Machine& machine, const std::vector<int>& ops);

/// True when `a` is better than `b` under `objective`.
bool better(const GroupSchedule& a, const GroupSchedule& b, Objective objective);

/// Fills totals, compulsory bytes, roofline and MACs of `schedule` from its groups.
void finalize_schedule(const Net& net, const Machine& machine, Schedule& schedule);

}  // namespace tessel::sched
