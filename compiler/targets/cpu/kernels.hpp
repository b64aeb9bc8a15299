// Reference kernels of the CPU executor that tests and the ONNX node-test runner call directly.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/ir/op.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "support/result.hpp"

namespace tessel::cpu {

/// Integer convolution, NCHW x OIHW (group g: O/g filters per group, each over C/g channels),
/// any integer dtypes in, int32 out: y = sum(x * w) (+ bias[o]), accumulated exactly in int64.
/// `x_zero_point`/`w_zero_point` are subtracted first (0 in Tessel's symmetric flow; ONNX
/// ConvInteger/QLinearConv use them). Fails when a result leaves the int32 range, naming the
/// output element (the integer contract accumulates in int32).
/// `y` must be preallocated as i32 with the output shape.
Status conv_int_reference(const TensorData& x, const TensorData& w, const TensorData* bias,
                          const ir::WindowGeometry& geometry, TensorData& y,
                          std::int32_t x_zero_point = 0, std::int32_t w_zero_point = 0);

/// Integer matrix product y[M,N] = (a - a_zp)[M,K] x (b - b_zp)(K,N) (+ bias[n]) with b stored
/// [N,K] when `trans_b` else [K,N]; int64 accumulation, int32 range checked as above.
Status gemm_int_reference(const TensorData& a, const TensorData& b, const TensorData* bias,
                          bool trans_b, TensorData& y, std::int32_t a_zero_point = 0,
                          std::int32_t b_zero_point = 0);

/// Float matrix product y = alpha * a x op(b) + beta * c (c: [N], [1,N] or [M,N]).
void gemm_f32(const TensorData& a, const TensorData& b, const TensorData* c, bool trans_b,
              double alpha, double beta, TensorData& y);

}  // namespace tessel::cpu
