// Yosys on the FPGA top (tessel_top + wrapper, the scratchpads in block RAM) for edge-small
// (slow: label synth).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "configs/hw_config.hpp"
#include "hw/fpga/bram_map.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/tessel_design.hpp"

namespace tessel::fpga {
namespace {

namespace fs = std::filesystem;

TEST(FpgaSynth, edge_small_synthesises_within_the_bound_with_its_scratchpads_in_block_ram) {
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
  options.timeout = std::chrono::seconds(TESSEL_FPGA_SYNTH_TIMEOUT_S);
  auto result = run_flow(config, design.value(), test.value(), options, dir.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  const FpgaResources& r = *result.value().resources;
  EXPECT_EQ(r.config_name, "edge-small");
  EXPECT_EQ(r.part, "xc7a100tcsg324-1");
  EXPECT_EQ(r.clock_mhz, 400);
  EXPECT_EQ(r.counts.latch, 0) << "the RTL infers latches";
  EXPECT_GT(r.counts.ff, 0);
  EXPECT_GT(r.counts.lut, 0);
  // The synthesised logic fits the part's 63,400 LUTs since session 5 (41,816 measured, Yosys
  // counts; docs/fpga.md; session 21, with the scratchpads synthesised too: 52,163) and its 240
  // DSP48E1 since session 6 (362 before). The 8 x 8 int8 MAC
  // array alone is 32 DSP48E1, two products per DSP (tessel_mac_pair): fewer means the array
  // was trimmed or its products left the DSPs.
  EXPECT_LE(r.counts.lut, 63'400) << "edge-small's logic no longer fits the xc7a100t's LUTs";
  EXPECT_GE(r.counts.dsp, 32) << "the MAC array's 32 packed multipliers are missing";
  EXPECT_LE(r.counts.dsp, 240) << "edge-small no longer fits the xc7a100t's 240 DSP48E1";
  // Nothing is a black box since session 21: the scratchpads are block RAM. 128 KiB in 16 banks
  // of 4-byte words (2048 deep: 2 RAMB36E1 each in 1K x 36 true dual-port mode), kept twice:
  // 64 RAMB36E1 (docs/fpga.md, "The scratchpads in block RAM"), within the part's 135.
  EXPECT_TRUE(r.black_boxes.empty());
  EXPECT_FALSE(r.scratchpad_bram.has_value());
  EXPECT_GE(r.counts.bram36_equivalent(), 64.0) << "the scratchpads are not (all) block RAM";
  EXPECT_LE(r.counts.bram36_equivalent(), 135.0) << "more block RAM than the xc7a100t has";
  EXPECT_DOUBLE_EQ(r.bram36_equivalent_total(), r.counts.bram36_equivalent());
  // rtl_bram(), the count the sweeps report as fpga_brams, is Yosys's (the wrapper's memories
  // are LUT RAM here).
  auto rule = rtl_bram(config);
  ASSERT_TRUE(rule.ok()) << rule.reason();
  EXPECT_EQ(rule.value().bram36, r.counts.bram36);
  EXPECT_EQ(r.counts.bram18, 0);
  // The wrapper's program ROM and DRAM banks are block RAM or LUT RAM, never flip-flops only
  // (session 21: LUT RAM, 1,100 LUTs).
  EXPECT_GT(r.counts.bram18 + (r.counts.bram36 - 64) + r.counts.lut_as_memory, 0);
  // The per-unit rows (docs/fpga.md, "What each unit costs"): six units and "other".
  ASSERT_EQ(r.units.size(), 7u);
  EXPECT_EQ(r.units[0].module, "tessel_matrix");
  EXPECT_EQ(r.units[0].instances, 1);
  EXPECT_GE(r.units[0].counts.dsp, 32) << "the 32 tessel_mac_pair DSP48E1 are in the matrix row";
  EXPECT_EQ(r.units[2].module, "tessel_rownorm");
  EXPECT_EQ(r.units[2].instances, 0) << "edge-small declares no row normaliser";
  EXPECT_EQ(r.units[3].module, "tessel_sram");
  EXPECT_EQ(r.units[3].counts.bram36, rule.value().bram36) << "the scratchpads' block RAM";
  EXPECT_EQ(r.units[4].instances, 2);  // load and store DMA
  EXPECT_EQ(r.units[5].instances, 3);  // three instruction queues
  std::int64_t lut = 0;
  for (const UnitCost& u : r.units) lut += u.counts.lut;
  EXPECT_EQ(lut, r.counts.lut);
  auto back = read_resources((dir / "resources.json").string());
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), r);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessel::fpga
