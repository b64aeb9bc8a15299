// Runs a GpuPlan on the host with the kernels' own per-element functions (device_ops.cuh):
// checks lowering, layouts, packing and epilogues bit for bit without a GPU.
#pragma once

#include <map>
#include <string>

#include "compiler/targets/cpu/tensor_data.hpp"
#include "compiler/targets/cuda/plan.hpp"
#include "support/result.hpp"

namespace tessel::cuda {

/// Executes every step of `plan` in order on host buffers laid out exactly as on the device.
/// Returns the plan's outputs in logical order, by tensor name; with `all_buffers`, also every
/// buffer's tensor (the materialized intermediates, for comparison with the golden executor's
/// keep_intermediates). Fails when `input` does not match the plan's input shape.
Result<std::map<std::string, cpu::TensorData>> emulate(const GpuPlan& plan,
                                                       const cpu::TensorData& input,
                                                       bool all_buffers = false);

/// The same with every f32 graph input by name (a plan with several inputs: a decode step's
/// KV cache); fails naming an input that is missing or of the wrong shape.
Result<std::map<std::string, cpu::TensorData>> emulate(
    const GpuPlan& plan, const std::map<std::string, cpu::TensorData>& inputs,
    bool all_buffers = false);

/// The default value of every f32 input of `plan` (cpu::default_input, seed = its index: the
/// first input gets seed 0, as `tessel infer` gives a single input).
std::map<std::string, cpu::TensorData> default_inputs(const GpuPlan& plan);

/// The logical-order tensor held by buffer `index` of `plan`, read from `data` (host memory
/// laid out as the device buffer); the shape is the buffer's NCHW (or [N, K] when h = w = 1
/// and `shape` says so). Shared by the emulator and the CUDA runtime's read-back.
cpu::TensorData buffer_tensor(const GpuPlan& plan, int index,
                              const std::vector<std::int64_t>& shape, const void* data);

}  // namespace tessel::cuda
