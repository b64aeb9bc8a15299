// GpuPlan totals, launch geometry and the human-readable plan table.
#include "compiler/targets/cuda/plan.hpp"

#include <iomanip>
#include <sstream>

namespace tessel::cuda {

std::int64_t Buffer::bytes() const {
  return n * h * w * c_stride * elem_bytes(type);
}

const char* to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::QuantizeInput:
      return "quantize";
    case KernelKind::ConvDp4a:
      return "conv_dp4a";
    case KernelKind::ConvDirect:
      return "conv_direct";
    case KernelKind::Pool:
      return "pool";
    case KernelKind::Eltwise:
      return "eltwise";
    case KernelKind::Copy:
      return "copy";
    case KernelKind::Workload:
      return "workload";
  }
  return "?";
}

const char* step_kind_name(const Step& step) {
  if (step.kind != KernelKind::Workload) return to_string(step.kind);
  switch (step.work.op) {
    case kMove:
      return "move";
    case kReshape:
      return "reshape";
    case kAdd:
    case kSub:
    case kMul:
    case kWhere:
      return "binary";
    case kTable:
      return "table";
    case kMatMul:
      return "matmul";
    case kSoftmax:
      return "softmax";
    case kNorm:
      return "norm";
    case kResize:
      return "resize";
    default:
      return "reduce";
  }
}

std::int64_t Launch::threads() const {
  return grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
}

std::int64_t GpuPlan::macs() const {
  std::int64_t total = 0;
  for (const auto& s : steps) total += s.macs;
  return total;
}

KernelBytes GpuPlan::bytes() const {
  KernelBytes total;
  for (const auto& s : steps) {
    total.activations_read += s.bytes.activations_read;
    total.weights_read += s.bytes.weights_read;
    total.activations_written += s.bytes.activations_written;
  }
  return total;
}

std::int64_t GpuPlan::weight_bytes() const {
  std::int64_t total = 0;
  for (const auto& s : steps) total += s.bytes.weights_read;
  return total;
}

std::int64_t GpuPlan::buffer_bytes() const {
  std::int64_t total = 0;
  for (const auto& b : buffers) total += b.bytes();
  return total;
}

Launch dp4a_launch(std::int64_t output_pixels, std::int64_t out_channels) {
  Launch l;
  l.grid = {(output_pixels + kDp4aM - 1) / kDp4aM, (out_channels + kDp4aN - 1) / kDp4aN, 1};
  l.block = {kDp4aBlock, 1, 1};
  l.shared_bytes = static_cast<std::int64_t>(sizeof(Dp4aTiles));  // the kernel's static tiles
  return l;
}

Launch elementwise_launch(std::int64_t elements) {
  Launch l;
  l.grid = {(elements + kElementwiseThreads - 1) / kElementwiseThreads, 1, 1};
  l.block = {kElementwiseThreads, 1, 1};
  return l;
}

namespace {
std::string dims(const PlanView& v) {
  std::ostringstream o;
  o << v.n << "x" << v.h << "x" << v.w << "x" << v.c;
  if (v.channel_offset) o << "@" << v.channel_offset;
  return o.str();
}
}  // namespace

std::string describe(const GpuPlan& plan) {
  std::ostringstream o;
  o << "GPU plan for " << plan.model << ": " << plan.steps.size() << " kernels, "
    << plan.buffers.size() << " buffers (" << plan.buffer_bytes() << " B)\n";
  o << std::left << std::setw(4) << "#" << std::setw(12) << "kernel" << std::setw(34) << "ops"
    << std::setw(20) << "in (NHWC)" << std::setw(20) << "out (NHWC)" << std::setw(18)
    << "grid x block" << std::right << std::setw(8) << "smem" << std::setw(14) << "MACs"
    << std::setw(12) << "DRAM B" << '\n';
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    std::string ops;
    for (const auto& op : s.ops) ops += (ops.empty() ? "" : "+") + op;
    if (ops.size() > 32) ops = ops.substr(0, 29) + "...";
    std::ostringstream grid;
    grid << s.launch.grid[0];
    if (s.launch.grid[1] > 1) grid << "," << s.launch.grid[1];
    grid << " x " << s.launch.block[0];
    o << std::left << std::setw(4) << i << std::setw(12) << step_kind_name(s) << std::setw(34)
      << ops << std::setw(20) << dims(s.x) << std::setw(20) << dims(s.y) << std::setw(18)
      << grid.str() << std::right << std::setw(8) << s.launch.shared_bytes << std::setw(14)
      << s.macs << std::setw(12) << s.bytes.total() << '\n';
  }
  const KernelBytes b = plan.bytes();
  o << "total: " << plan.macs() << " MACs, DRAM bytes (analytical) " << b.total()
    << " = activations read " << b.activations_read << " + weights/tables read " << b.weights_read
    << " + activations written " << b.activations_written << '\n';
  return o.str();
}

}  // namespace tessel::cuda
