// The space-to-depth stem (docs/scheduler.md, "Space-to-depth stem"): a stride-2 conv over a
// 3-channel network input runs as a stride-1 conv over the input's 2x2 space-to-depth view.
// End to end bit exact for the three pad parities, and the gather loads and the rearranged
// weights checked by hand.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "codegen/codegen.hpp"
#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

// 3 x 16 x 16 -> conv k x k / s, pad p (8 channels) -> BN -> ReLU -> conv 3x3 (8) -> ReLU.
ir::Graph stem_net(std::int64_t kernel, std::int64_t pad, std::int64_t stride = 2) {
  zoo::NetBuilder net(
      "stem_k" + std::to_string(kernel) + "s" + std::to_string(stride) + "p" + std::to_string(pad),
      {});
  std::string x = net.input("input", 3, 16, 16);
  x = net.conv_bn_relu(x, "conv1", "bn1", "relu1", zoo::conv_spec(8, kernel, stride, pad));
  x = net.relu(net.conv(x, "conv2", zoo::conv_spec(8, 3, 1, 1)), "relu2");
  return net.finish({x});
}

TEST(SpaceToDepthStem, every_pad_parity_is_bit_exact_under_every_policy) {
  // 7x7 pad 3 and 3x3 pad 1 shift the kernel by one row and column (ResNet, MobileNet-v2);
  // 5x5 pad 2 does not. Each is rewritten on both configs (3 x 4 = 12 of 16 array rows).
  for (const auto& [kernel, pad] : std::vector<std::pair<int, int>>{{7, 3}, {5, 2}, {3, 1}}) {
    for (const char* config : {"npc19-deepfusion", "edge-small"}) {
      for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
        SCOPED_TRACE(std::to_string(kernel) + "x" + std::to_string(kernel) + " pad " +
                     std::to_string(pad) + " on " + config + ", " + policy);
        sched::ScheduledNet scheduled;
        expect_end_to_end(stem_net(kernel, pad), load_hw_config(config_path(config)), policy,
                          nullptr, &scheduled);
        const sched::Net& net = scheduled.net;
        ASSERT_EQ(net.tensor(0).space_to_depth, 2) << "the input is not read space-to-depth";
        EXPECT_EQ(net.tensor(0).shape, (sched::Shape3{12, 8, 8}));
      }
    }
  }
}

TEST(SpaceToDepthStem, a_stride_f_stem_reads_f_row_phases_bit_exact_under_every_policy) {
  // Patch convs (kernel = stride: ConvNeXt's 4/4, ViT's 16/16; 8/8) and 8x8 / 4 pad 2 (shift 2,
  // a 3x3 kernel after): the input is 3 f^2 x 16/f x 16/f, each load f DMAs of stored rows.
  struct Stem {
    int kernel, stride, pad;
  };
  for (const Stem& c : {Stem{4, 4, 0}, Stem{8, 4, 2}, Stem{8, 8, 0}, Stem{16, 16, 0}}) {
    for (const char* config : {"npc19-deepfusion", "edge-small"}) {
      for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
        SCOPED_TRACE(std::to_string(c.kernel) + "x" + std::to_string(c.kernel) + " / " +
                     std::to_string(c.stride) + " pad " + std::to_string(c.pad) + " on " + config +
                     ", " + policy);
        sched::ScheduledNet scheduled;
        CompiledProgram compiled;
        expect_end_to_end(stem_net(c.kernel, c.pad, c.stride), load_hw_config(config_path(config)),
                          policy, &compiled, &scheduled);
        const std::int64_t f = c.stride;
        ASSERT_EQ(scheduled.net.tensor(0).space_to_depth, f);
        EXPECT_EQ(scheduled.net.tensor(0).shape, (sched::Shape3{3 * f * f, 16 / f, 16 / f}));
        // Every load of the input is one of f row phases: c_size f x 3 channels, a stored row
        // group (f rows of 16 pixels x 3 channels) per s2d row.
        const DramRegion* input = nullptr;
        for (const auto& region : compiled.layout.regions())
          if (region.kind == RegionKind::Input) input = &region;
        ASSERT_NE(input, nullptr);
        std::int64_t loads = 0;
        for (const auto& instruction : compiled.program.instructions)
          if (const auto* l = std::get_if<isa::Load>(&instruction))
            if (static_cast<std::int64_t>(l->dram_addr) >= input->offset &&
                static_cast<std::int64_t>(l->dram_addr) < input->offset + input->size_bytes) {
              ++loads;
              EXPECT_EQ(l->c_size, static_cast<std::uint32_t>(3 * f));
              EXPECT_EQ(l->dram_stride_x, static_cast<std::uint32_t>(3 * f));
              EXPECT_EQ(l->dram_stride_y, static_cast<std::uint32_t>(3 * 16 * f));
            }
        EXPECT_GT(loads, 0);
        EXPECT_EQ(loads % f, 0);
      }
    }
  }
}

TEST(SpaceToDepthStem, gather_loads_and_rearranged_weights_by_hand) {
  // tiny_stem on npc19-deepfusion (16 x 16 array, 16-bit), opfusion: conv1 is 7x7 / 2, pad 3,
  // 3 -> 8 channels, rewritten to 4x4 / 1 over 12 channels (shift 1: original tap
  // (2y + a - 1, 2x + b - 1) for s2d channel (2a + b) 3 + k).
  const HwConfig config = load_hw_config(config_path("npc19-deepfusion"));
  CompiledProgram compiled;
  sched::ScheduledNet scheduled;
  expect_end_to_end(zoo::build_model("tiny_stem").value(), config, "opfusion", &compiled,
                    &scheduled);
  const sched::Op& conv1 = scheduled.net.op(1);
  ASSERT_EQ(conv1.name, "conv1");
  EXPECT_EQ(conv1.window.kernel_h, 4);
  EXPECT_EQ(conv1.window.stride_h, 1);
  EXPECT_EQ(conv1.window.pad_top, 2);
  EXPECT_EQ(conv1.window.pad_bottom, 1);

  // Loads of the input region: pairs, stored rows 2y and 2y + 1 of the same tile rows, each
  // row one run of 16 pixels x 3 channels = 96 bytes, landing at channels 0 and 6 of the
  // s2d pixels.
  const DramRegion* input = nullptr;
  for (const auto& region : compiled.layout.regions())
    if (region.kind == RegionKind::Input) input = &region;
  ASSERT_NE(input, nullptr);
  std::vector<isa::Load> loads;
  for (const auto& instruction : compiled.program.instructions)
    if (const auto* l = std::get_if<isa::Load>(&instruction))
      if (static_cast<std::int64_t>(l->dram_addr) >= input->offset &&
          static_cast<std::int64_t>(l->dram_addr) < input->offset + input->size_bytes)
        loads.push_back(*l);
  ASSERT_FALSE(loads.empty());
  ASSERT_EQ(loads.size() % 2, 0u);
  std::int64_t rows = 0;
  for (size_t i = 0; i < loads.size(); i += 2) {
    const isa::Load& even = loads[i];
    const isa::Load& odd = loads[i + 1];
    EXPECT_EQ(even.c_size, 6u);
    EXPECT_EQ(even.dram_stride_x, 6u);
    EXPECT_EQ(even.dram_stride_y, 96u);  // two stored rows of 16 pixels x 3 channels
    EXPECT_EQ(even.x_size, 8u);
    EXPECT_EQ((even.dram_addr - input->offset) % 192, 0u);  // starts on an even stored row
    EXPECT_EQ(odd.dram_addr, even.dram_addr + 96);          // the next stored row (2 B each)
    EXPECT_EQ(odd.sram_addr, even.sram_addr + 12);          // channel 6 of the same pixel
    EXPECT_EQ(odd.y_size, even.y_size);
    EXPECT_EQ(odd.c_size, 6u);
    rows += even.y_size;
  }
  EXPECT_GE(rows, 8);  // every s2d row at least once (halo rows may repeat)

  // The packed weights: one block [ky][kx][r < 12][c < 8] (8 output channels, 12 rows).
  const ir::Graph quantized = [&] {
    auto prepared = cpu::prepare_graph(zoo::build_model("tiny_stem").value());
    quant::QuantConfig qconfig;
    qconfig.bits = config.matrix.input_bits;
    return cpu::quantize_model(prepared.value(), qconfig,
                               cpu::synthetic_samples(prepared.value(), qconfig))
        .value()
        .graph;
  }();
  const ir::Tensor& w = quantized.tensor(quantized.op(*quantized.find_op("conv1")).inputs[1]);
  ASSERT_EQ(w.shape, (ir::Shape{8, 3, 7, 7}));
  auto original = [&](std::int64_t o, std::int64_t k, std::int64_t y, std::int64_t x) {
    return w.int_values[static_cast<size_t>(((o * 3 + k) * 7 + y) * 7 + x)];
  };
  const DramRegion* region = compiled.layout.find("w:conv1");
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(region->size_bytes, 8 * 12 * 4 * 4 * 2);  // 45 zero taps per channel pair stored too
  auto packed = [&](std::int64_t y, std::int64_t x, std::int64_t r, std::int64_t c) {
    const std::int64_t at = region->offset + (((y * 4 + x) * 12 + r) * 8 + c) * 2;
    return static_cast<std::int16_t>(compiled.dram[static_cast<size_t>(at)] |
                                     compiled.dram[static_cast<size_t>(at) + 1] << 8);
  };
  bool nonzero = false;
  for (std::int64_t c = 0; c < 8; ++c)
    for (std::int64_t k = 0; k < 3; ++k) {
      // Tap (0, 0): only parity (1, 1), rows 9-11, reaches the original kernel, at (0, 0).
      for (std::int64_t parity = 0; parity < 3; ++parity)
        EXPECT_EQ(packed(0, 0, parity * 3 + k, c), 0);
      EXPECT_EQ(packed(0, 0, 9 + k, c), original(c, k, 0, 0));
      // Tap (0, 3): row a = 1 only (original row 0), columns 5 and 6 (b = 0, 1).
      EXPECT_EQ(packed(0, 3, 0 + k, c), 0);
      EXPECT_EQ(packed(0, 3, 3 + k, c), 0);
      EXPECT_EQ(packed(0, 3, 6 + k, c), original(c, k, 0, 5));
      EXPECT_EQ(packed(0, 3, 9 + k, c), original(c, k, 0, 6));
      // Tap (3, 3): every parity, original (5 + a, 5 + b).
      EXPECT_EQ(packed(3, 3, 0 + k, c), original(c, k, 5, 5));
      EXPECT_EQ(packed(3, 3, 3 + k, c), original(c, k, 5, 6));
      EXPECT_EQ(packed(3, 3, 6 + k, c), original(c, k, 6, 5));
      EXPECT_EQ(packed(3, 3, 9 + k, c), original(c, k, 6, 6));
      nonzero |= original(c, k, 6, 6) != 0;
    }
  EXPECT_TRUE(nonzero);
}

TEST(SpaceToDepthStem, turned_off_the_stem_reads_the_stored_input) {
  sched::MapSpaceFeatures features;
  features.space_to_depth_stem = false;
  sched::ScheduledNet scheduled;
  expect_end_to_end(zoo::build_model("tiny_stem").value(),
                    load_hw_config(config_path("npc19-deepfusion")), "optimal", nullptr, &scheduled,
                    features);
  EXPECT_EQ(scheduled.net.tensor(0).space_to_depth, 1);
  EXPECT_EQ(scheduled.net.tensor(0).shape, (sched::Shape3{3, 16, 16}));
  EXPECT_EQ(scheduled.net.op(1).window.kernel_h, 7);
}

}  // namespace
}  // namespace tessel::codegen
