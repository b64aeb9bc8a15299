// The `energy:` section of a hardware config: reading it from YAML and writing it back (used by
// hw_config_loader.cpp and hw_config.cpp only; yaml-cpp stays private to configs/).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"

namespace tessel {

/// What the energy reader needs of the loader's validator: located errors, mapping checks
/// (unknown and duplicate keys) and number reading, each recording its own diagnostic.
struct EnergyReader {
  std::function<void(const YAML::Node& node, const std::string& key_path, std::string message)>
      error;
  std::function<bool(const YAML::Node& map, const std::string& path,
                     const std::vector<std::string>& allowed)>
      check_map;
  /// The value of `key` in `map`, or an undefined node (energy keys are all optional).
  std::function<YAML::Node(const YAML::Node& map, const std::string& path, const std::string& key)>
      get;
  /// A number >= min and <= max, or nullopt after a diagnostic (nullopt, silently, when absent).
  std::function<std::optional<double>(const YAML::Node& node, const std::string& key_path,
                                      double min, double max)>
      read_number;
};

/// The keys of the `energy:` section, in schema order.
const std::vector<std::string>& energy_keys();

/// Reads the `energy:` mapping `node`; nullopt when anything in it was wrong (every problem is
/// reported through `reader`).
std::optional<EnergyConfig> read_energy_section(const YAML::Node& node, const EnergyReader& reader);

/// Parses an energy per unit of data: a non-negative number, a unit among fJ, pJ, nJ and a
/// denominator among bit, b, B, byte ("4pJ/bit", "32pJ/B").
/// Returns pJ per byte.
Result<double> parse_energy_per_byte(std::string_view text);

/// One present entry of a section, in schema order: its key and its YAML text; `number` when
/// the value is a number (canonical JSON writes those as numbers).
struct EnergyEntry {
  std::string key;
  std::string text;
  std::optional<double> number;
};

/// The entries to_yaml and the canonical JSON write: technology and DRAM kind when not the
/// defaults, then every override that is set. A section with the four explicit pre-model keys
/// writes exactly those four (so its content hash is what it was before the model).
std::vector<EnergyEntry> energy_entries(const EnergyConfig& energy);

}  // namespace tessel
