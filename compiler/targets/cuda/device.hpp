// The CUDA runtime's raw interface (implemented in runtime.cu, or by runtime_none.cpp in builds
// without CUDA): device query, and one plan run with CUDA-event timing. No IR types, so nvcc
// compiles its implementation without the graph headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/targets/cuda/plan.hpp"
#include "support/result.hpp"

namespace tessel::cuda::device {

/// True when this binary was built with the CUDA backend.
bool built_with_cuda();

/// The GPU that runs plans (device 0).
struct DeviceInfo {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::int64_t memory_bytes = 0;
};

/// Device 0, or a failure: "built without CUDA" (no backend in this binary) or "no CUDA device:
/// <driver message>".
Result<DeviceInfo> info();

/// Options of one timed run.
struct RunOptions {
  int warmup_runs = 3;    ///< untimed runs first (clocks, caches, lazy module loading)
  int timed_runs = 20;    ///< runs timed with CUDA events around the whole plan
  bool read_all = false;  ///< copy back every buffer, not only the plan's outputs
  bool per_step = true;   ///< one extra run with an event pair around every kernel
  /// Values of plan.inputs[1..] (f32, each in its input's order), when the plan has more
  /// than one input; `input` of run() is plan.inputs[0]'s.
  std::vector<std::vector<float>> more_inputs;
};

/// What a run leaves: buffer contents (index -> bytes, laid out as the plan says) and times.
struct RawRun {
  std::vector<std::vector<std::uint8_t>> buffers;  ///< empty where not read back
  std::vector<double> run_ms;                      ///< each timed run, in order
  std::vector<double> step_ms;                     ///< per step (per_step run), else empty
};

/// Uploads weights/tables and `input` (f32 NCHW), runs the plan warmup + timed times on one
/// stream, reads back the outputs (or all buffers). Fails with the CUDA error and the step
/// name when a call fails; never aborts.
Result<RawRun> run(const GpuPlan& plan, const std::vector<float>& input, const RunOptions& options);

}  // namespace tessel::cuda::device
