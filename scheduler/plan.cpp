// Group planning glue: names of the schedule's enums, cross-group weight prefetch, the
// objective's order, the bounds search prunes with, a schedule's totals. The map space is
// map_space.cpp, the cost model cost_model.cpp (tiling_model.cpp, sweep_model.cpp), the search
// search.cpp.
#include "scheduler/plan.hpp"

#include <algorithm>

#include "scheduler/bound.hpp"
#include "scheduler/cost_model.hpp"

namespace tessel::sched {

const char* to_string(HaloMode mode) {
  return mode == HaloMode::Recompute ? "recompute" : "cache";
}

const char* to_string(BufferRole role) {
  switch (role) {
    case BufferRole::Input:
      return "input";
    case BufferRole::Intermediate:
      return "intermediate";
    case BufferRole::Output:
      return "output";
    case BufferRole::Weights:
      return "weights";
    case BufferRole::Accumulator:
      return "accumulator";
  }
  return "?";
}

const char* to_string(Objective objective) {
  switch (objective) {
    case Objective::Bytes:
      return "bytes";
    case Objective::Latency:
      return "latency";
    case Objective::Energy:
      return "energy";
    case Objective::Edp:
      return "edp";
  }
  return "?";
}

Result<GroupSchedule> plan_prefetched(const Net& net, const Machine& machine,
                                      const GroupSchedule& previous, const GroupSchedule& next,
                                      const PlanOptions& options) {
  if (previous.dram_view || next.dram_view) return fail("prefetch: a DRAM view group");
  if (next.prologue_weight_cycles <= 0) return fail("prefetch: no prologue weights");
  // The previous group's bytes, merged per scratchpad, pinned at step -1.
  std::vector<AllocRequest> occupied;
  {
    std::vector<std::pair<int, Interval>> ranges;
    for (const auto& b : previous.buffers)
      if (b.size_bytes > 0) ranges.push_back({b.scratchpad, {b.offset, b.offset + b.size_bytes}});
    std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.b < b.second.b;
    });
    for (size_t i = 0; i < ranges.size();) {
      const int pad = ranges[i].first;
      Interval r = ranges[i].second;
      size_t j = i + 1;
      for (; j < ranges.size() && ranges[j].first == pad && ranges[j].second.b <= r.e; ++j)
        r.e = std::max(r.e, ranges[j].second.e);
      AllocRequest pin;
      pin.size_bytes = r.size();
      pin.first_step = pin.last_step = -1;
      pin.scratchpad = pad;
      pin.fixed_offset = r.b;
      occupied.push_back(pin);
      i = j;
    }
  }
  PlanOptions with = options;
  with.prefetch_occupied = &occupied;
  auto planned = evaluate_mapping(net, machine, next.ops, mapping_of(next), with);
  if (!planned.ok()) return fail("prefetch: " + planned.reason());
  GroupSchedule gs = std::move(planned).value();
  gs.prefetched = true;
  // The prefetch's loads and the tail's stores run on two engines over one DRAM. Where all
  // their bursts fit the request slots at once (cloud-large's 256 slots against a few small
  // DMAs), neither waits for a slot: together they take the longer stream, or the bus's time
  // for both where that is longer. Where they do not, they share the slots: one after the
  // other.
  const int64_t bursts = bursts_covering(0, gs.prologue_weight_bytes, machine.burst_bytes) +
                         bursts_covering(0, previous.tail_dma_bytes, machine.burst_bytes);
  const int64_t together =
      bursts <= machine.max_outstanding
          ? std::max(
                {gs.prologue_weight_cycles, previous.tail_dma_cycles,
                 dma_cycles_for_bytes(machine, gs.prologue_weight_bytes + previous.tail_dma_bytes)})
          : gs.prologue_weight_cycles + previous.tail_dma_cycles;
  gs.prefetch_wait_cycles = std::max<int64_t>(0, together - previous.tail_cycles);
  gs.cycles += gs.prefetch_wait_cycles;
  return gs;
}

bool better(const GroupSchedule& a, const GroupSchedule& b, Objective objective) {
  if (objective == Objective::Bytes) {
    if (a.traffic.total() != b.traffic.total()) return a.traffic.total() < b.traffic.total();
    return a.cycles < b.cycles;
  }
  if (a.cycles != b.cycles) return a.cycles < b.cycles;
  return a.traffic.total() < b.traffic.total();
}

int64_t prefetch_saving_bound(const Net& net, const Machine& machine, const std::vector<int>& ops) {
  int64_t cycles = 0;
  for (int op : ops) {
    const Op& o = net.op(op);
    cycles += dma_cycles_for_bytes(machine, o.weight_bytes + o.requant_table_bytes);
  }
  return cycles;
}

GroupBound group_lower_bound(const Net& net, const Machine& machine, const std::vector<int>& ops) {
  GroupBound bound;
  if (ops.size() == 1 &&
      (net.op(ops[0]).kind == OpKind::Reshape || net.op(ops[0]).kind == OpKind::Concat ||
       net.op(ops[0]).kind == OpKind::Slice)) {
    return bound;  // possibly a DRAM view: free
  }
  const GroupInfo g = describe(net, ops);
  // One tile: each input is read only where the outputs need it; more tiles only re-read
  // halos, caching never reads a byte twice. Not where a window skips rows or columns (a
  // strided 1x1 conv): tiles then leave out rows one tile's hull reads, so inputs count 0.
  const TileGeometry one = tile_group(net, g, Mapping{});
  const bool skips = skips_rows_or_columns(net, ops);
  int64_t read = 0, written = 0, macs = 0;
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if (g.is_input[l] && !skips) read += one.need[l].elements() * net.activation_bytes;
    if (g.stored[l]) written += net.tensor_bytes(g.tensors[l]);
  }
  for (int op : ops) {
    read += net.op(op).weight_bytes + net.op(op).requant_table_bytes;
    macs += net.op(op).macs;
  }
  bound.bytes = read + written;
  const auto dram_cycles = static_cast<int64_t>(static_cast<double>(std::max(read, written)) /
                                                machine.dram_bytes_per_cycle);
  bound.cycles = std::max(macs / machine.macs_per_cycle(), dram_cycles);
  return bound;
}

void finalize_schedule(const Net& net, const Machine& machine, Schedule& schedule) {
  schedule.traffic = {};
  schedule.cycles = 0;
  for (const auto& g : schedule.groups) {
    schedule.traffic += g.traffic;
    schedule.cycles += g.cycles;
  }
  schedule.macs = net.total_macs();
  schedule.compulsory_bytes =
      net.model_weight_bytes() + net.total_requant_table_bytes() + net.io_bytes();
  const int64_t compute_bound = ceil_div(schedule.macs, machine.macs_per_cycle());
  const auto memory_bound = static_cast<int64_t>(
      static_cast<double>(schedule.compulsory_bytes) / machine.dram_bytes_per_cycle + 0.999999);
  schedule.roofline_cycles = std::max(compute_bound, memory_bound);
  const BarrierBound barrier = barrier_bound(net, machine);
  schedule.lower_bound_cycles = std::max(schedule.roofline_cycles, barrier.cycles);
  const bool barrier_wins = barrier.cycles > schedule.roofline_cycles;
  schedule.lower_bound_barrier = barrier_wins ? net.op(barrier.barrier).name : "";
  schedule.lower_bound_tensor = barrier_wins ? net.tensor(barrier.tensor).name : "";
}

}  // namespace tessel::sched
