// The ONNX importer's core: graph checks (SSA, undefined inputs, cycles, liveness), graph
// inputs and outputs, constants, the node helpers every converter uses, and the dispatch table.
#include "compiler/frontend/importer.hpp"

#include "support/cancel.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <queue>

#include "compiler/ir/shape_inference.hpp"
#include "support/diagnostic.hpp"
#include "support/strings.hpp"

namespace tessel::frontend::detail {
namespace {

constexpr std::int64_t kMinOpset = 11;
constexpr std::int64_t kMaxOpset = 20;

std::string attribute_type_name(onnx::AttributeProto_AttributeType type) {
  return onnx::AttributeProto_AttributeType_Name(type);
}

/// "has N elements" past kMaxTensorElements (the product checked step by step, never wrapping).
std::optional<std::string> over_element_limit(const ir::Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (d > 0 && count > kMaxTensorElements / d) {
      return "shape " + ir::shape_string(shape) + " has more than " +
             std::to_string(kMaxTensorElements) + " elements (4 GiB of float32, the import limit)";
    }
    if (d > 0) count *= d;
  }
  return std::nullopt;
}

}  // namespace

std::string in_quotes(std::string_view text) {
  return "'" + std::string(text) + "'";
}

std::string ints_string(const Ints& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

void Importer::fail(const std::string& where, const std::string& what) const {
  throw_input_error(SourceLocation{source_, 0, 0}, where, what);
}

std::string Importer::node_where(int index) const {
  const onnx::NodeProto& n = graph_proto_->node(index);
  std::string where = "node " + std::to_string(index);
  if (!n.name().empty()) where += " " + in_quotes(n.name());
  return where + " (" + n.op_type() + ")";
}

// --- graph-level steps --------------------------------------------------------------------

ir::Graph Importer::run(const onnx::ModelProto& model, std::string graph_name) {
  if (!model.has_graph()) {
    fail("model", "has no graph (field 7); is this an ONNX model?");
  }
  graph_proto_ = &model.graph();
  if (graph_proto_->node_size() > kMaxNodes) {
    fail("graph", "has " + std::to_string(graph_proto_->node_size()) +
                      " nodes, over the limit of " + std::to_string(kMaxNodes));
  }
  graph_ = ir::Graph(std::move(graph_name));
  read_opset(model);
  if (graph_proto_->sparse_initializer_size() > 0) {
    fail("graph", "sparse initializers are not supported");
  }
  collect_constants();
  add_graph_inputs();
  if (graph_proto_->output_size() == 0) fail("graph", "has no outputs");
  for (int index : live_nodes_in_order()) {
    if (absorbed_.count(index)) continue;
    if (cancel_requested()) throw CancelledError();  // Ctrl-C in tessel.load_model
    node_ = index;
    if (!try_fold()) convert(index);
  }
  node_ = -1;
  set_graph_outputs();
  graph_.remove_unused_tensors();
  if (auto status = ir::validate(graph_); !status) fail("graph", status.reason());
  return std::move(graph_);
}

void Importer::read_opset(const onnx::ModelProto& model) {
  bool found = false;
  for (const auto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") {
      opset_ = entry.version();
      found = true;
    }
  }
  if (!found) fail("opset_import", "declares no opset for the default ONNX domain");
  if (opset_ < kMinOpset || opset_ > kMaxOpset) {
    fail("opset_import", "opset " + std::to_string(opset_) + " is not supported (Tessel imports " +
                             std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  }
}

void Importer::collect_constants() {
  for (int i = 0; i < graph_proto_->initializer_size(); ++i) {
    const onnx::TensorProto& tensor = graph_proto_->initializer(i);
    const std::string origin = "initializer " + std::to_string(i) + " " + in_quotes(tensor.name());
    if (tensor.name().empty()) fail("initializer " + std::to_string(i), "has no name");
    if (values_.count(tensor.name())) fail(origin, "name is used by an earlier initializer");
    values_[tensor.name()] = Value{tensor.name(), &tensor, {}, origin};
  }
}

void Importer::add_graph_inputs() {
  std::vector<std::string> input_names;
  for (int i = 0; i < graph_proto_->input_size(); ++i) {
    const onnx::ValueInfoProto& input = graph_proto_->input(i);
    if (values_.count(input.name())) continue;  // an initializer listed as input (IR < 4)
    input_names.push_back(input.name());
  }
  for (const auto& [name, shape] : options_.input_shapes) {
    if (std::find(input_names.begin(), input_names.end(), name) == input_names.end()) {
      std::string known;
      for (const auto& n : input_names) known += (known.empty() ? "" : ", ") + n;
      fail("--input-shape", in_quotes(name) + " is not a graph input (inputs: " +
                                (known.empty() ? std::string("none") : known) + ")" +
                                did_you_mean(name, input_names));
    }
  }
  int added = 0;
  for (int i = 0; i < graph_proto_->input_size(); ++i) {
    const onnx::ValueInfoProto& input = graph_proto_->input(i);
    if (values_.count(input.name())) continue;
    const std::string where = "graph input " + std::to_string(i) + " " + in_quotes(input.name());
    if (input.name().empty()) fail("graph input " + std::to_string(i), "has no name");
    if (!input.type().has_tensor_type()) fail(where, "is not a tensor");
    const auto& tensor_type = input.type().tensor_type();
    // Token ids (INT64 or INT32) are i32 activations that only an Embedding may read
    // (data_input refuses any other reader).
    const bool ids = tensor_type.elem_type() == onnx::TensorProto_DataType_INT64 ||
                     tensor_type.elem_type() == onnx::TensorProto_DataType_INT32;
    if (tensor_type.elem_type() != onnx::TensorProto_DataType_FLOAT && !ids) {
      fail(where, "has element type " + data_type_name(tensor_type.elem_type()) +
                      "; Tessel imports float (FLOAT) inputs and integer token ids (INT64, INT32)");
    }
    const auto override_it = options_.input_shapes.find(input.name());
    const ir::Shape* override_shape =
        override_it == options_.input_shapes.end() ? nullptr : &override_it->second;
    ir::Shape shape;
    if (!tensor_type.has_shape()) {
      if (!override_shape) {
        fail(where, "has no shape; give one with --input-shape " + input.name() + ":1x3x224x224");
      }
      shape = *override_shape;
    } else {
      const auto& dims = tensor_type.shape().dim();
      if (override_shape && override_shape->size() != static_cast<std::size_t>(dims.size())) {
        fail(where, "--input-shape gives rank " + std::to_string(override_shape->size()) +
                        " but the model declares rank " + std::to_string(dims.size()));
      }
      for (int d = 0; d < dims.size(); ++d) {
        const auto& dim = dims[d];
        if (dim.has_dim_value()) {
          if (dim.dim_value() <= 0) {
            fail(where, "dimension " + std::to_string(d) + " is " +
                            std::to_string(dim.dim_value()) + "; dimensions must be positive");
          }
          if (override_shape && (*override_shape)[d] != dim.dim_value()) {
            fail(where, "--input-shape gives dimension " + std::to_string(d) + " as " +
                            std::to_string((*override_shape)[d]) + " but the model fixes it to " +
                            std::to_string(dim.dim_value()));
          }
          shape.push_back(dim.dim_value());
        } else if (override_shape) {
          shape.push_back((*override_shape)[d]);
        } else {
          const std::string label =
              dim.has_dim_param() ? " (" + in_quotes(dim.dim_param()) + ")" : std::string();
          fail(where, "dimension " + std::to_string(d) + label +
                          " is dynamic; fix it with --input-shape " + input.name() + ":" +
                          "<d0>x<d1>x...");
        }
      }
    }
    if (shape.empty()) fail(where, "is a scalar; the IR has no rank-0 tensors");
    if (auto over = over_element_limit(shape)) fail(where, *over);
    auto added_input = graph_.add_input(input.name(), shape, ids ? ir::DType::i32 : ir::DType::f32);
    if (!added_input) fail(where, added_input.reason());
    values_[input.name()] = Value{input.name(), nullptr, {}, where};
    ++added;
  }
  if (added == 0) fail("graph", "has no inputs (every graph input is an initializer)");
}

std::vector<int> Importer::live_nodes_in_order() {
  const int count = graph_proto_->node_size();
  // Producers, SSA, and Constant nodes as values.
  for (int i = 0; i < count; ++i) {
    const onnx::NodeProto& n = graph_proto_->node(i);
    for (int slot = 0; slot < n.output_size(); ++slot) {
      const std::string& out = n.output(slot);
      if (out.empty()) continue;
      if (auto it = producer_.find(out); it != producer_.end()) {
        fail(node_where(i),
             "output " + in_quotes(out) + " is already produced by " + node_where(it->second));
      }
      if (values_.count(out)) {
        fail(node_where(i),
             "output " + in_quotes(out) + " has the name of a graph input or initializer");
      }
      producer_[out] = i;
    }
  }
  // Liveness: nodes whose results reach a graph output.
  std::vector<bool> live(static_cast<std::size_t>(count), false);
  std::vector<int> work;
  for (int i = 0; i < graph_proto_->output_size(); ++i) {
    const std::string& name = graph_proto_->output(i).name();
    graph_output_names_.insert(name);
    if (auto it = producer_.find(name); it != producer_.end()) {
      work.push_back(it->second);
    } else if (!values_.count(name)) {
      fail("graph output " + std::to_string(i) + " " + in_quotes(name),
           "is not produced by any node and is not a graph input or initializer");
    }
  }
  while (!work.empty()) {
    const int i = work.back();
    work.pop_back();
    if (live[static_cast<std::size_t>(i)]) continue;
    live[static_cast<std::size_t>(i)] = true;
    for (const std::string& in : graph_proto_->node(i).input()) {
      if (auto it = producer_.find(in); it != producer_.end()) work.push_back(it->second);
    }
  }
  // Undefined inputs, readers, and in-degrees among live nodes.
  std::vector<int> pending(static_cast<std::size_t>(count), 0);
  std::vector<std::vector<int>> successors(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    const onnx::NodeProto& n = graph_proto_->node(i);
    for (int slot = 0; slot < n.input_size(); ++slot) {
      const std::string& in = n.input(slot);
      if (in.empty()) continue;  // an omitted optional input
      readers_[in].push_back(i);
      if (auto it = producer_.find(in); it != producer_.end()) {
        ++pending[static_cast<std::size_t>(i)];
        successors[static_cast<std::size_t>(it->second)].push_back(i);
      } else if (!values_.count(in)) {
        fail(node_where(i), "input " + std::to_string(slot) + " " + in_quotes(in) +
                                " is not defined (no initializer, graph input or node output "
                                "has that name)");
      }
    }
  }
  // Kahn's algorithm, lowest node index first: the file's order when it is already sorted.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  int live_count = 0;
  for (int i = 0; i < count; ++i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    ++live_count;
    if (pending[static_cast<std::size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int next : successors[static_cast<std::size_t>(i)]) {
      if (--pending[static_cast<std::size_t>(next)] == 0) ready.push(next);
    }
  }
  if (static_cast<int>(order.size()) != live_count) {
    // Every node left has an unfinished producer; walking producers from the lowest one must
    // revisit a node: that loop is a cycle.
    int start = -1;
    for (int i = 0; i < count && start < 0; ++i) {
      if (live[static_cast<std::size_t>(i)] && pending[static_cast<std::size_t>(i)] > 0) start = i;
    }
    std::vector<int> path;
    std::vector<int> position(static_cast<std::size_t>(count), -1);
    int current = start;
    while (position[static_cast<std::size_t>(current)] < 0) {
      position[static_cast<std::size_t>(current)] = static_cast<int>(path.size());
      path.push_back(current);
      int next = -1;
      for (const std::string& in : graph_proto_->node(current).input()) {
        auto it = producer_.find(in);
        if (it != producer_.end() && pending[static_cast<std::size_t>(it->second)] > 0) {
          next = it->second;
          break;
        }
      }
      current = next;
    }
    // path[position[current]..] is the cycle, each node reading the next one's output.
    std::vector<int> cycle(path.begin() + position[static_cast<std::size_t>(current)], path.end());
    std::reverse(cycle.begin(), cycle.end());  // producer -> consumer order
    const auto lowest = std::min_element(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), lowest, cycle.end());
    std::string chain;
    for (int i : cycle) chain += node_where(i) + " -> ";
    chain += node_where(cycle.front());
    fail(node_where(cycle.front()), "is on a cycle: " + chain);
  }
  return order;
}

void Importer::set_graph_outputs() {
  std::vector<std::string> outputs;
  for (int i = 0; i < graph_proto_->output_size(); ++i) {
    const onnx::ValueInfoProto& output = graph_proto_->output(i);
    const std::string where = "graph output " + std::to_string(i) + " " + in_quotes(output.name());
    const Value& value = values_.at(output.name());
    if (value.is_constant()) fail(where, "is a constant; there is nothing to compute");
    const ir::Shape inferred = shape_of(value.ir_name);
    if (output.type().has_tensor_type() && output.type().tensor_type().has_shape()) {
      const auto& dims = output.type().tensor_type().shape().dim();
      // A rank-0 output is the IR's [1] (the IR has no rank-0 tensors).
      const bool scalar = dims.empty() && inferred == ir::Shape{1};
      bool matches = scalar || dims.size() == static_cast<int>(inferred.size());
      for (int d = 0; matches && !scalar && d < dims.size(); ++d) {
        if (dims[d].has_dim_value() &&
            dims[d].dim_value() != inferred[static_cast<std::size_t>(d)]) {
          matches = false;
        }
      }
      if (!matches) {
        Ints declared;
        for (const auto& dim : dims) declared.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        fail(where, "is declared with shape " + ints_string(declared) + " but infers to " +
                        ir::shape_string(inferred));
      }
    }
    outputs.push_back(value.ir_name);
  }
  if (auto status = graph_.set_outputs(outputs); !status) fail("graph", status.reason());
}

// --- node helpers -------------------------------------------------------------------------

void Importer::check_attributes(std::initializer_list<std::string_view> allowed) const {
  for (const auto& attr : node().attribute()) {
    if (std::find(allowed.begin(), allowed.end(), attr.name()) == allowed.end()) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      fail_node("attribute " + in_quotes(attr.name()) + " is not defined for " + node().op_type() +
                did_you_mean(attr.name(), names));
    }
  }
}

const onnx::AttributeProto* Importer::attribute(std::string_view name,
                                                onnx::AttributeProto_AttributeType type) const {
  for (const auto& attr : node().attribute()) {
    if (attr.name() != name) continue;
    if (attr.type() != type) {
      fail_node("attribute " + in_quotes(name) + " must be " + attribute_type_name(type) +
                ", not " + attribute_type_name(attr.type()));
    }
    return &attr;
  }
  return nullptr;
}

std::int64_t Importer::attr_int(std::string_view name, std::int64_t fallback) const {
  const auto* attr = attribute(name, onnx::AttributeProto_AttributeType_INT);
  return attr ? attr->i() : fallback;
}

float Importer::attr_float(std::string_view name, float fallback) const {
  const auto* attr = attribute(name, onnx::AttributeProto_AttributeType_FLOAT);
  return attr ? attr->f() : fallback;
}

std::optional<Ints> Importer::attr_ints(std::string_view name) const {
  const auto* attr = attribute(name, onnx::AttributeProto_AttributeType_INTS);
  if (!attr) return std::nullopt;
  return Ints(attr->ints().begin(), attr->ints().end());
}

std::string Importer::attr_string(std::string_view name, std::string fallback) const {
  const auto* attr = attribute(name, onnx::AttributeProto_AttributeType_STRING);
  return attr ? attr->s() : fallback;
}

std::size_t Importer::input_count() const {
  return static_cast<std::size_t>(node().input_size());
}

bool Importer::has_input(int slot) const {
  return slot < node().input_size() && !node().input(slot).empty();
}

const Value& Importer::input_value(int slot) const {
  if (!has_input(slot)) fail_node("input " + std::to_string(slot) + " is missing");
  return values_.at(node().input(slot));
}

std::string Importer::data_input(int slot) {
  const Value& value = input_value(slot);
  if (value.is_constant()) return materialize(value);
  if (graph_.tensor(value.ir_name).dtype == ir::DType::i32) {
    fail_node("input " + std::to_string(slot) + " " + in_quotes(node().input(slot)) +
              " holds integer token ids; Tessel reads them only as the indices of a Gather from "
              "a constant table (an embedding)");
  }
  return value.ir_name;
}

ConstantData Importer::constant_input(int slot, std::string_view role) const {
  const Value& value = input_value(slot);
  if (!value.is_constant()) {
    fail_node(std::string(role) + " (input " + std::to_string(slot) + " " +
              in_quotes(node().input(slot)) +
              ") must be a constant (an initializer, a Constant node's output or a value "
              "computed from them)");
  }
  return value_data(value);
}

ir::Shape Importer::shape_of(const std::string& ir_name) const {
  return graph_.tensor(ir_name).shape;
}

void Importer::require_rank(int slot, std::size_t rank, std::string_view what) {
  const ir::Shape shape = input_shape(slot);
  if (shape.size() != rank) {
    fail_node(std::string(what) + " " + in_quotes(node().input(slot)) + " has shape " +
              ir::shape_string(shape) + "; expected rank " + std::to_string(rank));
  }
}

bool Importer::output_used(int slot) const {
  if (slot >= node().output_size() || node().output(slot).empty()) return false;
  const std::string& name = node().output(slot);
  return readers_.count(name) > 0 || graph_output_names_.count(name) > 0;
}

void Importer::expect_outputs(std::size_t max_used) {
  if (node().output_size() == 0 || node().output(0).empty()) fail_node("has no output");
  for (int slot = static_cast<int>(max_used); slot < node().output_size(); ++slot) {
    if (output_used(slot)) {
      fail_node("output " + std::to_string(slot) + " " + in_quotes(node().output(slot)) +
                " is read, but Tessel imports only the first " + std::to_string(max_used) +
                " output(s) of " + node().op_type());
    }
  }
}

Ints Importer::ints_input(int slot, std::string_view role) const {
  const ConstantData data = constant_input(slot, role);
  if (!data.is_float()) return data.ints;
  Ints out;
  for (float v : data.floats) {
    if (!std::isfinite(v) || std::fabs(v) > 9.2e18F ||
        v != static_cast<float>(static_cast<std::int64_t>(v))) {
      fail_node(std::string(role) + " (input " + std::to_string(slot) + ") holds " +
                std::to_string(v) + "; expected integers");
    }
    out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

void Importer::expect_inputs(std::size_t min, std::size_t max) const {
  const std::size_t n = input_count();
  if (n < min || n > max) {
    fail_node(
        "takes " +
        (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)) +
        " input(s), got " + std::to_string(n));
  }
  for (std::size_t slot = 0; slot < min; ++slot) {
    if (node().input(static_cast<int>(slot)).empty()) {
      fail_node("input " + std::to_string(slot) + " is required but empty");
    }
  }
}

ConstantData Importer::value_data(const Value& value) const {
  if (value.folded) return *value.folded;
  return decode(*value.proto, value.origin);
}

ir::Shape Importer::input_shape(int slot) const {
  const Value& value = input_value(slot);
  return value.is_constant() ? value_data(value).dims : shape_of(value.ir_name);
}

ConstantData Importer::decode(const onnx::TensorProto& tensor, const std::string& origin) const {
  auto data = decode_tensor(tensor);
  if (!data) fail(origin, data.reason());
  return std::move(data.value());
}

void Importer::define_folded(const std::string& onnx_name, ConstantData data) {
  values_[onnx_name] =
      Value{onnx_name, nullptr, std::make_shared<const ConstantData>(std::move(data)),
            node_where(node_) + " (evaluated at import)"};
}

std::string Importer::add_constant(const std::string& base, ConstantData data,
                                   const std::string& origin, bool exact_name) {
  if (!data.is_float()) {
    fail_node("constant " + in_quotes(base) + " (" + origin + ") has element type " +
              data_type_name(data.data_type) + " but is used as float data");
  }
  if (data.floats.empty()) {
    fail_node("constant " + in_quotes(base) + " (" + origin + ") has no elements");
  }
  ir::Tensor tensor;
  tensor.name = exact_name ? base : fresh_tensor_name(base);
  tensor.dtype = ir::DType::f32;
  tensor.shape = data.dims.empty() ? ir::Shape{1} : data.dims;  // the IR has no rank-0 tensors
  tensor.constant = true;
  tensor.f32_values = std::move(data.floats);
  const std::string name = tensor.name;
  if (auto status = graph_.add_constant(std::move(tensor)); !status) fail_node(status.reason());
  return name;
}

std::string Importer::materialize(const Value& value) {
  if (materialized_.count(value.ir_name)) return value.ir_name;
  if (graph_.has_tensor(value.ir_name)) {
    fail_node("constant " + in_quotes(value.ir_name) + " (" + value.origin +
              ") has the name of an IR tensor");
  }
  const std::string name = add_constant(value.ir_name, value_data(value), value.origin, true);
  materialized_.insert(name);
  return name;
}

std::string Importer::fresh_tensor_name(const std::string& base) const {
  std::string name = base;
  for (int suffix = 1; graph_.has_tensor(name) || values_.count(name) || producer_.count(name);
       ++suffix) {
    name = base + "." + std::to_string(suffix);
  }
  return name;
}

std::string Importer::op_name(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; graph_.find_op(name); ++suffix) {
    name = base + "." + std::to_string(suffix);
  }
  return name;
}

void Importer::check_op_budget() const {
  if (static_cast<std::int64_t>(graph_.num_ops()) >= kMaxImportedOps) {
    fail_node("the imported graph reaches " + std::to_string(kMaxImportedOps) +
              " IR ops, the import limit");
  }
}

void Importer::check_result_size(ir::OpId id) const {
  for (const std::string& out : graph_.op(id).outputs) {
    if (auto over = over_element_limit(shape_of(out))) {
      fail_node("result " + in_quotes(out) + ": " + *over);
    }
  }
}

void Importer::emit_multi(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                          const std::vector<std::string>& outputs) {
  check_op_budget();
  ir::Op op;
  op.name = op_name(node().name().empty() ? outputs.at(0) : node().name());
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = outputs;
  op.attrs = std::move(attrs);
  auto id = graph_.add_op(std::move(op));
  if (!id) fail_node(id.reason());
  if (auto status = ir::infer_shapes(graph_, id.value()); !status) {
    // The IR names the op as "%name (Kind): "; the node location already says so.
    std::string reason = status.reason();
    const std::string prefix = "%" + graph_.op(id.value()).name + " (";
    if (reason.rfind(prefix, 0) == 0) {
      if (auto colon = reason.find("): "); colon != std::string::npos) reason.erase(0, colon + 3);
    }
    fail_node(reason);
  }
  check_result_size(id.value());
  for (const std::string& out : outputs) values_[out] = Value{out, nullptr, {}, node_where(node_)};
}

void Importer::emit(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                    const std::string& onnx_output) {
  emit_multi(kind, std::move(inputs), std::move(attrs), {onnx_output});
}

std::string Importer::emit_temp(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                                const std::string& base) {
  check_op_budget();
  const std::string name = fresh_tensor_name(base);
  ir::Op op;
  op.name = op_name(name);
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = {name};
  op.attrs = std::move(attrs);
  auto id = graph_.add_op(std::move(op));
  if (!id) fail_node(id.reason());
  if (auto status = ir::infer_shapes(graph_, id.value()); !status) fail_node(status.reason());
  check_result_size(id.value());
  return name;
}

void Importer::check_window_values(std::string_view what, const Ints& values) const {
  for (std::int64_t v : values) {
    if (v > kMaxWindowValue) {
      fail_node(std::string(what) + " " + ints_string(values) + ": " + std::to_string(v) +
                " is over the limit of " + std::to_string(kMaxWindowValue));
    }
  }
}

std::int64_t Importer::normalize_axis(std::int64_t axis, std::size_t rank,
                                      std::string_view attr) const {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) {
    fail_node("attribute " + in_quotes(attr) + " is " + std::to_string(axis) + ", outside [-" +
              std::to_string(r) + ", " + std::to_string(r - 1) + "] for rank " + std::to_string(r));
  }
  return axis < 0 ? axis + r : axis;
}

// --- dispatch -----------------------------------------------------------------------------

bool Importer::try_fold() {
  const onnx::NodeProto& n = node();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  if (!can_evaluate(n.op_type())) return false;
  // Shape (and Size) of any tensor whose shape is known: every IR tensor's is.
  const bool shape_op = n.op_type() == "Shape" || n.op_type() == "Size";
  std::vector<ConstantInput> inputs;
  for (int slot = 0; slot < n.input_size(); ++slot) {
    if (n.input(slot).empty()) {
      inputs.push_back({});
      continue;
    }
    const Value& value = values_.at(n.input(slot));
    if (!value.is_constant()) {
      if (!(shape_op && slot == 0)) return false;
      const ir::Shape shape = shape_of(value.ir_name);
      inputs.push_back({true, ConstantData::of_floats(shape, std::vector<float>(1, 0.0F))});
      continue;
    }
    inputs.push_back({true, value_data(value)});
  }
  if (shape_op) {
    if (inputs.empty() || !inputs[0].present) fail_node("input 0 is missing");
    const Ints dims = inputs[0].data.dims;
    if (n.op_type() == "Shape") {
      check_attributes({"start", "end"});
      expect_outputs(1);
      auto value = shape_value(dims, n);
      if (!value) fail_node(value.reason());
      define_folded(n.output(0), std::move(value.value()));
    } else {
      check_attributes({});
      expect_outputs(1);
      std::int64_t count = 1;
      for (std::int64_t d : dims) count *= d;
      define_folded(n.output(0), ConstantData::of_ints({}, {count}));
    }
    return true;
  }
  if (n.op_type() == "Identity") return false;  // keeps the renamed-constant rule
  auto result = evaluate(n, opset_, inputs);
  if (!result) fail_node("evaluating it at import (every input is constant): " + result.reason());
  for (int slot = 0; slot < n.output_size(); ++slot) {
    define_folded(n.output(slot), std::move(result.value()[static_cast<std::size_t>(slot)]));
  }
  return true;
}

void Importer::convert(int index) {
  const onnx::NodeProto& n = graph_proto_->node(index);
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    fail_node("unsupported op type " + in_quotes(n.op_type()) + " from domain " +
              in_quotes(n.domain()));
  }
  const Converter converter = converter_for(n.op_type());
  if (!converter) fail_unsupported(n.op_type());
  (this->*converter)();
}

void Importer::fail_unsupported(const std::string& type) const {
  const std::vector<std::string> supported = supported_op_types();
  // Case-insensitive suggestion: "ReLU" is a likely spelling of "Relu".
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  std::vector<std::string> lowered;
  for (const auto& name : supported) lowered.push_back(lower(name));
  std::string suggestion;
  if (const auto match = closest_match(lower(type), lowered)) {
    const auto at = std::find(lowered.begin(), lowered.end(), *match) - lowered.begin();
    suggestion = "; did you mean " + in_quotes(supported[static_cast<std::size_t>(at)]) + "?";
  }
  fail_node("unsupported op type " + in_quotes(type) + suggestion);
}

const std::map<std::string, Importer::Converter, std::less<>>& Importer::converter_table() {
  using I = Importer;
  static const std::map<std::string, Importer::Converter, std::less<>> table = {
      {"Add", &I::convert_binary},
      {"AveragePool", &I::convert_averagepool},
      {"BatchNormalization", &I::convert_batchnorm},
      {"Cast", &I::convert_cast},
      {"Clip", &I::convert_clip},
      {"Concat", &I::convert_concat},
      {"Constant", &I::convert_constant},
      {"Conv", &I::convert_conv},
      {"Div", &I::convert_binary},
      {"Dropout", &I::convert_dropout},
      {"Einsum", &I::convert_einsum},
      {"Erf", &I::convert_unary},
      {"Exp", &I::convert_unary},
      {"Expand", &I::convert_expand},
      {"Flatten", &I::convert_flatten},
      {"Gather", &I::convert_gather},
      {"Gelu", &I::convert_unary},
      {"Gemm", &I::convert_gemm},
      {"GlobalAveragePool", &I::convert_global_average_pool},
      {"GRU", &I::convert_gru},
      {"HardSigmoid", &I::convert_unary},
      {"HardSwish", &I::convert_unary},
      {"Identity", &I::convert_identity},
      {"LayerNormalization", &I::convert_layernorm},
      {"LSTM", &I::convert_lstm},
      {"MatMul", &I::convert_matmul},
      {"MaxPool", &I::convert_maxpool},
      {"Mul", &I::convert_binary},
      {"Neg", &I::convert_unary},
      {"Pad", &I::convert_pad},
      {"Pow", &I::convert_binary},
      {"Reciprocal", &I::convert_unary},
      {"ReduceL2", &I::convert_reduce},
      {"ReduceMax", &I::convert_reduce},
      {"ReduceMean", &I::convert_reduce},
      {"ReduceSum", &I::convert_reduce},
      {"ReduceSumSquare", &I::convert_reduce},
      {"Relu", &I::convert_unary},
      {"Reshape", &I::convert_reshape},
      {"Resize", &I::convert_resize},
      {"Sigmoid", &I::convert_unary},
      {"Slice", &I::convert_slice},
      {"Softmax", &I::convert_softmax},
      {"Split", &I::convert_split},
      {"Sqrt", &I::convert_unary},
      {"Squeeze", &I::convert_squeeze},
      {"Sub", &I::convert_binary},
      {"Tanh", &I::convert_unary},
      {"Transpose", &I::convert_transpose},
      {"Trilu", &I::convert_trilu},
      {"Unsqueeze", &I::convert_unsqueeze},
      {"Where", &I::convert_where},
  };
  return table;
}

Importer::Converter Importer::converter_for(std::string_view op_type) {
  const auto& table = converter_table();
  const auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

std::vector<std::string> Importer::supported_op_types() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : converter_table()) names.push_back(name);
  return names;
}

}  // namespace tessel::frontend::detail
