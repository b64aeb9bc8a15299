// Loads a hardware config from YAML and validates it, collecting every problem with its location.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "configs/energy_config.hpp"
#include "configs/hw_config.hpp"
#include "configs/yaml_documents.hpp"
#include "support/files.hpp"
#include "support/strings.hpp"
#include "support/units.hpp"

namespace tessel {
namespace {

// The schema's keys, in the order the docs and to_yaml list them.
const std::vector<std::string> kTopKeys = {"name",   "description", "clock_mhz", "matrix",
                                           "vector", "scratchpads", "dram",      "queues",
                                           "energy", "fpga"};
const std::vector<std::string> kMatrixKeys = {
    "rows",        "cols",         "input_bits",          "weight_bits",     "accumulator_bits",
    "fill_cycles", "drain_cycles", "activation_operands", "weight_load_rows"};
const std::vector<std::string> kVectorKeys = {"lanes", "lookup_table", "row_reduce",
                                              "broadcast_multiply", "row_normalise"};
const std::vector<std::string> kScratchpadKeys = {"name", "size", "banks", "port_width_bytes",
                                                  "holds"};
const std::vector<std::string> kDramKeys = {"bandwidth", "latency_ns", "burst_bytes",
                                            "max_outstanding_requests"};
const std::vector<std::string> kQueueKeys = {"instruction_queue_depth", "token_fifo_depth"};
const std::vector<std::string> kFpgaKeys = {"part", "clock_mhz"};

std::string fixed_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index_path(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

/// did_you_mean, extended to one swapped pair of neighbouring letters ("rwos" -> "rows"),
/// the commonest typo, which plain edit distance counts as two edits.
std::string suggest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string suggestion = did_you_mean(word, candidates);
  if (!suggestion.empty()) return suggestion;
  for (std::size_t i = 0; i + 1 < word.size(); ++i) {
    std::string swapped = word;
    std::swap(swapped[i], swapped[i + 1]);
    if (std::find(candidates.begin(), candidates.end(), swapped) != candidates.end()) {
      return "; did you mean '" + swapped + "'?";
    }
  }
  return "";
}

std::string node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

bool is_power_of_two(std::int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

/// Collects diagnostics while walking the document. Values come back as optionals: empty when
/// the value was missing or wrong (and a diagnostic was recorded).
class Validator {
 public:
  Validator(std::string file, std::map<std::string, std::string> overridden)
      : file_(std::move(file)), overridden_(std::move(overridden)) {}

  std::vector<Diagnostic> take_diagnostics() { return std::move(diagnostics_); }
  bool failed() const { return !diagnostics_.empty(); }

  SourceLocation locate(const YAML::Node& node, const std::string& key_path) const {
    for (const auto& [prefix, assignment] : overridden_) {
      if (key_path == prefix || key_path.rfind(prefix + ".", 0) == 0 ||
          key_path.rfind(prefix + "[", 0) == 0) {
        return {"override " + assignment, 0, 0};
      }
    }
    const YAML::Mark mark = node.Mark();
    if (mark.is_null() || mark.line < 0) return {file_, 0, 0};
    return {file_, mark.line + 1, mark.column + 1};
  }

  void error(const YAML::Node& node, const std::string& key_path, std::string message) {
    diagnostics_.push_back({locate(node, key_path), key_path, std::move(message)});
  }
  void error_at(SourceLocation location, const std::string& key_path, std::string message) {
    diagnostics_.push_back({std::move(location), key_path, std::move(message)});
  }

  /// Checks that `node` is a mapping whose keys are all in `allowed` and appear once. Returns
  /// false (after a diagnostic) when it is not a mapping.
  bool check_map(const YAML::Node& node, const std::string& path,
                 const std::vector<std::string>& allowed) {
    if (!node.IsMap()) {
      error(node, path, "expected a mapping, got " + node_kind(node));
      return false;
    }
    std::map<std::string, int> first_line;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        error(key, path, "keys must be plain strings, got " + node_kind(key));
        continue;
      }
      const std::string key_path = child_path(path, key.Scalar());
      if (std::find(allowed.begin(), allowed.end(), key.Scalar()) == allowed.end()) {
        const std::string suggestion = suggest(key.Scalar(), allowed);
        if (!suggestion.empty()) {
          suggested_.insert(child_path(
              path, suggestion.substr(suggestion.find('\'') + 1,
                                      suggestion.rfind('\'') - suggestion.find('\'') - 1)));
        }
        error(key, key_path,
              "unknown key" +
                  (suggestion.empty() ? " (expected one of " + join(allowed) + ")" : suggestion));
        continue;
      }
      const auto [it, inserted] = first_line.emplace(key.Scalar(), key.Mark().line + 1);
      if (!inserted) {
        error(key, key_path, "duplicate key (first at line " + std::to_string(it->second) + ")");
      }
    }
    return true;
  }

  /// The value of `key` in `map`, or an undefined node (with a diagnostic when `required`).
  YAML::Node get(const YAML::Node& map, const std::string& path, const std::string& key,
                 bool required) {
    for (const auto& entry : map) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.second;
    }
    // A misspelt key already reported with this key as its suggestion is not missing twice.
    if (required && suggested_.count(child_path(path, key)) == 0) {
      error(map, child_path(path, key), "missing required key");
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  std::optional<std::string> read_string(const YAML::Node& node, const std::string& path) {
    if (!node.IsDefined()) return std::nullopt;
    if (!node.IsScalar()) {
      error(node, path, "expected a string, got " + node_kind(node));
      return std::nullopt;
    }
    // Free text that is not UTF-8 (a Latin-1 description) is kept with U+FFFD in place of its
    // bad bytes: what to_yaml and the JSON reports write then reads back the same.
    return to_valid_utf8(node.Scalar());
  }

  std::optional<std::string> read_identifier(const YAML::Node& node, const std::string& path,
                                             bool allow_dot) {
    auto text = read_string(node, path);
    if (!text) return std::nullopt;
    const bool valid = !text->empty() && std::all_of(text->begin(), text->end(), [&](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
             (allow_dot && c == '.');
    });
    if (!valid) {
      error(node, path,
            "'" + *text + "' is not a valid name (use letters, digits, '_', '-'" +
                (allow_dot ? ", '.'" : "") + ")");
      return std::nullopt;
    }
    return text;
  }

  /// A boolean written `true` or `false` (YAML 1.2's core schema; no yes/no/on/off).
  std::optional<bool> read_flag(const YAML::Node& node, const std::string& path) {
    if (!node.IsDefined()) return std::nullopt;
    if (node.IsScalar() && node.Tag() != "!" &&
        (node.Scalar() == "true" || node.Scalar() == "false"))
      return node.Scalar() == "true";
    error(node, path,
          "expected true or false, got " +
              (node.IsScalar() ? "'" + node.Scalar() + "'" : node_kind(node)));
    return std::nullopt;
  }

  std::optional<std::int64_t> read_int(const YAML::Node& node, const std::string& path,
                                       std::int64_t min, std::int64_t max) {
    if (!node.IsDefined()) return std::nullopt;
    if (!node.IsScalar() || node.Tag() == "!") {
      error(node, path,
            "expected an integer, got " + (node.IsScalar() ? "the string " : std::string()) +
                node_kind(node));
      return std::nullopt;
    }
    const std::string& text = node.Scalar();
    std::int64_t value = 0;
    const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (code != std::errc() || end != text.data() + text.size()) {
      error(node, path, "expected an integer, got " + node_kind(node));
      return std::nullopt;
    }
    if (value < min || value > max) {
      error(node, path,
            "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                text);
      return std::nullopt;
    }
    return value;
  }

  /// A number; `exclusive_min` demands value > min, otherwise value >= min.
  std::optional<double> read_number(const YAML::Node& node, const std::string& path, double min,
                                    bool exclusive_min, double max) {
    if (!node.IsDefined()) return std::nullopt;
    if (!node.IsScalar() || node.Tag() == "!") {
      error(node, path,
            "expected a number, got " + (node.IsScalar() ? "the string " : std::string()) +
                node_kind(node));
      return std::nullopt;
    }
    const std::string& text = node.Scalar();
    double value = 0;
    const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (code != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
      error(node, path, "expected a number, got " + node_kind(node));
      return std::nullopt;
    }
    const bool too_small = exclusive_min ? !(value > min) : value < min;
    if (too_small) {
      std::ostringstream bound;
      bound << min;
      error(node, path,
            std::string("must be ") + (exclusive_min ? "greater than " : "at least ") +
                bound.str() + ", got " + text);
      return std::nullopt;
    }
    if (value > max) {
      std::ostringstream bound;
      bound << max;
      error(node, path, "must be at most " + bound.str() + ", got " + text);
      return std::nullopt;
    }
    return value;
  }

  std::optional<std::int64_t> read_size(const YAML::Node& node, const std::string& path) {
    if (!node.IsDefined()) return std::nullopt;
    if (!node.IsScalar()) {
      error(node, path, "expected a size such as 768KiB, got " + node_kind(node));
      return std::nullopt;
    }
    auto bytes = units::parse_size_bytes(node.Scalar());
    if (!bytes) {
      error(node, path, bytes.reason());
      return std::nullopt;
    }
    if (bytes.value() == 0) {
      error(node, path, "must be greater than 0 bytes, got " + node.Scalar());
      return std::nullopt;
    }
    if (bytes.value() > kMaxScratchpadBytes) {
      error(node, path,
            "must be at most 1GiB (" + std::to_string(kMaxScratchpadBytes) +
                " bytes, the simulator and RTL hold every scratchpad in memory), got " +
                node.Scalar());
      return std::nullopt;
    }
    return bytes.value();
  }

  std::optional<double> read_bandwidth(const YAML::Node& node, const std::string& path) {
    if (!node.IsDefined()) return std::nullopt;
    if (!node.IsScalar()) {
      error(node, path, "expected a bandwidth such as 1.5GB/s, got " + node_kind(node));
      return std::nullopt;
    }
    auto bytes_per_second = units::parse_bandwidth_bytes_per_second(node.Scalar());
    if (!bytes_per_second) {
      error(node, path, bytes_per_second.reason());
      return std::nullopt;
    }
    if (!(bytes_per_second.value() > 0)) {
      error(node, path, "must be greater than 0 B/s, got " + node.Scalar());
      return std::nullopt;
    }
    return bytes_per_second.value();
  }

  std::optional<int> read_power_of_two(const YAML::Node& node, const std::string& path,
                                       std::int64_t max) {
    auto value = read_int(node, path, 1, max);
    if (!value) return std::nullopt;
    if (!is_power_of_two(*value)) {
      error(node, path, "must be a power of two, got " + std::to_string(*value));
      return std::nullopt;
    }
    return static_cast<int>(*value);
  }

  std::optional<int> read_bits(const YAML::Node& node, const std::string& path) {
    if (!node.IsDefined()) return std::nullopt;
    auto value = read_int(node, path, std::numeric_limits<std::int64_t>::min(),
                          std::numeric_limits<std::int64_t>::max());
    if (!value) return std::nullopt;
    if (*value != 8 && *value != 16) {
      error(node, path, "must be 8 or 16, got " + std::to_string(*value));
      return std::nullopt;
    }
    return static_cast<int>(*value);
  }

 private:
  std::string file_;
  std::map<std::string, std::string> overridden_;
  std::set<std::string> suggested_;  // key paths offered as "did you mean" so far
  std::vector<Diagnostic> diagnostics_;
};

std::optional<int> narrow(std::optional<std::int64_t> value) {
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

void read_matrix(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  const std::string path = "matrix";
  if (!v.check_map(node, path, kMatrixKeys)) {
    complete = false;
    return;
  }
  auto& m = config.matrix;
  const auto rows = narrow(v.read_int(v.get(node, path, "rows", true), "matrix.rows", 1, 4096));
  const auto cols = narrow(v.read_int(v.get(node, path, "cols", true), "matrix.cols", 1, 4096));
  const auto input_bits = v.read_bits(v.get(node, path, "input_bits", true), "matrix.input_bits");
  const auto weight_bits =
      v.read_bits(v.get(node, path, "weight_bits", true), "matrix.weight_bits");
  const YAML::Node accumulator_node = v.get(node, path, "accumulator_bits", true);
  auto accumulator_bits = narrow(v.read_int(accumulator_node, "matrix.accumulator_bits", 16, 64));
  if (accumulator_bits && *accumulator_bits % 8 != 0) {
    v.error(accumulator_node, "matrix.accumulator_bits",
            "must be a multiple of 8, got " + std::to_string(*accumulator_bits));
    accumulator_bits.reset();
  }
  // One product must fit; sums that leave the accumulator are caught by the executors'
  // overflow checks (docs/quantization.md), not by a config rule.
  if (accumulator_bits && input_bits && weight_bits) {
    const int needed = *input_bits + *weight_bits;
    if (*accumulator_bits < needed) {
      v.error(accumulator_node, "matrix.accumulator_bits",
              std::to_string(*accumulator_bits) + " bits is narrower than needed: a " +
                  std::to_string(*input_bits) + "-bit x " + std::to_string(*weight_bits) +
                  "-bit product needs " + std::to_string(needed) + " bits");
      accumulator_bits.reset();
    }
  }
  const YAML::Node fill = v.get(node, path, "fill_cycles", false);
  const YAML::Node drain = v.get(node, path, "drain_cycles", false);
  const auto fill_cycles = narrow(v.read_int(fill, "matrix.fill_cycles", 0, 1'000'000));
  const auto drain_cycles = narrow(v.read_int(drain, "matrix.drain_cycles", 0, 1'000'000));
  const YAML::Node operands = v.get(node, path, "activation_operands", false);
  const auto activation_operands = v.read_flag(operands, "matrix.activation_operands");
  // An activation held in the array sits in the weight registers: they must be as wide.
  if (activation_operands.value_or(false) && input_bits && weight_bits &&
      *weight_bits < *input_bits) {
    v.error(operands, "matrix.activation_operands",
            "needs weight_bits >= input_bits (an activation operand is held in the weight "
            "registers), got " +
                std::to_string(*weight_bits) + " < " + std::to_string(*input_bits));
    complete = false;
    return;
  }
  // A block loads at most one row (column) a cycle per array row (column): wider is no faster.
  const YAML::Node load_rows = v.get(node, path, "weight_load_rows", false);
  const auto weight_load_rows = narrow(v.read_int(load_rows, "matrix.weight_load_rows", 1, 4096));
  if (weight_load_rows && rows && cols && *weight_load_rows > std::max(*rows, *cols)) {
    v.error(load_rows, "matrix.weight_load_rows",
            std::to_string(*weight_load_rows) + " rows a cycle is more than the array's " +
                std::to_string(std::max(*rows, *cols)) + " (a block loads in one cycle at " +
                std::to_string(std::max(*rows, *cols)) + ")");
    complete = false;
    return;
  }
  if (!rows || !cols || !input_bits || !weight_bits || !accumulator_bits ||
      (fill.IsDefined() && !fill_cycles) || (drain.IsDefined() && !drain_cycles) ||
      (operands.IsDefined() && !activation_operands) ||
      (load_rows.IsDefined() && !weight_load_rows)) {
    complete = false;
    return;
  }
  m.rows = *rows;
  m.cols = *cols;
  m.input_bits = *input_bits;
  m.weight_bits = *weight_bits;
  m.accumulator_bits = *accumulator_bits;
  m.fill_cycles = fill_cycles.value_or(*rows);
  m.drain_cycles = drain_cycles.value_or(*cols);
  m.activation_operands = activation_operands.value_or(false);
  m.weight_load_rows = weight_load_rows.value_or(1);
}

/// One scratchpad plus where its fields were, for the cross-field checks.
struct ScratchpadRead {
  ScratchpadConfig config;
  YAML::Node name_node;
  YAML::Node size_node;
  bool complete = true;
};

ScratchpadRead read_scratchpad(Validator& v, const YAML::Node& node, const std::string& path) {
  ScratchpadRead read;
  if (!v.check_map(node, path, kScratchpadKeys)) {
    read.complete = false;
    return read;
  }
  read.name_node = v.get(node, path, "name", true);
  read.size_node = v.get(node, path, "size", true);
  const auto name = v.read_identifier(read.name_node, child_path(path, "name"), false);
  const auto size = v.read_size(read.size_node, child_path(path, "size"));
  const auto banks =
      v.read_power_of_two(v.get(node, path, "banks", true), child_path(path, "banks"), 1024);
  const auto port_width = v.read_power_of_two(v.get(node, path, "port_width_bytes", true),
                                              child_path(path, "port_width_bytes"), 4096);
  const YAML::Node holds_node = v.get(node, path, "holds", true);
  const std::string holds_path = child_path(path, "holds");
  bool holds_ok = holds_node.IsDefined();
  std::vector<DataKind> holds;
  if (holds_node.IsDefined() && !holds_node.IsSequence()) {
    v.error(holds_node, holds_path,
            "expected a sequence of data kinds (activations, weights, accumulators, outputs), "
            "got " +
                node_kind(holds_node));
    holds_ok = false;
  } else if (holds_node.IsDefined() && holds_node.size() == 0) {
    v.error(holds_node, holds_path, "must list at least one data kind");
    holds_ok = false;
  } else if (holds_node.IsDefined()) {
    std::vector<std::string> kind_names;
    for (DataKind kind : kAllDataKinds) kind_names.emplace_back(to_string(kind));
    for (std::size_t i = 0; i < holds_node.size(); ++i) {
      const YAML::Node item = holds_node[i];
      const std::string item_path = index_path(holds_path, i);
      const auto text = v.read_string(item, item_path);
      if (!text) {
        holds_ok = false;
        continue;
      }
      const auto kind = data_kind_from_string(*text);
      if (!kind) {
        const std::string suggestion = suggest(*text, kind_names);
        v.error(
            item, item_path,
            "unknown data kind '" + *text + "'" +
                (suggestion.empty() ? " (expected one of " + join(kind_names) + ")" : suggestion));
        holds_ok = false;
      } else if (std::find(holds.begin(), holds.end(), *kind) != holds.end()) {
        v.error(item, item_path, "'" + *text + "' is listed twice");
        holds_ok = false;
      } else {
        holds.push_back(*kind);
      }
    }
  }
  if (!name || !size || !banks || !port_width || !holds_ok) {
    read.complete = false;
    return read;
  }
  std::sort(holds.begin(), holds.end());
  read.config = {*name, *size, *banks, *port_width, std::move(holds)};
  return read;
}

void read_scratchpads(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  const std::string path = "scratchpads";
  if (!node.IsSequence()) {
    v.error(node, path, "expected a sequence of scratchpads, got " + node_kind(node));
    complete = false;
    return;
  }
  if (node.size() == 0) {
    v.error(node, path, "must list at least one scratchpad");
    complete = false;
    return;
  }
  if (node.size() > kMaxScratchpads) {
    v.error(node, path,
            "lists " + std::to_string(node.size()) + " scratchpads, at most " +
                std::to_string(kMaxScratchpads) + " are supported");
    complete = false;
    return;
  }
  std::vector<ScratchpadRead> reads;
  for (std::size_t i = 0; i < node.size(); ++i) {
    reads.push_back(read_scratchpad(v, node[i], index_path(path, i)));
  }
  std::map<std::string, int> first_line;
  bool all_complete = true;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const auto& read = reads[i];
    if (!read.complete) {
      all_complete = false;
      continue;
    }
    const std::string entry_path = index_path(path, i);
    const auto& pad = read.config;
    const auto [it, inserted] = first_line.emplace(pad.name, read.name_node.Mark().line + 1);
    if (!inserted) {
      v.error(read.name_node, child_path(entry_path, "name"),
              "duplicate scratchpad name '" + pad.name + "' (first at line " +
                  std::to_string(it->second) + ")");
      all_complete = false;
    }
    const std::int64_t row_bytes = std::int64_t{pad.banks} * pad.port_width_bytes;
    if (pad.size_bytes % row_bytes != 0) {
      v.error(read.size_node, child_path(entry_path, "size"),
              std::to_string(pad.size_bytes) + " bytes is not a multiple of banks x " +
                  "port_width_bytes = " + std::to_string(pad.banks) + " x " +
                  std::to_string(pad.port_width_bytes) + " = " + std::to_string(row_bytes));
      all_complete = false;
    }
  }
  if (!all_complete) {
    complete = false;
    return;
  }
  for (const auto& read : reads) config.scratchpads.push_back(read.config);
}

void read_dram(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  const std::string path = "dram";
  if (!v.check_map(node, path, kDramKeys)) {
    complete = false;
    return;
  }
  const auto bandwidth = v.read_bandwidth(v.get(node, path, "bandwidth", true), "dram.bandwidth");
  const auto latency =
      v.read_number(v.get(node, path, "latency_ns", true), "dram.latency_ns", 0, false, 1e6);
  const auto burst =
      v.read_power_of_two(v.get(node, path, "burst_bytes", true), "dram.burst_bytes", 65536);
  const auto outstanding = narrow(v.read_int(v.get(node, path, "max_outstanding_requests", true),
                                             "dram.max_outstanding_requests", 1, 1 << 20));
  if (!bandwidth || !latency || !burst || !outstanding) {
    complete = false;
    return;
  }
  config.dram = {*bandwidth, *latency, *burst, *outstanding};
}

void read_queues(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  const std::string path = "queues";
  if (!v.check_map(node, path, kQueueKeys)) {
    complete = false;
    return;
  }
  const auto instructions = narrow(v.read_int(v.get(node, path, "instruction_queue_depth", true),
                                              "queues.instruction_queue_depth", 1, 65536));
  const auto tokens = narrow(
      v.read_int(v.get(node, path, "token_fifo_depth", true), "queues.token_fifo_depth", 1, 65536));
  if (!instructions || !tokens) {
    complete = false;
    return;
  }
  config.queues = {*instructions, *tokens};
}

void read_energy(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  // The section's keys and rules live in energy_config.cpp (docs/energy.md).
  EnergyReader reader;
  reader.error = [&v](const YAML::Node& n, const std::string& key_path, std::string message) {
    v.error(n, key_path, std::move(message));
  };
  reader.check_map = [&v](const YAML::Node& map, const std::string& path,
                          const std::vector<std::string>& allowed) {
    return v.check_map(map, path, allowed);
  };
  reader.get = [&v](const YAML::Node& map, const std::string& path, const std::string& key) {
    return v.get(map, path, key, false);
  };
  reader.read_number = [&v](const YAML::Node& n, const std::string& key_path, double min,
                            double max) { return v.read_number(n, key_path, min, false, max); };
  config.energy = read_energy_section(node, reader);
  if (!config.energy) complete = false;
}

void read_fpga(Validator& v, const YAML::Node& node, HwConfig& config, bool& complete) {
  const std::string path = "fpga";
  if (!v.check_map(node, path, kFpgaKeys)) {
    complete = false;
    return;
  }
  const YAML::Node part_node = v.get(node, path, "part", true);
  auto part = v.read_string(part_node, "fpga.part");
  if (part && part->empty()) {
    v.error(part_node, "fpga.part", "must not be empty");
    part.reset();
  }
  const auto clock =
      v.read_number(v.get(node, path, "clock_mhz", true), "fpga.clock_mhz", 0, true, 100000);
  if (!part || !clock) {
    complete = false;
    return;
  }
  config.fpga = FpgaTargetConfig{*part, *clock};
}

/// Rules that span sections: every kind has a home, and each scratchpad holds one tile of what
/// it may hold.
void check_cross_fields(Validator& v, const YAML::Node& root, HwConfig& config, bool& complete) {
  const YAML::Node pads = v.get(root, "", "scratchpads", false);
  for (DataKind kind : kAllDataKinds) {
    if (config.scratchpads_holding(kind).empty()) {
      v.error(pads, "scratchpads", "no scratchpad may hold " + std::string(to_string(kind)));
      complete = false;
    }
  }
  for (std::size_t i = 0; i < config.scratchpads.size(); ++i) {
    const auto& pad = config.scratchpads[i];
    std::int64_t needed = 0;
    std::string terms;
    for (DataKind kind : pad.holds) {
      needed += config.matrix.tile_bytes(kind);
      terms += (terms.empty() ? "" : " + ") + std::string(to_string(kind)) + " " +
               std::to_string(config.matrix.tile_bytes(kind)) + " B";
    }
    if (pad.holds.size() > 1) terms += " = " + std::to_string(needed) + " B";
    if (pad.size_bytes < needed) {
      const std::string path = child_path(index_path("scratchpads", i), "size");
      v.error(pads[i]["size"], path,
              std::to_string(pad.size_bytes) + " bytes cannot hold one " +
                  std::to_string(config.matrix.rows) + "x" + std::to_string(config.matrix.cols) +
                  " matrix tile of what it may hold: " + terms);
      complete = false;
    }
  }
}

/// The DRAM rate's documented range (kMinDramBytesPerCycle, kMaxDramBytesPerSecond): cycles
/// computed from bytes must not wrap.
void check_dram_rate(Validator& v, const YAML::Node& node, const HwConfig& config, bool& complete) {
  const double bandwidth = config.dram.bandwidth_bytes_per_second;
  if (bandwidth > kMaxDramBytesPerSecond) {
    v.error(node, "dram.bandwidth",
            "must be at most 1PB/s (1e15 B/s), got " + units::format_bandwidth(bandwidth));
    complete = false;
    return;
  }
  const double per_cycle = config.dram_bytes_per_cycle();
  if (per_cycle < kMinDramBytesPerCycle) {
    std::ostringstream text;
    text << per_cycle;
    v.error(node, "dram.bandwidth",
            units::format_bandwidth(bandwidth) + " at " + fixed_text(config.clock_mhz) +
                " MHz is " + text.str() +
                " bytes per cycle, below the supported minimum of 1/1024 (cycle counts would "
                "overflow); at this clock the bandwidth must be at least " +
                units::format_bandwidth(std::ceil(config.clock_mhz * 1e6 * kMinDramBytesPerCycle)));
    complete = false;
  }
}

/// Sets `value` at `key_path` in `root`. Returns a failure for a malformed path or a missing
/// sequence element.
Status set_key_path(YAML::Node& root, const std::string& key_path, const YAML::Node& value) {
  struct Step {
    std::string key;  // empty for an index step
    std::size_t index = 0;
  };
  std::vector<Step> steps;
  std::size_t i = 0;
  while (i < key_path.size()) {
    if (key_path[i] == '[') {
      const std::size_t close = key_path.find(']', i);
      std::size_t index = 0;
      const char* first = key_path.data() + i + 1;
      const char* last = key_path.data() + (close == std::string::npos ? i + 1 : close);
      const auto [end, code] = std::from_chars(first, last, index);
      if (close == std::string::npos || code != std::errc() || end != last || first == last) {
        return fail("malformed key path '" + key_path + "' (expected e.g. scratchpads[0].size)");
      }
      steps.push_back({"", index});
      i = close + 1;
      if (i < key_path.size() && key_path[i] == '.') ++i;
      continue;
    }
    const std::size_t end = key_path.find_first_of(".[", i);
    const std::string key = key_path.substr(i, end == std::string::npos ? end : end - i);
    if (key.empty()) return fail("malformed key path '" + key_path + "' (empty key)");
    steps.push_back({key, 0});
    i = end == std::string::npos ? key_path.size() : end;
    if (i < key_path.size() && key_path[i] == '.') ++i;
  }
  if (steps.empty()) return fail("empty key path");

  YAML::Node current;
  current.reset(root);
  std::string walked;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const bool last = s + 1 == steps.size();
    if (!step.key.empty()) {
      if (!current.IsMap() && !current.IsNull()) {
        return fail("cannot set '" + key_path + "': '" + (walked.empty() ? "<root>" : walked) +
                    "' is not a mapping");
      }
      walked = child_path(walked, step.key);
      if (last) {
        current[step.key] = value;
      } else {
        if (!current[step.key].IsDefined() || current[step.key].IsNull()) {
          current[step.key] = YAML::Node(YAML::NodeType::Map);
        }
        YAML::Node next = current[step.key];
        current.reset(next);
      }
    } else {
      if (!current.IsSequence() || step.index >= current.size()) {
        return fail("cannot set '" + key_path + "': '" + walked + "' has no element " +
                    std::to_string(step.index));
      }
      walked = index_path(walked, step.index);
      if (last) {
        current[step.index] = value;
      } else {
        YAML::Node next = current[step.index];
        current.reset(next);
      }
    }
  }
  return {};
}

}  // namespace

Result<KeyOverride> parse_key_override(std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return fail("override '" + std::string(assignment) + "' is not of the form key.path=value");
  }
  return KeyOverride{std::string(assignment.substr(0, equals)),
                     std::string(assignment.substr(equals + 1))};
}

HwConfigCheck check_hw_config_text(std::string_view text, const std::string& file_label,
                                   const std::vector<KeyOverride>& overrides) {
  HwConfigCheck check;
  YAML::Node root;
  {
    // One document per config: a second one (after '---') would be silently ignored.
    YamlDocuments loaded = load_one_yaml_document(text, file_label, "a config file");
    if (!loaded.ok()) {
      check.diagnostics = std::move(loaded.errors);
      return check;
    }
    if (!loaded.documents.empty()) root = loaded.documents.front();
  }

  std::map<std::string, std::string> overridden;
  std::vector<Diagnostic> override_problems;
  for (const auto& override_entry : overrides) {
    const std::string assignment = override_entry.key_path + "=" + override_entry.value_yaml;
    const SourceLocation where{"override " + assignment, 0, 0};
    YAML::Node value;
    try {
      value = YAML::Load(override_entry.value_yaml);
    } catch (const YAML::Exception& e) {
      override_problems.push_back({where, override_entry.key_path, "invalid YAML: " + e.msg});
      continue;
    }
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap()) break;  // reported below as a top-level problem
    const Status set = set_key_path(root, override_entry.key_path, value);
    if (!set) {
      override_problems.push_back({where, override_entry.key_path, set.reason()});
      continue;
    }
    overridden[override_entry.key_path] = assignment;
  }

  Validator v(file_label, overridden);
  for (auto& problem : override_problems) {
    v.error_at(problem.location, problem.key_path, problem.message);
  }
  if (root.IsNull() || !root.IsDefined()) {
    v.error_at({file_label, 1, 1}, "",
               "the config is empty (expected a mapping with keys " + join(kTopKeys) + ")");
    check.diagnostics = v.take_diagnostics();
    return check;
  }
  if (!root.IsMap()) {
    v.error(root, "", "the top level must be a mapping, got " + node_kind(root));
    check.diagnostics = v.take_diagnostics();
    return check;
  }

  HwConfig config;
  bool complete = true;
  v.check_map(root, "", kTopKeys);
  const auto name = v.read_identifier(v.get(root, "", "name", true), "name", true);
  const auto description = v.read_string(v.get(root, "", "description", false), "description");
  const auto clock =
      v.read_number(v.get(root, "", "clock_mhz", true), "clock_mhz", 0, true, 100000);
  if (!name || !clock) complete = false;
  if (name) config.name = *name;
  if (description) config.description = *description;
  if (clock) config.clock_mhz = *clock;

  const auto section = [&](const std::string& key, bool required, auto reader) {
    const YAML::Node node = v.get(root, "", key, required);
    if (node.IsDefined()) {
      reader(v, node, config, complete);
    } else if (required) {
      complete = false;
    }
  };
  section("matrix", true, read_matrix);
  section("vector", true, [](Validator& val, const YAML::Node& node, HwConfig& c, bool& ok) {
    if (!val.check_map(node, "vector", kVectorKeys)) {
      ok = false;
      return;
    }
    const auto lanes =
        narrow(val.read_int(val.get(node, "vector", "lanes", true), "vector.lanes", 1, 4096));
    if (!lanes) {
      ok = false;
      return;
    }
    c.vector.lanes = *lanes;
    const YAML::Node table = val.get(node, "vector", "lookup_table", false);
    const YAML::Node reduce = val.get(node, "vector", "row_reduce", false);
    const auto lookup_table = val.read_flag(table, "vector.lookup_table");
    const auto row_reduce = val.read_flag(reduce, "vector.row_reduce");
    const YAML::Node multiply = val.get(node, "vector", "broadcast_multiply", false);
    const auto broadcast_multiply = val.read_flag(multiply, "vector.broadcast_multiply");
    const YAML::Node normalise = val.get(node, "vector", "row_normalise", false);
    const auto row_normalise = val.read_flag(normalise, "vector.row_normalise");
    if ((table.IsDefined() && !lookup_table) || (reduce.IsDefined() && !row_reduce) ||
        (multiply.IsDefined() && !broadcast_multiply) || (normalise.IsDefined() && !row_normalise))
      ok = false;
    c.vector.lookup_table = lookup_table.value_or(false);
    c.vector.row_reduce = row_reduce.value_or(false);
    c.vector.broadcast_multiply = broadcast_multiply.value_or(false);
    c.vector.row_normalise = row_normalise.value_or(false);
  });
  section("scratchpads", true, read_scratchpads);
  section("dram", true, read_dram);
  section("queues", true, read_queues);
  section("energy", false, read_energy);
  section("fpga", false, read_fpga);

  if (clock && config.dram.bandwidth_bytes_per_second > 0)
    check_dram_rate(v, v.get(v.get(root, "", "dram", false), "dram", "bandwidth", false), config,
                    complete);

  // Cross-field rules need the matrix unit and the scratchpads; run them only when both parsed
  // (a problem there is already reported and would only produce follow-on noise).
  if (config.matrix.rows > 0 && !config.scratchpads.empty()) {
    check_cross_fields(v, root, config, complete);
  }

  check.diagnostics = v.take_diagnostics();
  std::stable_sort(check.diagnostics.begin(), check.diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::pair(a.location.line, a.location.column) <
                            std::pair(b.location.line, b.location.column);
                   });
  if (complete && check.diagnostics.empty()) check.config = std::move(config);
  return check;
}

HwConfigCheck check_hw_config_file(const std::string& path,
                                   const std::vector<KeyOverride>& overrides) {
  auto text = files::try_read_file(path, files::kMaxConfigBytes);
  if (!text) {
    HwConfigCheck check;
    check.diagnostics.push_back({{path, 0, 0}, "", text.reason()});
    return check;
  }
  return check_hw_config_text(text.value(), path, overrides);
}

Result<HwConfig> parse_hw_config(std::string_view text, const std::string& file_label,
                                 const std::vector<KeyOverride>& overrides) {
  auto check = check_hw_config_text(text, file_label, overrides);
  if (check.ok()) return std::move(*check.config);
  std::string message;
  for (const auto& d : check.diagnostics) message += (message.empty() ? "" : "\n") + d.str();
  return fail(message);
}

HwConfig load_hw_config(const std::string& path, const std::vector<KeyOverride>& overrides) {
  auto check = check_hw_config_file(path, overrides);
  if (!check.ok()) throw InputError(std::move(check.diagnostics));
  return std::move(*check.config);
}

std::string hw_config_dir() {
  return TESSEL_HW_CONFIG_DIR;
}

std::string default_hw_config_path() {
  return hw_config_dir() + "/npc19-deepfusion.yaml";
}

std::string resolve_hw_config(const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") ||
      name_or_path.ends_with(".yml")) {
    return name_or_path;
  }
  return hw_config_dir() + "/" + name_or_path + ".yaml";
}

}  // namespace tessel
