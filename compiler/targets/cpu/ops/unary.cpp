// Unary elementwise kernels: Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Gelu, Silu, Sqrt, Exp,
// Reciprocal, Neg. Float: the function of ir/unary.hpp in double, rounded to float. Integers:
// the table lookup of support/int_nonlinear.hpp on the quantizer's table (input 1).
#include "compiler/ir/unary.hpp"
#include "compiler/targets/cpu/ops/common.hpp"

namespace tessel::cpu {
namespace {

Result<std::vector<TensorData>> unary(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  if (args.inputs.size() == 2) return ops::table_kernel(args, 1);  // integers: y = T[x]
  if (x.dtype() != ir::DType::f32)
    return fail(args.where() + ": an integer input needs the quantizer's table as input 1");
  TensorData y = args.allocate();
  const float* xv = x.data<float>();
  float* out = y.data<float>();
  for (std::int64_t i = 0; i < x.size(); ++i)
    out[i] = static_cast<float>(ir::unary_function(args.op, double{xv[i]}));
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> unary_kernels() {
  std::vector<KernelEntry> entries;
  for (int k = 0; k < ir::kOpKindCount; ++k)
    if (ir::is_unary_function(static_cast<ir::OpKind>(k)))
      entries.push_back({static_cast<ir::OpKind>(k), unary});
  return entries;
}

}  // namespace tessel::cpu
