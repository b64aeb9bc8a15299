// The integer kernels of the modern-workload ops on hand-computed cases (docs/quantization.md,
// "Modern workloads"), and a tiny transformer block quantized at 8 and 16 bits against fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "support/seeded.hpp"
#include "tests/support/int_tensor.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::cpu {
namespace {

std::vector<std::int32_t> run_one(const ir::Graph& g, const std::map<std::string, TensorData>& in,
                                  const std::string& output) {
  Executor executor(g);
  auto out = executor.run(in);
  EXPECT_TRUE(out.ok()) << out.reason();
  return out.ok() ? out.value().at(output).to_i32() : std::vector<std::int32_t>{};
}

TEST(IntegerWorkloadKernels, MulBroadcastsAConstantRowAndRequantizesOnce) {
  // s_a * s_b / s_y = 0.5 * 0.25 / 0.25 = 0.5: y = rha(a * b / 2) with b = [3, -1, 1] on every row.
  // a * b = [[3, -2, 3], [-12, -5, -6]] -> [[2, -1, 2], [-6, -3, -3]] (1.5 -> 2, -2.5 -> -3).
  const auto g = test_support::parse_graph(R"(graph m {
  input %a : i8[2,3]{scale=0.5, zp=0}
  const %b : i8[3]{scale=0.25, zp=0} ints [3, -1, 1]
  %y = Mul(%a, %b) : i8[2,3]{scale=0.25, zp=0}
  output %y
})");
  EXPECT_EQ(
      run_one(g, {{"a", test_support::int_tensor(ir::DType::i8, {2, 3}, {1, 2, 3, -4, 5, -6})}},
              "y"),
      (std::vector<std::int32_t>{2, -1, 2, -6, -3, -3}));
}

TEST(IntegerWorkloadKernels, AnAveragePoolReadsEightBitsAndWritesSixteen) {
  // A widened output class (norm_input_bits, a per-layer override): s_in / (s_out * N) =
  // 0.5 / (0.03125 * 4) = 4, so y = 4 * (window sum) exactly: [1 + 2 + 3 + 4, -5 - 6 + 7 - 8] * 4.
  const auto g = test_support::parse_graph(R"(graph p {
  input %x : i8[1,2,2,2]{scale=0.5, zp=0}
  %y = GlobalAveragePool(%x) : i16[1,2,1,1]{scale=0.03125, zp=0}
  output %y
})");
  EXPECT_EQ(run_one(g,
                    {{"x", test_support::int_tensor(ir::DType::i8, {1, 2, 2, 2},
                                                    {1, 2, 3, 4, -5, -6, 7, -8})}},
                    "y"),
            (std::vector<std::int32_t>{40, -48}));
}

TEST(IntegerWorkloadKernels, SubNegatesTheSecondOperandWithBroadcasting) {
  // s_a / s_y = 1, s_b / s_y = 0.5: y = a - b / 2 with b = [[4], [5]] down the columns.
  const auto g = test_support::parse_graph(R"(graph s {
  input %a : i8[2,2]{scale=0.5, zp=0}
  const %b : i8[2,1]{scale=0.25, zp=0} ints [4, 5]
  %y = Sub(%a, %b) : i8[2,2]{scale=0.5, zp=0}
  output %y
})");
  // [[10 - 2, -10 - 2], [10 - 2.5, -10 - 2.5]] = [[8, -12], [7.5 -> 8, -12.5 -> -13]].
  EXPECT_EQ(
      run_one(g, {{"a", test_support::int_tensor(ir::DType::i8, {2, 2}, {10, -10, 10, -10})}}, "y"),
      (std::vector<std::int32_t>{8, -12, 8, -13}));
}

TEST(IntegerWorkloadKernels, MatMulOfTwoActivationsAccumulatesThenRequantizes) {
  // acc = a x b = [[14, 29], [32, 56]] (scale 0.125); y = rha(acc * 0.125 / 0.5) = [[4, 7], [8,
  // 14]].
  const auto g = test_support::parse_graph(R"(graph mm {
  input %a : i8[2,3]{scale=0.5, zp=0}
  input %b : i8[3,2]{scale=0.25, zp=0}
  %acc = MatMul(%a, %b) : i32[2,2]{scale=0.125, zp=0}
  %y = Requantize(%acc) : i8[2,2]{scale=0.5, zp=0}
  output %y
})");
  const std::map<std::string, TensorData> in = {
      {"a", test_support::int_tensor(ir::DType::i8, {2, 3}, {1, 2, 3, 4, 5, 6})},
      {"b", test_support::int_tensor(ir::DType::i8, {3, 2}, {1, -1, 2, 0, 3, 10})}};
  EXPECT_EQ(run_one(g, in, "y"), (std::vector<std::int32_t>{4, 7, 8, 14}));
}

TEST(IntegerWorkloadKernels, SixteenBitMatMulRoundsItsOperandsByTheShift) {
  // K = 8 at 16 x 16 bits: u = 2. rha(a, 2) = [1, 2, 2, 2, -1, -2, -2, -2] (1.25, 1.5, 1.75, 2),
  // rha(b, 2) = [1, 1, 1, 1, 0, 0, 0, 0]: acc = 7.
  const auto g = test_support::parse_graph(R"(graph mm16 {
  input %a : i16[1,8]{scale=1, zp=0}
  input %b : i16[8,1]{scale=1, zp=0}
  %acc = MatMul(%a, %b) : i32[1,1]{scale=16, zp=0}
  output %acc
})");
  const std::map<std::string, TensorData> in = {
      {"a", test_support::int_tensor(ir::DType::i16, {1, 8}, {5, 6, 7, 8, -5, -6, -7, -8})},
      {"b", test_support::int_tensor(ir::DType::i16, {8, 1}, {4, 4, 4, 4, 1, 1, 1, 1})}};
  EXPECT_EQ(run_one(g, in, "acc"), (std::vector<std::int32_t>{7}));
}

// s_x = ln 2 makes the exp table powers of two (support tests: SoftmaxRow.*).
constexpr const char* kMaskedSoftmax = R"(graph sm {
  input %x : i8[2,4]{scale=0.693147182, zp=0}
  const %keep : i8[1,4] ints [1, 0, 1, 0]
  %y = Softmax(%x, %keep) {axis=1} : i8[2,4]{scale=0.00787401572, zp=0}
  output %y
})";

TEST(IntegerWorkloadKernels, SoftmaxWithAMaskByHand) {
  // Row 0 as SoftmaxRow.MaskedPositionsLeaveTheMaximumAndTheSum: [85, 0, 42, 0]; row 1 (x = 0,
  // -3, -1, 0 kept at 0 and 2): e = [32768, 16384] again.
  const auto g = test_support::parse_graph(kMaskedSoftmax);
  EXPECT_EQ(
      run_one(g,
              {{"x", test_support::int_tensor(ir::DType::i8, {2, 4}, {5, 3, 4, 9, 0, -3, -1, 0})}},
              "y"),
      (std::vector<std::int32_t>{85, 0, 42, 0, 85, 0, 42, 0}));
}

TEST(IntegerWorkloadKernels, SoftmaxAlongTheFirstAxisReadsStridedRows) {
  // The four codes of SoftmaxRow.FourCodesByHand down a column: [46, 12, 23, 46].
  const auto g = test_support::parse_graph(R"(graph sm0 {
  input %x : i8[4,1]{scale=0.693147182, zp=0}
  const %keep : i8[4,1] ints [1, 1, 1, 1]
  %y = Softmax(%x, %keep) {axis=0} : i8[4,1]{scale=0.00787401572, zp=0}
  output %y
})");
  EXPECT_EQ(run_one(g, {{"x", test_support::int_tensor(ir::DType::i8, {4, 1}, {5, 3, 4, 5})}}, "y"),
            (std::vector<std::int32_t>{46, 12, 23, 46}));
}

TEST(IntegerWorkloadKernels, LayerNormOfFourCodesByHand) {
  // As NormRow.LayerNormOfFourCodesByHand: gamma 1 over s_y = 1/32 gives G = 2^30, r = 41;
  // beta_2 = 0.5 gives 16 codes.
  const auto g = test_support::parse_graph(R"(graph ln {
  input %x : i8[1,4]{scale=1, zp=0}
  const %gamma : f32[4] = [1, 1, 1, 1]
  const %beta : f32[4] = [0, 0, 0.5, 0]
  %y = LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=0.0} : i8[1,4]{scale=0.03125, zp=0}
  output %y
})");
  EXPECT_EQ(run_one(g, {{"x", test_support::int_tensor(ir::DType::i8, {1, 4}, {1, 2, 3, 6})}}, "y"),
            (std::vector<std::int32_t>{-34, -17, 16, 51}));
}

}  // namespace
}  // namespace tessel::cpu
