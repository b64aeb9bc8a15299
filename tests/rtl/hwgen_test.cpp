// hw/gen: the parameters derived from a config and the text of tessel_cfg_pkg.
#include <gtest/gtest.h>

#include <string>

#include "configs/hw_config.hpp"
#include "hw/gen/hwgen.hpp"

namespace tessel::hw {
namespace {

HwConfig micro() {
  return load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml");
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(Hwgen, micro_parameters_follow_the_config) {
  auto params = derive_hw_params(micro());
  ASSERT_TRUE(params.ok()) << params.reason();
  const HwParams& p = params.value();
  EXPECT_EQ(p.matrix_rows, 4u);
  EXPECT_EQ(p.matrix_cols, 4u);
  EXPECT_EQ(p.fill_cycles, 4u);
  EXPECT_EQ(p.vector_lanes, 4u);
  ASSERT_EQ(p.scratchpads.size(), 3u);
  EXPECT_EQ(p.scratchpads[0].size_bytes, 4096u);
  EXPECT_EQ(p.scratchpads[0].holds_mask, 0b1001u);  // activations, outputs
  EXPECT_EQ(p.scratchpads[1].holds_mask, 0b0010u);  // weights
  EXPECT_EQ(p.scratchpads[2].holds_mask, 0b0100u);  // accumulators
  EXPECT_EQ(p.sp_addr_bits, 12u);                   // 4 KiB
  EXPECT_EQ(p.dram_latency_cycles, 10u);            // 10 ns at 1000 MHz
  EXPECT_EQ(p.dma_bytes_per_cycle, 64u);            // burst 64 within [16, 64]
  EXPECT_EQ(p.insn_queue_depth, 4u);
  EXPECT_EQ(p.token_fifo_depth, 2u);
}

TEST(Hwgen, package_text_declares_every_parameter) {
  const std::string sv = config_package_sv(micro());
  EXPECT_TRUE(contains(sv, "package tessel_cfg_pkg;\n"));
  EXPECT_TRUE(contains(sv, "\nendpackage\n"));
  for (const char* line :
       {"localparam int unsigned MATRIX_ROWS = 4;", "localparam int unsigned MATRIX_COLS = 4;",
        "localparam int unsigned INPUT_BITS = 8;", "localparam int unsigned NUM_SCRATCHPADS = 3;",
        "localparam int unsigned SP2_SIZE_BYTES = 4096;",
        "localparam int unsigned SP1_PORT_BYTES = 16;",
        "localparam int unsigned DRAM_BURST_BYTES = 64;",
        "localparam int unsigned DMA_BYTES_PER_CYCLE = 64;",
        "localparam int unsigned INSN_QUEUE_DEPTH = 4;",
        "localparam int unsigned TOKEN_FIFO_DEPTH = 2;",
        "localparam int unsigned VECTOR_PIPE_CYCLES = 4;"})
    EXPECT_TRUE(contains(sv, line)) << line;
  // The packed table lists entry 15 first and entry 0 last.
  EXPECT_TRUE(contains(sv,
                       "SP_SIZE_BYTES = {32'd0, 32'd0, 32'd0, 32'd0, 32'd0, 32'd0, 32'd0, "
                       "32'd0, 32'd0, 32'd0, 32'd0, 32'd0, 32'd0, 32'd4096, 32'd4096, "
                       "32'd4096};"));
}

TEST(Hwgen, shipped_configs_derive) {
  for (const char* name : {"vta-pynq", "edge-small", "npc19-deepfusion", "cloud-large"}) {
    const HwConfig config = load_hw_config(hw_config_dir() + "/" + name + ".yaml");
    auto params = derive_hw_params(config);
    ASSERT_TRUE(params.ok()) << name << ": " << params.reason();
  }
  const HwConfig edge = load_hw_config(hw_config_dir() + "/edge-small.yaml");
  const HwParams p = derive_hw_params(edge).value();
  EXPECT_EQ(p.sp_addr_bits, 17u);         // 128 KiB unified
  EXPECT_EQ(p.dram_latency_cycles, 48u);  // 120 ns at 400 MHz
  EXPECT_EQ(p.dma_bytes_per_cycle, 32u);  // burst 32
  // ISA version 3's units: edge-small declares none, micro all four (docs/config.md).
  EXPECT_EQ(p.vector_lookup_table, 0u);
  EXPECT_EQ(p.vector_row_reduce, 0u);
  EXPECT_EQ(p.vector_broadcast_multiply, 0u);
  EXPECT_EQ(p.matrix_activation_operands, 0u);
  EXPECT_EQ(p.vector_row_normalise, 0u);
  const HwParams m = derive_hw_params(micro()).value();
  EXPECT_EQ(m.matrix_activation_operands, 1u);
  EXPECT_EQ(m.vector_lookup_table, 1u);
  EXPECT_EQ(m.vector_row_reduce, 1u);
  EXPECT_EQ(m.vector_broadcast_multiply, 1u);
  EXPECT_EQ(m.vector_row_normalise, 1u);
}

TEST(Hwgen, seventeen_scratchpads_are_refused) {
  HwConfig config = micro();
  while (config.scratchpads.size() < 17) config.scratchpads.push_back(config.scratchpads[0]);
  auto params = derive_hw_params(config);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.reason(),
            "scratchpads: 17 scratchpads; the RTL supports at most 16 (the ISA's 4-bit sp field)");
}

TEST(Hwgen, a_wider_weight_load_path_is_refused_by_name) {
  HwConfig config = micro();
  config.matrix.weight_load_rows = 2;
  auto params = derive_hw_params(config);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.reason(),
            "matrix.weight_load_rows: 2 rows a cycle; the RTL loads one row of a held block a "
            "cycle (1)");
}

}  // namespace
}  // namespace tessel::hw
