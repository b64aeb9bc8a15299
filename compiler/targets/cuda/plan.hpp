// The GPU execution plan: device buffers, one fused kernel step per group of graph ops, launch
// geometry and analytical DRAM bytes. Plain C++ with no IR or CUDA types, so the CUDA runtime
// compiles against it without the graph headers, and every field is checkable on a CPU.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/targets/cuda/device_ops.cuh"
#include "compiler/targets/cuda/dp4a.cuh"
#include "compiler/targets/cuda/workload_ops.cuh"

namespace tessel::cuda {

/// One device allocation: an NHWC activation (2-D [N,K] tensors are N x 1 x 1 x K) with its
/// channel count padded to a multiple of 4 (`c_stride`), so a dp4a word never straddles
/// pixels; or the f32 NCHW network input (`is_f32_input`). Padding channels start as zeros.
struct Buffer {
  std::string tensor;  ///< the tensor it holds (a Concat output when slices write into it)
  std::int32_t type = kI8;
  bool is_f32_input = false;
  /// Row-major rows (any rank: the dims before the last flattened into n, h = w = 1) instead
  /// of NHWC; rank-4 tensors made by workload kernels, every tensor of another rank.
  bool rows = false;
  std::int64_t n = 0, h = 0, w = 0, c = 0, c_stride = 0;
  /// Initial contents (a constant operand, laid out as the buffer); empty: zeros.
  std::vector<std::uint8_t> contents;
  /// Not a tensor the golden executor computes (a constant, an NHWC relayout copy): not
  /// compared by --check-all.
  bool internal = false;
  std::int64_t bytes() const;
};

/// A view on a buffer of the plan (TensorView without a pointer; `buffer` indexes
/// GpuPlan::buffers, -1 when absent).
struct PlanView {
  int buffer = -1;
  std::int64_t n = 0, h = 0, w = 0, c = 0;
  std::int64_t pixel_stride = 0, channel_offset = 0;
  std::int64_t elements() const { return n * h * w * c; }
};

/// The kernels the backend has. Selection rules are in lower.hpp.
enum class KernelKind {
  QuantizeInput,  ///< f32 NCHW -> int NHWC (the graph's Quantize)
  ConvDp4a,       ///< int8 implicit GEMM on __dp4a, 64x64 output tile, group 1 (also Gemm)
  ConvDirect,     ///< one thread per output: depthwise/grouped convs, int16 operands
  Pool,           ///< max / average / global average pooling, one thread per output
  Eltwise,        ///< a Requantize/Relu/Clip/Add that could not be fused into a producer
  Copy,           ///< channel-slice copy: Concat inputs, Split outputs
  Workload,       ///< workload_ops.cuh over logical strided views (Step::work says which op)
};
const char* to_string(KernelKind kind);

/// CUDA launch geometry.
struct Launch {
  std::array<std::int64_t, 3> grid{1, 1, 1};
  std::array<std::int64_t, 3> block{1, 1, 1};
  std::int64_t shared_bytes = 0;
  std::int64_t threads() const;
};

/// Analytical DRAM bytes of one kernel: every operand read once and the result written once
/// (perfect on-chip reuse within the kernel; a lower bound that L2 hits can only undercut).
struct KernelBytes {
  std::int64_t activations_read = 0;
  std::int64_t weights_read = 0;  ///< packed weights + int32 bias + requant tables
  std::int64_t activations_written = 0;
  std::int64_t total() const { return activations_read + weights_read + activations_written; }
};

/// The epilogue's per-channel tables on the host; `scalars` carries every other field (its
/// pointers stay null here and are set to the device copies at upload).
struct EpilogueTables {
  std::vector<std::int32_t> bias, multiplier, shift;
  Epilogue scalars;
};

/// One kernel launch and the graph ops it implements.
struct Step {
  KernelKind kind = KernelKind::Eltwise;
  std::string name;              ///< the anchor op's name
  std::vector<std::string> ops;  ///< every graph op fused into it, in order
  PlanView x;                    ///< main input
  PlanView second;               ///< Eltwise: second operand; Conv: the residual
  PlanView y;
  // Conv / Gemm
  std::vector<std::uint8_t> weights;  ///< packed [O][KH][KW][weight_c_stride], little endian
  std::int32_t weight_type = kI8;
  std::int64_t weight_c_stride = 0;
  std::int64_t group = 1;
  Window window;
  // Pool
  bool is_max = false;
  // QuantizeInput
  double scale = 1.0;
  std::int32_t zero_point = 0, lo = -128, hi = 127;

  // Workload: the arguments with null data pointers; work_buffers[0..3] are the buffers of
  // work.x, work.second, work.third, work.y (-1: absent); `weights` holds work.table's bytes.
  WorkArgs work;
  std::array<int, 4> work_buffers{-1, -1, -1, -1};

  EpilogueTables epilogue;
  Launch launch;
  KernelBytes bytes;
  std::int64_t macs = 0;
};

/// An integer tensor the host reads back: its view and its logical (graph) shape; a 2-D shape
/// over a 4-D view is the NCHW flatten of it.
struct DeviceOutput {
  std::string tensor;
  PlanView view;
  std::vector<std::int64_t> shape;
  std::int32_t type = kI8;
};

/// An f32 graph input and the buffer it is uploaded to.
struct PlanInput {
  std::string tensor;
  std::vector<std::int64_t> shape;
  int buffer = -1;
};

/// Everything needed to run a quantized graph on the GPU.
struct GpuPlan {
  std::string model;
  std::string input_tensor;               ///< the (first) f32 graph input
  std::vector<std::int64_t> input_shape;  ///< NCHW (rank 4) or row-major
  int input_buffer = -1;
  /// Every f32 graph input, in graph order (inputs[0] is input_tensor); a decode step's KV
  /// cache adds one per layer and tensor.
  std::vector<PlanInput> inputs;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<DeviceOutput> outputs;
  std::vector<std::string> host_ops;  ///< float ops after the integer outputs (Dequantize, Softmax)

  std::int64_t macs() const;
  KernelBytes bytes() const;          ///< summed over steps
  std::int64_t weight_bytes() const;  ///< packed weights and tables, each once
  std::int64_t buffer_bytes() const;  ///< device memory for activations
};

// ---- launch planning (pure functions, unit-tested) ----------------------------------------

/// Threads per block of the one-thread-per-element kernels.
inline constexpr std::int64_t kElementwiseThreads = 256;

/// Grid (ceil(pixels / 64), ceil(out_channels / 64)), 256 threads, and the kernel's static
/// shared memory: one A and one B tile of 32 B x (64 + 4 padding) each (4352 B).
Launch dp4a_launch(std::int64_t output_pixels, std::int64_t out_channels);
/// 1-D grid over `elements` with kElementwiseThreads per block.
Launch elementwise_launch(std::int64_t elements);

/// `c` rounded up to a multiple of 4 (the dp4a word).
constexpr std::int64_t padded_channels(std::int64_t c) {
  return (c + 3) / 4 * 4;
}

/// The TensorView of `view` over buffer memory at `data` (host or device). An absent view
/// (`buffer < 0`, e.g. a step without a second operand) keeps its shape and gets type int8.
inline TensorView bind(const GpuPlan& plan, const PlanView& view, void* data) {
  return TensorView{
      data,
      view.buffer < 0 ? kI8 : plan.buffers[static_cast<std::size_t>(view.buffer)].type,
      view.n,
      view.h,
      view.w,
      view.c,
      view.pixel_stride,
      view.channel_offset};
}

/// The Epilogue of `tables` reading its per-channel arrays at the given addresses (host or
/// device copies of tables.bias/multiplier/shift; null where the table is empty).
inline Epilogue bind(const EpilogueTables& tables, const std::int32_t* bias,
                     const std::int32_t* multiplier, const std::int32_t* shift) {
  Epilogue e = tables.scalars;
  e.bias = tables.bias.empty() ? nullptr : bias;
  e.multiplier = tables.multiplier.empty() ? nullptr : multiplier;
  e.shift = tables.shift.empty() ? nullptr : shift;
  return e;
}

/// The kernel's name in plan tables: the KernelKind, or the workload op ("matmul", ...).
const char* step_kind_name(const Step& step);

/// `step.work` reading its views at buffers[work_buffers[i]], its table at `table` and its
/// epilogue `epilogue` (host or device addresses).
inline WorkArgs bind_work(const GpuPlan& plan, const Step& step, void* const* buffers,
                          const void* table, const Epilogue& epilogue) {
  WorkArgs a = step.work;
  Strided* views[4] = {&a.x, &a.second, &a.third, &a.y};
  for (int i = 0; i < 4; ++i) {
    const int b = step.work_buffers[static_cast<std::size_t>(i)];
    views[i]->data = b < 0 ? nullptr : buffers[b];
    views[i]->type = b < 0 ? kI8 : plan.buffers[static_cast<std::size_t>(b)].type;
  }
  a.table = table;
  a.epilogue = epilogue;
  return a;
}

/// A human-readable table of the plan: one line per step (kind, ops, shapes, grid/block/shared,
/// MACs, analytical bytes) and the totals.
std::string describe(const GpuPlan& plan);

}  // namespace tessel::cuda
