// The input shift of a 16-bit Conv/Gemm (docs/quantization.md, "Input shift on Conv/Gemm"):
// the choice, the realized integers and the golden executor, against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/executor.hpp"

namespace tessel::quant {
namespace {

constexpr int kTaps = 4096;

// One output of a 1x1 conv over 4096 channels, every weight 1: sum |w| = 4096, max |w| = 1.
ir::Graph ones_conv() {
  std::string values;
  for (int i = 0; i < kTaps; ++i) values += i ? ", 1" : "1";
  ir::Graph g = ir::parse_text(
      "graph t {\n  input %x : f32[1,4096,1,1]\n"
      "  const %w : f32[1,4096,1,1] = [" +
          values + "]\n  %y = Conv(%x, %w) {kernel=1x1} : f32[?]\n  output %y\n}",
      "t");
  EXPECT_TRUE(ir::infer_all_shapes(g).ok());
  return g;
}

WeightChannelStats ones_stats() {
  WeightChannelStats w;
  w.max_abs = {1.0};
  w.sum_abs = {double{kTaps}};
  w.sum_squares = {double{kTaps}};
  w.per_channel = kTaps;
  return w;
}

// s_x = 2^-15 (threshold 32767 / 32768 at 16 bits). With A_u = 2^(15-u) the headroom scale is
// s_w(u) = 2^(27-u) (1 + 2^-20) / (2^31 - 2 - 2^(26-u)) until 1/32767 takes over at u = 11:
// 1/15.5, 1/31.5, 1/63.5, 1/127.5, 1/255.5, 1/511.5, ... and
// N(u) = 4096 (4^u 2^-30 + m s_w(u)^2). For m = 2^-6 (rms 1/8):
// N = 0.2664, 0.06452, 0.01593, 0.004181, 0.001957, 0.004151 for u = 0..5: u = 4.
// For m = 2^-14 (rms 1/128): N = 1.044e-3, 2.672e-4, 1.230e-4, 2.595e-4: u = 2.
TEST(InputShift, ChoiceBalancesInputAndWeightRounding) {
  const double s_x = std::ldexp(1.0, -15);
  EXPECT_EQ(choose_input_shift(ones_stats(), {}, 16, 16, s_x, std::ldexp(1.0, -6)), 4);
  EXPECT_EQ(choose_input_shift(ones_stats(), {}, 16, 16, s_x, std::ldexp(1.0, -14)), 2);
  EXPECT_EQ(choose_input_shift(ones_stats(), {}, 16, 16, s_x, 0.0), 0);  // no statistics
  // int8: 128 * 4096 * 127 < 2^31, the headroom never binds, so the weights cannot gain: u = 0.
  EXPECT_EQ(choose_input_shift(ones_stats(), {}, 8, 8, std::ldexp(1.0, -7), 1.0), 0);
}

TEST(InputShift, HeadroomScaleIsTheClosedForm) {
  // u = 0: 2^27 (1 + 2^-20) / (2^31 - 2 - 2^26) = 0.0645162 (w_q 15 rather than 32767).
  EXPECT_NEAR(headroom_weight_scale(1.0, kTaps, 0.0, kTaps, 16, 16, 1.0),
              134217856.0 / 2080374782.0, 1e-12);
  // A 12-bit input (u = 4): 2^23 (1 + 2^-20) / (2^31 - 2 - 2^22).
  EXPECT_NEAR(headroom_weight_scale(1.0, kTaps, 0.0, kTaps, 16, 12, 1.0), 8388616.0 / 2143289342.0,
              1e-12);
}

ir::Graph realize_ones(int bits, const std::map<std::string, double>* mean_squares) {
  const ir::Graph g = ones_conv();
  QuantConfig config;
  config.bits = bits;
  const auto plan = plan_scales(g, config).value();
  const double t_x = bits == 16 ? 32767.0 / 32768.0 : 127.0 / 128.0;
  const auto t = class_thresholds(plan, {{"x", t_x}, {"y", 100.0}}, config).value();
  auto q = realize(g, plan, t, mean_squares);
  EXPECT_TRUE(q.ok()) << q.reason();
  return q.ok() ? std::move(q.value()) : ir::Graph{};
}

const ir::Op& conv_of(const ir::Graph& q) {
  return q.op(q.find_op("y").value());
}

TEST(InputShift, SixteenBitConvKeepsEightWeightBitsInsteadOfFour) {
  const std::map<std::string, double> m{{"x", std::ldexp(1.0, -6)}};
  const ir::Graph q = realize_ones(16, &m);
  EXPECT_EQ(conv_of(q).get_int("input_shift"), 4);
  // s_w(4) = 1 / 255.49976: w_q = 255; the bound 2^11 * 4096 * 255 = 2139095040 <= 2^31 - 1.
  EXPECT_EQ(q.tensor("w").int_values, std::vector<std::int32_t>(kTaps, 255));
  const float s_w = q.tensor("w").quant->scales[0];
  EXPECT_GE(s_w, 8388616.0 / 2143289342.0);
  // The accumulator's scale is that of the shifted input, s_x 2^4 = 2^-11, times s_w.
  EXPECT_EQ(q.tensor("y.acc").quant->scales[0], std::ldexp(s_w, -11));

  // Codes 24 on half the channels, -40 on the other half: rha(24 / 16) = 2 (1.5 away from 0),
  // rha(-40 / 16) = -3 (-2.5); acc = 2048 * 255 * (2 - 3) = -522240.
  std::vector<float> x(kTaps);
  for (int i = 0; i < kTaps; ++i) x[i] = std::ldexp(i < kTaps / 2 ? 24.0f : -40.0f, -15);
  cpu::Executor executor(q);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto out = executor.run({{"x", cpu::TensorData::from_f32({1, kTaps, 1, 1}, x)}}, options);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("x.q").to_i32()[0], 24);
  EXPECT_EQ(out.value().at("y.acc").to_i32(), std::vector<std::int32_t>{-522240});
}

TEST(InputShift, WithoutStatisticsOrAtEightBitsNothingShifts) {
  const ir::Graph q16 = realize_ones(16, nullptr);
  EXPECT_EQ(conv_of(q16).get_int("input_shift"), 0);
  EXPECT_EQ(q16.tensor("w").int_values, std::vector<std::int32_t>(kTaps, 15));  // 1 / 0.0645
  const std::map<std::string, double> m{{"x", 1.0}};
  const ir::Graph q8 = realize_ones(8, &m);
  EXPECT_EQ(conv_of(q8).get_int("input_shift"), 0);
  EXPECT_EQ(q8.tensor("w").int_values, std::vector<std::int32_t>(kTaps, 127));
}

TEST(InputShift, AShiftTheInputCannotTakeIsRefusedNamingTheOp) {
  const std::map<std::string, double> m{{"x", std::ldexp(1.0, -6)}};
  ir::Graph q = realize_ones(16, &m);
  q.attrs(q.find_op("y").value())["input_shift"] = std::int64_t{15};
  cpu::Executor executor(q);
  auto out = executor.run(
      {{"x", cpu::TensorData::from_f32({1, kTaps, 1, 1}, std::vector<float>(kTaps, 0.0f))}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.reason().find("%y (Conv): input_shift 15"), std::string::npos) << out.reason();
}

// The headroom rule with an input >= 0 (docs/quantization.md, "Accumulator headroom"): 4096
// weights alternating +1, -1 (sum |w| = 4096, sum w+ = sum |w-| = 2048) behind a Relu or not.
// `chain`: the ops from %x to %r, the conv's input ("" reads %x itself).
ir::Graph realize_alternating(const std::string& chain) {
  std::string values;
  for (int i = 0; i < kTaps; ++i) values += std::string(i ? ", " : "") + (i % 2 ? "-1" : "1");
  const std::string x = chain.empty() ? "%x" : "%r";
  ir::Graph g = ir::parse_text("graph t {\n  input %x : f32[1,4096,1,1]\n" + chain +
                                   "  const %w : f32[1,4096,1,1] = [" + values + "]\n  %y = Conv(" +
                                   x + ", %w) {kernel=1x1} : f32[?]\n  output %y\n}",
                               "t");
  EXPECT_TRUE(ir::infer_all_shapes(g).ok());
  QuantConfig config;
  config.bits = 16;
  const auto plan = plan_scales(g, config).value();
  const double t_x = 32767.0 / 32768.0;
  const auto t =
      class_thresholds(plan, {{"x", t_x}, {"p", t_x}, {"r", t_x}, {"y", 100.0}}, config).value();
  auto q = realize(g, plan, t, nullptr);  // no statistics: u = 0, the plain headroom rule
  EXPECT_TRUE(q.ok()) << q.reason();
  return q.ok() ? std::move(q.value()) : ir::Graph{};
}

TEST(InputShift, AnInputAtLeastZeroMeetsPositiveAndNegativeWeightsApart) {
  // Signed input: s_w = 2^15 4096 (1 + 2^-20) / (2^31 - 2 - 2^26) = 1 / 15.49998: w_q = +-15.
  const ir::Graph signed_q = realize_alternating("");
  EXPECT_EQ(signed_q.tensor("w").int_values[0], 15);
  EXPECT_EQ(signed_q.tensor("w").int_values[1], -15);
  // Behind a Relu the codes are 0..32767, so |acc| <= 2^15 max(sum w_q+, sum |w_q-|):
  // s_w = 2^15 2048 (1 + 2^-20) / (2^31 - 2 - 2^26) = 1 / 30.99997: w_q = +-31, one bit more.
  const ir::Graph q = realize_alternating("  %r = Relu(%x) : f32[?]\n");
  EXPECT_EQ(q.tensor("w").int_values[0], 31);
  EXPECT_EQ(q.tensor("w").int_values[1], -31);
  EXPECT_GE(q.tensor("w").quant->scales[0], 67108928.0 / 2080374782.0);
  // The worst input for it: 32767 on every +1 weight, 0 (the Relu of a negative) on the others:
  // acc = 32767 * 2048 * 31 = 2080311296 <= 2^31 - 1, and the executor's int32 check passes.
  std::vector<float> x(kTaps);
  for (int i = 0; i < kTaps; ++i) x[i] = i % 2 ? -1.0f : 32767.0f / 32768.0f;
  cpu::Executor executor(q);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto out = executor.run({{"x", cpu::TensorData::from_f32({1, kTaps, 1, 1}, x)}}, options);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("y.acc").to_i32(), std::vector<std::int32_t>{2080311296});
}

TEST(InputShift, ProbabilitiesTimesTheMostNegativeValuesFitWithoutAnOperandShift) {
  // P x V at 16 bits, K = 128, every threshold 1.27: operand_shift 0 (the dtype rule: 4). Equal
  // scores give e_j = 2^15, S = 2^22, R = 2^23, p_j = 2^23 (2^30 / 128), and the probability
  // code rha(2^23 * 2^-30 * 32767 / 1.27) = rha(201.56) = 202. Every value at -2 clamps to
  // -32768, so acc = -32768 * 128 * 202 = -847249408: in int32 with no operand rounded.
  const ir::Graph g = ir::parse_text(R"(graph pv {
  input %s : f32[1,1,128]
  input %v : f32[1,128,1]
  %p = Softmax(%s) {axis=2} : f32[?]
  %y = MatMul(%p, %v) : f32[?]
  output %y
})",
                                     "test");
  ir::Graph shaped = g;
  ASSERT_TRUE(ir::infer_all_shapes(shaped).ok());
  QuantConfig config;
  config.bits = 16;
  const auto plan = plan_scales(shaped, config).value();
  std::map<std::string, double> t;
  for (const auto& name : plan.observed) t[name] = 1.27;
  auto q = realize(shaped, plan, class_thresholds(plan, t, config).value());
  ASSERT_TRUE(q.ok()) << q.reason();
  EXPECT_EQ(q.value().op(*q.value().producer("y.acc")).get_int("operand_shift"), 0);
  cpu::Executor executor(q.value());
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto out =
      executor.run({{"s", cpu::TensorData::from_f32({1, 1, 128}, std::vector<float>(128))},
                    {"v", cpu::TensorData::from_f32({1, 128, 1}, std::vector<float>(128, -2.0f))}},
                   options);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("p").to_i32(), std::vector<std::int32_t>(128, 202));
  EXPECT_EQ(out.value().at("y.acc").to_i32(), std::vector<std::int32_t>{-847249408});
}

TEST(InputShift, TheSignIsFollowedThroughPoolsAndNotThroughArithmetic) {
  // Relu -> MaxPool keeps codes >= 0 (w_q = +-31); Relu -> Neg is negative: signed rule (+-15).
  const ir::Graph pooled =
      realize_alternating("  %p = Relu(%x) : f32[?]\n  %r = MaxPool(%p) {kernel=1x1} : f32[?]\n");
  EXPECT_EQ(pooled.tensor("w").int_values[0], 31);
  const ir::Graph negated =
      realize_alternating("  %p = Relu(%x) : f32[?]\n  %r = Neg(%p) : f32[?]\n");
  EXPECT_EQ(negated.tensor("w").int_values[0], 15);
}

TEST(InputShift, WeightStatsSplitPositiveAndNegativeSums) {
  WeightChannelStats w;
  w.sum_abs = {6.0};
  w.sum_positive = {2.0};
  w.sum_negative = {4.0};
  EXPECT_EQ(w.headroom_sums(false), std::vector<double>{6.0});
  EXPECT_EQ(w.headroom_sums(true), std::vector<double>{4.0});
  const ir::Tensor t = [] {
    ir::Tensor w3;
    w3.name = "w";
    w3.shape = {2, 3};
    w3.f32_values = {1.0f, -2.0f, 0.5f, -1.0f, -1.0f, 3.0f};
    return w3;
  }();
  const WeightChannelStats s = weight_channel_stats(t, 0);
  EXPECT_EQ(s.sum_positive, (std::vector<double>{1.5, 3.0}));
  EXPECT_EQ(s.sum_negative, (std::vector<double>{2.0, 2.0}));
}

}  // namespace
}  // namespace tessel::quant
