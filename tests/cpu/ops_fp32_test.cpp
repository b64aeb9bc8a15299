// The registered fp32 kernels of the modern-workload kinds, on hand-computed tiny graphs.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/targets/cpu/executor.hpp"

namespace tessel::cpu {
namespace {

/// Runs a one-input graph given as text on `x` and returns its first output.
std::vector<float> run(const std::string& body, const ir::Shape& shape, std::vector<float> x) {
  ir::Graph g = ir::parse_text("graph t {\n" + body + "\n}", "test");
  auto ok = ir::infer_all_shapes(g);
  EXPECT_TRUE(ok.ok()) << ok.reason();
  if (!ok.ok()) return {};
  Executor executor(g);
  auto out = executor.run({{"x", TensorData::from_f32(shape, x)}});
  EXPECT_TRUE(out.ok()) << out.reason();
  if (!out.ok()) return {};
  return out.value().at(g.outputs()[0]).to_f32();
}

TEST(Fp32Ops, add_and_mul_broadcast_a_row_and_a_column) {
  // x [2,3] + row [3] -> x + r; x * column [2,1].
  EXPECT_EQ(run(R"(input %x : f32[2,3]
  const %r : f32[3] = [10, 20, 30]
  %y = Add(%x, %r) : f32[?]
  output %y)",
                {2, 3}, {1, 2, 3, 4, 5, 6}),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(run(R"(input %x : f32[2,3]
  const %c : f32[2,1] = [2, -1]
  %y = Mul(%x, %c) : f32[?]
  %z = Sub(%y, %c) : f32[?]
  output %z)",
                {2, 3}, {1, 2, 3, 4, 5, 6}),
            (std::vector<float>{0, 2, 4, -3, -4, -5}));
}

TEST(Fp32Ops, matmul_broadcasts_a_constant_matrix_over_the_batch) {
  // [2,1,2] x [2,2]: each batch row times [[1,2],[3,4]].
  EXPECT_EQ(run(R"(input %x : f32[2,1,2]
  const %w : f32[2,2] = [1, 2, 3, 4]
  %y = MatMul(%x, %w) : f32[?]
  output %y)",
                {2, 1, 2}, {1, 1, 2, -1}),
            (std::vector<float>{4, 6, -1, 0}));
}

TEST(Fp32Ops, matmul_of_an_activation_by_its_transpose) {
  // x [1,2,2] = [[1,2],[3,4]]; x x^T = [[5,11],[11,25]].
  EXPECT_EQ(run(R"(input %x : f32[1,2,2]
  %t = Transpose(%x) {perm=0,2,1} : f32[?]
  %y = MatMul(%x, %t) : f32[?]
  output %y)",
                {1, 2, 2}, {1, 2, 3, 4}),
            (std::vector<float>{5, 11, 11, 25}));
}

TEST(Fp32Ops, layer_norm_of_one_row_by_hand) {
  // Row [1, 2, 3, 4]: mean 2.5, variance 1.25; eps 0: (x - 2.5) / sqrt(1.25), then * 2 + 1.
  const auto y = run(R"(input %x : f32[1,4]
  const %g : f32[4] = [2, 2, 2, 2]
  const %b : f32[4] = [1, 1, 1, 1]
  %y = LayerNormalization(%x, %g, %b) {epsilon=0.0} : f32[?]
  output %y)",
                     {1, 4}, {1, 2, 3, 4});
  ASSERT_EQ(y.size(), 4u);
  const double s = std::sqrt(1.25);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(y[k], (k + 1 - 2.5) / s * 2 + 1, 1e-6) << k;
}

TEST(Fp32Ops, rms_norm_of_one_row_by_hand) {
  // Row [3, 4]: mean square 12.5; eps 0: x / sqrt(12.5) * scale [1, 10].
  const auto y = run(R"(input %x : f32[1,2]
  const %g : f32[2] = [1, 10]
  %y = RMSNormalization(%x, %g) {epsilon=0.0} : f32[?]
  output %y)",
                     {1, 2}, {3, 4});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(y[1], 40 / std::sqrt(12.5), 1e-6);
}

TEST(Fp32Ops, masked_softmax_leaves_masked_positions_out) {
  // Causal mask on 2x2 scores [[0, 5], [ln 3, 0]]: row 0 keeps only column 0 -> [1, 0]; row 1
  // softmax(ln 3, 0) = [3/4, 1/4].
  const auto y = run(R"(input %x : f32[2,2]
  const %m : f32[2,2] = [1, 0, 1, 1]
  %y = Softmax(%x, %m) {axis=-1} : f32[?]
  output %y)",
                     {2, 2}, {0, 5, std::log(3.0f), 0});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_FLOAT_EQ(y[0], 1);
  EXPECT_FLOAT_EQ(y[1], 0);
  EXPECT_NEAR(y[2], 0.75, 1e-6);
  EXPECT_NEAR(y[3], 0.25, 1e-6);
}

TEST(Fp32Ops, unary_functions_at_known_points) {
  // HardSwish(-3) = 0, HardSwish(1) = 1 * 4/6; Sigmoid(0) = 1/2; Gelu(0) = 0; Neg.
  const auto hs = run("input %x : f32[2]\n%y = HardSwish(%x) : f32[?]\noutput %y", {2}, {-3, 1});
  EXPECT_FLOAT_EQ(hs[0], 0);
  EXPECT_FLOAT_EQ(hs[1], 4.0f / 6.0f);
  EXPECT_FLOAT_EQ(run("input %x : f32[1]\n%y = Sigmoid(%x) : f32[?]\noutput %y", {1}, {0})[0],
                  0.5f);
  // Gelu(1) = 0.5 * (1 + erf(1 / sqrt 2)) = 0.8413447...
  EXPECT_NEAR(run("input %x : f32[1]\n%y = Gelu(%x) : f32[?]\noutput %y", {1}, {1})[0],
              0.5 * (1 + std::erf(1 / std::sqrt(2.0))), 1e-7);
  EXPECT_EQ(run("input %x : f32[2]\n%y = Neg(%x) : f32[?]\noutput %y", {2}, {1, -2}),
            (std::vector<float>{-1, 2}));
}

TEST(Fp32Ops, slice_with_a_negative_step_and_gather_of_a_scalar_index) {
  // x = [0..5]: Slice(start 4, end 0, step -2) -> [4, 2].
  EXPECT_EQ(run(R"(input %x : f32[6]
  %y = Slice(%x) {starts=[4], ends=[0], axes=[0], steps=[-2]} : f32[?]
  output %y)",
                {6}, {0, 1, 2, 3, 4, 5}),
            (std::vector<float>{4, 2}));
  // x [2,3], Gather axis 1 index 2 (scalar) -> [2]: column 2.
  EXPECT_EQ(run(R"(input %x : f32[2,3]
  %y = Gather(%x) {axis=1, indices=[2], indices_shape=[]} : f32[?]
  output %y)",
                {2, 3}, {0, 1, 2, 3, 4, 5}),
            (std::vector<float>{2, 5}));
}

TEST(Fp32Ops, expand_trilu_and_reductions) {
  EXPECT_EQ(run(R"(input %x : f32[2,1]
  %y = Expand(%x) {shape=2,3} : f32[?]
  output %y)",
                {2, 1}, {1, 2}),
            (std::vector<float>{1, 1, 1, 2, 2, 2}));
  // Lower triangle (upper=0) of a 3x3 of ones.
  EXPECT_EQ(run(R"(input %x : f32[3,3]
  %y = Trilu(%x) {upper=0} : f32[?]
  output %y)",
                {3, 3}, std::vector<float>(9, 1)),
            (std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  // [2,3] rows [1,2,3], [4,5,9]: mean over axis 1 keepdims -> [2, 6]; max over axis 0 -> [4,5,9].
  EXPECT_EQ(run(R"(input %x : f32[2,3]
  %y = ReduceMean(%x) {axes=[1]} : f32[?]
  output %y)",
                {2, 3}, {1, 2, 3, 4, 5, 9}),
            (std::vector<float>{2, 6}));
  EXPECT_EQ(run(R"(input %x : f32[2,3]
  %y = ReduceMax(%x) {axes=[0], keepdims=0} : f32[?]
  output %y)",
                {2, 3}, {1, 2, 3, 4, 5, 9}),
            (std::vector<float>{4, 5, 9}));
}

TEST(Fp32Ops, resize_nearest_doubles_each_pixel) {
  // asymmetric + floor: output pixel o reads input floor(o / 2).
  EXPECT_EQ(run(R"(input %x : f32[1,1,1,2]
  %y = Resize(%x) {mode="nearest", sizes=1,1,2,4, coordinate_transformation_mode="asymmetric", nearest_mode="floor"} : f32[?]
  output %y)",
                {1, 1, 1, 2}, {1, 2}),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST(Fp32Ops, where_selects_by_a_constant_condition) {
  EXPECT_EQ(run(R"(input %x : f32[3]
  const %c : f32[3] = [1, 0, 1]
  const %n : f32[1] = [-7]
  %y = Where(%c, %x, %n) : f32[?]
  output %y)",
                {3}, {1, 2, 3}),
            (std::vector<float>{1, -7, 3}));
}

TEST(Fp32Ops, bad_shapes_are_errors_naming_the_op) {
  ir::Graph g = ir::parse_text(R"(graph t {
  input %x : f32[2,3]
  const %w : f32[2,2] = [1, 2, 3, 4]
  %y = MatMul(%x, %w) : f32[?]
  output %y
})",
                               "test");
  const auto ok = ir::infer_all_shapes(g);
  ASSERT_FALSE(ok.ok());
  EXPECT_NE(ok.reason().find("%y (MatMul)"), std::string::npos) << ok.reason();
  EXPECT_NE(ok.reason().find("disagree on K"), std::string::npos) << ok.reason();
}

}  // namespace
}  // namespace tessel::cpu
