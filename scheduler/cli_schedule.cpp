// `tessel schedule`: schedule a model on a hardware config with a policy; table and JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/energy_objective.hpp"
#include "scheduler/schedule_json.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"

namespace tessel::sched {
namespace {

// The energy and EDP objectives explain their choice against the bytes and latency schedules of
// the same policy (docs/energy.md, "Optimising energy"): one row per objective.
nlohmann::ordered_json objective_comparison(const ir::Graph& graph, const HwConfig& config,
                                            const std::string& policy, Objective chosen,
                                            const ScheduleEnergy& chosen_energy,
                                            const Schedule& chosen_schedule,
                                            const MapSpaceFeatures& features) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  auto row = [&](Objective objective, const ScheduleEnergy& e, const Schedule& s) {
    rows.push_back({{"objective", objective_name(objective)},
                    {"energy_pj", e.total.total_pj()},
                    {"dram_pj", e.total.dram_pj},
                    {"sram_pj", e.total.sram_pj},
                    {"mac_pj", e.total.mac_pj},
                    {"cycles", s.cycles},
                    {"dram_bytes", s.traffic.total()},
                    {"edp_pj_s", e.total.edp_pj_s()},
                    {"groups", s.groups.size()}});
  };
  row(chosen, chosen_energy, chosen_schedule);
  for (Objective other : {Objective::Bytes, Objective::Latency}) {
    auto r = schedule_graph(graph, config, policy, other, features);
    if (!r.ok()) continue;
    add_predicted_fetch(r.value());
    row(other, predict_energy(r.value().schedule, r.value().net, config), r.value().schedule);
  }
  return rows;
}

// `--mapping F`: the schedule JSON; errors name the file.
Result<nlohmann::json> read_mapping_file(const std::string& path) {
  try {
    return nlohmann::json::parse(files::read_file(path, 256 * files::kMiB));
  } catch (const nlohmann::json::exception& e) {
    return fail(path + ": " + e.what());
  }
}

// The policy whose graph a mapping file's schedule was made on (its "policy"; `fallback` when it
// names none, and schedule_graph_from_mappings then names what is missing).
std::string mapping_policy(const nlohmann::json& json, const std::string& fallback) {
  if (json.is_object() && json.contains("policy") && json["policy"].is_string())
    return json["policy"].get<std::string>();
  return fallback;
}

cli::Runner setup_schedule(CLI::App& command) {
  struct Options {
    std::string model, hw = "npc19-deepfusion", policy = "fusion+reuse", objective = "bytes", json,
                       mapping;
    bool quiet = false, no_weight_sweep = false, prefetch = false, no_prefetch = false,
         no_s2d_stem = false, no_fold_activations = false, tiles_2d = true;
    int search_depth_bytes = -1, search_depth_latency = -1;
  };
  auto o = std::make_shared<Options>();
  cli::add_model_option(command, o->model);
  cli::add_hw_option(command, o->hw);
  command
      .add_option("-p,--policy", o->policy,
                  "layerwise | opfusion | fusion | fusion+reuse | optimal")
      ->capture_default_str();
  command
      .add_option("--objective", o->objective,
                  objective_names() + " (optimal, opfusion; docs/energy.md)")
      ->capture_default_str();
  command.add_option("--json", o->json, "Write the schedule as JSON to this file ('-': stdout)");
  command.add_option("--mapping", o->mapping,
                     "Cost and check the explicit mappings of this schedule JSON (written by "
                     "--json or by hand) instead of searching; policy, objective and map space "
                     "come from it (docs/scheduler.md \"The explicit mapping\")");
  command.add_flag("-q,--quiet", o->quiet, "No table");
  command.add_flag("--no-weight-sweep", o->no_weight_sweep,
                   "optimal: leave weight sweeps out of the map space (docs/scheduler.md)");
  command.add_flag("--2d-tiles,!--no-2d-tiles", o->tiles_2d,
                   "optimal, opfusion, layerwise: column tiles at every row-tile count (the "
                   "default; --no-2d-tiles: only once tiles are one row; docs/scheduler.md "
                   "\"2D tiles\")");
  command.add_flag("--no-s2d-stem", o->no_s2d_stem,
                   "every policy: run the first stride-2 conv on the stored input, not its "
                   "space-to-depth view (docs/scheduler.md)");
  command.add_flag("--no-fold-activations", o->no_fold_activations,
                   "every policy but layerwise: run each ReLU/Clip as a vector pass of its own "
                   "instead of in its producer's output clamp (docs/scheduler.md \"Activation "
                   "folding\")");
  command
      .add_option("--search-depth-bytes", o->search_depth_bytes,
                  "tilings each group's search tries past the first that fits, objective bytes "
                  "(-1: all; docs/scheduler.md \"Search speed\")")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  command
      .add_option("--search-depth-latency", o->search_depth_latency,
                  "the same for objective latency (-1: all)")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  auto* prefetch =
      command.add_flag("--prefetch", o->prefetch,
                       "optimal: load each group's first weights during the previous group's tail");
  command
      .add_flag("--no-prefetch", o->no_prefetch,
                "optimal: no cross-group weight prefetch (the schedules of session 5)")
      ->excludes(prefetch);
  return [o]() {
    if (o->json != "-")
      files::require_output_distinct(o->json, {o->model, resolve_hw_config(o->hw)});
    const HwConfig config = load_hw_config(resolve_hw_config(o->hw));
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // scheduling needs shapes only
    nlohmann::json mapping;
    if (!o->mapping.empty()) {
      auto read = read_mapping_file(o->mapping);
      if (!read.ok()) {
        std::cerr << "error: " << read.reason() << '\n';
        return 1;
      }
      mapping = std::move(read.value());
    }
    const std::string policy = mapping_policy(mapping, o->policy);
    // The graph the policy compiles (`tessel run`, `tessel compile`): BatchNorm lowered as the
    // policy says, and the fusions that give an export's ops the accelerator's kinds.
    auto prepared = passes::graph_for_policy(zoo::load_model(o->model, load), policy);
    if (!prepared.ok()) {
      std::cerr << "error: " << o->model << ": " << prepared.reason() << '\n';
      return 1;
    }
    const ir::Graph& graph = prepared.value();
    const Objective objective = objective_option(o->objective);
    MapSpaceFeatures features;
    features.weight_sweep = !o->no_weight_sweep;
    features.space_to_depth_stem = !o->no_s2d_stem;
    features.fold_activations = !o->no_fold_activations;
    features.column_tiles_every_row = o->tiles_2d;
    features.search_depth_bytes = o->search_depth_bytes;
    features.search_depth_latency = o->search_depth_latency;
    if (o->prefetch) features.prefetch = true;
    if (o->no_prefetch) features.prefetch = false;
    auto result = o->mapping.empty() ? schedule_graph(graph, config, o->policy, objective, features)
                                     : schedule_graph_from_mappings(graph, config, mapping);
    if (!result.ok() && !o->mapping.empty()) result = fail(o->mapping + ": " + result.reason());
    if (!result.ok()) {
      std::cerr << "error: " << result.reason() << '\n';
      return 1;
    }
    const std::string no_fetch = add_predicted_fetch(result.value());
    const Schedule& schedule = result.value().schedule;
    const ScheduleEnergy energy = predict_energy(schedule, result.value().net, config);
    const EnergyBreakdown& e = energy.total;
    if (!o->quiet && o->json != "-") {
      std::fputs(format_table(result.value()).c_str(), stdout);
      if (schedule.instruction_fetch_bytes) {
        const auto fetch = *schedule.instruction_fetch_bytes;
        const auto total = schedule.traffic.total() + fetch;
        std::printf(
            "instruction fetch %lld B predicted (the program's %lld instructions); DRAM "
            "total with fetch %lld B (fetch %.2f%%)\n",
            static_cast<long long>(fetch), static_cast<long long>(fetch / isa::kInstructionBytes),
            static_cast<long long>(total),
            100.0 * static_cast<double>(fetch) / static_cast<double>(total));
      } else {
        std::printf("instruction fetch not predicted: %s\n", no_fetch.c_str());
      }
      std::printf(
          "energy %.4g pJ predicted (mac %.4g, sram %.4g, vector %.4g, dram %.4g, leakage "
          "%.4g), EDP %.4g pJ*s, area %.4f mm^2\n",
          e.total_pj(), e.mac_pj, e.sram_pj, e.vector_pj, e.dram_pj, e.leakage_pj, e.edp_pj_s(),
          e.area_mm2);
    }
    nlohmann::ordered_json comparison;
    if (is_energy_objective(objective) && o->mapping.empty()) {
      comparison = objective_comparison(graph, config, policy, objective, energy,
                                        result.value().schedule, features);
      if (!o->quiet && o->json != "-") {
        std::printf(
            "objective %s: the least predicted %s of the policy's map space; against the "
            "other objectives' schedules:\n",
            objective_name(objective),
            objective == Objective::Energy ? "energy" : "energy x delay");
        for (const auto& r : comparison)
          std::printf(
              "  %-8s energy %.6g uJ (dram %.4g, sram %.4g, mac %.4g), %lld cycles, "
              "EDP %.4g pJ*s, %zu groups\n",
              r["objective"].get<std::string>().c_str(), r["energy_pj"].get<double>() * 1e-6,
              r["dram_pj"].get<double>() * 1e-6, r["sram_pj"].get<double>() * 1e-6,
              r["mac_pj"].get<double>() * 1e-6, static_cast<long long>(r["cycles"].get<int64_t>()),
              r["edp_pj_s"].get<double>(), r["groups"].get<size_t>());
      }
    }
    if (!o->json.empty()) {
      auto j = to_json(result.value().schedule, result.value().net, result.value().machine);
      add_predicted_energy(j, energy, config);
      if (!comparison.is_null()) j["objective_comparison"] = comparison;
      const auto text = tessel::json_text(j, 1) + "\n";
      if (o->json == "-") {
        std::cout << text;
      } else {
        files::write_file(o->json, text, {o->model, resolve_hw_config(o->hw)});
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
