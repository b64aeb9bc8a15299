// Pass fuse-l2-normalize: torch's F.normalize(x, dim=-1), exported as
// Div(x, Expand(Clip(ReduceL2(x), min=eps))) (the importer writes ReduceL2 as
// Sqrt(ReduceSum(x * x))), becomes RMSNormalization(x, w) over the last axis with w = 1/sqrt(n)
// and epsilon eps^2 / n: x / sqrt(sum x^2) = (x / sqrt(mean x^2)) / sqrt(n). The clamp at eps
// and the epsilon differ only where the row's norm is below eps (1e-12 by default): a row of
// zeros, 0 either way. The integer path has RMSNormalization (swin_v2's cosine attention
// normalises q and k) and no division of two activations.
#include <algorithm>
#include <cmath>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

std::optional<detail::Rewrite> match_normalize(const ir::Graph& g, ir::OpId id) {
  const ir::Op& div = g.op(id);
  if (div.kind != OpKind::Div || g.tensor(div.inputs[0]).dtype != ir::DType::f32)
    return std::nullopt;
  const std::string& x = div.inputs[0];
  const ir::Shape& shape = g.tensor(x).shape;
  if (shape.empty()) return std::nullopt;
  std::vector<ir::OpId> removed;
  std::string norm = div.inputs[1];
  // Backwards from the divisor: [Expand] <- Clip(min = eps) <- Sqrt <- ReduceSum <- Mul(x, x).
  const auto sole = [&](const std::string& t, OpKind kind) -> std::optional<ir::OpId> {
    const auto op = detail::produced_by(g, t, kind);
    if (!op || !detail::sole_reader(g, t)) return std::nullopt;
    removed.push_back(*op);
    return op;
  };
  if (detail::produced_by(g, norm, OpKind::Expand)) {
    const auto expand = sole(norm, OpKind::Expand);
    if (!expand) return std::nullopt;
    norm = g.op(*expand).inputs[0];
  }
  const auto clip = sole(norm, OpKind::Clip);
  if (!clip) return std::nullopt;
  const ir::Op& clamp = g.op(*clip);
  const double eps = clamp.get_float("min");
  // No upper bound: the attribute's default, the largest float.
  if (clamp.inputs.size() != 1 || !(eps >= 0.0) || eps > 1e-6 || clamp.get_float("max") < 3.4e38)
    return std::nullopt;
  const auto sqrt = sole(clamp.inputs[0], OpKind::Sqrt);
  if (!sqrt) return std::nullopt;
  const auto sum = sole(g.op(*sqrt).inputs[0], OpKind::ReduceSum);
  if (!sum) return std::nullopt;
  const ir::Op& reduce = g.op(*sum);
  const auto& axes = reduce.get_ints("axes");
  const auto last = static_cast<std::int64_t>(shape.size()) - 1;
  if (axes.size() != 1 || (axes[0] != last && axes[0] != -1) || reduce.get_int("keepdims") != 1)
    return std::nullopt;
  const auto square = sole(reduce.inputs[0], OpKind::Mul);
  if (!square) return std::nullopt;
  const ir::Op& mul = g.op(*square);
  if (mul.inputs[0] != x || mul.inputs[1] != x || !detail::same_shape(g, x, div.outputs[0]))
    return std::nullopt;
  const std::int64_t n = shape.back();
  detail::Rewrite rewrite;
  const std::string weight = g.unique_name(div.name + ".norm_scale");
  rewrite.constants.push_back(
      detail::make_constant(weight, {n},
                            std::vector<float>(static_cast<std::size_t>(n),
                                               static_cast<float>(1.0 / std::sqrt(double(n))))));
  std::reverse(removed.begin(), removed.end());  // pattern order: Mul first, Div last
  removed.push_back(id);
  rewrite.removed = removed;
  rewrite.replacement =
      ir::Op{div.name,
             OpKind::RMSNormalization,
             {x, weight},
             div.outputs,
             {{"axis", ir::AttrValue(last)}, {"epsilon", ir::AttrValue(eps * eps / double(n))}}};
  return rewrite;
}

Status run_fuse_l2_normalize(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_normalize);
}

}  // namespace

const PassInfo& fuse_l2_normalize_pass() {
  static const PassInfo info{
      "fuse-l2-normalize",
      "x / max(||x||_2, eps) over the last axis (F.normalize) -> RMSNormalization with weight "
      "1/sqrt(n)",
      run_fuse_l2_normalize};
  return info;
}

}  // namespace tessel::passes
