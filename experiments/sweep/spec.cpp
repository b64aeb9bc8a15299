// Parsing and validating sweep specs, expanding axes and enumerating design points.
#include "experiments/sweep/spec.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "experiments/sweep/config_override.hpp"
#ifdef TESSEL_SWEEP_HAVE_SIM
#include "compiler/quant/config.hpp"
#endif
#include "configs/yaml_documents.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"
#include "support/strings.hpp"

namespace tessel::sweep {
namespace {

const std::vector<std::string> kModes = {"analytic", "sim", "synthetic"};
const std::vector<std::string> kObjectives = {"bytes", "latency", "energy", "edp"};
constexpr std::size_t kMaxAxisValues = 100000;
constexpr const char* kQuantPrefix = "quantization.";

/// Parsing context: the spec's file name for diagnostics.
struct Reader {
  std::string file;

  SourceLocation at(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.line < 0) return {file, 0, 0};
    return {file, mark.line + 1, mark.column + 1};
  }
  [[noreturn]] void error(const YAML::Node& node, const std::string& key,
                          const std::string& message) const {
    throw_input_error(at(node), key, message);
  }

  std::string string_of(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) error(node, key, "expected a string");
    return node.Scalar();
  }

  std::vector<std::string> names_of(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> names;
    if (node.IsScalar()) {
      names.push_back(node.Scalar());
    } else if (node.IsSequence() && node.size() > 0) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item_key = key + "[" + std::to_string(i) + "]";
        std::string name = string_of(node[i], item_key);
        if (!seen.insert(name).second) error(node[i], item_key, "'" + name + "' is listed twice");
        names.push_back(std::move(name));
      }
    } else {
      error(node, key, "expected a name or a non-empty list of names");
    }
    return names;
  }

  double number_of(const YAML::Node& node, const std::string& key) const {
    const nlohmann::json value = node.IsScalar() ? scalar_json(node) : nlohmann::json();
    if (!value.is_number()) error(node, key, "expected a number");
    return value.get<double>();
  }

  /// A value list: a sequence of scalars, or a range {from, to, times} / {from, to, step}.
  std::vector<YAML::Node> values_of(const YAML::Node& node, const std::string& key) const {
    std::vector<YAML::Node> values;
    if (node.IsSequence()) {
      if (node.size() == 0) error(node, key, "the value list is empty");
      for (std::size_t i = 0; i < node.size(); ++i) values.push_back(node[i]);
      return values;
    }
    if (node.IsScalar()) return {node};
    if (!node.IsMap())
      error(node, key, "expected a list of values or a range {from, to, times|step}");
    for (const auto& entry : node) {
      const std::string name = entry.first.as<std::string>();
      const std::vector<std::string> allowed = {"from", "to", "times", "step"};
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        error(entry.first, key + "." + name,
              "unknown range key" + did_you_mean(name, allowed) +
                  " (a range is {from, to, times} or {from, to, step})");
      }
    }
    if (!node["from"] || !node["to"]) error(node, key, "a range needs 'from' and 'to'");
    if (static_cast<bool>(node["times"]) == static_cast<bool>(node["step"])) {
      error(node, key, "a range needs exactly one of 'times' (geometric) or 'step' (linear)");
    }
    const double from = number_of(node["from"], key + ".from");
    const double to = number_of(node["to"], key + ".to");
    const bool geometric = static_cast<bool>(node["times"]);
    const YAML::Node& by_node = geometric ? node["times"] : node["step"];
    const double by = number_of(by_node, key + (geometric ? ".times" : ".step"));
    if (geometric && !(by > 1.0)) error(by_node, key + ".times", "must be greater than 1");
    if (!geometric && !(by > 0.0)) error(by_node, key + ".step", "must be positive");
    if (geometric && !(from > 0.0))
      error(node["from"], key + ".from", "must be positive for 'times'");
    if (to < from) error(node["to"], key + ".to", "is below 'from'");
    const bool integral =
        scalar_json(node["from"]).is_number_integer() && scalar_json(by_node).is_number_integer();
    const double tolerance = 1e-9 * std::max(std::fabs(to), 1.0);
    for (std::size_t i = 0;; ++i) {
      const double value = geometric ? from * std::pow(by, static_cast<double>(i))
                                     : from + by * static_cast<double>(i);
      if (value > to + tolerance) break;
      if (values.size() == kMaxAxisValues) {
        error(node, key, "the range has more than " + std::to_string(kMaxAxisValues) + " values");
      }
      std::ostringstream text;
      if (integral) {
        text << std::llround(value);
      } else {
        text.precision(12);
        text << value;
      }
      YAML::Node scalar(text.str());
      values.push_back(scalar);
    }
    return values;
  }
};

/// One axis value with the spec position of its key (for override diagnostics).
struct Assignment {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};
using Row = std::vector<Assignment>;

std::vector<Row> product_rows(const std::vector<Row>& outer, const std::vector<Row>& inner) {
  std::vector<Row> rows;
  rows.reserve(outer.size() * inner.size());
  for (const Row& a : outer) {
    for (const Row& b : inner) {
      Row row = a;
      row.insert(row.end(), b.begin(), b.end());
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

class AxisParser {
 public:
  explicit AxisParser(const Reader& reader) : reader_(reader) {}

  /// `axes:` is a list of groups, or a mapping (shorthand for one product group).
  std::vector<Row> parse(const YAML::Node& axes) {
    std::vector<Row> rows = {Row{}};
    if (!axes || axes.IsNull()) return rows;
    if (axes.IsMap()) return product_rows(rows, product(axes, "axes"));
    if (!axes.IsSequence()) reader_.error(axes, "axes", "expected a list of axis groups");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string where = "axes[" + std::to_string(i) + "]";
      const YAML::Node& group = axes[i];
      if (!group.IsMap() || group.size() != 1) {
        reader_.error(group, where,
                      "an axis group is one of {product: ...}, {zip: ...}, {list: ...}");
      }
      const auto entry = *group.begin();
      const std::string kind = entry.first.as<std::string>();
      const std::string key = where + "." + kind;
      if (kind == "product") {
        rows = product_rows(rows, product(entry.second, key));
      } else if (kind == "zip") {
        rows = product_rows(rows, zip(entry.second, key));
      } else if (kind == "list") {
        rows = product_rows(rows, list(entry.second, key));
      } else {
        reader_.error(entry.first, key,
                      "unknown axis group" + did_you_mean(kind, {"product", "zip", "list"}) +
                          " (one of product, zip, list)");
      }
    }
    return rows;
  }

  const std::vector<std::string>& keys() const { return keys_; }

 private:
  void claim(const YAML::Node& key_node, const std::string& key) {
    if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) {
      reader_.error(key_node, key, "this axis key appears in more than one place");
    }
    keys_.push_back(key);
  }

  std::vector<Row> product(const YAML::Node& node, const std::string& where) {
    if (!node.IsMap() || node.size() == 0)
      reader_.error(node, where, "expected a mapping of key: values");
    std::vector<Row> rows = {Row{}};
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      claim(entry.first, key);
      std::vector<Row> axis;
      for (const YAML::Node& value : reader_.values_of(entry.second, key)) {
        axis.push_back({{key, entry.first, value}});
      }
      rows = product_rows(rows, axis);
    }
    return rows;
  }

  std::vector<Row> zip(const YAML::Node& node, const std::string& where) {
    if (!node.IsMap() || node.size() == 0)
      reader_.error(node, where, "expected a mapping of key: values");
    std::vector<Row> rows;
    std::string first_key;
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      claim(entry.first, key);
      const std::vector<YAML::Node> values = reader_.values_of(entry.second, key);
      if (first_key.empty()) {
        first_key = key;
        rows.resize(values.size());
      } else if (values.size() != rows.size()) {
        reader_.error(entry.second, key,
                      "zip needs equal lengths: " + std::to_string(values.size()) +
                          " values here, " + std::to_string(rows.size()) + " for '" + first_key +
                          "'");
      }
      for (std::size_t i = 0; i < values.size(); ++i)
        rows[i].push_back({key, entry.first, values[i]});
    }
    return rows;
  }

  std::vector<Row> list(const YAML::Node& node, const std::string& where) {
    if (!node.IsSequence() || node.size() == 0) {
      reader_.error(node, where, "expected a non-empty list of {key: value} points");
    }
    std::vector<Row> rows;
    std::vector<std::string> first_keys;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const YAML::Node& point = node[i];
      const std::string at = where + "[" + std::to_string(i) + "]";
      if (!point.IsMap() || point.size() == 0)
        reader_.error(point, at, "expected a {key: value} mapping");
      Row row;
      std::vector<std::string> point_keys;
      for (const auto& entry : point) {
        const std::string key = entry.first.as<std::string>();
        if (!entry.second.IsScalar()) reader_.error(entry.second, key, "expected one scalar value");
        if (i == 0) claim(entry.first, key);
        point_keys.push_back(key);
        row.push_back({key, entry.first, entry.second});
      }
      if (i == 0) {
        first_keys = point_keys;
      } else if (point_keys != first_keys) {
        reader_.error(point, at, "every point of a list must set the same keys, in the same order");
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  const Reader& reader_;
  std::vector<std::string> keys_;
};

/// The one YAML document of `text`; a second (non-empty) document is refused, located.
YAML::Node load_one_document(const std::string& text, const std::string& shown_as) {
  YamlDocuments loaded = load_one_yaml_document(text, shown_as, "a sweep spec or config");
  if (!loaded.ok()) {
    const Diagnostic& error = loaded.errors.front();
    throw_input_error(error.location, "", error.message);
  }
  return loaded.documents.empty() ? YAML::Node() : loaded.documents.front();
}

YAML::Node load_yaml_file(const std::filesystem::path& path, const std::string& shown_as) {
  return load_one_document(files::read_file(path.string(), files::kMaxConfigBytes), shown_as);
}

/// The spec's quantization: section is read by the quantization loader's own rules (unknown
/// keys, bad values: refused at load, located in the spec), not only when a sim point runs it;
/// an analytic sweep once ran at another bit width than a misspelt key asked for.
void check_quantization(const YAML::Node& section, const Reader& reader) {
#ifdef TESSEL_SWEEP_HAVE_SIM
  YAML::Emitter text;
  text << section;
  try {
    (void)quant::parse_quant_config(text.c_str(), reader.file + " quantization:");
  } catch (const InputError& error) {
    const Diagnostic& d = error.diagnostics().front();
    const std::string first = d.key_path.substr(0, d.key_path.find_first_of(".["));
    YAML::Node where = section;
    for (const auto& entry : section)
      if (entry.first.IsScalar() && entry.first.Scalar() == first) where = entry.first;
    reader.error(where, "quantization." + d.key_path, d.message);
  }
#else
  (void)section;
  (void)reader;
#endif
}

}  // namespace

const std::vector<std::string>& spec_keys() {
  static const std::vector<std::string> keys = {
      "name",   "mode",     "objective", "objectives", "tiles_2d", "hw",       "quantization",
      "models", "policies", "axes",      "analytic",   "sim",      "synthetic"};
  return keys;
}

const std::vector<std::string>& energy_objective_policies() {
  static const std::vector<std::string> policies = {"optimal", "opfusion"};
  return policies;
}

namespace {

std::string join(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : separator) + name;
  return out;
}

bool is_energy_objective(const std::string& objective) {
  return objective == "energy" || objective == "edp";
}

bool pairs(const std::string& policy, const std::string& objective) {
  const auto& takers = energy_objective_policies();
  return !is_energy_objective(objective) ||
         std::find(takers.begin(), takers.end(), policy) != takers.end();
}

/// Where objective `i` of the spec was written: the list's entry, or the one name.
std::pair<YAML::Node, std::string> objective_at(const YAML::Node& root, std::size_t i) {
  if (root["objectives"] && root["objectives"].IsSequence())
    return {root["objectives"][i], "objectives[" + std::to_string(i) + "]"};
  if (root["objectives"]) return {root["objectives"], "objectives"};
  return {root["objective"], "objective"};
}

/// The spec's objectives: `objective` (one name) or `objectives` (a list), "bytes" when neither;
/// each known and listed once.
std::vector<std::string> objectives_of(const YAML::Node& root, const Reader& reader) {
  if (root["objective"] && root["objectives"])
    reader.error(root["objectives"], "objectives",
                 "give either objective (one name) or objectives (a list), not both");
  std::vector<std::string> names;
  if (root["objectives"]) {
    names = reader.names_of(root["objectives"], "objectives");
  } else if (root["objective"]) {
    names.push_back(reader.string_of(root["objective"], "objective"));
  } else {
    names.push_back("bytes");
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (std::find(kObjectives.begin(), kObjectives.end(), name) == kObjectives.end()) {
      const auto [at, where] = objective_at(root, i);
      reader.error(at, where,
                   "unknown objective '" + name + "'" + did_you_mean(name, kObjectives) +
                       " (one of bytes, latency, energy, edp)");
    }
  }
  return names;
}

/// Every objective is taken by at least one of the spec's policies.
void check_objectives_taken(const YAML::Node& root, const Reader& reader, const SweepSpec& spec) {
  for (std::size_t i = 0; i < spec.objectives.size(); ++i) {
    const std::string& name = spec.objectives[i];
    bool taken = false;
    for (const std::string& policy : spec.policies) taken = taken || pairs(policy, name);
    if (taken) continue;
    const auto [at, where] = objective_at(root, i);
    reader.error(
        at, where,
        "objective '" + name + "' is for the " + join(energy_objective_policies(), " and ") +
            " policies; none of the spec's policies (" + join(spec.policies, ", ") + ") takes it");
  }
}

/// The `models:` list: names, or mappings {zoo: NAME, batch, seq, kv_length, layers, name}.
void parse_models(const YAML::Node& node, const Reader& reader, SweepSpec& spec) {
  static const std::vector<std::string> keys = {"zoo", "name",      "batch",
                                                "seq", "kv_length", "layers"};
  if (!(node.IsScalar() || (node.IsSequence() && node.size() > 0)))
    reader.error(node, "models", "expected a name or a non-empty list of names or mappings");
  for (std::size_t i = 0; i < (node.IsScalar() ? 1 : node.size()); ++i) {
    const YAML::Node item = node.IsScalar() ? node : node[i];
    const std::string item_key = "models[" + std::to_string(i) + "]";
    ModelSource source;
    std::string label;
    if (item.IsMap()) {
      for (const auto& entry : item) {
        const std::string key = entry.first.as<std::string>();
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
          reader.error(entry.first, item_key + "." + key,
                       "unknown model key" + did_you_mean(key, keys) +
                           " (zoo, name, batch, seq, kv_length, layers)");
      }
      if (!item["zoo"]) reader.error(item, item_key + ".zoo", "missing; the zoo model's name");
      source.source = reader.string_of(item["zoo"], item_key + ".zoo");
      const auto count = [&](const char* key, std::int64_t minimum, std::int64_t& out) {
        if (!item[key]) return;
        const std::string where = item_key + "." + key;
        const double value = reader.number_of(item[key], where);
        if (value != std::floor(value) || value < static_cast<double>(minimum) || value > 1e9)
          reader.error(item[key], where, "expected a whole number >= " + std::to_string(minimum));
        out = static_cast<std::int64_t>(value);
      };
      count("batch", 1, source.batch);
      count("seq", 1, source.sequence);
      count("kv_length", 1, source.kv_length);
      count("layers", 1, source.layers);
      label = item["name"] ? reader.string_of(item["name"], item_key + ".name") : source.source;
      if (!item["name"]) {
        std::string options = source.options_text();
        std::replace(options.begin(), options.end(), ',', '-');
        options.erase(std::remove(options.begin(), options.end(), '='), options.end());
        if (!options.empty()) label += "-" + options;
      }
    } else {
      label = reader.string_of(item, item_key);
      source.source = label;
    }
    if (!spec.model_sources.emplace(label, source).second)
      reader.error(item, item_key, "'" + label + "' is listed twice");
    spec.models.push_back(label);
  }
}

}  // namespace

std::string ModelSource::options_text() const {
  std::string out;
  const auto add = [&](const char* key, std::int64_t value, std::int64_t unset) {
    if (value != unset) out += (out.empty() ? "" : ",") + std::string(key) + std::to_string(value);
  };
  add("batch=", batch, 1);
  add("layers=", layers, 0);
  add("seq=", sequence, 0);
  add("kv_length=", kv_length, 0);
  return out;
}

SweepSpec load_spec(const std::filesystem::path& file) {
  return parse_spec(files::read_file(file.string(), files::kMaxConfigBytes), file);
}

SweepSpec parse_spec(const std::string& text, const std::filesystem::path& file) {
  const Reader reader{file.string()};
  const YAML::Node root = load_one_document(text, reader.file);
  if (!root.IsMap())
    reader.error(root, "", "a sweep spec is a mapping (name, mode, hw, models, ...)");
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>();
    const auto& keys = spec_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      reader.error(entry.first, key, "unknown spec key" + did_you_mean(key, keys));
    }
  }

  SweepSpec spec;
  spec.file = std::filesystem::absolute(file).lexically_normal();
  spec.name = root["name"] ? reader.string_of(root["name"], "name") : file.stem().string();

  if (!root["mode"]) reader.error(root, "mode", "missing; one of analytic, sim, synthetic");
  spec.mode = reader.string_of(root["mode"], "mode");
  if (std::find(kModes.begin(), kModes.end(), spec.mode) == kModes.end()) {
    reader.error(root["mode"], "mode",
                 "unknown mode '" + spec.mode + "'" + did_you_mean(spec.mode, kModes) +
                     " (one of analytic, sim, synthetic)");
  }
  spec.objectives = objectives_of(root, reader);
  if (root["tiles_2d"]) {
    const nlohmann::json value =
        root["tiles_2d"].IsScalar() ? scalar_json(root["tiles_2d"]) : nlohmann::json();
    if (!value.is_boolean()) reader.error(root["tiles_2d"], "tiles_2d", "expected true or false");
    spec.tiles_2d = value.get<bool>();
  }
  for (const std::string& mode : kModes) {
    if (root[mode] && mode != spec.mode) {
      reader.error(root[mode], mode,
                   "options for mode '" + mode + "', but mode is '" + spec.mode + "'");
    }
  }
  spec.options = root[spec.mode] ? YAML::Clone(root[spec.mode]) : YAML::Node();

  // The base hardware config: a file (relative to the spec) or an inline mapping.
  YAML::Node base_hw;
  if (!root["hw"]) reader.error(root, "hw", "missing; a hardware config file or an inline mapping");
  if (root["hw"].IsScalar()) {
    std::filesystem::path hw_path = root["hw"].Scalar();
    if (hw_path.is_relative()) hw_path = spec.file.parent_path() / hw_path;
    spec.hw_file = hw_path.lexically_normal();
    if (!std::filesystem::exists(spec.hw_file)) {
      reader.error(root["hw"], "hw", "no such file: " + spec.hw_file.string());
    }
    base_hw = load_yaml_file(spec.hw_file, spec.hw_file.string());
  } else if (root["hw"].IsMap()) {
    base_hw = YAML::Clone(root["hw"]);
  } else {
    reader.error(root["hw"], "hw", "expected a config file path or an inline mapping");
  }

  YAML::Node base_quant = YAML::Load("{}");
  if (root["quantization"]) {
    if (!root["quantization"].IsMap())
      reader.error(root["quantization"], "quantization", "expected a mapping");
    base_quant = YAML::Clone(root["quantization"]);
    check_quantization(root["quantization"], reader);
  }

  if (!root["models"]) reader.error(root, "models", "missing; a list of model names");
  parse_models(root["models"], reader, spec);
  if (!root["policies"]) reader.error(root, "policies", "missing; a list of policy names");
  spec.policies = reader.names_of(root["policies"], "policies");
  check_objectives_taken(root, reader, spec);

  AxisParser axes(reader);
  const std::vector<Row> rows = axes.parse(root["axes"]);
  spec.axis_keys = axes.keys();

  // Every override key must already exist in the base config (typos fail here, located, with a
  // did-you-mean); values are then applied by the configs loader, which validates each config.
  for (const Row& row : rows.empty() ? std::vector<Row>{} : std::vector<Row>{rows.front()}) {
    for (const Assignment& assignment : row) {
      const bool is_quant = assignment.key.rfind(kQuantPrefix, 0) == 0;
      YAML::Node target = YAML::Clone(is_quant ? base_quant : base_hw);
      const std::string path =
          is_quant ? assignment.key.substr(std::string(kQuantPrefix).size()) : assignment.key;
      if (Status status = override_value(target, path, assignment.value); !status.ok()) {
        reader.error(
            assignment.key_node, assignment.key,
            std::string(is_quant ? "in quantization: " : "in the hw config: ") + status.reason());
      }
    }
  }
  std::string base_hw_text;
  std::string base_hw_label;
  {
    YAML::Emitter emitter;
    emitter << base_hw;
    base_hw_text = std::string(emitter.c_str()) + "\n";
    base_hw_label = spec.hw_file.empty() ? reader.file + " (inline hw)" : spec.hw_file.string();
  }

  std::vector<std::shared_ptr<const ResolvedConfig>> configs;
  configs.reserve(rows.size());
  for (const Row& row : rows) {
    auto config = std::make_shared<ResolvedConfig>();
    config->axes = nlohmann::ordered_json::object();
    YAML::Node quant = YAML::Clone(base_quant);
    YAML::Node hw_tree = YAML::Clone(base_hw);  // only hashed when the loader rejects the config
    std::vector<KeyOverride> overrides;
    for (const Assignment& assignment : row) {
      config->axes[assignment.key] = scalar_json(assignment.value);
      if (assignment.key.rfind(kQuantPrefix, 0) == 0) {
        (void)override_value(quant, assignment.key.substr(std::string(kQuantPrefix).size()),
                             assignment.value);
        continue;
      }
      (void)override_value(hw_tree, assignment.key, assignment.value);
      YAML::Emitter value_text;
      value_text << assignment.value;
      overrides.push_back({assignment.key, value_text.c_str()});
    }
    config->quantization = canonical_json(quant);
    // quantization.bits is the datapath width: it sets the matrix unit's input and weight bits
    // (unless an axis sets those itself), so the validator checks it against the accumulator.
    if (config->quantization.contains("bits")) {
      const std::string bits = config->quantization["bits"].dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace);
      for (const char* key : {"matrix.input_bits", "matrix.weight_bits"}) {
        if (std::find(spec.axis_keys.begin(), spec.axis_keys.end(), key) == spec.axis_keys.end()) {
          overrides.push_back({key, bits});
        }
      }
    }
    HwConfigCheck check = check_hw_config_text(base_hw_text, base_hw_label, overrides);
    nlohmann::json identity = {{"quantization", config->quantization}};
    if (check.ok()) {
      identity["hw"] = content_hash(*check.config);
      config->hw = std::move(check.config);
    } else {
      identity["hw_tree"] = canonical_json(hw_tree);
      for (const Diagnostic& diagnostic : check.diagnostics) {
        config->hw_invalid_reason +=
            (config->hw_invalid_reason.empty() ? "" : "; ") +
            (diagnostic.key_path.empty() ? "" : diagnostic.key_path + ": ") + diagnostic.message;
      }
      config->hw_invalid_reason = "hw config rejected: " + config->hw_invalid_reason;
    }
    config->config_hash = stable_hash_hex(tessel::json_text(identity, -1));
    configs.push_back(std::move(config));
  }

  for (const std::string& model : spec.models) {
    for (const auto& config : configs) {
      for (const std::string& policy : spec.policies) {
        for (const std::string& objective : spec.objectives) {
          if (!pairs(policy, objective)) continue;
          SweepPoint point;
          point.index = spec.points.size();
          point.model = model;
          point.policy = policy;
          point.objective = objective;
          point.config = config;
          // The map space joins the id only where it is not the default, so the ids of specs
          // without the key stay as they were (and a point's id does not depend on the other
          // objectives listed beside its own).
          // A mapping entry's options join the id (plain names keep the ids they had).
          const std::string options = spec.model_sources.at(model).options_text();
          point.id = stable_hash_hex(config->config_hash + '\n' + model +
                                     (options.empty() ? "" : "\n" + options) + '\n' + policy +
                                     '\n' + spec.mode + '\n' + objective +
                                     (spec.tiles_2d ? "" : "\nno-2d-tiles"));
          spec.points.push_back(std::move(point));
        }
      }
    }
  }
  return spec;
}

}  // namespace tessel::sweep
