// Key-path overrides on YAML trees, canonical JSON and the FNV-1a hash used for point ids.
#include "experiments/sweep/config_override.hpp"

#include <charconv>
#include <cstdio>

#include "support/strings.hpp"

namespace tessel::sweep {

Result<std::vector<KeyStep>> parse_key_path(std::string_view path) {
  std::vector<KeyStep> steps;
  std::size_t i = 0;
  const auto bad = [&](const std::string& why) {
    return fail("bad key path '" + std::string(path) + "': " + why);
  };
  if (path.empty()) return bad("empty");
  while (i < path.size()) {
    if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) return bad("unclosed '['");
      const std::string_view digits = path.substr(i + 1, close - i - 1);
      std::size_t index = 0;
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
        return bad("index '" + std::string(digits) + "' is not a non-negative integer");
      }
      steps.push_back({"", index});
      i = close + 1;
      if (i < path.size() && path[i] == '.') {
        ++i;
        if (i == path.size()) return bad("ends with '.'");
      }
      continue;
    }
    std::size_t end = i;
    while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
    if (end == i) return bad("empty key at offset " + std::to_string(i));
    steps.push_back({std::string(path.substr(i, end - i)), 0});
    i = end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) return bad("ends with '.'");
    }
  }
  return steps;
}

namespace {

std::string describe_prefix(const std::vector<KeyStep>& steps, std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (steps[i].key.empty()) {
      text += "[" + std::to_string(steps[i].index) + "]";
    } else {
      text += (text.empty() ? "" : ".") + steps[i].key;
    }
  }
  return text.empty() ? "the config root" : "'" + text + "'";
}

}  // namespace

Status override_value(YAML::Node& root, std::string_view path, const YAML::Node& value) {
  auto steps = parse_key_path(path);
  if (!steps.ok()) return steps.failure();
  // yaml-cpp nodes are handles: walking with copies and assigning to the last one edits `root`.
  YAML::Node node = root;
  for (std::size_t i = 0; i < steps.value().size(); ++i) {
    const KeyStep& step = steps.value()[i];
    const std::string where = describe_prefix(steps.value(), i);
    if (step.key.empty()) {
      if (!node.IsSequence()) return fail(where + " is not a list, so it has no [index]");
      if (step.index >= node.size()) {
        return fail(where + " has " + std::to_string(node.size()) + " entries; [" +
                    std::to_string(step.index) + "] is out of range");
      }
      node.reset(node[step.index]);
    } else {
      if (!node.IsMap())
        return fail(where + " is not a mapping, so it has no key '" + step.key + "'");
      if (!node[step.key]) {
        std::vector<std::string> keys;
        for (const auto& entry : node) keys.push_back(entry.first.as<std::string>());
        return fail(where + " has no key '" + step.key + "'" + did_you_mean(step.key, keys));
      }
      node.reset(node[step.key]);
    }
  }
  node = YAML::Clone(value);
  return {};
}

nlohmann::json scalar_json(const YAML::Node& node) {
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // explicitly quoted: always a string
  {
    long long integer = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) return integer;
  }
  {
    double real = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), real);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) return real;
  }
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  return text;
}

nlohmann::json canonical_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& item : node) array.push_back(canonical_json(item));
      return array;
    }
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();  // std::map underneath: sorted keys
      for (const auto& entry : node)
        object[entry.first.as<std::string>()] = canonical_json(entry.second);
      return object;
    }
    case YAML::NodeType::Scalar:
      return scalar_json(node);
    default:
      return nullptr;
  }
}

std::string stable_hash_hex(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace tessel::sweep
