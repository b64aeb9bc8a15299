// Helpers shared by the sweep tests: temp directories, spec files, reading results.
#pragma once

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tessel::sweep::testing {

/// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessel-sweep-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The small edge config shipped in configs/hw (8x8 array, 128 KiB unified buffer, 6.4 GB/s).
inline std::string edge_config_path() {
  return std::string(TESSEL_SOURCE_DIR) + "/configs/hw/edge-small.yaml";
}

/// The built `tessel` executable, or $TESSEL_EXECUTABLE when set (an installed tessel).
inline std::string tessel_executable() {
  if (const char* chosen = std::getenv("TESSEL_EXECUTABLE")) return chosen;
  return std::string(TESSEL_BINARY_DIR) + "/tools/tessel/tessel";
}

}  // namespace tessel::sweep::testing
