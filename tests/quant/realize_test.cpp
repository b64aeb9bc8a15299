// Annotate and realize on hand-built graphs: scale classes, widths, integer weights and errors.
#include "compiler/quant/realize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::quant {
namespace {

const char* kConvRelu = R"(graph t {
  input %x : f32[1,1,2,2]
  const %w : f32[1,1,1,1] = [2]
  const %b : f32[1] = [1]
  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[?]
  %y = Relu(%conv) : f32[?]
  output %y
})";

TEST(Annotate, ReluJoinsItsInputsClassAndThePreActivationIsLeftOut) {
  const auto g = test_support::parse_graph(kConvRelu);
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(plan.ok()) << plan.reason();
  EXPECT_EQ(plan.value().observed, (std::vector<std::string>{"x", "conv", "y"}));
  ASSERT_EQ(plan.value().classes.size(), 2u);
  EXPECT_EQ(plan.value().classes[1], (std::vector<std::string>{"conv", "y"}));
  EXPECT_EQ(plan.value().pre_activation, (std::set<std::string>{"conv"}));
  // conv (pre-activation, 9.0) is ignored: the class takes y's 2.54.
  const auto t = class_thresholds(plan.value(), {{"x", 1.27}, {"conv", 9.0}, {"y", 2.54}}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value()[1].threshold, 2.54);
  EXPECT_EQ(t.value()[1].from_tensor, "y");
}

TEST(Realize, ConvReluBecomesQuantizeConvRequantizeReluDequantize) {
  const auto g = test_support::parse_graph(kConvRelu);
  const auto plan = plan_scales(g, QuantConfig{}).value();
  const auto t = class_thresholds(plan, {{"x", 1.27}, {"conv", 9.0}, {"y", 2.54}}, {}).value();
  const auto q = realize(g, plan, t);
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Graph& qg = q.value();
  std::vector<std::string> ops;
  for (ir::OpId id = 0; id < qg.num_ops(); ++id)
    ops.push_back(qg.op(id).name + ":" + std::string(ir::to_string(qg.op(id).kind)));
  EXPECT_EQ(ops, (std::vector<std::string>{"x:Input", "x.quantize:Quantize", "conv:Conv",
                                           "conv.requantize:Requantize", "y:Relu",
                                           "y.dequantize:Dequantize"}));
  EXPECT_EQ(qg.tensor("x.q").dtype, ir::DType::i8);
  EXPECT_FLOAT_EQ(qg.tensor("x.q").quant->scales[0], 0.01f);
  EXPECT_FLOAT_EQ(qg.tensor("y.q").quant->scales[0], 0.02f);
  EXPECT_EQ(qg.tensor("conv").quant, qg.tensor("y.q").quant);  // one class, one scale
  // w = 2 -> s_w = 2/127, w_q = 127; bias 1 / (0.01 * 2/127) = 6350.
  EXPECT_EQ(qg.tensor("w").int_values, std::vector<std::int32_t>{127});
  EXPECT_EQ(qg.tensor("b").dtype, ir::DType::i32);
  EXPECT_EQ(qg.tensor("b").int_values, std::vector<std::int32_t>{6350});
  EXPECT_EQ(qg.tensor("conv.acc").dtype, ir::DType::i32);
  EXPECT_EQ(qg.outputs(), std::vector<std::string>{"y"});
  EXPECT_EQ(qg.tensor("y").dtype, ir::DType::f32);
  // Requantize from s_acc = 0.02/127 to 0.02: ratio 1/127 = 0.50394 * 2^-6 -> r = 37.
  const auto p = requantize_params(qg.tensor("conv.acc"), qg.tensor("conv"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].shift, 37);
  EXPECT_EQ(p[0].lo, -128);
  EXPECT_EQ(p[0].hi, 127);
  EXPECT_EQ(intops::requantize(12700, p[0]), 100);
}

const char* kFourTaps = R"(graph t {
  input %x : f32[1,4,1,1]
  const %w : f32[1,4,1,1] = [1, 1, 1, 1]
  %y = Conv(%x, %w) {kernel=1x1} : f32[?]
  output %y
})";

ir::Graph realize_four_taps(int bits) {
  const auto g = test_support::parse_graph(kFourTaps);
  QuantConfig config;
  config.bits = bits;
  const auto plan = plan_scales(g, config).value();
  const auto t = class_thresholds(plan, {{"x", 1.0}, {"y", 4.0}}, config).value();
  auto q = realize(g, plan, t);
  EXPECT_TRUE(q.ok()) << q.reason();
  return q.ok() ? std::move(q.value()) : ir::Graph{};
}

TEST(Realize, SixteenBitWeightsLeaveInt32HeadroomForEveryInput) {
  // int16 x int16 over 4 taps: at s_w = 1/32767 (w_q = 32767) the input -32768 on every tap
  // gives 4 * 32768 * 32767 > 2^31 - 1. The rule widens s_w to
  // 32768 * 4 * (1 + 2^-20) / (2^31 - 2 - 32768 * 4 / 2) = 6.1037e-5, so w_q = 16383 and the
  // worst case is 32768 * 4 * 16383 = 2147352576 <= 2^31 - 1.
  const ir::Graph q = realize_four_taps(16);
  EXPECT_EQ(q.tensor("w").dtype, ir::DType::i16);
  EXPECT_EQ(q.tensor("w").int_values, (std::vector<std::int32_t>{16383, 16383, 16383, 16383}));
  const double s_w = q.tensor("w").quant->scales[0];
  EXPECT_GE(s_w, 131072.0 / 2147418110.0);
  EXPECT_LT(s_w, 131072.0 * (1.0 + 2e-6) / 2147418110.0);
}

TEST(Realize, EightBitWeightsKeepTheirFullRange) {
  // 4 * 128 * 127 is far inside int32: the scale stays max|w| / 127.
  const ir::Graph q = realize_four_taps(8);
  EXPECT_EQ(q.tensor("w").int_values, (std::vector<std::int32_t>{127, 127, 127, 127}));
  EXPECT_FLOAT_EQ(q.tensor("w").quant->scales[0], 1.0f / 127.0f);
}

TEST(Annotate, ConcatInputsShareTheConcatScale) {
  const auto g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,1,2,2]
  const %w1 : f32[1,1,1,1] = [1]
  const %w2 : f32[1,1,1,1] = [-1]
  %a = Conv(%x, %w1) {kernel=1x1} : f32[?]
  %b = Conv(%x, %w2) {kernel=1x1} : f32[?]
  %p = MaxPool(%b) {kernel=1x1} : f32[?]
  %c = Concat(%a, %p) {axis=1} : f32[?]
  output %c
})");
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const auto& classes = plan.value().classes;
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[1], (std::vector<std::string>{"a", "b", "p", "c"}));
  const auto t =
      class_thresholds(plan.value(), {{"x", 1}, {"a", 3}, {"b", 5}, {"p", 4}, {"c", 5}}, {});
  EXPECT_EQ(t.value()[1].threshold, 5.0);
}

// A class token: Concat(constant, activation). The constant is a value of the concat's class:
// it widens the class threshold to its max |c| and is quantized at the class scale.
std::string class_token_graph(const std::string& token) {
  return R"(graph v {
  input %x : f32[1,2,2]
  const %cls : f32[1,1,2] = [)" +
         token + R"(]
  %c = Concat(%cls, %x) {axis=1} : f32[?]
  %y = Relu(%c) : f32[?]
  output %y
})";
}

TEST(Annotate, AConcatConstantIsQuantizedAtTheClassScale) {
  // max |cls| = 2.54 > the activations' 1.27: threshold 2.54, scale 0.02, cls = [25, -127].
  const auto g = test_support::parse_graph(class_token_graph("0.5, -2.54"));
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(plan.ok()) << plan.reason();
  ASSERT_EQ(plan.value().classes.size(), 1u);
  EXPECT_EQ(plan.value().classes[0], (std::vector<std::string>{"x", "c", "y"}));
  const std::map<std::string, double> calibrated{{"x", 1.27}, {"c", 1.27}, {"y", 1.27}};
  const auto t = class_thresholds(plan.value(), calibrated, {}).value();
  EXPECT_EQ(t[0].threshold, static_cast<double>(2.54f));  // the constant's own float
  EXPECT_EQ(t[0].from_tensor, "cls");
  const auto q = realize(g, plan.value(), t);
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Op& concat = q.value().op(*q.value().find_op("c"));
  const ir::Tensor& cls = q.value().tensor(concat.inputs[0]);
  EXPECT_TRUE(cls.constant);
  EXPECT_EQ(cls.dtype, ir::DType::i8);
  EXPECT_EQ(cls.int_values, (std::vector<std::int32_t>{25, -127}));
  EXPECT_FLOAT_EQ(cls.quant->scales[0], 0.02f);
  EXPECT_EQ(concat.inputs[1], "x.q");
  EXPECT_FLOAT_EQ(q.value().tensor("x.q").quant->scales[0], 0.02f);

  // A smaller constant leaves the calibrated threshold: scale 0.01, cls = [50, -25].
  const auto g2 = test_support::parse_graph(class_token_graph("0.5, -0.25"));
  const auto plan2 = plan_scales(g2, QuantConfig{}).value();
  const auto t2 = class_thresholds(plan2, calibrated, {}).value();
  EXPECT_DOUBLE_EQ(t2[0].threshold, 1.27);
  const auto q2 = realize(g2, plan2, t2).value();
  EXPECT_EQ(q2.tensor(q2.op(*q2.find_op("c")).inputs[0]).int_values,
            (std::vector<std::int32_t>{50, -25}));
}

TEST(Annotate, AConcatConstantMustBeFinite) {
  auto g = test_support::parse_graph(class_token_graph("0.5, 1"));
  g.tensor_mut("cls").f32_values[1] = std::numeric_limits<float>::infinity();
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.reason(),
            "%c (Concat): constant %cls: Inf at element 1 (weights must be finite to quantize)");
}

TEST(Annotate, LayerOverrideWidensTheInputClassAndTheWeights) {
  QuantConfig config;
  config.layers["conv"] = {16, {"q.yaml", 3, 3}};
  const auto plan = plan_scales(test_support::parse_graph(kConvRelu), config);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan.value().class_bits, (std::vector<int>{16, 8}));
  EXPECT_EQ(plan.value().op_bits.at("conv"), 16);
}

TEST(Annotate, OverrideNamingNoOpIsLocatedInTheConfig) {
  QuantConfig config;
  config.layers["cov"] = {16, {"q.yaml", 3, 3}};
  const auto plan = plan_scales(test_support::parse_graph(kConvRelu), config);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.reason(),
            "q.yaml:3:3: error: layers.cov: no op named 'cov' in model 't'; did you mean "
            "'conv'?");
  config.layers.clear();
  config.layers["y"] = {16, {"q.yaml", 4, 3}};
  EXPECT_EQ(plan_scales(test_support::parse_graph(kConvRelu), config).reason(),
            "q.yaml:4:3: error: layers.y: op 'y' is a Relu; bits can be set only on Conv and "
            "Gemm ops");
}

TEST(Annotate, NanWeightIsNamed) {
  auto g = test_support::parse_graph(kConvRelu);
  g.tensor_mut("w").f32_values[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(plan_scales(g, {}).reason(),
            "constant %w: NaN at element 0 (weights must be finite to quantize)");
  g.tensor_mut("w").f32_values[0] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(plan_scales(g, {}).reason(),
            "constant %w: Inf at element 0 (weights must be finite to quantize)");
}

TEST(Annotate, UnfoldedBatchNormIsRejected) {
  const auto g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,1,2,2]
  const %s : f32[1] = [1]
  const %z : f32[1] = [0]
  %y = BatchNormalization(%x, %s, %z, %z, %s) : f32[?]
  output %y
})");
  EXPECT_EQ(plan_scales(g, {}).reason(),
            "%y (BatchNormalization): cannot be quantized; run fold-batchnorm first (only a "
            "BatchNormalization directly after a Conv folds)");
}

TEST(Annotate, AveragePoolExcludingPaddingIsRejected) {
  const auto g = test_support::parse_graph(R"(graph t {
  input %x : f32[1,1,4,4]
  %y = AveragePool(%x) {kernel=3x3, pad=1,1,1,1} : f32[?]
  output %y
})");
  EXPECT_EQ(plan_scales(g, {}).reason(),
            "%y (AveragePool): count_include_pad=0 with padding is not supported by the integer "
            "contract (the divisor would vary by position)");
}

TEST(ClassThresholds, AllZeroRangeIsAnErrorUnlessAllowed) {
  const auto g = test_support::parse_graph(kConvRelu);
  const auto plan = plan_scales(g, {}).value();
  const std::map<std::string, double> t = {{"x", 1.0}, {"conv", 0.0}, {"y", 0.0}};
  const auto bad = class_thresholds(plan, t, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(),
            "activation %conv, %y is zero on every calibration sample, so its scale is undefined "
            "(set allow_zero_range: true in the quantization config to use scale 1/qmax)");
  QuantConfig allow;
  allow.allow_zero_range = true;
  EXPECT_EQ(class_thresholds(plan, t, allow).value()[1].threshold, 1.0);
}

}  // namespace
}  // namespace tessel::quant

namespace tessel::quant {
namespace {

// quantize_values takes 8 values at a time on an AVX-512 CPU, 4 with AVX2 and not AVX-512
// (ctest's quant_tests_avx2 takes that path on any AVX2 CPU): each lane must give what the
// scalar intops::quantize_value gives, ties and clamps included, on the vector part and the tail.
TEST(QuantizeValues, RoundsHalvesAwayFromZeroClampsAndZeroesNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // scale 0.5: q = 2x. Lanes 0-7 take the vector path, 8-10 the scalar tail.
  const std::vector<float> x = {0.25f, -0.25f, 0.74f,   0.75f, 100.0f, -100.0f,
                                nan,   -0.0f,  0.2499f, 1.25f, -63.75f};
  std::vector<std::int32_t> q(x.size());
  const std::int64_t l1 = quantize_values(x, 0.5f, 8, q);
  EXPECT_EQ(q, (std::vector<std::int32_t>{1, -1, 1, 2, 127, -128, 0, 0, 0, 3, -128}));
  EXPECT_EQ(l1, 1 + 1 + 1 + 2 + 127 + 128 + 0 + 0 + 0 + 3 + 128);
}

TEST(QuantizeValues, EqualsTheScalarContractOnEveryLane) {
  // Random magnitudes over 12 decades, exact ties (k + 1/2) * scale, both widths, lengths that
  // leave every tail size.
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (const int bits : {8, 16})
    for (const float scale : {0.0173f, 1.0f, 3.0e-5f}) {
      std::vector<float> x;
      for (int i = 0; i < 4099; ++i) {
        const std::uint64_t r = next();
        const double magnitude = std::ldexp(static_cast<double>(r % 1000003) / 1000003.0,
                                            static_cast<int>((r >> 20) % 40) - 20);
        const double tie = (static_cast<double>((r >> 32) % 300) + 0.5) * scale;
        const double v = (r >> 62) & 1 ? tie : magnitude * scale * 64.0;
        x.push_back(static_cast<float>((r >> 63) ? -v : v));
      }
      for (const std::size_t length : {x.size(), x.size() - 1, std::size_t{7}, std::size_t{15}}) {
        const std::span<const float> part(x.data(), length);
        std::vector<std::int32_t> got(length);
        const std::int64_t l1 = quantize_values(part, scale, bits, got);
        std::int64_t want_l1 = 0;
        for (std::size_t i = 0; i < length; ++i) {
          const std::int32_t want = intops::quantize_value(part[i], scale, bits);
          ASSERT_EQ(got[i], want) << "x " << part[i] << " scale " << scale << " bits " << bits;
          want_l1 += std::abs(want);
        }
        EXPECT_EQ(l1, want_l1);
      }
    }
}

}  // namespace
}  // namespace tessel::quant
