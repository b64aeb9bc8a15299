// The kernel table: every family's registrations, indexed by op kind.
#include <array>
#include <stdexcept>

#include "compiler/targets/cpu/ops/channels_last.hpp"
#include "compiler/targets/cpu/ops/kernel.hpp"

namespace tessel::cpu {

std::string KernelArgs::where() const {
  return ir::where(op);
}

const KernelEntry& find_kernels(ir::OpKind kind) {
  static const std::array<KernelEntry, ir::kOpKindCount> table = [] {
    std::array<KernelEntry, ir::kOpKindCount> t{};
    for (std::size_t k = 0; k < t.size(); ++k) t[k].kind = static_cast<ir::OpKind>(k);
    for (const auto& family :
         {elementwise_kernels(), unary_kernels(), matmul_kernels(), normalization_kernels(),
          reduction_kernels(), movement_kernels(), layout_kernels(), convolution_kernels(),
          quantization_kernels(), pixel_kernels()})
      for (const KernelEntry& entry : family) {
        auto& slot = t[static_cast<std::size_t>(entry.kind)];
        if ((entry.kernel && slot.kernel) || (entry.channels_last && slot.channels_last))
          throw std::logic_error("two kernels of one form registered for one op kind");
        if (entry.kernel) slot.kernel = entry.kernel;
        if (entry.channels_last) slot.channels_last = entry.channels_last;
      }
    return t;
  }();
  return table[static_cast<std::size_t>(kind)];
}

}  // namespace tessel::cpu
