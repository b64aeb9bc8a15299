// The shared pieces of the onnxruntime oracles (ort_test.cpp, ort_modern_test.cpp): the cache,
// running tests/oracles/ort_run.js, reading its outputs, and comparing integer tensors in LSBs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "support/npy.hpp"

namespace tessel::oracle {

namespace fs = std::filesystem;
using cpu::TensorData;

inline fs::path cache_dir() {
  if (const char* env = std::getenv("TESSEL_CACHE")) return env;
  return fs::path(TESSEL_SOURCE_DIR) / ".cache";
}

// "" when onnxruntime-node and node are there, else why a test is skipped.
inline std::string missing_ort() {
  if (!fs::exists(cache_dir() / "ort" / "node_modules" / "onnxruntime-node"))
    return "onnxruntime-node not installed (run tests/oracles/setup_ort.sh)";
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node not found";
  return "";
}

// "" when the model and onnxruntime are there, else why the test is skipped.
inline std::string missing(const std::string& model) {
  if (!fs::exists(cache_dir() / "models" / (model + ".onnx")))
    return (cache_dir() / "models" / (model + ".onnx")).string() +
           " not found (run /usr/bin/python3 experiments/models/export_torchvision.py)";
  return missing_ort();
}

// The running test's folders: kept when it fails (to look at), removed when it passes (the
// int8 QDQ exports of the six nets are ~740 MB, and CI's disk is small).
inline std::vector<fs::path>& work_dirs() {
  static std::vector<fs::path> dirs;
  return dirs;
}

inline fs::path work_dir(const std::string& name) {
  const fs::path dir = fs::path(TESSEL_BINARY_DIR) / "ort_oracle" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  work_dirs().push_back(dir);
  return dir;
}

inline void remove_work_dirs_unless_failed() {
  // TESSEL_ORACLE_KEEP=1 keeps them anyway (to look at onnxruntime's optimized graphs).
  if (!::testing::Test::HasFailure() && std::getenv("TESSEL_ORACLE_KEEP") == nullptr)
    for (const fs::path& dir : work_dirs()) fs::remove_all(dir);
  work_dirs().clear();
}

inline std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

// Runs tests/oracles/ort_run.js; `args` are appended to the model path.
inline void run_ort(const fs::path& model, const std::string& args) {
  const std::string command = "node " +
                              quoted(std::string(TESSEL_SOURCE_DIR) + "/tests/oracles/ort_run.js") +
                              " " + quoted(model.string()) + " " + args;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

// Named .npy feeds for ort_run.js --out-dir, in order.
using Feeds = std::vector<std::pair<std::string, fs::path>>;

// Writes `feeds` to `file` ([[name, path], ...]) and returns the ort_run.js argument that reads
// it. Many feeds go through a file, not the command line: onnxruntime-node 1.30 segfaults while
// it initialises when the command line is long (~40 KB; the isolated bert_base export has 397
// golden inputs, ~50 KB of --feed arguments).
inline std::string feeds_file_argument(const Feeds& feeds, const fs::path& file) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, path] : feeds) list.push_back({name, path.string()});
  std::ofstream(file) << list.dump(1);
  return "--feeds " + quoted(file.string());
}

// onnxruntime's outputs by name (ort_run.js --out-dir).
inline std::map<std::string, TensorData> read_outputs(const fs::path& dir) {
  std::ifstream index(dir / "outputs.json");
  const auto entries = nlohmann::json::parse(index);
  std::map<std::string, TensorData> outputs;
  for (const auto& e : entries)
    outputs[e["name"].get<std::string>()] =
        TensorData::from_npy(read_npy((dir / e["file"].get<std::string>()).string()));
  return outputs;
}

// Per-tensor agreement of integer activations, in LSBs.
struct Agreement {
  std::string tensor;
  std::int64_t elements = 0;
  std::int64_t within_one = 0;
  std::int64_t max_lsb = 0;
  double fraction() const { return elements ? double(within_one) / double(elements) : 1.0; }
};

inline std::vector<Agreement> compare(const std::vector<std::string>& tensors,
                                      const std::map<std::string, TensorData>& ours,
                                      const std::map<std::string, TensorData>& theirs) {
  std::vector<Agreement> rows;
  for (const auto& t : tensors) {
    Agreement row{t};
    const auto a = ours.at(t).to_i32(), b = theirs.at(t).to_i32();
    row.elements = static_cast<std::int64_t>(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::int64_t d = std::abs(std::int64_t{a[i]} - b[i]);
      row.within_one += d <= 1;
      row.max_lsb = std::max(row.max_lsb, d);
    }
    rows.push_back(row);
  }
  return rows;
}

inline void summarize(const std::string& model, const std::string& mode,
                      const std::vector<Agreement>& rows) {
  const auto worst = std::min_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.fraction() < b.fraction();
  });
  std::int64_t elements = 0, within = 0, max_lsb = 0;
  for (const auto& r : rows) {
    elements += r.elements;
    within += r.within_one;
    max_lsb = std::max(max_lsb, r.max_lsb);
  }
  std::cout << std::fixed << std::setprecision(4) << model << " int8 " << mode << ": "
            << rows.size() << " tensors, " << 100.0 * double(within) / double(elements) << "% of "
            << elements << " elements within +-1 LSB, max " << max_lsb << " LSB; worst tensor "
            << worst->tensor << " " << 100.0 * worst->fraction() << "%"
            << " (output " << rows.back().tensor << " " << 100.0 * rows.back().fraction()
            << "%, max " << rows.back().max_lsb << " LSB)\n";
}

}  // namespace tessel::oracle
