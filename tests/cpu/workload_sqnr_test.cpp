// A tiny transformer block (LayerNorm, Q/K/V MatMuls, Q x K^T, a scaled and causally masked
// Softmax, scores x V, residual Adds, LayerNorm, an MLP with a broadcast bias Add and Gelu)
// built in C++, quantized at 8 and 16 bits with the default calibration, against fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "support/seeded.hpp"
#include "tests/support/graph_builder.hpp"

namespace tessel::cpu {
namespace {

using ir::OpKind;

struct BlockBuilder : testing::GraphBuilder {
  BlockBuilder() : GraphBuilder("tiny_block", 1000) {}
};

constexpr std::int64_t kSeq = 8, kModel = 16, kHidden = 32;

ir::Graph tiny_block() {
  BlockBuilder b;
  const std::string x = b.input("x", {1, kSeq, kModel});
  const auto layer_norm = [&](const std::string& name, const std::string& in) {
    return b.op(name, OpKind::LayerNormalization,
                {in, b.random(name + ".gamma", {kModel}, 1.0, 0.1),
                 b.random(name + ".beta", {kModel}, 0.0, 0.1)});
  };
  const std::string ln1 = layer_norm("ln1", x);
  const auto project = [&](const std::string& name, const std::string& in, std::int64_t k,
                           std::int64_t n) {
    return b.op(name, OpKind::MatMul,
                {in, b.random(name + ".w", {k, n}, 0.0, 1.0 / std::sqrt(static_cast<double>(k)))});
  };
  const std::string q = project("q", ln1, kModel, kModel);
  const std::string k = project("k", ln1, kModel, kModel);
  const std::string v = project("v", ln1, kModel, kModel);
  const std::string kt = b.op("kt", OpKind::Transpose, {k}, {{"perm", ir::Shape{0, 2, 1}}});
  const std::string scores = b.op("scores", OpKind::MatMul, {q, kt});
  const std::string scaled =
      b.op("scaled", OpKind::Div, {scores, b.constant("sqrt_d", {1}, {4.0f})});
  std::vector<float> causal(static_cast<std::size_t>(kSeq * kSeq), 0.0f);
  for (std::int64_t i = 0; i < kSeq; ++i)
    for (std::int64_t j = 0; j <= i; ++j) causal[static_cast<std::size_t>(i * kSeq + j)] = 1.0f;
  const std::string probs =
      b.op("probs", OpKind::Softmax, {scaled, b.constant("causal", {kSeq, kSeq}, causal)});
  const std::string attention = b.op("attention", OpKind::MatMul, {probs, v});
  const std::string residual = b.op("residual", OpKind::Add, {x, attention});
  const std::string ln2 = layer_norm("ln2", residual);
  const std::string fc1 = project("fc1", ln2, kModel, kHidden);
  const std::string biased =
      b.op("fc1.bias", OpKind::Add, {fc1, b.random("fc1.b", {kHidden}, 0.0, 0.1)});
  const std::string gelu = b.op("gelu", OpKind::Gelu, {biased});
  const std::string fc2 = project("fc2", gelu, kHidden, kModel);
  b.op("y", OpKind::Add, {residual, fc2});
  EXPECT_TRUE(b.graph.set_outputs({"y"}).ok());
  const auto shapes = ir::infer_all_shapes(b.graph);
  EXPECT_TRUE(shapes.ok()) << shapes.reason();
  return std::move(b.graph);
}

// The block quantized with `bits`, run on the default input (seed 0): SQNR of the output
// against the fp32 executor. Calibration: the default (percentile, 4 synthetic samples), or
// with `no_clipping` min/max over those samples and the test input itself, so that no tensor
// is clipped and what remains is the integer arithmetic's error.
double block_sqnr(int bits, bool no_clipping, ir::Graph* quantized_out = nullptr) {
  const ir::Graph g = tiny_block();
  quant::QuantConfig config;
  config.bits = bits;
  auto samples = synthetic_samples(g, config);
  if (no_clipping) {
    config.method = quant::CalibrationMethod::minmax;
    config.wide_headroom = 1.0;  // T = max |x| at 16 bits too
    samples.push_back({{"x", default_input({1, kSeq, kModel}, 0)}});
  }
  auto model = quantize_model(g, config, samples);
  EXPECT_TRUE(model.ok()) << model.reason();
  if (!model.ok()) return 0.0;
  const std::map<std::string, TensorData> input = {{"x", default_input({1, kSeq, kModel}, 0)}};
  Executor fp32(g);
  auto reference = fp32.run(input);
  Executor integer(model.value().graph);
  auto test = integer.run(input);
  EXPECT_TRUE(reference.ok() && test.ok()) << (test.ok() ? reference.reason() : test.reason());
  if (!reference.ok() || !test.ok()) return 0.0;
  if (quantized_out) *quantized_out = model.value().graph;
  return sqnr_db(reference.value().at("y").to_f32(), test.value().at("y").to_f32());
}

TEST(TransformerBlockQuantization, EveryOpRunsInIntegersAtEightBits) {
  ir::Graph q("q");
  const double sqnr = block_sqnr(8, false, &q);
  const double unclipped = block_sqnr(8, true);
  std::printf("tiny transformer block, int8 SQNR vs fp32: %.2f dB (no clipping: %.2f dB)\n", sqnr,
              unclipped);
  // Measured 33.71 dB (33.42 without clipping: at 8 bits rounding, not clipping, dominates).
  // One int8 tensor of Gaussian-like values rounds at ~38-41 dB (x: 41.5, ln1: 39.3); the
  // block rounds 17 tensors, the later ones carrying the earlier errors (scores: 31.7, gelu:
  // 33.0), so low 30s is what per-tensor int8 gives. Floor 30 dB: above the goals
  // (20 dB for transformers, 25 for CNNs) with 3.7 dB of margin for this seeded case.
  EXPECT_GE(sqnr, 30.0);
  EXPECT_GE(unclipped, 30.0);
  // Nothing runs in float between the input's Quantize and the output's Dequantize.
  for (ir::OpId id = 0; id < q.num_ops(); ++id) {
    const ir::Op& op = q.op(id);
    if (op.kind == OpKind::Input || op.kind == OpKind::Quantize || op.kind == OpKind::Dequantize)
      continue;
    for (const auto& t : op.outputs)
      EXPECT_TRUE(ir::is_integer(q.tensor(t).dtype)) << op.name << " writes a float";
  }
  EXPECT_EQ(q.op(*q.find_op("scaled")).kind, OpKind::Mul);  // Div by 4 -> Mul by 0.25
  EXPECT_EQ(q.tensor("gelu.table").int_values.size(), 256u);
}

TEST(TransformerBlockQuantization, SixteenBitArithmeticKeepsSeventyDecibels) {
  const double sqnr = block_sqnr(16, false);
  const double unclipped = block_sqnr(16, true);
  std::printf("tiny transformer block, int16 SQNR vs fp32: %.2f dB (no clipping: %.2f dB)\n", sqnr,
              unclipped);
  // Without clipping the integer arithmetic alone gives 74.48 dB (measured; per tensor 73-90
  // dB: the 2-bit MatMul operand shift at K = 8 and 16, the 16-bit weights' headroom at K = 32
  // and the interpolated Gelu table cost the most). Floor 70 dB.
  EXPECT_GE(unclipped, 70.0);
  // With percentile thresholds at 16 bits (`wide_headroom: 0`, the default before session 27)
  // the test input exceeded two calibrated ranges by 1-3% (fc2: max 1.809 against 1.756;
  // attention: 2.615 against 2.594) and the block measured 48.09 dB. The default now takes
  // T = 2 max |x| for 16-bit classes (docs/quantization.md, "Width-aware thresholds"): nothing
  // clips, and every activation's rounding step is twice the no-clipping run's, so the
  // activation noise is at most 4x and the SQNR at least `unclipped - 20 log10 2` (6.02 dB;
  // 0.5 dB of slack for rounding not being exactly uniform). Measured 69.05 dB against 75.02.
  EXPECT_GE(sqnr, unclipped - 20.0 * std::log10(2.0) - 0.5);
  EXPECT_GE(sqnr, 50.0);  // the int16 goal
}

}  // namespace
}  // namespace tessel::cpu
