// The causal-mask recogniser (scheduler/causal_mask.hpp): reads the keep-mask's values.
#include "scheduler/causal_mask.hpp"

namespace tessel::sched {

std::optional<std::int64_t> causal_diagonal(const ir::Graph& graph, const ir::Op& softmax) {
  if (softmax.kind != ir::OpKind::Softmax || softmax.inputs.size() != 2) return std::nullopt;
  const ir::Tensor& scores = graph.tensor(softmax.inputs[0]);
  const ir::Tensor& mask = graph.tensor(softmax.inputs[1]);
  const auto rank = static_cast<std::int64_t>(scores.shape.size());
  const std::int64_t axis = softmax.get_int("axis");
  if (!mask.constant || rank < 2 || mask.shape.size() < 2 || (axis != -1 && axis != rank - 1))
    return std::nullopt;
  const std::int64_t queries = scores.shape[static_cast<std::size_t>(rank - 2)];
  const std::int64_t keys = scores.shape[static_cast<std::size_t>(rank - 1)];
  const std::size_t m = mask.shape.size();
  if (mask.shape[m - 2] != queries || mask.shape[m - 1] != keys) return std::nullopt;
  const std::int64_t count = ir::element_count(mask.shape);
  const bool as_float = !mask.f32_values.empty();
  if (static_cast<std::int64_t>(as_float ? mask.f32_values.size() : mask.int_values.size()) !=
      count)
    return std::nullopt;
  const auto kept = [&](std::int64_t index) {
    const auto at = static_cast<std::size_t>(index);
    return as_float ? mask.f32_values[at] != 0.0f : mask.int_values[at] != 0;
  };
  // Query 0 keeps keys 0..k: the diagonal, if the rest of the mask agrees.
  std::int64_t diagonal = -1;
  while (diagonal + 1 < keys && kept(diagonal + 1)) ++diagonal;
  if (diagonal < 0) return std::nullopt;
  for (std::int64_t index = 0; index < count; ++index) {
    const std::int64_t j = index % keys, i = (index / keys) % queries;
    if (kept(index) != (j <= i + diagonal)) return std::nullopt;
  }
  return diagonal;
}

}  // namespace tessel::sched
