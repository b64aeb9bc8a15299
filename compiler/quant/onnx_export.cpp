// QDQ ONNX export: QuantizeLinear/DequantizeLinear around float ops, integer initializers.
#include "compiler/quant/onnx_export.hpp"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/quant/realize.hpp"

namespace tessel::quant {
namespace {

using ir::DType;
using ir::OpKind;
using Ints = std::vector<std::int64_t>;

int onnx_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return onnx::TensorProto::FLOAT;
    case DType::i8:
      return onnx::TensorProto::INT8;
    case DType::u8:
      return onnx::TensorProto::UINT8;
    case DType::i16:
      return onnx::TensorProto::INT16;
    case DType::i32:
      return onnx::TensorProto::INT32;
  }
  return onnx::TensorProto::UNDEFINED;
}

// Activations of the realized graph that carry integers between ops (not the accumulators).
bool integer_activation(const ir::Tensor& t) {
  return !t.constant && (t.dtype == DType::i8 || t.dtype == DType::i16 || t.dtype == DType::u8);
}

class Exporter {
 public:
  Exporter(const ir::Graph& graph, const OnnxExportOptions& options)
      : in_(graph), options_(options) {}

  Result<OnnxExport> run() {
    OnnxExport result;
    // 13 keeps the CNN exports as they were; LayerNormalization needs 17; int16 Q/DQ 21.
    for (std::size_t id = 0; id < in_.num_ops(); ++id)
      if (in_.op(static_cast<ir::OpId>(id)).kind >= OpKind::MatMul) result.opset = 17;
    for (const auto& [name, t] : in_.tensors())
      if (t.dtype == DType::i16) result.opset = 21;
    opset_ = result.opset;
    model_.set_ir_version(result.opset >= 21 ? 10 : 8);
    model_.set_producer_name("tessel");
    model_.set_model_version(1);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(result.opset);
    graph_ = model_.mutable_graph();
    graph_->set_name(in_.name() + ".qdq");

    auto order = ir::topological_order(in_);
    if (!order) return fail(order.reason());
    for (const ir::OpId id : order.value())
      if (auto ok = lower(in_.op(id)); !ok)
        return fail("exporting op '" + in_.op(id).name + "' (" +
                    std::string(ir::to_string(in_.op(id).kind)) + ") to ONNX: " + ok.reason());
    for (const auto& t : in_.outputs()) add_value_info(graph_->add_output(), t, t);
    if (options_.expose_intermediates || options_.isolate_layers) {
      for (const ir::OpId id : order.value())
        for (const auto& t : in_.op(id).outputs)
          if (integer_activation(in_.tensor(t)) && !is_graph_output(t)) {
            add_value_info(graph_->add_output(), t, t);
            result.intermediates.push_back(t);
          }
    }
    result.golden_inputs = golden_inputs_;
    if (!model_.SerializeToString(&result.bytes)) return fail("protobuf serialization failed");
    return result;
  }

 private:
  bool is_graph_output(const std::string& t) const {
    for (const auto& o : in_.outputs())
      if (o == t) return true;
    return false;
  }

  void add_value_info(onnx::ValueInfoProto* info, const std::string& onnx_name,
                      const std::string& tensor) {
    const ir::Tensor& t = in_.tensor(tensor);
    info->set_name(onnx_name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx_type(t.dtype));
    auto* shape = type->mutable_shape();
    for (const auto d : t.shape) shape->add_dim()->set_dim_value(d);
  }

  onnx::NodeProto* node(const std::string& op_type, const std::string& name,
                        std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* n = graph_->add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  static void attr_int(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(onnx::NodeProto* n, const std::string& name, double v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, const Ints& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (const auto x : v) a->add_ints(x);
  }

  // An initializer from raw little-endian bytes.
  void initializer(const std::string& name, int type, const Ints& dims, const void* data,
                   std::size_t bytes) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (const auto d : dims) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
  }
  void initializer_ints(const std::string& name, DType dtype, const Ints& dims,
                        const std::vector<std::int32_t>& values) {
    std::string raw;
    for (const auto v : values) {
      if (dtype == DType::i8) {
        raw.push_back(static_cast<char>(static_cast<std::int8_t>(v)));
      } else if (dtype == DType::u8) {
        raw.push_back(static_cast<char>(static_cast<std::uint8_t>(v)));
      } else if (dtype == DType::i16) {
        const auto x = static_cast<std::int16_t>(v);
        raw.append(reinterpret_cast<const char*>(&x), sizeof x);
      } else {
        raw.append(reinterpret_cast<const char*>(&v), sizeof v);
      }
    }
    initializer(name, onnx_type(dtype), dims, raw.data(), raw.size());
  }
  std::string scalar_float(const std::string& name, float v) {
    initializer(name, onnx::TensorProto::FLOAT, {}, &v, sizeof v);
    return name;
  }
  std::string int64s(const std::string& name, const Ints& v) {
    initializer(name, onnx::TensorProto::INT64, {static_cast<std::int64_t>(v.size())}, v.data(),
                v.size() * sizeof(std::int64_t));
    return name;
  }

  // Scale and zero-point initializers of a quantized tensor: rank 0 per tensor, rank 1 per
  // channel. Returns {scale name, zero point name}.
  std::pair<std::string, std::string> quant_params(const std::string& tensor) {
    const ir::Tensor& t = in_.tensor(tensor);
    const auto& q = *t.quant;
    const Ints dims = q.per_channel() ? Ints{static_cast<std::int64_t>(q.scales.size())} : Ints{};
    const std::string scale = tensor + "::scale", zero_point = tensor + "::zero_point";
    if (!emitted_params_.insert(tensor).second) return {scale, zero_point};
    initializer(scale, onnx::TensorProto::FLOAT, dims, q.scales.data(),
                q.scales.size() * sizeof(float));
    initializer_ints(zero_point, t.dtype, dims, q.zero_points);
    return {scale, zero_point};
  }

  // Where an op reads integer activation `t`: `t` itself, or under isolate_layers the golden
  // graph input `<t>::golden` (declared once).
  std::string integer_source(const std::string& t) {
    const ir::Tensor& tensor = in_.tensor(t);
    if (!options_.isolate_layers || tensor.constant) return t;
    const std::string source = golden_input_name(t);
    if (golden_declared_.insert(t).second) {
      add_value_info(graph_->add_input(), source, t);
      golden_inputs_.push_back(t);
    }
    return source;
  }

  // The name of the float value of integer tensor `t` (a DequantizeLinear made once).
  std::string dequantized(const std::string& t) {
    if (auto it = dequantized_.find(t); it != dequantized_.end()) return it->second;
    const ir::Tensor& tensor = in_.tensor(t);
    if (tensor.constant) initializer_ints(t, tensor.dtype, tensor.shape, tensor.int_values);
    const std::string source = integer_source(t);
    const auto [scale, zero_point] = quant_params(t);
    const std::string out = t + "::dq";
    auto* n = node("DequantizeLinear", out, {source, scale, zero_point}, {out});
    if (tensor.quant->per_channel()) attr_int(n, "axis", tensor.quant->axis);
    dequantized_[t] = out;
    return out;
  }

  // The float input name for `t`: as is for float tensors, dequantized for integers.
  std::string float_input(const std::string& t) {
    const ir::Tensor& tensor = in_.tensor(t);
    if (tensor.dtype == DType::f32) {
      if (tensor.constant && float_constants_.insert(t).second)
        initializer(t, onnx::TensorProto::FLOAT, tensor.shape, tensor.f32_values.data(),
                    tensor.f32_values.size() * sizeof(float));
      return t;
    }
    return dequantized(t);
  }

  static const std::int64_t* find_int(const ir::Op& op, const std::string& key) {
    const auto it = op.attrs.find(key);
    return it == op.attrs.end() ? nullptr : std::get_if<std::int64_t>(&it->second);
  }

  // A Conv/Gemm/MatMul's input rounded right by its input shift u (docs/quantization.md, "Input
  // shift on Conv/Gemm"): QuantizeLinear / DequantizeLinear at scale s_x * 2^u (ONNX rounds half
  // to even where the executor rounds half away: within 1 LSB of the shifted code).
  std::string shifted_input(const std::string& t, int u) {
    const ir::Tensor& x = in_.tensor(t);
    const std::string base = t + "::shift" + std::to_string(u);
    if (!shifted_.insert(base).second) return base + "::dq";
    const std::string scale = scalar_float(base + "::scale", std::ldexp(x.quant->scales.at(0), u));
    const auto zero_point = quant_params(t).second;
    node("QuantizeLinear", base + "::quantize", {float_input(t), scale, zero_point}, {base});
    node("DequantizeLinear", base + "::dequantize", {base, scale, zero_point}, {base + "::dq"});
    return base + "::dq";
  }

  void quantize(const std::string& from, const std::string& to, const std::string& op_name) {
    const auto [scale, zero_point] = quant_params(to);
    node("QuantizeLinear", op_name, {from, scale, zero_point}, {to});
  }

  // The float ONNX node of one IR op, reading `inputs` and writing `outputs`.
  Status float_node(const ir::Op& op, std::vector<std::string> inputs,
                    std::vector<std::string> outputs) {
    const std::string name =
        op.name + (ir::is_integer(in_.tensor(op.outputs[0]).dtype) ? "::f" : "");
    auto window = [&](onnx::NodeProto* n, bool conv) {
      attr_ints(n, "kernel_shape", op.get_ints("kernel"));
      attr_ints(n, "strides", op.get_ints("stride"));
      attr_ints(n, "pads", op.get_ints("pad"));
      if (conv || op.kind == OpKind::MaxPool) attr_ints(n, "dilations", op.get_ints("dilation"));
    };
    switch (op.kind) {
      case OpKind::Conv: {
        auto* n = node("Conv", name, inputs, outputs);
        window(n, true);
        attr_int(n, "group", op.get_int("group"));
        return {};
      }
      case OpKind::Gemm: {
        auto* n = node("Gemm", name, inputs, outputs);
        attr_int(n, "transB", op.get_int("transB"));
        attr_float(n, "alpha", op.get_float("alpha"));
        attr_float(n, "beta", op.get_float("beta"));
        return {};
      }
      case OpKind::MaxPool: {
        auto* n = node("MaxPool", name, inputs, outputs);
        window(n, false);
        attr_int(n, "ceil_mode", op.get_int("ceil_mode"));
        return {};
      }
      case OpKind::AveragePool: {
        auto* n = node("AveragePool", name, inputs, outputs);
        window(n, false);
        attr_int(n, "ceil_mode", op.get_int("ceil_mode"));
        attr_int(n, "count_include_pad", op.get_int("count_include_pad"));
        return {};
      }
      case OpKind::GlobalAveragePool:
      case OpKind::Relu:
      case OpKind::Add:
        node(std::string(ir::to_string(op.kind)), name, inputs, outputs);
        return {};
      case OpKind::Clip:
        inputs.push_back(scalar_float(op.name + "::min", static_cast<float>(op.get_float("min"))));
        inputs.push_back(scalar_float(op.name + "::max", static_cast<float>(op.get_float("max"))));
        node("Clip", name, inputs, outputs);
        return {};
      case OpKind::Concat:
        attr_int(node("Concat", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      case OpKind::Split:
        inputs.push_back(int64s(op.name + "::split", op.get_ints("split")));
        attr_int(node("Split", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      case OpKind::Pad:
        inputs.push_back(int64s(op.name + "::pads", op.get_ints("pads")));
        inputs.push_back(
            scalar_float(op.name + "::value", static_cast<float>(op.get_float("value"))));
        node("Pad", name, inputs, outputs);
        return {};
      case OpKind::Flatten:
        attr_int(node("Flatten", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      case OpKind::Reshape:
        inputs.push_back(int64s(op.name + "::shape", op.get_ints("shape")));
        node("Reshape", name, inputs, outputs);
        return {};
      case OpKind::Softmax:
        if (inputs.size() > 1) {  // masked positions: -inf, so that exp gives 0
          const float minus_inf = -std::numeric_limits<float>::infinity();
          node("Where", name + "::mask",
               {inputs[1], inputs[0], scalar_float(op.name + "::minus_inf", minus_inf)},
               {outputs[0] + "::masked"});
          inputs = {outputs[0] + "::masked"};
        }
        attr_int(node("Softmax", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      default:
        return workload_node(op, std::move(inputs), std::move(outputs), name);
    }
  }

  // A constant 0/1 mask (`<mask>.keep`, i8) as an ONNX bool initializer, once.
  std::string bool_mask(const std::string& t) {
    const std::string name = t + "::bool";
    if (!float_constants_.insert(name).second) return name;
    const ir::Tensor& mask = in_.tensor(t);
    std::string raw;
    for (const auto v : mask.int_values) raw.push_back(v != 0 ? 1 : 0);
    initializer(name, onnx::TensorProto::BOOL, mask.shape, raw.data(), raw.size());
    return name;
  }

  // Reduce* over `axes` (empty: all): an input from opset 13 on for ReduceSum, 18 on for the
  // others; an attribute before.
  void reduce_node(const std::string& op_type, const std::string& name, std::string x,
                   const Ints& axes, bool keepdims, const std::string& y) {
    const bool as_input = opset_ >= (op_type == "ReduceSum" ? 13 : 18);
    std::vector<std::string> inputs{std::move(x)};
    if (as_input && !axes.empty()) inputs.push_back(int64s(name + "::axes", axes));
    auto* n = node(op_type, name, inputs, {y});
    if (!as_input && !axes.empty()) attr_ints(n, "axes", axes);
    attr_int(n, "keepdims", keepdims ? 1 : 0);
  }

  // The float form of a unary function: one ONNX op, or its definition in ONNX ops
  // (compiler/ir/unary.cpp), so that every opset from 13 on can hold it.
  void unary_node(const ir::Op& op, const std::string& x, const std::string& y,
                  const std::string& name) {
    const auto constant = [&](const std::string& suffix, double v) {
      return scalar_float(op.name + "::" + suffix, static_cast<float>(v));
    };
    switch (op.kind) {
      case OpKind::HardSigmoid: {
        auto* n = node("HardSigmoid", name, {x}, {y});
        attr_float(n, "alpha", op.get_float("alpha"));
        attr_float(n, "beta", op.get_float("beta"));
        return;
      }
      case OpKind::HardSwish: {  // x * HardSigmoid(x; 1/6, 1/2)
        auto* n = node("HardSigmoid", name + "::gate", {x}, {y + "::gate"});
        attr_float(n, "alpha", 1.0 / 6.0);
        attr_float(n, "beta", 0.5);
        node("Mul", name, {x, y + "::gate"}, {y});
        return;
      }
      case OpKind::Silu:  // x * Sigmoid(x)
        node("Sigmoid", name + "::gate", {x}, {y + "::gate"});
        node("Mul", name, {x, y + "::gate"}, {y});
        return;
      case OpKind::Gelu: {  // 0.5 x (1 + erf(x / sqrt 2)), or the tanh form
        std::string inner = y + "::inner";
        if (op.get_string("approximate") == "tanh") {
          node("Mul", name + "::x2", {x, x}, {y + "::x2"});
          node("Mul", name + "::x3", {y + "::x2", x}, {y + "::x3"});
          node("Mul", name + "::cx3", {y + "::x3", constant("c3", 0.044715)}, {y + "::cx3"});
          node("Add", name + "::poly", {x, y + "::cx3"}, {y + "::poly"});
          node("Mul", name + "::arg", {y + "::poly", constant("c1", 0.7978845608028654)},
               {y + "::arg"});
          node("Tanh", name + "::tanh", {y + "::arg"}, {inner});
        } else {
          node("Mul", name + "::arg", {x, constant("c1", 0.7071067811865476)}, {y + "::arg"});
          node("Erf", name + "::erf", {y + "::arg"}, {inner});
        }
        node("Add", name + "::one_plus", {inner, constant("one", 1.0)}, {y + "::one_plus"});
        node("Mul", name + "::half_x", {x, constant("half", 0.5)}, {y + "::half_x"});
        node("Mul", name, {y + "::half_x", y + "::one_plus"}, {y});
        return;
      }
      default:  // Sigmoid, Tanh, Erf, Sqrt, Exp, Reciprocal, Neg: the ONNX op of that name
        node(std::string(ir::to_string(op.kind)), name, {x}, {y});
        return;
    }
  }

  // RMSNormalization (opset 23) in opset-13 ops: x / sqrt(mean(x^2) + eps) * scale.
  void rms_norm_node(const ir::Op& op, const std::vector<std::string>& inputs, const std::string& y,
                     const std::string& name) {
    const auto rank = static_cast<std::int64_t>(in_.tensor(op.inputs[0]).shape.size());
    std::int64_t axis = op.get_int("axis");
    if (axis < 0) axis += rank;
    Ints axes;
    for (std::int64_t d = axis; d < rank; ++d) axes.push_back(d);
    const std::string& x = inputs[0];
    node("Mul", name + "::square", {x, x}, {y + "::square"});
    reduce_node("ReduceMean", name + "::mean", y + "::square", axes, true, y + "::mean");
    node("Add", name + "::eps",
         {y + "::mean",
          scalar_float(op.name + "::epsilon", static_cast<float>(op.get_float("epsilon")))},
         {y + "::var"});
    node("Sqrt", name + "::sqrt", {y + "::var"}, {y + "::rms"});
    node("Div", name + "::div", {x, y + "::rms"}, {y + "::normed"});
    node("Mul", name, {y + "::normed", inputs[1]}, {y});
  }

  // The float ONNX nodes of the modern-workload kinds (docs/quantization.md, "QDQ ONNX export").
  Status workload_node(const ir::Op& op, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, const std::string& name) {
    const std::string& y = outputs.at(0);
    if (ir::is_unary_function(op.kind)) {
      unary_node(op, inputs[0], y, name);
      return {};
    }
    switch (op.kind) {
      case OpKind::MatMul:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::Pow:
        node(std::string(ir::to_string(op.kind)), name, inputs, outputs);
        return {};
      case OpKind::Where:
        node("Where", name, inputs, outputs);
        return {};
      case OpKind::LayerNormalization: {
        auto* n = node("LayerNormalization", name, inputs, outputs);
        attr_int(n, "axis", op.get_int("axis"));
        attr_float(n, "epsilon", op.get_float("epsilon"));
        return {};
      }
      case OpKind::RMSNormalization:
        rms_norm_node(op, inputs, y, name);
        return {};
      case OpKind::ReduceMean:
      case OpKind::ReduceSum:
      case OpKind::ReduceMax:
        reduce_node(std::string(ir::to_string(op.kind)), name, inputs[0], op.get_ints("axes"),
                    op.get_int("keepdims") != 0, y);
        return {};
      case OpKind::Transpose:
        attr_ints(node("Transpose", name, inputs, outputs), "perm", op.get_ints("perm"));
        return {};
      case OpKind::Slice:
        for (const char* key : {"starts", "ends", "axes", "steps"})
          inputs.push_back(int64s(op.name + "::" + key, op.get_ints(key)));
        node("Slice", name, inputs, outputs);
        return {};
      case OpKind::Gather: {
        const std::string indices = op.name + "::indices";
        const auto& values = op.get_ints("indices");
        initializer(indices, onnx::TensorProto::INT64, op.get_ints("indices_shape"), values.data(),
                    values.size() * sizeof(std::int64_t));
        inputs.push_back(indices);
        attr_int(node("Gather", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      }
      case OpKind::Embedding:  // Gather(table, ids) on axis 0
        attr_int(node("Gather", name, {inputs[1], inputs[0]}, outputs), "axis", 0);
        return {};
      case OpKind::Expand:
        inputs.push_back(int64s(op.name + "::shape", op.get_ints("shape")));
        node("Expand", name, inputs, outputs);
        return {};
      case OpKind::Trilu: {
        const std::int64_t k = op.get_int("k");
        initializer(op.name + "::k", onnx::TensorProto::INT64, {}, &k, sizeof k);
        inputs.push_back(op.name + "::k");
        attr_int(node("Trilu", name, inputs, outputs), "upper", op.get_int("upper"));
        return {};
      }
      case OpKind::Resize: {
        inputs.insert(inputs.end(), {"", "", int64s(op.name + "::sizes", op.get_ints("sizes"))});
        auto* n = node("Resize", name, inputs, outputs);
        for (const char* key : {"mode", "coordinate_transformation_mode", "nearest_mode"}) {
          auto* a = n->add_attribute();
          a->set_name(key);
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s(op.get_string(key));
        }
        return {};
      }
      default:
        return fail("no QDQ form for this op kind");
    }
  }

  // The i32 table input of a unary function or Pow on integers (its last input).
  bool is_table(const ir::Op& op, std::size_t slot) const {
    const bool table_kind = ir::is_unary_function(op.kind) || op.kind == OpKind::Pow;
    const std::size_t value_inputs = op.kind == OpKind::Pow ? 2 : 1;
    return table_kind && slot >= value_inputs && in_.tensor(op.inputs[slot]).dtype == DType::i32;
  }

  Status lower(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::Input:
        add_value_info(graph_->add_input(), op.outputs[0], op.outputs[0]);
        return {};
      case OpKind::Quantize:
        quantize(float_input(op.inputs[0]), op.outputs[0], op.name);
        return {};
      case OpKind::Dequantize: {
        const auto [scale, zero_point] = quant_params(op.inputs[0]);
        std::string source = op.inputs[0];
        if (options_.isolate_layers) source = dequantized(op.inputs[0]);
        if (source != op.inputs[0]) {
          node("Identity", op.name, {source}, {op.outputs[0]});
        } else {
          node("DequantizeLinear", op.name, {source, scale, zero_point}, {op.outputs[0]});
        }
        return {};
      }
      case OpKind::Requantize:
        // The accumulator is the float Conv/Gemm output under the accumulator's name.
        quantize(op.inputs[0], op.outputs[0], op.name);
        return {};
      case OpKind::Clip:
        if (integer_activation(in_.tensor(op.outputs[0]))) {
          // On the integers, as ours: ONNX Clip accepts int8/int16 with bounds of the same
          // type. (DequantizeLinear -> float Clip -> QuantizeLinear loses the Clip: onnxruntime's
          // optimizer fuses a Clip before a QuantizeLinear into it, and ReLU6 came out negative.)
          const ir::Tensor& y = in_.tensor(op.outputs[0]);
          const auto [lo, hi] = clip_bounds(y, op.get_float("min"), op.get_float("max"));
          const std::string lo_name = op.name + "::lo", hi_name = op.name + "::hi";
          initializer_ints(lo_name, y.dtype, {}, {lo});
          initializer_ints(hi_name, y.dtype, {}, {hi});
          node("Clip", op.name, {integer_source(op.inputs[0]), lo_name, hi_name}, {op.outputs[0]});
          return {};
        }
        break;
      case OpKind::BatchNormalization:
      case OpKind::Scale:
        return fail("a realized graph has no " + std::string(ir::to_string(op.kind)) +
                    " (fold it into the preceding Conv before quantizing)");
      default:
        break;
    }
    std::vector<std::string> inputs;
    for (std::size_t slot = 0; slot < op.inputs.size(); ++slot) {
      const std::string& t = op.inputs[slot];
      if (is_table(op, slot)) continue;  // our integer table: the float op is its definition
      if (op.kind == OpKind::Embedding && slot == 0) {  // token ids: the graph's INT32 input
        inputs.push_back(t);
        continue;
      }
      const bool mask =
          (op.kind == OpKind::Where && slot == 0) || (op.kind == OpKind::Softmax && slot == 1);
      inputs.push_back(mask ? bool_mask(t) : float_input(t));
    }
    if (const auto* u = find_int(op, "input_shift"); u && *u > 0)
      inputs[0] = shifted_input(op.inputs[0], static_cast<int>(*u));
    const bool integer_out = integer_activation(in_.tensor(op.outputs[0]));
    if (!integer_out) return float_node(op, inputs, op.outputs);
    std::vector<std::string> float_outputs;
    for (const auto& t : op.outputs) float_outputs.push_back(t + "::f");
    if (auto ok = float_node(op, inputs, float_outputs); !ok) return ok;
    for (std::size_t i = 0; i < op.outputs.size(); ++i)
      quantize(float_outputs[i], op.outputs[i], op.outputs[i] + "::quantize");
    return {};
  }

  const ir::Graph& in_;
  std::set<std::string> shifted_;  // the inputs' shifted forms emitted so far
  OnnxExportOptions options_;
  int opset_ = 13;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::map<std::string, std::string> dequantized_;
  std::set<std::string> emitted_params_;
  std::set<std::string> float_constants_;
  std::vector<std::string> golden_inputs_;
  std::set<std::string> golden_declared_;
};

}  // namespace

std::string golden_input_name(const std::string& tensor) {
  return tensor + "::golden";
}

Result<OnnxExport> export_qdq_onnx(const ir::Graph& quantized, const OnnxExportOptions& options) {
  return Exporter(quantized, options).run();
}

}  // namespace tessel::quant
