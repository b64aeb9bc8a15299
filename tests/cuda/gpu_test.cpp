// On a GPU (label `gpu`): every zoo model bit-exact with the golden executor; without a device
// (or without CUDA in the build) each test skips with the reason.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cuda/device.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/flow.hpp"
#include "compiler/targets/cuda/lower.hpp"

namespace tessel::cuda {
namespace {

/// Runs `model` on the device, reading back every buffer, and compares each with the golden
/// executor's tensor of the same name.
void expect_device_bit_exact(const std::string& model, std::int64_t batch,
                             std::int64_t sequence = 0) {
  if (auto d = device::info(); !d) GTEST_SKIP() << d.reason();
  auto graph = quantized_model(model, batch, quant::QuantConfig{}, sequence);
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto plan = lower_to_gpu(graph.value());
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const GpuPlan& p = plan.value();
  const auto inputs = default_inputs(p);
  device::RunOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 1;
  options.per_step = false;
  options.read_all = true;
  for (std::size_t k = 1; k < p.inputs.size(); ++k)
    options.more_inputs.push_back(input_values(inputs.at(p.inputs[k].tensor)));
  auto raw = device::run(p, input_values(inputs.at(p.input_tensor)), options);
  ASSERT_TRUE(raw.ok()) << raw.reason();

  std::map<std::string, std::vector<std::int32_t>> expected;
  cpu::RunOptions golden_options;
  golden_options.observer = [&](const std::string& name, const cpu::TensorData& v) -> Status {
    expected.emplace(name, v.to_i32());
    return {};
  };
  cpu::Executor golden(graph.value());
  auto ran = golden.run(inputs, golden_options);
  ASSERT_TRUE(ran.ok()) << ran.reason();

  int compared = 0;
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    if (b.is_f32_input || b.internal || !expected.count(b.tensor)) continue;
    const auto got =
        buffer_tensor(p, static_cast<int>(i), {b.n, b.c, b.h, b.w}, raw.value().buffers[i].data())
            .to_i32();
    const auto& want = expected.at(b.tensor);
    ASSERT_EQ(got.size(), want.size()) << b.tensor;
    for (std::size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(got[k], want[k]) << model << ": %" << b.tensor << " element " << k;
    ++compared;
  }
  EXPECT_GT(compared, 0);
  for (const auto& out : p.outputs) EXPECT_TRUE(expected.count(out.tensor)) << out.tensor;
}

TEST(CudaDevice, TinyNetsBitExact) {
  for (const char* m :
       {"tiny_conv", "tiny_residual", "tiny_inception", "tiny_mlp", "tiny_depthwise"}) {
    SCOPED_TRACE(m);
    expect_device_bit_exact(m, 2);
  }
}
TEST(CudaDevice, Resnet18BitExact) {
  expect_device_bit_exact("resnet18", 1);
}
TEST(CudaDevice, Resnet50BitExact) {
  expect_device_bit_exact("resnet50", 1);
}
TEST(CudaDevice, Vgg19BitExact) {
  expect_device_bit_exact("vgg19", 1);
}
TEST(CudaDevice, GooglenetBitExact) {
  expect_device_bit_exact("googlenet", 1);
}
TEST(CudaDevice, InceptionV3BitExact) {
  expect_device_bit_exact("inception_v3", 1);
}
TEST(CudaDevice, Mobilenetv2BitExact) {
  expect_device_bit_exact("mobilenet_v2", 1);
}
TEST(CudaDevice, Resnet50Batch4BitExact) {
  expect_device_bit_exact("resnet50", 4);
}
// The workload kernels (workload_ops.cuh) on the device.
TEST(CudaDevice, TransformersBitExact) {
  for (const char* m : {"bert_base", "gpt2", "llama_block"}) {
    SCOPED_TRACE(m);
    expect_device_bit_exact(m, 1, 128);
    expect_device_bit_exact(m, 2, 8);
  }
  expect_device_bit_exact("gpt2_decode", 1);  // 25 inputs: the token and the KV cache
}
TEST(CudaDevice, ModernCnnsBitExact) {
  for (const char* m : {"mobilenet_v3_large", "efficientnet_b0", "convnext_tiny"}) {
    SCOPED_TRACE(m);
    expect_device_bit_exact(m, 1);
  }
}

}  // namespace
}  // namespace tessel::cuda
