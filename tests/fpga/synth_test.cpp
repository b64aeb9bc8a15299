// Yosys on the real FPGA top (tessel_top + wrapper) for edge-small, within a time bound (slow).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "configs/hw_config.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/tessel_design.hpp"

namespace tessel::fpga {
namespace {

namespace fs = std::filesystem;

TEST(FpgaSynth, edge_small_synthesises_within_the_bound_without_latches) {
  if (std::system("yosys -V >/dev/null 2>&1") != 0) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/edge-small.yaml");
  auto test = make_test_program(config);
  ASSERT_TRUE(test.ok()) << test.reason();
  auto design = tessel_fpga_design(config, test.value(), source_root());
  ASSERT_TRUE(design.ok()) << design.reason();
  const fs::path dir =
      fs::temp_directory_path() / ("tessel_fpga_synth_" + std::to_string(::getpid()));
  FlowOptions options;
  options.timeout = std::chrono::seconds(280);  // CI's slow label: < 5 min on 2 cores
  auto result = run_flow(config, design.value(), test.value(), options, dir.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  const FpgaResources& r = *result.value().resources;
  EXPECT_EQ(r.config_name, "edge-small");
  EXPECT_EQ(r.part, "xc7a100tcsg324-1");
  EXPECT_EQ(r.clock_mhz, 400);
  EXPECT_EQ(r.counts.latch, 0) << "the RTL infers latches";
  EXPECT_GT(r.counts.ff, 0);
  EXPECT_GT(r.counts.lut, 0);
  // The wrapper's program ROM and DRAM banks are block RAM or LUT RAM, never flip-flops only.
  EXPECT_GT(r.counts.bram18 + r.counts.bram36 + r.counts.lut_as_memory, 0);
  auto back = read_resources((dir / "resources.json").string());
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), r);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::fpga
