// ONNX -> graph IR: protobuf parsing, graph checks, op-by-op translation with located errors.
#include "compiler/frontend/onnx_import.hpp"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <vector>

#include "compiler/frontend/protobuf_wire.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "support/diagnostic.hpp"
#include "support/strings.hpp"

namespace tessel::frontend {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr std::int64_t kMinOpset = 11;
constexpr std::int64_t kMaxOpset = 17;
// ONNX stores raw_data little-endian; the decoder copies it as is.
static_assert(std::endian::native == std::endian::little, "big-endian hosts need byte swaps");

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

std::string data_type_name(int data_type) {
  if (onnx::TensorProto_DataType_IsValid(data_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(data_type));
  }
  return "type " + std::to_string(data_type);
}

std::string attribute_type_name(onnx::AttributeProto_AttributeType type) {
  return onnx::AttributeProto_AttributeType_Name(type);
}

/// The decoded payload of an initializer or Constant node.
struct ConstantData {
  int data_type = 0;
  Ints dims;
  std::vector<float> floats;  ///< FLOAT and DOUBLE payloads
  Ints ints;                  ///< INT64 and INT32 payloads
};

/// What an ONNX value name stands for while importing.
struct Value {
  std::string ir_name;                          ///< the IR tensor (or constant to create)
  const onnx::TensorProto* constant = nullptr;  ///< set for initializers and Constant outputs
  std::string origin;                           ///< where a constant was defined, for messages
};

/// Imports one model; all state of a single import_onnx_bytes call.
class Importer {
 public:
  Importer(std::string source, const OnnxImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  ir::Graph run(const onnx::ModelProto& model, std::string graph_name);

 private:
  // --- diagnostics ------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw_input_error(SourceLocation{source_, 0, 0}, where, what);
  }
  std::string node_where(int index) const {
    const onnx::NodeProto& node = graph_proto_->node(index);
    std::string where = "node " + std::to_string(index);
    if (!node.name().empty()) where += " " + in_quotes(node.name());
    return where + " (" + node.op_type() + ")";
  }
  [[noreturn]] void fail_node(const std::string& what) const { fail(node_where(node_), what); }

  // --- graph-level steps --------------------------------------------------------------------
  void read_opset(const onnx::ModelProto& model);
  void collect_constants();
  void add_graph_inputs();
  std::vector<int> live_nodes_in_order();
  void convert(int index);
  void set_graph_outputs();

  // --- node helpers (operate on node_) ----------------------------------------------------
  const onnx::NodeProto& node() const { return graph_proto_->node(node_); }
  void check_attributes(std::initializer_list<std::string_view> allowed) const;
  const onnx::AttributeProto* attribute(std::string_view name,
                                        onnx::AttributeProto_AttributeType type) const;
  std::int64_t attr_int(std::string_view name, std::int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::optional<Ints> attr_ints(std::string_view name) const;
  std::string attr_string(std::string_view name, std::string fallback) const;

  std::size_t input_count() const;
  bool has_input(int slot) const;
  const Value& input_value(int slot) const;
  std::string data_input(int slot);  ///< IR tensor name (constants created)
  ConstantData constant_input(int slot, std::string_view role) const;
  ir::Shape shape_of(const std::string& ir_name) const;
  void require_rank(int slot, std::size_t rank, std::string_view what);
  void expect_outputs(std::size_t max_used);
  bool output_used(int slot) const;

  std::string materialize(const Value& value);
  ConstantData decode(const onnx::TensorProto& tensor, const std::string& origin) const;

  /// Adds the IR op for the current node, writing ONNX output `slot` 0, and infers its shape.
  void emit(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
            const std::string& onnx_output);
  std::string op_name();

  void convert_conv();
  void convert_pool(bool is_max);
  void convert_gemm();
  void convert_matmul();
  void convert_clip();
  void convert_batchnorm();
  void convert_concat();
  void convert_pad();
  void convert_flatten();
  void convert_reshape();
  void convert_softmax();
  void convert_dropout();
  void convert_constant();
  void alias_output_to_input();

  struct Window {
    Ints kernel, strides, dilations, pads;
  };
  Window read_window(const Ints& kernel_from_weight, bool allow_dilation);
  std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, std::string_view attr) const;

  std::string source_;
  const OnnxImportOptions& options_;
  const onnx::GraphProto* graph_proto_ = nullptr;
  std::int64_t opset_ = 0;
  ir::Graph graph_;
  int node_ = -1;  ///< the node being converted

  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> producer_;              ///< ONNX output -> node index
  std::unordered_map<std::string, std::vector<int>> readers_;  ///< among live nodes
  std::set<std::string, std::less<>> graph_output_names_;
  std::set<std::string, std::less<>> materialized_;
  std::set<int> absorbed_;  ///< nodes already folded into an earlier op (MatMul+Add)
  std::deque<onnx::TensorProto> owned_tensors_;
};

// --- graph-level steps --------------------------------------------------------------------

ir::Graph Importer::run(const onnx::ModelProto& model, std::string graph_name) {
  if (!model.has_graph()) {
    fail("model", "has no graph (field 7); is this an ONNX model?");
  }
  graph_proto_ = &model.graph();
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
    node_ = index;
    convert(index);
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
    values_[tensor.name()] = Value{tensor.name(), &tensor, origin};
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
    if (tensor_type.elem_type() != onnx::TensorProto_DataType_FLOAT) {
      fail(where, "has element type " + data_type_name(tensor_type.elem_type()) +
                      "; Tessel imports float (FLOAT) models");
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
    auto added_input = graph_.add_input(input.name(), shape, ir::DType::f32);
    if (!added_input) fail(where, added_input.reason());
    values_[input.name()] = Value{input.name(), nullptr, where};
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
    if (value.constant) fail(where, "is a constant; there is nothing to compute");
    const ir::Shape inferred = shape_of(value.ir_name);
    if (output.type().has_tensor_type() && output.type().tensor_type().has_shape()) {
      const auto& dims = output.type().tensor_type().shape().dim();
      bool matches = dims.size() == static_cast<int>(inferred.size());
      for (int d = 0; matches && d < dims.size(); ++d) {
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
  return value.constant ? materialize(value) : value.ir_name;
}

ConstantData Importer::constant_input(int slot, std::string_view role) const {
  const Value& value = input_value(slot);
  if (!value.constant) {
    fail_node(std::string(role) + " (input " + std::to_string(slot) + " " +
              in_quotes(node().input(slot)) +
              ") must be a constant (an initializer or a Constant node's output)");
  }
  return decode(*value.constant, value.origin);
}

ir::Shape Importer::shape_of(const std::string& ir_name) const {
  return graph_.tensor(ir_name).shape;
}

void Importer::require_rank(int slot, std::size_t rank, std::string_view what) {
  const Value& value = input_value(slot);
  const ir::Shape shape =
      value.constant ? decode(*value.constant, value.origin).dims : shape_of(value.ir_name);
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

ConstantData Importer::decode(const onnx::TensorProto& tensor, const std::string& origin) const {
  ConstantData data;
  data.data_type = tensor.data_type();
  if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    fail(origin, "stores its data in an external file, which Tessel does not read");
  }
  std::int64_t count = 1;
  for (std::int64_t d : tensor.dims()) {
    if (d < 0) fail(origin, "has a negative dimension " + std::to_string(d));
    data.dims.push_back(d);
    count = d == 0 ? 0 : (count > std::numeric_limits<std::int64_t>::max() / d ? -1 : count * d);
    if (count < 0) fail(origin, "has too many elements");
  }
  const std::string& raw = tensor.raw_data();
  auto check_count = [&](std::size_t got) {
    if (static_cast<std::int64_t>(got) != count) {
      fail(origin, "holds " + std::to_string(got) + " values but its dims " +
                       ints_string(data.dims) + " need " + std::to_string(count));
    }
  };
  auto from_raw = [&](std::size_t width, auto convert) {
    if (raw.size() % width != 0) {
      fail(origin, "raw_data has " + std::to_string(raw.size()) +
                       " bytes, not a multiple of the element size " + std::to_string(width));
    }
    check_count(raw.size() / width);
    for (std::size_t i = 0; i < raw.size(); i += width) convert(raw.data() + i);
  };
  switch (tensor.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (tensor.has_raw_data()) {
        // Little-endian binary32, as on every host Tessel builds for: one copy, no per-value work.
        if (raw.size() % 4 != 0) {
          fail(origin, "raw_data has " + std::to_string(raw.size()) +
                           " bytes, not a multiple of the element size 4");
        }
        check_count(raw.size() / 4);
        data.floats.resize(raw.size() / 4);
        std::memcpy(data.floats.data(), raw.data(), raw.size());
      } else {
        check_count(static_cast<std::size_t>(tensor.float_data_size()));
        data.floats.assign(tensor.float_data().begin(), tensor.float_data().end());
      }
      break;
    case onnx::TensorProto_DataType_DOUBLE:
      if (tensor.has_raw_data()) {
        from_raw(8, [&](const char* p) {
          double v;
          std::memcpy(&v, p, 8);
          data.floats.push_back(static_cast<float>(v));
        });
      } else {
        check_count(static_cast<std::size_t>(tensor.double_data_size()));
        for (double v : tensor.double_data()) data.floats.push_back(static_cast<float>(v));
      }
      break;
    case onnx::TensorProto_DataType_INT64:
      if (tensor.has_raw_data()) {
        from_raw(8, [&](const char* p) {
          std::int64_t v;
          std::memcpy(&v, p, 8);
          data.ints.push_back(v);
        });
      } else {
        check_count(static_cast<std::size_t>(tensor.int64_data_size()));
        data.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      }
      break;
    case onnx::TensorProto_DataType_INT32:
      if (tensor.has_raw_data()) {
        from_raw(4, [&](const char* p) {
          std::int32_t v;
          std::memcpy(&v, p, 4);
          data.ints.push_back(v);
        });
      } else {
        check_count(static_cast<std::size_t>(tensor.int32_data_size()));
        data.ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      }
      break;
    default:
      fail(origin, "has element type " + data_type_name(tensor.data_type()) +
                       "; Tessel reads FLOAT, DOUBLE, INT64 and INT32 constants");
  }
  return data;
}

std::string Importer::materialize(const Value& value) {
  if (materialized_.count(value.ir_name)) return value.ir_name;
  ConstantData data = decode(*value.constant, value.origin);
  if (data.floats.empty() && !data.ints.empty()) {
    fail_node("constant " + in_quotes(value.ir_name) + " (" + value.origin + ") has element type " +
              data_type_name(data.data_type) + " but is used as float data");
  }
  if (data.dims.empty()) {
    fail_node("constant " + in_quotes(value.ir_name) + " (" + value.origin +
              ") is a scalar used as tensor data; the IR has no rank-0 tensors and no "
              "broadcasting");
  }
  if (data.floats.empty()) {
    fail_node("constant " + in_quotes(value.ir_name) + " (" + value.origin + ") has no elements");
  }
  ir::Tensor tensor;
  tensor.name = value.ir_name;
  tensor.dtype = ir::DType::f32;
  tensor.shape = data.dims;
  tensor.constant = true;
  tensor.f32_values = std::move(data.floats);
  if (auto status = graph_.add_constant(std::move(tensor)); !status) fail_node(status.reason());
  materialized_.insert(value.ir_name);
  return value.ir_name;
}

std::string Importer::op_name() {
  std::string base = node().name().empty() ? node().output(0) : node().name();
  std::string name = base;
  for (int suffix = 1; graph_.find_op(name); ++suffix) {
    name = base + "." + std::to_string(suffix);
  }
  return name;
}

void Importer::emit(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                    const std::string& onnx_output) {
  ir::Op op;
  op.name = op_name();
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = {onnx_output};
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
  values_[onnx_output] = Value{onnx_output, nullptr, node_where(node_)};
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

// --- op translation -----------------------------------------------------------------------

void Importer::convert(int index) {
  const onnx::NodeProto& n = graph_proto_->node(index);
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    fail_node("unsupported op type " + in_quotes(n.op_type()) + " from domain " +
              in_quotes(n.domain()));
  }
  const std::string& type = n.op_type();
  if (type == "Constant") return convert_constant();
  if (type == "Identity") {
    check_attributes({});
    return alias_output_to_input();
  }
  if (type == "Dropout") return convert_dropout();
  if (type == "Conv") return convert_conv();
  if (type == "MaxPool") return convert_pool(true);
  if (type == "AveragePool") return convert_pool(false);
  if (type == "Gemm") return convert_gemm();
  if (type == "MatMul") return convert_matmul();
  if (type == "Clip") return convert_clip();
  if (type == "BatchNormalization") return convert_batchnorm();
  if (type == "Concat") return convert_concat();
  if (type == "Pad") return convert_pad();
  if (type == "Flatten") return convert_flatten();
  if (type == "Reshape") return convert_reshape();
  if (type == "Softmax") return convert_softmax();
  if (type == "GlobalAveragePool" || type == "Relu" || type == "Add") {
    check_attributes({});
    expect_outputs(1);
    const bool binary = type == "Add";
    if (input_count() != (binary ? 2u : 1u)) {
      fail_node("takes " + std::to_string(binary ? 2 : 1) + " input(s), got " +
                std::to_string(input_count()));
    }
    std::vector<std::string> inputs{data_input(0)};
    if (binary) {
      inputs.push_back(data_input(1));
      const ir::Shape a = shape_of(inputs[0]), b = shape_of(inputs[1]);
      if (a != b) {
        fail_node("operands " + in_quotes(n.input(0)) + " " + ir::shape_string(a) + " and " +
                  in_quotes(n.input(1)) + " " + ir::shape_string(b) +
                  " differ; broadcasting is not supported");
      }
    } else if (type == "GlobalAveragePool") {
      require_rank(0, 4, "input");
    }
    const ir::OpKind kind = type == "Relu" ? ir::OpKind::Relu
                            : binary       ? ir::OpKind::Add
                                           : ir::OpKind::GlobalAveragePool;
    return emit(kind, std::move(inputs), {}, n.output(0));
  }
  static const std::vector<std::string> supported = {"Add",
                                                     "AveragePool",
                                                     "BatchNormalization",
                                                     "Clip",
                                                     "Concat",
                                                     "Constant",
                                                     "Conv",
                                                     "Dropout",
                                                     "Flatten",
                                                     "Gemm",
                                                     "GlobalAveragePool",
                                                     "Identity",
                                                     "MatMul",
                                                     "MaxPool",
                                                     "Pad",
                                                     "Relu",
                                                     "Reshape",
                                                     "Softmax"};
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

void Importer::alias_output_to_input() {
  expect_outputs(1);
  if (input_count() != 1 && node().op_type() == "Identity") {
    fail_node("takes 1 input, got " + std::to_string(input_count()));
  }
  Value value = input_value(0);
  if (value.constant) {
    // A renamed constant is its own constant (PyTorch's exporter shares equal initializers
    // through Identity; each is a separate parameter of the model).
    value.ir_name = node().output(0);
    value.origin = node_where(node_) + " (copy of " + value.origin + ")";
  }
  values_[node().output(0)] = value;
}

void Importer::convert_constant() {
  check_attributes({"value", "value_float", "value_floats", "value_int", "value_ints",
                    "sparse_value", "value_string", "value_strings"});
  expect_outputs(1);
  if (node().attribute_size() != 1) {
    fail_node("must have exactly one value attribute, has " +
              std::to_string(node().attribute_size()));
  }
  const onnx::AttributeProto& attr = node().attribute(0);
  onnx::TensorProto tensor;
  if (attr.name() == "value") {
    tensor = attribute("value", onnx::AttributeProto_AttributeType_TENSOR)->t();
  } else if (attr.name() == "value_float") {
    tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
    tensor.add_float_data(attr_float("value_float", 0.0F));
  } else if (attr.name() == "value_floats") {
    const auto* a = attribute("value_floats", onnx::AttributeProto_AttributeType_FLOATS);
    tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
    tensor.add_dims(a->floats_size());
    for (float v : a->floats()) tensor.add_float_data(v);
  } else if (attr.name() == "value_int") {
    tensor.set_data_type(onnx::TensorProto_DataType_INT64);
    tensor.add_int64_data(attr_int("value_int", 0));
  } else if (attr.name() == "value_ints") {
    const Ints values = *attr_ints("value_ints");
    tensor.set_data_type(onnx::TensorProto_DataType_INT64);
    tensor.add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t v : values) tensor.add_int64_data(v);
  } else {
    fail_node("attribute " + in_quotes(attr.name()) +
              " is not supported (sparse or string constant)");
  }
  tensor.set_name(node().output(0));
  owned_tensors_.push_back(std::move(tensor));
  const std::string origin = node_where(node_);
  decode(owned_tensors_.back(), origin);  // report a malformed payload here, at its node
  values_[node().output(0)] = Value{node().output(0), &owned_tensors_.back(), origin};
}

void Importer::convert_dropout() {
  check_attributes({"seed", "ratio"});
  expect_outputs(1);
  if (has_input(2)) {
    const ConstantData mode = constant_input(2, "training_mode");
    if (mode.ints.size() != 1 && mode.floats.size() != 1) {
      fail_node("training_mode must be a scalar");
    }
    const bool training = mode.ints.empty() ? mode.floats[0] != 0.0F : mode.ints[0] != 0;
    if (training) fail_node("training_mode is true; Tessel imports inference graphs only");
  }
  alias_output_to_input();
}

Importer::Window Importer::read_window(const Ints& kernel_from_weight, bool allow_dilation) {
  Window window;
  const std::optional<Ints> kernel = attr_ints("kernel_shape");
  if (kernel) {
    window.kernel = *kernel;
    if (!kernel_from_weight.empty() && *kernel != kernel_from_weight) {
      fail_node("kernel_shape " + ints_string(*kernel) + " disagrees with the weight's " +
                ints_string(kernel_from_weight));
    }
  } else if (!kernel_from_weight.empty()) {
    window.kernel = kernel_from_weight;
  } else {
    fail_node("attribute 'kernel_shape' is required");
  }
  if (window.kernel.size() != 2) {
    fail_node("kernel_shape " + ints_string(window.kernel) +
              " is not 2-D; Tessel supports 2-D windows only");
  }
  for (std::int64_t k : window.kernel) {
    if (k <= 0) fail_node("kernel_shape " + ints_string(window.kernel) + " must be positive");
  }
  window.strides = attr_ints("strides").value_or(Ints{1, 1});
  window.dilations = allow_dilation ? attr_ints("dilations").value_or(Ints{1, 1}) : Ints{1, 1};
  std::optional<Ints> pads = attr_ints("pads");
  if (window.strides.size() != 2)
    fail_node("strides " + ints_string(window.strides) + " must have 2 values");
  if (window.dilations.size() != 2) {
    fail_node("dilations " + ints_string(window.dilations) + " must have 2 values");
  }
  for (std::int64_t s : window.strides) {
    if (s <= 0) fail_node("strides " + ints_string(window.strides) + " must be positive");
  }
  for (std::int64_t d : window.dilations) {
    if (d <= 0) fail_node("dilations " + ints_string(window.dilations) + " must be positive");
  }
  if (pads) {
    if (pads->size() != 4) fail_node("pads " + ints_string(*pads) + " must have 4 values");
    for (std::int64_t p : *pads) {
      if (p < 0) fail_node("pads " + ints_string(*pads) + " must not be negative");
    }
  }
  const std::string auto_pad = attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    window.pads = pads.value_or(Ints{0, 0, 0, 0});
    return window;
  }
  if (pads && std::any_of(pads->begin(), pads->end(), [](std::int64_t p) { return p != 0; })) {
    fail_node("pads " + ints_string(*pads) + " cannot be combined with auto_pad " + auto_pad);
  }
  if (auto_pad == "VALID") {
    window.pads = {0, 0, 0, 0};
    return window;
  }
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    fail_node("auto_pad " + in_quotes(auto_pad) +
              " is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  // ONNX: output = ceil(input / stride); the total padding that achieves it is split evenly,
  // the odd element going to the end (SAME_UPPER) or the beginning (SAME_LOWER).
  const ir::Shape input = shape_of(values_.at(node().input(0)).ir_name);
  window.pads.assign(4, 0);
  for (std::size_t axis = 0; axis < 2; ++axis) {
    const std::int64_t in = input[2 + axis];
    const std::int64_t stride = window.strides[axis];
    const std::int64_t extent = (window.kernel[axis] - 1) * window.dilations[axis] + 1;
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + extent - in);
    const std::int64_t small = total / 2, large = total - total / 2;
    window.pads[axis] = auto_pad == "SAME_UPPER" ? small : large;
    window.pads[axis + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return window;
}

void Importer::convert_conv() {
  check_attributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  expect_outputs(1);
  if (input_count() < 2 || input_count() > 3) {
    fail_node("takes 2 or 3 inputs, got " + std::to_string(input_count()));
  }
  require_rank(0, 4, "input");
  const std::string x = data_input(0);
  const std::string w = data_input(1);
  const ir::Shape weight = shape_of(w);
  if (weight.size() != 4) {
    fail_node("weight " + in_quotes(node().input(1)) + " has shape " + ir::shape_string(weight) +
              "; Tessel supports 2-D convolution only (OIHW weights)");
  }
  const std::int64_t group = attr_int("group", 1);
  if (group <= 0) fail_node("group " + std::to_string(group) + " must be positive");
  const Window window = read_window({weight[2], weight[3]}, true);
  std::vector<std::string> inputs{x, w};
  if (has_input(2)) inputs.push_back(data_input(2));
  emit(ir::OpKind::Conv, std::move(inputs),
       {{"kernel", window.kernel},
        {"stride", window.strides},
        {"pad", window.pads},
        {"dilation", window.dilations},
        {"group", group}},
       node().output(0));
}

void Importer::convert_pool(bool is_max) {
  if (is_max) {
    check_attributes(
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
    if (attr_int("storage_order", 0) != 0 && output_used(1)) {
      fail_node("storage_order 1 (column-major Indices) is not supported");
    }
  } else {
    check_attributes(
        {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  }
  expect_outputs(1);
  if (input_count() != 1) fail_node("takes 1 input, got " + std::to_string(input_count()));
  require_rank(0, 4, "input");
  std::string x = data_input(0);
  const std::int64_t ceil_mode = attr_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) {
    fail_node("ceil_mode " + std::to_string(ceil_mode) + " must be 0 or 1");
  }
  Window window = read_window({}, is_max);
  if (is_max) {
    emit(ir::OpKind::MaxPool, {x},
         {{"kernel", window.kernel},
          {"stride", window.strides},
          {"pad", window.pads},
          {"dilation", window.dilations},
          {"ceil_mode", ceil_mode}},
         node().output(0));
    return;
  }
  std::int64_t count_include_pad = attr_int("count_include_pad", 0);
  if (count_include_pad != 0 && count_include_pad != 1) {
    fail_node("count_include_pad " + std::to_string(count_include_pad) + " must be 0 or 1");
  }
  // Pad(0) -> AveragePool: the pool averages explicit zeros over the full window, which is
  // AveragePool with those pads and count_include_pad=1 (ceil_mode 0 only: with ceil_mode a
  // window may start in the padding and the two forms differ).
  const auto pad_op = graph_.producer(x);
  const bool pool_pads_zero =
      std::all_of(window.pads.begin(), window.pads.end(), [](std::int64_t p) { return p == 0; });
  if (options_.fold_pad_into_average_pool && pad_op && ceil_mode == 0 &&
      (pool_pads_zero || count_include_pad == 1) && graph_.op(*pad_op).kind == ir::OpKind::Pad &&
      graph_.op(*pad_op).get_float("value") == 0.0 && readers_[node().input(0)].size() == 1 &&
      !graph_output_names_.count(node().input(0))) {
    const ir::Op& pad = graph_.op(*pad_op);
    const Ints& pads = pad.get_ints("pads");  // [n, c, h, w] begins, then ends
    if (pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0) {
      window.pads = {window.pads[0] + pads[2], window.pads[1] + pads[3], window.pads[2] + pads[6],
                     window.pads[3] + pads[7]};
      count_include_pad = 1;
      const std::string source = pad.inputs[0];
      graph_.remove_ops({*pad_op});
      x = source;
    }
  }
  emit(ir::OpKind::AveragePool, {x},
       {{"kernel", window.kernel},
        {"stride", window.strides},
        {"pad", window.pads},
        {"ceil_mode", ceil_mode},
        {"count_include_pad", count_include_pad}},
       node().output(0));
}

void Importer::convert_gemm() {
  check_attributes({"alpha", "beta", "transA", "transB"});
  expect_outputs(1);
  if (input_count() < 2 || input_count() > 3) {
    fail_node("takes 2 or 3 inputs, got " + std::to_string(input_count()));
  }
  if (attr_int("transA", 0) != 0) fail_node("transA=1 is not supported");
  const std::int64_t trans_b = attr_int("transB", 0);
  if (trans_b != 0 && trans_b != 1)
    fail_node("transB " + std::to_string(trans_b) + " must be 0 or 1");
  require_rank(0, 2, "input A");
  require_rank(1, 2, "input B");
  std::vector<std::string> inputs{data_input(0), data_input(1)};
  if (has_input(2)) inputs.push_back(data_input(2));
  emit(ir::OpKind::Gemm, std::move(inputs),
       {{"transB", trans_b},
        {"alpha", static_cast<double>(attr_float("alpha", 1.0F))},
        {"beta", static_cast<double>(attr_float("beta", 1.0F))}},
       node().output(0));
}

void Importer::convert_matmul() {
  check_attributes({});
  expect_outputs(1);
  if (input_count() != 2) fail_node("takes 2 inputs, got " + std::to_string(input_count()));
  require_rank(0, 2, "input A");
  require_rank(1, 2, "input B");
  std::vector<std::string> inputs{data_input(0), data_input(1)};
  std::string output = node().output(0);
  // MatMul followed by the Add of a constant [N] (or [M,N]) bias is a fully connected layer.
  const auto& readers = readers_[output];
  if (readers.size() == 1 && !graph_output_names_.count(output)) {
    const onnx::NodeProto& add = graph_proto_->node(readers[0]);
    if (add.op_type() == "Add" && (add.domain().empty() || add.domain() == "ai.onnx") &&
        add.input_size() == 2 && add.attribute_size() == 0 && add.output_size() == 1) {
      const int other = add.input(0) == output ? 1 : 0;
      const auto it = values_.find(add.input(other));
      const std::int64_t n = shape_of(inputs[1])[1];
      if (add.input(1 - other) == output && it != values_.end() && it->second.constant) {
        const ConstantData bias = decode(*it->second.constant, it->second.origin);
        const std::int64_t m = shape_of(inputs[0])[0];
        if (!bias.floats.empty() && (bias.dims == Ints{n} || bias.dims == Ints{m, n})) {
          const Value bias_value = it->second;
          inputs.push_back(materialize(bias_value));
          absorbed_.insert(readers[0]);
          output = add.output(0);
        }
      }
    }
  }
  emit(ir::OpKind::Gemm, std::move(inputs), {{"transB", std::int64_t{0}}}, output);
}

void Importer::convert_clip() {
  check_attributes({"min", "max"});
  expect_outputs(1);
  if (input_count() < 1 || input_count() > 3) {
    fail_node("takes 1 to 3 inputs, got " + std::to_string(input_count()));
  }
  ir::Attrs attrs;
  auto bound = [&](int slot, std::string_view name) {
    const bool as_attr = attribute(name, onnx::AttributeProto_AttributeType_FLOAT) != nullptr;
    if (has_input(slot) && as_attr) {
      fail_node(std::string(name) + " is given both as input " + std::to_string(slot) +
                " and as an attribute");
    }
    if (as_attr) {
      attrs[std::string(name)] = static_cast<double>(attr_float(name, 0.0F));
    } else if (has_input(slot)) {
      const ConstantData data = constant_input(slot, name);
      if (data.floats.size() != 1) {
        fail_node(std::string(name) + " (input " + std::to_string(slot) +
                  ") must be a float scalar, has " +
                  std::to_string(std::max(data.floats.size(), data.ints.size())) + " " +
                  data_type_name(data.data_type) + " value(s)");
      }
      attrs[std::string(name)] = static_cast<double>(data.floats[0]);
    }
  };
  bound(1, "min");
  bound(2, "max");
  if (attrs.count("min") && attrs.count("max") &&
      std::get<double>(attrs["min"]) > std::get<double>(attrs["max"])) {
    fail_node("min " + std::to_string(std::get<double>(attrs["min"])) + " exceeds max " +
              std::to_string(std::get<double>(attrs["max"])));
  }
  emit(ir::OpKind::Clip, {data_input(0)}, std::move(attrs), node().output(0));
}

void Importer::convert_batchnorm() {
  check_attributes({"epsilon", "momentum", "training_mode"});
  expect_outputs(1);
  if (attr_int("training_mode", 0) != 0) {
    fail_node("training_mode=1 is not supported; Tessel imports inference graphs only");
  }
  if (input_count() != 5) fail_node("takes 5 inputs, got " + std::to_string(input_count()));
  const float epsilon = attr_float("epsilon", 1e-5F);
  if (!(epsilon >= 0.0F)) fail_node("epsilon " + std::to_string(epsilon) + " must not be negative");
  std::vector<std::string> inputs;
  for (int slot = 0; slot < 5; ++slot) inputs.push_back(data_input(slot));
  emit(ir::OpKind::BatchNormalization, std::move(inputs),
       {{"epsilon", static_cast<double>(epsilon)}}, node().output(0));
}

void Importer::convert_concat() {
  check_attributes({"axis"});
  expect_outputs(1);
  if (input_count() == 0) fail_node("has no inputs");
  if (!attribute("axis", onnx::AttributeProto_AttributeType_INT)) {
    fail_node("attribute 'axis' is required");
  }
  std::vector<std::string> inputs;
  for (int slot = 0; slot < static_cast<int>(input_count()); ++slot) {
    inputs.push_back(data_input(slot));
  }
  const std::int64_t axis = normalize_axis(attr_int("axis", 0), shape_of(inputs[0]).size(), "axis");
  emit(ir::OpKind::Concat, std::move(inputs), {{"axis", axis}}, node().output(0));
}

void Importer::convert_pad() {
  check_attributes({"mode", "pads", "value"});
  expect_outputs(1);
  const std::string mode = attr_string("mode", "constant");
  if (mode != "constant") {
    fail_node("mode " + in_quotes(mode) + " is not supported (only 'constant')");
  }
  if (input_count() > 3) fail_node("the axes input (opset 18) is not supported");
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  Ints pads;
  if (const auto attr = attr_ints("pads")) {
    if (has_input(1)) fail_node("pads is given both as input 1 and as an attribute");
    pads = *attr;
  } else if (has_input(1)) {
    const ConstantData data = constant_input(1, "pads");
    if (data.ints.empty() && !data.floats.empty()) fail_node("pads must be INT64");
    pads = data.ints;
  } else {
    fail_node("pads are missing");
  }
  if (pads.size() != 2 * rank) {
    fail_node("pads " + ints_string(pads) + " must have " + std::to_string(2 * rank) +
              " values (begin and end of each of " + std::to_string(rank) + " axes)");
  }
  for (std::int64_t p : pads) {
    if (p < 0) fail_node("pads " + ints_string(pads) + " must not be negative (no cropping)");
  }
  double value = static_cast<double>(attr_float("value", 0.0F));
  if (has_input(2)) {
    const ConstantData data = constant_input(2, "constant_value");
    if (data.floats.size() != 1) fail_node("constant_value must be a float scalar");
    value = static_cast<double>(data.floats[0]);
  }
  emit(ir::OpKind::Pad, {x}, {{"pads", pads}, {"value", value}}, node().output(0));
}

void Importer::convert_flatten() {
  check_attributes({"axis"});
  expect_outputs(1);
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  std::int64_t axis = attr_int("axis", 1);
  // Flatten accepts axis == rank (everything in the first dimension).
  if (axis != static_cast<std::int64_t>(rank)) axis = normalize_axis(axis, rank, "axis");
  emit(ir::OpKind::Flatten, {x}, {{"axis", axis}}, node().output(0));
}

void Importer::convert_reshape() {
  check_attributes({"allowzero"});
  expect_outputs(1);
  if (input_count() != 2) fail_node("takes 2 inputs, got " + std::to_string(input_count()));
  const std::string x = data_input(0);
  const ConstantData data = constant_input(1, "shape");
  if (data.ints.empty() && !data.floats.empty()) fail_node("shape must be INT64");
  const Ints& shape = data.ints;
  if (attr_int("allowzero", 0) != 0 && std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    fail_node("allowzero=1 with a 0 in shape " + ints_string(shape) + " is not supported");
  }
  emit(ir::OpKind::Reshape, {x}, {{"shape", shape}}, node().output(0));
}

void Importer::convert_softmax() {
  check_attributes({"axis"});
  expect_outputs(1);
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  // Opset 13 changed the default axis from 1 to -1 and the meaning from "flatten to 2-D at
  // axis" to "along axis"; the two agree when the axis is the last one.
  const std::int64_t axis = normalize_axis(attr_int("axis", opset_ >= 13 ? -1 : 1), rank, "axis");
  if (opset_ < 13 && axis != static_cast<std::int64_t>(rank) - 1) {
    fail_node("opset " + std::to_string(opset_) + " Softmax over axes " + std::to_string(axis) +
              ".." + std::to_string(rank - 1) +
              " (coerced to 2-D) is not supported; only the "
              "last axis");
  }
  emit(ir::OpKind::Softmax, {x}, {{"axis", axis}}, node().output(0));
}

/// Reads a whole file; throws InputError naming it when it cannot.
std::string read_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw_input_error(SourceLocation{path, 0, 0}, "", "cannot open: no such file");
  }
  if (!std::filesystem::is_regular_file(path, error)) {
    throw_input_error(SourceLocation{path, 0, 0}, "", "cannot open: not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw_input_error(SourceLocation{path, 0, 0}, "",
                      std::string("cannot open: ") + std::strerror(errno));
  }
  std::string content(static_cast<std::size_t>(std::filesystem::file_size(path, error)), '\0');
  if (error) throw_input_error(SourceLocation{path, 0, 0}, "", "cannot read: " + error.message());
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  if (static_cast<std::size_t>(in.gcount()) != content.size()) {
    throw_input_error(SourceLocation{path, 0, 0}, "",
                      "read error after " + std::to_string(in.gcount()) + " bytes");
  }
  return content;
}

}  // namespace

namespace {

/// Parses `bytes` as an onnx.ModelProto; InputError (byte offset when known) otherwise.
std::unique_ptr<onnx::ModelProto> parse_model(std::string_view bytes,
                                              const std::string& source_name) {
  const SourceLocation location{source_name, 0, 0};
  if (bytes.empty()) {
    throw_input_error(location, "", "empty file (0 bytes); not an ONNX model");
  }
  const std::string size = std::to_string(bytes.size()) + " bytes";
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw_input_error(location, "", "file of " + size + " exceeds protobuf's 2 GiB message limit");
  }
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    if (auto fault = find_wire_fault(bytes)) {
      throw_input_error(location, "byte offset " + std::to_string(fault->offset),
                        "failed to parse ModelProto (" + size + "): " + fault->what);
    }
    throw_input_error(location, "",
                      "failed to parse ModelProto (" + size +
                          "): the framing is sound but protobuf rejected a field's content "
                          "(e.g. invalid UTF-8 in a string)");
  }
  // Random bytes can parse as a message of unknown fields; an ONNX model names its IR version.
  if (model->ir_version() <= 0 && !model->has_graph()) {
    throw_input_error(location, "",
                      "parsed " + size +
                          " as protobuf but found no ir_version and no graph; "
                          "not an ONNX model");
  }
  return model;
}

ir::Graph import_model(const onnx::ModelProto& model, const std::string& source_name,
                       const OnnxImportOptions& options) {
  std::string graph_name = std::filesystem::path(source_name).stem().string();
  if (graph_name.empty()) graph_name = model.graph().name();
  return Importer(source_name, options).run(model, graph_name);
}

}  // namespace

ir::Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  std::unique_ptr<onnx::ModelProto> model;
  {
    // The file's bytes go before the IR's copies of the weights arrive (VGG-19: 575 MB).
    const std::string bytes = read_file(path);
    model = parse_model(bytes, path);
  }
  return import_model(*model, path, options);
}

ir::Graph import_onnx_bytes(std::string_view bytes, const std::string& source_name,
                            const OnnxImportOptions& options) {
  return import_model(*parse_model(bytes, source_name), source_name, options);
}

Result<std::pair<std::string, ir::Shape>> parse_input_shape(std::string_view spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return fail("--input-shape " + in_quotes(spec) +
                ": expected NAME:D0xD1x... (e.g. input:1x3x224x224)");
  }
  std::string name(spec.substr(0, colon));
  std::string_view dims = spec.substr(colon + 1);
  ir::Shape shape;
  while (true) {
    const auto x = dims.find('x');
    const std::string_view part = dims.substr(0, x);
    std::int64_t value = 0;
    bool ok = !part.empty() && part.size() <= 18;
    for (char c : part) {
      if (c < '0' || c > '9') ok = false;
    }
    if (ok) value = std::stoll(std::string(part));
    if (!ok || value <= 0) {
      return fail("--input-shape " + in_quotes(spec) + ": dimension " + in_quotes(part) +
                  " is not a positive integer");
    }
    shape.push_back(value);
    if (x == std::string_view::npos) break;
    dims.remove_prefix(x + 1);
  }
  return std::make_pair(std::move(name), std::move(shape));
}

}  // namespace tessel::frontend
