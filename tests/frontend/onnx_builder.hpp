// Builds small onnx::ModelProto graphs in C++ for the importer's tests (no files, no Python).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace tessel::frontend::testing {

/// One attribute of a node: an int, a float, ints, or a string.
struct Attr {
  std::string name;
  onnx::AttributeProto proto;

  Attr(std::string attr_name, std::int64_t value) : name(std::move(attr_name)) {
    proto.set_name(name);
    proto.set_type(onnx::AttributeProto_AttributeType_INT);
    proto.set_i(value);
  }
  Attr(std::string attr_name, int value) : Attr(std::move(attr_name), std::int64_t{value}) {}
  Attr(std::string attr_name, float value) : name(std::move(attr_name)) {
    proto.set_name(name);
    proto.set_type(onnx::AttributeProto_AttributeType_FLOAT);
    proto.set_f(value);
  }
  Attr(std::string attr_name, std::vector<std::int64_t> values) : name(std::move(attr_name)) {
    proto.set_name(name);
    proto.set_type(onnx::AttributeProto_AttributeType_INTS);
    for (auto v : values) proto.add_ints(v);
  }
  Attr(std::string attr_name, const char* value) : name(std::move(attr_name)) {
    proto.set_name(name);
    proto.set_type(onnx::AttributeProto_AttributeType_STRING);
    proto.set_s(value);
  }
};

/// A model under construction: `input`, `weight`/`ints`, `node`, `output`, then `bytes()`.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("tessel-test");
    auto* entry = model_.add_opset_import();
    entry->set_domain("");
    entry->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  /// A float graph input; a negative dimension is dynamic (dim_param "N").
  ModelBuilder& input(const std::string& name, std::vector<std::int64_t> dims) {
    value_info(model_.mutable_graph()->add_input(), name, dims);
    return *this;
  }
  /// An INT64 graph input (token ids).
  ModelBuilder& ids_input(const std::string& name, std::vector<std::int64_t> dims) {
    value_info(model_.mutable_graph()->add_input(), name, dims);
    auto* type = model_.mutable_graph()->mutable_input()->rbegin()->mutable_type();
    type->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_INT64);
    return *this;
  }
  /// A graph output; empty dims declares no shape.
  ModelBuilder& output(const std::string& name, std::vector<std::int64_t> dims = {}) {
    value_info(model_.mutable_graph()->add_output(), name, dims);
    return *this;
  }
  /// A float initializer with the given values (default: 0.5 * (i+1), so sums are exact).
  ModelBuilder& weight(const std::string& name, std::vector<std::int64_t> dims,
                       std::vector<float> values = {}) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
    std::int64_t count = 1;
    for (auto d : dims) {
      tensor->add_dims(d);
      count *= d;
    }
    if (values.empty()) {
      for (std::int64_t i = 0; i < count; ++i) values.push_back(0.5F * static_cast<float>(i + 1));
    }
    for (float v : values) tensor->add_float_data(v);
    return *this;
  }
  /// A float initializer stored as raw little-endian bytes.
  ModelBuilder& raw_weight(const std::string& name, std::vector<std::int64_t> dims,
                           const std::vector<float>& values) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (auto d : dims) tensor->add_dims(d);
    tensor->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return *this;
  }
  /// An INT64 initializer (shapes, pads).
  ModelBuilder& ints(const std::string& name, std::vector<std::int64_t> values) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_INT64);
    tensor->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) tensor->add_int64_data(v);
    return *this;
  }
  /// A scalar FLOAT initializer (Clip bounds, Pad value).
  ModelBuilder& scalar(const std::string& name, float value) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
    tensor->add_float_data(value);
    return *this;
  }
  /// A node; an empty input name is an omitted optional input.
  ModelBuilder& node(const std::string& op_type, const std::string& name,
                     std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::vector<Attr> attrs = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    for (auto& a : attrs) *n->add_attribute() = a.proto;
    return *this;
  }

  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void value_info(onnx::ValueInfoProto* info, const std::string& name,
                         const std::vector<std::int64_t>& dims) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    if (dims.empty()) return;
    auto* shape = type->mutable_shape();
    for (auto d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) {
        dim->set_dim_param("N");
      } else {
        dim->set_dim_value(d);
      }
    }
  }

  onnx::ModelProto model_;
};

/// `count` weights uniform in [-scale, scale], seeded: values that neither vanish nor saturate.
inline std::vector<float> uniform(std::size_t count, float scale, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace tessel::frontend::testing
