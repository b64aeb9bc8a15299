// Pass fuse-layernorm: the decompositions exporters write for LayerNorm and RMSNorm become
// LayerNormalization and RMSNormalization, which the integer path computes with int64 sums and
// an integer rsqrt (docs/quantization.md) and which it could not assemble from the pieces (a
// Div by an activation, a Pow of one).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "compiler/ir/shape_rules.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using detail::other_operand;
using detail::produced_by;
using detail::sole_reader;
using ir::OpKind;

/// The trailing axes a ReduceMean with keepdims=1 reduces: their count, or 0 when the op keeps
/// no dims or reduces other axes (the normalised dims must be the last ones).
std::size_t trailing_mean_axes(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& op = graph.op(id);
  const ir::Shape& x = graph.tensor(op.inputs[0]).shape;
  if (op.kind != OpKind::ReduceMean || op.get_int("keepdims") != 1 || x.empty()) return 0;
  auto axes = ir::reduce_axes(op, x.size());
  if (!axes || axes.value().empty()) return 0;
  const auto& a = axes.value();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != static_cast<std::int64_t>(x.size() - a.size() + i)) return 0;
  }
  return a.size();
}

/// The epsilon an exporter meant: its double (1e-5) rounded to the float constant it wrote;
/// the shortest decimal that rounds to that float gives it back (1e-05, not 9.99999974738e-06).
double intended(double float_value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(float_value));
  double value = float_value;
  std::from_chars(buffer, end.ptr, value);
  return value;
}

/// What the match has found so far.
struct Norm {
  std::string input;  ///< x
  std::size_t axes = 0;
  double epsilon = 0.0;
  bool centred = false;  ///< LayerNorm (x - mean) rather than RMSNorm
  std::vector<ir::OpId> removed;
  std::string result;
  std::optional<std::string> scale, bias;
};

/// For the squaring op that reads `d`: Pow(d, 2) or Mul(d, d).
bool squares(const ir::Graph& graph, const ir::Op& op, const std::string& d) {
  if (op.kind == OpKind::Mul) return op.inputs[0] == d && op.inputs[1] == d;
  if (op.kind != OpKind::Pow || op.inputs[0] != d) return false;
  const auto exponent = detail::scalar_constant(graph, op.inputs[1]);
  return exponent && *exponent == 2.0;
}

/// From Sqrt(Add(ReduceMean(square(d)), eps)) at `sqrt_id` back to d; fills norm.axes and
/// norm.epsilon and returns d, or nullopt.
std::optional<std::string> match_root(const ir::Graph& graph, ir::OpId sqrt_id, Norm& norm) {
  const ir::Op& sqrt = graph.op(sqrt_id);
  const auto add_id = produced_by(graph, sqrt.inputs[0], OpKind::Add);
  if (!add_id || sole_reader(graph, sqrt.inputs[0]) != sqrt_id) return std::nullopt;
  const ir::Op& add = graph.op(*add_id);
  for (int eps_slot : {1, 0}) {
    const auto eps = detail::scalar_constant(graph, add.inputs[eps_slot]);
    if (!eps || !(*eps >= 0.0) || !std::isfinite(*eps)) continue;
    const std::string& var = add.inputs[1 - eps_slot];
    const auto mean_id = produced_by(graph, var, OpKind::ReduceMean);
    if (!mean_id || sole_reader(graph, var) != *add_id ||
        !detail::same_shape(graph, var, add.outputs[0]))
      continue;
    norm.axes = trailing_mean_axes(graph, *mean_id);
    const std::string& square = graph.op(*mean_id).inputs[0];
    const auto square_id = graph.producer(square);
    if (!norm.axes || !square_id || sole_reader(graph, square) != *mean_id) return std::nullopt;
    const ir::Op& sq = graph.op(*square_id);
    const std::string d = sq.inputs[0];
    if (!squares(graph, sq, d) || !detail::same_shape(graph, d, square)) return std::nullopt;
    norm.epsilon = intended(*eps);
    norm.removed = {*square_id, *mean_id, *add_id, sqrt_id};
    return d;
  }
  return std::nullopt;
}

/// d / s as Div(d, s), Mul(d, Reciprocal(s)) or Mul(d, Div(1, s)); returns the normalised
/// tensor and adds its ops to norm.removed.
std::optional<std::string> match_divide(const ir::Graph& graph, const std::string& d,
                                        const std::string& s, Norm& norm) {
  const auto reader = sole_reader(graph, s);
  if (!reader) return std::nullopt;
  const ir::Op& op = graph.op(*reader);
  if (op.kind == OpKind::Div && op.inputs[0] == d && op.inputs[1] == s) {
    norm.removed.push_back(*reader);
    return op.outputs[0];
  }
  const bool reciprocal =
      op.kind == OpKind::Reciprocal || (op.kind == OpKind::Div && op.inputs[1] == s &&
                                        detail::scalar_constant(graph, op.inputs[0]) == 1.0);
  if (!reciprocal) return std::nullopt;
  const auto mul = sole_reader(graph, op.outputs[0]);
  if (!mul || graph.op(*mul).kind != OpKind::Mul ||
      other_operand(graph.op(*mul), op.outputs[0]) != d)
    return std::nullopt;
  norm.removed.push_back(*reader);
  norm.removed.push_back(*mul);
  return graph.op(*mul).outputs[0];
}

/// The constant operand of a Mul/Add that alone reads `value`, when it broadcasts over the
/// normalised dims only (every dim before them 1) and does not widen `value`.
std::optional<ir::OpId> affine_step(const ir::Graph& graph, const std::string& value, OpKind kind,
                                    std::size_t axes, std::string& constant) {
  const auto reader = sole_reader(graph, value);
  if (!reader || graph.op(*reader).kind != kind) return std::nullopt;
  const ir::Op& op = graph.op(*reader);
  const auto other = other_operand(op, value);
  if (!other || !graph.tensor(*other).constant || !detail::same_shape(graph, value, op.outputs[0]))
    return std::nullopt;
  const ir::Shape& c = graph.tensor(*other).shape;
  const ir::Shape& x = graph.tensor(value).shape;
  if (c.empty() || c.size() > x.size() || graph.tensor(*other).dtype != ir::DType::f32)
    return std::nullopt;
  for (std::size_t d = 0; d + axes < x.size(); ++d) {
    // dim d of x, aligned with dim d - (x.size() - c.size()) of the constant
    if (d + c.size() >= x.size() && c[d + c.size() - x.size()] != 1) return std::nullopt;
  }
  constant = *other;
  return reader;
}

/// The constant `name` as the normalised dims `dims` hold it: itself when its shape is `dims`
/// or [n]; else a new constant with the values broadcast (payload-less stays payload-less).
std::string as_normalised(const ir::Graph& graph, const std::optional<std::string>& name,
                          const ir::Shape& dims, float fill, const std::string& new_name,
                          std::vector<ir::Tensor>& constants) {
  const std::int64_t n = ir::element_count(dims);
  if (name) {
    const ir::Tensor& c = graph.tensor(*name);
    if (c.shape == dims || c.shape == ir::Shape{n}) return *name;
  }
  std::vector<float> values;
  if (!name) {
    values.assign(static_cast<std::size_t>(n), fill);
  } else if (!graph.tensor(*name).f32_values.empty()) {
    const ir::Tensor& c = graph.tensor(*name);
    const ir::Shape trailing(c.shape.end() - std::min(c.shape.size(), dims.size()), c.shape.end());
    const auto strides = ir::broadcast_strides(trailing, dims);
    values.resize(static_cast<std::size_t>(n));
    std::vector<std::int64_t> index(dims.size(), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < dims.size(); ++d) at += index[d] * strides[d];
      values[static_cast<std::size_t>(i)] = c.f32_values[static_cast<std::size_t>(at)];
      for (std::size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
  }
  const std::string unique = graph.unique_name(new_name);
  constants.push_back(detail::make_constant(unique, dims, std::move(values)));
  return unique;
}

std::optional<detail::Rewrite> match_norm(const ir::Graph& graph, ir::OpId sqrt_id) {
  if (graph.op(sqrt_id).kind != OpKind::Sqrt) return std::nullopt;
  Norm norm;
  const auto d = match_root(graph, sqrt_id, norm);
  if (!d || graph.tensor(*d).dtype != ir::DType::f32) return std::nullopt;
  const auto normalised = match_divide(graph, *d, graph.op(sqrt_id).outputs[0], norm);
  if (!normalised) return std::nullopt;
  const ir::OpId square_id = norm.removed[0], norm_id = norm.removed.back();
  norm.input = *d;
  // A centred input, Sub(x, ReduceMean(x)) over the same axes, is a LayerNorm of x; when it
  // cannot be absorbed (another reader) the whole pattern stays rather than becoming an RMSNorm
  // of the difference.
  if (const auto sub_id = produced_by(graph, *d, OpKind::Sub)) {
    const ir::Op& sub = graph.op(*sub_id);
    const auto mean_id = produced_by(graph, sub.inputs[1], OpKind::ReduceMean);
    if (mean_id && graph.op(*mean_id).inputs[0] == sub.inputs[0]) {
      const auto d_readers = detail::readers(graph, *d);
      const std::set<ir::OpId> want = {square_id, norm_id}, got(d_readers.begin(), d_readers.end());
      if (trailing_mean_axes(graph, *mean_id) != norm.axes ||
          sole_reader(graph, sub.inputs[1]) != *sub_id || got != want ||
          detail::is_graph_output(graph, *d) || !detail::same_shape(graph, *d, sub.inputs[0]))
        return std::nullopt;
      norm.centred = true;
      norm.input = sub.inputs[0];
      norm.removed.insert(norm.removed.begin(), {*mean_id, *sub_id});
    }
  }
  norm.result = *normalised;
  std::string constant;
  if (auto mul = affine_step(graph, norm.result, OpKind::Mul, norm.axes, constant)) {
    norm.scale = constant;
    norm.removed.push_back(*mul);
    norm.result = graph.op(*mul).outputs[0];
  }
  if (norm.centred) {
    if (auto add = affine_step(graph, norm.result, OpKind::Add, norm.axes, constant)) {
      norm.bias = constant;
      norm.removed.push_back(*add);
      norm.result = graph.op(*add).outputs[0];
    }
  }
  const ir::Shape& x = graph.tensor(norm.input).shape;
  const ir::Shape dims(x.end() - static_cast<std::ptrdiff_t>(norm.axes), x.end());
  const std::string name = graph.op(norm.removed.back()).name;
  detail::Rewrite rewrite;
  rewrite.removed = norm.removed;
  std::vector<std::string> inputs = {
      norm.input, as_normalised(graph, norm.scale, dims, 1.0f, name + ".scale", rewrite.constants)};
  if (norm.centred)
    inputs.push_back(
        as_normalised(graph, norm.bias, dims, 0.0f, name + ".bias", rewrite.constants));
  rewrite.replacement =
      ir::Op{name,
             norm.centred ? OpKind::LayerNormalization : OpKind::RMSNormalization,
             inputs,
             {norm.result},
             {{"axis", -static_cast<std::int64_t>(norm.axes)}, {"epsilon", norm.epsilon}}};
  return rewrite;
}

Status run_fuse_layernorm(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_norm);
}

}  // namespace

const PassInfo& fuse_layernorm_pass() {
  static const PassInfo info{
      "fuse-layernorm",
      "ReduceMean/Sub/Pow/Sqrt/Div chains -> LayerNormalization, Pow/ReduceMean/Sqrt/Reciprocal/"
      "Mul -> RMSNormalization",
      run_fuse_layernorm};
  return info;
}

}  // namespace tessel::passes
