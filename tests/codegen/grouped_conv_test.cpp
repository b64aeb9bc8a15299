// Grouped convolutions whose groups are not whole column blocks of the array (issue 36 item
// 1; docs/codegen.md "Grouped convolution"): RegNet's groups of 24 and 48 channels on 128 and
// 16 columns. Each conv instruction's unit of groups starts a column block of its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/zoo/builder.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/net.hpp"
#include "scheduler/tiling.hpp"
#include "scheduler/weight_loads.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using sched::ColumnBlock;
using sched::Interval;
using test::config_path;
using test::expect_end_to_end;

std::vector<std::pair<int64_t, int64_t>> grouped_blocks(Interval c, int64_t unit, int64_t cols) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const ColumnBlock& b : sched::column_blocks(c, unit, cols))
    out.emplace_back(b.first, b.count);
  return out;
}

// k = min(floor(C / O), G, floor(R / I)) where a group is narrower than the C = 128 columns.
TEST(GroupedConv, groups_per_block_by_hand) {
  const sched::Machine m = sched::unified_machine(1 << 20, 128, 128);
  EXPECT_EQ(sched::conv_groups_per_block(m, 37, 24, 24), 5);   // RegNet-Y 1.6GF: 120 of 128
  EXPECT_EQ(sched::conv_groups_per_block(m, 21, 48, 48), 2);   // RegNet-X 3.2GF: 96 of 128
  EXPECT_EQ(sched::conv_groups_per_block(m, 32, 4, 4), 32);    // ResNeXt: all 128 columns
  EXPECT_EQ(sched::conv_groups_per_block(m, 2, 16, 16), 2);    // every group in one block
  EXPECT_EQ(sched::conv_groups_per_block(m, 32, 64, 16), 2);   // the rows bound it: 2 x 64 = 128
  EXPECT_EQ(sched::conv_groups_per_block(m, 4, 200, 64), 1);   // one group's inputs exceed R
  EXPECT_EQ(sched::conv_groups_per_block(m, 6, 168, 168), 1);  // wider than the array
  const sched::Machine small = sched::unified_machine(1 << 20, 16, 16);
  EXPECT_EQ(sched::conv_groups_per_block(small, 37, 24, 24), 1);
  EXPECT_EQ(sched::conv_groups_per_block(small, 32, 4, 4), 4);
}

TEST(GroupedConv, column_blocks_by_hand) {
  // 37 groups of 24 in units of 5 (120 channels) on 128 columns: 8 blocks, the last unit's 2
  // groups (48 channels) in the eighth.
  auto b = grouped_blocks({0, 888}, 120, 128);
  ASSERT_EQ(b.size(), 8u);
  for (int64_t u = 0; u < 7; ++u)
    EXPECT_EQ(b[static_cast<size_t>(u)], std::make_pair(u * 120, int64_t{120}));
  EXPECT_EQ(b[7], std::make_pair(int64_t{840}, int64_t{48}));
  EXPECT_EQ(sched::column_block_count({0, 888}, 120, 128), 8);
  EXPECT_FALSE(sched::columns_contiguous({0, 888}, 120, 128));
  // A slice of units 2 and 3 of them.
  EXPECT_EQ(grouped_blocks({240, 480}, 120, 128),
            (std::vector<std::pair<int64_t, int64_t>>{{240, 120}, {360, 120}}));
  // One group of 24 per unit on 16 columns: 16 + 8 columns a group.
  EXPECT_EQ(grouped_blocks({0, 48}, 24, 16),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 16}, {16, 8}, {24, 16}, {40, 8}}));
  EXPECT_EQ(sched::column_block_count({0, 48}, 24, 16), 4);
  // A slice from group 0's second block (one group a unit may be cut at its blocks).
  EXPECT_EQ(grouped_blocks({16, 48}, 24, 16),
            (std::vector<std::pair<int64_t, int64_t>>{{16, 8}, {24, 16}, {40, 8}}));
  EXPECT_EQ(sched::column_block_count({16, 48}, 24, 16), 3);
  EXPECT_FALSE(sched::columns_contiguous({16, 48}, 24, 16));
  EXPECT_TRUE(sched::columns_contiguous({8, 40}, 24, 16));  // [8, 24) is one block
  EXPECT_TRUE(sched::starts_unit_slice(16, 24, 1));
  EXPECT_TRUE(sched::starts_unit_slice(7, 24, 1));     // a group a unit: any channel
  EXPECT_FALSE(sched::starts_unit_slice(24, 120, 5));  // inside a block-diagonal unit
  EXPECT_TRUE(sched::starts_unit_slice(240, 120, 5));
  // A unit of whole blocks cut off its blocks: every portion from a block of its own.
  EXPECT_EQ(grouped_blocks({8, 64}, 32, 16),
            (std::vector<std::pair<int64_t, int64_t>>{{8, 16}, {24, 8}, {32, 16}, {48, 16}}));
  EXPECT_EQ(sched::column_block_count({8, 64}, 32, 16), 4);
  EXPECT_FALSE(sched::columns_contiguous({8, 64}, 32, 16));
  EXPECT_TRUE(sched::columns_contiguous({16, 64}, 32, 16));
  // Whole blocks (ResNeXt's 128, 48 on 16 columns) and a dense conv: the plain blocks from c.b.
  EXPECT_EQ(grouped_blocks({0, 96}, 48, 16), grouped_blocks({0, 96}, 0, 16));
  EXPECT_EQ(grouped_blocks({0, 96}, 48, 16).size(), 6u);
  EXPECT_TRUE(sched::columns_contiguous({0, 96}, 48, 16));
  EXPECT_EQ(grouped_blocks({10, 300}, 0, 128),
            (std::vector<std::pair<int64_t, int64_t>>{{10, 128}, {138, 128}, {266, 34}}));
  // One unit alone is contiguous, however wide: 2 groups of 16 in 32 of 128 columns.
  EXPECT_TRUE(sched::columns_contiguous({0, 32}, 32, 128));
  EXPECT_EQ(sched::column_block_count({0, 32}, 32, 128), 1);
  // The count is the list's length over units, slices and array widths.
  for (int64_t cols : {8, 16, 128})
    for (int64_t unit : {0, 24, 40, 120, 168, 256})
      for (int64_t first = 0; first < 5; ++first)
        for (int64_t end = first + 1; end < first + 9; ++end) {
          const int64_t step = unit > 0 ? unit : 24;
          const Interval c{first * step, end * step - (end % 3 == 0 ? step / 2 : 0)};
          EXPECT_EQ(sched::column_block_count(c, unit, cols),
                    static_cast<int64_t>(sched::column_blocks(c, unit, cols).size()))
              << cols << " " << unit << " [" << c.b << ", " << c.e << ")";
        }
}

// 20 groups of 24 on a 128 x 128 array: 4 units of 5 groups (120 channels). Slices start at
// units: 2 and 4 parts (the unit count's divisors); 3 and 8 would start one inside a unit.
TEST(GroupedConv, channel_tiles_split_no_block_diagonal_unit) {
  sched::NetBuilder b("g24");
  const int x = b.input("x", {480, 7, 7});
  b.conv("g", x, 480, 3, 1, 1, 20);
  const sched::Net net = b.build();
  const sched::Machine machine = sched::unified_machine(1 << 22, 128, 128);
  EXPECT_EQ(sched::unit_part_counts(net, machine, {1}), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(sched::channel_parts_fit_units(net, machine, {1}, 4));
  EXPECT_FALSE(sched::channel_parts_fit_units(net, machine, {1}, 3));
  sched::Mapping m;
  m.weights_resident = false;
  m.channel_tiles = 4;
  EXPECT_TRUE(sched::check_mapping(net, machine, {1}, m).ok());
  m.channel_tiles = 8;
  const Status eight = sched::check_mapping(net, machine, {1}, m);
  ASSERT_FALSE(eight.ok());
  EXPECT_NE(eight.reason().find("split a grouped conv's block of groups"), std::string::npos)
      << eight.reason();
  bool listed = false;
  for (const sched::Mapping& e : sched::enumerate_mappings(net, {1}, {}, &machine)) {
    EXPECT_TRUE(sched::channel_parts_fit_units(net, machine, {1}, e.channel_tiles))
        << e.channel_tiles;
    listed |= e.channel_tiles == 4;
  }
  EXPECT_TRUE(listed);
}

// 21 groups of 48 on a 16-column array: a unit is one group (3 whole blocks), which a slice may
// cut anywhere (one conv per part of a group); the unit and block counts' divisors join the
// part counts, so that the powers of two are not the only choice.
TEST(GroupedConv, a_group_a_unit_may_be_cut_anywhere) {
  sched::NetBuilder b("g48");
  const int x = b.input("x", {1008, 7, 7});
  b.conv("g", x, 1008, 3, 1, 1, 21);
  const sched::Net net = b.build();
  const sched::Machine machine = sched::unified_machine(1 << 20, 16, 16);
  EXPECT_EQ(sched::unit_part_counts(net, machine, {1}), (std::vector<int64_t>{3, 7, 9, 21, 63}));
  for (int64_t n : {2, 5, 9, 64}) EXPECT_TRUE(sched::channel_parts_fit_units(net, machine, {1}, n));
}

// 16 groups of 24 in units of 5 on a 128 x 128 array: the fourth unit's conv reads 128 input
// channels from channel 360, past the three blocks of 384: its buffers pad a pixel to 488.
TEST(GroupedConv, a_last_unit_reading_past_the_blocks_pads_the_pixel) {
  sched::NetBuilder b("g24");
  const int x = b.input("x", {384, 6, 6});
  b.conv("g", x, 384, 3, 1, 1, 16);
  const sched::Net net = b.build();
  const sched::Machine machine = sched::unified_machine(1 << 22, 128, 128);
  const sched::GroupInfo g = sched::describe(net, {1});
  const std::vector<sched::ChannelPadding> padding = sched::channel_blocks(net, machine, g);
  size_t in = g.tensors.size();
  for (size_t l = 0; l < g.tensors.size(); ++l)
    if (g.tensors[l] == x) in = l;
  ASSERT_LT(in, g.tensors.size());
  EXPECT_EQ(padding[in].channels(384), 488);
  EXPECT_EQ(padding[in].channels(240), 256);  // two units: 120 + 128 < 256
  // ResNeXt's units of whole blocks pad as a dense conv's input.
  const sched::ChannelPadding dense{128, 128, 128};
  EXPECT_EQ(dense.channels(384), 384);
  EXPECT_EQ(dense.channels(200), 256);
}

// RegNet's shape in small: 7 groups of 24 (units of 5 + 2 groups on 128 columns, 16 + 8
// columns a group on 16), then 2 groups of 48 at stride 2 (a unit of both on 128 columns,
// whole blocks on 16), then 16 groups of 24 (the last unit reads past the blocks), then 2
// groups of 120 whose 129,600 weight bytes a group exceed edge-small's 128 KiB (slices within a
// group), each after a 1x1 conv.
ir::Graph regnet_like() {
  zoo::NetBuilder net("regnet_like", {});
  const auto grouped = [](int64_t channels, int64_t stride, int64_t groups) {
    zoo::ConvSpec s = zoo::conv_spec(channels, 3, stride, 1);
    s.group = groups;
    s.bias = true;
    return s;
  };
  const std::string x = net.input("input", 24, 12, 12);
  const std::string a = net.relu(net.conv(x, "a", zoo::conv_spec(168, 1)), "a_relu");
  const std::string b = net.relu(net.conv(a, "b", grouped(168, 1, 7)), "b_relu");
  const std::string c = net.relu(net.conv(b, "c", zoo::conv_spec(96, 1)), "c_relu");
  const std::string d = net.relu(net.conv(c, "d", grouped(96, 2, 2)), "d_relu");
  const std::string e = net.relu(net.conv(d, "e", zoo::conv_spec(384, 1)), "e_relu");
  const std::string f = net.relu(net.conv(e, "f", grouped(384, 1, 16)), "f_relu");
  const std::string g = net.relu(net.conv(f, "g", zoo::conv_spec(240, 1)), "g_relu");
  const std::string h = net.relu(net.conv(g, "h", grouped(240, 2, 2)), "h_relu");
  return net.finish({h});
}

TEST(GroupedConv, regnet_like_groups_run_bit_exact_with_the_scheduled_bytes) {
  for (const char* config : {"cloud-large", "vta-pynq", "edge-small"})
    for (const char* policy : {"layerwise", "fusion", "optimal"}) {
      SCOPED_TRACE(std::string(config) + " " + policy);
      std::uint64_t cycles = 0;
      sched::ScheduledNet scheduled;
      expect_end_to_end(regnet_like(), load_hw_config(config_path(config)), policy, nullptr,
                        &scheduled, {}, nullptr, &cycles);
      const double ratio =
          static_cast<double>(cycles) / static_cast<double>(scheduled.schedule.cycles);
      EXPECT_GT(ratio, 0.95);
      EXPECT_LT(ratio, 1.05);
    }
}

}  // namespace
}  // namespace tessel::codegen
