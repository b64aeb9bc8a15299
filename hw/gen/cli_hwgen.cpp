// `tessel hwgen --hw H --out DIR`: writes the RTL's parameter package tessel_cfg_pkg.sv.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "configs/hw_config.hpp"
#include "hw/gen/hwgen.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel::hw {
namespace {

struct HwgenOptions {
  std::string hw;
  std::string out;
};

cli::Runner setup(CLI::App& command) {
  auto options = std::make_shared<HwgenOptions>();
  command.add_option("--hw", options->hw, "hardware config YAML")->required();
  command.add_option("--out", options->out, "folder to write tessel_cfg_pkg.sv into")->required();
  return [options] {
    const HwConfig config = load_hw_config(options->hw);
    const std::string text = config_package_sv(config);
    files::make_directory(options->out);
    const std::string path = (std::filesystem::path(options->out) / "tessel_cfg_pkg.sv").string();
    files::write_file(path, text, {options->hw});
    std::cout << path << ": tessel_cfg_pkg for config '" << config.name << "'\n";
    return 0;
  };
}

const cli::Registration kHwgen{
    {"hwgen", "Write the RTL parameter package (tessel_cfg_pkg.sv) of a hardware config", setup}};

}  // namespace
}  // namespace tessel::hw
