// tessel_hwgen_tool CONFIG.yaml OUT_DIR: the build-time twin of `tessel hwgen` (the CMake
// rules that verilate hw/rtl run it before the `tessel` executable exists).
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "configs/hw_config.hpp"
#include "hw/gen/hwgen.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: tessel_hwgen_tool CONFIG.yaml OUT_DIR\n";
    return 1;
  }
  try {
    const std::string text = tessel::hw::config_package_sv(tessel::load_hw_config(argv[1]));
    std::filesystem::create_directories(argv[2]);
    const std::filesystem::path path = std::filesystem::path(argv[2]) / "tessel_cfg_pkg.sv";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      std::cerr << path.string() << ": cannot write file\n";
      return 1;
    }
  } catch (const std::exception& error) {
    std::cerr << error.what() << '\n';
    return 1;
  }
  return 0;
}
