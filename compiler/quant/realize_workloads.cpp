// Annotate and realize the modern-workload ops (docs/quantization.md, "Modern workloads"):
// which operands may be constants, which ops share a scale class, and each op's quantized form.
#include <algorithm>
#include <cmath>

#include "compiler/ir/unary.hpp"
#include "compiler/quant/realizer.hpp"
#include "compiler/quant/workload_params.hpp"

namespace tessel::quant::detail {

using ir::DType;
using ir::OpKind;

namespace {

// What an operand slot of a workload op may hold.
enum class Role { activation, constant, either };

std::vector<Role> roles(OpKind kind) {
  using enum Role;
  switch (kind) {
    case OpKind::MatMul:
      return {activation, either};
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      return {either, either};
    case OpKind::Div:
    case OpKind::Pow:
    case OpKind::Softmax:
      return {activation, constant};
    case OpKind::Where:
      return {constant, either, either};
    case OpKind::LayerNormalization:
    case OpKind::RMSNormalization:
      return {activation, constant, constant};
    default:
      return {activation};
  }
}

bool is_table_kind(OpKind kind) {
  return ir::is_unary_function(kind) || kind == OpKind::Pow;
}

// The length of the op's axis in its first input, and (from_axis) the elements from that axis
// on; -1 for both when the axis is not one of the input's dims (a graph whose shapes were never
// inferred: check_op refuses it instead of reading past the shape).
std::int64_t axis_length(const ir::Graph& graph, const ir::Op& op, std::int64_t* from_axis) {
  const auto& shape = graph.tensor(op.inputs[0]).shape;
  std::int64_t axis = op.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(shape.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(shape.size())) {
    *from_axis = -1;
    return -1;
  }
  *from_axis = 1;
  for (std::size_t d = static_cast<std::size_t>(axis); d < shape.size(); ++d)
    *from_axis *= shape[d];
  return shape[static_cast<std::size_t>(axis)];
}

// The refusals that depend on the op alone (docs/quantization.md names each).
Status check_op(const ir::Graph& graph, const ir::Op& op) {
  std::int64_t from_axis = 0;
  const bool has_axis = op.kind == OpKind::Softmax || op.kind == OpKind::LayerNormalization ||
                        op.kind == OpKind::RMSNormalization;
  if (has_axis && axis_length(graph, op, &from_axis) < 0)
    return fail(where(op) + ": axis " + std::to_string(op.get_int("axis")) +
                " is outside its input %" + op.inputs[0] + " of rank " +
                std::to_string(graph.tensor(op.inputs[0]).shape.size()) +
                " (were its shapes inferred?)");
  if (op.kind == OpKind::Div) {
    for (const float v : graph.tensor(op.inputs[1]).f32_values)
      if (v == 0.0f) return fail(where(op) + ": the divisor %" + op.inputs[1] + " holds a zero");
  } else if (op.kind == OpKind::Pow && graph.tensor(op.inputs[1]).f32_values.size() != 1) {
    return fail(where(op) + ": the exponent %" + op.inputs[1] +
                " must be a constant scalar (a table of the base)");
  } else if (op.kind == OpKind::Softmax && axis_length(graph, op, &from_axis) > (1 << 16)) {
    return fail(where(op) + ": rows longer than 65536 are refused (the int32 exp sum)");
  } else if ((op.kind == OpKind::LayerNormalization || op.kind == OpKind::RMSNormalization) &&
             (axis_length(graph, op, &from_axis), from_axis > (1 << 14))) {
    return fail(where(op) + ": rows of " + std::to_string(from_axis) +
                " elements; the integer form normalises at most 16384");
  }
  return {};
}

}  // namespace

bool is_float_softmax(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind != OpKind::Softmax || op.inputs.size() != 1) return false;
  const auto& y = op.outputs[0];
  const auto& outputs = graph.outputs();
  return graph.consumers(y).empty() &&
         std::find(outputs.begin(), outputs.end(), y) != outputs.end();
}

bool is_workload_kind(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == OpKind::Softmax) return !is_float_softmax(graph, op);
  return op.kind == OpKind::Add || op.kind >= OpKind::MatMul;
}

bool joins_scale_class(OpKind kind) {
  switch (kind) {
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::Gather:
    case OpKind::Expand:
    case OpKind::Trilu:
    case OpKind::Where:
    case OpKind::ReduceMax:
    case OpKind::Resize:
    case OpKind::Embedding:  // the output takes the table's codes (a constant of its class)
      return true;
    default:
      return false;
  }
}

Result<std::vector<std::string>> workload_activations(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == OpKind::Embedding) {  // i32 ids (not calibrated) and a constant float table
    const ir::Tensor& ids = graph.tensor(op.inputs[0]);
    const ir::Tensor& table = graph.tensor(op.inputs[1]);
    if (ids.constant || ids.dtype != DType::i32)
      return fail(where(op) + ": ids %" + ids.name + " must be i32 token ids (an activation)");
    if (!table.constant || table.f32_values.empty())
      return fail(where(op) + ": table %" + table.name + " must be a float constant with data");
    if (auto ok = check_finite(table); !ok) return fail(where(op) + ": " + ok.reason());
    return std::vector<std::string>{};
  }
  const auto slot_roles = roles(op.kind);
  std::vector<std::string> activations;
  int value_constants = 0, value_slots = 0;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const Role role = i < slot_roles.size() ? slot_roles[i] : Role::activation;
    const ir::Tensor& t = graph.tensor(op.inputs[i]);
    if (role != Role::constant) ++value_slots;
    if (!t.constant) {
      if (role == Role::constant)
        return fail(where(op) + ": input %" + t.name +
                    " must be a constant for the integer form (docs/quantization.md)");
      activations.push_back(t.name);
      continue;
    }
    if (role == Role::activation)
      return fail(where(op) + ": input %" + t.name +
                  " is a constant; fold it or make it an activation to quantize");
    if (t.f32_values.empty())
      return fail(where(op) + ": input %" + t.name + " must be a float constant with data");
    if (auto ok = check_finite(t); !ok) return fail(where(op) + ": " + ok.reason());
    if (role == Role::either) ++value_constants;
  }
  if (value_slots > 0 && value_constants == value_slots)
    return fail(where(op) + ": every value operand is a constant; fold it first");
  if (auto ok = check_op(graph, op); !ok) return ok.failure();
  return activations;
}

bool Realizer::is_workload_op(const ir::Op& op) const {
  return is_workload_kind(in, op);
}

Status Realizer::workload_op(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::MatMul:
      if (in.tensor(op.inputs[1]).constant && in.tensor(op.inputs[1]).shape.size() == 2)
        return matmul(op);  // a Gemm for the quantizer: per-channel weights with headroom
      return activation_matmul(op);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
      return binary(op);
    case OpKind::Where:
      return select(op);
    case OpKind::Embedding: {  // the table at the output's scale: rows are copied codes
      ir::Op q = op;
      auto table = operand(op, 1, scale_of(op.outputs[0]), bits_of(op.outputs[0]));
      if (!table) return table.failure();
      q.inputs = {op.inputs[0], table.value()};
      return emit(std::move(q));
    }
    case OpKind::Softmax:
      return softmax(op);
    case OpKind::LayerNormalization:
    case OpKind::RMSNormalization:
      return normalization(op);
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
      return reduce(op);
    default:
      if (is_table_kind(op.kind)) return unary(op);
      break;
  }
  // Movement ops and ReduceMax: the same op on codes of one scale class.
  ir::Op q = op;
  q.inputs = {qname(op.inputs[0])};
  return emit(std::move(q));
}

Result<std::string> Realizer::operand(const ir::Op& op, std::size_t slot, float scale, int bits,
                                      bool reciprocal) {
  const std::string& name = op.inputs[slot];
  const ir::Tensor& c = in.tensor(name);
  if (!c.constant) return qname(name);
  std::vector<float> values = c.f32_values;
  if (reciprocal)
    for (float& v : values) v = static_cast<float>(1.0 / static_cast<double>(v));
  if (scale == 0.0f) {
    double max_abs = 0.0;
    for (const float v : values) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
    scale = max_abs > 0.0 ? static_cast<float>(max_abs / intops::qmax(bits)) : 1.0f;
  }
  ir::Tensor q;
  q.name = out.unique_name(reciprocal ? name + ".reciprocal" : name);
  q.dtype = dtype_for(bits);
  q.shape = c.shape;
  q.quant = ir::QuantParams::per_tensor(scale, 0);
  q.int_values.resize(values.size());
  quantize_values(values, scale, bits, q.int_values);
  const std::string q_name = q.name;
  if (auto ok = out.add_constant(std::move(q)); !ok) return ok.failure();
  return q_name;
}

Result<std::string> Realizer::float_constant(const std::string& name) {
  if (out.has_tensor(name)) return name;  // shared by two ops
  ir::Tensor c = in.tensor(name);
  if (auto ok = out.add_constant(std::move(c)); !ok) return ok.failure();
  return name;
}

Result<std::string> Realizer::mask_constant(const std::string& name) {
  const ir::Tensor& c = in.tensor(name);
  ir::Tensor q;
  q.name = out.unique_name(name + ".keep");
  q.dtype = DType::i8;
  q.shape = c.shape;
  for (const float v : c.f32_values) q.int_values.push_back(v != 0.0f ? 1 : 0);
  const std::string q_name = q.name;
  if (auto ok = out.add_constant(std::move(q)); !ok) return ok.failure();
  return q_name;
}

Status Realizer::emit(ir::Op q) {
  const std::vector<std::string> outputs = q.outputs;
  for (auto& t : q.outputs) t = qname(t);
  for (const auto& t : outputs)
    if (auto ok = declare_int(t); !ok) return ok;
  if (auto id = out.add_op(std::move(q)); !id) return id.failure();
  return {};
}

Status Realizer::unary(const ir::Op& op) {
  const std::string& x = op.inputs[0];
  const std::string& y = op.outputs[0];
  if (auto ok = declare_int(y); !ok) return ok;
  auto table = unary_table(in, op, out.tensor(qname(x)), out.tensor(qname(y)));
  if (!table) return table.failure();
  ir::Tensor t;
  t.name = out.unique_name(op.name + ".table");
  t.dtype = DType::i32;
  t.shape = {static_cast<std::int64_t>(table.value().size())};
  t.int_values = std::move(table).value();
  const std::string table_name = t.name;
  if (auto ok = out.add_constant(std::move(t)); !ok) return ok;
  ir::Op q = op;
  q.inputs = {qname(x)};
  if (op.kind == OpKind::Pow) {  // (x, exponent, table): the exponent stays for readers
    auto e = float_constant(op.inputs[1]);
    if (!e) return e.failure();
    q.inputs.push_back(e.value());
  }
  q.inputs.push_back(table_name);
  q.outputs = {qname(y)};
  if (auto id = out.add_op(std::move(q)); !id) return id.failure();
  return {};
}

Status Realizer::binary(const ir::Op& op) {
  const std::string& y = op.outputs[0];
  const int bits = bits_of(y);
  ir::Op q = op;
  q.inputs.clear();
  for (std::size_t slot = 0; slot < 2; ++slot) {
    auto name = operand(op, slot, 0.0f, bits, op.kind == OpKind::Div && slot == 1);
    if (!name) return name.failure();
    q.inputs.push_back(name.value());
  }
  if (op.kind == OpKind::Div) q.kind = OpKind::Mul;  // by the quantized reciprocal
  const double s_a = out.tensor(q.inputs[0]).quant->scales.at(0);
  const double s_b = out.tensor(q.inputs[1]).quant->scales.at(0);
  const double s_y = scale_of(y);
  const double largest = q.kind == OpKind::Mul ? s_a * s_b / s_y : std::max(s_a, s_b) / s_y;
  if (!(largest < 1073741824.0))  // 2^30: a 31-bit multiplier with shift >= 1
    return fail(where(op) + ": the output scale is too small for its operands' scales");
  return emit(std::move(q));
}

Status Realizer::select(const ir::Op& op) {
  const std::string& y = op.outputs[0];
  ir::Op q = op;
  auto cond = mask_constant(op.inputs[0]);
  if (!cond) return cond.failure();
  q.inputs = {cond.value()};
  for (std::size_t slot = 1; slot < 3; ++slot) {
    auto name = operand(op, slot, scale_of(y), bits_of(y));  // a constant branch: y's scale
    if (!name) return name.failure();
    q.inputs.push_back(name.value());
  }
  return emit(std::move(q));
}

Status Realizer::activation_matmul(const ir::Op& op) {
  const std::string& y = op.outputs[0];
  auto b = operand(op, 1, 0.0f, bits_of(y));  // an N-D constant: per tensor
  if (!b) return b.failure();
  const std::string a = qname(op.inputs[0]);
  ir::Op q = op;
  q.inputs = {a, b.value()};
  int shift = matmul_shift(q, out.tensor(a), out.tensor(b.value()));
  // The probabilities of an integer Softmax over a's last axis sum to one per row: a tighter
  // bound than the dtypes' (docs/quantization.md, "MatMul of two activations").
  if (const int u = probabilities_shift(a, dtype_bits(out.tensor(b.value()).dtype));
      u >= 0 && u < shift) {
    q.attrs["operand_shift"] = std::int64_t{u};
    shift = u;
  }
  if (shift < 0)
    return fail(where(op) + ": " + std::to_string(out.tensor(a).shape.back()) +
                " products per output cannot fit an int32 accumulator");
  const double s_acc = static_cast<double>(out.tensor(a).quant->scales.at(0)) *
                       out.tensor(b.value()).quant->scales.at(0) * std::ldexp(1.0, 2 * shift);
  ir::Tensor acc;
  acc.name = out.unique_name(op.name + ".acc");
  acc.dtype = DType::i32;
  acc.shape = in.tensor(y).shape;
  acc.quant = ir::QuantParams::per_tensor(static_cast<float>(s_acc), 0);
  const std::string acc_name = acc.name;
  if (auto ok = out.declare_tensor(std::move(acc)); !ok) return ok;
  q.outputs = {acc_name};
  if (auto id = out.add_op(std::move(q)); !id) return id.failure();
  if (auto ok = declare_int(y); !ok) return ok;
  ir::Op requantize;
  requantize.name = out.unique_name(op.name + ".requantize");
  requantize.kind = OpKind::Requantize;
  requantize.inputs = {acc_name};
  requantize.outputs = {qname(y)};
  if (auto id = out.add_op(std::move(requantize)); !id) return id.failure();
  return {};
}

int Realizer::probabilities_shift(const std::string& a, int bits_b) const {
  const auto id = out.producer(a);
  if (!id) return -1;
  const ir::Op& softmax = out.op(*id);
  const ir::Tensor& p = out.tensor(a);
  if (softmax.kind != OpKind::Softmax || !is_integer(p.dtype) || p.shape.empty()) return -1;
  const auto rank = static_cast<std::int64_t>(p.shape.size());
  const std::int64_t axis = softmax.get_int("axis");
  if ((axis < 0 ? axis + rank : axis) != rank - 1) return -1;
  const intops::SoftmaxParams params = softmax_params(out.tensor(softmax.inputs[0]), p);
  return softmax_operand_shift(params.output, dtype_bits(p.dtype), bits_b, p.shape.back());
}

Status Realizer::reduce(const ir::Op& op) {
  ir::Op q = op;
  q.inputs = {qname(op.inputs[0])};
  if (auto ok = emit(q); !ok) return ok;
  auto p = reduce_params(op, out.tensor(qname(op.inputs[0])), out.tensor(qname(op.outputs[0])));
  if (!p) return p.failure();
  return {};
}

Status Realizer::softmax(const ir::Op& op) {
  ir::Op q = op;
  q.inputs = {qname(op.inputs[0])};
  if (op.inputs.size() > 1) {
    auto mask = mask_constant(op.inputs[1]);
    if (!mask) return mask.failure();
    q.inputs.push_back(mask.value());
  }
  return emit(std::move(q));
}

Status Realizer::normalization(const ir::Op& op) {
  ir::Op q = op;
  q.inputs = {qname(op.inputs[0])};
  for (std::size_t slot = 1; slot < op.inputs.size(); ++slot) {
    auto c = float_constant(op.inputs[slot]);
    if (!c) return c.failure();
    q.inputs.push_back(c.value());
  }
  const std::string name = q.name;
  if (auto ok = emit(std::move(q)); !ok) return ok;
  auto p = norm_params(out, out.op(*out.find_op(name)));
  if (!p) return p.failure();
  return {};
}

nlohmann::json workload_op_json(const ir::Graph& quantized, const ir::Op& op) {
  nlohmann::json e;
  if (op.inputs.empty() || op.outputs.empty()) return e;
  const auto tensor = [&](std::size_t slot) -> const ir::Tensor& {
    return quantized.tensor(op.inputs.at(slot));
  };
  const ir::Tensor& y = quantized.tensor(op.outputs[0]);
  if (!is_integer(tensor(0).dtype) && op.kind != OpKind::Where) return e;
  if (is_table_kind(op.kind)) {
    const ir::Tensor& table = tensor(op.inputs.size() - 1);
    if (table.dtype != DType::i32) return e;
    e["input_bits"] = dtype_bits(tensor(0).dtype);
    e["table"] = table.int_values;
  } else if (op.kind == OpKind::Mul) {
    const auto p = mul_params(tensor(0), tensor(1), y);
    e = {{"multiplier", p.multiplier}, {"shift", p.shift}};
  } else if (op.kind == OpKind::Sub) {
    const auto p = add_params(tensor(0), tensor(1), y);
    e = {{"multiplier_a", p.multiplier_a}, {"multiplier_b", p.multiplier_b}, {"shift", p.shift}};
  } else if (op.kind == OpKind::Softmax) {
    const auto p = softmax_params(tensor(0), y);
    e = {{"exp_high", p.exp_high},
         {"exp_low", p.exp_low},
         {"multiplier", p.output.multiplier},
         {"shift", p.output.shift}};
  } else if (op.kind == OpKind::LayerNormalization || op.kind == OpKind::RMSNormalization) {
    auto p = norm_params(quantized, op);
    if (!p) return e;
    std::vector<std::int64_t> multiplier, shift, bias;
    for (const auto& a : p.value().affine) {
      multiplier.push_back(a.multiplier);
      shift.push_back(a.shift);
      bias.push_back(a.bias);
    }
    e = {{"elements", p.value().n},
         {"epsilon_term", p.value().epsilon_term},
         {"multiplier", multiplier},
         {"shift", shift},
         {"bias", bias}};
  } else if (op.kind == OpKind::ReduceSum || op.kind == OpKind::ReduceMean) {
    auto p = reduce_params(op, tensor(0), y);
    if (!p) return e;
    e = {{"reduced_elements", ir::element_count(tensor(0).shape) / ir::element_count(y.shape)},
         {"multiplier", p.value().multiplier},
         {"shift", p.value().shift}};
  } else if (op.kind == OpKind::MatMul && y.dtype == DType::i32) {
    e = {{"operand_shift", matmul_shift(op, tensor(0), tensor(1))}};
    if (op.get_int("input_shift") > 0) e["input_shift"] = op.get_int("input_shift");
  }
  return e;
}

}  // namespace tessel::quant::detail
