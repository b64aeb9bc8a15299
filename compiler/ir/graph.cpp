// Graph construction, lookup, rewriting and validation.
#include "compiler/ir/graph.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "compiler/ir/analysis.hpp"

namespace tessel::ir {

Result<OpId> Graph::add_input(const std::string& name, Shape shape, DType dtype) {
  if (has_tensor(name) || op_by_name_.count(name)) {
    return fail("input %" + name + ": name already used");
  }
  Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  tensor.dtype = dtype;
  tensors_.emplace(name, std::move(tensor));
  Op op;
  op.name = name;
  op.kind = OpKind::Input;
  op.outputs = {name};
  return add_op(std::move(op));
}

Status Graph::add_constant(Tensor tensor) {
  if (has_tensor(tensor.name)) return fail("constant %" + tensor.name + ": name already used");
  if (tensor.has_data() && tensor.has_shape()) {
    const auto count = static_cast<std::size_t>(element_count(tensor.shape));
    if ((!tensor.f32_values.empty() && tensor.f32_values.size() != count) ||
        (!tensor.int_values.empty() && tensor.int_values.size() != count)) {
      return fail("constant %" + tensor.name + ": payload has " +
                  std::to_string(std::max(tensor.f32_values.size(), tensor.int_values.size())) +
                  " values but shape " + shape_string(tensor.shape) + " holds " +
                  std::to_string(count));
    }
  }
  tensor.constant = true;
  const std::string name = tensor.name;
  tensors_.emplace(name, std::move(tensor));
  return {};
}

Status Graph::declare_tensor(Tensor tensor) {
  if (has_tensor(tensor.name)) return fail("tensor %" + tensor.name + ": name already used");
  const std::string name = tensor.name;
  tensors_.emplace(name, std::move(tensor));
  return {};
}

Result<OpId> Graph::add_op(Op op) {
  const std::string where = "%" + op.name + " (" + std::string(to_string(op.kind)) + ")";
  if (op.name.empty())
    return fail("op of kind " + std::string(to_string(op.kind)) + " has no name");
  if (op_by_name_.count(op.name)) return fail(where + ": op name already used");
  const OpSchema& entry = schema(op.kind);
  const auto num_inputs = static_cast<int>(op.inputs.size());
  const auto num_outputs = static_cast<int>(op.outputs.size());
  if (num_inputs < entry.min_inputs || (entry.max_inputs >= 0 && num_inputs > entry.max_inputs)) {
    return fail(where + ": takes " + std::to_string(entry.min_inputs) +
                (entry.max_inputs == entry.min_inputs ? ""
                 : entry.max_inputs < 0               ? " or more"
                                                      : ".." + std::to_string(entry.max_inputs)) +
                " inputs, got " + std::to_string(num_inputs));
  }
  if (num_outputs < entry.min_outputs ||
      (entry.max_outputs >= 0 && num_outputs > entry.max_outputs)) {
    return fail(where + ": has the wrong number of outputs (" + std::to_string(num_outputs) + ")");
  }
  for (const std::string& input : op.inputs) {
    if (!has_tensor(input)) return fail(where + ": input %" + input + " is not defined");
  }
  for (const std::string& output : op.outputs) {
    if (producer_.count(output)) {
      return fail(where + ": output %" + output + " is already produced by %" +
                  graph_[producer_.at(output)].name);
    }
    if (has_tensor(output) && tensor(output).constant) {
      return fail(where + ": output %" + output + " is a constant");
    }
  }
  auto attrs = complete_attrs(op.kind, std::move(op.attrs));
  if (!attrs) return fail(where + ": " + attrs.reason());
  op.attrs = std::move(attrs).value();

  // An op can read a tensor only once it exists, so only an output that existed before this
  // call (declared, or left by a removed producer) can have readers added earlier. Checking
  // that keeps building a graph in order linear (issue 41: a 100,000-op chain).
  const bool outputs_existed =
      std::any_of(op.outputs.begin(), op.outputs.end(),
                  [&](const std::string& output) { return has_tensor(output); });
  for (const std::string& output : op.outputs) {
    if (!has_tensor(output)) {
      Tensor tensor;
      tensor.name = output;
      tensors_.emplace(output, std::move(tensor));
    }
  }
  const OpId id = boost::add_vertex(op, graph_);
  op_by_name_.emplace(op.name, id);
  for (const std::string& output : graph_[id].outputs) producer_.emplace(output, id);
  connect_inputs(id);
  // Ops added earlier may read this op's outputs (graphs are built in any order).
  for (OpId other = 0; outputs_existed && other < id; ++other) {
    const Op& reader = graph_[other];
    for (std::size_t slot = 0; slot < reader.inputs.size(); ++slot) {
      if (producer_.count(reader.inputs[slot]) && producer_.at(reader.inputs[slot]) == id) {
        boost::add_edge(id, other, EdgeData{reader.inputs[slot], static_cast<int>(slot)}, graph_);
      }
    }
  }
  return id;
}

void Graph::connect_inputs(OpId id) {
  const std::vector<std::string> inputs = graph_[id].inputs;
  for (std::size_t slot = 0; slot < inputs.size(); ++slot) {
    const auto it = producer_.find(inputs[slot]);
    if (it == producer_.end()) continue;
    boost::add_edge(it->second, id, EdgeData{inputs[slot], static_cast<int>(slot)}, graph_);
  }
}

std::optional<OpId> Graph::find_op(std::string_view name) const {
  const auto it = op_by_name_.find(std::string(name));
  if (it == op_by_name_.end()) return std::nullopt;
  return it->second;
}

bool Graph::has_tensor(std::string_view name) const {
  return tensors_.find(name) != tensors_.end();
}

const Tensor& Graph::tensor(std::string_view name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::out_of_range("no tensor %" + std::string(name));
  return it->second;
}

Tensor& Graph::tensor_mut(std::string_view name) {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::out_of_range("no tensor %" + std::string(name));
  return it->second;
}

std::optional<OpId> Graph::producer(std::string_view tensor) const {
  const auto it = producer_.find(std::string(tensor));
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

std::vector<Use> Graph::consumers(std::string_view tensor) const {
  std::vector<Use> uses;
  for (OpId id = 0; id < num_ops(); ++id) {
    const Op& reader = graph_[id];
    for (std::size_t slot = 0; slot < reader.inputs.size(); ++slot) {
      if (reader.inputs[slot] == tensor) uses.push_back({id, static_cast<int>(slot)});
    }
  }
  return uses;
}

std::vector<OpId> Graph::successors(OpId id) const {
  std::set<OpId> result;
  for (auto [it, end] = boost::out_edges(id, graph_); it != end; ++it) {
    result.insert(boost::target(*it, graph_));
  }
  return {result.begin(), result.end()};
}

std::vector<OpId> Graph::predecessors(OpId id) const {
  std::set<OpId> result;
  for (auto [it, end] = boost::in_edges(id, graph_); it != end; ++it) {
    result.insert(boost::source(*it, graph_));
  }
  return {result.begin(), result.end()};
}

std::vector<OpId> Graph::inputs() const {
  std::vector<OpId> result;
  for (OpId id = 0; id < num_ops(); ++id) {
    if (graph_[id].kind == OpKind::Input) result.push_back(id);
  }
  return result;
}

Status Graph::set_outputs(std::vector<std::string> outputs) {
  for (const std::string& output : outputs) {
    if (!has_tensor(output)) return fail("graph output %" + output + " is not defined");
  }
  outputs_ = std::move(outputs);
  return {};
}

Status Graph::set_input(OpId id, int index, const std::string& tensor_name) {
  Op& target = graph_[id];
  if (index < 0 || static_cast<std::size_t>(index) >= target.inputs.size()) {
    return fail("%" + target.name + ": no input slot " + std::to_string(index));
  }
  if (!has_tensor(tensor_name))
    return fail("%" + target.name + ": input %" + tensor_name + " is not defined");
  boost::remove_in_edge_if(
      id, [&](const auto& edge) { return graph_[edge].input_index == index; }, graph_);
  target.inputs[static_cast<std::size_t>(index)] = tensor_name;
  const auto it = producer_.find(tensor_name);
  if (it != producer_.end()) boost::add_edge(it->second, id, EdgeData{tensor_name, index}, graph_);
  return {};
}

Status Graph::append_input(OpId id, const std::string& tensor_name) {
  Op& target = graph_[id];
  const OpSchema& entry = schema(target.kind);
  if (entry.max_inputs >= 0 && static_cast<int>(target.inputs.size()) >= entry.max_inputs) {
    return fail("%" + target.name + " (" + std::string(entry.name) + "): already has " +
                std::to_string(target.inputs.size()) + " inputs");
  }
  if (!has_tensor(tensor_name)) {
    return fail("%" + target.name + ": input %" + tensor_name + " is not defined");
  }
  target.inputs.push_back(tensor_name);
  const int index = static_cast<int>(target.inputs.size()) - 1;
  const auto it = producer_.find(tensor_name);
  if (it != producer_.end()) boost::add_edge(it->second, id, EdgeData{tensor_name, index}, graph_);
  return {};
}

Status Graph::replace_all_uses(const std::string& from, const std::string& to) {
  if (!has_tensor(to)) return fail("replace_all_uses: %" + to + " is not defined");
  for (const Use& use : consumers(from)) {
    Status status = set_input(use.op, use.input_index, to);
    if (!status) return status;
  }
  for (std::string& output : outputs_) {
    if (output == from) output = to;
  }
  return {};
}

void Graph::remove_ops(std::vector<OpId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<Op> kept;
  for (OpId id = 0; id < num_ops(); ++id) {
    if (!std::binary_search(ids.begin(), ids.end(), id)) kept.push_back(graph_[id]);
  }
  graph_.clear();
  for (Op& op : kept) boost::add_vertex(std::move(op), graph_);
  rebuild();
}

Status Graph::sort_topologically() {
  return sort_topologically(std::vector<bool>(num_ops()));
}

Status Graph::sort_topologically(const std::vector<bool>& eager) {
  // boost::topological_sort follows DFS finishing order, which scatters the creation order;
  // this renumbering keeps it wherever dependences allow.
  const std::size_t n = num_ops();
  std::vector<std::size_t> waiting(n, 0);
  for (OpId id = 0; id < n; ++id) waiting[id] = predecessors(id).size();
  std::set<OpId> ready, ready_eager;
  auto make_ready = [&](OpId id) { (eager.at(id) ? ready_eager : ready).insert(id); };
  for (OpId id = 0; id < n; ++id) {
    if (waiting[id] == 0) make_ready(id);
  }
  std::vector<OpId> order;
  while (!ready.empty() || !ready_eager.empty()) {
    std::set<OpId>& from = ready_eager.empty() ? ready : ready_eager;
    const OpId id = *from.begin();
    from.erase(from.begin());
    order.push_back(id);
    for (OpId next : successors(id)) {
      if (--waiting[next] == 0) make_ready(next);
    }
  }
  if (order.size() != n) {
    auto cyclic = topological_order(*this);
    return fail(cyclic ? "cycle" : cyclic.reason());
  }
  std::vector<Op> sorted;
  sorted.reserve(n);
  for (OpId id : order) sorted.push_back(graph_[id]);
  graph_.clear();
  for (Op& op : sorted) boost::add_vertex(std::move(op), graph_);
  rebuild();
  return {};
}

void Graph::rebuild() {
  op_by_name_.clear();
  producer_.clear();
  for (OpId id = 0; id < num_ops(); ++id) {
    op_by_name_.emplace(graph_[id].name, id);
    for (const std::string& output : graph_[id].outputs) producer_.emplace(output, id);
  }
  for (OpId id = 0; id < num_ops(); ++id) connect_inputs(id);
}

std::size_t Graph::remove_unused_tensors() {
  std::set<std::string, std::less<>> used(outputs_.begin(), outputs_.end());
  for (OpId id = 0; id < num_ops(); ++id) {
    used.insert(graph_[id].inputs.begin(), graph_[id].inputs.end());
    used.insert(graph_[id].outputs.begin(), graph_[id].outputs.end());
  }
  std::size_t removed = 0;
  for (auto it = tensors_.begin(); it != tensors_.end();) {
    if (used.count(it->first)) {
      ++it;
    } else {
      it = tensors_.erase(it);
      ++removed;
    }
  }
  return removed;
}

std::string Graph::unique_name(std::string_view base) const {
  const std::string stem(base);
  auto taken = [&](const std::string& name) {
    return has_tensor(name) || op_by_name_.count(name) != 0;
  };
  if (!taken(stem)) return stem;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = stem + "." + std::to_string(suffix);
    if (!taken(candidate)) return candidate;
  }
}

bool operator==(const Graph& a, const Graph& b) {
  if (a.name_ != b.name_ || a.tensors_ != b.tensors_ || a.outputs_ != b.outputs_ ||
      a.num_ops() != b.num_ops()) {
    return false;
  }
  for (OpId id = 0; id < a.num_ops(); ++id) {
    if (!(a.graph_[id] == b.graph_[id])) return false;
  }
  return true;
}

std::vector<std::string> validation_errors(const Graph& graph) {
  std::vector<std::string> errors;
  for (const auto& cycle : cycles(graph)) {
    std::string names;
    for (OpId id : cycle) names += (names.empty() ? "%" : ", %") + graph.op(id).name;
    errors.push_back("cycle among ops: " + names);
  }
  std::set<std::string, std::less<>> read(graph.outputs().begin(), graph.outputs().end());
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    const std::string where = "%" + op.name + " (" + std::string(to_string(op.kind)) + ")";
    for (const std::string& input : op.inputs) {
      read.insert(input);
      const Tensor& value = graph.tensor(input);
      if (!value.constant && !graph.producer(input)) {
        errors.push_back(where + ": input %" + input + " is never produced");
      }
    }
    auto attrs = complete_attrs(op.kind, op.attrs);
    if (!attrs) errors.push_back(where + ": " + attrs.reason());
  }
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    for (const std::string& output : op.outputs) {
      if (!read.count(output) && op.outputs.size() == 1) {
        errors.push_back("%" + op.name + " (" + std::string(to_string(op.kind)) + "): result %" +
                         output + " is dangling (never read, not an output)");
      }
    }
  }
  for (const std::string& output : graph.outputs()) {
    const Tensor& value = graph.tensor(output);
    if (!value.constant && !graph.producer(output)) {
      errors.push_back("graph output %" + output + " is never produced");
    }
  }
  if (graph.outputs().empty()) errors.push_back("graph has no outputs");
  return errors;
}

Status validate(const Graph& graph) {
  const auto errors = validation_errors(graph);
  if (errors.empty()) return {};
  std::string message;
  for (const std::string& error : errors) message += (message.empty() ? "" : "\n") + error;
  return fail(message);
}

std::int64_t parameter_count(const Graph& graph) {
  // BatchNorm running statistics are buffers in PyTorch, not parameters.
  std::set<std::string, std::less<>> statistics;
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::BatchNormalization) {
      statistics.insert(op.inputs[3]);
      statistics.insert(op.inputs[4]);
    }
  }
  std::int64_t count = 0;
  for (const auto& [name, value] : graph.tensors()) {
    if (value.constant && value.has_shape() && !statistics.count(name)) {
      count += element_count(value.shape);
    }
  }
  return count;
}

}  // namespace tessel::ir
