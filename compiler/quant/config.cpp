// Loading and validating the quantization YAML with located errors.
#include "compiler/quant/config.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "support/strings.hpp"

namespace tessel::quant {

namespace {

const std::vector<std::string> kTopKeys = {"bits",           "method",           "percentile",
                                           "histogram_bins", "calibration",      "allow_zero_range",
                                           "layers",         "table_input_bits", "norm_input_bits",
                                           "wide_headroom",  "bias_correction"};
const std::vector<std::string> kCalibrationKeys = {"samples", "seed"};
const std::vector<std::string> kLayerKeys = {"bits"};

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  SourceLocation at(const YAML::Node& node) const {
    const auto mark = node.Mark();
    if (mark.line < 0) return {source_, 0, 0};
    return {source_, mark.line + 1, mark.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) {
    throw_input_error(at(node), key, what);
  }

  void check_keys(const YAML::Node& map, const std::string& prefix,
                  const std::vector<std::string>& allowed) {
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string expected;
        for (const auto& a : allowed) expected += (expected.empty() ? "" : ", ") + a;
        fail(entry.first, prefix + key,
             "unknown key" + did_you_mean(key, allowed) + " (expected one of: " + expected + ")");
      }
    }
  }

  template <class T>
  T scalar(const YAML::Node& node, const std::string& key, const char* type_name) {
    if (!node.IsScalar()) fail(node, key, std::string("expected ") + type_name);
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(node, key, std::string("expected ") + type_name + ", got '" + node.Scalar() + "'");
    }
  }

  int bits(const YAML::Node& node, const std::string& key) {
    const int value = scalar<int>(node, key, "an integer");
    if (value != 8 && value != 16)
      fail(node, key, "bits must be 8 or 16, got " + std::to_string(value));
    return value;
  }

 private:
  std::string source_;
};

}  // namespace

QuantConfig parse_quant_config(const std::string& yaml_text, const std::string& source_name) {
  Reader reader(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw_input_error({source_name, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  QuantConfig config;
  config.source = source_name;
  if (root.IsNull()) return config;  // an empty file means all defaults
  if (!root.IsMap()) reader.fail(root, "", "expected a mapping of quantization settings");
  reader.check_keys(root, "", kTopKeys);

  if (const auto n = root["bits"]) config.bits = reader.bits(n, "bits");
  if (const auto n = root["method"]) {
    const auto method =
        parse_calibration_method(reader.scalar<std::string>(n, "method", "a string"));
    if (!method) reader.fail(n, "method", method.reason());
    config.method = method.value();
  }
  if (const auto n = root["percentile"]) {
    config.percentile = reader.scalar<double>(n, "percentile", "a number");
    if (!(config.percentile > 0.0 && config.percentile <= 100.0))
      reader.fail(n, "percentile", "must be in (0, 100], got " + n.Scalar());
  }
  if (const auto n = root["wide_headroom"]) {
    config.wide_headroom = reader.scalar<double>(n, "wide_headroom", "a number");
    if (!(config.wide_headroom == 0.0 ||
          (config.wide_headroom >= 1.0 && config.wide_headroom <= 256.0)))
      reader.fail(n, "wide_headroom", "must be 0 (off) or in [1, 256], got " + n.Scalar());
  }
  if (const auto n = root["histogram_bins"]) {
    config.histogram_bins = reader.scalar<int>(n, "histogram_bins", "an integer");
    if (config.histogram_bins < 16 || config.histogram_bins > (1 << 20))
      reader.fail(n, "histogram_bins", "must be in [16, 1048576], got " + n.Scalar());
  }
  if (const auto n = root["allow_zero_range"])
    config.allow_zero_range = reader.scalar<bool>(n, "allow_zero_range", "true or false");
  if (const auto n = root["bias_correction"])
    config.bias_correction = reader.scalar<bool>(n, "bias_correction", "true or false");
  if (const auto n = root["table_input_bits"])
    config.table_input_bits = reader.bits(n, "table_input_bits");
  if (const auto n = root["norm_input_bits"])
    config.norm_input_bits = reader.bits(n, "norm_input_bits");
  if (const auto calibration = root["calibration"]) {
    if (!calibration.IsMap()) reader.fail(calibration, "calibration", "expected a mapping");
    reader.check_keys(calibration, "calibration.", kCalibrationKeys);
    if (const auto n = calibration["samples"]) {
      config.calibration_samples = reader.scalar<int>(n, "calibration.samples", "an integer");
      if (config.calibration_samples < 1)
        reader.fail(n, "calibration.samples", "must be at least 1, got " + n.Scalar());
    }
    if (const auto n = calibration["seed"])
      config.calibration_seed =
          reader.scalar<std::uint64_t>(n, "calibration.seed", "a non-negative integer");
  }
  if (const auto layers = root["layers"]) {
    if (!layers.IsMap()) reader.fail(layers, "layers", "expected a mapping of op name to settings");
    for (const auto& entry : layers) {
      const std::string name = entry.first.Scalar();
      const std::string prefix = "layers." + name;
      if (!entry.second.IsMap()) reader.fail(entry.second, prefix, "expected a mapping");
      reader.check_keys(entry.second, prefix + ".", kLayerKeys);
      LayerOverride layer;
      layer.bits = config.bits;
      layer.location = reader.at(entry.first);
      if (const auto n = entry.second["bits"]) layer.bits = reader.bits(n, prefix + ".bits");
      config.layers[name] = layer;
    }
  }
  return config;
}

QuantConfig load_quant_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input_error({path, 0, 0}, "", "cannot open quantization config");
  std::stringstream text;
  text << in.rdbuf();
  return parse_quant_config(text.str(), path);
}

std::string to_yaml(const QuantConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "bits" << YAML::Value << config.bits;
  out << YAML::Key << "method" << YAML::Value << std::string(to_string(config.method));
  out << YAML::Key << "percentile" << YAML::Value << config.percentile;
  out << YAML::Key << "wide_headroom" << YAML::Value << config.wide_headroom;
  out << YAML::Key << "histogram_bins" << YAML::Value << config.histogram_bins;
  out << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "samples" << YAML::Value << config.calibration_samples;
  out << YAML::Key << "seed" << YAML::Value << config.calibration_seed;
  out << YAML::EndMap;
  out << YAML::Key << "allow_zero_range" << YAML::Value << config.allow_zero_range;
  out << YAML::Key << "table_input_bits" << YAML::Value << config.table_input_bits;
  out << YAML::Key << "norm_input_bits" << YAML::Value << config.norm_input_bits;
  out << YAML::Key << "bias_correction" << YAML::Value << config.bias_correction;
  if (!config.layers.empty()) {
    out << YAML::Key << "layers" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, layer] : config.layers)
      out << YAML::Key << name << YAML::Value << YAML::BeginMap << YAML::Key << "bits"
          << YAML::Value << layer.bits << YAML::EndMap;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tessel::quant
