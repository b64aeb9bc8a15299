// The barrier bound: stored-input MACs, which inputs an op reads whole, the bound on hand-computed
// nets, and every policy's predicted cycles at or above it.
#include "scheduler/bound.hpp"

#include <gtest/gtest.h>

#include "scheduler/policy.hpp"
#include "scheduler/schedule_json.hpp"
#include "tests/scheduler/random_net.hpp"

namespace tessel::sched {
namespace {

int op_named(const Net& net, const std::string& name) {
  for (int i = 0; i < net.size(); ++i)
    if (net.op(i).name == name) return i;
  return -1;
}

// 3x3, stride 1, pad 1 on 4 rows: output rows 0 and 3 have 2 stored taps, rows 1 and 2 have 3:
// 10 per axis. 2 -> 3 channels: 3 * 2 * 10 * 10 = 600 MACs on stored inputs (864 with padding);
// every tap meets a stored input, so 2 * 9 = 18 weight bytes a channel, 54 in all. On a 2x2 array
// (4 MACs/cycle, 2 columns), 1 byte/cycle, 1024 bytes on chip, per tensor t:
//   x:   nothing before; K = {conv (18 * (3 - 2) = 18 B), fc1, fc2}:
//        max(ceil(5800 / 4), 5818 - 1024) = 4794;
//   c:   max(ceil(600 / 4), 54) + max(ceil(5800 / 4), 5800 - 1024) = 150 + 4776 = 4926;
//   f1:  max(ceil(5400 / 4), 54 + 4800) + max(ceil(1000 / 4), 1000 - 1024) = 4854 + 250 = 5104:
//        fc1's 4800 weight bytes cross the bus before f1 is complete, fc2's 250 cycles follow.
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
  EXPECT_EQ(bound.cycles, 5104);
  EXPECT_EQ(bound.barrier, op_named(net, "fc2"));
  EXPECT_EQ(bound.tensor, f1);
  EXPECT_EQ(bound.before_macs, 5400);
  EXPECT_EQ(bound.before_weight_bytes, 4854);
  EXPECT_EQ(bound.after_macs, 1000);
  EXPECT_EQ(bound.after_weight_bytes, 1000);
  EXPECT_EQ(bound.on_chip_bytes, 1024);

  // At 8 bytes/cycle the bus terms shrink under the MACs: x max(1450, 599) = 1450;
  // c max(150, 6) + max(1450, 597) = 1600; f1 max(1350, 606) + max(250, 0) = 1600. The first
  // tensor keeps the tie.
  const BarrierBound fast = barrier_bound(net, unified_machine(1024, 2, 2, 8.0));
  EXPECT_EQ(fast.cycles, 1600);
  EXPECT_EQ(fast.barrier, op_named(net, "fc1"));
  EXPECT_EQ(fast.tensor, c);
}

// A conv completes when one output channel has every pixel: by then its whole input exists, and
// every other channel still needs all of its weights. x (4, 16, 16) -> conv a 3x3 pad 1 (4 -> 4;
// 46 stored taps per axis: 4 * 4 * 46 * 46 = 33,856 MACs; 144 weight bytes) -> 4x4 max pool,
// stride 4 (reads every row and column) -> conv b 4x4 (4 -> 64 on 4x4: one pixel, 64 weight
// bytes a channel). 2x2 array, 1 byte/cycle, 256 bytes on chip. At t = a's output:
//   max(ceil(33,856 / 4), 144) + max(0, 64 * (64 - 2) - 256) = 8464 + 3712 = 12,176,
// above the roofline max((36,864 + 4096) / 4, bytes) = max(10,240, 5872) (padding MACs count
// there). At x: K = {a (36 * (4 - 2) = 72 B), b}: 72 + 3968 - 256 = 3784.
Net conv_tail() {
  NetBuilder b("conv_tail", 1, 1);
  const int x = b.input("x", {4, 16, 16});
  const int a = b.conv("a", x, 4, 3, 1, 1);
  const int p = b.pool("pool", a, OpKind::MaxPool, 4, 4);
  b.conv("b", p, 64, 4);
  return b.build();
}

TEST(BarrierBound, a_dense_conv_completes_when_one_channel_is_whole) {
  const Net net = conv_tail();
  const BarrierBound bound = barrier_bound(net, unified_machine(256, 2, 2, 1.0));
  EXPECT_EQ(bound.cycles, 12176);
  EXPECT_EQ(bound.barrier, op_named(net, "b"));
  EXPECT_EQ(bound.tensor, net.op(op_named(net, "a")).output);  // ties with the pool's output
  EXPECT_EQ(bound.before_macs, 33856);
  EXPECT_EQ(bound.before_weight_bytes, 144);
  EXPECT_EQ(bound.after_macs, 0);
  EXPECT_EQ(bound.after_weight_bytes, 3968);
}

// Depthwise and strided 1x1 convs never complete in this sense: a depthwise channel reads one
// input channel, and a 1x1 stride-2 conv skips rows and columns. With no dense conv that reads
// all of its input and no Gemm, there is no bound.
TEST(BarrierBound, depthwise_and_skipping_convs_are_not_completing) {
  NetBuilder b("dw", 1, 1);
  const int x = b.input("x", {8, 4, 4});
  const int d = b.conv("dw", x, 8, 3, 1, 1, 8);
  b.conv("s2", d, 64, 1, 2, 0);
  const Net net = b.build();
  const BarrierBound bound = barrier_bound(net, unified_machine(64, 2, 2, 1.0));
  EXPECT_EQ(bound.cycles, 0);
  EXPECT_EQ(bound.barrier, -1);
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

/// Every policy, under both objectives, reports `roofline` and `bound` (barrier `barrier` after
/// tensor `tensor`, in the schedule and its JSON) and predicts at least the bound.
void expect_every_policy_at_least_the_bound(const Net& net, const Machine& machine,
                                            int64_t roofline, int64_t bound,
                                            const std::string& barrier, const std::string& tensor) {
  for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    for (Objective objective : {Objective::Bytes, Objective::Latency}) {
      auto s = run_policy(net, machine, policy, objective);
      ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
      EXPECT_EQ(s.value().roofline_cycles, roofline);
      EXPECT_EQ(s.value().lower_bound_cycles, bound);
      EXPECT_EQ(s.value().lower_bound_barrier, barrier);
      EXPECT_EQ(s.value().lower_bound_tensor, tensor);
      EXPECT_EQ(to_json(s.value(), net)["lower_bound_tensor"], tensor);
      EXPECT_GE(s.value().cycles, s.value().lower_bound_cycles) << policy;
    }
  }
}

TEST(BarrierBound, every_policy_predicts_at_least_the_bound_on_a_vgg_like_tail) {
  const Net net = vgg_tail();
  const Machine machine = unified_machine(64 * 1024);
  EXPECT_EQ(barrier_bound(net, machine).cycles, 29216);
  expect_every_policy_at_least_the_bound(net, machine, 19456, 29216, "fc", "c2");
}

// The conv tail on 1 KiB: 8464 + (3968 - 1024) = 11,408 cycles, above its roofline of 10,240;
// every policy's prediction is at or above it.
TEST(BarrierBound, every_policy_predicts_at_least_the_bound_on_a_conv_tail) {
  expect_every_policy_at_least_the_bound(conv_tail(), unified_machine(1024, 2, 2, 1.0), 10240,
                                         11408, "b", "a");
}

// Random DAGs (convs, pools, adds, concats; no Gemm): every policy's predicted cycles are at or
// above the bound.
TEST(BarrierBound, every_policy_predicts_at_least_the_bound_on_random_dags) {
  for (uint64_t seed = 1; seed <= testing::random_seeds(8); ++seed) {
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
