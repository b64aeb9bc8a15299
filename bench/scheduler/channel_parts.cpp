// `optimal`'s search with channel part counts that are powers of two only and with the
// whole-block counts too (MapSpaceFeatures::block_channel_parts; docs/scheduler.md "Channel
// part counts"), side by side: per (model, capacity, objective), CPU seconds of each
// (alternating rounds), DRAM bytes and cycles of each. Exit 1 if any bytes-objective row moves
// more bytes with the larger map space. JSON on stdout. Not a test: bench/scheduler/README.md.
//   tessel_channel_parts [ROUNDS] [CAPACITIES] [MODEL...]
//   (default: 3 rounds, 256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB, the six zoo models)
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "support/units.hpp"
#include "support/version.hpp"

namespace {

using namespace tessel;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  for (size_t b = 0, e; b <= list.size(); b = e + 1) {
    e = std::min(list.find(',', b), list.size());
    items.push_back(list.substr(b, e - b));
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::vector<std::string> capacities =
      split(argc > 2 ? argv[2] : "256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB");
  std::vector<std::string> models;
  for (int i = 3; i < argc; ++i) models.emplace_back(argv[i]);
  if (models.empty())
    models = {"vgg19", "googlenet", "inception_v3", "resnet18", "resnet50", "mobilenet_v2"};
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  std::printf(
      "{\"tool_version\": \"%s\", \"hw\": \"%s\", \"policy\": \"optimal\", \"rounds\": %d, "
      "\"compared\": \"block_channel_parts\", "
      "\"rows\": [\n",
      version(), config.name.c_str(), rounds);
  bool first_row = true;
  int worse = 0;
  double on_total = 0, off_total = 0;
  for (const std::string& model : models) {
    auto graph = zoo::build_model(model, {.with_weights = false});
    if (!graph.ok()) {
      std::fprintf(stderr, "error: %s\n", graph.reason().c_str());
      return 1;
    }
    for (const std::string& capacity : capacities) {
      auto bytes = units::parse_size_bytes(capacity);
      if (!bytes.ok()) {
        std::fprintf(stderr, "error: capacity '%s': %s\n", capacity.c_str(),
                     bytes.reason().c_str());
        return 1;
      }
      const sched::Machine machine =
          sched::scale_scratchpads(sched::machine_from_config(config), bytes.value());
      auto net =
          sched::net_from_graph(graph.value(), machine, sched::NetForm::FoldedPoolsBeforeConcat);
      if (!net.ok()) {
        std::fprintf(stderr, "error: %s\n", net.reason().c_str());
        return 1;
      }
      for (sched::Objective objective : {sched::Objective::Bytes, sched::Objective::Latency}) {
        std::vector<double> on_s, off_s;
        Result<sched::Schedule> on = fail("not run"), off = fail("not run");
        for (int r = 0; r < rounds; ++r) {
          for (bool with : {r % 2 == 0, r % 2 != 0}) {  // alternate which runs first
            sched::MapSpaceFeatures features;
            features.block_channel_parts = with;
            const double start = cpu_seconds();
            auto s = sched::run_policy(net.value(), machine, "optimal", objective, features);
            (with ? on_s : off_s).push_back(cpu_seconds() - start);
            (with ? on : off) = std::move(s);
          }
        }
        std::sort(on_s.begin(), on_s.end());
        std::sort(off_s.begin(), off_s.end());
        const double on_median = on_s[on_s.size() / 2], off_median = off_s[off_s.size() / 2];
        const bool both = on.ok() && off.ok();
        const long long on_bytes = on.ok() ? on.value().traffic.total() : -1;
        const long long off_bytes = off.ok() ? off.value().traffic.total() : -1;
        const bool is_worse =
            (off.ok() && !on.ok()) ||
            (both && objective == sched::Objective::Bytes && on_bytes > off_bytes);
        worse += is_worse;
        on_total += on_median;
        off_total += off_median;
        std::printf(
            "%s  {\"model\": \"%s\", \"capacity\": \"%s\", \"objective\": \"%s\", "
            "\"cpu_s_without\": %.4f, \"cpu_s_with\": %.4f, \"dram_bytes_without\": %lld, "
            "\"dram_bytes_with\": %lld, \"cycles_without\": %lld, \"cycles_with\": %lld, "
            "\"worse\": %s}",
            first_row ? "" : ",\n", model.c_str(), capacity.c_str(), sched::to_string(objective),
            off_median, on_median, off_bytes, on_bytes,
            static_cast<long long>(off.ok() ? off.value().cycles : -1),
            static_cast<long long>(on.ok() ? on.value().cycles : -1), is_worse ? "true" : "false");
        first_row = false;
      }
    }
  }
  std::printf("\n], \"cpu_s_without\": %.3f, \"cpu_s_with\": %.3f, \"rows_worse\": %d}\n",
              off_total, on_total, worse);
  return worse == 0 ? 0 : 1;
}
