// The kernel table: every family's registrations, indexed by op kind.
#include <array>
#include <stdexcept>

#include "compiler/targets/cpu/ops/kernel.hpp"

namespace tessel::cpu {

std::string KernelArgs::where() const {
  return "%" + op.name + " (" + std::string(ir::to_string(op.kind)) + ")";
}

OpKernel find_op_kernel(ir::OpKind kind) {
  static const std::array<OpKernel, ir::kOpKindCount> table = [] {
    std::array<OpKernel, ir::kOpKindCount> t{};
    for (const auto& family :
         {elementwise_kernels(), unary_kernels(), matmul_kernels(), normalization_kernels(),
          reduction_kernels(), movement_kernels(), layout_kernels()})
      for (const KernelEntry& entry : family) {
        auto& slot = t[static_cast<std::size_t>(entry.kind)];
        if (slot) throw std::logic_error("two kernels registered for one op kind");
        slot = entry.kernel;
      }
    return t;
  }();
  return table[static_cast<std::size_t>(kind)];
}

}  // namespace tessel::cpu
