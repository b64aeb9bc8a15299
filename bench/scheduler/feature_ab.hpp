// The side-by-side harness of the map-space benches (tessel_bound_stop, tessel_channel_parts):
// `optimal` with one MapSpaceFeatures switch on and off, per (model, capacity, objective) on
// npc19-deepfusion with its unified buffer scaled to each capacity, alternating which runs first
// in each round, CPU seconds as medians. JSON on stdout. Not a test: bench/scheduler/README.md.
//   BENCH [ROUNDS] [CAPACITIES] [MODEL...]
//   (default: 3 rounds, 256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB, the six zoo models)
#pragma once

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "support/units.hpp"
#include "support/version.hpp"

namespace tessel::bench {

/// One cell: the two schedules (switch on and off) and their median CPU seconds.
struct AbCell {
  std::string model, capacity;
  sched::Objective objective = sched::Objective::Bytes;
  Result<sched::Schedule> on = fail("not run"), off = fail("not run");
  double on_cpu_s = 0, off_cpu_s = 0;
};

inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (size_t b = 0, e; b <= list.size(); b = e + 1) {
    e = std::min(list.find(',', b), list.size());
    items.push_back(list.substr(b, e - b));
  }
  return items;
}

/// Runs the cells of argv ([ROUNDS] [CAPACITIES] [MODEL...]) with `set(features, on)` choosing
/// the switch, and prints {"tool_version", "hw", "policy", "rounds", "compared", "rows": [...],
/// "cpu_s_without", "cpu_s_with", `count_key`}. Each row holds model, capacity, objective and the
/// two CPU medians, then what `row` prints (fields, each after ", "); `row` returns whether the
/// cell counts (a schedule that differs, or is worse). Exit code: 0 when no cell counts, 1 when
/// one does or the set-up fails.
inline int run_feature_ab(int argc, char** argv, const char* compared, const char* count_key,
                          const std::function<void(sched::MapSpaceFeatures&, bool)>& set,
                          const std::function<bool(const AbCell&)>& row) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::vector<std::string> capacities =
      split_list(argc > 2 ? argv[2] : "256KiB,512KiB,768KiB,1MiB,2MiB,4MiB,8MiB");
  std::vector<std::string> models;
  for (int i = 3; i < argc; ++i) models.emplace_back(argv[i]);
  if (models.empty())
    models = {"vgg19", "googlenet", "inception_v3", "resnet18", "resnet50", "mobilenet_v2"};
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  std::printf(
      "{\"tool_version\": \"%s\", \"hw\": \"%s\", \"policy\": \"optimal\", \"rounds\": %d, "
      "\"compared\": \"%s\", \"rows\": [\n",
      version(), config.name.c_str(), rounds, compared);
  bool first_row = true;
  int counted = 0;
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
        AbCell cell{model, capacity, objective};
        std::vector<double> on_s, off_s;
        for (int r = 0; r < rounds; ++r) {
          for (bool on : {r % 2 == 0, r % 2 != 0}) {  // alternate which runs first
            sched::MapSpaceFeatures features;
            set(features, on);
            const double start = cpu_seconds();
            auto s = sched::run_policy(net.value(), machine, "optimal", objective, features);
            (on ? on_s : off_s).push_back(cpu_seconds() - start);
            (on ? cell.on : cell.off) = std::move(s);
          }
        }
        std::sort(on_s.begin(), on_s.end());
        std::sort(off_s.begin(), off_s.end());
        cell.on_cpu_s = on_s[on_s.size() / 2];
        cell.off_cpu_s = off_s[off_s.size() / 2];
        on_total += cell.on_cpu_s;
        off_total += cell.off_cpu_s;
        std::printf(
            "%s  {\"model\": \"%s\", \"capacity\": \"%s\", \"objective\": \"%s\", "
            "\"cpu_s_without\": %.4f, \"cpu_s_with\": %.4f",
            first_row ? "" : ",\n", model.c_str(), capacity.c_str(), sched::to_string(objective),
            cell.off_cpu_s, cell.on_cpu_s);
        counted += row(cell);
        std::printf("}");
        first_row = false;
      }
    }
  }
  std::printf("\n], \"cpu_s_without\": %.3f, \"cpu_s_with\": %.3f, \"%s\": %d}\n", off_total,
              on_total, count_key, counted);
  return counted == 0 ? 0 : 1;
}

}  // namespace tessel::bench
