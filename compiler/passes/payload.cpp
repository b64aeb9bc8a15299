// Payload checks and constant creation for computing passes.
#include "compiler/passes/payload.hpp"

#include <stdexcept>

namespace tessel::passes::detail {

Result<bool> payload_available(const ir::Graph& graph, const std::vector<std::string>& names,
                               const std::string& where) {
  int with = 0, without = 0;
  std::string first_without;
  for (const std::string& name : names) {
    const ir::Tensor& tensor = graph.tensor(name);
    if (!tensor.constant) return fail(where + ": %" + name + " is not a constant");
    if (!tensor.f32_values.empty()) {
      ++with;
    } else {
      if (first_without.empty()) first_without = name;
      ++without;
    }
  }
  if (with && without) {
    return fail(where + ": constant %" + first_without +
                " has no f32 payload (elided in text, or integer-only) while the others do");
  }
  return without == 0;
}

std::string add_constant(ir::Graph& graph, const std::string& name, ir::Shape shape,
                         std::vector<float> values) {
  ir::Tensor tensor;
  tensor.name = graph.unique_name(name);
  tensor.shape = std::move(shape);
  tensor.f32_values = std::move(values);
  const std::string added = tensor.name;
  if (Status status = graph.add_constant(std::move(tensor)); !status) {
    throw std::logic_error(status.reason());  // unique name and matching payload: cannot fail
  }
  return added;
}

}  // namespace tessel::passes::detail
