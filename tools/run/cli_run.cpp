// `tessel run`, the main job: compile and simulate one model under every policy, one table.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/quant/config.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/policy.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/version.hpp"
#include "tools/run/pipeline.hpp"

namespace tessel::pipeline {
namespace {

struct RunArgs {
  std::string model = "resnet18";
  std::string hw = default_hw_config_path();
  std::string out = "out/run";
  std::string quant;
  std::vector<std::string> policies;
  std::uint64_t input_seed = 0;
  bool timing_only = false;
};

// "npc19-deepfusion" names configs/hw/npc19-deepfusion.yaml next to the default config.
std::string resolve_hw(const std::string& hw) {
  if (hw.find('/') != std::string::npos || hw.ends_with(".yaml")) return hw;
  return (std::filesystem::path(default_hw_config_path()).parent_path() / (hw + ".yaml")).string();
}

double mb(std::int64_t bytes) {
  return static_cast<double>(bytes) / 1e6;
}

/// DRAM bytes read for data (weights, tables, activations): instruction fetch excluded.
std::int64_t data_read_bytes(const sim::SimReport& report) {
  return static_cast<std::int64_t>(
      report.dram.read_bytes() -
      report.dram.read_bytes_by_kind[static_cast<std::size_t>(sim::TrafficKind::kInstructions)]);
}

nlohmann::json policy_json(const PolicyResult& r, const HwConfig& config, double layerwise_cycles) {
  const auto& s = r.scheduled.schedule;
  const auto& p = s.traffic;
  const double cycles = static_cast<double>(r.report.cycles);
  nlohmann::json j;
  j["policy"] = r.policy;
  j["groups"] = r.compiled.groups.size();
  j["instructions"] = r.compiled.program.instructions.size();
  j["cycles"] = r.report.cycles;
  j["predicted_cycles"] = s.cycles;
  j["ms"] = cycles / (config.clock_mhz * 1e3);
  j["x_roofline"] = cycles / static_cast<double>(std::max<std::int64_t>(s.roofline_cycles, 1));
  j["speedup_vs_layerwise"] = layerwise_cycles > 0 ? layerwise_cycles / cycles : 0.0;
  j["dram_bytes"] = {
      {"read", data_read_bytes(r.report)},
      {"write", r.report.dram.write_bytes()},
      {"weights_read", r.sim_weights_read()},
      {"activations_read", r.sim_activations_read()},
      {"activations_written", r.sim_activations_written()},
      {"requant_tables_read", r.compiled.traffic.requant_table_read},
      {"instructions_read",
       r.report.dram
           .read_bytes_by_kind[static_cast<std::size_t>(sim::TrafficKind::kInstructions)]}};
  j["predicted_dram_bytes"] = {{"weights_read", p.weights_read},
                               {"activations_read", p.activations_read},
                               {"activations_written", p.activations_written}};
  j["x_compulsory"] = static_cast<double>(data_read_bytes(r.report) +
                                          static_cast<std::int64_t>(r.report.dram.write_bytes())) /
                      static_cast<double>(std::max<std::int64_t>(s.compulsory_bytes, 1));
  j["mac_utilisation"] = r.report.mac_utilisation;
  if (r.bit_exact) j["bit_exact"] = *r.bit_exact;
  if (!r.mismatch.empty()) j["mismatch"] = r.mismatch;
  j["seconds"] = {{"schedule", r.schedule_seconds},
                  {"compile", r.compile_seconds},
                  {"simulate", r.simulate_seconds}};
  return j;
}

int run(const RunArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const std::string hw_path = resolve_hw(args.hw);
  const HwConfig config = load_hw_config(hw_path);
  const ir::Graph graph = zoo::load_model(args.model);
  quant::QuantConfig qconfig;
  if (!args.quant.empty()) {
    qconfig = quant::load_quant_config(args.quant);
  } else {
    qconfig.bits = config.matrix.input_bits;
  }
  std::vector<std::string> policies = args.policies;
  if (policies.empty())
    for (const auto& p : sched::policies()) policies.push_back(p.name);

  auto model = prepare_model(graph, qconfig, args.input_seed);
  if (!model.ok()) {
    std::cerr << "error: " << args.model << ": " << model.reason() << '\n';
    return 1;
  }
  std::printf("%s on %s (%s), %s; quantize %.1f s, golden executor %.1f s\n", args.model.c_str(),
              config.name.c_str(), content_hash(config).c_str(),
              args.timing_only ? "timing-only" : "full functional + cycle simulation",
              model.value().quantize_seconds, model.value().golden_seconds);

  RunOptions options;
  options.timing_only = args.timing_only;
  std::vector<PolicyResult> results;
  std::vector<std::pair<std::string, std::string>> failures;
  for (const std::string& policy : policies) {
    auto r = run_policy(model.value(), config, policy, options);
    if (!r.ok()) {
      failures.emplace_back(policy, r.reason());
      continue;
    }
    results.push_back(std::move(r.value()));
  }

  double layerwise_cycles = 0;
  for (const auto& r : results)
    if (r.policy == "layerwise") layerwise_cycles = static_cast<double>(r.report.cycles);
  const PolicyResult* best = nullptr;
  for (const auto& r : results)
    if (best == nullptr || r.report.cycles < best->report.cycles) best = &r;

  std::printf("\n%-13s %9s %9s %8s %12s %9s %8s %8s %9s\n", "policy", "DRAM rd", "DRAM wr",
              "x compul", "cycles", "ms", "x roof", "speedup", "bit-exact");
  std::printf("%-13s %9s %9s %8s %12s %9s %8s %8s %9s\n", "", "MB", "MB", "", "", "", "", "vs lw",
              "");
  nlohmann::json report;
  report["model"] = args.model;
  report["config"] = {{"name", config.name}, {"path", hw_path}, {"hash", content_hash(config)}};
  report["tool_version"] = version();
  report["mode"] = args.timing_only ? "timing-only" : "full";
  report["policies"] = nlohmann::json::array();
  for (const auto& r : results) {
    const nlohmann::json j = policy_json(r, config, layerwise_cycles);
    report["policies"].push_back(j);
    report["compulsory_bytes"] = r.scheduled.schedule.compulsory_bytes;
    report["roofline_cycles"] = r.scheduled.schedule.roofline_cycles;
    report["macs"] = r.scheduled.schedule.macs;
    const std::string exact = !r.bit_exact ? "n/a" : *r.bit_exact ? "yes" : "NO";
    std::printf("%-13s %9.3f %9.3f %8.2f %12llu %9.3f %8.2f %8.2f %9s\n", r.policy.c_str(),
                mb(data_read_bytes(r.report)),
                mb(static_cast<std::int64_t>(r.report.dram.write_bytes())),
                j["x_compulsory"].get<double>(), static_cast<unsigned long long>(r.report.cycles),
                j["ms"].get<double>(), j["x_roofline"].get<double>(),
                j["speedup_vs_layerwise"].get<double>(), exact.c_str());
  }
  for (const auto& [policy, reason] : failures) {
    std::printf("%-13s failed: %s\n", policy.c_str(), reason.c_str());
    report["failures"].push_back({{"policy", policy}, {"error", reason}});
  }
  bool all_exact = failures.empty();
  for (const auto& r : results)
    if (r.bit_exact && !*r.bit_exact) {
      all_exact = false;
      std::printf("%s: %s\n", r.policy.c_str(), r.mismatch.c_str());
    }

  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) throw_input_error({args.out, 0, 0}, "--out", "cannot create the folder: " + ec.message());
  const std::filesystem::path out(args.out);
  if (best != nullptr) {
    // The best policy's timeline: rerun timing-only (same cycles) with the trace on.
    RunOptions traced;
    traced.timing_only = true;
    traced.trace_path = (out / "trace.json").string();
    auto t = run_policy(model.value(), config, best->policy, traced);
    if (t.ok()) {
      report["best_policy"] = best->policy;
      report["trace"] = traced.trace_path;
      std::printf("\nbest: %s; trace %s (open in https://ui.perfetto.dev)\n", best->policy.c_str(),
                  traced.trace_path.c_str());
    } else {
      std::printf("trace of %s failed: %s\n", best->policy.c_str(), t.reason().c_str());
    }
  }
  report["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ofstream(out / "report.json") << report.dump(2) << '\n';
  std::printf("wrote %s (%.1f s)\n", (out / "report.json").string().c_str(),
              report["seconds"].get<double>());
  return all_exact ? 0 : 1;
}

cli::Runner setup(CLI::App& command) {
  auto args = std::make_shared<RunArgs>();
  command.add_option("-m,--model", args->model, "Zoo model name or model file")
      ->capture_default_str();
  command.add_option("--hw", args->hw, "Hardware config: a YAML path or a name in configs/hw/")
      ->capture_default_str();
  command.add_option("-o,--out", args->out, "Folder for report.json and trace.json")
      ->capture_default_str();
  command.add_option("--quant", args->quant,
                     "Quantization YAML (default: every default, bits from the config's matrix)");
  command.add_option("-p,--policy", args->policies, "Policies to run (default: every policy)");
  command.add_option("--input-seed", args->input_seed, "Seed of the default network input")
      ->capture_default_str();
  command.add_flag("--timing-only", args->timing_only,
                   "Simulate time only (no data, no bit-exactness check)");
  return [args] { return run(*args); };
}

const cli::Registration kRun{
    {"run", "The main job: compile and simulate a model under every policy, one table", setup}};

}  // namespace
}  // namespace tessel::pipeline
