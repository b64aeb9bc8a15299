// The analytic scratchpad-to-block-RAM mapping, against hand-computed counts.
#include <gtest/gtest.h>

#include "configs/hw_config.hpp"
#include "hw/fpga/bram_map.hpp"

namespace tessel::fpga::bram_map_test {
namespace {

const std::string kSource = TESSEL_SOURCE_DIR;

ScratchpadConfig pad(std::int64_t size_bytes, int banks, int port_width_bytes) {
  ScratchpadConfig s;
  s.name = "s";
  s.size_bytes = size_bytes;
  s.banks = banks;
  s.port_width_bytes = port_width_bytes;
  s.holds = {DataKind::kActivations};
  return s;
}

TEST(FpgaBramMap, shapes_are_ug473s_with_byte_data_widths) {
  ASSERT_EQ(bram_shapes().size(), 13u);
  for (const BramShape& shape : bram_shapes()) {
    // Every shape holds 32 Kib (RAMB36E1) or 16 Kib (RAMB18E1) of data, plus one parity bit
    // per byte in the x9/x18/x36/x72 shapes, which the byte data leave unused.
    const int data_kib = shape.primitive == "RAMB36E1" ? 32 : 16;
    EXPECT_EQ(shape.depth_words * shape.data_bits, data_kib * 1024) << shape.name();
    const int parity_bits = shape.data_bits >= 8 ? shape.data_bits / 8 : 0;
    EXPECT_EQ(shape.port_bits, shape.data_bits + parity_bits) << shape.name();
    EXPECT_DOUBLE_EQ(shape.bram36_cost, data_kib / 32.0) << shape.name();
    EXPECT_EQ(shape.simple_dual_port_only, shape.port_bits == 2 * 36 * shape.bram36_cost)
        << shape.name();
  }
  EXPECT_EQ(bram_shapes().front().name(), "512x72");
  EXPECT_EQ(bram_shapes().back().name(), "16Kx1");
}

TEST(FpgaBramMap, edge_small_unified_buffer_is_32_ramb36) {
  // 128 KiB, 8 banks x 8 B: each bank 2048 words x 64 bits = 128 Kib = four 32-Kib RAMB36E1
  // (512x72 SDP: 4 deep x 1 wide; 1Kx36 and 2Kx18 also take 4, the first listed wins).
  const ScratchpadBram m = map_scratchpad(pad(128 * 1024, 8, 8));
  EXPECT_EQ(m.bank_depth_words, 2048);
  EXPECT_EQ(m.bank_width_bits, 64);
  EXPECT_EQ(m.shape.primitive, "RAMB36E1");
  EXPECT_EQ(m.shape.name(), "512x72");
  EXPECT_EQ(m.primitives_per_bank, 4);
  EXPECT_EQ(m.bram36, 32);
  EXPECT_EQ(m.bram18, 0);
  EXPECT_DOUBLE_EQ(m.bram36_equivalent(), 32.0);
  EXPECT_DOUBLE_EQ(m.bit_efficiency, 1.0);
}

TEST(FpgaBramMap, narrow_one_kib_deep_bank_takes_half_a_tile) {
  // 2 KiB, 1 bank x 2 B: 1024 x 16 bits. RAMB36E1 1Kx36 would be 1 tile; RAMB18E1 1Kx18 is 0.5.
  const ScratchpadBram m = map_scratchpad(pad(2048, 1, 2));
  EXPECT_EQ(m.shape.primitive, "RAMB18E1");
  EXPECT_EQ(m.shape.name(), "1Kx18");
  EXPECT_EQ(m.bram18, 1);
  EXPECT_EQ(m.bram36, 0);
  EXPECT_DOUBLE_EQ(m.bram36_equivalent(), 0.5);
  EXPECT_DOUBLE_EQ(m.bit_efficiency, 1.0);
}

TEST(FpgaBramMap, wide_shallow_bank_is_port_width_bound) {
  // 4 KiB, 1 bank x 64 B: 64 words x 512 bits. The width needs 8 RAMB36E1 512x72 (64 data
  // bits each) although 4 KiB is an eighth of their capacity (or 16 RAMB18E1 512x36: also 8
  // tiles, more primitives).
  const ScratchpadBram m = map_scratchpad(pad(4096, 1, 64));
  EXPECT_EQ(m.bank_depth_words, 64);
  EXPECT_EQ(m.shape.name(), "512x72");
  EXPECT_EQ(m.primitives_per_bank, 8);
  EXPECT_EQ(m.bram36, 8);
  EXPECT_DOUBLE_EQ(m.bit_efficiency, 0.125);
}

TEST(FpgaBramMap, deep_one_byte_bank_uses_narrow_ramb36_shapes) {
  // 64 KiB, 1 bank x 1 B: 65536 x 8 bits = 512 Kib = 16 RAMB36E1 (4Kx9: 16 deep x 1 wide;
  // 32Kx1 would be 2 deep x 8 wide, also 16; the first listed with the fewest wins).
  const ScratchpadBram m = map_scratchpad(pad(65536, 1, 1));
  EXPECT_EQ(m.bram36, 16);
  EXPECT_EQ(m.shape.name(), "4Kx9");
}

TEST(FpgaBramMap, vta_pynq_buffers_are_112_ramb36) {
  // inp 32 KiB x 16 B: 2048 x 128 -> 4 deep x 2 wide = 8; wgt 256 KiB x 256 B: 1024 x 2048 ->
  // 2 x 32 = 64; acc 128 KiB x 64 B: 2048 x 512 -> 4 x 8 = 32; out as inp: 8. 112 of the
  // Zynq-7020's 140.
  const HwConfig config = load_hw_config(kSource + "/configs/hw/vta-pynq.yaml");
  const ScratchpadBramMap map = map_scratchpads(config);
  ASSERT_EQ(map.scratchpads.size(), 4u);
  EXPECT_EQ(map.scratchpads[0].name, "inp");
  EXPECT_EQ(map.scratchpads[0].bram36, 8);
  EXPECT_EQ(map.scratchpads[1].name, "wgt");
  EXPECT_EQ(map.scratchpads[1].bram36, 64);
  EXPECT_EQ(map.scratchpads[2].name, "acc");
  EXPECT_EQ(map.scratchpads[2].bram36, 32);
  EXPECT_EQ(map.scratchpads[3].name, "out");
  EXPECT_EQ(map.scratchpads[3].bram36, 8);
  EXPECT_EQ(map.bram36, 112);
  EXPECT_EQ(map.bram18, 0);
  EXPECT_DOUBLE_EQ(map.bram36_equivalent(), 112.0);
}

TEST(FpgaBramMap, micro_config_mixes_full_and_half_used_tiles) {
  // act 4 KiB x 4 B: 1024 x 32 -> one RAMB36E1 1Kx36. wgt and acc 4 KiB x 16 B: 256 x 128 ->
  // two RAMB36E1 512x72 each, half full (256 of 512 words).
  const HwConfig config = load_hw_config(kSource + "/tests/isa/programs/micro.yaml");
  const ScratchpadBramMap map = map_scratchpads(config);
  ASSERT_EQ(map.scratchpads.size(), 3u);
  EXPECT_EQ(map.scratchpads[0].shape.name(), "1Kx36");
  EXPECT_EQ(map.scratchpads[0].bram36, 1);
  EXPECT_EQ(map.scratchpads[1].bram36, 2);
  EXPECT_DOUBLE_EQ(map.scratchpads[1].bit_efficiency, 0.5);
  EXPECT_EQ(map.scratchpads[2].bram36, 2);
  EXPECT_EQ(map.bram36, 5);
}

// The RTL's own block RAM (hw/rtl/tessel_sram.sv; docs/fpga.md "The scratchpads in block RAM"),
// by hand from the port widths tessel_top gives it (bytes): read a = max(max(R, C) IB, 4V),
// b and the compute write = max(4C, 4V), c = max(C WB, 4V), the DMA's DW (the burst clamped
// to [16, 64]); banks = the power of two at or above widest / 4 + 1; 2 copies.
TEST(FpgaRtlBram, edge_small_vta_pynq_and_micro_by_hand) {
  struct Case {
    const char* yaml;
    int widest, banks;
    std::vector<std::int64_t> depths;
    std::int64_t bram36;
  };
  const std::vector<Case> cases = {
      // 8 x 8 int8, V 8, DW 32: ports 32 B -> 16 banks, 64-byte rows; 128 KiB: 2048 words a
      // bank, 2 tiles each: 2 x 16 x 2 = 64 (what Yosys maps, tests/fpga/synth_test.cpp).
      {"/configs/hw/edge-small.yaml", 32, 16, {2048}, 64},
      // 16 x 16 int8, V 16, DW 64 (128-byte bursts clamped): 32 banks, 128-byte rows; inp and
      // out 32 KiB: 256 words, acc 128 KiB: 1024, wgt 256 KiB: 2048 (2 tiles):
      // 2 x 32 x (1 + 2 + 1 + 1) = 320, against the xc7z020's 140.
      {"/configs/hw/vta-pynq.yaml", 64, 32, {256, 2048, 1024, 256}, 320},
      // 4 x 4, V 4, DW 64: 32 banks; three 4 KiB scratchpads, 32 words a bank: 2 x 32 x 3.
      {"/tests/isa/programs/micro.yaml", 64, 32, {32, 32, 32}, 192},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto bram = rtl_bram(load_hw_config(kSource + c.yaml));
    ASSERT_TRUE(bram.ok()) << bram.reason();
    EXPECT_EQ(bram.value().widest_port_bytes, c.widest);
    EXPECT_EQ(bram.value().banks, c.banks);
    EXPECT_EQ(bram.value().bank_depth_words, c.depths);
    EXPECT_EQ(bram.value().bram36, c.bram36);
  }
}

}  // namespace
}  // namespace tessel::fpga::bram_map_test
