// Pass fold-constant-adds: two constants added one after the other become one constant added
// once. Two rewrites, applied until neither matches:
//  - Add(Add(x, c1), c2) -> Add(x, c1 + c2) (the sum broadcast as NumPy does);
//  - Reshape(Add(Reshape(y), c)) back to y's shape -> Add(y, c') with c' the constant broadcast
//    to the Add's shape and read in y's shape (a reshape keeps the row-major order).
// Swin's shifted windows add the relative-position bias [1, H, S, S] to the scores [B, H, S,
// S], view them as [B / nW, nW, H, S, S] to add the shift mask [1, nW, 1, S, S] and view them
// back: one Add of one [B, H, S, S] constant after this pass, which the accelerator path reads
// as a head view (no 5-D tensor). (x + c1) + c2 and x + (c1 + c2) differ by float rounding
// only (docs/quantization.md, "Graph preparation"); the integer path then quantizes one
// constant and one sum instead of two.
#include <string>
#include <vector>

#include "compiler/passes/fold_constant_adds.hpp"

#include "compiler/ir/shape_rules.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

/// The largest constant the pass writes (elements): past it, the two adds stay.
constexpr std::int64_t kMaxFoldedElements = std::int64_t{1} << 24;

/// The f32 payload of constant `name`, or nullptr (an activation, no payload).
const std::vector<float>* summand_values(const ir::Graph& g, const std::string& name) {
  const ir::Tensor& t = g.tensor(name);
  if (!t.constant || t.dtype != ir::DType::f32 ||
      static_cast<std::int64_t>(t.f32_values.size()) != ir::element_count(t.shape))
    return nullptr;
  return &t.f32_values;
}

/// `values` of shape `from` broadcast (NumPy, right-aligned) to `to`, row-major.
std::vector<float> broadcast_summand(const std::vector<float>& values, const ir::Shape& from,
                                     const ir::Shape& to) {
  const std::size_t rank = to.size(), lead = rank - from.size();
  std::vector<std::int64_t> stride(rank, 0);  // element stride of `values` along each axis of `to`
  std::int64_t run = 1;
  for (std::size_t a = rank; a-- > lead;) {
    if (from[a - lead] != 1) stride[a] = run;
    run *= from[a - lead];
  }
  std::vector<float> out(static_cast<std::size_t>(ir::element_count(to)));
  std::vector<std::int64_t> index(rank, 0);
  for (float& v : out) {
    std::int64_t at = 0;
    for (std::size_t a = 0; a < rank; ++a) at += index[a] * stride[a];
    v = values[static_cast<std::size_t>(at)];
    for (std::size_t a = rank; a-- > 0;) {
      if (++index[a] < to[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

/// For an Add of an activation and an f32 constant: the constant's input slot (0 or 1).
std::optional<std::size_t> summand_slot(const ir::Graph& g, const ir::Op& add) {
  if (add.kind != OpKind::Add || add.inputs.size() != 2) return std::nullopt;
  for (std::size_t c = 0; c < 2; ++c)
    if (summand_values(g, add.inputs[c]) && !g.tensor(add.inputs[1 - c]).constant) return c;
  return std::nullopt;
}

/// Add(Add(x, c1), c2) -> Add(x, c1 + c2).
std::optional<detail::Rewrite> match_add_add(const ir::Graph& g, ir::OpId id) {
  const ir::Op& outer = g.op(id);
  const auto c2 = summand_slot(g, outer);
  if (!c2) return std::nullopt;
  const std::string& t = outer.inputs[1 - *c2];
  const auto inner_id = detail::produced_by(g, t, OpKind::Add);
  if (!inner_id || !detail::sole_reader(g, t)) return std::nullopt;
  const ir::Op& inner = g.op(*inner_id);
  const auto c1 = summand_slot(g, inner);
  if (!c1) return std::nullopt;
  const ir::Tensor& k1 = g.tensor(inner.inputs[*c1]);
  const ir::Tensor& k2 = g.tensor(outer.inputs[*c2]);
  auto shape = ir::broadcast_shapes(k1.shape, k2.shape);
  if (!shape.ok() || ir::element_count(shape.value()) > kMaxFoldedElements) return std::nullopt;
  std::vector<float> sum = broadcast_summand(k1.f32_values, k1.shape, shape.value());
  const std::vector<float> b = broadcast_summand(k2.f32_values, k2.shape, shape.value());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += b[i];
  detail::Rewrite rewrite;
  const std::string name = g.unique_name(k1.name + ".plus." + k2.name);
  rewrite.constants.push_back(detail::make_constant(name, shape.value(), std::move(sum)));
  rewrite.removed = {*inner_id, id};
  rewrite.replacement =
      ir::Op{outer.name, OpKind::Add, {inner.inputs[1 - *c1], name}, outer.outputs, {}};
  return rewrite;
}

/// Reshape(Add(Reshape(y), c)) back to y's shape -> Add(y, c broadcast and read in y's shape).
std::optional<detail::Rewrite> match_viewed_add(const ir::Graph& g, ir::OpId id) {
  const ir::Op& back = g.op(id);
  if (back.kind != OpKind::Reshape) return std::nullopt;
  const auto add_id = detail::produced_by(g, back.inputs[0], OpKind::Add);
  if (!add_id || !detail::sole_reader(g, back.inputs[0])) return std::nullopt;
  const ir::Op& add = g.op(*add_id);
  const auto c = summand_slot(g, add);
  if (!c) return std::nullopt;
  const std::string& viewed = add.inputs[1 - *c];
  const auto front_id = detail::produced_by(g, viewed, OpKind::Reshape);
  if (!front_id || !detail::sole_reader(g, viewed)) return std::nullopt;
  const std::string& y = g.op(*front_id).inputs[0];
  const ir::Shape& sum_shape = g.tensor(add.outputs[0]).shape;
  // The Add may not broadcast the activation itself (the constant only), and the view returns.
  if (g.tensor(y).shape != g.tensor(back.outputs[0]).shape || g.tensor(viewed).shape != sum_shape ||
      ir::element_count(sum_shape) > kMaxFoldedElements)
    return std::nullopt;
  const ir::Tensor& k = g.tensor(add.inputs[*c]);
  detail::Rewrite rewrite;
  const std::string name = g.unique_name(k.name + ".viewed");
  rewrite.constants.push_back(detail::make_constant(
      name, g.tensor(y).shape, broadcast_summand(k.f32_values, k.shape, sum_shape)));
  rewrite.removed = {*front_id, *add_id, id};
  rewrite.replacement = ir::Op{back.name, OpKind::Add, {y, name}, back.outputs, {}};
  return rewrite;
}

Status run_fold_constant_adds(ir::Graph& graph) {
  return detail::rewrite_all(graph, [](const ir::Graph& g, ir::OpId id) {
    if (auto r = match_viewed_add(g, id)) return r;
    return match_add_add(g, id);
  });
}

}  // namespace

bool fold_constant_adds_applies(const ir::Graph& graph) {
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (match_viewed_add(graph, id) || match_add_add(graph, id)) return true;
  return false;
}

const PassInfo& fold_constant_adds_pass() {
  static const PassInfo info{
      "fold-constant-adds",
      "Add(Add(x, c1), c2) -> Add(x, c1 + c2); Reshape(Add(Reshape(y), c)) back to y's shape -> "
      "Add(y, c') (Swin's shift mask on its biased scores)",
      run_fold_constant_adds};
  return info;
}

}  // namespace tessel::passes
