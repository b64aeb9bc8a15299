// Resize's sampling, shared by every executor (the golden kernels in compiler/targets/cpu and
// the CUDA lowering): for each output index along each axis, which input indices it reads and
// with which integer weights (docs/quantization.md, "Data movement"). One definition, so that
// the backends cannot disagree about a coordinate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/op.hpp"
#include "compiler/ir/tensor.hpp"
#include "support/result.hpp"

namespace tessel::ir {

/// Output index o of one axis reads input indices lo and hi with integer weights w_lo and w_hi
/// (w_hi == 0: lo alone). Nearest: w_lo = 1. Linear on an axis whose size changes:
/// w_lo = 256 - w, w_hi = w with w = rha(256 t); on an axis that keeps its size: lo = o, w_lo = 1.
struct ResizeTap {
  std::int64_t lo = 0, hi = 0, w_lo = 1, w_hi = 0;
};

/// Every axis's taps and the final rounding shift: y = rha(sum over the cell's corners of
/// prod(w) * x, shift), shift = 8 x (axes whose size changes) for linear, 0 for nearest.
struct ResizeTaps {
  std::vector<std::vector<ResizeTap>> axes;  ///< axes[d][o], one per output index
  int shift = 0;
  bool linear = false;
};

/// The input coordinate of output index `o` along an axis of `in` -> `out` elements under ONNX
/// Resize's coordinate_transformation_mode `mode` (half_pixel, pytorch_half_pixel, asymmetric,
/// align_corners).
double resize_source_coordinate(const std::string& mode, std::int64_t o, std::int64_t in,
                                std::int64_t out);

/// The taps of Resize `op` from `in` to `out` (same rank); failure names the op and the
/// unsupported mode.
Result<ResizeTaps> resize_taps(const Op& op, const Shape& in, const Shape& out);

}  // namespace tessel::ir
