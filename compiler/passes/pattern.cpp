// Pattern helpers: constant operands, single readers, and applying rewrites.
#include "compiler/passes/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace tessel::passes::detail {

std::optional<double> scalar_constant(const ir::Graph& graph, const std::string& tensor) {
  const ir::Tensor& t = graph.tensor(tensor);
  if (!t.constant || t.dtype != ir::DType::f32 || t.f32_values.size() != 1) return std::nullopt;
  return double{t.f32_values[0]};
}

bool near(double value, double expected, double tolerance) {
  return std::abs(value - expected) <= tolerance * std::abs(expected);
}

std::optional<ir::OpId> produced_by(const ir::Graph& graph, const std::string& tensor,
                                    ir::OpKind kind) {
  const auto id = graph.producer(tensor);
  if (!id || graph.op(*id).kind != kind) return std::nullopt;
  return id;
}

bool is_graph_output(const ir::Graph& graph, const std::string& tensor) {
  const auto& outputs = graph.outputs();
  return std::find(outputs.begin(), outputs.end(), tensor) != outputs.end();
}

std::vector<ir::OpId> readers(const ir::Graph& graph, const std::string& tensor) {
  std::vector<ir::OpId> ids;
  for (const ir::Use& use : graph.consumers(tensor)) {
    if (ids.empty() || ids.back() != use.op) ids.push_back(use.op);
  }
  return ids;
}

std::optional<ir::OpId> sole_reader(const ir::Graph& graph, const std::string& tensor) {
  const auto ids = readers(graph, tensor);
  if (ids.size() != 1 || is_graph_output(graph, tensor)) return std::nullopt;
  return ids[0];
}

std::optional<std::string> other_operand(const ir::Op& op, const std::string& operand) {
  if (op.inputs.size() != 2) return std::nullopt;
  if (op.inputs[0] == operand) return op.inputs[1];
  if (op.inputs[1] == operand) return op.inputs[0];
  return std::nullopt;
}

bool same_shape(const ir::Graph& graph, const std::string& a, const std::string& b) {
  const ir::Shape& sa = graph.tensor(a).shape;
  return !sa.empty() && sa == graph.tensor(b).shape;
}

ir::Tensor make_constant(const std::string& name, ir::Shape shape, std::vector<float> values) {
  ir::Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  tensor.constant = true;
  tensor.f32_values = std::move(values);
  return tensor;
}

Status apply_rewrite(ir::Graph& graph, Rewrite rewrite) {
  for (ir::Tensor& constant : rewrite.constants) {
    if (Status s = graph.add_constant(std::move(constant)); !s) return s;
  }
  graph.remove_ops(rewrite.removed);
  if (auto added = graph.add_op(std::move(rewrite.replacement)); !added) return added.failure();
  return {};
}

Status place_new_ops(ir::Graph& graph, const std::set<std::string>& added) {
  if (added.empty()) return {};
  graph.remove_unused_tensors();
  std::vector<bool> eager(graph.num_ops(), false);
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) eager[id] = added.count(graph.op(id).name) > 0;
  return graph.sort_topologically(eager);
}

Status rewrite_all(ir::Graph& graph, const Matcher& match) {
  std::set<std::string> added;
  // Restart the scan after each rewrite: removing ops renumbers them, and a rewrite may enable
  // or disable a match elsewhere. Patterns are a handful of ops per transformer layer, so the
  // scans cost far less than the rest of preparing a graph.
  for (ir::OpId id = 0; id < graph.num_ops();) {
    auto rewrite = match(graph, id);
    if (!rewrite) {
      ++id;
      continue;
    }
    const std::string name = rewrite->replacement.name;
    if (Status s = apply_rewrite(graph, std::move(*rewrite)); !s)
      return fail("%" + name + ": " + s.reason());
    added.insert(name);
    id = 0;
  }
  return place_new_ops(graph, added);
}

}  // namespace tessel::passes::detail
