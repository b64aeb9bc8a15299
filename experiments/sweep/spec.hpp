// The sweep spec: a base hardware config, models, policies and axes; enumerates design points.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"

namespace tessel::sweep {

/// One assignment of every axis, resolved against the base config. Shared by all points that
/// differ only in model or policy.
struct ResolvedConfig {
  nlohmann::ordered_json axes;  ///< axis key -> value, in the spec's axis order
  /// The base hw config with the axis overrides applied, validated by the configs loader;
  /// nullopt when the validator rejected it (then `hw_invalid_reason` says why, and every
  /// point of this config is recorded as invalid with that reason).
  std::optional<HwConfig> hw;
  std::string hw_invalid_reason;
  /// The spec's `quantization` section with quantization.* axes applied, e.g. {"bits": 8};
  /// `bits` also sets matrix.input_bits and matrix.weight_bits of `hw`.
  nlohmann::json quantization;
  /// stable_hash_hex of {hw content_hash, quantization}: the same hardware spelt differently
  /// ("64KiB" or 65536) hashes the same. For a rejected config, the hash of its YAML tree.
  std::string config_hash;
};

/// One design point: a resolved config, a model and a policy.
struct SweepPoint {
  std::size_t index = 0;  ///< position in the spec's deterministic enumeration order
  std::string id;  ///< stable_hash_hex(config_hash, model, policy, mode, objective): survives edits
  std::string model;
  std::string policy;
  std::string objective;  ///< what the point's policy minimises (one of the spec's objectives)
  std::shared_ptr<const ResolvedConfig> config;
};

/// How a `models:` entry is built. A plain name (`resnet50`, a .onnx/.tir/.json path) has the
/// defaults; a mapping entry (`{zoo: bert_base, layers: 1, seq: 128}`) sets the zoo's options,
/// as `--batch`, `--seq`, `--kv-length` and `--layers` do on the command line.
struct ModelSource {
  std::string source;          ///< the zoo name or model file (the `zoo:` key of a mapping)
  std::int64_t batch = 1;      ///< `batch:` (zoo models' N)
  std::int64_t sequence = 0;   ///< `seq:` (0: the model's default)
  std::int64_t kv_length = 0;  ///< `kv_length:` (0: the model's default)
  std::int64_t layers = 0;     ///< `layers:` (0: the model's default)
  /// The options that differ from the defaults, as `layers=1,seq=128` (empty for a plain name);
  /// joins the point ids, so that results of other options are never taken for these.
  std::string options_text() const;
};

/// A parsed, validated sweep spec and its enumerated points.
///
/// Enumeration order: models (outermost), then axis combinations (axis groups combined as a
/// product, first group outermost; within a `product` group the first key is outermost), then
/// policies, then objectives (innermost; a policy that does not take an energy objective has no
/// point for it).
struct SweepSpec {
  std::filesystem::path file;  ///< absolute path of the spec (children and shards re-read it)
  std::string name;
  std::string mode;  ///< "analytic", "sim" or "synthetic" (a test fixture, see README)
  /// What search policies minimise, each point under one (spec key `objective`, one name, or
  /// `objectives`, a list): "bytes" (DRAM, default), "latency", "energy", "edp". The energy
  /// objectives pair only with the policies that take them (kEnergyObjectivePolicies).
  std::vector<std::string> objectives;
  /// Spec key `tiles_2d`: MapSpaceFeatures::column_tiles_every_row of optimal, opfusion and
  /// layerwise (default true, as `tessel schedule`; false: `--no-2d-tiles`).
  bool tiles_2d = true;
  std::filesystem::path hw_file;  ///< base hw config file; empty when given inline
  /// The models' labels (SweepPoint::model, the results' `model`): a plain entry's name, or a
  /// mapping entry's `name:` (default: the zoo name and its options, `bert_base-layers1-seq128`).
  std::vector<std::string> models;
  /// How each label is built (ModelSource), keyed by label; every label has an entry.
  std::map<std::string, ModelSource, std::less<>> model_sources;
  std::vector<std::string> policies;
  std::vector<std::string> axis_keys;  ///< every axis key, in spec order
  YAML::Node options;                  ///< the mode's own section (`synthetic:`, `sim:`), or null
  std::vector<SweepPoint> points;
};

/// The policies that take the energy and edp objectives (sched::run_policy refuses the others;
/// tests/sweep/analytic_test.cpp holds the two to each other).
const std::vector<std::string>& energy_objective_policies();

/// Spec keys and their meaning, for did-you-mean and docs.
const std::vector<std::string>& spec_keys();

/// Reads and validates a spec file. Throws InputError with FILE:LINE:COL, the key and a
/// did-you-mean for unknown keys, modes, override paths that are not in the base config, bad
/// value lists or ranges, zip groups of unequal length, and repeated axis keys.
SweepSpec load_spec(const std::filesystem::path& file);

/// As load_spec, from text; `file` names the text in diagnostics and anchors relative paths.
SweepSpec parse_spec(const std::string& text, const std::filesystem::path& file);

}  // namespace tessel::sweep
