// Channel part counts beyond powers of two (docs/scheduler.md "Channel part counts"): the
// fewest near-equal parts whose widest spans w whole matrix column blocks.
#include <gtest/gtest.h>

#include <vector>

#include "scheduler/checker.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {
namespace {

// C = 512 on 16 columns: B = 32 blocks; ceil(32 / w) for w = 1..32 is 32, 16, 11, 8, 7, 6, 5,
// 4 (w = 8..10), 3 (w = 11..15), 2 (w = 16..31), 1; with the powers of two up to 512.
TEST(ChannelParts, counts_of_512_channels_are_the_fewest_parts_per_block_width) {
  EXPECT_EQ(channel_part_counts(512, 16),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32, 64, 128, 256, 512}));
  EXPECT_EQ(channel_part_counts(512, 0),
            (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
}

// C = 1000: B = 63; ceil(63 / w): 63, 32, 21, 16, 13, 11, 9, 8, 7 (w = 9, 10), 6 (11, 12),
// 5 (13..15), 4 (16..20), 3 (21..31), 2 (32..62), 1 (63).
TEST(ChannelParts, counts_of_1000_channels) {
  EXPECT_EQ(
      channel_part_counts(1000, 16),
      (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16, 21, 32, 63, 64, 128, 256, 512}));
  EXPECT_EQ(channel_part_counts(8, 16), (std::vector<int64_t>{1, 2, 4, 8}));
}

// A 1x1 conv 16x2x2 -> 512: 11 parts is a point of the map space, 9 and 10 are not (they
// reach no narrower widest part than 8 parts: 4 blocks).
TEST(ChannelParts, check_mapping_accepts_whole_block_counts_only) {
  NetBuilder b("wide");
  const int x = b.input("x", {16, 2, 2});
  b.conv("conv", x, 512, 1);
  const Net net = b.build();
  const Machine machine = unified_machine(1 << 20);
  Mapping m;
  m.weights_resident = false;
  for (int64_t k : {3, 5, 11, 32, 64}) {
    m.channel_tiles = k;
    EXPECT_TRUE(check_mapping(net, machine, {1}, m).ok()) << k;
  }
  m.channel_tiles = 9;
  const Status nine = check_mapping(net, machine, {1}, m);
  ASSERT_FALSE(nine.ok());
  EXPECT_EQ(nine.reason(),
            "loops (channels): 9 channel tiles (a power of two up to 512, or ceil(B / w) parts "
            "of the B = 32 column blocks)");
  m.channel_tiles = 10;
  EXPECT_FALSE(check_mapping(net, machine, {1}, m).ok());
}

// The map space: `optimal`'s lists 3 channel parts for a 48-channel conv (B = 3), the others'
// only powers of two.
TEST(ChannelParts, only_the_block_option_lists_three_parts) {
  NetBuilder b("c48");
  const int x = b.input("x", {16, 4, 4});
  b.conv("conv", x, 48, 1);
  const Net net = b.build();
  PlanOptions options;
  auto has_three = [&] {
    for (const Mapping& m : enumerate_mappings(net, {1}, options))
      if (m.channel_tiles == 3) return true;
    return false;
  };
  EXPECT_FALSE(has_three());
  options.channel_part_blocks = 16;
  EXPECT_TRUE(has_three());
}

// Three parts of a 1x1 conv 16x4x4 -> 48 (8-bit, no bias): 16 channels each. Weights load
// once, compact: 48 x 16 = 768 B; the 256-byte input is kept across parts; each part stores
// its 4 x 4 x 16 = 256 B. The checker restates the tiling.
TEST(ChannelParts, three_parts_of_48_channels_cost_and_check) {
  NetBuilder b("c48");
  const int x = b.input("x", {16, 4, 4});
  b.conv("conv", x, 48, 1);
  const Net net = b.build();
  const Machine machine = unified_machine(1 << 16);
  Mapping m;
  m.channel_tiles = 3;
  m.weights_resident = false;
  auto g = evaluate_mapping(net, machine, {1}, m, PlanOptions{});
  ASSERT_TRUE(g.ok()) << g.reason();
  EXPECT_EQ(g.value().tiles(), 3);
  EXPECT_EQ(g.value().tile_channels, 16);
  EXPECT_EQ(g.value().traffic.weights_read, 768);
  EXPECT_EQ(g.value().traffic.activations_read, 256);
  EXPECT_EQ(g.value().traffic.activations_written, 768);
}

// A 1x1 conv 64x4x4 -> 48 (8-bit): weights 3072 B, table 48 x 8 = 384 B, input 1024 B, output
// 768 B: 5248 B once. Packed slices (4 input blocks of 16 x 16 weights, 64 B of bias and 8 B
// of table a channel per output block): 2 parts of 24 channels hold 2 blocks, 2048 + 128 +
// 192 = 2368 B; 3 parts of 16 and 4 parts of 12 one block, 1024 + 64 + 128 = 1216 B and
// 1024 + 64 + 96 = 1184 B. On 1400 B no two-part slice fits, so the input (not kept beside a
// slice) is read once per part: 3 parts 5248 + 2 x 1024 = 7296 B, 4 parts (powers of two
// only) 5248 + 3 x 1024 = 8320 B. On 3600 B the whole input fits beside a 3-part slice (the
// bytes are the 5248 once either way) and `optimal` takes the fewest parts.
TEST(ChannelParts, three_parts_save_an_input_read_over_four) {
  NetBuilder b("c48");
  const int x = b.input("x", {64, 4, 4});
  b.conv("conv", x, 48, 1);
  const Net net = b.build();
  EXPECT_EQ(widest_slice_bytes(net, unified_machine(1400), net.op(1), 2), 2368);
  EXPECT_EQ(widest_slice_bytes(net, unified_machine(1400), net.op(1), 3), 1216);
  EXPECT_EQ(widest_slice_bytes(net, unified_machine(1400), net.op(1), 4), 1184);
  MapSpaceFeatures pow2;
  pow2.block_channel_parts = false;
  for (int64_t capacity : {1400, 3600}) {
    const Machine machine = unified_machine(capacity);
    auto with = run_policy(net, machine, "optimal", Objective::Bytes);
    auto without = run_policy(net, machine, "optimal", Objective::Bytes, pow2);
    ASSERT_TRUE(with.ok()) << with.reason();
    ASSERT_TRUE(without.ok()) << without.reason();
    EXPECT_EQ(with.value().groups[0].channel_tiles, 3) << capacity;
    EXPECT_EQ(without.value().groups[0].channel_tiles, 4) << capacity;
    EXPECT_EQ(with.value().traffic.total(), capacity == 1400 ? 7296 : 5248);
    EXPECT_EQ(without.value().traffic.total(), capacity == 1400 ? 8320 : 5248);
    const Status checked = check_schedule(net, machine, with.value());
    EXPECT_TRUE(checked.ok()) << checked.reason();
  }
}

}  // namespace
}  // namespace tessel::sched
