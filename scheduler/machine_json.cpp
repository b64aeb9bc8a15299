// JSON form of the scheduler's hardware view, and the check that a schedule's view is a config's.
#include "scheduler/machine_json.hpp"

#include "configs/hw_config.hpp"

#include <set>
#include <stdexcept>
#include <string>

namespace tessel::sched {

using nlohmann::ordered_json;

namespace {

constexpr BufferKind kKinds[4] = {BufferKind::Activations, BufferKind::Weights,
                                  BufferKind::Accumulators, BufferKind::Outputs};

// A malformed key, named by its path; caught in machine_from_json.
struct KeyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The object at `path`, with exactly `keys` and perhaps `optional` ones (a missing or unknown
// key is named).
const nlohmann::json& object_at(const nlohmann::json& j, const std::string& path,
                                std::initializer_list<const char*> keys,
                                std::initializer_list<const char*> optional = {}) {
  if (!j.is_object()) throw KeyError(path + ": must be an object");
  std::set<std::string> known(keys.begin(), keys.end());
  known.insert(optional.begin(), optional.end());
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) throw KeyError(path + "." + key + ": unknown key");
  for (const char* key : keys)
    if (!j.contains(key)) throw KeyError(path + "." + key + ": missing");
  return j;
}

int64_t int_at(const nlohmann::json& j, const std::string& path, const char* key, int64_t min) {
  const auto& v = j.at(key);
  if (!v.is_number_integer())
    throw KeyError(path + "." + key + ": must be an integer, not " + v.dump());
  const auto n = v.get<int64_t>();
  if (n < min)
    throw KeyError(path + "." + key + ": must be at least " + std::to_string(min) + ", not " +
                   std::to_string(n));
  return n;
}

double positive_at(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number() || !(v.get<double>() > 0))
    throw KeyError(path + "." + key + ": must be a positive number, not " + v.dump());
  return v.get<double>();
}

bool bool_at(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_boolean())
    throw KeyError(path + "." + key + ": must be true or false, not " + v.dump());
  return v.get<bool>();
}

std::string name_at(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_string() || v.get<std::string>().empty())
    throw KeyError(path + "." + key + ": must be a non-empty string, not " + v.dump());
  return v.get<std::string>();
}

Machine read_machine(const nlohmann::json& json) {
  const std::string p = "machine";
  const auto& j = object_at(json, p,
                            {"name", "clock_mhz", "matrix", "vector", "element_bytes", "dram",
                             "scratchpads", "scratchpad_for"});
  Machine m;
  m.name = name_at(j, p, "name");
  m.clock_mhz = positive_at(j, p, "clock_mhz");
  const auto& matrix = object_at(
      j.at("matrix"), p + ".matrix",
      {"rows", "cols", "fill_cycles", "drain_cycles", "activation_operands"}, {"weight_load_rows"});
  m.matrix_rows = int_at(matrix, p + ".matrix", "rows", 1);
  m.matrix_cols = int_at(matrix, p + ".matrix", "cols", 1);
  m.matrix_fill_cycles = int_at(matrix, p + ".matrix", "fill_cycles", 0);
  m.matrix_drain_cycles = int_at(matrix, p + ".matrix", "drain_cycles", 0);
  m.activation_operands = bool_at(matrix, p + ".matrix", "activation_operands");
  // Optional: a schedule written before the key existed was made for one row a cycle.
  m.weight_load_rows = matrix.contains("weight_load_rows")
                           ? int_at(matrix, p + ".matrix", "weight_load_rows", 1)
                           : 1;
  const auto& vector = object_at(j.at("vector"), p + ".vector",
                                 {"lanes", "lookup_table", "broadcast_multiply", "row_normalise"});
  m.vector_lanes = int_at(vector, p + ".vector", "lanes", 1);
  m.lookup_table = bool_at(vector, p + ".vector", "lookup_table");
  m.broadcast_multiply = bool_at(vector, p + ".vector", "broadcast_multiply");
  m.row_normalise = bool_at(vector, p + ".vector", "row_normalise");
  const auto& bytes = object_at(j.at("element_bytes"), p + ".element_bytes",
                                {"activations", "weights", "accumulators"});
  m.activation_bytes = int_at(bytes, p + ".element_bytes", "activations", 1);
  m.weight_bytes = int_at(bytes, p + ".element_bytes", "weights", 1);
  m.accumulator_bytes = int_at(bytes, p + ".element_bytes", "accumulators", 1);
  const auto& dram =
      object_at(j.at("dram"), p + ".dram",
                {"bytes_per_cycle", "latency_cycles", "burst_bytes", "max_outstanding"},
                {"mover_bytes_per_cycle"});
  m.dram_bytes_per_cycle = positive_at(dram, p + ".dram", "bytes_per_cycle");
  m.dram_latency_cycles = int_at(dram, p + ".dram", "latency_cycles", 0);
  m.burst_bytes = int_at(dram, p + ".dram", "burst_bytes", 1);
  m.max_outstanding = int_at(dram, p + ".dram", "max_outstanding", 1);
  // Optional: a schedule written before the key existed (session 45) has the config's mover.
  m.dma_mover_bytes = dram.contains("mover_bytes_per_cycle")
                          ? int_at(dram, p + ".dram", "mover_bytes_per_cycle", 1)
                          : dma_mover_bytes_per_cycle(m.burst_bytes);
  const auto& pads = j.at("scratchpads");
  if (!pads.is_array() || pads.empty())
    throw KeyError(p + ".scratchpads: must be a non-empty array");
  for (size_t i = 0; i < pads.size(); ++i) {
    const std::string at = p + ".scratchpads[" + std::to_string(i) + "]";
    const auto& pad = object_at(pads[i], at, {"name", "size"});
    m.scratchpads.push_back({name_at(pad, at, "name"), int_at(pad, at, "size", 1)});
  }
  const auto& homes = object_at(j.at("scratchpad_for"), p + ".scratchpad_for",
                                {"activations", "weights", "accumulators", "outputs"});
  for (int k = 0; k < 4; ++k) {
    const char* kind = to_string(kKinds[k]);
    const int64_t index = int_at(homes, p + ".scratchpad_for", kind, 0);
    if (index >= static_cast<int64_t>(m.scratchpads.size()))
      throw KeyError(p + ".scratchpad_for." + kind + ": scratchpad " + std::to_string(index) +
                     " of " + std::to_string(m.scratchpads.size()));
    m.scratchpad_for[k] = static_cast<int>(index);
  }
  return m;
}

// The first difference between two machine_to_json forms, as "path: schedule made for A, config
// has B"; empty when they are equal.
std::string first_difference(const ordered_json& made, const ordered_json& has,
                             const std::string& path) {
  if (made.is_object() && has.is_object()) {
    for (const auto& [key, value] : made.items()) {
      const std::string d = first_difference(value, has.at(key), path + "." + key);
      if (!d.empty()) return d;
    }
    return {};
  }
  if (made.is_array() && has.is_array()) {
    if (made.size() != has.size())
      return path + ": schedule made for " + std::to_string(made.size()) + " entries, config has " +
             std::to_string(has.size());
    for (size_t i = 0; i < made.size(); ++i) {
      const std::string d = first_difference(made[i], has[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return {};
  }
  if (made == has) return {};
  return path + ": schedule made for " + made.dump() + ", config has " + has.dump();
}

}  // namespace

ordered_json machine_to_json(const Machine& m) {
  ordered_json j;
  j["name"] = m.name;
  j["clock_mhz"] = m.clock_mhz;
  j["matrix"] = {{"rows", m.matrix_rows},
                 {"cols", m.matrix_cols},
                 {"fill_cycles", m.matrix_fill_cycles},
                 {"drain_cycles", m.matrix_drain_cycles},
                 {"activation_operands", m.activation_operands},
                 {"weight_load_rows", m.weight_load_rows}};
  j["vector"] = {{"lanes", m.vector_lanes},
                 {"lookup_table", m.lookup_table},
                 {"broadcast_multiply", m.broadcast_multiply},
                 {"row_normalise", m.row_normalise}};
  j["element_bytes"] = {{"activations", m.activation_bytes},
                        {"weights", m.weight_bytes},
                        {"accumulators", m.accumulator_bytes}};
  j["dram"] = {{"bytes_per_cycle", m.dram_bytes_per_cycle},
               {"latency_cycles", m.dram_latency_cycles},
               {"burst_bytes", m.burst_bytes},
               {"max_outstanding", m.max_outstanding},
               {"mover_bytes_per_cycle", m.dma_mover_bytes}};
  ordered_json pads = ordered_json::array();
  for (const auto& pad : m.scratchpads)
    pads.push_back({{"name", pad.name}, {"size", pad.size_bytes}});
  j["scratchpads"] = pads;
  ordered_json homes = ordered_json::object();
  for (int k = 0; k < 4; ++k) homes[to_string(kKinds[k])] = m.scratchpad_for[k];
  j["scratchpad_for"] = homes;
  return j;
}

Result<Machine> machine_from_json(const nlohmann::json& json) {
  try {
    return read_machine(json);
  } catch (const KeyError& e) {
    return fail(e.what());
  }
}

Status check_machine_json(const nlohmann::json& json, const Machine& config_view) {
  auto made = machine_from_json(json);
  if (!made.ok()) return made.failure();
  // The hardware first, the name last: a name alone differs only for a renamed config.
  auto made_json = machine_to_json(made.value());
  auto has_json = machine_to_json(config_view);
  const ordered_json made_name = made_json["name"], has_name = has_json["name"];
  made_json.erase("name");
  has_json.erase("name");
  std::string d = first_difference(made_json, has_json, "machine");
  if (d.empty()) d = first_difference(made_name, has_name, "machine.name");
  if (!d.empty()) return fail(d);
  return {};
}

}  // namespace tessel::sched
