// Pass div-by-constant: Div(x, c) with a constant c becomes Mul(x, 1/c), the form the integer
// path has (a broadcast Mul with requantize; it has no integer division). Exact when every
// element of c is a power of two; otherwise x * fl(1/c) may differ from fl(x / c) by one float
// rounding, so the pass belongs to the quantization pipeline only (passes/policy_graph.hpp).
#include <cmath>
#include <map>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

/// 1/c elementwise when every element is finite, nonzero and has a finite reciprocal;
/// an empty vector for a payload-less constant (a structural rewrite); nullopt otherwise.
std::optional<std::vector<float>> reciprocals(const ir::Tensor& divisor) {
  std::vector<float> values;
  values.reserve(divisor.f32_values.size());
  for (float c : divisor.f32_values) {
    const float r = 1.0f / c;
    if (!std::isfinite(c) || c == 0.0f || !std::isfinite(r)) return std::nullopt;
    values.push_back(r);
  }
  return values;
}

Status run_div_by_constant(ir::Graph& graph) {
  std::map<std::string, std::string> reciprocal_of;  // divisor -> its reciprocal constant
  return detail::rewrite_all(
      graph, [&](const ir::Graph& g, ir::OpId id) -> std::optional<detail::Rewrite> {
        const ir::Op& div = g.op(id);
        if (div.kind != OpKind::Div) return std::nullopt;
        const ir::Tensor& divisor = g.tensor(div.inputs[1]);
        if (!divisor.constant || divisor.dtype != ir::DType::f32 ||
            (divisor.f32_values.empty() && divisor.elided_digest))
          return std::nullopt;
        detail::Rewrite rewrite;
        auto known = reciprocal_of.find(divisor.name);
        if (known == reciprocal_of.end() || !g.has_tensor(known->second)) {
          auto values = reciprocals(divisor);
          if (!values) return std::nullopt;
          const std::string name = g.unique_name(divisor.name + ".reciprocal");
          rewrite.constants.push_back(detail::make_constant(name, divisor.shape, *values));
          known = reciprocal_of.insert_or_assign(divisor.name, name).first;
        }
        rewrite.removed = {id};
        rewrite.replacement =
            ir::Op{div.name, OpKind::Mul, {div.inputs[0], known->second}, div.outputs, {}};
        return rewrite;
      });
}

}  // namespace

const PassInfo& div_by_constant_pass() {
  static const PassInfo info{
      "div-by-constant",
      "Div(x, c) with a constant c -> Mul(x, 1/c) (exact for powers of two; else one rounding)",
      run_div_by_constant};
  return info;
}

}  // namespace tessel::passes
