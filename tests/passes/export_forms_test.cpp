// Passes for forms torch's exporter writes: fuse-repeat-interleave (Split, per part Reshape,
// Expand, Reshape, Concat -> one Reshape, Expand, Reshape) and fuse-l2-normalize (F.normalize
// -> RMSNormalization) and split-packed-heads (a packed q|k|v's Reshape, Transpose and Gathers ->
// per part a Slice, Reshape and Transpose) and fold-constant-adds (Swin's bias and shift mask
// around a 5-D view -> one Add); the values by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/ir/text.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/targets/cpu/executor.hpp"

namespace tessel::passes {
namespace {

/// Two key heads of two values each, each head repeated twice (x.repeat_interleave(2, dim=1)).
const char* const kExported = R"(graph g {
  input %x : f32[1,2,2]
  %p, %q = Split(%x) {axis=1, split=1,1} : f32[1,1,2], f32[1,1,2]
  %p1 = Reshape(%p) {shape=1,1,1,2} : f32[1,1,1,2]
  %p2 = Expand(%p1) {shape=1,1,2,2} : f32[1,1,2,2]
  %p3 = Reshape(%p2) {shape=1,2,2} : f32[1,2,2]
  %q1 = Reshape(%q) {shape=1,1,1,2} : f32[1,1,1,2]
  %q2 = Expand(%q1) {shape=1,1,2,2} : f32[1,1,2,2]
  %q3 = Reshape(%q2) {shape=1,2,2} : f32[1,2,2]
  %y = Concat(%p3, %q3) {axis=1} : f32[1,4,2]
  output %y
}
)";

std::vector<float> run(const ir::Graph& graph) {
  cpu::Executor executor(graph);
  const std::vector<float> x = {1, 2, 3, 4};
  auto out = executor.run({{"x", cpu::TensorData::from_f32(ir::Shape{1, 2, 2}, x)}});
  EXPECT_TRUE(out.ok()) << out.reason();
  return out.ok() ? out.value().at("y").to_f32() : std::vector<float>{};
}

TEST(FuseRepeatInterleave, the_exported_form_is_one_reshape_expand_reshape) {
  const ir::Graph before = ir::parse_text(kExported, "test.tir");
  ir::Graph after = before;
  ASSERT_TRUE(run_passes(after, "fuse-repeat-interleave").ok());
  EXPECT_EQ(ir::to_text(after), R"(graph g {
  input %x : f32[1,2,2]
  %y.grouped = Reshape(%x) {shape=1,2,1,2} : f32[1,2,1,2]
  %y.repeated = Expand(%y.grouped) {shape=1,2,2,2} : f32[1,2,2,2]
  %y = Reshape(%y.repeated) {shape=1,4,2} : f32[1,4,2]
  output %y
}
)");
  // Heads [1 2] and [3 4], each twice.
  const std::vector<float> expected = {1, 2, 1, 2, 3, 4, 3, 4};
  EXPECT_EQ(run(before), expected);
  EXPECT_EQ(run(after), expected);
}

TEST(FuseRepeatInterleave, leaves_parts_out_of_order_or_read_elsewhere_alone) {
  // The Concat takes the parts in the other order: not a repeat_interleave.
  std::string swapped = kExported;
  swapped.replace(swapped.find("Concat(%p3, %q3)"), 16, "Concat(%q3, %p3)");
  ir::Graph graph = ir::parse_text(swapped, "test.tir");
  ASSERT_TRUE(run_passes(graph, "fuse-repeat-interleave").ok());
  EXPECT_EQ(ir::to_text(graph), swapped);
  // A part also read by another op stays.
  std::string shared = kExported;
  shared.replace(shared.find("  output %y"), 11,
                 "  %z = Add(%p2, %q2) : f32[1,1,2,2]\n  output %y, %z");
  graph = ir::parse_text(shared, "test.tir");
  ASSERT_TRUE(run_passes(graph, "fuse-repeat-interleave").ok());
  EXPECT_EQ(ir::to_text(graph), shared);
}

// A packed q|k|v projection of two sequences of two tokens, three parts of one head of two
// values (torchvision's Swin: reshape to [B, N, 3, H, hd], permute(2, 0, 3, 1, 4), qkv[1]).
const char* const kPackedHeads = R"(graph g {
  input %x : f32[2,2,6]
  %h = Reshape(%x) {shape=2,2,3,1,2} : f32[2,2,3,1,2]
  %t = Transpose(%h) {perm=2,0,3,1,4} : f32[3,2,1,2,2]
  %y = Gather(%t) {axis=0, indices=[1]} : f32[2,1,2,2]
  %z = Gather(%t) {axis=0, indices=[2]} : f32[2,1,2,2]
  output %y, %z
}
)";

TEST(SplitPackedHeads, each_part_is_a_slice_of_the_projection_as_head_views) {
  const ir::Graph before = ir::parse_text(kPackedHeads, "test.tir");
  ir::Graph after = before;
  ASSERT_TRUE(run_passes(after, "split-packed-heads").ok());
  EXPECT_EQ(ir::to_text(after), R"(graph g {
  input %x : f32[2,2,6]
  %y.slice = Slice(%x) {starts=[2], ends=[4], axes=[2], steps=[1]} : f32[2,2,2]
  %y.heads = Reshape(%y.slice) {shape=2,2,1,2} : f32[2,2,1,2]
  %y = Transpose(%y.heads) {perm=0,2,1,3} : f32[2,1,2,2]
  %z.slice = Slice(%x) {starts=[4], ends=[6], axes=[2], steps=[1]} : f32[2,2,2]
  %z.heads = Reshape(%z.slice) {shape=2,2,1,2} : f32[2,2,1,2]
  %z = Transpose(%z.heads) {perm=0,2,1,3} : f32[2,1,2,2]
  output %y, %z
}
)");
  // x = 0..23: token (b, n) holds 6 (2 b + n) + [0, 6); part 1 is its values 2 and 3, part 2
  // its 4 and 5.
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  for (const ir::Graph* g : {&before, static_cast<const ir::Graph*>(&after)}) {
    cpu::Executor executor(*g);
    auto out = executor.run({{"x", cpu::TensorData::from_f32(ir::Shape{2, 2, 6}, x)}});
    ASSERT_TRUE(out.ok()) << out.reason();
    EXPECT_EQ(out.value().at("y").to_f32(), (std::vector<float>{2, 3, 8, 9, 14, 15, 20, 21}));
    EXPECT_EQ(out.value().at("z").to_f32(), (std::vector<float>{4, 5, 10, 11, 16, 17, 22, 23}));
  }
}

TEST(SplitPackedHeads, leaves_another_permutation_alone) {
  std::string other = kPackedHeads;
  const auto swap = [&](const std::string& from, const std::string& to) {
    other.replace(other.find(from), from.size(), to);
  };
  swap("perm=2,0,3,1,4} : f32[3,2,1,2,2]", "perm=2,0,1,3,4} : f32[3,2,2,1,2]");
  swap("indices=[1]} : f32[2,1,2,2]", "indices=[1]} : f32[2,2,1,2]");
  swap("indices=[2]} : f32[2,1,2,2]", "indices=[2]} : f32[2,2,1,2]");
  ir::Graph graph = ir::parse_text(other, "test.tir");
  const std::string before = ir::to_text(graph);
  ASSERT_TRUE(run_passes(graph, "split-packed-heads").ok());
  EXPECT_EQ(ir::to_text(graph), before);
}

TEST(FuseL2Normalize, f_normalize_is_an_rms_norm_scaled_by_one_over_root_n) {
  // Rows [3 4 0 0] (norm 5) and [1 1 1 1] (norm 2), as the importer writes ReduceL2.
  const char* const text = R"(graph g {
  input %x : f32[2,4]
  %sq = Mul(%x, %x) : f32[2,4]
  %sum = ReduceSum(%sq) {axes=[1]} : f32[2,1]
  %norm = Sqrt(%sum) : f32[2,1]
  %clamped = Clip(%norm) {min=1e-12} : f32[2,1]
  %wide = Expand(%clamped) {shape=2,4} : f32[2,4]
  %y = Div(%x, %wide) : f32[2,4]
  output %y
}
)";
  ir::Graph graph = ir::parse_text(text, "test.tir");
  ASSERT_TRUE(run_passes(graph, "fuse-l2-normalize").ok());
  ASSERT_EQ(graph.num_ops(), 2u);  // the input and one RMSNormalization
  const ir::Op& norm = graph.op(*graph.find_op("y"));
  EXPECT_EQ(norm.kind, ir::OpKind::RMSNormalization);
  EXPECT_EQ(graph.tensor(norm.inputs[1]).f32_values, std::vector<float>(4, 0.5f));  // 1/sqrt(4)
  cpu::Executor executor(graph);
  const std::vector<float> x = {3, 4, 0, 0, 1, 1, 1, 1};
  auto out = executor.run({{"x", cpu::TensorData::from_f32(ir::Shape{2, 4}, x)}});
  ASSERT_TRUE(out.ok()) << out.reason();
  const std::vector<float> y = out.value().at("y").to_f32();
  const std::vector<float> expected = {0.6f, 0.8f, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f};
  ASSERT_EQ(y.size(), expected.size());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
  // A clamp far from zero (1e-3) is no F.normalize: left alone.
  std::string wide_eps = text;
  wide_eps.replace(wide_eps.find("min=1e-12"), 9, "min=0.001");
  ir::Graph other = ir::parse_text(wide_eps, "test.tir");
  ASSERT_TRUE(run_passes(other, "fuse-l2-normalize").ok());
  EXPECT_EQ(ir::to_text(other), wide_eps);
}

/// Swin's shifted-window scores in small: 2 windows, 1 head, 2 x 2 scores; the relative-position
/// bias [1, 1, 2, 2] added, a view as [1 image, 2 windows, 1, 2, 2], the shift mask [1, 2, 1, 2,
/// 2] (window 1 masks query 0's key 1 and query 1's key 0) added, the view back.
const char* const kShiftedScores = R"(graph g {
  input %x : f32[2,1,2,2]
  const %bias : f32[1,1,2,2] = [1, 2, 3, 4]
  const %mask : f32[1,2,1,2,2] = [0, 0, 0, 0, 0, -100, -100, 0]
  %biased = Add(%x, %bias) : f32[2,1,2,2]
  %windows = Reshape(%biased) {shape=1,2,1,2,2} : f32[1,2,1,2,2]
  %masked = Add(%windows, %mask) : f32[1,2,1,2,2]
  %y = Reshape(%masked) {shape=2,1,2,2} : f32[2,1,2,2]
  output %y
}
)";

TEST(FoldConstantAdds, swins_bias_and_shift_mask_around_a_view_become_one_add) {
  const ir::Graph before = ir::parse_text(kShiftedScores, "test.tir");
  ir::Graph after = before;
  ASSERT_TRUE(run_passes(after, "fold-constant-adds").ok());
  ASSERT_EQ(after.num_ops(), 2u);  // the input and one Add
  const ir::Op& add = after.op(*after.find_op("y"));
  ASSERT_EQ(add.kind, ir::OpKind::Add);
  EXPECT_EQ(add.inputs[0], "x");
  const ir::Tensor& c = after.tensor(add.inputs[1]);
  EXPECT_EQ(c.shape, (ir::Shape{2, 1, 2, 2}));
  // The bias in both windows, the mask in window 1.
  EXPECT_EQ(c.f32_values, (std::vector<float>{1, 2, 3, 4, 1, -98, -97, 4}));
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  for (const ir::Graph* g : {&before, static_cast<const ir::Graph*>(&after)}) {
    cpu::Executor executor(*g);
    auto out = executor.run({{"x", cpu::TensorData::from_f32(ir::Shape{2, 1, 2, 2}, x)}});
    ASSERT_TRUE(out.ok()) << out.reason();
    EXPECT_EQ(out.value().at("y").to_f32(), (std::vector<float>{1, 3, 5, 7, 5, -93, -91, 11}));
  }
}

TEST(FoldConstantAdds, leaves_a_sum_read_twice_and_a_view_that_does_not_return) {
  // The biased scores are also a graph output: the first Add stays (the view's Add still
  // folds into one with the view around it).
  std::string read_twice = kShiftedScores;
  read_twice.replace(read_twice.find("output %y"), 9, "output %y, %biased");
  ir::Graph graph = ir::parse_text(read_twice, "test.tir");
  ASSERT_TRUE(run_passes(graph, "fold-constant-adds").ok());
  EXPECT_EQ(graph.num_ops(), 3u);  // the input, the bias Add and the mask Add
  EXPECT_EQ(graph.op(*graph.find_op("biased")).kind, ir::OpKind::Add);
  EXPECT_EQ(graph.tensor(graph.op(*graph.find_op("y")).inputs[1]).f32_values,
            (std::vector<float>{0, 0, 0, 0, 0, -100, -100, 0}));
  // A view that ends in another shape than it began: nothing folds through it.
  std::string other_view = kShiftedScores;
  const std::string back = "%y = Reshape(%masked) {shape=2,1,2,2} : f32[2,1,2,2]";
  other_view.replace(other_view.find(back), back.size(),
                     "%y = Reshape(%masked) {shape=2,2,2} : f32[2,2,2]");
  ir::Graph other = ir::parse_text(other_view, "test.tir");
  const std::string text = ir::to_text(other);
  ASSERT_TRUE(run_passes(other, "fold-constant-adds").ok());
  EXPECT_EQ(ir::to_text(other), text);
}

}  // namespace
}  // namespace tessel::passes
