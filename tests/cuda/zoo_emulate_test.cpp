// Label `slow`: zoo models through the host emulator of the GPU plan (the kernels' own code),
// every materialized tensor bit-exact with the golden executor. The device versions are in
// gpu_test.cpp; `tessel gpu --emulate --check-all --model M` runs the same check by hand.
#include <gtest/gtest.h>

#include <string>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/flow.hpp"
#include "compiler/targets/cuda/lower.hpp"

namespace tessel::cuda {
namespace {

void expect_emulator_bit_exact(const std::string& model) {
  auto graph = quantized_model(model, 1, quant::QuantConfig{});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto plan = lower_to_gpu(graph.value());
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const cpu::TensorData input = cpu::default_input(plan.value().input_shape, 0);
  cpu::Executor golden(graph.value());
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto want = golden.run({{plan.value().input_tensor, input}}, options);
  ASSERT_TRUE(want.ok()) << want.reason();
  auto got = emulate(plan.value(), input, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  EXPECT_EQ(got.value().size(), plan.value().buffers.size() - 1);  // all but the f32 input
  for (const auto& [name, value] : got.value()) {
    ASSERT_TRUE(want.value().count(name)) << name;
    const auto a = value.to_i32(), b = want.value().at(name).to_i32();
    ASSERT_EQ(a.size(), b.size()) << name;
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(a[i], b[i]) << model << ": %" << name << " element " << i;
  }
}

TEST(CudaZooEmulator, Resnet18EveryTensorBitExact) {
  expect_emulator_bit_exact("resnet18");
}
TEST(CudaZooEmulator, GooglenetEveryTensorBitExact) {
  expect_emulator_bit_exact("googlenet");
}
TEST(CudaZooEmulator, Mobilenetv2EveryTensorBitExact) {
  expect_emulator_bit_exact("mobilenet_v2");
}

}  // namespace
}  // namespace tessel::cuda
