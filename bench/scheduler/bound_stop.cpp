// `optimal`'s search with and without the bytes bound's early stop (MapSpaceFeatures::
// bound_stop: groups the bound rules out are not planned, a group's search stops at its bytes
// floor), side by side: per (model, capacity, objective), CPU seconds of each, alternating
// rounds, and whether the two schedules are identical. JSON on stdout. Not a test:
// bench/scheduler/README.md.
//   tessel_bound_stop [ROUNDS] [CAPACITIES] [MODEL...]
//   (default: 3 rounds, 256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB, the six zoo models)
#include <cstdio>

#include "bench/scheduler/feature_ab.hpp"

namespace {

using namespace tessel;

/// Every choice and figure of two schedules equal (the search time aside).
bool same_schedule(const sched::Schedule& a, const sched::Schedule& b) {
  if (a.groups.size() != b.groups.size() || a.traffic.total() != b.traffic.total() ||
      a.cycles != b.cycles)
    return false;
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const sched::GroupSchedule& x = a.groups[i];
    const sched::GroupSchedule& y = b.groups[i];
    if (x.ops != y.ops || x.row_tiles != y.row_tiles || x.col_tiles != y.col_tiles ||
        x.channel_tiles != y.channel_tiles || x.halo != y.halo ||
        x.weights_resident != y.weights_resident || x.double_buffered != y.double_buffered ||
        x.weight_sweep != y.weight_sweep || x.op_slices != y.op_slices ||
        x.traffic.total() != y.traffic.total() || x.cycles != y.cycles)
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_feature_ab(
      argc, argv, "bound_stop", "schedules_differ",
      [](sched::MapSpaceFeatures& f, bool on) { f.bound_stop = on; },
      [](const bench::AbCell& c) {
        const bool both = c.on.ok() && c.off.ok();
        const bool same =
            both ? same_schedule(c.on.value(), c.off.value()) : c.on.ok() == c.off.ok();
        std::printf(", \"scheduled\": %s, \"identical\": %s, \"dram_bytes\": %lld",
                    both ? "true" : "false", same ? "true" : "false",
                    static_cast<long long>(c.on.ok() ? c.on.value().traffic.total() : -1));
        return !same;
      });
}
