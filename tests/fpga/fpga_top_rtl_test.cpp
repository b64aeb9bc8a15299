// The FPGA image in Verilator: tessel_fpga_top runs the embedded self-test and raises `pass`;
// a wrong expected word or a changed input byte keeps it low (label rtl; builds a model).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "configs/hw_config.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/tessel_design.hpp"
#include "hw/fpga/tool_run.hpp"

namespace tessel::fpga {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FpgaTopRtl : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("verilator --version >/dev/null 2>&1") != 0) return;
    dir_ = fs::temp_directory_path() / ("tessel_fpga_rtl_" + std::to_string(::getpid()));
    const HwConfig config =
        load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/edge-small.yaml");
    auto test = make_test_program(config);
    ASSERT_TRUE(test.ok()) << test.reason();
    auto design = tessel_fpga_design(config, test.value(), source_root());
    ASSERT_TRUE(design.ok()) << design.reason();
    FlowOptions options;
    options.synthesize = false;
    auto flow = run_flow(config, design.value(), test.value(), options, dir_.string());
    ASSERT_TRUE(flow.ok()) << flow.reason();
    std::vector<std::string> command = {
        "verilator", "--cc",       "--exe",     "--build",    "-O1",          "-j",
        "2",         "-Wno-fatal", "-Wno-lint", "-Wno-style", "--top-module", "tessel_fpga_top",
        "-Mdir",     "obj"};
    std::istringstream list(read(dir_ / "filelist.f"));
    for (std::string source; std::getline(list, source);) command.push_back(source);
    command.push_back(std::string(TESSEL_SOURCE_DIR) + "/tests/fpga/data/fpga_top_main.cpp");
    auto build = run_tool(command, dir_.string(), (dir_ / "verilator.log").string(),
                          std::chrono::minutes(20));
    ASSERT_TRUE(build.ok()) << build.reason();
    ASSERT_EQ(build.value().outcome, ToolRun::Outcome::kOk) << read(dir_ / "verilator.log");
    built_ = true;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    if (!built_) GTEST_SKIP() << "verilator not found, or the model did not build";
  }

  /// Runs the model in the flow folder; returns its one-line report.
  static std::string run_model() {
    fs::remove(dir_ / "run.out");
    auto run = run_tool({(dir_ / "obj/Vtessel_fpga_top").string()}, dir_.string(),
                        (dir_ / "run.out").string(), std::chrono::minutes(1));
    EXPECT_TRUE(run.ok()) << run.reason();
    return read(dir_ / "run.out");
  }

  static fs::path dir_;
  static bool built_;
};

fs::path FpgaTopRtl::dir_;
bool FpgaTopRtl::built_ = false;

// One test, three runs of one model: CTest runs every TEST in its own process, and building the
// model is the expensive part (minutes), so the checks share it.
TEST_F(FpgaTopRtl, edge_small_self_test_passes_and_corrupted_data_does_not) {
  {
    SCOPED_TRACE("as generated");
    const std::string report = run_model();
    EXPECT_NE(report.find("done 1 fault 0 pass 1"), std::string::npos) << report;
  }
  {
    SCOPED_TRACE("a wrong expected word");
    const std::string good = read(dir_ / "expected.mem");
    std::string bad = good;
    bad[0] = bad[0] == '1' ? '2' : '1';  // the top nibble of the last output in word 0
    std::ofstream(dir_ / "expected.mem", std::ios::trunc) << bad;
    const std::string report = run_model();
    std::ofstream(dir_ / "expected.mem", std::ios::trunc) << good;
    EXPECT_NE(report.find("done 1 fault 0 pass 0"), std::string::npos) << report;
  }
  {
    SCOPED_TRACE("a changed input byte");
    const std::string good = read(dir_ / "dram_bank0.mem");
    std::string bad = good;
    bad[63] = bad[63] == '5' ? '6' : '5';  // the low nibble of DRAM byte 0 (input[0][0])
    std::ofstream(dir_ / "dram_bank0.mem", std::ios::trunc) << bad;
    const std::string report = run_model();
    std::ofstream(dir_ / "dram_bank0.mem", std::ios::trunc) << good;
    EXPECT_NE(report.find("done 1 fault 0 pass 0"), std::string::npos) << report;
  }
}

}  // namespace
}  // namespace tessel::fpga
