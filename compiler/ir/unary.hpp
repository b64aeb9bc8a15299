// The real function of every unary elementwise op kind: one definition for the fp32 executor
// and for the quantizer, which tabulates it on integer codes (docs/quantization.md).
#pragma once

#include "compiler/ir/op.hpp"

namespace tessel::ir {

/// True for Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Gelu, Silu, Sqrt, Exp, Reciprocal, Neg.
bool is_unary_function(OpKind kind);

/// f(x) of a unary op (attributes read from `op`), in double. Outside the function's domain
/// (Sqrt of a negative, Reciprocal of 0) the IEEE result (NaN, Inf) comes back.
double unary_function(const Op& op, double x);

}  // namespace tessel::ir
