// JSON form of Schedule (ordered keys, so a round trip prints identically).
#include "scheduler/schedule_json.hpp"

#include "scheduler/group_mapping.hpp"
#include "scheduler/machine_json.hpp"

namespace tessel::sched {

using nlohmann::ordered_json;

namespace {

ordered_json traffic_json(const Traffic& t) {
  ordered_json j;
  j["read"] = t.read();
  j["write"] = t.write();
  j["total"] = t.total();
  j["weights"] = t.weights_read;
  j["requant_tables"] = t.requant_tables_read;
  j["activations_in"] = t.activations_read;
  j["activations_out"] = t.activations_written;
  return j;
}

Traffic traffic_from(const nlohmann::json& j) {
  Traffic t;
  t.weights_read = j.at("weights").get<int64_t>();
  t.requant_tables_read = j.value("requant_tables", int64_t{0});
  t.activations_read = j.at("activations_in").get<int64_t>();
  t.activations_written = j.at("activations_out").get<int64_t>();
  return t;
}

BufferRole role_from(const std::string& s) {
  for (BufferRole r : {BufferRole::Input, BufferRole::Intermediate, BufferRole::Output,
                       BufferRole::Weights, BufferRole::Accumulator}) {
    if (s == to_string(r)) return r;
  }
  throw std::invalid_argument("unknown buffer role '" + s + "'");
}

BufferKind kind_from(const std::string& s) {
  for (BufferKind k : {BufferKind::Activations, BufferKind::Weights, BufferKind::Accumulators,
                       BufferKind::Outputs}) {
    if (s == to_string(k)) return k;
  }
  throw std::invalid_argument("unknown buffer kind '" + s + "'");
}

// Schedules written before session 26 carry the mapping's choices as flat keys.
Status read_flat_mapping(const nlohmann::json& gj, GroupSchedule& g) {
  g.row_tiles = gj.at("row_tiles").get<int64_t>();
  g.col_tiles = gj.at("col_tiles").get<int64_t>();
  g.channel_tiles = gj.at("channel_tiles").get<int64_t>();
  const auto halo = gj.at("halo").get<std::string>();
  if (halo != "recompute" && halo != "cache") return fail("unknown halo mode '" + halo + "'");
  g.halo = halo == "cache" ? HaloMode::Cache : HaloMode::Recompute;
  g.weights_resident = gj.at("weights_resident").get<bool>();
  g.double_buffered = gj.at("double_buffered").get<bool>();
  g.weight_sweep = gj.value("weight_sweep", false);
  if (g.weight_sweep) g.op_slices = gj.at("op_slices").get<std::vector<int64_t>>();
  g.memory_reuse = gj.at("memory_reuse").get<bool>();
  g.rows_per_step = gj.at("rows_per_step").get<std::vector<int64_t>>();
  g.prefetched = gj.value("prefetched", false);
  return {};
}

}  // namespace

namespace {

ordered_json schedule_json(const Schedule& s, const Net& net, const Machine* machine) {
  ordered_json j;
  j["model"] = s.model;
  j["config"] = s.config;
  if (machine) j["machine"] = machine_to_json(*machine);
  j["policy"] = s.policy;
  j["objective"] = s.objective;
  j["map_space"] = {{"weight_sweep", s.features.weight_sweep},
                    {"prefetch", s.features.prefetch},
                    {"space_to_depth_stem", s.features.space_to_depth_stem},
                    {"fold_activations", s.features.fold_activations},
                    {"column_tiles_every_row", s.features.column_tiles_every_row},
                    {"search_depth_bytes", s.features.search_depth_bytes},
                    {"search_depth_latency", s.features.search_depth_latency}};
  j["tool_version"] = s.tool_version;
  j["dram_bytes"] = traffic_json(s.traffic);
  // The program's instruction fetch, once code generation has made it (tessel compile's
  // schedule.json); a schedule alone has no such key (docs/energy.md, "Instruction fetch").
  if (s.instruction_fetch_bytes) j["instruction_fetch_bytes"] = *s.instruction_fetch_bytes;
  j["compulsory_bytes"] = s.compulsory_bytes;
  j["cycles"] = s.cycles;
  j["roofline_cycles"] = s.roofline_cycles;
  j["lower_bound_cycles"] = s.lower_bound_cycles;
  j["lower_bound_barrier"] = s.lower_bound_barrier;
  j["lower_bound_tensor"] = s.lower_bound_tensor;
  j["macs"] = s.macs;
  // The conv that reads its network input space-to-depth (docs/scheduler.md), or null.
  j["space_to_depth_stem"] = nullptr;
  for (const Op& op : net.ops)
    if (op.space_to_depth.channels > 0) j["space_to_depth_stem"] = op.name;
  // Activations folded into their producer's output clamp: producer op -> ReLU/Clip op.
  ordered_json folded = ordered_json::object();
  for (const Op& op : net.ops)
    if (!op.activation.empty()) folded[op.name] = op.activation;
  j["folded_activations"] = folded;
  j["search_seconds"] = s.search_seconds;
  ordered_json groups = ordered_json::array();
  for (const auto& g : s.groups) {
    ordered_json gj;
    gj["ops"] = g.ops;
    ordered_json names = ordered_json::array();
    for (int op : g.ops) names.push_back(net.op(op).name);
    gj["op_names"] = names;
    gj["inputs"] = g.inputs;
    gj["outputs"] = g.outputs;
    gj["dram_view"] = g.dram_view;
    // The explicit mapping (group_mapping.hpp) is what the schedule says of tiles, halos,
    // residency, buffering, sweeps and prefetch; `tile` only reports the first tile's extent.
    gj["mapping"] = mapping_to_json(net, derive_mapping(net, g));
    gj["tile"] = {{"rows", g.tile_rows}, {"cols", g.tile_cols}, {"channels", g.tile_channels}};
    gj["dram_bytes"] = traffic_json(g.traffic);
    gj["macs"] = g.macs;
    gj["load_cycles"] = g.load_cycles;
    gj["compute_cycles"] = g.compute_cycles;
    gj["store_cycles"] = g.store_cycles;
    gj["cycles"] = g.cycles;
    if (g.prefetched) {  // the mapping says whether; these are its figures
      gj["prologue_weight_cycles"] = g.prologue_weight_cycles;
      gj["prefetch_wait_cycles"] = g.prefetch_wait_cycles;
    }
    gj["peak_bytes"] = g.peak_bytes;
    ordered_json buffers = ordered_json::array();
    for (const auto& b : g.buffers) {
      ordered_json bj;
      bj["name"] = b.name;
      bj["role"] = to_string(b.role);
      bj["kind"] = to_string(b.kind);
      bj["tensor"] = b.tensor;
      bj["op"] = b.op;
      bj["copy"] = b.copy;
      bj["scratchpad"] = b.scratchpad;
      bj["offset"] = b.offset;
      bj["size"] = b.size_bytes;
      bj["pixel_bytes"] = b.pixel_bytes;
      bj["lifetime"] = {b.first_step, b.last_step};
      bj["reuses"] = b.reuses;
      bj["reuse_gap"] = b.reuse_gap_bytes;
      buffers.push_back(bj);
    }
    gj["buffers"] = buffers;
    groups.push_back(gj);
  }
  j["groups"] = groups;
  return j;
}

}  // namespace

ordered_json to_json(const Schedule& s, const Net& net) {
  return schedule_json(s, net, nullptr);
}

ordered_json to_json(const Schedule& s, const Net& net, const Machine& machine) {
  return schedule_json(s, net, &machine);
}

Result<Schedule> schedule_from_json(const nlohmann::json& j) {
  try {
    Schedule s;
    s.model = j.at("model").get<std::string>();
    s.config = j.at("config").get<std::string>();
    // The hardware view (schedules written before session 29 have none): checked for form here;
    // schedule_graph_from_mappings compares it with the config's.
    if (j.contains("machine")) {
      if (auto view = machine_from_json(j.at("machine")); !view.ok())
        return fail("schedule JSON: " + view.reason());
    }
    s.policy = j.at("policy").get<std::string>();
    s.objective = j.at("objective").get<std::string>();
    // Schedules written before session 12 have no map_space (the defaults of their day).
    if (j.contains("map_space")) {
      const auto& f = j.at("map_space");
      s.features.weight_sweep = f.at("weight_sweep").get<bool>();
      s.features.prefetch = f.at("prefetch").get<bool>();
      s.features.space_to_depth_stem = f.at("space_to_depth_stem").get<bool>();
      // Schedules written before session 21 folded no activation.
      s.features.fold_activations = f.value("fold_activations", false);
      s.features.column_tiles_every_row = f.at("column_tiles_every_row").get<bool>();
      s.features.search_depth_bytes = f.at("search_depth_bytes").get<int>();
      s.features.search_depth_latency = f.at("search_depth_latency").get<int>();
    }
    s.tool_version = j.at("tool_version").get<std::string>();
    s.traffic = traffic_from(j.at("dram_bytes"));
    if (j.contains("instruction_fetch_bytes"))
      s.instruction_fetch_bytes = j.at("instruction_fetch_bytes").get<int64_t>();
    s.compulsory_bytes = j.at("compulsory_bytes").get<int64_t>();
    s.cycles = j.at("cycles").get<int64_t>();
    s.roofline_cycles = j.at("roofline_cycles").get<int64_t>();
    // Schedules written before the bound existed (session 8) have neither field.
    s.lower_bound_cycles = j.value("lower_bound_cycles", s.roofline_cycles);
    s.lower_bound_barrier = j.value("lower_bound_barrier", std::string());
    s.lower_bound_tensor = j.value("lower_bound_tensor", std::string());  // session 23
    s.macs = j.at("macs").get<int64_t>();
    s.search_seconds = j.at("search_seconds").get<double>();
    for (const auto& gj : j.at("groups")) {
      GroupSchedule g;
      g.ops = gj.at("ops").get<std::vector<int>>();
      g.inputs = gj.at("inputs").get<std::vector<int>>();
      g.outputs = gj.at("outputs").get<std::vector<int>>();
      g.dram_view = gj.at("dram_view").get<bool>();
      const std::string where = "group " + std::to_string(s.groups.size());
      if (gj.contains("mapping")) {
        auto mapping = mapping_from_json(gj.at("mapping"), g.ops, where);
        if (!mapping.ok()) return fail("schedule JSON: " + mapping.reason());
        if (auto applied = apply_mapping(mapping.value(), g, where); !applied.ok())
          return fail("schedule JSON: " + applied.reason());
      } else if (auto legacy = read_flat_mapping(gj, g); !legacy.ok()) {
        return legacy.failure();
      }
      if (gj.at("dram_view").get<bool>() != g.dram_view)
        return fail("schedule JSON: " + where + ": dram_view contradicts mapping.nest");
      g.tile_rows = gj.at("tile").at("rows").get<int64_t>();
      g.tile_cols = gj.at("tile").at("cols").get<int64_t>();
      g.tile_channels = gj.at("tile").at("channels").get<int64_t>();
      g.traffic = traffic_from(gj.at("dram_bytes"));
      g.macs = gj.at("macs").get<int64_t>();
      g.load_cycles = gj.at("load_cycles").get<int64_t>();
      g.compute_cycles = gj.at("compute_cycles").get<int64_t>();
      g.store_cycles = gj.at("store_cycles").get<int64_t>();
      g.cycles = gj.at("cycles").get<int64_t>();
      if (g.prefetched) {
        g.prologue_weight_cycles = gj.at("prologue_weight_cycles").get<int64_t>();
        g.prefetch_wait_cycles = gj.at("prefetch_wait_cycles").get<int64_t>();
      }
      g.peak_bytes = gj.at("peak_bytes").get<std::vector<int64_t>>();
      for (const auto& bj : gj.at("buffers")) {
        BufferAlloc b;
        b.name = bj.at("name").get<std::string>();
        b.role = role_from(bj.at("role").get<std::string>());
        b.kind = kind_from(bj.at("kind").get<std::string>());
        b.tensor = bj.at("tensor").get<int>();
        b.op = bj.at("op").get<int>();
        b.copy = bj.at("copy").get<int>();
        b.scratchpad = bj.at("scratchpad").get<int>();
        b.offset = bj.at("offset").get<int64_t>();
        b.size_bytes = bj.at("size").get<int64_t>();
        b.pixel_bytes = bj.at("pixel_bytes").get<int64_t>();
        b.first_step = bj.at("lifetime").at(0).get<int>();
        b.last_step = bj.at("lifetime").at(1).get<int>();
        b.reuses = bj.at("reuses").get<int>();
        b.reuse_gap_bytes = bj.at("reuse_gap").get<int64_t>();
        g.buffers.push_back(std::move(b));
      }
      s.groups.push_back(std::move(g));
    }
    return s;
  } catch (const std::exception& e) {
    return fail(std::string("schedule JSON: ") + e.what());
  }
}

}  // namespace tessel::sched
