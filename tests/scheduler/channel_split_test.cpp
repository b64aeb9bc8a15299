// Channel-split pools: a per-channel group whose whole input does not fit splits by channels.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scheduler/checker.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched::channel_split_test {
namespace {

// A 7x7x64 global average pool, 8-bit: input 3136 B, output 64 B.
Net global_pool_net() {
  NetBuilder b("gap");
  const int x = b.input("x", {64, 7, 7});
  b.global_pool("gap", x);
  return b.build();
}

const BufferAlloc& buffer_named(const GroupSchedule& g, const std::string& name) {
  const auto it = std::find_if(g.buffers.begin(), g.buffers.end(),
                               [&](const BufferAlloc& b) { return b.name == name; });
  EXPECT_NE(it, g.buffers.end()) << name;
  return *it;
}

const char* kPolicies[] = {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"};

// On a 2048-byte unified scratchpad the whole 3136-byte input cannot be on chip; two channel
// parts of 32 channels can: input tile 7 x 7 x 32 = 1568 B, output tile 32 B, 1600 B live at
// the pool's step (two ping-pong copies, 3200 B, do not fit: the tiles run serialised). Bytes
// are those of one tile: 3136 read + 64 written. Cycles (16 B/cycle, 64-byte bursts, L = 0,
// V = 16), per tile: load 49 pixel runs of 32 B = 49 bursts x 4 = 196, pool 1 x 49 x
// ceil(32 / 16) + 4 = 102, store 1 burst = 4: 302 per tile, 604 in all.
TEST(ChannelSplit, global_pool_too_large_for_the_buffer_splits_by_channels) {
  const Net net = global_pool_net();
  const Machine machine = unified_machine(2048);
  for (const char* policy : kPolicies) {
    auto s = run_policy(net, machine, policy, Objective::Bytes);
    ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
    ASSERT_EQ(s.value().groups.size(), 1u) << policy;
    const GroupSchedule& g = s.value().groups[0];
    EXPECT_EQ(g.channel_tiles, 2) << policy;
    EXPECT_EQ(g.row_tiles, 1) << policy;
    EXPECT_EQ(g.col_tiles, 1) << policy;
    EXPECT_EQ(g.tiles(), 2) << policy;
    EXPECT_EQ(g.tile_channels, 32) << policy;
    EXPECT_FALSE(g.double_buffered) << policy;
    EXPECT_EQ(g.traffic.activations_read, 3136) << policy;
    EXPECT_EQ(g.traffic.activations_written, 64) << policy;
    EXPECT_EQ(g.traffic.weight_traffic(), 0) << policy;
    EXPECT_EQ(s.value().traffic.total(), s.value().compulsory_bytes) << policy;
    EXPECT_EQ(g.load_cycles, 2 * 196) << policy;
    EXPECT_EQ(g.compute_cycles, 2 * 102) << policy;
    EXPECT_EQ(g.store_cycles, 2 * 4) << policy;
    EXPECT_EQ(g.cycles, 604) << policy;
    const BufferAlloc& in = buffer_named(g, "x");
    EXPECT_EQ(in.size_bytes, 1568) << policy;
    EXPECT_EQ(in.pixel_bytes, 32) << policy;
    const BufferAlloc& out = buffer_named(g, "gap");
    EXPECT_EQ(out.size_bytes, 32) << policy;
    EXPECT_EQ(g.peak_bytes[0], 1600) << policy;
    const Status checked = check_schedule(net, machine, s.value());
    EXPECT_TRUE(checked.ok()) << policy << ": " << checked.reason();
  }
}

// The input of a channel split is not kept: every tile loads its own channels (1568 B each),
// unlike a conv's all-channel input under weight streaming.
TEST(ChannelSplit, every_tile_loads_its_own_channels) {
  const Net net = global_pool_net();
  Mapping m;
  m.channel_tiles = 4;
  m.double_buffered = true;  // 2 x (784 + 16) = 1600 B
  auto g = evaluate_mapping(net, unified_machine(2048), {1}, m, PlanOptions{});
  ASSERT_TRUE(g.ok()) << g.reason();
  EXPECT_EQ(g.value().traffic.activations_read, 3136);
  EXPECT_EQ(g.value().traffic.activations_written, 64);
  int input_copies = 0;
  for (const auto& buf : g.value().buffers) {
    if (buf.tensor != 0) continue;
    ++input_copies;
    EXPECT_EQ(buf.size_bytes, 784) << buf.name;
  }
  EXPECT_EQ(input_copies, 2);  // ping-pong, not kept
  EXPECT_EQ(g.value().peak_bytes[0], 1600);
}

// A channel split is a last resort: where the whole input fits (4096 B: 3136 + 64), the pool
// runs as one tile, so schedules that fit today do not change.
TEST(ChannelSplit, whole_channels_are_kept_when_they_fit) {
  const Net net = global_pool_net();
  const Machine machine = unified_machine(4096);
  for (const char* policy : kPolicies) {
    auto s = run_policy(net, machine, policy, Objective::Bytes);
    ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
    EXPECT_EQ(s.value().groups[0].channel_tiles, 1) << policy;
    EXPECT_EQ(s.value().groups[0].cycles, 196 + 49 * 4 + 4 + 4) << policy;
  }
}

// The checker restates the tiling: the same buffers claimed for one whole-channel tile are too
// narrow (32-byte pixels where a tile needs 64).
TEST(ChannelSplit, checker_recomputes_the_channel_parts) {
  const Net net = global_pool_net();
  const Machine machine = unified_machine(2048);
  auto s = run_policy(net, machine, "optimal", Objective::Bytes);
  ASSERT_TRUE(s.ok()) << s.reason();
  ASSERT_TRUE(check_schedule(net, machine, s.value()).ok());
  Schedule whole = s.value();
  whole.groups[0].channel_tiles = 1;
  const Status checked = check_schedule(net, machine, whole);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.reason(),
            "group 0: buffer 'x' has 1568 bytes of 32-byte pixels but a tile needs 49 pixels of "
            "64 bytes");
}

// Channel splits stop at one channel per tile (49 + 1 bytes): below that the pool does not fit
// and the failure names the last (finest) split's allocation.
TEST(ChannelSplit, a_pool_too_large_even_per_channel_fails_naming_the_allocation) {
  const Net net = global_pool_net();
  auto s = run_policy(net, unified_machine(40), "layerwise", Objective::Bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.reason(),
            "layer 'gap': allocation failed: scratchpad 0 needs up to 50 live bytes at one step, "
            "has 40");
}

// The end of a residual network: add + ReLU + global pool is one per-channel group, split by
// channels when the 7x7 maps do not fit; the conv before it keeps whole channels and the fc
// after it reads the pooled vector. Every policy passes the checker.
TEST(ChannelSplit, residual_tail_with_global_pool_schedules_under_every_policy) {
  NetBuilder b("tail");
  const int x = b.input("x", {64, 7, 7});
  const int c = b.conv("conv", x, 64, 1);
  const int s = b.add("add", c, x);
  const int r = b.eltwise("relu", s);
  const int p = b.global_pool("gap", r);
  b.gemm("fc", p, 16);
  const Net net = b.build();
  const Machine machine = unified_machine(3 * 1024);
  for (const char* policy : kPolicies) {
    auto sched = run_policy(net, machine, policy, Objective::Bytes);
    ASSERT_TRUE(sched.ok()) << policy << ": " << sched.reason();
    bool split = false;
    for (const auto& g : sched.value().groups) {
      const bool has_pool = std::find(g.ops.begin(), g.ops.end(), 4) != g.ops.end();
      if (has_pool) split = g.channel_tiles > 1;
    }
    EXPECT_TRUE(split) << policy;
    const Status checked = check_schedule(net, machine, sched.value());
    EXPECT_TRUE(checked.ok()) << policy << ": " << checked.reason();
  }
}

}  // namespace
}  // namespace tessel::sched::channel_split_test
