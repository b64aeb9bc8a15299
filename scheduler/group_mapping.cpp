// The explicit mapping of a group: derived from a planned group, written and read as JSON,
// applied to a group's mode fields, compared key by key.
#include "scheduler/group_mapping.hpp"

#include <algorithm>

#include "scheduler/group_info.hpp"
#include "scheduler/tiling.hpp"

namespace tessel::sched {

// Names in enum order (group_mapping.hpp).
const char* to_string(LoopNest nest) {
  static constexpr const char* kNames[] = {"tile_major", "op_major", "dram_view"};
  return kNames[static_cast<size_t>(nest)];
}

const char* to_string(Residency residency) {
  static constexpr const char* kNames[] = {"kept", "streamed", "recomputed", "cached"};
  return kNames[static_cast<size_t>(residency)];
}

namespace {

bool has_weights(const Op& op) {
  return op.weight_bytes > 0 || op.requant_table_bytes > 0;
}

bool overlap(const Box& a, const Box& b) {
  return !a.empty() && !b.empty() && !intersect(a.c, b.c).empty() && !intersect(a.h, b.h).empty() &&
         !intersect(a.w, b.w).empty();
}

// Per local: whether two neighbouring tiles (a row or a column apart, same channel part) both
// touch some element of it: a halo, recomputed or cached.
std::vector<char> halo_locals(const GroupSchedule& gs, const GroupInfo& g,
                              const TileGeometry& geo) {
  const size_t locals = g.tensors.size();
  std::vector<char> halo(locals, 0);
  const auto box = [&](int64_t t, size_t l) -> const Box& {
    return geo.need[static_cast<size_t>(t) * locals + l];
  };
  for (int64_t t = 0; t < gs.tiles(); ++t) {
    for (size_t l = 0; l < locals; ++l) {
      if (halo[l]) continue;
      if (gs.col_part(t) + 1 < gs.col_tiles && overlap(box(t, l), box(t + 1, l))) halo[l] = 1;
      if (gs.row_part(t) + 1 < gs.row_tiles && overlap(box(t, l), box(t + gs.col_tiles, l)))
        halo[l] = 1;
    }
  }
  return halo;
}

struct BufferNames {
  std::vector<std::string> of_tensor(int tensor) const {
    std::vector<std::string> out;
    for (const BufferAlloc& b : *buffers)
      if (b.tensor == tensor && b.role != BufferRole::Weights && b.role != BufferRole::Accumulator)
        out.push_back(b.name);
    return out;
  }
  std::vector<std::string> of_role(BufferRole role, int op) const {
    std::vector<std::string> out;
    for (const BufferAlloc& b : *buffers)
      if (b.role == role && b.op == op) out.push_back(b.name);
    return out;
  }
  bool doubled(const std::vector<std::string>& names) const {
    return std::any_of(names.begin(), names.end(),
                       [](const std::string& n) { return n.ends_with("#1"); });
  }
  const BufferAlloc* first_of_tensor(int tensor) const {
    for (const BufferAlloc& b : *buffers)
      if (b.tensor == tensor && b.copy == 0 && b.role != BufferRole::Weights) return &b;
    return nullptr;
  }
  const std::vector<BufferAlloc>* buffers;
};

OperandMapping activation_operand(const char* kind, int tensor, Residency residency,
                                  const BufferNames& names) {
  OperandMapping o;
  o.operand = kind;
  o.tensor = tensor;
  o.residency = residency;
  o.buffers = names.of_tensor(tensor);
  o.double_buffered = names.doubled(o.buffers);
  return o;
}

// The slices of a sweep op's loop: a conv's own, an elementwise op's block conv's, 1 for an op
// run whole (docs/scheduler.md "Weight sweeps").
int64_t sweep_slices(const Net& net, const GroupSchedule& gs, size_t pos) {
  for (size_t p = pos + 1; p-- > 0;) {
    const Op& op = net.op(gs.ops[p]);
    if (runs_whole_in_sweep(op)) return 1;
    if (is_dense_conv(op))
      return p < gs.op_slices.size() ? std::max<int64_t>(1, gs.op_slices[p]) : 1;
  }
  return 1;
}

void derive_sweep(const Net& net, const GroupSchedule& gs, const GroupInfo& g,
                  const BufferNames& names, GroupMapping& m) {
  const int store_step = gs.steps() - 1;
  for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
    const Op& op = net.op(gs.ops[pos]);
    OpMapping om;
    om.op = gs.ops[pos];
    const int64_t channels = net.tensor(op.output).shape.c;
    const int64_t slices = sweep_slices(net, gs, pos);
    om.loops.push_back({"channels", slices, ceil_div(channels, slices)});
    if (pos < gs.rows_per_step.size()) om.rows_per_step = gs.rows_per_step[pos];
    const auto residency = [&](int tensor) {
      const BufferAlloc* b = names.first_of_tensor(tensor);
      const int64_t whole = net.tensor(tensor).shape.c * net.activation_bytes;
      return b == nullptr || b->pixel_bytes >= whole ? Residency::Kept : Residency::Streamed;
    };
    for (int x : op.inputs)
      om.operands.push_back(activation_operand("input", x, residency(x), names));
    if (has_weights(op)) {
      OperandMapping w;
      w.operand = "weights";
      w.residency = Residency::Streamed;
      w.buffers = names.of_role(BufferRole::Weights, -1);
      w.double_buffered = names.doubled(w.buffers);
      om.operands.push_back(w);
    }
    OperandMapping out = activation_operand("output", op.output, residency(op.output), names);
    const size_t l = static_cast<size_t>(g.out_local[pos]);
    if (g.stored[l]) {
      const BufferAlloc* b = names.first_of_tensor(op.output);
      out.store = b != nullptr && b->last_step < store_step ? "early" : "end";
    }
    om.operands.push_back(out);
    const auto acc = names.of_role(BufferRole::Accumulator, gs.ops[pos]);
    if (!acc.empty()) om.accumulator = acc.front();
    m.ops.push_back(std::move(om));
  }
}

void derive_tiling(const Net& net, const GroupSchedule& gs, const GroupInfo& g,
                   const BufferNames& names, GroupMapping& m) {
  const Mapping choice = mapping_of(gs);
  const TileGeometry geo = tile_group(net, g, choice);
  const std::vector<char> kept = kept_inputs(net, g, geo, choice);
  const std::vector<char> halo = halo_locals(gs, g, geo);
  const auto residency = [&](int local) {
    const size_t l = static_cast<size_t>(local);
    if (kept[l]) return Residency::Kept;
    // Made by an op run once (RunsOnce: K, V, a hidden-chunk prefix): on chip over every tile.
    if (!g.is_input[l] && geo.once.at(static_cast<size_t>(g.produced_step[l] - 1)))
      return Residency::Kept;
    if (!halo[l]) return Residency::Streamed;
    return gs.halo == HaloMode::Cache ? Residency::Cached : Residency::Recomputed;
  };
  for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
    const Op& op = net.op(gs.ops[pos]);
    OpMapping om;
    om.op = gs.ops[pos];
    const Box& first = geo.need[static_cast<size_t>(g.out_local[pos])];
    om.loops = {{"channels", gs.channel_tiles, first.c.size()},
                {"rows", gs.row_tiles, first.h.size()},
                {"cols", gs.col_tiles, first.w.size()}};
    if (pos < gs.reduction_chunk_inputs.size() && gs.reduction_chunk_inputs[pos] > 0) {
      const int64_t chunk = gs.reduction_chunk_inputs[pos];
      // A Gemm reduces over its whole input, a conv over its channels (every kernel tap).
      const Shape3 in = net.tensor(op.inputs[0]).shape;
      const int64_t inputs = op.kind == OpKind::Gemm ? in.elements() : in.c;
      om.loops.push_back({"reduction", ceil_div(inputs, chunk), chunk});
    }
    if (pos < gs.rows_per_step.size()) om.rows_per_step = gs.rows_per_step[pos];
    for (size_t i = 0; i < op.inputs.size(); ++i)
      om.operands.push_back(
          activation_operand("input", op.inputs[i], residency(g.in_local[pos][i]), names));
    if (has_weights(op)) {
      OperandMapping w;
      w.operand = "weights";
      w.residency = gs.weights_resident ? Residency::Kept : Residency::Streamed;
      w.buffers = names.of_role(BufferRole::Weights, gs.ops[pos]);
      w.double_buffered = names.doubled(w.buffers);
      om.operands.push_back(w);
    }
    OperandMapping out =
        activation_operand("output", op.output, residency(g.out_local[pos]), names);
    if (g.stored[static_cast<size_t>(g.out_local[pos])]) out.store = "per_tile";
    om.operands.push_back(out);
    const auto acc = names.of_role(BufferRole::Accumulator, gs.ops[pos]);
    if (!acc.empty()) om.accumulator = acc.front();
    m.ops.push_back(std::move(om));
  }
}

}  // namespace

GroupMapping derive_mapping(const Net& net, const GroupSchedule& gs) {
  GroupMapping m;
  if (gs.dram_view) {
    m.nest = LoopNest::DramView;
    return m;
  }
  m.nest = gs.weight_sweep ? LoopNest::OpMajor : LoopNest::TileMajor;
  m.halo = gs.halo;
  m.memory_reuse = gs.memory_reuse;
  m.prefetched = gs.prefetched;
  const GroupInfo g = describe(net, gs.ops);
  const BufferNames names{&gs.buffers};
  if (gs.weight_sweep) {
    derive_sweep(net, gs, g, names, m);
  } else {
    derive_tiling(net, gs, g, names, m);
  }
  return m;
}

nlohmann::ordered_json mapping_to_json(const Net& net, const GroupMapping& m) {
  nlohmann::ordered_json j;
  j["nest"] = to_string(m.nest);
  if (m.nest == LoopNest::DramView) return j;
  j["halo"] = to_string(m.halo);
  j["memory_reuse"] = m.memory_reuse;
  j["prefetched"] = m.prefetched;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpMapping& om : m.ops) {
    nlohmann::ordered_json oj;
    oj["op"] = net.op(om.op).name;
    nlohmann::ordered_json loops = nlohmann::ordered_json::array();
    for (const TileLoop& loop : om.loops)
      loops.push_back({{"axis", loop.axis}, {"tiles", loop.tiles}, {"size", loop.size}});
    oj["loops"] = loops;
    oj["rows_per_step"] = om.rows_per_step;
    nlohmann::ordered_json operands = nlohmann::ordered_json::array();
    for (const OperandMapping& o : om.operands) {
      nlohmann::ordered_json x;
      x["operand"] = o.operand;
      if (o.tensor >= 0) x["tensor"] = net.tensor(o.tensor).name;
      x["residency"] = to_string(o.residency);
      x["double_buffered"] = o.double_buffered;
      if (!o.store.empty()) x["store"] = o.store;
      x["buffers"] = o.buffers;
      operands.push_back(x);
    }
    oj["operands"] = operands;
    if (!om.accumulator.empty()) oj["accumulator"] = om.accumulator;
    ops.push_back(oj);
  }
  j["ops"] = ops;
  return j;
}

namespace {

// A malformed mapping: the key path and what is wrong with it.
struct MappingError {
  std::string key;
  std::string message;
};

template <typename T>
T read_key(const nlohmann::json& j, const std::string& path, const char* key, const char* type) {
  const std::string at = path + "." + key;
  if (!j.is_object()) throw MappingError{path, "not an object"};
  if (!j.contains(key)) throw MappingError{at, "missing"};
  const nlohmann::json& v = j.at(key);
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw MappingError{at, std::string("not ") + type};
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw MappingError{at, std::string("not ") + type};
  } else {
    if (!v.is_number_integer()) throw MappingError{at, std::string("not ") + type};
  }
  return v.get<T>();
}

template <typename T>
T read_optional(const nlohmann::json& j, const std::string& path, const char* key, const char* type,
                T fallback) {
  if (!j.contains(key)) return fallback;
  return read_key<T>(j, path, key, type);
}

template <typename E, size_t N>
E read_enum(const nlohmann::json& j, const std::string& path, const char* key, const E (&values)[N],
            E fallback, bool required) {
  if (!required && !j.contains(key)) return fallback;
  const auto text = read_key<std::string>(j, path, key, "a string");
  std::string known;
  for (E e : values) {
    if (text == to_string(e)) return e;
    known += (known.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw MappingError{path + "." + key, "unknown '" + text + "' (known: " + known + ")"};
}

const nlohmann::json& read_array(const nlohmann::json& j, const std::string& path,
                                 const char* key) {
  if (!j.contains(key)) throw MappingError{path + "." + key, "missing"};
  if (!j.at(key).is_array()) throw MappingError{path + "." + key, "not an array"};
  return j.at(key);
}

OperandMapping read_operand(const nlohmann::json& j, const std::string& path) {
  OperandMapping o;
  o.operand = read_key<std::string>(j, path, "operand", "a string");
  if (o.operand != "input" && o.operand != "weights" && o.operand != "output")
    throw MappingError{path + ".operand",
                       "unknown '" + o.operand + "' (known: input, weights, output)"};
  static constexpr Residency kResidencies[] = {Residency::Kept, Residency::Streamed,
                                               Residency::Recomputed, Residency::Cached};
  o.residency = read_enum(j, path, "residency", kResidencies, Residency::Streamed, true);
  read_optional<std::string>(j, path, "tensor", "a string", "");  // a name, compared on a net
  o.double_buffered = read_optional<bool>(j, path, "double_buffered", "a boolean", false);
  o.store = read_optional<std::string>(j, path, "store", "a string", "");
  if (!o.store.empty() && o.store != "per_tile" && o.store != "end" && o.store != "early")
    throw MappingError{path + ".store", "unknown '" + o.store + "' (known: per_tile, end, early)"};
  if (j.contains("buffers")) {
    const auto& buffers = read_array(j, path, "buffers");
    for (size_t b = 0; b < buffers.size(); ++b) {
      if (!buffers[b].is_string())
        throw MappingError{path + ".buffers[" + std::to_string(b) + "]", "not a string"};
      o.buffers.push_back(buffers[b].get<std::string>());
    }
  }
  return o;
}

OpMapping read_op(const nlohmann::json& j, const std::string& path, int op) {
  OpMapping om;
  om.op = op;
  read_optional<std::string>(j, path, "op", "a string", "");  // a name, compared on a net
  const auto& loops = read_array(j, path, "loops");
  for (size_t k = 0; k < loops.size(); ++k) {
    const std::string at = path + ".loops[" + std::to_string(k) + "]";
    TileLoop loop;
    loop.axis = read_key<std::string>(loops[k], at, "axis", "a string");
    if (loop.axis != "channels" && loop.axis != "rows" && loop.axis != "cols" &&
        loop.axis != "reduction")
      throw MappingError{at + ".axis",
                         "unknown '" + loop.axis + "' (known: channels, rows, cols, reduction)"};
    loop.tiles = read_key<int64_t>(loops[k], at, "tiles", "an integer");
    if (loop.tiles < 1) throw MappingError{at + ".tiles", "must be at least 1"};
    loop.size = read_optional<int64_t>(loops[k], at, "size", "an integer", 0);
    om.loops.push_back(loop);
  }
  om.rows_per_step = read_optional<int64_t>(j, path, "rows_per_step", "an integer", 1);
  if (om.rows_per_step < 1) throw MappingError{path + ".rows_per_step", "must be at least 1"};
  const auto& operands = read_array(j, path, "operands");
  for (size_t k = 0; k < operands.size(); ++k)
    om.operands.push_back(read_operand(operands[k], path + ".operands[" + std::to_string(k) + "]"));
  om.accumulator = read_optional<std::string>(j, path, "accumulator", "a string", "");
  return om;
}

}  // namespace

Result<GroupMapping> mapping_from_json(const nlohmann::json& j, const std::vector<int>& ops,
                                       const std::string& where) {
  try {
    GroupMapping m;
    static constexpr LoopNest kNests[] = {LoopNest::TileMajor, LoopNest::OpMajor,
                                          LoopNest::DramView};
    m.nest = read_enum(j, "mapping", "nest", kNests, LoopNest::TileMajor, true);
    if (m.nest == LoopNest::DramView) return m;
    static constexpr HaloMode kHalos[] = {HaloMode::Recompute, HaloMode::Cache};
    m.halo = read_enum(j, "mapping", "halo", kHalos, HaloMode::Recompute, false);
    m.memory_reuse = read_optional<bool>(j, "mapping", "memory_reuse", "a boolean", true);
    m.prefetched = read_optional<bool>(j, "mapping", "prefetched", "a boolean", false);
    const auto& op_list = read_array(j, "mapping", "ops");
    if (op_list.size() != ops.size())
      throw MappingError{"mapping.ops", std::to_string(op_list.size()) +
                                            " entries for a group of " +
                                            std::to_string(ops.size()) + " ops"};
    for (size_t pos = 0; pos < ops.size(); ++pos)
      m.ops.push_back(read_op(op_list[pos], "mapping.ops[" + std::to_string(pos) + "]", ops[pos]));
    return m;
  } catch (const MappingError& e) {
    return fail(where + ": " + e.key + ": " + e.message);
  }
}

Status apply_mapping(const GroupMapping& m, GroupSchedule& gs, const std::string& where) {
  gs.memory_reuse = m.memory_reuse;
  gs.prefetched = m.prefetched;
  gs.halo = m.halo;
  gs.row_tiles = gs.col_tiles = gs.channel_tiles = 1;
  gs.weight_sweep = false;
  gs.op_slices.clear();
  gs.rows_per_step.clear();
  gs.reduction_chunk_inputs.clear();
  gs.weights_resident = true;
  gs.double_buffered = false;
  gs.dram_view = m.nest == LoopNest::DramView;
  if (gs.dram_view) return {};
  const auto at = [&](size_t pos, const std::string& key) {
    return where + ": mapping.ops[" + std::to_string(pos) + "]" + key;
  };
  int kept_weights = 0, streamed_weights = 0;
  for (size_t pos = 0; pos < m.ops.size(); ++pos) {
    const OpMapping& om = m.ops[pos];
    gs.rows_per_step.push_back(om.rows_per_step);
    for (const OperandMapping& o : om.operands) {
      gs.double_buffered = gs.double_buffered || o.double_buffered;
      if (o.operand != "weights") continue;
      if (o.residency == Residency::Kept) ++kept_weights;
      if (o.residency == Residency::Streamed) ++streamed_weights;
      if (o.residency != Residency::Kept && o.residency != Residency::Streamed)
        return fail(at(pos, ".operands (weights).residency") +
                    ": weights are kept or streamed, not " + to_string(o.residency));
    }
  }
  if (kept_weights > 0 && streamed_weights > 0)
    return fail(where +
                ": mapping.ops: weights kept in some ops and streamed in others (a group "
                "keeps or streams all its weights)");
  if (m.nest == LoopNest::OpMajor) {
    gs.weight_sweep = true;
    gs.weights_resident = false;
    gs.double_buffered = true;
    for (size_t pos = 0; pos < m.ops.size(); ++pos) {
      const OpMapping& om = m.ops[pos];
      if (om.loops.size() > 1 || (om.loops.size() == 1 && om.loops[0].axis != "channels"))
        return fail(at(pos, ".loops") +
                    ": an op-major nest (a weight sweep) loops over output-channel slices only");
      const bool weights =
          std::any_of(om.operands.begin(), om.operands.end(),
                      [](const OperandMapping& o) { return o.operand == "weights"; });
      gs.op_slices.push_back(weights && !om.loops.empty() ? om.loops[0].tiles : 0);
    }
    return {};
  }
  gs.weights_resident = streamed_weights == 0;
  static const char* const kAxes[] = {"channels", "rows", "cols"};
  for (size_t pos = 0; pos < m.ops.size(); ++pos) {
    const OpMapping& om = m.ops[pos];
    if (om.loops.size() < 3 || om.loops.size() > 4)
      return fail(at(pos, ".loops") +
                  ": a tile-major nest loops over channels, rows, cols (outermost first), and a "
                  "conv or Gemm's reduction chunks innermost");
    for (size_t k = 0; k < 3; ++k)
      if (om.loops[k].axis != kAxes[k])
        return fail(at(pos, ".loops[" + std::to_string(k) + "].axis") + ": '" + om.loops[k].axis +
                    "' where the tile order has '" + kAxes[k] + "'");
    if (om.loops.size() == 4 && om.loops[3].axis != "reduction")
      return fail(at(pos, ".loops[3].axis") + ": '" + om.loops[3].axis +
                  "' where only 'reduction' may follow the tile loops");
    const int64_t counts[] = {om.loops[0].tiles, om.loops[1].tiles, om.loops[2].tiles};
    if (pos == 0) {
      gs.channel_tiles = counts[0];
      gs.row_tiles = counts[1];
      gs.col_tiles = counts[2];
    } else if (counts[0] != gs.channel_tiles || counts[1] != gs.row_tiles ||
               counts[2] != gs.col_tiles) {
      return fail(at(pos, ".loops") + ": a tile-major nest runs every op in the same tiles: " +
                  std::to_string(counts[0]) + "x" + std::to_string(counts[1]) + "x" +
                  std::to_string(counts[2]) + " here, " + std::to_string(gs.channel_tiles) + "x" +
                  std::to_string(gs.row_tiles) + "x" + std::to_string(gs.col_tiles) +
                  " in ops[0] (channels x rows x cols)");
    }
    gs.reduction_chunk_inputs.push_back(om.loops.size() == 4 ? om.loops[3].size : 0);
  }
  return {};
}

namespace {

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + "]";
}

// The first difference between an op's written and derived mapping, as "key: written X, the
// model gives Y", or "".
std::string op_difference(const Net& net, const OpMapping& w, const OpMapping& d,
                          const nlohmann::json& j) {
  const auto differs = [](const std::string& key, const std::string& written,
                          const std::string& derived) {
    return key + ": written " + written + ", the model gives " + derived;
  };
  if (j.contains("op") && j["op"].get<std::string>() != net.op(d.op).name)
    return differs(".op", quoted(j["op"].get<std::string>()), quoted(net.op(d.op).name));
  if (w.loops.size() != d.loops.size())
    return differs(".loops", std::to_string(w.loops.size()) + " loops",
                   std::to_string(d.loops.size()));
  for (size_t k = 0; k < w.loops.size(); ++k) {
    const std::string key = ".loops[" + std::to_string(k) + "]";
    if (w.loops[k].axis != d.loops[k].axis)
      return differs(key + ".axis", quoted(w.loops[k].axis), quoted(d.loops[k].axis));
    if (w.loops[k].tiles != d.loops[k].tiles)
      return differs(key + ".tiles", std::to_string(w.loops[k].tiles),
                     std::to_string(d.loops[k].tiles));
    if (j["loops"][k].contains("size") && w.loops[k].size != d.loops[k].size)
      return differs(key + ".size", std::to_string(w.loops[k].size),
                     std::to_string(d.loops[k].size));
  }
  if (j.contains("rows_per_step") && w.rows_per_step != d.rows_per_step)
    return differs(".rows_per_step", std::to_string(w.rows_per_step),
                   std::to_string(d.rows_per_step));
  if (w.operands.size() != d.operands.size())
    return differs(".operands", std::to_string(w.operands.size()) + " operands",
                   std::to_string(d.operands.size()) + " (inputs, weights, output)");
  for (size_t k = 0; k < w.operands.size(); ++k) {
    const OperandMapping& a = w.operands[k];
    const OperandMapping& b = d.operands[k];
    const nlohmann::json& oj = j["operands"][k];
    const std::string key = ".operands[" + std::to_string(k) + "]";
    if (a.operand != b.operand)
      return differs(key + ".operand", quoted(a.operand), quoted(b.operand));
    if (b.tensor >= 0 && oj.contains("tensor") &&
        oj["tensor"].get<std::string>() != net.tensor(b.tensor).name)
      return differs(key + ".tensor", quoted(oj["tensor"].get<std::string>()),
                     quoted(net.tensor(b.tensor).name));
    if (a.residency != b.residency)
      return differs(key + ".residency", quoted(to_string(a.residency)),
                     quoted(to_string(b.residency)));
    if (oj.contains("double_buffered") && a.double_buffered != b.double_buffered)
      return differs(key + ".double_buffered", a.double_buffered ? "true" : "false",
                     b.double_buffered ? "true" : "false");
    if (oj.contains("store") && a.store != b.store)
      return differs(key + ".store", quoted(a.store), b.store.empty() ? "none" : quoted(b.store));
    if (oj.contains("buffers") && a.buffers != b.buffers)
      return differs(key + ".buffers", joined(a.buffers), joined(b.buffers));
  }
  if (j.contains("accumulator") && w.accumulator != d.accumulator)
    return differs(".accumulator", quoted(w.accumulator), quoted(d.accumulator));
  return "";
}

}  // namespace

Status compare_mappings(const Net& net, const GroupMapping& written, const GroupMapping& derived,
                        const nlohmann::json& j, const std::string& where) {
  const auto differs = [&](const std::string& key, const std::string& w, const std::string& d) {
    return fail(where + ": mapping." + key + ": written " + w + ", the model gives " + d);
  };
  if (written.nest != derived.nest)
    return differs("nest", quoted(to_string(written.nest)), quoted(to_string(derived.nest)));
  if (written.nest == LoopNest::DramView) return {};
  if (j.contains("halo") && written.halo != derived.halo)
    return differs("halo", quoted(to_string(written.halo)), quoted(to_string(derived.halo)));
  if (written.ops.size() != derived.ops.size())
    return differs("ops", std::to_string(written.ops.size()) + " ops",
                   std::to_string(derived.ops.size()));
  for (size_t pos = 0; pos < written.ops.size(); ++pos) {
    const std::string d = op_difference(net, written.ops[pos], derived.ops[pos], j["ops"][pos]);
    if (!d.empty())
      return fail(where + ": mapping.ops[" + std::to_string(pos) + "] ('" +
                  net.op(derived.ops[pos].op).name + "')" + d);
  }
  return {};
}

}  // namespace tessel::sched
