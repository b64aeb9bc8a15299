// `tessel schedule`: schedule a model on a hardware config with a policy; table and JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/schedule_json.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"

namespace tessel::sched {
namespace {

// "npc19-deepfusion" names configs/hw/npc19-deepfusion.yaml in the source tree; else a path.
std::string resolve_hw(const std::string& hw) {
  if (hw.find('/') != std::string::npos || hw.ends_with(".yaml")) return hw;
  return std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + hw + ".yaml";
}

void print_table(const ScheduledNet& result) {
  const Schedule& s = result.schedule;
  std::printf("%-4s %-28s %4s %5s %9s %-9s %3s %3s %12s %12s %12s\n", "grp", "first..last op",
              "ops", "tiles", "tile", "halo", "wr", "db", "dram_bytes", "cycles", "peak_bytes");
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const auto& g = s.groups[i];
    std::string span = result.net.op(g.ops.front()).name;
    if (g.ops.size() > 1) span += ".." + result.net.op(g.ops.back()).name;
    if (span.size() > 28) span = span.substr(0, 12) + "..." + span.substr(span.size() - 13);
    int64_t peak = 0;
    for (int64_t p : g.peak_bytes) peak += p;
    const std::string tile = g.dram_view
                                 ? "view"
                                 : std::to_string(g.tile_rows) + "x" + std::to_string(g.tile_cols) +
                                       "x" + std::to_string(g.tile_channels);
    std::printf("%-4zu %-28s %4zu %5lld %9s %-9s %3s %3s %12lld %12lld %12lld\n", i, span.c_str(),
                g.ops.size(), static_cast<long long>(g.tiles()), tile.c_str(), to_string(g.halo),
                g.weights_resident ? "y" : "n", g.double_buffered ? "y" : "n",
                static_cast<long long>(g.traffic.total()), static_cast<long long>(g.cycles),
                static_cast<long long>(peak));
  }
  std::printf(
      "\n%s on %s, policy %s (objective %s): %zu groups\n"
      "dram_bytes %lld (read %lld, write %lld; weights %lld, activations in %lld, out %lld)\n"
      "compulsory_bytes %lld (x%.3f)\ncycles %lld, roofline_cycles %lld (x%.3f)\nmacs %lld, "
      "search %.3f s\n",
      s.model.c_str(), s.config.c_str(), s.policy.c_str(), s.objective.c_str(), s.groups.size(),
      static_cast<long long>(s.traffic.total()), static_cast<long long>(s.traffic.read()),
      static_cast<long long>(s.traffic.write()), static_cast<long long>(s.traffic.weights_read),
      static_cast<long long>(s.traffic.activations_read),
      static_cast<long long>(s.traffic.activations_written),
      static_cast<long long>(s.compulsory_bytes),
      static_cast<double>(s.traffic.total()) / static_cast<double>(s.compulsory_bytes),
      static_cast<long long>(s.cycles), static_cast<long long>(s.roofline_cycles),
      static_cast<double>(s.cycles) / static_cast<double>(s.roofline_cycles),
      static_cast<long long>(s.macs), s.search_seconds);
}

cli::Runner setup_schedule(CLI::App& command) {
  struct Options {
    std::string model, hw = "npc19-deepfusion", policy = "fusion+reuse", objective = "bytes", json;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  command.add_option("-m,--model", o->model, "Zoo model name or model file (.onnx, .tir, .json)")
      ->required();
  command.add_option("--hw", o->hw, "Hardware config: a YAML path or a name in configs/hw/")
      ->capture_default_str();
  command
      .add_option("-p,--policy", o->policy,
                  "layerwise | opfusion | fusion | fusion+reuse | optimal")
      ->capture_default_str();
  command.add_option("--objective", o->objective, "bytes | latency (optimal, opfusion)")
      ->capture_default_str();
  command.add_option("--json", o->json, "Write the schedule as JSON to this file ('-': stdout)");
  command.add_flag("-q,--quiet", o->quiet, "No table");
  return [o]() {
    const HwConfig config = load_hw_config(resolve_hw(o->hw));
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // scheduling needs shapes only
    const ir::Graph graph = zoo::load_model(o->model, load);
    auto objective = parse_objective(o->objective);
    if (!objective.ok()) throw_input_error({"--objective", 0, 0}, "", objective.reason());
    auto result = schedule_graph(graph, config, o->policy, objective.value());
    if (!result.ok()) {
      std::cerr << "error: " << result.reason() << '\n';
      return 1;
    }
    if (!o->quiet && o->json != "-") print_table(result.value());
    if (!o->json.empty()) {
      const auto text = to_json(result.value().schedule, result.value().net).dump(1) + "\n";
      if (o->json == "-") {
        std::cout << text;
      } else {
        std::ofstream out(o->json);
        out << text;
        if (!out) {
          std::cerr << "error: cannot write " << o->json << '\n';
          return 1;
        }
      }
    }
    return 0;
  };
}

const cli::Registration kSchedule{
    {"schedule", "Fuse, tile and allocate a model on a hardware config (a policy)",
     setup_schedule}};

}  // namespace
}  // namespace tessel::sched
