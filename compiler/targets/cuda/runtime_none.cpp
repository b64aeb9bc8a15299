// The device interface in builds without CUDA: every call reports "built without CUDA".
#include "compiler/targets/cuda/device.hpp"

namespace tessel::cuda::device {

namespace {
constexpr const char* kWhy =
    "built without CUDA (configure with nvcc available, e.g. /usr/local/cuda/bin/nvcc, and "
    "-DTESSEL_ENABLE_CUDA=ON)";
}

bool built_with_cuda() {
  return false;
}

Result<DeviceInfo> info() {
  return fail(kWhy);
}

Result<RawRun> run(const GpuPlan&, const std::vector<float>&, const RunOptions&) {
  return fail(kWhy);
}

}  // namespace tessel::cuda::device
