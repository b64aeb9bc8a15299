// Lowering a quantized graph IR to a GpuPlan (kernel selection, fusion, NHWC layout, weight
// packing, launch geometry, analytical bytes), and the host-side layout conversions.
#pragma once

#include <string>

#include "compiler/ir/graph.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "compiler/targets/cuda/plan.hpp"
#include "support/result.hpp"

namespace tessel::cuda {

/// Lowers a graph made by the quantizer (docs/quantization.md, "The quantized graph") to a plan.
///
/// Layout: every integer activation is NHWC with channels padded to a multiple of 4; 2-D
/// tensors are N x 1 x 1 x K. Flatten/Reshape to [N, K] are views (no kernel): a Gemm reading a
/// flattened H x W map gets its weight columns permuted from NCHW order to the buffer's
/// (h, w, c) order instead.
///
/// Fusion: a Conv or Gemm absorbs, in graph order, the Requantize reading its accumulator, one
/// Relu/Clip, an Add whose other operand is already computed, and one Relu/Clip after the Add —
/// each only when the tensor between them has that op as its sole reader and is no graph
/// output. Pools, standalone Requantize/Relu/Clip/Add (Eltwise) absorb what is left of the same
/// chain.
///
/// Kernel selection: int8 x int8 group-1 Conv and Gemm -> ConvDp4a; other Conv/Gemm (depthwise,
/// grouped, int16) -> ConvDirect; MaxPool/AveragePool/GlobalAveragePool -> Pool; Concat and
/// Split along channels -> Copy per slice; the graph's Quantize -> QuantizeInput. Dequantize
/// and a Softmax after it stay on the host (`host_ops`); their integer inputs are the plan's
/// outputs.
///
/// Fails naming the op for anything else: a float Conv (not a quantized graph), Pad, an
/// unfolded BatchNormalization/Scale, Concat/Split on another axis, a Reshape that is not a
/// flatten to [N, K], an integer graph input.
Result<GpuPlan> lower_to_gpu(const ir::Graph& quantized);

/// The f32 NCHW input values laid out as the plan's input buffer expects (a copy).
std::vector<float> input_values(const cpu::TensorData& input);

/// An output read back from the device: `buffer_data` holds the whole buffer of
/// `output.view.buffer`; the result is the tensor in its logical (NCHW or [N, K]) order.
cpu::TensorData gather_output(const GpuPlan& plan, const DeviceOutput& output,
                              const void* buffer_data);

}  // namespace tessel::cuda
