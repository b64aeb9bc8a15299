// Pass fuse-silu: x * Sigmoid(x) becomes Silu and x * HardSigmoid(x) (alpha 1/6, beta 1/2)
// becomes HardSwish, each one table on integers instead of a table and a product.
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

std::optional<detail::Rewrite> match_gate(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& gate = graph.op(id);
  OpKind fused = OpKind::Silu;
  if (gate.kind == OpKind::HardSigmoid) {
    // HardSwish(x) = x * clamp(x / 6 + 1/2, 0, 1): exporters write alpha as the float 1/6.
    if (!detail::near(gate.get_float("alpha"), 1.0 / 6.0) || gate.get_float("beta") != 0.5)
      return std::nullopt;
    fused = OpKind::HardSwish;
  } else if (gate.kind != OpKind::Sigmoid) {
    return std::nullopt;
  }
  const std::string& x = gate.inputs[0];
  const auto mul = detail::sole_reader(graph, gate.outputs[0]);
  if (!mul || graph.op(*mul).kind != OpKind::Mul ||
      detail::other_operand(graph.op(*mul), gate.outputs[0]) != x)
    return std::nullopt;
  const ir::Op& product = graph.op(*mul);
  if (!detail::same_shape(graph, x, product.outputs[0]) || graph.tensor(x).dtype != ir::DType::f32)
    return std::nullopt;
  detail::Rewrite rewrite;
  rewrite.removed = {id, *mul};
  rewrite.replacement = ir::Op{product.name, fused, {x}, product.outputs, {}};
  return rewrite;
}

Status run_fuse_silu(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_gate);
}

}  // namespace

const PassInfo& fuse_silu_pass() {
  static const PassInfo info{"fuse-silu",
                             "Mul(x, Sigmoid(x)) -> Silu; Mul(x, HardSigmoid(x)) with alpha 1/6, "
                             "beta 1/2 -> HardSwish",
                             run_fuse_silu};
  return info;
}

}  // namespace tessel::passes
