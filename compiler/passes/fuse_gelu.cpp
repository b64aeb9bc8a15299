// Pass fuse-gelu: the Erf and Tanh decompositions of GELU that torch writes before opset 20
// become one Gelu op (approximate "none" / "tanh"), a single 256-entry table on integers.
#include <cmath>
#include <numbers>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using detail::near;
using detail::other_operand;
using detail::produced_by;
using detail::scalar_constant;
using detail::sole_reader;
using ir::OpKind;

/// A binary op `id` of `kind` with one scalar-constant operand near `value` (exactly `value`
/// when `exact`): the other operand, else nullopt.
std::optional<std::string> operand_beside(const ir::Graph& graph, ir::OpId id, OpKind kind,
                                          double value, bool exact = false) {
  const ir::Op& op = graph.op(id);
  if (op.kind != kind) return std::nullopt;
  for (int slot : {1, 0}) {
    if (kind == OpKind::Div && slot == 0) break;  // Div(c, x) is not x / c
    const auto c = scalar_constant(graph, op.inputs[slot]);
    if (c && (exact ? *c == value : near(*c, value))) return op.inputs[1 - slot];
  }
  return std::nullopt;
}

/// The removed ops and result of x * t * 0.5 from t = 1 + f(x) on: Mul(Mul(x, t), 0.5) (torch's
/// F.gelu), Mul(Mul(t, 0.5), x), or Mul(Mul(x, 0.5), t) (HF's `x * 0.5 * (1 + ...)`), in any
/// operand order.
std::optional<std::pair<std::vector<ir::OpId>, std::string>> match_half_product(
    const ir::Graph& graph, const std::string& x, const std::string& t) {
  const auto m1 = sole_reader(graph, t);
  if (!m1 || graph.op(*m1).kind != OpKind::Mul) return std::nullopt;
  const std::string& m1_out = graph.op(*m1).outputs[0];
  const auto other = other_operand(graph.op(*m1), t);
  if (!other) return std::nullopt;
  std::optional<std::pair<std::vector<ir::OpId>, std::string>> found;
  if (*other == x || scalar_constant(graph, *other) == 0.5) {
    const auto m2 = sole_reader(graph, m1_out);
    if (!m2 || graph.op(*m2).kind != OpKind::Mul) return std::nullopt;
    const auto last = other_operand(graph.op(*m2), m1_out);
    const bool completes = *other == x ? last && scalar_constant(graph, *last) == 0.5 : last == x;
    if (completes) found = {{*m1, *m2}, graph.op(*m2).outputs[0]};
  } else if (const auto h = produced_by(graph, *other, OpKind::Mul)) {
    if (sole_reader(graph, *other) == *m1 && operand_beside(graph, *h, OpKind::Mul, 0.5, true) == x)
      found = {{*h, *m1}, m1_out};
  }
  if (found && !detail::same_shape(graph, x, found->second)) return std::nullopt;
  return found;
}

/// x / sqrt(2) as Div(x, 1.4142135) or Mul(x, 0.70710678): x.
std::optional<std::string> match_scaled_input(const ir::Graph& graph, ir::OpId id) {
  if (auto x = operand_beside(graph, id, OpKind::Div, std::numbers::sqrt2)) return x;
  return operand_beside(graph, id, OpKind::Mul, 1.0 / std::numbers::sqrt2);
}

/// x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x): the ops and x.
std::optional<std::pair<std::vector<ir::OpId>, std::string>> match_cube(const ir::Graph& graph,
                                                                        ir::OpId id) {
  const ir::Op& op = graph.op(id);
  if (auto x = operand_beside(graph, id, OpKind::Pow, 3.0, true))
    return std::pair{std::vector<ir::OpId>{id}, *x};
  if (op.kind != OpKind::Mul) return std::nullopt;
  for (int slot : {1, 0}) {
    const auto square = produced_by(graph, op.inputs[slot], OpKind::Mul);
    const std::string& x = op.inputs[1 - slot];
    if (square && sole_reader(graph, op.inputs[slot]) == id &&
        graph.op(*square).inputs == std::vector<std::string>{x, x})
      return std::pair{std::vector<ir::OpId>{*square, id}, x};
  }
  return std::nullopt;
}

/// sqrt(2/pi) * (x + 0.044715 * x^3) feeding the Tanh: the ops and x.
std::optional<std::pair<std::vector<ir::OpId>, std::string>> match_tanh_argument(
    const ir::Graph& graph, const std::string& argument) {
  const auto scale = graph.producer(argument);
  if (!scale) return std::nullopt;
  const auto sum = operand_beside(graph, *scale, OpKind::Mul, std::sqrt(2.0 / std::numbers::pi));
  const auto add = sum ? produced_by(graph, *sum, OpKind::Add) : std::nullopt;
  if (!add || sole_reader(graph, *sum) != *scale) return std::nullopt;
  for (int slot : {1, 0}) {
    const std::string& x = graph.op(*add).inputs[1 - slot];
    const std::string& term = graph.op(*add).inputs[slot];
    const auto kappa = graph.producer(term);
    if (!kappa || sole_reader(graph, term) != *add) continue;
    const auto cube = operand_beside(graph, *kappa, OpKind::Mul, 0.044715);
    const auto cube_id = cube ? graph.producer(*cube) : std::nullopt;
    if (!cube_id || sole_reader(graph, *cube) != *kappa) continue;
    auto cubed = match_cube(graph, *cube_id);
    if (!cubed || cubed->second != x) continue;
    cubed->first.insert(cubed->first.end(), {*kappa, *add, *scale});
    return cubed;
  }
  return std::nullopt;
}

std::optional<detail::Rewrite> match_gelu(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& f = graph.op(id);
  if (f.kind != OpKind::Erf && f.kind != OpKind::Tanh) return std::nullopt;
  if (sole_reader(graph, f.inputs[0]) != id) return std::nullopt;
  std::optional<std::pair<std::vector<ir::OpId>, std::string>> argument;
  if (f.kind == OpKind::Erf) {
    if (const auto scaled = graph.producer(f.inputs[0]))
      if (auto x = match_scaled_input(graph, *scaled))
        argument = std::pair{std::vector<ir::OpId>{*scaled}, *x};
  } else {
    argument = match_tanh_argument(graph, f.inputs[0]);
  }
  if (!argument || graph.tensor(argument->second).dtype != ir::DType::f32) return std::nullopt;
  const auto plus_one = sole_reader(graph, f.outputs[0]);
  if (!plus_one || operand_beside(graph, *plus_one, OpKind::Add, 1.0, true) != f.outputs[0])
    return std::nullopt;
  const std::string& x = argument->second;
  const auto product = match_half_product(graph, x, graph.op(*plus_one).outputs[0]);
  if (!product) return std::nullopt;
  detail::Rewrite rewrite;
  rewrite.removed = argument->first;
  rewrite.removed.insert(rewrite.removed.end(), {id, *plus_one});
  rewrite.removed.insert(rewrite.removed.end(), product->first.begin(), product->first.end());
  const std::string name = graph.op(rewrite.removed.back()).name;  // writes the product
  rewrite.replacement =
      ir::Op{name,
             OpKind::Gelu,
             {x},
             {product->second},
             {{"approximate", std::string(f.kind == OpKind::Erf ? "none" : "tanh")}}};
  return rewrite;
}

Status run_fuse_gelu(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_gelu);
}

}  // namespace

const PassInfo& fuse_gelu_pass() {
  static const PassInfo info{
      "fuse-gelu",
      "x * 0.5 * (1 + Erf(x / sqrt 2)) -> Gelu; 0.5 x (1 + Tanh(sqrt(2/pi)(x + 0.044715 x^3))) -> "
      "Gelu(tanh)",
      run_fuse_gelu};
  return info;
}

}  // namespace tessel::passes
