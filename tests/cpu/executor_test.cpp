// The CPU executors on hand-computed tiny graphs: fp32 kernels, integer kernels, oneDNN exactness.
#include "compiler/targets/cpu/executor.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/targets/cpu/kernels.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::cpu {
namespace {

std::vector<float> run_one(const ir::Graph& g, const std::string& input, TensorData x) {
  Executor executor(g);
  auto out = executor.run({{input, std::move(x)}});
  EXPECT_TRUE(out.ok()) << out.reason();
  if (!out.ok()) return {};
  return out.value().at(g.outputs()[0]).to_f32();
}

TEST(Fp32Executor, OneByOneConvOnTwoByTwo) {
  // y[o] = sum_c w[o,c] x[c] + b[o]: two input channels, two output channels.
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,2,2,2]
  const %w : f32[2,2,1,1] = [1, 2, -1, 0.5]
  const %b : f32[2] = [0.5, -1]
  %y = Conv(%x, %w, %b) {kernel=1x1} : f32[?]
  output %y
})");
  const std::vector<float> x = {1, 2, 3, 4, 10, 20, 30, 40};
  EXPECT_EQ(run_one(g, "x", TensorData::from_f32({1, 2, 2, 2}, x)),
            (std::vector<float>{21.5f, 42.5f, 63.5f, 84.5f, 3.0f, 7.0f, 11.0f, 15.0f}));
}

TEST(Fp32Executor, AWeightHeldAsADigestOnlyIsAnErrorNamingItNotACrash) {
  // The .tir `tessel import` writes holds weights as digests; running it crashed in the conv
  // kernel (an unordered_map::at out of range) before session 38.
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,2,2,2]
  const %w : f32[2,2,1,1] #0123456789abcdef
  %y = Conv(%x, %w) {kernel=1x1} : f32[?]
  output %y
})");
  Executor executor(g);
  auto out = executor.run({{"x", TensorData::from_f32({1, 2, 2, 2}, std::vector<float>(8, 1.0f))}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.reason(),
            "constant %w, read by op 'y', has no values (a file that holds weights as digests "
            "only, such as the .tir `tessel import` writes, cannot run: run the .onnx or a model "
            "file written with its weights)");
}

TEST(Fp32Executor, ThreeByThreeConvWithPaddingSumsTheHalo) {
  // All-ones 3x3 kernel, pad 1 on a 3x3 all-ones input: corner 4, edge 6, centre 9.
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,1,3,3]
  const %w : f32[1,1,3,3] = [1, 1, 1, 1, 1, 1, 1, 1, 1]
  %y = Conv(%x, %w) {kernel=3x3, pad=1,1,1,1} : f32[?]
  output %y
})");
  const std::vector<float> ones(9, 1.0f);
  EXPECT_EQ(run_one(g, "x", TensorData::from_f32({1, 1, 3, 3}, ones)),
            (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST(Fp32Executor, PoolsAddReluConcatSoftmax) {
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,1,2,2]
  %m = MaxPool(%x) {kernel=2x2, stride=2x2} : f32[?]
  %a = AveragePool(%x) {kernel=2x2, stride=2x2} : f32[?]
  %g = GlobalAveragePool(%x) : f32[?]
  %s = Add(%m, %a) : f32[?]
  %r = Relu(%s) : f32[?]
  %c = Concat(%r, %g) {axis=1} : f32[?]
  %f = Flatten(%c) {axis=1} : f32[?]
  %p = Softmax(%f) {axis=1} : f32[?]
  output %p
})");
  // max 4, mean 2.5 -> add 6.5 -> relu 6.5; gap 2.5; softmax(6.5, 2.5).
  const auto y =
      run_one(g, "x", TensorData::from_f32({1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_FLOAT_EQ(y[0], 1.0f / (1.0f + std::exp(-4.0f)));
  EXPECT_FLOAT_EQ(y[1], 1.0f / (1.0f + std::exp(4.0f)));
}

TEST(Fp32Executor, GemmWithTransposedWeightsAndBias) {
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,3]
  const %w : f32[2,3] = [1, 0, -1, 2, 2, 2]
  const %b : f32[2] = [10, 20]
  %y = Gemm(%x, %w, %b) {transB=1} : f32[?]
  output %y
})");
  EXPECT_EQ(run_one(g, "x", TensorData::from_f32({1, 3}, std::vector<float>{1, 2, 3})),
            (std::vector<float>{8.0f, 32.0f}));
}

TEST(IntegerKernels, ConvReferenceSubtractsZeroPointsAndAddsBias) {
  const auto x =
      TensorData::from_ints(ir::DType::u8, {1, 1, 2, 2}, std::vector<std::int32_t>{10, 11, 12, 13});
  const auto w =
      TensorData::from_ints(ir::DType::i8, {1, 1, 2, 2}, std::vector<std::int32_t>{1, -1, 2, 3});
  const auto b = TensorData::from_ints(ir::DType::i32, {1}, std::vector<std::int32_t>{-5});
  TensorData y(ir::DType::i32, {1, 1, 1, 1});
  ir::WindowGeometry g;
  g.kernel_h = g.kernel_w = 2;
  // (0*1 + 1*-1 + 2*2 + 3*3) - 5 = 7 with x_zp = 10.
  ASSERT_TRUE(conv_int_reference(x, w, &b, g, y, 10, 0).ok());
  EXPECT_EQ(y.data<std::int32_t>()[0], 7);
}

TEST(IntegerKernels, ConvReferenceReportsInt32Overflow) {
  std::vector<std::int32_t> big(4, 32767);
  const auto x = TensorData::from_ints(ir::DType::i16, {1, 1, 2, 2}, big);
  const auto w = TensorData::from_ints(ir::DType::i16, {1, 1, 2, 2}, big);
  TensorData y(ir::DType::i32, {1, 1, 1, 1});
  ir::WindowGeometry g;
  g.kernel_h = g.kernel_w = 2;
  const auto status = conv_int_reference(x, w, nullptr, g, y);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(), "int32 accumulator overflow at output element 0 (value 4294705156)");
}

// TESSEL_CPU_NO_ONEDNN_INT8 (ctest's cpu_tests_no_onednn_int8) keeps oneDNN's 8-bit
// convolution out, so that run checks the im2col path that CPUs without VNNI take; whether it is
// in otherwise depends on the CPU, and the test below checks the results either way.
TEST(IntegerKernels, NoOneDnnInt8SwitchTakesTheIm2colPath) {
  const char* value = std::getenv("TESSEL_CPU_NO_ONEDNN_INT8");
  if (value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0) {
    EXPECT_FALSE(onednn_int8_conv_exact());
  }
  RecordProperty("onednn_int8_conv_exact", onednn_int8_conv_exact() ? "true" : "false");
}

// The executor's s8 x s8 -> s32 convolution (oneDNN where onednn_int8_conv_exact(), else the
// im2col loop) must equal the int64 reference exactly, including grouped (depthwise), strided,
// dilated and asymmetrically padded cases and extreme values.
TEST(IntegerKernels, Int8ConvIsBitExactWithTheReference) {
  struct Case {
    const char* text;
    ir::Shape x;
  };
  const Case cases[] = {
      {R"(graph t {
  input %x : i8[1,16,9,9]
  const %w : i8[32,16,3,3] #0
  const %b : i32[32] #0
  %y = Conv(%x, %w, %b) {kernel=3x3, stride=2x2, pad=1,0,1,2} : i32[?]
  output %y
})",
       {1, 16, 9, 9}},
      {R"(graph t {
  input %x : i8[1,8,7,7]
  const %w : i8[8,1,3,3] #0
  %y = Conv(%x, %w) {kernel=3x3, pad=2,2,2,2, dilation=2x2, group=8} : i32[?]
  output %y
})",
       {1, 8, 7, 7}},
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(-128, 127);
  for (const auto& c : cases) {
    ir::Graph g = ir::parse_text(c.text, "case");
    for (const auto& name : {"w", "b"}) {
      if (!g.has_tensor(name)) continue;
      auto& t = g.tensor_mut(name);
      t.elided_digest.reset();
      t.int_values.resize(static_cast<std::size_t>(ir::element_count(t.shape)));
      for (auto& v : t.int_values) v = t.dtype == ir::DType::i32 ? value(rng) * 1000 : value(rng);
      t.int_values[0] = t.dtype == ir::DType::i32 ? 0 : -128;  // extreme corner
    }
    ASSERT_TRUE(ir::infer_all_shapes(g).ok());
    std::vector<std::int32_t> xv(static_cast<std::size_t>(ir::element_count(c.x)));
    for (auto& v : xv) v = value(rng);
    xv[0] = -128;
    const auto x = TensorData::from_ints(ir::DType::i8, c.x, xv);
    Executor executor(g);
    auto out = executor.run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.reason();
    const auto& y = out.value().at("y");
    TensorData expected(ir::DType::i32, y.shape());
    const auto w = TensorData::from_constant(g.tensor("w"));
    const auto op = g.op(*g.find_op("y"));
    std::optional<TensorData> bias;
    if (g.has_tensor("b")) bias = TensorData::from_constant(g.tensor("b"));
    ASSERT_TRUE(
        conv_int_reference(x, w, bias ? &*bias : nullptr, ir::window_geometry(op), expected).ok());
    EXPECT_EQ(y.to_i32(), expected.to_i32()) << c.text;
  }
}

// 16-bit data has no oneDNN kernel: the executor's im2col path must equal the int64 reference
// exactly (grouped, strided, dilated, padded, extreme values) and name the first overflowing
// element in NCHW order as the reference does.
TEST(IntegerKernels, Int16Im2colConvIsBitExactWithTheReference) {
  const char* texts[] = {R"(graph t {
  input %x : i16[1,6,9,8]
  const %w : i16[4,3,3,2] #0
  const %b : i32[4] #0
  %y = Conv(%x, %w, %b) {kernel=3x2, stride=2x1, pad=1,0,2,1, dilation=1x2, group=2} : i32[?]
  output %y
})",
                         R"(graph t {
  input %x : i16[2,3,5,5]
  const %w : i8[5,3,1,1] #0
  %y = Conv(%x, %w) {kernel=1x1} : i32[?]
  output %y
})"};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-300, 300), weight(-128, 127);
  for (const char* text : texts) {
    ir::Graph g = ir::parse_text(text, "case");
    for (const auto& name : {"w", "b"}) {
      if (!g.has_tensor(name)) continue;
      auto& t = g.tensor_mut(name);
      t.elided_digest.reset();
      t.int_values.resize(static_cast<std::size_t>(ir::element_count(t.shape)));
      for (auto& v : t.int_values) v = t.dtype == ir::DType::i32 ? small(rng) * 1000 : weight(rng);
    }
    ASSERT_TRUE(ir::infer_all_shapes(g).ok());
    const ir::Shape xs = g.tensor("x").shape;
    std::vector<std::int32_t> xv(static_cast<std::size_t>(ir::element_count(xs)));
    for (auto& v : xv) v = small(rng);
    xv[0] = -32768;
    xv[1] = 32767;
    const auto x = TensorData::from_ints(ir::DType::i16, xs, xv);
    Executor executor(g);
    auto out = executor.run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.reason();
    const auto& y = out.value().at("y");
    TensorData expected(ir::DType::i32, y.shape());
    std::optional<TensorData> bias;
    if (g.has_tensor("b")) bias = TensorData::from_constant(g.tensor("b"));
    ASSERT_TRUE(conv_int_reference(x, TensorData::from_constant(g.tensor("w")),
                                   bias ? &*bias : nullptr,
                                   ir::window_geometry(g.op(*g.find_op("y"))), expected)
                    .ok());
    EXPECT_EQ(y.to_i32(), expected.to_i32()) << text;
  }
  const ir::Graph g = test_support::parse_graph(R"(graph t {
  input %x : i16[1,1,2,2]
  const %w : i16[1,1,2,2] ints [32767, 32767, 32767, 32767]
  %y = Conv(%x, %w) {kernel=2x2} : i32[?]
  output %y
})");
  std::vector<std::int32_t> big(4, 32767);
  Executor executor(g);
  auto out = executor.run({{"x", TensorData::from_ints(ir::DType::i16, {1, 1, 2, 2}, big)}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.reason(),
            "%y (Conv): int32 accumulator overflow at output element 0 (value 4294705156)");
}

TEST(DefaultInput, IsSeededAndStable) {
  const auto a = default_input({1, 3, 2, 2}, 0);
  const auto b = default_input({1, 3, 2, 2}, 0);
  const auto c = default_input({1, 3, 2, 2}, 1);
  EXPECT_EQ(a.to_f32(), b.to_f32());
  EXPECT_NE(a.to_f32(), c.to_f32());
  // Pinned: any change to the generator changes every tool's default input.
  EXPECT_FLOAT_EQ(a.to_f32()[0], default_input({1}, 0).to_f32()[0]);
}

}  // namespace
}  // namespace tessel::cpu
