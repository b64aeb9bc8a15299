// The GPU figures (peaks, roofline, ncu CSV) and `tessel gpu` / `tessel compare` through the CLI
// registry: the plan without a device, the emulator, and the clear no-device error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/targets/cuda/device.hpp"
#include "compiler/targets/cuda/flow.hpp"
#include "support/cli.hpp"

namespace tessel::cuda {
namespace {

TEST(CudaFlow, RooflineIsTheSlowerOfComputeAndMemory) {
  // 1e9 MACs at 2000 TOPS: 1 us; 3.35e6 B at 3350 GB/s: 1 us; 6.7e6 B: 2 us.
  EXPECT_DOUBLE_EQ(roofline_ms(1'000'000'000, 0, 2000.0, 3350.0), 1e-3);
  EXPECT_DOUBLE_EQ(roofline_ms(0, 6'700'000, 2000.0, 3350.0), 2e-3);
  EXPECT_DOUBLE_EQ(roofline_ms(1'000'000'000, 6'700'000, 2000.0, 3350.0), 2e-3);
}

TEST(CudaFlow, PeakTableAndDeviceNames) {
  EXPECT_EQ(peaks_for_device("NVIDIA H100 80GB HBM3").name, "h100-sxm");
  EXPECT_EQ(peaks_for_device("NVIDIA H100 PCIe").name, "h100-pcie");
  EXPECT_EQ(peaks_for_device("NVIDIA H200").name, "h200");
  const GpuPeaks h100 = gpu_peaks("h100-sxm").value();
  EXPECT_DOUBLE_EQ(h100.int8_tensor_tops, 1979.0);
  EXPECT_NEAR(h100.dp4a_tops, 133.8, 0.1);  // 2 * 4 * 64 * 132 SMs * 1.98 GHz
  const auto bad = gpu_peaks("a100");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "unknown GPU 'a100' (known: h100-sxm, h100-pcie, h200)");
}

TEST(CudaFlow, NcuCsvSumsReadAndWriteBytesOverKernels) {
  const std::string csv =
      "==PROF== Connected to process 123\n"
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"123\",\"quantize_kernel\",\"dram__bytes_read.sum\",\"byte\",\"602,112\"\n"
      "\"0\",\"123\",\"quantize_kernel\",\"dram__bytes_write.sum\",\"byte\",\"150528\"\n"
      "\"1\",\"123\",\"conv_dp4a_kernel\",\"dram__bytes_read.sum\",\"byte\",\"1000\"\n"
      "\"1\",\"123\",\"conv_dp4a_kernel\",\"dram__bytes_write.sum\",\"byte\",\"24\"\n"
      "==PROF== Disconnected\n";
  const auto m = parse_ncu_csv(csv);
  ASSERT_TRUE(m.ok()) << m.reason();
  EXPECT_EQ(m.value().read, 603112);
  EXPECT_EQ(m.value().written, 150552);
  EXPECT_EQ(m.value().kernels, 2);
  const auto none = parse_ncu_csv("==ERROR== no kernels were profiled\n");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.reason(), "ncu CSV: no dram__bytes_read.sum / dram__bytes_write.sum rows");
}

TEST(CudaFlow, BatchFourQuantizesWithTheBatchOneScales) {
  auto one = quantized_model("tiny_residual", 1, {});
  auto four = quantized_model("tiny_residual", 4, {});
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(four.value().tensor("input").shape, (ir::Shape{4, 4, 8, 8}));
  for (const auto& [name, t] : one.value().tensors())
    if (t.quant) {
      EXPECT_EQ(four.value().tensor(name).quant, t.quant) << name;
    }
}

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

TEST(CudaCli, DryRunPrintsThePlanAndWritesJson) {
  const auto path = std::filesystem::temp_directory_path() / "tessel_cuda_dry.json";
  testing::internal::CaptureStdout();
  ASSERT_EQ(run({"gpu", "--model", "tiny_residual", "--dry-run", "--json", path.string()}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("GPU plan for tiny_residual: 3 kernels"), std::string::npos) << out;
  EXPECT_NE(out.find("latency            n/a: dry run"), std::string::npos) << out;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("kernels"), 3);
  EXPECT_EQ(j.at("macs"), 2 * 8 * 8 * 4 * 9 * 4);
  EXPECT_TRUE(j.at("latency_ms").is_null());
  std::filesystem::remove(path);
}

TEST(CudaCli, EmulateVerifiesThePlanOnTheHost) {
  testing::internal::CaptureStdout();
  ASSERT_EQ(run({"gpu", "--model", "tiny_inception", "--emulate", "--check-all"}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("verification       emulator bit-exact"), std::string::npos) << out;
}

TEST(CudaCli, WithoutADeviceGpuExitsOneWithTheReason) {
  if (device::info().ok()) GTEST_SKIP() << "a CUDA device is present";
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"gpu", "--model", "tiny_conv"}), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string why =
      device::built_with_cuda() ? "tessel gpu: no CUDA device" : "tessel gpu: built without CUDA";
  EXPECT_EQ(err.rfind(why, 0), 0u) << err;
}

TEST(CudaCli, CompareShowsAcceleratorAndAnalyticalGpuColumns) {
  testing::internal::CaptureStdout();
  ASSERT_EQ(run({"compare", "--model", "tiny_conv", "--hw", "edge-small", "--policy", "layerwise",
                 "--policy", "fusion"}),
            0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("accelerator edge-small"), std::string::npos) << out;
  EXPECT_NE(out.find("MACs                        6912                  6912"), std::string::npos)
      << out;
  if (!device::info().ok()) {
    EXPECT_NE(out.find("latency ms                  "), std::string::npos) << out;
    const std::string why =
        device::built_with_cuda() ? "n/a: no CUDA device" : "n/a: built without CUDA";
    EXPECT_NE(out.find(why), std::string::npos) << out;
    // Without a run, the GPU latency is the analytical roofline, and says so.
    EXPECT_NE(out.find(" (analytical: roofline; " + why + ")"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace tessel::cuda
