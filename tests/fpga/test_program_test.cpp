// The FPGA self-test program: hand-computed outputs, every shipped config, and the simulator.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "configs/hw_config.hpp"
#include "hw/fpga/test_program.hpp"
#include "sim/simulator.hpp"

namespace tessel::fpga::test_program_test {
namespace {

const std::string kConfigs = std::string(TESSEL_SOURCE_DIR) + "/configs/hw/";

TEST(FpgaTestProgram, edge_small_output_pixel0_channel0_is_hand_computed) {
  // R = C = 8. in[0][i] = i - 8 = -8..-1; w[i][0] = (3i) % 11 - 5 = -5 -2 1 4 -4 -1 2 5;
  // sum = 40 + 14 - 6 - 20 + 16 + 3 - 4 - 5 = 38.
  auto test = make_test_program(load_hw_config(kConfigs + "edge-small.yaml"));
  ASSERT_TRUE(test.ok()) << test.reason();
  ASSERT_EQ(test.value().expected_output.size(), 4u * 8u);
  EXPECT_EQ(test.value().expected_output[0], 38);
  EXPECT_EQ(test.value().program.instructions.size(), 5u);
  EXPECT_EQ(test.value().instruction_bytes.size(), 5u * 32u);
  // Input 32 B at 0, weights 64 B at 0x100, output 128 B at 0x200; image to 0x300.
  EXPECT_EQ(test.value().weights_dram_addr, 0x100u);
  EXPECT_EQ(test.value().output_dram_addr, 0x200u);
  EXPECT_EQ(test.value().dram.size(), 0x300u);
  EXPECT_EQ(static_cast<std::int8_t>(test.value().dram[0]), -8);
  EXPECT_EQ(static_cast<std::int8_t>(test.value().dram[0x100 + 8]), -2);  // w[1][0]
}

TEST(FpgaTestProgram, unified_buffer_gets_disjoint_aligned_regions) {
  auto test = make_test_program(load_hw_config(kConfigs + "edge-small.yaml"));
  ASSERT_TRUE(test.ok());
  EXPECT_NE(test.value().tasm.find("load sp=unified kind=activations elem=i8 sram_addr=0x0 "),
            std::string::npos)
      << test.value().tasm;
  EXPECT_NE(test.value().tasm.find("load sp=unified kind=weights elem=i8 sram_addr=0x100 "),
            std::string::npos);
  EXPECT_NE(test.value().tasm.find(" w_addr=0x100 acc_addr=0x200 "), std::string::npos);
}

/// Runs the program on the SystemC simulator and compares DRAM after the run.
void expect_simulator_agrees(const std::string& config_file) {
  const HwConfig config = load_hw_config(kConfigs + config_file);
  auto test = make_test_program(config);
  ASSERT_TRUE(test.ok()) << config_file << ": " << test.reason();
  std::vector<isa::Word> words(test.value().instruction_bytes.size() / isa::kInstructionBytes);
  std::memcpy(words.data(), test.value().instruction_bytes.data(),
              test.value().instruction_bytes.size());
  auto run = sim::simulate(config, words, sim::DramImage::from_bytes(test.value().dram));
  ASSERT_TRUE(run.ok()) << run.reason();
  ASSERT_TRUE(run.value().report.ok()) << run.value().report.fault->str();
  EXPECT_EQ(run.value().dram, test.value().expected_dram()) << config_file;
}

TEST(FpgaTestProgram, simulator_computes_the_expected_output_on_every_shipped_config) {
  int configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    SCOPED_TRACE(entry.path().filename().string());
    expect_simulator_agrees(entry.path().filename().string());
    ++configs;
  }
  EXPECT_EQ(configs, 4);
}

TEST(FpgaTestProgram, a_tile_that_does_not_fit_is_a_failure_naming_the_config) {
  const HwConfig tiny =
      load_hw_config(kConfigs + "edge-small.yaml",
                     {{"scratchpads[0].size", "512"}, {"scratchpads[0].banks", "1"}});
  auto test = make_test_program(tiny);
  ASSERT_FALSE(test.ok());
  EXPECT_EQ(test.reason().rfind("the FPGA self-test does not fit edge-small: ", 0), 0u)
      << test.reason();
  EXPECT_NE(test.reason().find("beyond scratchpad 'unified'"), std::string::npos) << test.reason();
}

}  // namespace
}  // namespace tessel::fpga::test_program_test
