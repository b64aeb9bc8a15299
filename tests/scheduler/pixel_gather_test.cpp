// Pixel gathers (scheduler/pixel_gather.hpp): the DMAs of a window partition and of its reverse,
// worked out by hand on an 8 x 8 map of 4 x 4 windows.
#include "scheduler/pixel_gather.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "scheduler/from_ir.hpp"

namespace tessel::sched {
namespace {

// Token t of window w (the windows row-major over the 2 x 2 grid, the tokens row-major in each):
// map pixel (4 (w / 2) + t / 4, 4 (w % 2) + t % 4).
std::vector<int64_t> partition_8x8() {
  std::vector<int64_t> source;
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t t = 0; t < 16; ++t)
      source.push_back((4 * (w / 2) + t / 4) * 8 + 4 * (w % 2) + t % 4);
  return source;
}

// Map pixel (y, x) is token 16 w + 4 (y % 4) + x % 4 of window w = 2 (y / 4) + x / 4.
std::vector<int64_t> reverse_8x8() {
  std::vector<int64_t> source;
  for (int64_t y = 0; y < 8; ++y)
    for (int64_t x = 0; x < 8; ++x)
      source.push_back(16 * (2 * (y / 4) + x / 4) + 4 * (y % 4) + x % 4);
  return source;
}

void expect_dma(const GatherDma& d, int64_t y, int64_t x, int64_t rows, int64_t cols, int64_t dy,
                int64_t dx, bool along_x, int64_t source, int64_t source_step) {
  EXPECT_EQ(d.y, y);
  EXPECT_EQ(d.x, x);
  EXPECT_EQ(d.rows, rows);
  EXPECT_EQ(d.cols, cols);
  if (rows > 1) {
    EXPECT_EQ(d.dy, dy);
    EXPECT_EQ(d.dx, dx);
    EXPECT_EQ(d.source_step, source_step);
  }
  EXPECT_EQ(d.along_x, along_x);
  EXPECT_EQ(d.source, source);
}

// Every gathered pixel of a box, once, from its source: the DMAs cover the box exactly.
void expect_covers(const std::vector<int64_t>& source, int64_t width, const Box& box,
                   const std::vector<GatherDma>& dmas) {
  std::vector<int> seen(source.size(), 0);
  for (const GatherDma& d : dmas)
    for (int64_t i = 0; i < d.rows; ++i)
      for (int64_t k = 0; k < d.cols; ++k) {
        const int64_t y = d.y + i * d.dy + (d.along_x ? 0 : k);
        const int64_t x = d.x + i * d.dx + (d.along_x ? k : 0);
        ASSERT_GE(y, box.h.b);
        ASSERT_LT(y, box.h.e);
        ASSERT_GE(x, box.w.b);
        ASSERT_LT(x, box.w.e);
        const auto p = static_cast<size_t>(y * width + x);
        EXPECT_EQ(source[p], d.source + i * d.source_step + k);
        ++seen[p];
      }
  for (int64_t y = box.h.b; y < box.h.e; ++y)
    for (int64_t x = box.w.b; x < box.w.e; ++x)
      EXPECT_EQ(seen[static_cast<size_t>(y * width + x)], 1);
}

TEST(PixelGather, a_window_of_tokens_is_one_dma_of_its_rows) {
  const auto source = partition_8x8();
  const Box all{{0, 32}, {0, 64}, {0, 1}};
  const auto dmas = gather_dmas(source, 1, all);
  ASSERT_EQ(dmas.size(), 4u);
  // Window 0: 4 map rows (8 pixels apart) of 4 pixels, landing 4 tokens apart.
  expect_dma(dmas[0], 0, 0, 4, 4, 4, 0, false, 0, 8);
  expect_dma(dmas[1], 16, 0, 4, 4, 4, 0, false, 4, 8);
  expect_dma(dmas[2], 32, 0, 4, 4, 4, 0, false, 32, 8);
  expect_dma(dmas[3], 48, 0, 4, 4, 4, 0, false, 36, 8);
  expect_covers(source, 1, all, dmas);
}

TEST(PixelGather, a_tile_starting_inside_a_window_takes_its_partial_row_apart) {
  const auto source = partition_8x8();
  const Box tile{{0, 32}, {2, 20}, {0, 1}};
  const auto dmas = gather_dmas(source, 1, tile);
  ASSERT_EQ(dmas.size(), 3u);
  expect_dma(dmas[0], 2, 0, 1, 2, 0, 0, false, 2, 0);   // tokens 2, 3: pixels 2, 3
  expect_dma(dmas[1], 4, 0, 3, 4, 4, 0, false, 8, 8);   // tokens 4-15: map rows 1-3
  expect_dma(dmas[2], 16, 0, 1, 4, 0, 0, false, 4, 0);  // window 1's first row
  expect_covers(source, 1, tile, dmas);
}

TEST(PixelGather, the_reverse_loads_a_map_row_from_one_window_row_each) {
  const auto source = reverse_8x8();
  const Box all{{0, 32}, {0, 8}, {0, 8}};
  const auto dmas = gather_dmas(source, 8, all);
  ASSERT_EQ(dmas.size(), 8u);
  // Map row 0: pixels 0-3 are window 0's tokens 0-3, pixels 4-7 window 1's (16 tokens on).
  expect_dma(dmas[0], 0, 0, 2, 4, 0, 4, true, 0, 16);
  expect_dma(dmas[5], 5, 0, 2, 4, 0, 4, true, 36, 16);
  expect_covers(source, 8, all, dmas);
  // A box of columns 2-5: two runs of two per row.
  const Box middle{{0, 32}, {3, 4}, {2, 6}};
  const auto part = gather_dmas(source, 8, middle);
  ASSERT_EQ(part.size(), 1u);
  expect_dma(part[0], 3, 2, 2, 2, 0, 2, true, 14, 14);
  expect_covers(source, 8, middle, part);
}

TEST(PixelGather, the_isa_limits_split_a_dma) {
  std::vector<int64_t> source(100);
  for (int64_t p = 0; p < 100; ++p) source[static_cast<size_t>(p)] = p;
  const Box all{{0, 4}, {0, 100}, {0, 1}};
  const auto dmas = gather_dmas(source, 1, all, 4095, 30);
  ASSERT_EQ(dmas.size(), 2u);  // runs of 30 (rows of 30 tokens 30 apart) and the last 10
  expect_dma(dmas[0], 0, 0, 3, 30, 30, 0, false, 0, 30);
  expect_dma(dmas[1], 90, 0, 1, 10, 0, 0, false, 90, 0);
  expect_covers(source, 1, all, dmas);
}

// The converter: an 8 x 8 map's window partition read by a Linear is one gather of the map;
// the same partition left as a graph output is refused, naming it.
ir::Graph partitioned(bool read) {
  zoo::NetBuilder net("partitioned", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string map =
      net.transpose(net.conv(x, "embed", zoo::conv_spec(32, 1)), "to_nhwc", {0, 2, 3, 1});
  const std::string moved = net.transpose(net.reshape(map, "window_split", {1, 2, 4, 2, 4, 32}),
                                          "window_order", {0, 1, 3, 2, 4, 5});
  const std::string windows = net.reshape(moved, "windows", {4, 16, 32});
  return net.finish({read ? net.dense(windows, "proj", 32) : windows});
}

TEST(PixelGather, the_converter_makes_one_gather_of_the_map_where_an_op_reads_it) {
  const Machine machine = unified_machine(1024 * 1024);
  auto net = net_from_graph(partitioned(true), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Op* gather = nullptr;
  for (const Op& op : net.value().ops)
    if (!op.pixel_source.empty()) gather = &op;
  ASSERT_NE(gather, nullptr);
  // Named after the last view op: the Linear's flatten to [64, 32] carries the view on.
  EXPECT_EQ(gather->name, "proj.flatten");
  EXPECT_EQ(net.value().tensor(gather->inputs[0]).shape, (Shape3{32, 8, 8}));
  EXPECT_EQ(net.value().tensor(gather->output).shape, (Shape3{32, 64, 1}));
  EXPECT_EQ(gather->pixel_source, partition_8x8());

  auto refused = net_from_graph(partitioned(false), machine, NetForm::Folded);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.reason().find("graph output 'windows'"), std::string::npos) << refused.reason();
}

// A gather's grid (docs/scheduler-transformers.md "Pixel gathers"): the window reverse [1, 8, 8,
// 32] is stored on the map's 8 x 8 grid when it meets the map in an Add, at once (Swin) or after
// a norm (swin_v2's post-norm: an Add of two grids was refused before session 42's look
// downstream), and as 64 token rows when it meets none.
ir::Graph reversed(int shortcut) {
  zoo::NetBuilder net("reversed", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string map =
      net.transpose(net.conv(x, "embed", zoo::conv_spec(32, 1)), "to_nhwc", {0, 2, 3, 1});
  const std::string moved = net.transpose(net.reshape(map, "window_split", {1, 2, 4, 2, 4, 32}),
                                          "window_order", {0, 1, 3, 2, 4, 5});
  const std::string mixed = net.dense(net.reshape(moved, "windows", {4, 16, 32}), "proj", 32);
  const std::string back = net.transpose(net.reshape(mixed, "window_grid", {1, 2, 2, 4, 4, 32}),
                                         "map_order", {0, 1, 3, 2, 4, 5});
  std::string y = net.reshape(back, "merged", {1, 8, 8, 32});
  if (shortcut == 2) y = net.layer_norm(y, "post_norm", 1e-5);
  if (shortcut > 0) y = net.add(y, map, "residual");
  return net.finish({net.dense(net.layer_norm(y, "norm", 1e-5), "head", 32)});
}

TEST(PixelGather, a_reverse_takes_the_grid_of_the_map_it_meets_downstream) {
  Machine machine = unified_machine(1024 * 1024);
  machine.row_normalise = true;
  for (int shortcut : {0, 1, 2}) {
    SCOPED_TRACE(shortcut);
    auto net = net_from_graph(reversed(shortcut), machine, NetForm::Folded);
    ASSERT_TRUE(net.ok()) << net.reason();
    const Op* gather = nullptr;
    for (const Op& op : net.value().ops)
      if (!op.pixel_source.empty()) gather = &op;
    ASSERT_NE(gather, nullptr);
    EXPECT_EQ(gather->pixel_source, reverse_8x8());
    EXPECT_EQ(net.value().tensor(gather->output).shape,
              shortcut > 0 ? (Shape3{32, 8, 8}) : (Shape3{32, 64, 1}));
  }
}

}  // namespace
}  // namespace tessel::sched
