// Converters for arithmetic: unary functions, broadcasting binary ops, Where, Cast, Softmax,
// LayerNormalization, reductions and MatMul (N-D, or Gemm for a constant 2-D right operand).
#include <algorithm>
#include <map>

#include "compiler/frontend/importer.hpp"

namespace tessel::frontend::detail {
namespace {

const std::map<std::string, ir::OpKind, std::less<>>& unary_kinds() {
  static const std::map<std::string, ir::OpKind, std::less<>> kinds = {
      {"Relu", ir::OpKind::Relu},
      {"Sigmoid", ir::OpKind::Sigmoid},
      {"HardSigmoid", ir::OpKind::HardSigmoid},
      {"HardSwish", ir::OpKind::HardSwish},
      {"Tanh", ir::OpKind::Tanh},
      {"Erf", ir::OpKind::Erf},
      {"Gelu", ir::OpKind::Gelu},
      {"Sqrt", ir::OpKind::Sqrt},
      {"Exp", ir::OpKind::Exp},
      {"Reciprocal", ir::OpKind::Reciprocal},
      {"Neg", ir::OpKind::Neg}};
  return kinds;
}

const std::map<std::string, ir::OpKind, std::less<>>& binary_kinds() {
  static const std::map<std::string, ir::OpKind, std::less<>> kinds = {{"Add", ir::OpKind::Add},
                                                                       {"Sub", ir::OpKind::Sub},
                                                                       {"Mul", ir::OpKind::Mul},
                                                                       {"Div", ir::OpKind::Div},
                                                                       {"Pow", ir::OpKind::Pow}};
  return kinds;
}

ConstantData as_float_data(ConstantData data) {
  if (data.is_float()) return data;
  ConstantData out = ConstantData::of_floats(data.dims, {});
  for (std::int64_t v : data.ints) out.floats.push_back(static_cast<float>(v));
  return out;
}

std::int64_t product(const Ints& dims, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t d = from; d < to; ++d) n *= dims[d];
  return n;
}

}  // namespace

void Importer::convert_unary() {
  const std::string& type = node().op_type();
  ir::Attrs attrs;
  if (type == "HardSigmoid") {
    check_attributes({"alpha", "beta"});
    attrs["alpha"] = static_cast<double>(attr_float("alpha", 0.2F));
    attrs["beta"] = static_cast<double>(attr_float("beta", 0.5F));
  } else if (type == "Gelu") {
    check_attributes({"approximate"});
    const std::string approximate = attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      fail_node("approximate " + in_quotes(approximate) + " is not one of 'none', 'tanh'");
    }
    attrs["approximate"] = approximate;
  } else {
    check_attributes({});
  }
  expect_outputs(1);
  expect_inputs(1, 1);
  emit(unary_kinds().at(type), {data_input(0)}, std::move(attrs), node().output(0));
}

void Importer::convert_binary() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(2, 2);
  const std::string& type = node().op_type();
  std::vector<std::string> inputs;
  for (int slot = 0; slot < 2; ++slot) {
    const Value& value = input_value(slot);
    if (value.is_constant() && type == "Pow" && slot == 1) {
      // Pow alone among these takes an exponent of another type (float x int64 in ONNX's tests).
      if (!materialized_.count(value.ir_name)) {
        inputs.push_back(
            add_constant(value.ir_name, as_float_data(value_data(value)), value.origin));
        continue;
      }
    }
    inputs.push_back(data_input(slot));
  }
  const ir::Shape a = shape_of(inputs[0]), b = shape_of(inputs[1]);
  if (!broadcast(a, b)) {
    fail_node("operands " + in_quotes(node().input(0)) + " " + ir::shape_string(a) + " and " +
              in_quotes(node().input(1)) + " " + ir::shape_string(b) + " do not broadcast");
  }
  emit(binary_kinds().at(type), std::move(inputs), {}, node().output(0));
}

void Importer::convert_where() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(3, 3);
  const Value& cond = input_value(0);
  if (!cond.is_constant()) {
    fail_node(
        "condition (input 0 " + in_quotes(node().input(0)) +
        ") is computed at run time; Tessel supports Where with a constant condition (a mask)");
  }
  const std::string mask = add_constant(cond.ir_name, as_float_data(value_data(cond)), cond.origin);
  emit(ir::OpKind::Where, {mask, data_input(1), data_input(2)}, {}, node().output(0));
}

void Importer::convert_cast() {
  check_attributes({"to", "saturate"});
  expect_outputs(1);
  expect_inputs(1, 1);
  const std::int64_t to = attr_int("to", 0);
  const bool ids =
      !is_constant_input(0) && graph_.tensor(input_value(0).ir_name).dtype == ir::DType::i32;
  if (ids) {  // token ids stay i32 (INT32 <-> INT64 casts are the identity on them)
    if (to != onnx::TensorProto_DataType_INT64 && to != onnx::TensorProto_DataType_INT32) {
      fail_node("Cast of the token ids " + in_quotes(node().input(0)) + " to " +
                data_type_name(static_cast<int>(to)) +
                " is not supported (token ids index an embedding table; only INT32/INT64 casts)");
    }
    alias_output_to_input();
    return;
  }
  if (to != onnx::TensorProto_DataType_FLOAT && to != onnx::TensorProto_DataType_DOUBLE) {
    fail_node("Cast of the activation " + in_quotes(node().input(0)) + " to " +
              data_type_name(static_cast<int>(to)) +
              " is not supported (Tessel's activations are float; only float->float casts are)");
  }
  alias_output_to_input();
}

void Importer::convert_softmax() {
  check_attributes({"axis"});
  expect_outputs(1);
  expect_inputs(1, 1);
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  const std::size_t rank = shape.size();
  const std::int64_t axis = normalize_axis(attr_int("axis", opset_ >= 13 ? -1 : 1), rank, "axis");
  if (opset_ >= 13 || axis == static_cast<std::int64_t>(rank) - 1) {
    emit(ir::OpKind::Softmax, {x}, {{"axis", axis}}, node().output(0));
    return;
  }
  // Before opset 13 the input is coerced to 2-D at `axis` and normalised over the whole second
  // dimension: exactly Reshape [outer, inner] -> Softmax(axis 1) -> Reshape back.
  const auto a = static_cast<std::size_t>(axis);
  const Ints flat{product(shape, 0, a), product(shape, a, rank)};
  const std::string base = node().output(0);
  const std::string flattened =
      emit_temp(ir::OpKind::Reshape, {x}, {{"shape", flat}}, base + ".2d");
  const std::string normalised =
      emit_temp(ir::OpKind::Softmax, {flattened}, {{"axis", std::int64_t{1}}}, base + ".softmax");
  emit(ir::OpKind::Reshape, {normalised}, {{"shape", Ints(shape)}}, base);
}

void Importer::convert_layernorm() {
  check_attributes({"axis", "epsilon", "stash_type"});
  expect_outputs(1);
  expect_inputs(2, 3);
  if (attr_int("stash_type", 1) != 1) {
    fail_node("stash_type " + std::to_string(attr_int("stash_type", 1)) +
              " is not supported (only 1: float statistics)");
  }
  const std::string x = data_input(0);
  const std::int64_t axis = normalize_axis(attr_int("axis", -1), shape_of(x).size(), "axis");
  const float epsilon = attr_float("epsilon", 1e-5F);
  if (!(epsilon >= 0.0F)) fail_node("epsilon " + std::to_string(epsilon) + " must not be negative");
  std::vector<std::string> inputs{x, data_input(1)};
  if (has_input(2)) inputs.push_back(data_input(2));
  emit(ir::OpKind::LayerNormalization, std::move(inputs),
       {{"axis", axis}, {"epsilon", static_cast<double>(epsilon)}}, node().output(0));
}

void Importer::convert_reduce() {
  const std::string& type = node().op_type();
  // The axes moved from an attribute to an input in opset 13 (ReduceSum) or 18 (the others).
  const std::int64_t input_from = type == "ReduceSum" ? 13 : 18;
  // ReduceL2 and ReduceSumSquare as the IR's ops: a Mul of x by itself, a ReduceSum, and for
  // L2 a Sqrt (swin_v2's cosine attention normalises q and k with ReduceL2).
  const bool squares = type == "ReduceL2" || type == "ReduceSumSquare";
  if (opset_ >= input_from) {
    check_attributes({"keepdims", "noop_with_empty_axes"});
  } else {
    check_attributes({"axes", "keepdims"});
  }
  expect_outputs(1);
  expect_inputs(1, opset_ >= input_from ? 2 : 1);
  const std::string x = data_input(0);
  const Ints axes = axes_operand(1, "axes", input_from);
  const std::int64_t keepdims = attr_int("keepdims", 1);
  if (keepdims != 0 && keepdims != 1)
    fail_node("keepdims " + std::to_string(keepdims) + " must be 0 or 1");
  if (axes.empty() && attr_int("noop_with_empty_axes", 0) != 0) {
    if (squares) fail_node("noop_with_empty_axes with no axes is not supported for " + type);
    alias_output_to_input();  // reduce over no axes: the input itself
    return;
  }
  const std::size_t rank = shape_of(x).size();
  Ints normalised;
  for (std::int64_t axis : axes) normalised.push_back(normalize_axis(axis, rank, "axes"));
  if (squares) {
    const std::string base = node().output(0);
    const std::string square = emit_temp(ir::OpKind::Mul, {x, x}, {}, base + ".square");
    const ir::Attrs attrs = {{"axes", normalised}, {"keepdims", keepdims}};
    if (type == "ReduceSumSquare") {
      emit(ir::OpKind::ReduceSum, {square}, attrs, base);
      return;
    }
    const std::string sum = emit_temp(ir::OpKind::ReduceSum, {square}, attrs, base + ".sum");
    emit(ir::OpKind::Sqrt, {sum}, {}, base);
    return;
  }
  const ir::OpKind kind = type == "ReduceMean"  ? ir::OpKind::ReduceMean
                          : type == "ReduceSum" ? ir::OpKind::ReduceSum
                                                : ir::OpKind::ReduceMax;
  emit(kind, {x}, {{"axes", normalised}, {"keepdims", keepdims}}, node().output(0));
}

bool Importer::absorb_bias_add(std::vector<std::string>& gemm_inputs, std::string& output,
                               std::int64_t m, std::int64_t n) {
  // MatMul followed by the Add of a constant [N] (or, 2-D, [M,N]) bias is a fully connected layer.
  const auto& readers = readers_[output];
  if (readers.size() != 1 || graph_output_names_.count(output)) return false;
  const onnx::NodeProto& add = graph_proto_->node(readers[0]);
  if (add.op_type() != "Add" || !(add.domain().empty() || add.domain() == "ai.onnx") ||
      add.input_size() != 2 || add.attribute_size() != 0 || add.output_size() != 1) {
    return false;
  }
  const int other = add.input(0) == output ? 1 : 0;
  const auto it = values_.find(add.input(other));
  if (add.input(1 - other) != output || it == values_.end() || !it->second.is_constant()) {
    return false;
  }
  const ConstantData bias = value_data(it->second);
  if (!bias.is_float() || !(bias.dims == Ints{n} || (m > 0 && bias.dims == Ints{m, n}))) {
    return false;
  }
  const Value bias_value = it->second;
  gemm_inputs.push_back(materialize(bias_value));
  absorbed_.insert(readers[0]);
  output = add.output(0);
  return true;
}

void Importer::convert_matmul() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(2, 2);
  const ir::Shape a_shape = input_shape(0), b_shape = input_shape(1);
  if (a_shape.empty() || b_shape.empty()) fail_node("operands must not be scalars");
  std::string a = data_input(0), b = data_input(1);
  std::string output = node().output(0);
  const std::string base = output;
  // ONNX: a vector operand is promoted to a matrix ([K] -> [1,K] on the left, [K,1] on the
  // right) and the inserted dimension removed from the result.
  if (a_shape.size() == 1)
    a = emit_temp(ir::OpKind::Reshape, {a}, {{"shape", Ints{1, a_shape[0]}}}, base + ".a2d");
  if (b_shape.size() == 1)
    b = emit_temp(ir::OpKind::Reshape, {b}, {{"shape", Ints{b_shape[0], 1}}}, base + ".b2d");
  const ir::Shape a2 = shape_of(a), b2 = shape_of(b);
  if (a2.back() != b2[b2.size() - 2]) {
    fail_node("operands " + ir::shape_string(a_shape) + " and " + ir::shape_string(b_shape) +
              " disagree on K");
  }
  Ints result;  // ONNX's result shape
  if (auto batch = broadcast(Ints(a2.begin(), a2.end() - 2), Ints(b2.begin(), b2.end() - 2))) {
    result = batch.value();
  } else {
    fail_node("batch dims of " + ir::shape_string(a_shape) + " and " + ir::shape_string(b_shape) +
              " do not broadcast");
  }
  if (a_shape.size() > 1) result.push_back(a2[a2.size() - 2]);
  if (b_shape.size() > 1) result.push_back(b2.back());
  const bool vector_result = a_shape.size() == 1 || b_shape.size() == 1;
  if (is_constant_input(1) && b_shape.size() == 2) {
    // A layer with constant weights: rows of the left operand times a [K, N] matrix is a Gemm.
    const std::int64_t n = b2[1], k = b2[0];
    const std::int64_t rows = product(a2, 0, a2.size() - 1);
    const bool flat = a2.size() == 2;
    std::string rows_in =
        flat ? a : emit_temp(ir::OpKind::Reshape, {a}, {{"shape", Ints{rows, k}}}, base + ".rows");
    std::vector<std::string> inputs{rows_in, b};
    const bool absorbed = absorb_bias_add(inputs, output, flat ? rows : -1, n);
    if (flat && !vector_result) {
      emit(ir::OpKind::Gemm, std::move(inputs), {{"transB", std::int64_t{0}}}, output);
      return;
    }
    const std::string product_rows = emit_temp(ir::OpKind::Gemm, std::move(inputs),
                                               {{"transB", std::int64_t{0}}}, base + ".gemm");
    (void)absorbed;
    emit(ir::OpKind::Reshape, {product_rows}, {{"shape", result}}, output);
    return;
  }
  if (!vector_result) {
    emit(ir::OpKind::MatMul, {a, b}, {}, output);
    return;
  }
  const std::string product_value = emit_temp(ir::OpKind::MatMul, {a, b}, {}, base + ".matmul");
  emit(ir::OpKind::Reshape, {product_value}, {{"shape", result.empty() ? Ints{1} : result}},
       output);
}

}  // namespace tessel::frontend::detail
