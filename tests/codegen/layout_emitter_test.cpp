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
