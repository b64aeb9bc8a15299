// Lowering of the transformer and modern-CNN ops (docs/quantization.md, "Modern workloads") to
// workload kernels (workload_ops.cuh): each operand is a logical strided view of its buffer,
// so transposes, slices and broadcasts are strides, constants are buffers with contents, and
// a Requantize after a MatMul is its epilogue.
#include <cstring>

#include "compiler/ir/shape_rules.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cuda/lower_internal.hpp"

namespace tessel::cuda::detail {

namespace {

template <class T>
std::vector<std::uint8_t> bytes_of(const T* data, std::size_t count) {
  std::vector<std::uint8_t> bytes(count * sizeof(T));
  if (count) std::memcpy(bytes.data(), data, bytes.size());
  return bytes;
}

std::int64_t view_elements(const Strided& v) {
  return strided_elements(v);
}

}  // namespace

Result<Strided> Lowering::logical_view(const std::string& tensor, const ir::Op& op) const {
  const PlanView v = place_.at(tensor);
  ir::Shape shape = graph_.tensor(tensor).shape;
  if (shape.empty()) shape = {1};
  const int rank = static_cast<int>(shape.size());
  if (rank > kMaxRank)
    return fail(where(op) + ": %" + tensor + " has rank " + std::to_string(rank) +
                " (the GPU backend takes up to " + std::to_string(kMaxRank) + ")");
  Strided s;
  s.rank = rank;
  s.offset = v.channel_offset;
  for (int d = 0; d < rank; ++d) s.dims[d] = shape[static_cast<std::size_t>(d)];
  if (v.h == 1 && v.w == 1 && shape.back() == v.c && ir::element_count(shape) == v.n * v.c) {
    s.strides[rank - 1] = 1;
    if (rank >= 2) s.strides[rank - 2] = v.pixel_stride;
    for (int d = rank - 3; d >= 0; --d) s.strides[d] = s.strides[d + 1] * s.dims[d + 1];
    return s;
  }
  if (rank == 4 && shape == ir::Shape{v.n, v.c, v.h, v.w}) {
    s.strides[0] = v.h * v.w * v.pixel_stride;
    s.strides[1] = 1;
    s.strides[2] = v.w * v.pixel_stride;
    s.strides[3] = v.pixel_stride;
    return s;
  }
  return fail(where(op) + ": reads %" + tensor +
              ", a flatten of an H x W map that only a Gemm can read");
}

Status Lowering::place_constant(const std::string& tensor, const ir::Op& op) {
  if (place_.count(tensor)) return {};
  const auto& t = graph_.tensor(tensor);
  if (!t.constant || !t.has_data())
    return fail(where(op) + ": input %" + tensor + " is not computed on the GPU");
  auto type = elem_type(t.dtype, op);
  if (!type) return type.failure();
  const PlanView v = new_buffer(tensor, type.value(), true);
  Buffer& b = plan_.buffers[static_cast<std::size_t>(v.buffer)];
  b.internal = true;
  b.contents.assign(static_cast<std::size_t>(b.bytes()), 0);
  const auto values = cpu::TensorData::from_constant(t).to_i32();
  for (std::int64_t r = 0; r < b.n; ++r)
    for (std::int64_t j = 0; j < b.c; ++j)
      store_int(b.contents.data(), b.type, r * b.c_stride + j,
                values[static_cast<std::size_t>(r * b.c + j)]);
  return {};
}

Result<PlanView> Lowering::nhwc_place(const std::string& tensor, const ir::Op& op) {
  if (!place_.count(tensor)) return fail(where(op) + ": input not computed on the GPU");
  const auto& t = graph_.tensor(tensor);
  if (t.shape.size() != 4 || !rows_layout(tensor)) return place_.at(tensor);
  const std::string name = tensor + ".nhwc";  // a relayout copy, made once
  if (place_.count(name)) return place_.at(name);
  auto s = work_step(op, kMove, "", {tensor});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  step.name = name;
  Buffer b;
  b.tensor = name;
  b.type = plan_.buffers[static_cast<std::size_t>(place_.at(tensor).buffer)].type;
  b.n = t.shape[0];
  b.c = t.shape[1];
  b.h = t.shape[2];
  b.w = t.shape[3];
  b.c_stride = padded_channels(b.c);
  b.internal = true;
  plan_.buffers.push_back(b);
  const PlanView v{static_cast<int>(plan_.buffers.size()) - 1, b.n, b.h, b.w, b.c, b.c_stride, 0};
  place_[name] = v;
  // The NHWC strides of the copy's output, in logical (N, C, H, W) order.
  Strided y = step.work.x;
  y.offset = 0;
  y.strides[0] = b.h * b.w * b.c_stride;
  y.strides[1] = 1;
  y.strides[2] = b.w * b.c_stride;
  y.strides[3] = b.c_stride;
  step.work.y = y;
  step.work_buffers[3] = v.buffer;
  step.y = v;
  step.launch = elementwise_launch(work_threads(step.work));
  step.bytes.activations_written = v.elements() * elem(v);
  plan_.steps.push_back(std::move(step));
  return v;
}

Result<Step> Lowering::work_step(const ir::Op& op, WorkOp kind, const std::string& out,
                                 const std::vector<std::string>& operands) {
  (void)out;
  Step s;
  s.kind = KernelKind::Workload;
  s.name = op.name;
  s.ops = {op.name};
  s.work.op = kind;
  Strided* views[3] = {&s.work.x, &s.work.second, &s.work.third};
  for (std::size_t i = 0; i < operands.size() && i < 3; ++i) {
    if (operands[i].empty()) continue;
    if (auto ok = place_constant(operands[i], op); !ok) return ok.failure();
    auto v = logical_view(operands[i], op);
    if (!v) return v.failure();
    *views[i] = v.value();
    const PlanView& p = place_.at(operands[i]);
    if (i == 0) s.x = p;  // for the plan table
    s.work_buffers[i] = p.buffer;
    s.bytes.activations_read += view_elements(v.value()) * elem(p);
  }
  return s;
}

Status Lowering::push_work(Step step, const std::string& out) {
  const ir::Op& op = graph_.op(*graph_.producer(out));
  auto type = elem_type(graph_.tensor(out).dtype, op);
  if (!type) return type.failure();
  // The kernel writes through a strided view, so any layout works: a rank-4 output keeps its
  // main input's (NHWC in a CNN, so the next Conv needs no relayout), rows otherwise.
  const int x_buffer = step.work_buffers[0];
  const bool rows = x_buffer < 0 || plan_.buffers[static_cast<std::size_t>(x_buffer)].rows;
  const PlanView y = new_buffer(out, type.value(), rows);
  auto yv = logical_view(out, op);
  if (!yv) return yv.failure();
  step.work.y = yv.value();
  step.work_buffers[3] = y.buffer;
  step.y = y;
  step.launch = elementwise_launch(work_threads(step.work));
  step.bytes.activations_written += y.elements() * elem(y);
  step.bytes.weights_read +=
      static_cast<std::int64_t>(step.weights.size()) + table_bytes(step.epilogue);
  plan_.steps.push_back(std::move(step));
  return {};
}

Status Lowering::lower_workload(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Where:
      return lower_binary(op);
    case OpKind::Pow:
      return lower_table(op);
    case OpKind::MatMul:
      return lower_matmul(op);
    case OpKind::Softmax:
      return lower_softmax(op);
    case OpKind::LayerNormalization:
    case OpKind::RMSNormalization:
      return lower_norm(op);
    case OpKind::ReduceMax:
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
      return lower_reduce(op);
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::Gather:
    case OpKind::Expand:
    case OpKind::Trilu:
    case OpKind::Pad:
      return lower_move(op);
    case OpKind::Concat:
    case OpKind::Split:
      return lower_concat_split(op);
    case OpKind::Resize:
      return lower_resize(op);
    default:
      if (ir::is_unary_function(op.kind)) return lower_table(op);
      return fail(where(op) + ": not supported by the GPU backend");
  }
}

Status Lowering::lower_binary(const ir::Op& op) {
  const std::string& out = op.outputs[0];
  const bool select = op.kind == OpKind::Where;
  const std::vector<std::string> ins =
      select ? std::vector<std::string>{op.inputs[1], op.inputs[2], op.inputs[0]}
             : std::vector<std::string>{op.inputs[0], op.inputs[1]};
  const WorkOp kind = op.kind == OpKind::Add   ? kAdd
                      : op.kind == OpKind::Sub ? kSub
                      : op.kind == OpKind::Mul ? kMul
                                               : kWhere;
  auto s = work_step(op, kind, out, ins);
  if (!s) return s.failure();
  Step step = std::move(s.value());
  const ir::Shape& ys = graph_.tensor(out).shape;
  step.work.x = broadcast_to(step.work.x, ys);
  step.work.second = broadcast_to(step.work.second, ys);
  if (select) step.work.third = broadcast_to(step.work.third, ys);
  const auto &a = graph_.tensor(op.inputs[0]), &b = graph_.tensor(op.inputs[1]);
  const auto& y = graph_.tensor(out);
  if (!select && (!ir::is_integer(a.dtype) || !ir::is_integer(b.dtype)))
    return fail(where(op) + ": float operands (is the graph quantized?)");
  if (kind == kAdd || kind == kSub) step.work.add = quant::add_params(a, b, y);
  if (kind == kMul) step.work.requant = quant::mul_params(a, b, y);
  return push_work(std::move(step), out);
}

Status Lowering::lower_table(const ir::Op& op) {
  const std::string& table_name = op.inputs.back();
  const auto& x = graph_.tensor(op.inputs[0]);
  const auto& table = graph_.tensor(table_name);
  const auto& y = graph_.tensor(op.outputs[0]);
  if (op.inputs.size() < 2 || !table.constant || !table.has_data() || table.dtype != DType::i32)
    return fail(where(op) + ": expects a quantized op with its i32 table as last input");
  const auto values = cpu::TensorData::from_constant(table).to_i32();
  const int entries = static_cast<int>(values.size());
  if (!(x.dtype == DType::i8 ? entries == 256 : x.dtype == DType::i16 && entries == 257))
    return fail(where(op) + ": expects an i8 input with a 256-entry table or an i16 input " +
                "with 257 entries");
  auto s = work_step(op, kTable, op.outputs[0], {op.inputs[0]});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  step.weights = bytes_of(values.data(), values.size());
  step.work.entries = entries;
  const int bits = quant::dtype_bits(y.dtype);
  step.work.lo = intops::qmin(bits);
  step.work.hi = intops::qmax(bits);
  return push_work(std::move(step), op.outputs[0]);
}

Status Lowering::lower_matmul(const ir::Op& op) {
  const auto &a_t = graph_.tensor(op.inputs[0]), &b_t = graph_.tensor(op.inputs[1]);
  const auto& acc_t = graph_.tensor(op.outputs[0]);
  if (a_t.shape.size() < 2 || b_t.shape.size() < 2 || acc_t.dtype != DType::i32 ||
      !ir::is_integer(a_t.dtype) || !ir::is_integer(b_t.dtype))
    return fail(where(op) + ": expects integer operands of rank >= 2 into an i32 accumulator");
  const int shift = quant::matmul_shift(op, a_t, b_t);
  if (shift < 0) return fail(where(op) + ": K is too long for int32");
  // A MatMul by a constant weight matrix rounds a alone by its input shift (shift is 0 then;
  // docs/quantization.md, "Input shift on Conv/Gemm").
  const auto in_shift = static_cast<int>(op.get_int("input_shift"));
  if (in_shift != 0 && shift != 0)
    return fail(where(op) + ": input_shift on a MatMul of two activations");
  auto s = work_step(op, kMatMul, op.outputs[0], {op.inputs[0], op.inputs[1]});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  const ir::Shape& ys = acc_t.shape;
  const std::size_t r = ys.size();
  const std::int64_t k = a_t.shape.back();
  // Operands broadcast over y's batch dims; their own last two dims kept.
  ir::Shape a_dims = ys, b_dims = ys;
  a_dims[r - 2] = a_t.shape[a_t.shape.size() - 2];
  a_dims[r - 1] = k;
  b_dims[r - 2] = k;
  b_dims[r - 1] = b_t.shape.back();
  step.work.x = broadcast_to(step.work.x, a_dims);
  step.work.second = broadcast_to(step.work.second, b_dims);
  step.work.operand_shift = in_shift > 0 ? in_shift : shift;
  step.work.second_shift = shift;
  step.macs = ir::element_count(ys) * k;
  Chain chain{op.outputs[0], 1};
  fuse_tail(step, chain, false);
  return push_work(std::move(step), chain.tensor);
}

Status Lowering::lower_softmax(const ir::Op& op) {
  const auto& x = graph_.tensor(op.inputs[0]);
  const std::size_t rank = x.shape.size();
  std::int64_t axis = op.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  if (axis != static_cast<std::int64_t>(rank) - 1)
    return fail(where(op) + ": the GPU backend runs softmax along the last axis only");
  if (x.shape.back() > (std::int64_t{1} << 16)) return fail(where(op) + ": rows longer than 65536");
  const std::string mask = op.inputs.size() > 1 ? op.inputs[1] : "";
  auto s = work_step(op, kSoftmax, op.outputs[0], {op.inputs[0], "", mask});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  if (!mask.empty()) step.work.third = broadcast_to(step.work.third, x.shape);
  const auto params = quant::softmax_params(x, graph_.tensor(op.outputs[0]));
  step.weights = bytes_of(&params, 1);
  return push_work(std::move(step), op.outputs[0]);
}

Status Lowering::lower_norm(const ir::Op& op) {
  auto p = quant::norm_params(graph_, op);
  if (!p) return p.failure();
  const auto& x = graph_.tensor(op.inputs[0]);
  if (x.shape.empty() || p.value().n != x.shape.back())
    return fail(where(op) + ": the GPU backend normalises over the last axis only");
  auto s = work_step(op, kNorm, op.outputs[0], {op.inputs[0]});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  step.work.centre = p.value().centre ? 1 : 0;
  step.work.epsilon_term = p.value().epsilon_term;
  step.work.lo = p.value().lo;
  step.work.hi = p.value().hi;
  step.weights = bytes_of(p.value().affine.data(), p.value().affine.size());
  return push_work(std::move(step), op.outputs[0]);
}

Status Lowering::lower_reduce(const ir::Op& op) {
  const auto& x = graph_.tensor(op.inputs[0]);
  auto axes = ir::reduce_axes(op, x.shape.size());
  if (!axes) return axes.failure();
  const bool max = op.kind == OpKind::ReduceMax;
  auto s = work_step(op, max ? kReduceMax : kReduceSum, op.outputs[0], {op.inputs[0]});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  // x's axes reordered: the kept ones, then the reduced ones (their row-major product last).
  const Strided v = step.work.x;
  std::vector<int> order;
  for (int d = 0; d < v.rank; ++d)
    if (std::find(axes.value().begin(), axes.value().end(), d) == axes.value().end())
      order.push_back(d);
  step.work.reduced = 1;
  for (const auto d : axes.value()) {
    order.push_back(static_cast<int>(d));
    step.work.reduced *= v.dims[d];
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    step.work.x.dims[i] = v.dims[order[i]];
    step.work.x.strides[i] = v.strides[order[i]];
  }
  if (!max) {
    auto q = quant::reduce_params(op, x, graph_.tensor(op.outputs[0]));
    if (!q) return q.failure();
    step.work.requant = q.value();
  }
  return push_work(std::move(step), op.outputs[0]);
}

}  // namespace tessel::cuda::detail
