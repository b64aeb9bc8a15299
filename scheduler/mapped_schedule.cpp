// schedule_from_mappings: explicit mappings -> evaluate_mapping -> compare -> totals.
#include "scheduler/mapped_schedule.hpp"

#include <algorithm>
#include <string>

#include "scheduler/group_mapping.hpp"
#include "scheduler/plan.hpp"

namespace tessel::sched {

Result<MapSpaceFeatures> features_from_json(const nlohmann::json& j) {
  MapSpaceFeatures f;
  if (!j.contains("map_space")) return f;
  try {
    const auto& m = j.at("map_space");
    f.weight_sweep = m.value("weight_sweep", f.weight_sweep);
    f.prefetch = m.value("prefetch", f.prefetch);
    f.space_to_depth_stem = m.value("space_to_depth_stem", f.space_to_depth_stem);
    f.fold_activations = m.value("fold_activations", f.fold_activations);
    f.column_tiles_every_row = m.value("column_tiles_every_row", f.column_tiles_every_row);
    f.search_depth_bytes = m.value("search_depth_bytes", f.search_depth_bytes);
    f.search_depth_latency = m.value("search_depth_latency", f.search_depth_latency);
  } catch (const std::exception& e) {
    return fail(std::string("map_space: ") + e.what());
  }
  return f;
}

namespace {

// The group's op indices: `ops`, or `op_names` resolved on `net`.
Result<std::vector<int>> group_ops(const Net& net, const nlohmann::json& gj,
                                   const std::string& where) {
  std::vector<int> ops;
  if (gj.contains("ops")) {
    if (!gj["ops"].is_array()) return fail(where + ": ops: not an array");
    for (const auto& o : gj["ops"]) {
      if (!o.is_number_integer() || o.get<int>() < 0 || o.get<int>() >= net.size())
        return fail(where + ": ops: " + o.dump() + " is not an op index of the net (0.." +
                    std::to_string(net.size() - 1) + ")");
      ops.push_back(o.get<int>());
    }
    return ops;
  }
  if (!gj.contains("op_names") || !gj["op_names"].is_array())
    return fail(where + ": neither ops (indices) nor op_names");
  for (const auto& o : gj["op_names"]) {
    const std::string name = o.is_string() ? o.get<std::string>() : o.dump();
    int found = -1;
    for (int i = 0; i < net.size() && found < 0; ++i)
      if (net.op(i).name == name) found = i;
    if (found < 0) return fail(where + ": op_names: no op '" + name + "' in the net");
    ops.push_back(found);
  }
  return ops;
}

// Ops ascending, in no earlier group, no Input, each reading only network inputs and tensors
// of earlier groups or of its own group.
Status check_order(const Net& net, const std::vector<int>& ops, const std::vector<char>& covered,
                   const std::string& where) {
  if (ops.empty()) return fail(where + ": ops: empty");
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = net.op(ops[i]);
    if (i > 0 && ops[i] <= ops[i - 1])
      return fail(where + ": ops: not ascending at '" + op.name + "'");
    if (op.kind == OpKind::Input) return fail(where + ": ops: '" + op.name + "' is an input");
    if (covered[static_cast<size_t>(ops[i])])
      return fail(where + ": op '" + op.name + "' is in an earlier group too");
    for (int x : op.inputs) {
      const int producer = net.tensor(x).producer;
      const bool here = std::find(ops.begin(), ops.end(), producer) != ops.end();
      if (net.op(producer).kind != OpKind::Input && !covered[static_cast<size_t>(producer)] &&
          !here)
        return fail(where + ": op '" + op.name + "' reads '" + net.tensor(x).name +
                    "', which no earlier group makes");
    }
  }
  return {};
}

Result<Schedule> mapped_schedule(const Net& net, const Machine& machine, const nlohmann::json& j);

// The PlanOptions a mapping is evaluated under: its memory reuse; a lone Concat is a DRAM view
// only where the mapping says so; weight sweeps may run past the tiling's op limit.
PlanOptions options_for(const GroupMapping& m) {
  PlanOptions options;
  options.memory_reuse = m.memory_reuse;
  options.alias_concat = m.nest == LoopNest::DramView;
  options.allow_weight_sweep = m.nest == LoopNest::OpMajor;
  options.objective = Objective::Bytes;
  return options;
}

}  // namespace

Result<Schedule> schedule_from_mappings(const Net& net, const Machine& machine,
                                        const nlohmann::json& j) {
  try {
    return mapped_schedule(net, machine, j);
  } catch (const nlohmann::json::exception& e) {  // a header key of another type
    return fail(std::string("schedule JSON: ") + e.what());
  }
}

namespace {

Result<Schedule> mapped_schedule(const Net& net, const Machine& machine, const nlohmann::json& j) {
  Schedule s;
  s.model = j.value("model", net.name);
  s.config = j.value("config", std::string());
  s.policy = j.value("policy", std::string("mapping"));
  s.objective = j.value("objective", std::string("bytes"));
  auto features = features_from_json(j);
  if (!features.ok()) return features.failure();
  s.features = features.value();
  if (!j.contains("groups") || !j["groups"].is_array()) return fail("groups: missing");
  std::vector<char> covered(static_cast<size_t>(net.size()), 0);
  int previous = -1;  // the last group that moves data
  for (const auto& gj : j["groups"]) {
    const std::string where = "group " + std::to_string(s.groups.size());
    auto ops = group_ops(net, gj, where);
    if (!ops.ok()) return ops.failure();
    if (auto ordered = check_order(net, ops.value(), covered, where); !ordered.ok())
      return ordered.failure();
    for (int op : ops.value()) covered[static_cast<size_t>(op)] = 1;
    if (!gj.contains("mapping")) return fail(where + ": mapping: missing");
    auto written = mapping_from_json(gj["mapping"], ops.value(), where);
    if (!written.ok()) return written.failure();
    GroupSchedule choice;
    choice.ops = ops.value();
    if (auto applied = apply_mapping(written.value(), choice, where); !applied.ok())
      return applied.failure();
    const PlanOptions options = options_for(written.value());
    if (written.value().nest != LoopNest::DramView)
      if (auto in_space = check_mapping(net, machine, choice.ops, mapping_of(choice));
          !in_space.ok())
        return fail(where + ": mapping." + in_space.reason());
    auto planned = evaluate_mapping(net, machine, choice.ops, mapping_of(choice), options);
    if (!planned.ok()) return fail(where + ": " + planned.reason());
    if (written.value().prefetched) {
      if (previous < 0)
        return fail(where + ": mapping.prefetched: no earlier group to prefetch behind");
      planned = plan_prefetched(net, machine, s.groups[static_cast<size_t>(previous)],
                                planned.value(), options);
      if (!planned.ok()) return fail(where + ": mapping.prefetched: " + planned.reason());
    }
    const GroupMapping derived = derive_mapping(net, planned.value());
    if (auto same = compare_mappings(net, written.value(), derived, gj["mapping"], where);
        !same.ok())
      return same.failure();
    s.groups.push_back(std::move(planned).value());
    if (!s.groups.back().dram_view) previous = static_cast<int>(s.groups.size()) - 1;
  }
  for (int op = 0; op < net.size(); ++op)
    if (!covered[static_cast<size_t>(op)] && net.op(op).kind != OpKind::Input)
      return fail("groups: op '" + net.op(op).name + "' is in no group");
  finalize_schedule(net, machine, s);
  return s;
}

}  // namespace

}  // namespace tessel::sched
