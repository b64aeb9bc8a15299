// Pass fuse-attention-mask: an additive mask of 0 and -inf (or a large negative) before a
// Softmax, or a Where selecting such a constant, becomes the Softmax's mask input (1 = kept):
// the integer softmax leaves masked positions out of the maximum and the sum instead of adding
// a value no 8-bit scale can hold.
#include <cmath>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

/// A value that masks a position: -inf, or a negative so large that exp of it vanishes next to
/// any kept score (torch writes finfo(float32).min; older code -1e4 or -1e9).
bool masks(float value) {
  return value <= -1e4f;
}

/// The constant `name`'s payload when it is an f32 constant with one (else nullptr).
const std::vector<float>* payload(const ir::Graph& graph, const std::string& name) {
  const ir::Tensor& t = graph.tensor(name);
  if (!t.constant || t.dtype != ir::DType::f32 || t.f32_values.empty()) return nullptr;
  return &t.f32_values;
}

/// Whether the mask `keep` (shape `shape`, broadcast to scores of rank `rank`) leaves a row
/// along `axis` with nothing kept. The fused Softmax gives such a row 0 everywhere where the
/// original gives a uniform row (finite fill) or NaN (-inf), so then the pattern stays.
bool masks_a_whole_row(const std::vector<float>& keep, const ir::Shape& shape, std::size_t rank,
                       std::int64_t axis) {
  const std::size_t a =
      static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis);
  // The mask's own extent along the axis (1 when it broadcasts there) and the stride of it.
  const std::size_t lead = rank - shape.size();
  const std::int64_t length = a >= lead ? shape[a - lead] : 1;
  std::int64_t inner = 1;
  for (std::size_t d = std::max(a + 1, lead); d < rank; ++d) inner *= shape[d - lead];
  const auto total = static_cast<std::int64_t>(keep.size());
  for (std::int64_t o = 0; o < total / (length * inner); ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      bool any = false;
      for (std::int64_t k = 0; k < length && !any; ++k)
        any = keep[static_cast<std::size_t>((o * length + k) * inner + i)] != 0.0f;
      if (!any) return true;
    }
  return false;
}

/// The scores and the keep-mask (values, shape) of Add(scores, M) or Where(cond, scores, M).
struct Found {
  std::string scores;
  std::vector<float> keep;
  ir::Shape shape;
};

std::optional<Found> match_add(const ir::Graph& graph, const ir::Op& add) {
  for (int slot : {1, 0}) {
    const auto* values = payload(graph, add.inputs[slot]);
    if (!values) continue;
    Found found{add.inputs[1 - slot], {}, graph.tensor(add.inputs[slot]).shape};
    for (float v : *values) {
      if (v != 0.0f && !masks(v)) return std::nullopt;
      found.keep.push_back(v == 0.0f ? 1.0f : 0.0f);
    }
    return found;
  }
  return std::nullopt;
}

std::optional<Found> match_where(const ir::Graph& graph, const ir::Op& where) {
  const auto* cond = payload(graph, where.inputs[0]);
  if (!cond) return std::nullopt;
  for (int slot : {2, 1}) {
    const auto* fill = payload(graph, where.inputs[slot]);
    if (!fill) continue;
    bool all_mask = true;
    for (float v : *fill) all_mask = all_mask && masks(v);
    if (!all_mask) continue;
    // Where(cond, scores, fill) keeps where cond holds; Where(cond, fill, scores) where not.
    Found found{where.inputs[slot == 2 ? 1 : 2], {}, graph.tensor(where.inputs[0]).shape};
    for (float c : *cond) found.keep.push_back((c != 0.0f) == (slot == 2) ? 1.0f : 0.0f);
    return found;
  }
  return std::nullopt;
}

std::optional<detail::Rewrite> match_masked_softmax(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& softmax = graph.op(id);
  if (softmax.kind != OpKind::Softmax || softmax.inputs.size() != 1) return std::nullopt;
  const std::string& masked = softmax.inputs[0];
  const auto producer = graph.producer(masked);
  if (!producer || detail::sole_reader(graph, masked) != id) return std::nullopt;
  const ir::Op& op = graph.op(*producer);
  std::optional<Found> found;
  if (op.kind == OpKind::Add) found = match_add(graph, op);
  if (op.kind == OpKind::Where) found = match_where(graph, op);
  if (!found || !detail::same_shape(graph, found->scores, masked) ||
      graph.tensor(found->scores).dtype != ir::DType::f32 || graph.tensor(found->scores).constant ||
      masks_a_whole_row(found->keep, found->shape, graph.tensor(masked).shape.size(),
                        softmax.get_int("axis")))
    return std::nullopt;
  detail::Rewrite rewrite;
  rewrite.removed = {*producer, id};
  const std::string mask = graph.unique_name(softmax.name + ".mask");
  rewrite.constants.push_back(detail::make_constant(mask, found->shape, std::move(found->keep)));
  rewrite.replacement =
      ir::Op{softmax.name, OpKind::Softmax, {found->scores, mask}, softmax.outputs, softmax.attrs};
  return rewrite;
}

Status run_fuse_attention_mask(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_masked_softmax);
}

}  // namespace

const PassInfo& fuse_attention_mask_pass() {
  static const PassInfo info{
      "fuse-attention-mask",
      "Softmax(Add(s, M)) with M of 0 and -inf (or <= -1e4), or Softmax(Where(c, s, -inf)) -> "
      "Softmax(s, mask)",
      run_fuse_attention_mask};
  return info;
}

}  // namespace tessel::passes
