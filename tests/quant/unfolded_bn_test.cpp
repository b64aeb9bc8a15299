// BatchNorm unfolded into depthwise 1x1 convs (layerwise's graph): fp32 semantics kept, integer
// contract of the BatchNorm/Scale layers, and the int8 SQNR beside the folded graph's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"
#include "support/int_ops.hpp"

namespace tessel {
namespace {

ir::Graph model(const std::string& name) {
  auto g = zoo::build_model(name);
  EXPECT_TRUE(g.ok()) << g.reason();
  return std::move(g.value());
}

ir::Graph for_policy(const ir::Graph& g, std::string_view policy) {
  auto p = passes::graph_for_policy(g, policy);
  EXPECT_TRUE(p.ok()) << p.reason();
  return std::move(p.value());
}

std::map<std::string, cpu::TensorData> default_inputs(const ir::Graph& g, std::uint64_t seed) {
  std::map<std::string, cpu::TensorData> inputs;
  for (ir::OpId id : g.inputs()) {
    const std::string& name = g.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(g.tensor(name).shape, seed));
  }
  return inputs;
}

/// The graph's single output on the default input (seed 0), as floats.
std::vector<float> run_output(const ir::Graph& g) {
  cpu::Executor executor(g);
  auto out = executor.run(default_inputs(g, 0));
  EXPECT_TRUE(out.ok()) << out.reason();
  if (!out.ok()) return {};
  EXPECT_EQ(out.value().size(), 1u);
  return out.value().begin()->second.to_f32();
}

/// max |a - b| / max |a|.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(double{a[i]} - b[i]));
    scale = std::max(scale, std::fabs(double{a[i]}));
  }
  return diff / scale;
}

cpu::QuantizedModel quantize(const ir::Graph& g, int bits) {
  quant::QuantConfig config;
  config.bits = bits;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  EXPECT_TRUE(q.ok()) << q.reason();
  return std::move(q.value());
}

TEST(UnfoldedBatchnorm, Fp32OutputOfTinyNetsEqualsTheOriginalGraphs) {
  // BN (x - m) / sqrt(v + e) * g + b as (x * inv_std - m * inv_std) * g + b: float rounding only.
  for (const char* name : {"tiny_residual", "tiny_depthwise"}) {
    const ir::Graph original = model(name);
    const ir::Graph unfolded = for_policy(original, "layerwise");
    EXPECT_LE(relative_difference(run_output(original), run_output(unfolded)), 1e-6) << name;
  }
}

TEST(UnfoldedBatchnorm, EveryBatchnormLayerIsADepthwiseConvWithFullRangeWeights) {
  // A depthwise 1x1 conv holds one weight per channel, so the per-channel symmetric scale
  // max|w_c| / qmax maps it to exactly +-qmax (int8: 127; int16: 32767, no headroom widening
  // is needed for K = 1: 32768 * 32767 + |b_q| <= 2^31 - 1 while |b_q| <= 2^30).
  const ir::Graph unfolded = for_policy(model("tiny_residual"), "layerwise");
  for (const int bits : {8, 16}) {
    const auto q = quantize(unfolded, bits);
    const std::int32_t qmax = bits == 8 ? 127 : 32767;
    int layers = 0;
    for (const char* name : {"bn1.norm", "bn1", "bn2.norm", "bn2"}) {
      const auto id = q.graph.find_op(name);
      ASSERT_TRUE(id.has_value()) << name;
      const ir::Op& op = q.graph.op(*id);
      ASSERT_EQ(op.kind, ir::OpKind::Conv) << name;
      EXPECT_EQ(op.get_int("group"), 4) << name;
      const ir::Tensor& w = q.graph.tensor(op.inputs[1]);
      ASSERT_EQ(w.int_values.size(), 4u) << name;
      for (std::int32_t v : w.int_values) EXPECT_EQ(std::abs(v), qmax) << name;
      ++layers;
    }
    EXPECT_EQ(layers, 4);
  }
}

TEST(UnfoldedBatchnorm, BatchnormLayerComputesTheIntegerContract) {
  // bn1.norm on the golden executor equals, element by element, the contract written out:
  //   acc = x_q * w_q[c] + b_q[c];  y = requantize(acc, requantize_params(acc, y)[c])
  // with b_q[c] = round(b[c] / (s_x * s_w[c])), s_w[c] = |w[c]| / 127.
  const ir::Graph unfolded = for_policy(model("tiny_residual"), "layerwise");
  const auto q = quantize(unfolded, 8);
  const ir::Graph& g = q.graph;
  const ir::Op& norm = g.op(*g.find_op("bn1.norm"));
  const ir::Tensor& x = g.tensor(norm.inputs[0]);
  const ir::Tensor& w = g.tensor(norm.inputs[1]);
  const ir::Tensor& b = g.tensor(norm.inputs[2]);
  const ir::Tensor& acc = g.tensor(norm.outputs[0]);
  const ir::Tensor& y = g.tensor("bn1.norm");
  const ir::Tensor& w_float = unfolded.tensor("bn1.norm_weight");
  const ir::Tensor& b_float = unfolded.tensor("bn1.norm_bias");
  ASSERT_EQ(x.name, "conv1");  // the pre-BN tensor, calibrated and quantized on its own
  for (std::size_t c = 0; c < 4; ++c) {
    const double s_w = std::fabs(double{w_float.f32_values[c]}) / 127.0;
    EXPECT_FLOAT_EQ(w.quant->scales[c], static_cast<float>(s_w));
    EXPECT_FLOAT_EQ(acc.quant->scales[c], x.quant->scales[0] * w.quant->scales[c]);
    EXPECT_EQ(b.int_values[c], static_cast<std::int32_t>(std::round(double{b_float.f32_values[c]} /
                                                                    double{acc.quant->scales[c]})));
  }
  cpu::Executor executor(g);
  cpu::RunOptions keep;
  keep.keep_intermediates = true;
  auto run = executor.run(default_inputs(g, 0), keep);
  ASSERT_TRUE(run.ok()) << run.reason();
  const auto x_q = run.value().at("conv1").to_i32();
  const auto y_q = run.value().at("bn1.norm").to_i32();
  const auto params = quant::requantize_params(acc, y);
  ASSERT_EQ(x_q.size(), y_q.size());
  const std::size_t plane = x_q.size() / 4;
  int changed = 0;
  for (std::size_t i = 0; i < x_q.size(); ++i) {
    const std::size_t c = i / plane;
    const std::int32_t expect =
        intops::requantize(x_q[i] * w.int_values[c] + b.int_values[c], params[c]);
    ASSERT_EQ(y_q[i], expect) << "element " << i;
    changed += y_q[i] != x_q[i];
  }
  EXPECT_GT(changed, 0);  // the layer is not an identity on these statistics
}

}  // namespace
}  // namespace tessel
