// A constant operand wider than one load's c_size (ViT's 197 x 768 position embedding; here
// 300 x 256 = 76,800 int8 elements against c_size's 65,535): its whole-table load is x pixels of
// c elements (codegen/table_ops.cpp), bit exact with the scheduled bytes under every policy.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>

#include "compiler/zoo/builder.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e::wide_constant_test {
namespace {

ir::Graph position_add() {
  zoo::NetBuilder net("position_add", {});
  const std::string x = net.input_shaped("input", {1, 300, 256});
  const std::string pos = net.parameter("pos_embedding", {1, 300, 256}, 0.0, 0.02);
  return net.finish({net.add(x, pos, "pos_add")});
}

TEST(WideConstant, a_constant_wider_than_c_size_loads_as_pixels_bit_exact_under_every_policy) {
  for_every_policy(position_add(), load_hw_config(config_path("cloud-large")),
                   [](const char*, const pipeline::PolicyResult& r) {
                     // 76,800 = 2 x 38,400: the largest c <= 65,535 dividing it.
                     int wide = 0;
                     for (const auto& instruction : r.compiled.program.instructions)
                       if (const auto* l = std::get_if<isa::Load>(&instruction))
                         if (l->kind == isa::Traffic::kWeights && l->c_size * l->x_size == 76800) {
                           ++wide;
                           EXPECT_EQ(l->c_size, 38400u);
                           EXPECT_EQ(l->x_size, 2u);
                           EXPECT_EQ(l->y_size, 1u);
                           EXPECT_EQ(l->dram_stride_x, 38400u);
                           EXPECT_EQ(l->sram_stride_x, 38400u);
                         }
                     EXPECT_GE(wide, 1);
                   });
}

// The same constant on cloud-large with a 32 KiB weight scratchpad, which cannot hold it (76,800
// B): a constant that varies along the rows is loaded by the rows each tile's output needs
// (sched::constant_rows), at most 32 KiB at a time, and each row once when each tile is its own
// rows (bit exact, bytes = the schedule's class by class under every policy). Before, it loaded
// whole and no policy scheduled it ("scratchpad 1 needs up to 76800 live bytes").
TEST(WideConstant, a_constant_larger_than_the_weights_buffer_loads_by_rows) {
  HwConfig config = load_hw_config(config_path("cloud-large"));
  config.scratchpads[1].size_bytes = 32 * 1024;  // weights
  for_every_policy(position_add(), config, [](const char*, const pipeline::PolicyResult& r) {
    int64_t constant = 0, loads = 0;
    for (const auto& instruction : r.compiled.program.instructions)
      if (const auto* l = std::get_if<isa::Load>(&instruction))
        if (l->kind == isa::Traffic::kWeights) {
          const int64_t bytes = int64_t{l->c_size} * l->x_size * l->y_size;
          EXPECT_LE(bytes, 32 * 1024);
          EXPECT_EQ(bytes % 256, 0);  // whole rows of 256 channels
          constant += bytes;
          ++loads;
        }
    EXPECT_EQ(constant, 300 * 256);  // every row once: the tiles' rows do not overlap
    EXPECT_GE(loads, 3);             // 76,800 B in pieces of at most 32 KiB
  });
}

}  // namespace
}  // namespace tessel::e2e::wide_constant_test
