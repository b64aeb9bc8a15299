// Shape deduction and transfer: hand-computed halos, pad clamping, a residual diamond.
#include <gtest/gtest.h>

#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched {
namespace {

TEST(ShapeDeduction, conv_3x3_stride2_halo_rows) {
  NetBuilder b("t");
  const int x = b.input("x", {4, 16, 16});
  b.conv("c", x, 8, /*kernel=*/3, /*stride=*/2, /*pad=*/1);  // out 8x8x8
  const Net net = b.build();
  const Op& conv = net.op(1);
  // Output rows [2, 4): rows 2*2-1 = 3 .. (4-1)*2 + 2 + 1 - 1 = 8 -> [3, 8), 5 rows for 2.
  const InputNeed need = deduce_input(net, conv, 0, {{0, 8}, {2, 4}, {0, 8}});
  EXPECT_EQ(need.box.h, (Interval{3, 8}));
  EXPECT_EQ(need.box.c, (Interval{0, 4}));
  // Full width: [-1, 16) clamped to [0, 16) with one column of left padding.
  EXPECT_EQ(need.box.w, (Interval{0, 16}));
  EXPECT_EQ(need.pad_left, 1);
  EXPECT_EQ(need.pad_right, 0);
  EXPECT_EQ(need.pad_top, 0);
}

TEST(ShapeDeduction, conv_pad_clamped_at_both_edges) {
  NetBuilder b("t");
  const int x = b.input("x", {1, 5, 5});
  b.conv("c", x, 1, /*kernel=*/5, /*stride=*/1, /*pad=*/2);  // out 5x5
  const Net net = b.build();
  // Output row 0 reads [-2, 3): rows [0, 3) and two rows of zero padding at the top.
  InputNeed need = deduce_input(net, net.op(1), 0, {{0, 1}, {0, 1}, {0, 5}});
  EXPECT_EQ(need.box.h, (Interval{0, 3}));
  EXPECT_EQ(need.pad_top, 2);
  EXPECT_EQ(need.pad_bottom, 0);
  // Output row 4 reads [2, 7): rows [2, 5) and two rows of padding at the bottom.
  need = deduce_input(net, net.op(1), 0, {{0, 1}, {4, 5}, {0, 5}});
  EXPECT_EQ(need.box.h, (Interval{2, 5}));
  EXPECT_EQ(need.pad_bottom, 2);
  // Columns [0, 5) read [-2, 7): two columns of padding on each side.
  EXPECT_EQ(need.pad_left, 2);
  EXPECT_EQ(need.pad_right, 2);
}

TEST(ShapeDeduction, explicit_pad_op_shifts_and_clamps) {
  NetBuilder b("t");
  const int x = b.input("x", {2, 4, 4});
  b.pad("p", x, 1, 2, 1, 2);  // out 2x6x8
  const Net net = b.build();
  const InputNeed need = deduce_input(net, net.op(1), 0, {{0, 2}, {0, 3}, {1, 8}});
  EXPECT_EQ(need.box.h, (Interval{0, 2}));  // [-1, 2) clamped
  EXPECT_EQ(need.pad_top, 1);
  EXPECT_EQ(need.box.w, (Interval{0, 4}));  // [-1, 6) clamped to [0, 4)
  EXPECT_EQ(need.pad_left, 1);
  EXPECT_EQ(need.pad_right, 2);
}

TEST(ShapeDeduction, dilation_widens_the_window) {
  NetBuilder b("t");
  const int x = b.input("x", {1, 20, 20});
  b.conv("c", x, 1, /*kernel=*/3, /*stride=*/1, /*pad=*/0, /*groups=*/1, /*dilation=*/2);
  const Net net = b.build();
  EXPECT_EQ(net.tensor(net.op(1).output).shape, (Shape3{1, 16, 16}));
  // Rows [3, 5) read [3, 4*1 + 2*2 + 1) = [3, 9).
  const InputNeed need = deduce_input(net, net.op(1), 0, {{0, 1}, {3, 5}, {0, 16}});
  EXPECT_EQ(need.box.h, (Interval{3, 9}));
}

TEST(ShapeDeduction, depthwise_and_grouped_channel_ranges) {
  NetBuilder b("t");
  const int x = b.input("x", {8, 4, 4});
  b.conv("dw", x, 8, 3, 1, 1, /*groups=*/8);
  b.conv("g", x, 16, 1, 1, 0, /*groups=*/2);  // 4 inputs -> 8 outputs per group
  const Net net = b.build();
  EXPECT_EQ(deduce_input(net, net.op(1), 0, {{3, 5}, {0, 4}, {0, 4}}).box.c, (Interval{3, 5}));
  EXPECT_EQ(deduce_input(net, net.op(2), 0, {{0, 8}, {0, 4}, {0, 4}}).box.c, (Interval{0, 4}));
  EXPECT_EQ(deduce_input(net, net.op(2), 0, {{7, 9}, {0, 4}, {0, 4}}).box.c, (Interval{0, 8}));
  EXPECT_EQ(net.op(1).macs, 8 * 16 * 9);
}

TEST(ShapeDeduction, concat_gives_each_input_its_channel_slice) {
  NetBuilder b("t");
  const int x = b.input("x", {3, 4, 4});
  const int y = b.input("y", {5, 4, 4});
  b.concat("cat", {x, y});
  const Net net = b.build();
  const Op& cat = net.op(2);
  EXPECT_EQ(deduce_input(net, cat, 0, {{2, 6}, {1, 2}, {0, 4}}).box.c, (Interval{2, 3}));
  EXPECT_EQ(deduce_input(net, cat, 1, {{2, 6}, {1, 2}, {0, 4}}).box.c, (Interval{0, 3}));
  EXPECT_TRUE(deduce_input(net, cat, 1, {{0, 3}, {1, 2}, {0, 4}}).box.empty());
}

// x -> a (3x3 s1 p1) -> b (3x3 s1 p1) -> add(b, x) : the skip edge must be read for the add's
// rows only, but x is also needed by a with a 2-row halo; transfer unites both.
TEST(ShapeTransfer, residual_diamond_unites_branch_needs) {
  NetBuilder b("t");
  const int x = b.input("x", {2, 10, 6});
  const int a = b.conv("a", x, 2, 3, 1, 1);
  const int c = b.conv("b", a, 2, 3, 1, 1);
  const int s = b.add("add", c, x);
  const Net net = b.build();
  std::vector<Box> requested(net.tensors.size());
  requested[static_cast<size_t>(s)] = {{0, 2}, {4, 6}, {0, 6}};
  const TileRanges r = transfer(net, {1, 2, 3}, requested);
  EXPECT_EQ(r.need[static_cast<size_t>(c)].h, (Interval{4, 6}));
  EXPECT_EQ(r.need[static_cast<size_t>(a)].h, (Interval{3, 7}));
  EXPECT_EQ(r.need[static_cast<size_t>(x)].h, (Interval{2, 8}));  // hull of [4,6) and [2,8)
  EXPECT_EQ(r.need[static_cast<size_t>(x)].c, (Interval{0, 2}));
}

TEST(ShapeTransfer, global_pool_and_gemm_need_everything) {
  NetBuilder b("t");
  const int x = b.input("x", {4, 7, 7});
  const int g = b.global_pool("gap", x);
  const int f = b.reshape("flat", g, {4, 1, 1});
  const int y = b.gemm("fc", f, 10);
  const Net net = b.build();
  std::vector<Box> requested(net.tensors.size());
  requested[static_cast<size_t>(y)] = {{0, 5}, {0, 1}, {0, 1}};
  const TileRanges r = transfer(net, {1, 2, 3}, requested);
  EXPECT_EQ(r.need[static_cast<size_t>(x)], (Box{{0, 4}, {0, 7}, {0, 7}}));
  EXPECT_EQ(net.op(3).weight_bytes, 4 * 10 + 10 * 4);
}

}  // namespace
}  // namespace tessel::sched
