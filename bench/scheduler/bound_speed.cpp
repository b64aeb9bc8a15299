// Seconds of the DRAM-bytes bound (scheduler/bytes_bound.hpp) on zoo models at 8 capacities
// (64 KiB .. 8 MiB), one thread, repeated; JSON on stdout. Not a test: bench/scheduler/README.md.
//   tessel_bound_speed [REPEATS] [MODEL...]   (default: 20 resnet50)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/from_ir.hpp"
#include "support/version.hpp"

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::vector<std::string> models;
  for (int i = 2; i < argc; ++i) models.emplace_back(argv[i]);
  if (models.empty()) models = {"resnet50"};
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  const sched::Machine machine = sched::machine_from_config(config);
  std::vector<int64_t> capacities;
  for (int64_t c = 64 << 10; c <= 8 << 20; c *= 2) capacities.push_back(c);
  std::printf(
      "{\"tool_version\": \"%s\", \"hw\": \"%s\", \"policy\": \"optimal\", "
      "\"capacities\": %zu, \"repeats\": %d, \"models\": [\n",
      version(), config.name.c_str(), capacities.size(), repeats);
  for (size_t m = 0; m < models.size(); ++m) {
    auto graph = zoo::build_model(models[m], {.with_weights = false});
    if (!graph.ok()) {
      std::fprintf(stderr, "error: %s\n", graph.reason().c_str());
      return 1;
    }
    auto net =
        sched::net_from_graph(graph.value(), machine, sched::NetForm::FoldedPoolsBeforeConcat);
    if (!net.ok()) {
      std::fprintf(stderr, "error: %s\n", net.reason().c_str());
      return 1;
    }
    std::vector<double> wall, cpu;
    int64_t checksum = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = cpu_seconds();
      const sched::BytesBoundModel model(net.value());
      for (int64_t c : capacities) checksum += model.at(sched::scale_scratchpads(machine, c)).bytes;
      cpu.push_back(cpu_seconds() - cpu_start);
      wall.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf(
        "  {\"model\": \"%s\", \"ops\": %d, \"wall_s_min\": %.6f, "
        "\"wall_s_median\": %.6f, \"cpu_s_median\": %.6f, \"bound_sum\": %lld}%s\n",
        models[m].c_str(), net.value().size(), wall.front(), wall[wall.size() / 2],
        cpu[cpu.size() / 2], static_cast<long long>(checksum / repeats),
        m + 1 < models.size() ? "," : "");
  }
  std::printf("]}\n");
  return 0;
}
