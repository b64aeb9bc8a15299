// QDQ ONNX export: QuantizeLinear/DequantizeLinear around float ops, integer initializers.
#include "compiler/quant/onnx_export.hpp"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <set>

#include "compiler/ir/analysis.hpp"
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
    for (const auto& [name, t] : in_.tensors())
      if (t.dtype == DType::i16) result.opset = 21;
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
        if (inputs.size() > 1) return fail("a masked Softmax has no QDQ form yet");
        attr_int(node("Softmax", name, inputs, outputs), "axis", op.get_int("axis"));
        return {};
      default:
        return fail("no QDQ form for this op kind");
    }
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
    for (const auto& t : op.inputs) inputs.push_back(float_input(t));
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
  OnnxExportOptions options_;
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
