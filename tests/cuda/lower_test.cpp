// Lowering (fusion, kernel choice, layout, packing), launch geometry, analytical bytes, and the
// host emulator of the GPU plan vs the golden executor, bit for bit, on the tiny zoo nets.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/lower.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::cuda {
namespace {

ir::Graph prepared(const std::string& model, std::int64_t batch = 1) {
  zoo::ZooOptions options;
  options.batch = batch;
  auto graph = zoo::build_model(model, options);
  EXPECT_TRUE(graph.ok()) << graph.reason();
  auto p = cpu::prepare_graph(graph.value());
  EXPECT_TRUE(p.ok()) << p.reason();
  return std::move(p.value());
}

ir::Graph quantized(const std::string& model, std::int64_t batch = 1) {
  const ir::Graph g = prepared(model, batch);
  quant::QuantConfig config;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  EXPECT_TRUE(q.ok()) << q.reason();
  return std::move(q.value().graph);
}

std::vector<std::string> kinds(const GpuPlan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.steps) out.push_back(to_string(s.kind));
  return out;
}

/// Runs the golden executor and the plan's emulator on the default input; every tensor the plan
/// materializes must equal the golden one element for element.
void expect_bit_exact(const std::string& model, std::int64_t batch = 1) {
  const ir::Graph graph = quantized(model, batch);
  auto plan = lower_to_gpu(graph);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const auto& input_t = graph.tensor(plan.value().input_tensor);
  const cpu::TensorData input = cpu::default_input(input_t.shape, 0);
  cpu::Executor golden(graph);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto expected = golden.run({{input_t.name, input}}, options);
  ASSERT_TRUE(expected.ok()) << expected.reason();
  auto got = emulate(plan.value(), input, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  ASSERT_FALSE(got.value().empty());
  for (const auto& [name, value] : got.value()) {
    ASSERT_TRUE(expected.value().count(name)) << name;
    const auto want = expected.value().at(name).to_i32();
    const auto have = value.to_i32();
    ASSERT_EQ(have.size(), want.size()) << name;
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      if (have[i] != want[i] && mismatches++ == 0) first = i;
    EXPECT_EQ(mismatches, 0u) << model << ": tensor %" << name << " first differs at " << first
                              << ": " << have[first] << " vs golden " << want[first];
  }
  for (const auto& out : plan.value().outputs) EXPECT_TRUE(got.value().count(out.tensor));
}

TEST(CudaLaunch, Dp4aGridCoversPixelsAndChannelsIn64Tiles) {
  const Launch l = dp4a_launch(56 * 56, 64);
  EXPECT_EQ(l.grid, (std::array<std::int64_t, 3>{49, 1, 1}));
  EXPECT_EQ(l.block, (std::array<std::int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(l.shared_bytes, 4352);  // what ptxas -v reports for conv_dp4a_kernel
  const Launch fc = dp4a_launch(1, 1000);
  EXPECT_EQ(fc.grid, (std::array<std::int64_t, 3>{1, 16, 1}));
  EXPECT_EQ(fc.threads(), 16 * 256);
}

TEST(CudaLaunch, ElementwiseGridRoundsUp) {
  EXPECT_EQ(elementwise_launch(1000).grid[0], 4);
  EXPECT_EQ(elementwise_launch(1024).grid[0], 4);
  EXPECT_EQ(elementwise_launch(1).grid[0], 1);
  EXPECT_EQ(padded_channels(3), 4);
  EXPECT_EQ(padded_channels(64), 64);
  EXPECT_EQ(padded_channels(1001), 1004);
}

TEST(CudaLower, TinyConvIsQuantizeThenOneFusedDp4aConv) {
  const auto plan = lower_to_gpu(quantized("tiny_conv"));
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const GpuPlan& p = plan.value();
  EXPECT_EQ(kinds(p), (std::vector<std::string>{"quantize", "conv_dp4a"}));
  const Step& conv = p.steps[1];
  EXPECT_EQ(conv.ops, (std::vector<std::string>{"conv", "conv.requantize", "relu"}));
  // 3 input channels padded to 4: weights 4 x 3 x 3 x 4 int8.
  EXPECT_EQ(conv.weight_c_stride, 4);
  EXPECT_EQ(conv.weights.size(), 4u * 9 * 4);
  EXPECT_EQ(conv.macs, 8 * 8 * 4 * 9 * 3);
  EXPECT_EQ(conv.epilogue.scalars.has_clamp, 1);
  EXPECT_EQ(conv.epilogue.scalars.clamp_lo, 0);
  EXPECT_EQ(conv.epilogue.multiplier.size(), 4u);  // per output channel
  // Bytes: input 8x8x4 (dp4a reads the padded word) + weights 144 + bias 16 + tables 32,
  // output 8x8x4 int8.
  EXPECT_EQ(conv.bytes.activations_read, 8 * 8 * 4);
  EXPECT_EQ(conv.bytes.weights_read, 144 + 16 + 32);
  EXPECT_EQ(conv.bytes.activations_written, 8 * 8 * 4);
  EXPECT_EQ(conv.launch.grid[0], 1);
  // The quantize step reads the f32 input (3 x 8 x 8 x 4 B) and writes int8.
  EXPECT_EQ(p.steps[0].bytes.activations_read, 3 * 64 * 4);
  EXPECT_EQ(p.steps[0].bytes.activations_written, 3 * 64);
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].tensor, "relu.q");
  EXPECT_EQ(p.host_ops, (std::vector<std::string>{"relu.dequantize"}));
}

TEST(CudaLower, ResidualAddAndReluFuseIntoTheSecondConv) {
  const auto plan = lower_to_gpu(quantized("tiny_residual"));
  ASSERT_TRUE(plan.ok()) << plan.reason();
  EXPECT_EQ(kinds(plan.value()), (std::vector<std::string>{"quantize", "conv_dp4a", "conv_dp4a"}));
  const Step& conv2 = plan.value().steps[2];
  EXPECT_EQ(conv2.ops, (std::vector<std::string>{"conv2", "conv2.requantize", "add", "relu2"}));
  EXPECT_EQ(conv2.epilogue.scalars.has_add, 1);
  EXPECT_EQ(conv2.epilogue.scalars.residual_is_a, 0);  // add(conv2 chain, input)
  EXPECT_EQ(conv2.second.buffer, plan.value().steps[0].y.buffer);
  EXPECT_EQ(conv2.epilogue.scalars.has_post_clamp, 1);
  // The residual's 4 x 8 x 8 int8 is read on top of the conv input.
  EXPECT_EQ(conv2.bytes.activations_read, 2 * 4 * 64);
}

TEST(CudaLower, DepthwiseGoesDirectAndGlobalPoolRequantizes) {
  const auto plan = lower_to_gpu(quantized("tiny_depthwise"));
  ASSERT_TRUE(plan.ok()) << plan.reason();
  EXPECT_EQ(kinds(plan.value()),
            (std::vector<std::string>{"quantize", "conv_direct", "conv_dp4a", "pool"}));
  const Step& pool = plan.value().steps[3];
  EXPECT_FALSE(pool.is_max);
  EXPECT_EQ(pool.window.kernel_h, 8);
  EXPECT_EQ(pool.epilogue.multiplier.size(), 1u);
}

TEST(CudaLower, ConcatCopiesEachBranchIntoItsChannelSlice) {
  const auto plan = lower_to_gpu(quantized("tiny_inception"));
  ASSERT_TRUE(plan.ok()) << plan.reason();
  std::vector<std::int64_t> offsets;
  for (const auto& s : plan.value().steps)
    if (s.kind == KernelKind::Copy) offsets.push_back(s.y.channel_offset);
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{0, 4, 8}));
}

TEST(CudaLower, GemmOverAFlattenedMapPermutesWeightColumns) {
  const ir::Graph graph = quantized("tiny_mlp");
  const auto plan = lower_to_gpu(graph);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const Step& fc1 = plan.value().steps[1];
  ASSERT_EQ(fc1.name, "fc1");
  // [1,4,2,2] flattened: the buffer holds (h, w, c) with c padded to 4, so K' = 2*2*4 = 16 and
  // logical column k = c * 4 + p sits at p * 4 + c.
  EXPECT_EQ(fc1.x.c, 16);
  EXPECT_EQ(fc1.weight_c_stride, 16);
  const auto w =
      cpu::TensorData::from_constant(graph.tensor(graph.op(*graph.find_op("fc1")).inputs[1]))
          .to_i32();
  // Output row 0: packed position p * 4 + c holds w[0][c * 4 + p].
  for (int c = 0; c < 4; ++c)
    for (int p = 0; p < 4; ++p)
      EXPECT_EQ(static_cast<std::int8_t>(fc1.weights[static_cast<std::size_t>(p * 4 + c)]),
                w[static_cast<std::size_t>(c * 4 + p)]);
}

TEST(CudaLower, FloatGraphIsRejectedNamingTheConv) {
  const auto plan = lower_to_gpu(prepared("tiny_conv"));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.reason(), "%conv (Conv): a float Conv/Gemm (quantize first)");
}

TEST(CudaEmulator, TinyNetsAreBitExactWithTheGoldenExecutor) {
  for (const char* model :
       {"tiny_conv", "tiny_residual", "tiny_inception", "tiny_mlp", "tiny_depthwise"}) {
    SCOPED_TRACE(model);
    expect_bit_exact(model);
  }
}

TEST(CudaEmulator, BatchOfThreeIsBitExact) {
  expect_bit_exact("tiny_residual", 3);
  expect_bit_exact("tiny_mlp", 3);
}

TEST(CudaEmulator, ComparisonCatchesSwappedAddOperandsAndUnpermutedFcWeights) {
  // The bit-exact check must be able to fail: swap the Add's multipliers, or drop the FC's
  // NCHW -> NHWC column permutation, and the output no longer matches the golden executor.
  const auto mismatches = [](const std::string& model, const std::function<void(GpuPlan&)>& bug) {
    const ir::Graph graph = quantized(model);
    auto plan = lower_to_gpu(graph);
    EXPECT_TRUE(plan.ok());
    bug(plan.value());
    const cpu::TensorData input = cpu::default_input(plan.value().input_shape, 0);
    cpu::Executor golden(graph);
    cpu::RunOptions options;
    options.keep_intermediates = true;
    auto want = golden.run({{plan.value().input_tensor, input}}, options);
    auto got = emulate(plan.value(), input);
    EXPECT_TRUE(want.ok() && got.ok());
    const std::string out = plan.value().outputs.at(0).tensor;
    const auto a = got.value().at(out).to_i32(), b = want.value().at(out).to_i32();
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    return differ;
  };
  EXPECT_EQ(mismatches("tiny_residual", [](GpuPlan&) {}), 0);
  EXPECT_GT(mismatches("tiny_residual",
                       [](GpuPlan& p) { p.steps[2].epilogue.scalars.residual_is_a ^= 1; }),
            0);
  EXPECT_GT(mismatches("tiny_mlp",
                       [](GpuPlan& p) {
                         // Reverse the 16 packed columns of fc1's rows.
                         Step& fc1 = p.steps[1];
                         for (std::size_t r = 0; r < fc1.weights.size(); r += 16)
                           std::reverse(fc1.weights.begin() + static_cast<std::ptrdiff_t>(r),
                                        fc1.weights.begin() + static_cast<std::ptrdiff_t>(r + 16));
                       }),
            0);
}

TEST(CudaEmulator, RejectsAnInputOfTheWrongShape) {
  const auto plan = lower_to_gpu(quantized("tiny_conv"));
  ASSERT_TRUE(plan.ok());
  const auto r = emulate(plan.value(), cpu::default_input({1, 3, 4, 4}, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.reason(), "input %input must be f32[1,3,8,8], got f32[1,3,4,4]");
}

}  // namespace
}  // namespace tessel::cuda
