// Overriding hardware-config values by key path ("dram.bandwidth", "scratchpads[0].size") on a
// loaded YAML tree, and a canonical form + stable hash of the resolved tree.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::sweep {

/// One step of a key path: a mapping key or a sequence index.
struct KeyStep {
  std::string key;        ///< mapping key; empty for an index step
  std::size_t index = 0;  ///< sequence index when `key` is empty
};

/// Parses "a.b[2].c" into steps; fails on empty segments, unbalanced brackets or bad indices.
Result<std::vector<KeyStep>> parse_key_path(std::string_view path);

/// Replaces the value at `path` in `root` (which must already exist there: an override changes a
/// config, it never adds keys). The failure message names the first step that does not exist
/// and, for a mistyped mapping key, the closest existing key ("did you mean ...").
Status override_value(YAML::Node& root, std::string_view path, const YAML::Node& value);

/// The YAML tree as JSON with sorted object keys; scalars become integers, floats, booleans or
/// null where they read as such, strings otherwise. Equal trees give byte-equal dumps.
nlohmann::json canonical_json(const YAML::Node& node);

/// A scalar YAML node as JSON (same typing rule as canonical_json).
nlohmann::json scalar_json(const YAML::Node& node);

/// 64-bit FNV-1a of `bytes`, as 16 lower-case hex digits. Stable across runs and platforms.
std::string stable_hash_hex(std::string_view bytes);

}  // namespace tessel::sweep
