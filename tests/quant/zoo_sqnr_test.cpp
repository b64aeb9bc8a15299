// The issue-33 precision goal at 16 bits on the six zoo CNNs and the three zoo transformers
// (label `zoo`: whole models):
// int16 output SQNR against the fp32 executor >= 50 dB with the default config, default input
// (seed 0), 4 synthetic samples (docs/quantization-int16.md, "Bias correction"). The fp32
// executor is the oracle; the floor is the issue's, not a figure this code printed.
#include <gtest/gtest.h>

#include <iostream>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel {
namespace {

double int16_sqnr(const std::string& name, bool bias_correction) {
  auto built = zoo::build_model(name);
  EXPECT_TRUE(built.ok()) << built.reason();
  auto g = cpu::prepare_graph(built.value());
  EXPECT_TRUE(g.ok()) << g.reason();
  quant::QuantConfig config;
  config.bits = 16;
  config.bias_correction = bias_correction;
  auto q = cpu::quantize_model(g.value(), config, cpu::synthetic_samples(g.value(), config));
  EXPECT_TRUE(q.ok()) << q.reason();
  if (!q.ok()) return 0.0;
  const std::string input = g.value().op(g.value().inputs()[0]).outputs[0];
  const auto x = cpu::default_input(g.value().tensor(input).shape, 0);
  const std::string y = g.value().outputs()[0];
  std::vector<float> ref;
  {
    cpu::Executor fp32(g.value());
    auto out = fp32.run({{input, x}});
    EXPECT_TRUE(out.ok()) << out.reason();
    if (!out.ok()) return 0.0;
    ref = out.value().at(y).to_f32();
  }
  cpu::Executor int16(q.value().graph);
  auto got = int16.run({{input, x}});
  EXPECT_TRUE(got.ok()) << got.reason();
  if (!got.ok()) return 0.0;
  const double db = cpu::sqnr_db(ref, got.value().at(y).to_f32());
  std::cout << name << " int16 (bias_correction " << bias_correction << ") vs fp32: " << db
            << " dB\n";
  return db;
}

class ZooInt16 : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooInt16, MeetsFiftyDecibels) {
  EXPECT_GE(int16_sqnr(GetParam(), true), 50.0);
}

INSTANTIATE_TEST_SUITE_P(Cnn, ZooInt16,
                         ::testing::Values("resnet18", "resnet50", "vgg19", "googlenet",
                                           "inception_v3", "mobilenet_v2"));

// The transformers: all three meet it since P x V keeps its operand bits (docs/quantization.md,
// "MatMul of two activations": the probabilities' row sum bounds the accumulator; before, the dtype
// rule's shift of 4 bits held llama_block at 47.62 dB and gpt2 at 46.88).
INSTANTIATE_TEST_SUITE_P(Transformer, ZooInt16,
                         ::testing::Values("llama_block", "gpt2", "bert_base"));

// What held VGG-19 below the goal: without bias correction it stays under 50 dB (46.76).
TEST(ZooInt16, Vgg19NeedsBiasCorrection) {
  EXPECT_LT(int16_sqnr("vgg19", false), 50.0);
}

}  // namespace
}  // namespace tessel
