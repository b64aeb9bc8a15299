// `tessel bound`: the lower bound on DRAM bytes per on-chip capacity (the ski slope) of a model
// on a hardware config; table and JSON (docs/bounds.md, "Lower bounds: DRAM bytes per
// capacity").
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/units.hpp"
#include "support/version.hpp"

namespace tessel::sched {
namespace {

/// "64KiB,1MiB,786432" -> bytes, each > 0 (an InputError naming --capacities otherwise).
std::vector<int64_t> parse_capacities(const std::string& text) {
  std::vector<int64_t> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    auto bytes = units::parse_size_bytes(item);
    if (!bytes.ok())
      throw_input_error({"--capacities", 0, 0}, "", "capacity '" + item + "': " + bytes.reason());
    if (bytes.value() <= 0)
      throw_input_error({"--capacities", 0, 0}, "", "capacity '" + item + "' is not positive");
    out.push_back(bytes.value());
    begin = end + 1;
  }
  return out;
}

/// The config's own capacity (every scratchpad together) and 64 KiB .. 16 MiB doubling.
std::vector<int64_t> default_capacities(const Machine& machine) {
  int64_t own = 0;
  for (const auto& sp : machine.scratchpads) own += sp.size_bytes;
  std::vector<int64_t> out = {own};
  for (int64_t c = 64 << 10; c <= 16 << 20; c *= 2) out.push_back(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

nlohmann::ordered_json row_json(const Net& net, const BytesBound& b, bool explain) {
  nlohmann::ordered_json row;
  row["capacity_bytes"] = b.capacity_bytes;
  row["bound_bytes"] = b.bytes;
  row["own_bound_bytes"] = b.own_bytes;
  row["compulsory_bytes"] = b.compulsory_bytes;
  row["crossing_bytes"] = b.crossing_bytes;
  row["reread_bytes"] = b.reread_bytes;
  row["per_tensor_bytes"] = b.per_tensor_bytes;
  row["chain_bytes"] = b.chain_bytes;
  if (explain) {
    // The groups of a partition that gives the chain bound, by their first op.
    auto& groups = row["chain_groups"] = nlohmann::ordered_json::array();
    for (int first : b.chain_groups) groups.push_back(net.op(schedulable_ops(net)[first]).name);
    auto& forced = row["forced"] = nlohmann::ordered_json::array();
    for (const ForcedTraffic& f : b.forced)
      forced.push_back({{"tensor", net.tensor(f.tensor).name},
                        {"crossing_bytes", f.crossing_bytes},
                        {"reread_bytes", f.reread_bytes},
                        {"why", f.why}});
  }
  return row;
}

void print_row(const Net& net, const BytesBound& b, bool explain) {
  std::printf("%14lld %14lld %14lld %8.3f %14lld %14lld\n",
              static_cast<long long>(b.capacity_bytes), static_cast<long long>(b.bytes),
              static_cast<long long>(b.compulsory_bytes),
              static_cast<double>(b.bytes) / static_cast<double>(b.compulsory_bytes),
              static_cast<long long>(b.crossing_bytes), static_cast<long long>(b.reread_bytes));
  if (!explain) return;
  std::printf(
      "    own %lld (a larger capacity's bound where higher), per tensor %lld, chain %lld "
      "over %zu groups, first ops:",
      static_cast<long long>(b.own_bytes), static_cast<long long>(b.per_tensor_bytes),
      static_cast<long long>(b.chain_bytes), b.chain_groups.size());
  const std::vector<int> seq = schedulable_ops(net);
  for (int first : b.chain_groups) std::printf(" %s", net.op(seq[first]).name.c_str());
  std::printf("\n");
  std::vector<ForcedTraffic> forced = b.forced;
  std::sort(forced.begin(), forced.end(), [](const ForcedTraffic& x, const ForcedTraffic& y) {
    return x.crossing_bytes + x.reread_bytes > y.crossing_bytes + y.reread_bytes;
  });
  for (const ForcedTraffic& f : forced)
    std::printf("    %-40s %-7s crossing %12lld reread %12lld\n", net.tensor(f.tensor).name.c_str(),
                f.why.c_str(), static_cast<long long>(f.crossing_bytes),
                static_cast<long long>(f.reread_bytes));
}

cli::Runner setup_bound(CLI::App& command) {
  struct Options {
    std::string model, hw = "npc19-deepfusion", policy = "optimal", capacities, json;
    bool quiet = false, explain = false, group_caps = false;
  };
  auto o = std::make_shared<Options>();
  cli::add_model_option(command, o->model);
  cli::add_hw_option(command, o->hw);
  command
      .add_option("-p,--policy", o->policy,
                  "the policy whose net form is bounded (layerwise: Caffe form; the others: "
                  "folded); the bound holds for every policy on that form")
      ->capture_default_str();
  command.add_option("--capacities", o->capacities,
                     "on-chip bytes, comma-separated (64KiB,1MiB,...): the unified buffer, or "
                     "every scratchpad scaled together (default: the config's own and 64KiB .. "
                     "16MiB doubling)");
  command.add_option("--json", o->json, "Write the rows as JSON to this file ('-': stdout)");
  command.add_flag("--explain", o->explain,
                   "list the tensors the bound makes cross DRAM at each capacity");
  command.add_flag("--group-caps", o->group_caps,
                   "also bound by the planner's group lengths (max 32 ops tiled, 64 swept)");
  command.add_flag("-q,--quiet", o->quiet, "No table");
  return [o]() {
    const HwConfig config = load_hw_config(resolve_hw_config(o->hw));
    const Machine machine = machine_from_config(config);
    auto policy = find_policy(o->policy);
    if (!policy.ok()) {
      std::cerr << "error: " << policy.reason() << '\n';
      return 1;
    }
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // shapes only
    // The graph the policy compiles, as `tessel schedule` schedules it.
    auto graph = passes::graph_for_policy(zoo::load_model(o->model, load), o->policy);
    if (!graph.ok()) {
      std::cerr << "error: " << o->model << ": " << graph.reason() << '\n';
      return 1;
    }
    auto net = net_from_graph(graph.value(), machine, policy.value()->form);
    if (!net.ok()) {
      std::cerr << "error: " << net.reason() << '\n';
      return 1;
    }
    const std::vector<int64_t> capacities =
        o->capacities.empty() ? default_capacities(machine) : parse_capacities(o->capacities);
    const BytesBoundModel model(net.value(), o->group_caps);
    nlohmann::ordered_json j;
    j["model"] = net.value().name;
    j["hw"] = config.name;
    j["policy"] = o->policy;
    j["tool_version"] = version();
    j["group_caps"] = o->group_caps;
    auto& rows = j["rows"] = nlohmann::ordered_json::array();
    const bool table = !o->quiet && o->json != "-";
    if (table)
      std::printf("%14s %14s %14s %8s %14s %14s\n", "capacity_bytes", "bound_bytes", "compulsory",
                  "x_comp", "crossing", "reread");
    std::vector<BytesBound> bounds;
    for (int64_t capacity : capacities)
      bounds.push_back(model.at(scale_scratchpads(machine, capacity)));
    lift_to_larger_capacities(bounds);
    for (const BytesBound& b : bounds) {
      if (table) print_row(net.value(), b, o->explain);
      rows.push_back(row_json(net.value(), b, o->explain));
    }
    if (o->json.empty()) return 0;
    const std::string text = j.dump(1) + "\n";
    if (o->json == "-") {
      std::cout << text;
      return 0;
    }
    std::ofstream out(o->json);
    out << text;
    if (!out) {
      std::cerr << "error: cannot write " << o->json << '\n';
      return 1;
    }
    return 0;
  };
}

const cli::Registration kBound{
    {"bound",
     "Lower bound on DRAM bytes per on-chip capacity (the ski slope) of a model on a config",
     setup_bound}};

}  // namespace
}  // namespace tessel::sched
