// `tessel config check|show`.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "support/cli.hpp"
#include "support/json_text.hpp"

namespace tessel {
namespace {

/// Parses repeated `--set key.path=value` options; a malformed one is an input error.
std::vector<KeyOverride> parse_overrides(const std::vector<std::string>& assignments) {
  std::vector<KeyOverride> overrides;
  for (const auto& assignment : assignments) {
    auto parsed = parse_key_override(assignment);
    if (!parsed) throw_input_error({"--set", 0, 0}, "", parsed.reason());
    overrides.push_back(std::move(parsed.value()));
  }
  return overrides;
}

cli::Runner setup_check(CLI::App& command) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto sets = std::make_shared<std::vector<std::string>>();
  command.add_option("files", *files, "Hardware config YAML files")->required();
  command.add_option("-s,--set", *sets, "Override a key before validation: KEY.PATH=VALUE");
  return [files, sets]() {
    const auto overrides = parse_overrides(*sets);
    int exit_code = 0;
    for (const auto& file : *files) {
      const auto check = check_hw_config_file(file, overrides);
      if (check.ok()) {
        std::cout << file << ": ok (" << check.config->name << ", content hash "
                  << content_hash(*check.config) << ")\n";
        continue;
      }
      exit_code = 1;
      for (const auto& diagnostic : check.diagnostics) std::cerr << diagnostic.str() << '\n';
    }
    return exit_code;
  };
}

cli::Runner setup_show(CLI::App& command) {
  auto file = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  command.add_option("file", *file, "Hardware config YAML file")->required();
  command.add_option("-s,--set", *sets, "Override a key before validation: KEY.PATH=VALUE");
  command.add_flag("--json", *json, "Print JSON: {file, config, derived, content_hash}");
  return [file, sets, json]() {
    const HwConfig config = load_hw_config(*file, parse_overrides(*sets));
    if (*json) {
      nlohmann::ordered_json out;
      out["file"] = *file;
      out["config"] = nlohmann::ordered_json::parse(to_canonical_json(config));
      out["derived"] = nlohmann::ordered_json::parse(derived_figures_json(config));
      out["content_hash"] = content_hash(config);
      std::cout << tessel::json_text(out, 2) << '\n';
    } else {
      std::cout << describe(config);
    }
    return 0;
  };
}

const cli::GroupRegistration kConfigGroup{"config", "Validate and inspect hardware configs"};
const cli::Registration kCheck{
    {"config check", "Validate hardware configs; one located line per problem", setup_check}};
const cli::Registration kShow{
    {"config show", "Print a resolved hardware config and its derived figures", setup_show}};

}  // namespace
}  // namespace tessel
