// `optimal`'s search with channel part counts that are powers of two only and with the
// whole-block counts too (MapSpaceFeatures::block_channel_parts; docs/scheduler.md "Channel
// part counts"), side by side: per (model, capacity, objective), CPU seconds of each
// (alternating rounds), DRAM bytes and cycles of each. Exit 1 if any bytes-objective row moves
// more bytes with the larger map space. JSON on stdout. Not a test: bench/scheduler/README.md.
//   tessel_channel_parts [ROUNDS] [CAPACITIES] [MODEL...]
//   (default: 3 rounds, 256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB, the six zoo models)
#include <cstdio>

#include "bench/scheduler/feature_ab.hpp"

int main(int argc, char** argv) {
  using namespace tessel;
  return bench::run_feature_ab(
      argc, argv, "block_channel_parts", "rows_worse",
      [](sched::MapSpaceFeatures& f, bool on) { f.block_channel_parts = on; },
      [](const bench::AbCell& c) {
        const long long on_bytes = c.on.ok() ? c.on.value().traffic.total() : -1;
        const long long off_bytes = c.off.ok() ? c.off.value().traffic.total() : -1;
        const bool worse = (c.off.ok() && !c.on.ok()) ||
                           (c.on.ok() && c.off.ok() && c.objective == sched::Objective::Bytes &&
                            on_bytes > off_bytes);
        std::printf(
            ", \"dram_bytes_without\": %lld, \"dram_bytes_with\": %lld, \"cycles_without\": "
            "%lld, \"cycles_with\": %lld, \"worse\": %s",
            off_bytes, on_bytes, static_cast<long long>(c.off.ok() ? c.off.value().cycles : -1),
            static_cast<long long>(c.on.ok() ? c.on.value().cycles : -1), worse ? "true" : "false");
        return worse;
      });
}
