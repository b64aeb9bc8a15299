// Bias correction (docs/quantization.md, "Bias correction"): the int32 bias of a Conv/Gemm
// absorbs E[x] . (s_w w_q - w), against hand-computed integers.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/realize.hpp"

namespace tessel::quant {
namespace {

// int8, s_x = 1/128 (threshold 127/128), bias 0.5. `weights` per output channel of one output.
ir::Graph realize_conv(const std::string& shape, const std::string& weights,
                       const std::string& attrs, const std::map<std::string, ChannelMoments>* m,
                       int bits = 8, const std::string& bias = "0.5") {
  ir::Graph g =
      ir::parse_text("graph t {\n  input %x : f32[" + shape + "]\n  const %w : f32[" + weights +
                         "\n  const %b : f32[1] = [" + bias + "]\n  %y = Conv(%x, %w, %b) {" +
                         attrs + "} : f32[?]\n  output %y\n}",
                     "t");
  EXPECT_TRUE(ir::infer_all_shapes(g).ok());
  QuantConfig config;
  config.bits = bits;
  const auto plan = plan_scales(g, config).value();
  const double t_x = bits == 16 ? 32767.0 / 32768.0 : 127.0 / 128.0;
  const auto t = class_thresholds(plan, {{"x", t_x}, {"y", 100.0}}, config).value();
  auto q = realize(g, plan, t, nullptr, m);
  EXPECT_TRUE(q.ok()) << q.reason();
  return q.ok() ? std::move(q.value()) : ir::Graph{};
}

ChannelMoments channel_moments(std::vector<double> mean, std::vector<double> mean_square,
                               double count) {
  ChannelMoments m;
  m.channel = {std::move(mean), std::move(mean_square), count};
  return m;
}

// w = [1, 0.3]: s_w = 1/127, w_q = [127, round(38.1) = 38], errors [0, -0.1/127]. With
// E[x] = [0.5, 0.25]: shift = -0.025/127; the accumulator's scale is 1/(128 * 127), so
// b_q = round((0.5 + 0.025/127) * 16256) = round(8128 + 3.2) = 8131 (uncorrected: 8128).
TEST(BiasCorrection, TheBiasTakesTheMeanErrorOfTheRoundedWeights) {
  const std::string w = "1,2,1,1] = [1, 0.3]";
  EXPECT_EQ(realize_conv("1,2,1,1", w, "kernel=1x1", nullptr).tensor("b").int_values,
            std::vector<std::int32_t>{8128});
  const std::map<std::string, ChannelMoments> m{
      {"x", channel_moments({0.5, 0.25}, {0.5, 0.25}, 1000.0)}};
  const ir::Graph q = realize_conv("1,2,1,1", w, "kernel=1x1", &m);
  EXPECT_EQ(q.tensor("w").int_values, (std::vector<std::int32_t>{127, 38}));
  EXPECT_EQ(q.tensor("b").int_values, std::vector<std::int32_t>{8131});
}

// A mean the calibration cannot tell from noise is left alone: mean^2 = 0.0001 against
// 2 var / count = 2 * 0.9999 / 4.
TEST(BiasCorrection, AMeanBelowItsEstimateNoiseIsNotCorrected) {
  const std::map<std::string, ChannelMoments> m{
      {"x", channel_moments({0.01, 0.01}, {1.0, 1.0}, 4.0)}};
  EXPECT_EQ(realize_conv("1,2,1,1", "1,2,1,1] = [1, 0.3]", "kernel=1x1", &m).tensor("b").int_values,
            std::vector<std::int32_t>{8128});
}

// 3x3, pad 1, on a 2x2 input: tap rows/columns 0 and 2 read inside the input at one of the two
// output positions (share 1/2), tap 1 at both. Only the corner tap (0, 0) has an error
// (-0.1/127, the other weights are 1 = 127/127): shift = -0.1/127 * E[x] 0.5 * 1/2 * 1/2, and
// b_q = round(8128 + 0.0125 * 128) = round(8129.6) = 8130.
TEST(BiasCorrection, ZeroPaddingCountsOnlyTheTapsInsideTheInput) {
  const std::string w = "1,1,3,3] = [0.3, 1, 1, 1, 1, 1, 1, 1, 1]";
  const std::map<std::string, ChannelMoments> m{{"x", channel_moments({0.5}, {0.5}, 1000.0)}};
  const ir::Graph q = realize_conv("1,1,2,2", w, "kernel=3x3, pad=1,1,1,1", &m);
  EXPECT_EQ(q.tensor("w").int_values[0], 38);
  EXPECT_EQ(q.tensor("b").int_values, std::vector<std::int32_t>{8130});
}

// 16 bits, 4096 weights of 1 behind no Relu: the headroom rule leaves w_q = 15 (s_w = 0.0645162)
// and room 2^31 - 1 - 2^15 * 4096 * 15 = 134217727 for the bias. A (hand-made) mean of 4 per
// channel asks for a correction of 4096 * (1 - 15 s_w) * 4 / (2^-15 s_w) ~ 2.7e8 codes: the bias
// stops at the room, and the accumulator bound still holds (realize checks it).
TEST(BiasCorrection, TheCorrectedBiasKeepsTheAccumulatorBound) {
  std::string values;
  for (int i = 0; i < 4096; ++i) values += i ? ", 1" : "1";
  const std::map<std::string, ChannelMoments> m{
      {"x",
       channel_moments(std::vector<double>(4096, 4.0), std::vector<double>(4096, 16.0), 1000.0)}};
  const ir::Graph q =
      realize_conv("1,4096,1,1", "1,4096,1,1] = [" + values + "]", "kernel=1x1", &m, 16, "0");
  EXPECT_EQ(q.tensor("w").int_values[0], 15);
  EXPECT_EQ(q.tensor("b").int_values, std::vector<std::int32_t>{134217727});
}

}  // namespace
}  // namespace tessel::quant
