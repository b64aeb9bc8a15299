// `tessel compile` then `tessel sim DIR` through the CLI registry, on a temporary folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/npy.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

TEST(CompileCli, compile_folder_runs_on_the_simulator_with_the_predicted_bytes) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_tiny_residual";
  fs::remove_all(dir);
  ASSERT_EQ(run({"compile", "--model", "tiny_residual", "--hw", "edge-small", "--policy", "optimal",
                 "--out", dir.string()}),
            0);
  for (const char* file :
       {"program.bin", "program.tasm", "dram.bin", "schedule.json", "compile.json", "hw.yaml"})
    EXPECT_TRUE(fs::exists(dir / file)) << file;
  std::ifstream in(dir / "compile.json");
  const auto j = nlohmann::json::parse(in);
  // tiny_residual on edge-small, optimal: one group; conv1 + conv2 weights 2 x (4*4*9 + 4*4).
  EXPECT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["dram_bytes"]["weights_read"], 320);
  EXPECT_EQ(j["dram_bytes"]["requant_tables_read"], 64);  // 2 convs x 4 channels x 8 B
  EXPECT_EQ(j["dram_bytes"]["activations_read"], j["predicted_dram_bytes"]["activations_read"]);
  EXPECT_EQ(j["dram_bytes"]["activations_written"],
            j["predicted_dram_bytes"]["activations_written"]);
  EXPECT_EQ(j["dram_bytes"]["weights_read"], j["predicted_dram_bytes"]["weights_read"]);
  EXPECT_EQ(run({"sim", dir.string(), "--json", (dir / "sim.json").string()}), 0);
  EXPECT_TRUE(fs::exists(dir / "sim.json"));
  // A compile folder also gets the dequantized output and a report with per-group rows.
  const NpyArray output = read_npy((dir / "output.npy").string());
  EXPECT_EQ(output.dtype, NpyDtype::f32);
  EXPECT_EQ(output.shape, (std::vector<std::int64_t>{1, 4, 8, 8}));  // tiny_residual's output
  std::ifstream report_in(dir / "report.json");
  const auto report = nlohmann::json::parse(report_in);
  ASSERT_EQ(report["groups"].size(), 1u);
  EXPECT_GT(report["groups"][0]["cycles"].get<std::int64_t>(), 0);
  EXPECT_LE(report["groups"][0]["cycles"], report["cycles"]);
  EXPECT_EQ(report["groups"][0]["dram_bytes"]["weights_read"], 320);
  EXPECT_EQ(report["compulsory_bytes"], j["compulsory_bytes"]);
  EXPECT_GT(report["roofline_cycles"].get<std::int64_t>(), 0);
}

TEST(CompileCli, an_unknown_policy_is_an_error) {
  const fs::path dir = fs::path(testing::TempDir()) / "codegen_cli_bad_policy";
  EXPECT_EQ(run({"compile", "--model", "tiny_conv", "--hw", "edge-small", "--policy", "greedy",
                 "--out", dir.string()}),
            1);
  EXPECT_FALSE(fs::exists(dir / "program.bin"));
}

}  // namespace
}  // namespace tessel
