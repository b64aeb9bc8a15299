// Reads and writes the `energy:` section of a hardware config (docs/config.md, docs/energy.md).
#include "configs/energy_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "configs/energy_model.hpp"
#include "support/strings.hpp"

namespace tessel {
namespace {

constexpr double kMaxEnergy = 1e9;  // pJ per action (or mW/mm^2): far above any real figure

template <class Items>
std::string names_of(const Items& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + std::string(item.name);
  return out;
}

template <class Items>
std::vector<std::string> name_list(const Items& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.emplace_back(item.name);
  return out;
}

/// What a non-scalar node is, for "expected ..., got <kind>".
std::string kind_of(const YAML::Node& node) {
  if (node.IsNull()) return "nothing (null)";
  return node.IsSequence() ? "a sequence" : "a mapping";
}

/// The known name `text` means when it differs in case only or lacks a node's "nm" ("45NM",
/// "DDR4", "45"); empty when none.
template <class Items>
std::string near_name(const std::string& text, const Items& items) {
  std::string lower;
  for (const char ch : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const auto& item : items)
    if (item.name == lower || item.name == lower + "nm") return std::string(item.name);
  return "";
}

/// Reads a name that must be in `items`; reports an unknown one with the list (and a
/// suggestion when one is close).
template <class Items>
std::optional<std::string> read_name(const EnergyReader& reader, const YAML::Node& node,
                                     const std::string& key_path, const Items& items,
                                     const char* what) {
  if (!node.IsDefined()) return std::nullopt;
  if (!node.IsScalar()) {
    reader.error(node, key_path, std::string("expected a ") + what + " name, got " + kind_of(node));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  for (const auto& item : items)
    if (item.name == text) return text;
  const std::string near = near_name(text, items);
  const std::string suggestion =
      near.empty() ? did_you_mean(text, name_list(items)) : "; did you mean '" + near + "'?";
  reader.error(
      node, key_path,
      std::string("unknown ") + what + " '" + text + "'" +
          (suggestion.empty() ? " (expected one of " + names_of(items) + ")" : suggestion));
  return std::nullopt;
}

/// What the value of energy key `key` should be, for "expected ..., got nothing (null)".
std::string expected_value(const std::string& key) {
  if (key == "technology") return "a technology name";
  if (key == "dram_technology") return "a DRAM technology name";
  if (key == "dram_energy") return "an energy per data unit such as 4pJ/bit";
  return "a number";
}

}  // namespace

const std::vector<std::string>& energy_keys() {
  static const std::vector<std::string> keys = {"technology",
                                                "dram_technology",
                                                "mac_pj",
                                                "sram_read_pj_per_byte",
                                                "sram_write_pj_per_byte",
                                                "dram_pj_per_byte",
                                                "dram_energy",
                                                "vector_op_pj",
                                                "leakage_mw_per_mm2"};
  return keys;
}

Result<double> parse_energy_per_byte(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [number_end, code] = std::from_chars(begin, end, value);
  if (code != std::errc() || !std::isfinite(value))
    return fail(quoted + " is not an energy per data unit such as 4pJ/bit or 32pJ/B");
  if (value < 0) return fail("must be at least 0, got " + quoted);
  std::string_view unit(number_end, static_cast<std::size_t>(end - number_end));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  const auto slash = unit.find('/');
  const std::string_view energy_unit = unit.substr(0, slash);
  const std::string_view data_unit =
      slash == std::string_view::npos ? std::string_view() : unit.substr(slash + 1);
  double pj = 0;
  if (energy_unit == "fJ") {
    pj = 1e-3;
  } else if (energy_unit == "pJ") {
    pj = 1;
  } else if (energy_unit == "nJ") {
    pj = 1e3;
  }
  double bytes = 0;
  if (data_unit == "bit" || data_unit == "b") {
    bytes = 1.0 / 8;
  } else if (data_unit == "B" || data_unit == "byte") {
    bytes = 1;
  }
  if (pj == 0 || bytes == 0)
    return fail("unknown unit in " + quoted +
                " (expected <number><fJ|pJ|nJ>/<bit|B>, e.g. 4pJ/bit or 32pJ/B)");
  return value * pj / bytes;
}

std::optional<EnergyConfig> read_energy_section(const YAML::Node& node,
                                                const EnergyReader& reader) {
  const std::string path = "energy";
  if (!reader.check_map(node, path, energy_keys())) return std::nullopt;
  EnergyConfig energy;
  bool ok = true;
  // A key without a value is reported at the key (a null's own mark is the next token's) and
  // then read as absent.
  std::vector<std::string> empty_keys;
  for (const auto& entry : node) {
    if (!entry.second.IsNull()) continue;
    const std::string key = entry.first.Scalar();
    reader.error(entry.first, path + "." + key,
                 "expected " + expected_value(key) + ", got nothing (null)");
    empty_keys.push_back(key);
    ok = false;
  }
  const auto child = [&](const std::string& key) {
    const bool empty = std::find(empty_keys.begin(), empty_keys.end(), key) != empty_keys.end();
    return empty ? YAML::Node(YAML::NodeType::Undefined) : reader.get(node, path, key);
  };
  const YAML::Node technology = child("technology");
  if (technology.IsDefined()) {
    const auto name =
        read_name(reader, technology, "energy.technology", technology_nodes(), "technology");
    ok = ok && name.has_value();
    if (name) energy.technology = *name;
  }
  const YAML::Node dram = child("dram_technology");
  bool dram_named = false;
  if (dram.IsDefined()) {
    const auto name =
        read_name(reader, dram, "energy.dram_technology", dram_technologies(), "DRAM technology");
    ok = ok && name.has_value();
    dram_named = name.has_value();
    if (name) energy.dram_technology = *name;
  }
  const auto number = [&](const std::string& key, std::optional<double>& out) {
    const YAML::Node value = child(key);
    if (!value.IsDefined()) return;
    out = reader.read_number(value, path + "." + key, 0, kMaxEnergy);
    ok = ok && out.has_value();
  };
  number("mac_pj", energy.mac_pj);
  number("sram_read_pj_per_byte", energy.sram_read_pj_per_byte);
  number("sram_write_pj_per_byte", energy.sram_write_pj_per_byte);
  number("dram_pj_per_byte", energy.dram_pj_per_byte);
  number("vector_op_pj", energy.vector_op_pj);
  number("leakage_mw_per_mm2", energy.leakage_mw_per_mm2);
  const YAML::Node dram_energy = child("dram_energy");
  if (dram_energy.IsDefined()) {
    if (child("dram_pj_per_byte").IsDefined()) {
      reader.error(dram_energy, "energy.dram_energy",
                   "give either dram_energy or dram_pj_per_byte, not both");
      ok = false;
    } else if (!dram_energy.IsScalar()) {
      reader.error(dram_energy, "energy.dram_energy",
                   "expected an energy per data unit such as 4pJ/bit, got " + kind_of(dram_energy));
      ok = false;
    } else if (auto parsed = parse_energy_per_byte(dram_energy.Scalar()); !parsed.ok()) {
      reader.error(dram_energy, "energy.dram_energy", parsed.reason());
      ok = false;
    } else if (parsed.value() > kMaxEnergy) {
      reader.error(dram_energy, "energy.dram_energy",
                   "must be at most 1e+09 pJ/B, got '" + dram_energy.Scalar() + "'");
      ok = false;
    } else {
      energy.dram_pj_per_byte = parsed.value();
    }
  }
  // An explicit DRAM figure replaces the kind's: naming a kind beside one would be ignored.
  const bool explicit_dram = dram_energy.IsDefined() || child("dram_pj_per_byte").IsDefined();
  if (dram_named && explicit_dram) {
    reader.error(dram, "energy.dram_technology",
                 std::string("give either dram_technology or an explicit DRAM figure (") +
                     (dram_energy.IsDefined() ? "dram_energy" : "dram_pj_per_byte") +
                     "), not both: the figure would override the kind");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return energy;
}

std::vector<EnergyEntry> energy_entries(const EnergyConfig& energy) {
  std::vector<EnergyEntry> out;
  const EnergyConfig defaults;
  if (energy.technology != defaults.technology)
    out.push_back({"technology", energy.technology, std::nullopt});
  if (energy.dram_technology != defaults.dram_technology)
    out.push_back({"dram_technology", energy.dram_technology, std::nullopt});
  const auto number = [&](const char* key, const std::optional<double>& value) {
    if (value) out.push_back({key, shortest_text(*value), *value});
  };
  number("mac_pj", energy.mac_pj);
  number("sram_read_pj_per_byte", energy.sram_read_pj_per_byte);
  number("sram_write_pj_per_byte", energy.sram_write_pj_per_byte);
  number("dram_pj_per_byte", energy.dram_pj_per_byte);
  number("vector_op_pj", energy.vector_op_pj);
  number("leakage_mw_per_mm2", energy.leakage_mw_per_mm2);
  return out;
}

}  // namespace tessel
