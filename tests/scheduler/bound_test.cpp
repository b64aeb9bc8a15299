// The barrier bound: stored-input MACs, which inputs an op reads whole, the bound on hand-computed
// nets, and every policy's predicted cycles at or above it.
#include "scheduler/bound.hpp"

#include <gtest/gtest.h>

#include "scheduler/policy.hpp"
#include "tests/scheduler/random_net.hpp"

namespace tessel::sched {
namespace {

int op_named(const Net& net, const std::string& name) {
  for (int i = 0; i < net.size(); ++i)
    if (net.op(i).name == name) return i;
  return -1;
}

// 3x3, stride 1, pad 1 on 4 rows: output rows 0 and 3 have 2 stored taps, rows 1 and 2 have 3:
// 10 per axis. 2 -> 3 channels: 3 * 2 * 10 * 10 = 600 MACs on stored inputs (864 with padding).
// The bound, on a 2x2 array (4 MACs/cycle), 1 byte/cycle, 1024 bytes on chip:
//   at fc1: ceil(600 / 4) + max(ceil((4800 + 1000) / 4), (5800 - 1024) / 1) = 150 + 4776 = 4926;
//   at fc2: ceil((600 + 4800) / 4) + max(ceil(1000 / 4), 0) = 1350 + 250 = 1600.
TEST(BarrierBound, conv_then_two_gemms_is_hand_computed) {
  NetBuilder b("tiny", 1, 1);
  const int x = b.input("x", {2, 4, 4});
  const int c = b.conv("conv", x, 3, 3, 1, 1);
  const int f1 = b.gemm("fc1", c, 100);
  b.gemm("fc2", f1, 10);
  const Net net = b.build();
  EXPECT_EQ(stored_input_macs(net, op_named(net, "conv")), 600);
  EXPECT_EQ(net.op(op_named(net, "conv")).macs, 864);
  EXPECT_EQ(stored_input_macs(net, op_named(net, "fc1")), 4800);

  const Machine machine = unified_machine(1024, 2, 2, 1.0);
  const BarrierBound bound = barrier_bound(net, machine);
  EXPECT_EQ(bound.cycles, 4926);
  EXPECT_EQ(bound.barrier, op_named(net, "fc1"));
  EXPECT_EQ(bound.before_macs, 600);
  EXPECT_EQ(bound.after_macs, 5800);
  EXPECT_EQ(bound.after_weight_bytes, 5800);
  EXPECT_EQ(bound.on_chip_bytes, 1024);

  // At 8 bytes/cycle the weights stream in 597 cycles, under fc1's and fc2's 1450 of MACs:
  // fc1 150 + 1450 = 1600, fc2 1350 + 250 = 1600; the first barrier keeps it.
  const BarrierBound fast = barrier_bound(net, unified_machine(1024, 2, 2, 8.0));
  EXPECT_EQ(fast.cycles, 1600);
  EXPECT_EQ(fast.barrier, op_named(net, "fc1"));
}

// A 1x1 stride-2 conv reads rows and columns 0 and 2 of 4: the 3x3 conv before it is not all
// needed, so only the strided conv's 2 * 2 * 2 * 2 = 16 MACs count before the Gemm:
// ceil(16 / 4) + max(ceil(32 / 4), 0) = 4 + 8 = 12.
TEST(BarrierBound, a_window_that_skips_elements_stops_the_backward_walk) {
  NetBuilder b("strided", 1, 1);
  const int x = b.input("x", {2, 4, 4});
  const int a = b.conv("a", x, 2, 3, 1, 1);
  const int s = b.conv("s", a, 2, 1, 2, 0);
  b.gemm("fc", s, 4);
  const Net net = b.build();
  EXPECT_TRUE(reads_all_of_input(net, op_named(net, "a"), 0));
  EXPECT_FALSE(reads_all_of_input(net, op_named(net, "s"), 0));
  EXPECT_EQ(stored_input_macs(net, op_named(net, "a")), 400);
  EXPECT_EQ(stored_input_macs(net, op_named(net, "s")), 16);
  const BarrierBound bound = barrier_bound(net, unified_machine(1024, 2, 2, 1.0));
  EXPECT_EQ(bound.before_macs, 16);
  EXPECT_EQ(bound.after_macs, 32);
  EXPECT_EQ(bound.cycles, 12);
}

// Dilation 2, kernel 2, stride 2 on 5 columns: the windows read columns 0, 2 (out 0) and 2, 4
// (out 1); 1 and 3 never. A 2x2 max pool with stride 2 on 5 rows never reads row 4.
TEST(BarrierBound, dilated_and_truncating_windows_do_not_read_all) {
  NetBuilder b("windows", 1, 1);
  const int x = b.input("x", {1, 5, 5});
  Window dilated;
  dilated.kernel_h = dilated.kernel_w = 2;
  dilated.stride_h = dilated.stride_w = 2;
  dilated.dilation_h = dilated.dilation_w = 2;
  b.conv("dilated", x, 1, dilated, 1, false);
  b.pool("pool", x, OpKind::MaxPool, 2, 2);
  const int full = b.pool("full", x, OpKind::MaxPool, 3, 2);
  b.gemm("fc", full, 2);
  const Net net = b.build();
  EXPECT_FALSE(reads_all_of_input(net, op_named(net, "dilated"), 0));
  EXPECT_FALSE(reads_all_of_input(net, op_named(net, "pool"), 0));
  EXPECT_TRUE(reads_all_of_input(net, op_named(net, "full"), 0));  // windows 0-2, 2-4
  EXPECT_TRUE(reads_all_of_input(net, op_named(net, "fc"), 0));
}

/// A VGG-like tail on a 16x16 array, 64 KiB on chip, 16 bytes/cycle, 8-bit: two 3x3 convs
/// 32 -> 32 on 16x16 (46 stored taps per axis: 32 * 32 * 46 * 46 = 2,166,784 MACs each), a 2x2
/// max pool, then fc 2048 -> 128 (262,144 weights):
///   bound = ceil(4,333,568 / 256) + max(ceil(262,144 / 256), (262,144 - 65,536) / 16)
///         = 16,928 + 12,288 = 29,216,
/// above the roofline max(4,980,736 / 256, compulsory / 16) = 19,456.
Net vgg_tail() {
  NetBuilder b("vgg_tail", 1, 1);
  const int x = b.input("x", {32, 16, 16});
  const int c1 = b.conv("c1", x, 32, 3, 1, 1);
  const int c2 = b.conv("c2", c1, 32, 3, 1, 1);
  const int p = b.pool("pool", c2, OpKind::MaxPool, 2, 2);
  b.gemm("fc", p, 128);
  return b.build();
}

TEST(BarrierBound, every_policy_predicts_at_least_the_bound_on_a_vgg_like_tail) {
  const Net net = vgg_tail();
  const Machine machine = unified_machine(64 * 1024);
  const BarrierBound bound = barrier_bound(net, machine);
  EXPECT_EQ(bound.cycles, 29216);
  for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    for (Objective objective : {Objective::Bytes, Objective::Latency}) {
      auto s = run_policy(net, machine, policy, objective);
      ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
      EXPECT_EQ(s.value().roofline_cycles, 19456);
      EXPECT_EQ(s.value().lower_bound_cycles, 29216);
      EXPECT_EQ(s.value().lower_bound_barrier, "fc");
      EXPECT_GE(s.value().cycles, s.value().lower_bound_cycles) << policy;
    }
  }
}

// Random DAGs (convs, pools, adds, concats; no Gemm): the bound is the roofline, and every
// policy's predicted cycles are at or above it.
TEST(BarrierBound, every_policy_predicts_at_least_the_bound_on_random_dags) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const Net net = testing::random_net(seed, 10);
    const Machine machine = unified_machine(32 * 1024);
    for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
      auto s = run_policy(net, machine, policy, Objective::Latency);
      if (!s.ok()) continue;  // a layer too large alone (policy_test checks the message)
      EXPECT_GE(s.value().lower_bound_cycles, s.value().roofline_cycles);
      EXPECT_GE(s.value().cycles, s.value().lower_bound_cycles) << policy << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace tessel::sched
