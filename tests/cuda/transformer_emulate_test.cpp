// Label `zoo`: the transformer zoo models (at 8 tokens, so each takes seconds, not minutes)
// through the host emulator of the GPU plan, every materialized tensor bit-exact with the
// golden executor. `tessel gpu --emulate --check-all --model M [--seq N]` runs the same check.
#include <gtest/gtest.h>

#include <string>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/flow.hpp"
#include "compiler/targets/cuda/lower.hpp"

namespace tessel::cuda {
namespace {

void expect_emulator_bit_exact(const std::string& model, std::int64_t sequence) {
  auto graph = quantized_model(model, 1, quant::QuantConfig{}, sequence);
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto plan = lower_to_gpu(graph.value());
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const auto inputs = default_inputs(plan.value());
  cpu::Executor golden(graph.value());
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto want = golden.run(inputs, options);
  ASSERT_TRUE(want.ok()) << want.reason();
  auto got = emulate(plan.value(), inputs, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  std::size_t compared = 0;
  for (const auto& [name, value] : got.value()) {
    ASSERT_TRUE(want.value().count(name)) << name;
    const auto a = value.to_i32(), b = want.value().at(name).to_i32();
    ASSERT_EQ(a.size(), b.size()) << name;
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(a[i], b[i]) << model << ": %" << name << " element " << i;
    ++compared;
  }
  EXPECT_GE(compared, 30u) << model;
}

TEST(CudaTransformerEmulator, BertBaseEveryTensorBitExact) {
  expect_emulator_bit_exact("bert_base", 8);
}
TEST(CudaTransformerEmulator, Gpt2EveryTensorBitExact) {
  expect_emulator_bit_exact("gpt2", 8);
}
TEST(CudaTransformerEmulator, LlamaBlockEveryTensorBitExact) {
  expect_emulator_bit_exact("llama_block", 8);
}
// One decode step against a 1024-token KV cache: 25 f32 inputs, each quantized on the GPU.
TEST(CudaTransformerEmulator, Gpt2DecodeEveryTensorBitExact) {
  expect_emulator_bit_exact("gpt2_decode", 0);
}

}  // namespace
}  // namespace tessel::cuda
