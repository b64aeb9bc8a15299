// DRAM layout placement and the emitter's token-FIFO bookkeeping, on hand-computed cases.
#include <gtest/gtest.h>

#include "codegen/dram_layout.hpp"
#include "codegen/emitter.hpp"

namespace tessel::codegen {
namespace {

TEST(DramLayout, regions_start_on_burst_boundaries) {
  DramLayout layout(64);
  auto a = layout.add("input", RegionKind::Input, 100);
  auto b = layout.add("w:conv", RegionKind::Weights, 1);
  auto c = layout.add("out", RegionKind::Output, 64);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a.value(), 0);
  EXPECT_EQ(b.value(), 128);  // 100 bytes round up to two 64-byte bursts
  EXPECT_EQ(c.value(), 192);
  EXPECT_EQ(layout.size_bytes(), 256);
  ASSERT_NE(layout.find("w:conv"), nullptr);
  EXPECT_EQ(layout.find("w:conv")->kind, RegionKind::Weights);
  EXPECT_EQ(layout.find("nothing"), nullptr);
}

TEST(DramLayout, duplicate_and_empty_regions_are_rejected) {
  DramLayout layout(32);
  ASSERT_TRUE(layout.add("x", RegionKind::Input, 8).ok());
  auto twice = layout.add("x", RegionKind::Input, 8);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.reason(), "DRAM region 'x' is placed twice");
  auto empty = layout.add("y", RegionKind::Output, 0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.reason(), "DRAM region 'y': size 0 bytes (must be at least 1)");
}

// A KV cache of 4 rows x 8 bytes after a 100-byte region: the past (rows 0..2) and the new row
// (row 3) are regions within it, at its offset + 0 and + 24; the image does not grow.
TEST(DramLayout, regions_within_a_region_share_its_bytes) {
  DramLayout layout(64);
  ASSERT_TRUE(layout.add("token", RegionKind::Input, 100).ok());
  auto cache = layout.add("cache", RegionKind::Activations, 32);
  auto past = layout.add_within("past", RegionKind::Input, "cache", 0, 24);
  auto row = layout.add_within("row", RegionKind::Output, "cache", 24, 8);
  ASSERT_TRUE(cache.ok() && past.ok() && row.ok());
  EXPECT_EQ(cache.value(), 128);
  EXPECT_EQ(past.value(), 128);
  EXPECT_EQ(row.value(), 152);
  EXPECT_EQ(layout.size_bytes(), 192);
  EXPECT_EQ(layout.find("row")->kind, RegionKind::Output);
  auto outside = layout.add_within("late", RegionKind::Output, "cache", 25, 8);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.reason(),
            "DRAM region 'late': bytes [25, 33) do not lie in region 'cache' (32 bytes)");
  auto orphan = layout.add_within("x", RegionKind::Output, "nowhere", 0, 8);
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.reason(), "DRAM region 'x': no region 'nowhere' to place it in");
  EXPECT_EQ(layout.add_within("row", RegionKind::Output, "cache", 0, 8).reason(),
            "DRAM region 'row' is placed twice");
}

isa::Instruction load_pushing() {
  isa::Load l;
  l.push_next = true;
  return l;
}

TEST(Emitter, pop_without_an_earlier_push_is_an_underflow) {
  Emitter emitter(4);
  isa::Conv conv;
  conv.pop_prev = true;
  auto s = emitter.emit(conv);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.reason(), "instruction 0 (conv): pops load->compute, which is empty");
  EXPECT_EQ(emitter.size(), 0u);
}

TEST(Emitter, push_beyond_the_fifo_depth_is_an_overflow) {
  Emitter emitter(2);
  ASSERT_TRUE(emitter.emit(load_pushing()).ok());
  ASSERT_TRUE(emitter.emit(load_pushing()).ok());
  EXPECT_EQ(emitter.tokens(Fifo::LoadToCompute), 2);
  auto s = emitter.emit(load_pushing());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.reason(),
            "instruction 2 (load): pushes load->compute, which already holds 2 tokens (the FIFO "
            "depth)");
}

TEST(Emitter, finish_demands_empty_fifos) {
  Emitter emitter(2);
  ASSERT_TRUE(emitter.emit(load_pushing()).ok());
  auto s = emitter.finish();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.reason(), "program ends with 1 token(s) left in load->compute");
  isa::Nop nop;
  nop.engine = isa::Engine::kCompute;
  nop.pop_prev = true;
  nop.push_next = true;
  ASSERT_TRUE(emitter.emit(nop).ok());
  isa::Store store;
  store.pop_prev = true;
  ASSERT_TRUE(emitter.emit(store).ok());
  ASSERT_TRUE(emitter.finish().ok());
  EXPECT_EQ(emitter.size(), 4u);
}

TEST(Emitter, instructions_failing_the_isa_check_are_refused) {
  Emitter emitter(2);
  isa::Load load;
  load.pop_prev = true;  // the load engine has no previous engine
  auto s = emitter.emit(load);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.reason().find("instruction 0 (load): field 'pop_prev'"), std::string::npos)
      << s.reason();
}

}  // namespace
}  // namespace tessel::codegen
