// The transformer ops of a tile (docs/codegen.md, "Transformers"): the row normaliser's `norm`
// (LayerNorm / RMSNorm) and `softmax`, the matrix unit's `matmul` of two activations per head
// with one `requant` of every head's accumulators, and the DRAM bytes of the parameters they
// load like a lookup table (norm: E and per channel G, r, B; softmax: the two exp tables; a
// Mul by a constant scalar: its 256-entry table).
#include <algorithm>

#include "codegen/lowering.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "support/diagnostic.hpp"
#include "support/int_nonlinear.hpp"

namespace tessel::codegen::detail {

namespace {

void put(std::vector<std::uint8_t>& bytes, std::int64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

}  // namespace

Result<const ir::Op*> Lowering::quantized_op(const sched::Op& op) const {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  return &graph_.op(*id);
}

Result<std::vector<std::uint8_t>> Lowering::param_bytes(const sched::Op& op) const {
  auto q = quantized_op(op);
  if (!q.ok()) return q.failure();
  const ir::Op& ir_op = *q.value();
  std::vector<std::uint8_t> bytes;
  if (op.kind == sched::OpKind::Norm) {
    auto p = quant::norm_params(graph_, ir_op);
    if (!p.ok()) return p.failure();
    put(bytes, p.value().epsilon_term, 8);
    for (const intops::NormAffine& a : p.value().affine) {
      put(bytes, a.multiplier, 4);
      put(bytes, a.shift, 4);
      put(bytes, a.bias, 8);
    }
  } else if (op.kind == sched::OpKind::RowSoftmax) {
    const auto p =
        quant::softmax_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.outputs[0]));
    for (std::int32_t e : p.exp_high) put(bytes, e, 2);
    for (std::int32_t e : p.exp_low) put(bytes, e, 2);
  } else if (op.constant_operand) {
    // The constant as stored (row-major, compact): what a Mul by it reads as operand b.
    const bool first = graph_.tensor(ir_op.inputs[0]).constant;
    const ir::Tensor& c = graph_.tensor(ir_op.inputs[first ? 0 : 1]);
    if (static_cast<std::int64_t>(c.int_values.size()) != ir::element_count(c.shape))
      return fail("op '" + op.name + "': the constant '" + c.name + "' has no integer values");
    if (op.constant_heads > 0) {
      // Heads first [Bc, Hc, Sc, nc] (Hc, nc 1 or the heads, the head dim: broadcast) re-laid
      // as the token tensor's rows: row b Sc + q holds every head's n values side by side.
      const auto r = c.shape.size();
      const auto dim = [&](size_t from_end) {
        return from_end <= r ? c.shape[r - from_end] : std::int64_t{1};
      };
      const std::int64_t nc = dim(1), rows = dim(2), hc = dim(3);
      const std::int64_t bc = ir::element_count(c.shape) / (hc * rows * nc);
      for (std::int64_t b = 0; b < bc; ++b)
        for (std::int64_t row = 0; row < rows; ++row)
          for (std::int64_t h = 0; h < op.constant_heads; ++h)
            for (std::int64_t k = 0; k < op.constant_head_dim; ++k) {
              const std::int64_t at =
                  ((b * hc + (hc == 1 ? 0 : h)) * rows + row) * nc + (nc == 1 ? 0 : k);
              put(bytes, c.int_values[static_cast<size_t>(at)], static_cast<int>(act_bytes_));
            }
    } else {
      for (std::int32_t v : c.int_values) put(bytes, v, static_cast<int>(act_bytes_));
    }
  } else if (ir_op.kind == ir::OpKind::Mul) {
    // x * c as a table of every 8-bit code x (entry x + 128), the golden rule's own values.
    const bool first = graph_.tensor(ir_op.inputs[0]).constant;
    const ir::Tensor& c = graph_.tensor(ir_op.inputs[first ? 0 : 1]);
    if (c.int_values.size() != 1)
      return fail("op '" + op.name + "': the constant '" + c.name + "' has no integer value");
    const auto p = quant::mul_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.inputs[1]),
                                     graph_.tensor(ir_op.outputs[0]));
    for (std::int32_t x = -128; x < 128; ++x)
      put(bytes, intops::mul_requantize(x, c.int_values[0], p), 1);
  } else {
    return fail("op '" + op.name + "' has no parameter bytes");
  }
  if (static_cast<std::int64_t>(bytes.size()) != op.weight_bytes)
    return fail("op '" + op.name + "': " + std::to_string(bytes.size()) +
                " parameter bytes, the schedule counts " + std::to_string(op.weight_bytes));
  return bytes;
}

Status Lowering::emit_norm(const sched::GroupSchedule& gs, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto q = quantized_op(op);
  if (!q.ok()) return q.failure();
  auto p = quant::norm_params(graph_, *q.value());
  if (!p.ok()) return p.failure();
  auto in = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, box);
  if (!out.ok()) return out.failure();
  const auto at = table_at_.find(static_cast<int>(&op - net_.ops.data()));
  if (at == table_at_.end()) return fail("op '" + op.name + "': its parameters were not loaded");
  if (box.c.b != 0 || box.c.e != net_.tensor(op.output).shape.c)
    return fail("norm '" + op.name + "': a tile of part of a row's channels");
  isa::Vcfg cfg;
  cfg.lo = p.value().lo;
  cfg.hi = p.value().hi;
  code.push_back(cfg);
  isa::Norm n;
  set_box_operands(n, in.value(), out.value(), box);  // box.c.b is 0: whole rows (above)
  if (op.row_length > 0 && op.row_length < box.c.size()) {
    // Rows of row_length channels side by side in a pixel (each head's, sched::Op::row_length):
    // x walks them within the tile's one column of token rows.
    if (box.w.size() != 1)
      return fail("norm '" + op.name + "': rows within a pixel in a tile of more than one column");
    n.x_size = static_cast<std::uint32_t>(box.c.size() / op.row_length);
    n.c_size = static_cast<std::uint32_t>(op.row_length);
    n.src_stride_x = n.dst_stride_x = static_cast<std::uint32_t>(op.row_length);
  }
  n.param_sp = static_cast<std::uint32_t>(at->second.first);
  n.elem = n.dst_elem = act_elem_;
  n.param_addr = static_cast<std::uint32_t>(at->second.second);
  n.centre = op.centre;
  code.push_back(n);
  return {};
}

Status Lowering::emit_row_softmax(const sched::GroupSchedule& gs, const sched::Op& op,
                                  const std::vector<Box>& need,
                                  std::vector<isa::Instruction>& code) {
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto q = quantized_op(op);
  if (!q.ok()) return q.failure();
  const ir::Op& ir_op = *q.value();
  const auto p =
      quant::softmax_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.outputs[0]));
  auto in = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, box);
  if (!out.ok()) return out.failure();
  const auto at = table_at_.find(static_cast<int>(&op - net_.ops.data()));
  if (at == table_at_.end()) return fail("op '" + op.name + "': its exp tables were not loaded");
  if (box.w.size() != 1 || box.c.b != 0 || box.c.e != net_.tensor(op.output).shape.c)
    return fail("softmax '" + op.name + "': a tile other than whole rows of one column");
  code.push_back(requant_vcfg(p.output));
  // Rows y are the heads side by side in a pixel (row_length apart), pixels x the queries.
  isa::Softmax s;
  s.src_sp = static_cast<std::uint32_t>(in.value().sp);
  s.dst_sp = static_cast<std::uint32_t>(out.value().sp);
  s.table_sp = static_cast<std::uint32_t>(at->second.first);
  s.elem = s.dst_elem = act_elem_;
  s.src_addr = static_cast<std::uint32_t>(in.value().addr(box.h.b, box.w.b, 0));
  s.dst_addr = static_cast<std::uint32_t>(out.value().addr(box.h.b, box.w.b, 0));
  s.table_addr = static_cast<std::uint32_t>(at->second.second);
  s.y_size = static_cast<std::uint32_t>(box.c.size() / op.row_length);
  s.x_size = static_cast<std::uint32_t>(box.h.size());
  s.c_size = static_cast<std::uint32_t>(op.row_length);
  s.src_stride_y = s.dst_stride_y = static_cast<std::uint32_t>(op.row_length);
  s.src_stride_x = static_cast<std::uint32_t>(in.value().stride_y());
  s.dst_stride_x = static_cast<std::uint32_t>(out.value().stride_y());
  if (op.causal) {
    // The mask's query index is the instruction's pixel x: the tile's first query is box.h.b.
    const std::int64_t offset = op.mask_diagonal + box.h.b;
    if (offset > field_max("softmax", "mask_offset"))
      return fail("softmax '" + op.name + "': the causal diagonal " + std::to_string(offset) +
                  " does not fit the instruction's mask_offset");
    s.causal = true;
    s.mask_offset = static_cast<std::int32_t>(offset);
  }
  code.push_back(s);
  return {};
}

Status Lowering::emit_matmul(const sched::GroupSchedule& gs, const sched::Op& op,
                             const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto q = quantized_op(op);
  if (!q.ok()) return q.failure();
  const ir::Op& ir_op = *q.value();
  const int a_t = op.inputs[0], b_t = op.inputs[1];
  auto a = view_of(gs, a_t, need[static_cast<size_t>(a_t)]);
  if (!a.ok()) return a.failure();
  auto b = view_of(gs, b_t, need[static_cast<size_t>(b_t)]);
  if (!b.ok()) return b.failure();
  auto y = view_of(gs, op.output, box);
  if (!y.ok()) return y.failure();
  const sched::BufferAlloc* acc = accumulator_of(gs, op);
  const sched::HeadMatMul& mm = op.matmul;
  const int64_t width = mm.heads * mm.n_size;
  if (acc == nullptr || acc->size_bytes < box.h.size() * width * 4)
    return fail("matmul '" + op.name + "': the schedule has no accumulator for its tile");
  if (box.w.size() != 1 || box.c.b != 0 || box.c.e != width)
    return fail("matmul '" + op.name + "': a tile other than whole rows of every head");
  const int shift =
      quant::matmul_shift(ir_op, graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.inputs[1]));
  // Per sequence of a batch (HeadMatMul::batch) the tile's rows of it, per head one matmul.
  const int64_t b_rows = mm.transpose_b ? mm.n_size : mm.k_size;  // b's rows per sequence
  for (const sched::Interval rows : sched::unit_portions(box.h, mm.batch > 1 ? mm.m_size : 0)) {
    const int64_t sequence = mm.batch > 1 ? rows.b / mm.m_size : 0;
    for (int64_t h = 0; h < mm.heads; ++h) {
      isa::Matmul m;
      m.a_sp = static_cast<std::uint32_t>(a.value().sp);
      m.b_sp = static_cast<std::uint32_t>(b.value().sp);
      m.acc_sp = static_cast<std::uint32_t>(acc->scratchpad);
      m.elem = act_elem_;
      m.init = isa::Init::kZero;
      m.transpose_b = mm.transpose_b;
      m.a_addr = static_cast<std::uint32_t>(
          a.value().addr(rows.b, box.w.b, mm.a_offset + h * mm.a_head_stride));
      m.b_addr = static_cast<std::uint32_t>(b.value().addr(
          sequence * b_rows, 0, mm.b_offset + h / mm.b_head_repeat * mm.b_head_stride));
      m.acc_addr = static_cast<std::uint32_t>(acc->offset +
                                              ((rows.b - box.h.b) * width + h * mm.n_size) * 4);
      m.m_size = static_cast<std::uint32_t>(rows.size());
      m.n_size = static_cast<std::uint32_t>(mm.n_size);
      m.k_size = static_cast<std::uint32_t>(mm.k_size);
      m.a_stride = static_cast<std::uint32_t>(a.value().stride_y());
      m.b_stride = static_cast<std::uint32_t>(b.value().stride_y());
      m.acc_stride = static_cast<std::uint32_t>(width);
      m.operand_shift = static_cast<std::uint32_t>(shift);
      code.push_back(m);
    }
  }
  // One per-tensor requant of every head's accumulators into the output rows.
  auto y_name = int_tensor(net_.tensor(op.output).name);
  if (!y_name.ok()) return y_name.failure();
  const auto r =
      quant::requantize_params(graph_.tensor(ir_op.outputs[0]), graph_.tensor(y_name.value()));
  if (r.size() != 1) return fail("matmul '" + op.name + "': its requantize is not per tensor");
  code.push_back(requant_vcfg(r[0]));
  isa::Requant rq;
  rq.src_sp = static_cast<std::uint32_t>(acc->scratchpad);
  rq.dst_sp = static_cast<std::uint32_t>(y.value().sp);
  rq.dst_elem = act_elem_;
  rq.src_addr = static_cast<std::uint32_t>(acc->offset);
  rq.dst_addr = static_cast<std::uint32_t>(y.value().addr(box.h.b, box.w.b, 0));
  rq.y_size = static_cast<std::uint32_t>(box.h.size());
  rq.x_size = 1;
  rq.c_size = static_cast<std::uint32_t>(width);
  rq.src_stride_y = rq.src_stride_x = static_cast<std::uint32_t>(width);
  rq.dst_stride_y = static_cast<std::uint32_t>(y.value().stride_y());
  rq.dst_stride_x = static_cast<std::uint32_t>(y.value().pixel_elems);
  code.push_back(rq);
  return {};
}

}  // namespace tessel::codegen::detail
