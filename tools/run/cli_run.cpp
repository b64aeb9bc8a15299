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
#include <optional>
#include <string>
#include <vector>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/policy.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"
#include "support/version.hpp"
#include "tools/run/pipeline.hpp"
#include "tools/run/workers.hpp"

namespace tessel::pipeline {
namespace {

struct RunArgs {
  std::string model = "resnet18";
  zoo::ZooOptions zoo;  ///< --seq, --layers, --kv-length (0: the model's default)
  std::string hw = default_hw_config_path();
  std::string out = "out/run";
  std::string quant;
  std::vector<std::string> policies;
  std::string objective = "bytes";
  std::uint64_t input_seed = 0;
  bool timing_only = false;
  std::size_t jobs = 0;  ///< 0: one per core
};

double mb(std::int64_t bytes) {
  return static_cast<double>(bytes) / 1e6;
}

/// DRAM bytes read for data (weights, tables, activations): instruction fetch excluded.
std::int64_t data_read_bytes(const sim::SimReport& report) {
  return static_cast<std::int64_t>(
      report.dram.read_bytes() -
      report.dram.read_bytes_by_kind[static_cast<std::size_t>(sim::TrafficKind::kInstructions)]);
}

/// The report.json row of one policy (its speedup vs layerwise is filled in by the caller).
nlohmann::json policy_json(const PolicyResult& r, const HwConfig& config) {
  const auto& s = r.scheduled.schedule;
  const auto& p = s.traffic;
  const double cycles = static_cast<double>(r.report.cycles);
  nlohmann::json j;
  j["policy"] = r.policy;
  j["objective"] = s.objective;
  j["groups"] = r.compiled.groups.size();
  j["instructions"] = r.compiled.program.instructions.size();
  j["cycles"] = r.report.cycles;
  j["predicted_cycles"] = s.cycles;
  j["ms"] = cycles / (config.clock_mhz * 1e3);
  j["x_roofline"] = cycles / static_cast<double>(std::max<std::int64_t>(s.roofline_cycles, 1));
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
                               {"activations_written", p.activations_written},
                               {"instructions_read", s.instruction_fetch_bytes.value_or(0)}};
  j["x_compulsory"] = static_cast<double>(data_read_bytes(r.report) +
                                          static_cast<std::int64_t>(r.report.dram.write_bytes())) /
                      static_cast<double>(std::max<std::int64_t>(s.compulsory_bytes, 1));
  j["mac_utilisation"] = r.report.mac_utilisation;
  if (r.report.energy) {  // the simulator's counts x the config's energy table (docs/energy.md)
    const auto& e = *r.report.energy;
    j["energy_pj"] = {{"mac", e.mac_pj},   {"sram", e.sram_pj},       {"vector", e.vector_pj},
                      {"dram", e.dram_pj}, {"leakage", e.leakage_pj}, {"total", e.total_pj()}};
    j["edp_pj_s"] = e.edp_pj_s();
    j["area_mm2"] = e.area_mm2;
    // The schedule's prediction of the same, instruction fetch included (docs/energy.md).
    const auto predicted = sched::predict_energy(s, r.scheduled.net, config).total;
    j["predicted_energy_pj"] = {{"mac", predicted.mac_pj},         {"sram", predicted.sram_pj},
                                {"vector", predicted.vector_pj},   {"dram", predicted.dram_pj},
                                {"leakage", predicted.leakage_pj}, {"total", predicted.total_pj()}};
  }
  if (r.bit_exact) j["bit_exact"] = *r.bit_exact;
  if (!r.mismatch.empty()) j["mismatch"] = r.mismatch;
  j["seconds"] = {{"schedule", r.schedule_seconds},
                  {"compile", r.compile_seconds},
                  {"simulate", r.simulate_seconds}};
  return j;
}

/// The simulated energy by component per policy, in microjoules (docs/energy.md).
void print_energy_table(const std::vector<nlohmann::json>& rows) {
  std::printf("\n%-13s %9s %9s %9s %9s %9s %9s %11s\n", "energy uJ", "mac", "sram", "vector",
              "dram", "leakage", "total", "EDP uJ*ms");
  for (const auto& j : rows) {
    if (!j.contains("energy_pj")) continue;
    const auto& e = j["energy_pj"];
    const auto uj = [&e](const char* key) { return e[key].get<double>() * 1e-6; };
    std::printf("%-13s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %11.4g\n",
                j["policy"].get<std::string>().c_str(), uj("mac"), uj("sram"), uj("vector"),
                uj("dram"), uj("leakage"), uj("total"), j["edp_pj_s"].get<double>() * 1e-3);
  }
}

/// What `tessel run` keeps of one policy's run: {"row": report row, "compulsory_bytes",
/// "roofline_cycles", "lower_bound_cycles", "macs"} or {"error": reason}. JSON so that a forked
/// worker can send it back as text; numbers round-trip exactly, so the table is the same either
/// way.
nlohmann::json summarize(const Result<PolicyResult>& r, const HwConfig& config) {
  if (!r.ok()) return {{"error", r.reason()}};
  const auto& s = r.value().scheduled.schedule;
  return {{"row", policy_json(r.value(), config)},
          {"compulsory_bytes", s.compulsory_bytes},
          {"roofline_cycles", s.roofline_cycles},
          {"lower_bound_cycles", s.lower_bound_cycles},
          {"macs", s.macs}};
}

bool mismatched(const nlohmann::json& summary) {
  return summary.contains("row") && summary["row"].value("bit_exact", true) == false;
}

/// Every policy's summary, in `policies` order, policy i run on models[i]. With jobs > 1 each
/// policy runs in a forked worker (a process, as SystemC allows one simulation at a time per
/// process), at most `jobs` at once; the models were prepared before the fork. A policy whose
/// outputs differ is run again here to name the first wrong tensor, which needs the golden
/// executor (OpenMP).
std::vector<nlohmann::json> run_policies(const std::vector<const PreparedModel*>& models,
                                         const HwConfig& config,
                                         const std::vector<std::string>& policies,
                                         const RunOptions& options, std::size_t jobs) {
  const auto run_one = [&](std::size_t i, bool in_worker) {
    RunOptions o = options;
    o.diagnose_mismatch = !in_worker;
    return summarize(run_policy(*models[i], config, policies[i], o), config);
  };
  std::vector<nlohmann::json> summaries(policies.size());
  if (jobs <= 1 || policies.size() <= 1) {
    for (std::size_t i = 0; i < policies.size(); ++i) summaries[i] = run_one(i, false);
    return summaries;
  }
  const auto outcomes = run_in_workers(policies.size(), jobs, [&](std::size_t i) {
    return tessel::json_text(run_one(i, true), -1);
  });
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const std::string where = policies[i] + ": worker: ";
    if (!outcomes[i].ok) {
      summaries[i] = {{"error", where + outcomes[i].error}};
      continue;
    }
    summaries[i] = nlohmann::json::parse(outcomes[i].reply, nullptr, false);
    if (summaries[i].is_discarded() || !summaries[i].is_object() ||
        !(summaries[i].contains("row") || summaries[i].contains("error")))
      summaries[i] = {
          {"error", where + "unreadable reply '" + outcomes[i].reply.substr(0, 200) + "'"}};
    else if (mismatched(summaries[i]))
      summaries[i] = run_one(i, false);
  }
  return summaries;
}

int run(const RunArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const sched::Objective objective = sched::objective_option(args.objective);
  const std::string hw_path = resolve_hw_config(args.hw);
  const HwConfig config = load_hw_config(hw_path);
  zoo::LoadOptions load;
  load.zoo = args.zoo;
  const ir::Graph graph = zoo::load_model(args.model, load);
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
  // layerwise compiles BatchNorm unfolded into depthwise convs (passes::graph_for_policy), and
  // optimal pools before the Concats they alone read (prepare_model's pools_before_concat, after
  // quantizing): each its own quantized graph and golden outputs, prepared once when a policy asks
  // for it. A form that does not change the model (a net without such pools) shares the folded
  // model.
  std::optional<PreparedModel> unfolded, pooled;
  const auto model_for = [&](const std::string& policy) -> Result<const PreparedModel*> {
    const bool depthwise =
        passes::batchnorm_lowering_for_policy(policy) == passes::BatchNormLowering::Depthwise;
    const bool pools = passes::pools_before_concat_for_policy(policy) &&
                       passes::pools_before_concat_applies(graph);
    if (!depthwise && !pools) return &model.value();
    std::optional<PreparedModel>& own = depthwise ? unfolded : pooled;
    if (!own) {
      auto lowered = passes::graph_for_policy(graph, policy);
      if (!lowered.ok()) return lowered.failure();
      auto prepared = prepare_model(lowered.value(), qconfig, args.input_seed, pools);
      if (!prepared.ok()) return prepared.failure();
      own = std::move(prepared.value());
    }
    return &*own;
  };
  std::vector<const PreparedModel*> models;
  for (const std::string& policy : policies) {
    auto m = model_for(policy);
    if (!m.ok()) {
      std::cerr << "error: " << args.model << " (" << policy << "): " << m.reason() << '\n';
      return 1;
    }
    models.push_back(m.value());
  }
  std::printf("%s on %s (%s), %s, objective %s; quantize %.1f s, golden executor %.1f s\n",
              args.model.c_str(), config.name.c_str(), content_hash(config).c_str(),
              args.timing_only ? "timing-only" : "full functional + cycle simulation",
              args.objective.c_str(), model.value().quantize_seconds, model.value().golden_seconds);

  RunOptions options;
  options.timing_only = args.timing_only;
  options.objective = objective;
  const std::size_t jobs = args.jobs > 0 ? args.jobs : available_cores();
  const std::vector<nlohmann::json> summaries =
      run_policies(models, config, policies, options, jobs);

  std::vector<nlohmann::json> rows;  // the policies that ran, in order
  std::vector<std::pair<std::string, std::string>> failures;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    if (summaries[i].contains("error"))
      failures.emplace_back(policies[i], summaries[i]["error"].get<std::string>());
    else
      rows.push_back(summaries[i]["row"]);
  }

  double layerwise_cycles = 0;
  for (const auto& row : rows)
    if (row["policy"] == "layerwise") layerwise_cycles = row["cycles"].get<double>();
  const nlohmann::json* best = nullptr;
  for (auto& row : rows) {
    // Without a layerwise row there is no baseline: null in the JSON, "n/a" in the table.
    row["speedup_vs_layerwise"] =
        layerwise_cycles > 0 ? nlohmann::json(layerwise_cycles / row["cycles"].get<double>())
                             : nlohmann::json(nullptr);
    if (best == nullptr ||
        row["cycles"].get<std::uint64_t>() < (*best)["cycles"].get<std::uint64_t>())
      best = &row;
  }

  std::printf("\n%-13s %9s %9s %8s %12s %9s %8s %8s %9s\n", "policy", "DRAM rd", "DRAM wr",
              "x compul", "cycles", "ms", "x roof", "speedup", "bit-exact");
  std::printf("%-13s %9s %9s %8s %12s %9s %8s %8s %9s\n", "", "MB", "MB", "", "", "", "", "vs lw",
              "");
  nlohmann::json report;
  report["model"] = args.model;
  // The zoo options that shape the model, so that a figure is reproducible from its JSON.
  report["model_options"] = {{"batch", args.zoo.batch},
                             {"seq", args.zoo.sequence},
                             {"layers", args.zoo.layers},
                             {"kv_length", args.zoo.kv_length}};
  report["config"] = {{"name", config.name}, {"path", hw_path}, {"hash", content_hash(config)}};
  report["tool_version"] = version();
  report["mode"] = args.timing_only ? "timing-only" : "full";
  report["objective"] = args.objective;
  report["policies"] = nlohmann::json::array();
  for (const auto& summary : summaries) {
    if (!summary.contains("row")) continue;
    report["compulsory_bytes"] = summary["compulsory_bytes"];
    report["roofline_cycles"] = summary["roofline_cycles"];
    report["lower_bound_cycles"] = summary["lower_bound_cycles"];
    report["macs"] = summary["macs"];
  }
  for (const auto& j : rows) {
    report["policies"].push_back(j);
    const std::string exact = !j.contains("bit_exact")     ? "n/a"
                              : j["bit_exact"].get<bool>() ? "yes"
                                                           : "NO";
    char speedup[32] = "n/a";
    if (!j["speedup_vs_layerwise"].is_null())
      std::snprintf(speedup, sizeof speedup, "%.2f", j["speedup_vs_layerwise"].get<double>());
    std::printf("%-13s %9.3f %9.3f %8.2f %12llu %9.3f %8.2f %8s %9s\n",
                j["policy"].get<std::string>().c_str(),
                mb(j["dram_bytes"]["read"].get<std::int64_t>()),
                mb(j["dram_bytes"]["write"].get<std::int64_t>()), j["x_compulsory"].get<double>(),
                static_cast<unsigned long long>(j["cycles"].get<std::uint64_t>()),
                j["ms"].get<double>(), j["x_roofline"].get<double>(), speedup, exact.c_str());
  }
  print_energy_table(rows);
  for (const auto& [policy, reason] : failures) {
    std::printf("%-13s failed: %s\n", policy.c_str(), reason.c_str());
    report["failures"].push_back({{"policy", policy}, {"error", reason}});
  }
  bool all_exact = failures.empty();
  for (const auto& j : rows)
    if (j.contains("bit_exact") && !j["bit_exact"].get<bool>()) {
      all_exact = false;
      std::printf("%s: %s\n", j["policy"].get<std::string>().c_str(),
                  j.value("mismatch", std::string()).c_str());
    }

  files::make_directory(args.out);
  const std::filesystem::path out(args.out);
  if (best != nullptr) {
    // The best policy's timeline: rerun timing-only (same cycles) with the trace on.
    const std::string best_policy = (*best)["policy"].get<std::string>();
    RunOptions traced;
    traced.timing_only = true;
    traced.objective = objective;
    traced.trace_path = (out / "trace.json").string();
    auto t = run_policy(
        *models[static_cast<std::size_t>(std::find(policies.begin(), policies.end(), best_policy) -
                                         policies.begin())],
        config, best_policy, traced);
    if (t.ok()) {
      report["best_policy"] = best_policy;
      report["trace"] = traced.trace_path;
      std::printf("\nbest: %s; trace %s (open in https://ui.perfetto.dev)\n", best_policy.c_str(),
                  traced.trace_path.c_str());
    } else {
      std::printf("trace of %s failed: %s\n", best_policy.c_str(), t.reason().c_str());
    }
  }
  report["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  files::write_file((out / "report.json").string(), json_text(report, 2) + "\n");
  std::printf("wrote %s (%.1f s)\n", (out / "report.json").string().c_str(),
              report["seconds"].get<double>());
  return all_exact ? 0 : 1;
}

cli::Runner setup(CLI::App& command) {
  auto args = std::make_shared<RunArgs>();
  command.add_option("-m,--model", args->model, "Zoo model name or model file")
      ->capture_default_str();
  command.add_option("--seq", args->zoo.sequence, "Tokens of a transformer zoo model (0: default)")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--layers", args->zoo.layers,
                  "Layers of a transformer stack zoo model (bert_base, gpt2*, vit_b_16; 0: "
                  "all 12)")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--batch", args->zoo.batch,
                  "Batch of a zoo model (a transformer: sequences sharing the weights)")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--kv-length", args->zoo.kv_length,
                  "KV cache length of a decode zoo model (0: its default)")
      ->check(CLI::NonNegativeNumber);
  cli::add_hw_option(command, args->hw);
  command.add_option("-o,--out", args->out, "Folder for report.json and trace.json")
      ->capture_default_str();
  command.add_option("--quant", args->quant,
                     "Quantization YAML (default: every default, bits from the config's matrix)");
  command.add_option("-p,--policy", args->policies, "Policies to run (default: every policy)");
  command
      .add_option("--objective", args->objective,
                  "What optimal (and opfusion) minimise: " + sched::objective_names() +
                      " (docs/scheduler.md, docs/energy.md)")
      ->capture_default_str();
  command.add_option("--input-seed", args->input_seed, "Seed of the default network input")
      ->capture_default_str();
  command.add_flag("--timing-only", args->timing_only,
                   "Simulate time only (no data, no bit-exactness check)");
  command.add_option("-j,--jobs", args->jobs,
                     "Policies run at once, each in its own process (default: one per core)");
  return [args] { return run(*args); };
}

const cli::Registration kRun{
    {"run", "The main job: compile and simulate a model under every policy, one table", setup}};

}  // namespace
}  // namespace tessel::pipeline
