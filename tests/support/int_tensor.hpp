// Tests that feed integer codes to an executor: a tensor value from a list of int32 codes.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/targets/cpu/tensor_data.hpp"

namespace tessel::test_support {

/// An i8 or i16 tensor of `shape` whose first elements are `codes` (each narrowed to the type).
inline cpu::TensorData int_tensor(ir::DType dtype, ir::Shape shape,
                                  const std::vector<std::int32_t>& codes) {
  cpu::TensorData t(dtype, std::move(shape));
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (dtype == ir::DType::i8) t.data<std::int8_t>()[i] = static_cast<std::int8_t>(codes[i]);
    if (dtype == ir::DType::i16) t.data<std::int16_t>()[i] = static_cast<std::int16_t>(codes[i]);
  }
  return t;
}

}  // namespace tessel::test_support
