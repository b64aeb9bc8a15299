// `tessel infer` and `tessel quantize` through the CLI registry (only this module's commands).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/npy.hpp"

namespace tessel {
namespace {

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

TEST(CpuCli, InferQuantizeAndRawOutputs) {
  const auto dir = std::filesystem::temp_directory_path() / "tessel_cpu_cli_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string f32 = (dir / "f32.npy").string(), q = (dir / "q.npy").string(),
                    raw = (dir / "raw.npy").string(), json = (dir / "q.json").string();
  ASSERT_EQ(run({"infer", "--model", "tiny_conv", "--output", f32}), 0);
  ASSERT_EQ(run({"infer", "--model", "tiny_conv", "--quantize", "--output", q, "--dump-dir",
                 (dir / "dump").string()}),
            0);
  ASSERT_EQ(run({"infer", "--model", "tiny_conv", "--quantize", "--raw", "--output", raw}), 0);
  const auto a = read_npy(f32), b = read_npy(q), c = read_npy(raw);
  EXPECT_EQ(a.dtype, NpyDtype::f32);
  EXPECT_EQ(b.dtype, NpyDtype::f32);
  EXPECT_EQ(c.dtype, NpyDtype::i8);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(b.shape, c.shape);
  EXPECT_TRUE(std::filesystem::exists(dir / "dump" / "input.q.npy"));
  ASSERT_EQ(run({"quantize", "--model", "tiny_conv", "--out", json}), 0);
  std::ifstream in(json);
  const auto scales = nlohmann::json::parse(in);
  EXPECT_EQ(scales.at("model"), "tiny_conv");
  EXPECT_FALSE(scales.at("classes").empty());
  std::filesystem::remove_all(dir);
}

TEST(CpuCli, BadQuantConfigExitsWithOne) {
  const auto dir = std::filesystem::temp_directory_path() / "tessel_cpu_cli_bad";
  std::filesystem::create_directories(dir);
  const std::string yaml = (dir / "q.yaml").string();
  std::ofstream(yaml) << "bits: 8\nlayers:\n  cnv:\n    bits: 16\n";
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"quantize", "--model", "tiny_conv", "--config", yaml, "--out",
                 (dir / "q.json").string()}),
            1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(yaml + ":3:3: error: layers.cnv: no op named 'cnv' in model 'tiny_conv'; did "
                            "you mean 'conv'?"),
            std::string::npos)
      << err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel
