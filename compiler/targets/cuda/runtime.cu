// The CUDA kernels (thin wrappers over device_ops.cuh, plus the dp4a implicit GEMM) and the
// runtime that uploads a GpuPlan, runs it on one stream and times it with CUDA events.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/targets/cuda/device.hpp"
#include "compiler/targets/cuda/device_ops.cuh"
#include "compiler/targets/cuda/dp4a.cuh"
#include "compiler/targets/cuda/workload_ops.cuh"

namespace tessel::cuda {
namespace {

// ---- kernels ------------------------------------------------------------------------------

/// Thread index -> (n, y, x, c) of `v`, channels fastest (coalesced NHWC stores).
struct Coord {
  std::int64_t n, y, x, c;
};
__device__ __forceinline__ Coord coord(const TensorView& v, std::int64_t index) {
  Coord k;
  k.c = index % v.c;
  index /= v.c;
  k.x = index % v.w;
  index /= v.w;
  k.y = index % v.h;
  k.n = index / v.h;
  return k;
}

__device__ __forceinline__ std::int64_t thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__global__ void quantize_kernel(QuantizeArgs a, std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  const Coord k = coord(a.y, i);
  store_int(a.y.data, a.y.type, view_index(a.y, k.n, k.y, k.x, k.c),
            quantize_element(a, k.n, k.y, k.x, k.c));
}

__global__ void conv_direct_kernel(ConvArgs a, std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  const Coord k = coord(a.y, i);
  const std::int32_t v = apply_epilogue(a.epilogue, conv_sum(a, k.n, k.y, k.x, k.c), k.c,
                                        residual_at(a.residual, a.epilogue, k.n, k.y, k.x, k.c));
  store_int(a.y.data, a.y.type, view_index(a.y, k.n, k.y, k.x, k.c), v);
}

__global__ void pool_kernel(PoolArgs a, TensorView residual, std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  const Coord k = coord(a.y, i);
  std::int32_t v = pool_value(a, k.n, k.y, k.x, k.c);
  if (!a.is_max)
    v = apply_epilogue(a.epilogue, v, k.c, residual_at(residual, a.epilogue, k.n, k.y, k.x, k.c));
  store_int(a.y.data, a.y.type, view_index(a.y, k.n, k.y, k.x, k.c), v);
}

__global__ void eltwise_kernel(TensorView x, TensorView second, TensorView y, Epilogue e,
                               std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  const Coord k = coord(y, i);
  const std::int32_t v =
      apply_epilogue(e, load_int(x.data, x.type, view_index(x, k.n, k.y, k.x, k.c)), k.c,
                     residual_at(second, e, k.n, k.y, k.x, k.c));
  store_int(y.data, y.type, view_index(y, k.n, k.y, k.x, k.c), v);
}

__global__ void copy_kernel(TensorView x, TensorView y, std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  const Coord k = coord(y, i);
  store_int(y.data, y.type, view_index(y, k.n, k.y, k.x, k.c),
            load_int(x.data, x.type, view_index(x, k.n, k.y, k.x, k.c)));
}

/// A workload op (workload_ops.cuh): one thread per output element, or per row.
__global__ void workload_kernel(WorkArgs a, std::int64_t total) {
  const std::int64_t i = thread_index();
  if (i >= total) return;
  work_thread(a, i);
}

/// int8 implicit GEMM (dp4a.cuh): rows are output pixels (n, oh, ow), columns output
/// channels, K runs over (kh, kw, 4-channel word). One 64 x 64 output tile per block, K in
/// 8-word slices staged in shared memory, 256 threads with 4 x 4 int32 accumulators each.
__global__ void __launch_bounds__(kDp4aBlock) conv_dp4a_kernel(ConvArgs a) {
  __shared__ Dp4aTiles tiles;
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * kDp4aM;
  const std::int64_t o0 = static_cast<std::int64_t>(blockIdx.y) * kDp4aN;
  const std::int64_t k_words = dp4a_k_words(a);
  std::int32_t acc[4][4] = {};
  for (std::int64_t k0 = 0; k0 < k_words; k0 += kDp4aWords) {
    dp4a_load(a, m0, o0, k0, tid, tiles);
    __syncthreads();
    dp4a_accumulate(tiles, tid, acc);
    __syncthreads();
  }
  dp4a_store(a, m0, o0, tid, acc);
}

// ---- runtime ------------------------------------------------------------------------------

std::string cuda_error(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/// Owns every device allocation and event of one run.
class DeviceState {
 public:
  ~DeviceState() {
    for (void* p : allocations_) cudaFree(p);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
  }

  Result<void*> allocate(std::size_t bytes) {
    void* p = nullptr;
    if (auto e = cudaMalloc(&p, std::max<std::size_t>(bytes, 16)); e != cudaSuccess)
      return fail("cudaMalloc of " + std::to_string(bytes) + " B: " + cuda_error(e));
    allocations_.push_back(p);
    if (auto e = cudaMemset(p, 0, std::max<std::size_t>(bytes, 16)); e != cudaSuccess)
      return fail("cudaMemset: " + cuda_error(e));
    return p;
  }

  template <class T>
  Result<const T*> upload(const std::vector<T>& host) {
    if (host.empty()) return static_cast<const T*>(nullptr);
    auto p = allocate(host.size() * sizeof(T));
    if (!p) return p.failure();
    if (auto e =
            cudaMemcpy(p.value(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
        e != cudaSuccess)
      return fail("cudaMemcpy to device: " + cuda_error(e));
    return static_cast<const T*>(p.value());
  }

  Result<cudaEvent_t> event() {
    cudaEvent_t ev;
    if (auto e = cudaEventCreate(&ev); e != cudaSuccess) return fail(cuda_error(e));
    events_.push_back(ev);
    return ev;
  }

  cudaStream_t stream_ = nullptr;

 private:
  std::vector<void*> allocations_;
  std::vector<cudaEvent_t> events_;
};

/// One step with its arguments bound to device memory.
struct BoundStep {
  KernelKind kind;
  std::string name;
  dim3 grid, block;
  std::int64_t total = 0;
  ConvArgs conv;
  PoolArgs pool;
  QuantizeArgs quantize;
  TensorView x, second, y;
  Epilogue epilogue;
  WorkArgs work;
};

void launch(const BoundStep& s, cudaStream_t stream) {
  switch (s.kind) {
    case KernelKind::QuantizeInput:
      quantize_kernel<<<s.grid, s.block, 0, stream>>>(s.quantize, s.total);
      break;
    case KernelKind::ConvDp4a:
      conv_dp4a_kernel<<<s.grid, s.block, 0, stream>>>(s.conv);
      break;
    case KernelKind::ConvDirect:
      conv_direct_kernel<<<s.grid, s.block, 0, stream>>>(s.conv, s.total);
      break;
    case KernelKind::Pool:
      pool_kernel<<<s.grid, s.block, 0, stream>>>(s.pool, s.second, s.total);
      break;
    case KernelKind::Eltwise:
      eltwise_kernel<<<s.grid, s.block, 0, stream>>>(s.x, s.second, s.y, s.epilogue, s.total);
      break;
    case KernelKind::Copy:
      copy_kernel<<<s.grid, s.block, 0, stream>>>(s.x, s.y, s.total);
      break;
    case KernelKind::Workload:
      workload_kernel<<<s.grid, s.block, 0, stream>>>(s.work, s.total);
      break;
  }
}

Status run_all(const std::vector<BoundStep>& steps, cudaStream_t stream,
               const std::vector<cudaEvent_t>* step_events) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (step_events) cudaEventRecord((*step_events)[i], stream);
    launch(steps[i], stream);
    if (auto e = cudaGetLastError(); e != cudaSuccess)
      return fail("launching step " + std::to_string(i) + " (" + steps[i].name +
                  "): " + cuda_error(e));
  }
  if (step_events) cudaEventRecord(step_events->back(), stream);
  return {};
}

}  // namespace

namespace device {

bool built_with_cuda() {
  return true;
}

Result<DeviceInfo> info() {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return fail("no CUDA device: " + cuda_error(e));
  if (count == 0) return fail("no CUDA device: the driver reports none");
  cudaDeviceProp p;
  if (auto e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess)
    return fail("no CUDA device: " + cuda_error(e));
  DeviceInfo d;
  d.name = p.name;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  return d;
}

Result<RawRun> run(const GpuPlan& plan, const std::vector<float>& input,
                   const RunOptions& options) {
  if (auto d = info(); !d) return d.failure();
  DeviceState state;
  if (auto e = cudaStreamCreate(&state.stream_); e != cudaSuccess)
    return fail("cudaStreamCreate: " + cuda_error(e));
  std::vector<void*> buffers;
  for (const Buffer& b : plan.buffers) {
    auto p = state.allocate(static_cast<std::size_t>(b.bytes()));
    if (!p) return p.failure();
    buffers.push_back(p.value());
    if (!b.contents.empty())
      if (auto e =
              cudaMemcpy(p.value(), b.contents.data(), b.contents.size(), cudaMemcpyHostToDevice);
          e != cudaSuccess)
        return fail("uploading constant " + b.tensor + ": " + cuda_error(e));
  }
  if (options.more_inputs.size() + 1 != plan.inputs.size())
    return fail("the plan has " + std::to_string(plan.inputs.size()) + " inputs, " +
                std::to_string(options.more_inputs.size() + 1) + " given");
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    const std::vector<float>& values = k == 0 ? input : options.more_inputs[k - 1];
    const int index = plan.inputs[k].buffer;
    const Buffer& in = plan.buffers[static_cast<std::size_t>(index)];
    if (static_cast<std::int64_t>(values.size()) != in.n * in.c * in.h * in.w)
      return fail("input " + in.tensor + " has " + std::to_string(values.size()) +
                  " values, the plan expects " + std::to_string(in.n * in.c * in.h * in.w));
    if (auto e = cudaMemcpy(buffers[static_cast<std::size_t>(index)], values.data(),
                            values.size() * sizeof(float), cudaMemcpyHostToDevice);
        e != cudaSuccess)
      return fail("uploading input " + in.tensor + ": " + cuda_error(e));
  }

  std::vector<BoundStep> steps;
  for (const Step& s : plan.steps) {
    BoundStep b;
    b.kind = s.kind;
    b.name = s.name;
    const auto view = [&](const PlanView& v) {
      return bind(plan, v, v.buffer < 0 ? nullptr : buffers[static_cast<std::size_t>(v.buffer)]);
    };
    b.x = view(s.x);
    b.second = view(s.second);
    b.y = view(s.y);
    auto bias = state.upload(s.epilogue.bias);
    auto multiplier = state.upload(s.epilogue.multiplier);
    auto shift = state.upload(s.epilogue.shift);
    auto weights = state.upload(s.weights);
    if (!bias || !multiplier || !shift || !weights)
      return fail("step " + s.name + ": uploading weights and tables failed: " +
                  (!bias         ? bias.reason()
                   : !multiplier ? multiplier.reason()
                   : !shift      ? shift.reason()
                                 : weights.reason()));
    b.epilogue = bind(s.epilogue, bias.value(), multiplier.value(), shift.value());
    b.conv =
        ConvArgs{b.x,     b.y,      b.second,  weights.value(), s.weight_type, s.weight_c_stride,
                 s.group, s.window, b.epilogue};
    b.pool = PoolArgs{b.x, b.y, s.window, s.is_max ? 1 : 0, b.epilogue};
    b.quantize =
        QuantizeArgs{static_cast<const float*>(b.x.data), b.y, s.scale, s.zero_point, s.lo, s.hi};
    b.grid = dim3(static_cast<unsigned>(s.launch.grid[0]), static_cast<unsigned>(s.launch.grid[1]),
                  static_cast<unsigned>(s.launch.grid[2]));
    b.block =
        dim3(static_cast<unsigned>(s.launch.block[0]), static_cast<unsigned>(s.launch.block[1]),
             static_cast<unsigned>(s.launch.block[2]));
    b.total = s.y.elements();
    if (s.kind == KernelKind::Workload) {
      b.work = bind_work(plan, s, buffers.data(), weights.value(), b.epilogue);
      b.total = work_threads(b.work);
    }
    steps.push_back(b);
  }

  RawRun result;
  for (int i = 0; i < options.warmup_runs; ++i)
    if (auto ok = run_all(steps, state.stream_, nullptr); !ok) return ok.failure();
  if (auto e = cudaStreamSynchronize(state.stream_); e != cudaSuccess)
    return fail("running the plan: " + cuda_error(e));
  auto start = state.event(), stop = state.event();
  if (!start || !stop) return fail("cudaEventCreate failed");
  for (int i = 0; i < options.timed_runs; ++i) {
    cudaEventRecord(start.value(), state.stream_);
    if (auto ok = run_all(steps, state.stream_, nullptr); !ok) return ok.failure();
    cudaEventRecord(stop.value(), state.stream_);
    if (auto e = cudaEventSynchronize(stop.value()); e != cudaSuccess)
      return fail("running the plan: " + cuda_error(e));
    float ms = 0;
    cudaEventElapsedTime(&ms, start.value(), stop.value());
    result.run_ms.push_back(ms);
  }
  if (options.per_step) {
    std::vector<cudaEvent_t> events;
    for (std::size_t i = 0; i <= steps.size(); ++i) {
      auto ev = state.event();
      if (!ev) return ev.failure();
      events.push_back(ev.value());
    }
    if (auto ok = run_all(steps, state.stream_, &events); !ok) return ok.failure();
    if (auto e = cudaEventSynchronize(events.back()); e != cudaSuccess)
      return fail("running the plan: " + cuda_error(e));
    for (std::size_t i = 0; i < steps.size(); ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events[i], events[i + 1]);
      result.step_ms.push_back(ms);
    }
  }
  result.buffers.resize(plan.buffers.size());
  std::vector<bool> wanted(plan.buffers.size(), options.read_all);
  for (const auto& out : plan.outputs) wanted[static_cast<std::size_t>(out.view.buffer)] = true;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    if (!wanted[i]) continue;
    result.buffers[i].resize(static_cast<std::size_t>(plan.buffers[i].bytes()));
    if (auto e = cudaMemcpy(result.buffers[i].data(), buffers[i], result.buffers[i].size(),
                            cudaMemcpyDeviceToHost);
        e != cudaSuccess)
      return fail("reading back " + plan.buffers[i].tensor + ": " + cuda_error(e));
  }
  return result;
}

}  // namespace device
}  // namespace tessel::cuda
