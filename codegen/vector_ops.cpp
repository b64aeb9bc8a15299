// The vector ops of a tile (docs/codegen.md): Relu/Clip, residual Add, max/avg/global pools,
// Concat copies, each through the `vcfg` + vector instruction it lowers to; the emitters
// registered by op kind (`Lowering::emitter_for`), and where a tensor's tile lies on chip.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/group_info.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

isa::Vcfg requant_vcfg(const intops::Requant& p) {
  isa::Vcfg cfg;
  cfg.mult_a = static_cast<std::uint32_t>(p.multiplier);
  cfg.shift = static_cast<std::uint32_t>(p.shift);
  cfg.zp = p.zero_point;
  cfg.lo = p.lo;
  cfg.hi = p.hi;
  return cfg;
}

isa::Add unary_add(const TileView& in, const TileView& out, isa::Elem elem, int64_t y, int64_t x,
                   int64_t in_c, int64_t out_c, int64_t rows, int64_t cols, int64_t channels) {
  isa::Add a;
  a.a_sp = a.b_sp = static_cast<std::uint32_t>(in.sp);
  a.dst_sp = static_cast<std::uint32_t>(out.sp);
  a.elem = elem;
  a.a_addr = a.b_addr = static_cast<std::uint32_t>(in.addr(y, x, in_c));
  a.dst_addr = static_cast<std::uint32_t>(out.addr(y, x, out_c));
  a.y_size = static_cast<std::uint32_t>(rows);
  a.x_size = static_cast<std::uint32_t>(cols);
  a.c_size = static_cast<std::uint32_t>(channels);
  a.a_stride_y = a.b_stride_y = static_cast<std::uint32_t>(in.stride_y());
  a.a_stride_x = a.b_stride_x = static_cast<std::uint32_t>(in.pixel_elems);
  a.dst_stride_y = static_cast<std::uint32_t>(out.stride_y());
  a.dst_stride_x = static_cast<std::uint32_t>(out.pixel_elems);
  return a;
}

const OpEmitter* Lowering::emitter_for(sched::OpKind kind) {
  // One row per op kind the accelerator runs; a kind with no row fails naming the op.
  static const OpEmitter kEmitters[] = {
      {sched::OpKind::Conv, true, nullptr, false},
      {sched::OpKind::Gemm, true, nullptr, false},
      {sched::OpKind::Eltwise, false, &Lowering::emit_eltwise, true},
      {sched::OpKind::Add, false, &Lowering::emit_add, true},
      {sched::OpKind::MaxPool, false, &Lowering::emit_pool, false},
      {sched::OpKind::AvgPool, false, &Lowering::emit_pool, false},
      {sched::OpKind::GlobalPool, false, &Lowering::emit_pool, false},
      {sched::OpKind::Concat, false, &Lowering::emit_concat, false},
      {sched::OpKind::Mul, false, &Lowering::emit_mul, false},
      {sched::OpKind::Norm, false, &Lowering::emit_norm, false},
      {sched::OpKind::RowSoftmax, false, &Lowering::emit_row_softmax, false},
      {sched::OpKind::MatMul, false, &Lowering::emit_matmul, false},
      {sched::OpKind::Embedding, false, &Lowering::emit_embedding, false},
  };
  for (const OpEmitter& e : kEmitters)
    if (e.kind == kind) return &e;
  return nullptr;
}

Result<TileView> Lowering::view_of(const sched::GroupSchedule& gs, int tensor,
                                   const Box& box) const {
  for (const auto& b : gs.buffers) {
    if (b.tensor == tensor && b.role != sched::BufferRole::Weights &&
        b.role != sched::BufferRole::Accumulator &&
        (b.copy == copy_ || (b.copy == 0 && !has_copy(gs, tensor, copy_)))) {
      TileView v;
      v.sp = b.scratchpad;
      v.offset = b.offset;
      // The buffer holds the tile's whole window (layout_); `box` may be a part of it.
      v.box = static_cast<size_t>(tensor) < layout_.size() &&
                      !layout_[static_cast<size_t>(tensor)].empty()
                  ? layout_[static_cast<size_t>(tensor)]
                  : box;
      v.element_bytes = act_bytes_;
      v.pixel_elems = b.pixel_bytes / act_bytes_;
      if (box.h.size() * box.w.size() * b.pixel_bytes > b.size_bytes)
        return fail("tensor '" + net_.tensor(tensor).name + "': tile of " +
                    std::to_string(box.h.size() * box.w.size() * b.pixel_bytes) +
                    " bytes exceeds its buffer (" + std::to_string(b.size_bytes) + " bytes)");
      return v;
    }
  }
  return fail("tensor '" + net_.tensor(tensor).name + "' has no on-chip buffer in its group");
}

Status Lowering::emit_eltwise(const sched::GroupSchedule& gs, const sched::Op& op,
                              const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (op.lookup_table) return emit_lookup(gs, op, need, code);
  if (ir_op.kind != ir::OpKind::Relu && ir_op.kind != ir::OpKind::Clip)
    return fail("op '" + op.name + "' (" + op.type + ") is not supported by codegen yet");
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto in = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, box);
  if (!out.ok()) return out.failure();
  const intops::ClampRange range = activation_clamp(ir_op);
  // clamp(x) as add: round_half_away(x * 1 + x * 0, 0) clamped to [lo, hi].
  isa::Vcfg cfg;
  cfg.mult_a = 1;
  cfg.mult_b = 0;
  cfg.shift = 0;
  cfg.lo = range.lo;
  cfg.hi = range.hi;
  code.push_back(cfg);
  code.push_back(unary_add(in.value(), out.value(), act_elem_, box.h.b, box.w.b, box.c.b, box.c.b,
                           box.h.size(), box.w.size(), box.c.size()));
  return {};
}

intops::ClampRange Lowering::activation_clamp(const ir::Op& ir_op) const {
  if (ir_op.kind == ir::OpKind::Clip) {
    const auto b = quant::clip_bounds(graph_.tensor(ir_op.inputs[0]), ir_op.get_float("min"),
                                      ir_op.get_float("max"));
    return {b.first, b.second};
  }
  return {0, intops::qmax(static_cast<int>(act_bytes_ * 8))};  // Relu: max(q, 0)
}

const sched::BufferAlloc* Lowering::accumulator_of(const sched::GroupSchedule& gs,
                                                   const sched::Op& op) {
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Accumulator && b.name == "acc:" + op.name) return &b;
  return nullptr;
}

Result<isa::Vcfg> Lowering::conv_requant_vcfg(const sched::Op& op, const ir::Op& conv) const {
  const auto rq_uses = graph_.consumers(conv.outputs[0]);
  const ir::Op& rq = graph_.op(rq_uses[0].op);
  const auto params =
      quant::requantize_params(graph_.tensor(conv.outputs[0]), graph_.tensor(rq.outputs[0]));
  isa::Vcfg cfg;
  cfg.zp = params[0].zero_point;
  cfg.lo = params[0].lo;
  cfg.hi = params[0].hi;
  if (Status s = fold_activation(op, cfg); !s) return s.failure();
  return cfg;
}

Status Lowering::fold_activation(const sched::Op& op, isa::Vcfg& cfg) const {
  if (op.activation.empty()) return {};
  const auto id = graph_.find_op(op.activation);
  if (!id || (graph_.op(*id).kind != ir::OpKind::Relu && graph_.op(*id).kind != ir::OpKind::Clip))
    return fail("op '" + op.name + "': its folded activation '" + op.activation +
                "' is not a Relu or Clip of the quantized graph");
  const auto range = intops::compose_clamps({cfg.lo, cfg.hi}, activation_clamp(graph_.op(*id)));
  cfg.lo = range.lo;
  cfg.hi = range.hi;
  return {};
}

Status Lowering::emit_add(const sched::GroupSchedule& gs, const sched::Op& op,
                          const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (ir_op.inputs.size() != 2 || op.inputs.size() != (op.constant_operand ? 1u : 2u))
    return fail("add '" + op.name + "' with other than two inputs");
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto a = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!a.ok()) return a.failure();
  auto y = view_of(gs, op.output, box);
  if (!y.ok()) return y.failure();
  isa::Add add;
  if (op.constant_operand) {  // b: the constant, loaded whole like a table (as emit_mul's)
    auto b = constant_b(op, box);
    if (!b.ok()) return b.failure();
    add.b_sp = b.value().sp;
    add.b_stride_y = b.value().stride_y;
    add.b_stride_x = b.value().stride_x;
  } else {
    auto b = view_of(gs, op.inputs[1], need[static_cast<size_t>(op.inputs[1])]);
    if (!b.ok()) return b.failure();
    add.b_sp = static_cast<std::uint32_t>(b.value().sp);
    add.b_addr = static_cast<std::uint32_t>(b.value().addr(box.h.b, box.w.b, box.c.b));
    add.b_stride_y = static_cast<std::uint32_t>(b.value().stride_y());
    add.b_stride_x = static_cast<std::uint32_t>(b.value().pixel_elems);
  }
  const auto p = quant::add_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.inputs[1]),
                                   graph_.tensor(ir_op.outputs[0]));
  // a is the activation: a constant first in the graph swaps the multipliers (the sum is
  // symmetric in the two products, so the result is the golden one). A Sub takes b's product
  // away (add's subtract flag; quant::add_params' multipliers are both non-negative, the golden
  // Sub negates M_b): x - c only, the converter refuses c - x.
  const bool swapped = op.constant_operand && graph_.tensor(ir_op.inputs[0]).constant;
  add.subtract = ir_op.kind == ir::OpKind::Sub;
  if (add.subtract && swapped) return fail("sub '" + op.name + "' from a constant");
  isa::Vcfg cfg;
  cfg.mult_a = static_cast<std::uint32_t>(swapped ? p.multiplier_b : p.multiplier_a);
  cfg.mult_b = static_cast<std::uint32_t>(swapped ? p.multiplier_a : p.multiplier_b);
  cfg.shift = static_cast<std::uint32_t>(p.shift);
  cfg.zp = p.zero_point;
  cfg.lo = p.lo;
  cfg.hi = p.hi;
  if (Status s = fold_activation(op, cfg); !s) return s;
  code.push_back(cfg);
  set_a_dst_strides(add, a.value(), y.value(), box);
  add.elem = act_elem_;
  // A constant broadcast over a batch's sequences: one add per period of rows (constant_b).
  return emit_row_portions(op, box, a.value(), y.value(), add, code);
}

Status Lowering::emit_pool(const sched::GroupSchedule& gs, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  const int in_t = op.inputs[0];
  const sched::Shape3 in_shape = net_.tensor(in_t).shape;
  auto in = view_of(gs, in_t, need[static_cast<size_t>(in_t)]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, out_box);
  if (!out.ok()) return out.failure();
  sched::Window win = op.window;
  const bool global = op.kind == sched::OpKind::GlobalPool;
  if (global) {
    win = sched::Window{};
    win.kernel_h = in_shape.h;
    win.kernel_w = in_shape.w;
  }
  if (win.dilation_h != 1 || win.dilation_w != 1)
    return fail("pool '" + op.name + "': dilated pooling is not supported");
  const bool average = op.kind != sched::OpKind::MaxPool;
  if (average) {
    if (ir_op.kind == ir::OpKind::AveragePool && ir_op.get_int("count_include_pad") == 0 &&
        (win.pad_top || win.pad_left || win.pad_bottom || win.pad_right))
      return fail("pool '" + op.name + "': count_include_pad = 0 with padding");
    intops::Requant p =
        quant::average_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.outputs[0]),
                              win.kernel_h * win.kernel_w);
    if (ir_op.kind == ir::OpKind::ReduceMean) {  // its own requantizer (bit exact with golden)
      auto r = quant::reduce_params(ir_op, graph_.tensor(ir_op.inputs[0]),
                                    graph_.tensor(ir_op.outputs[0]));
      if (!r.ok()) return r.failure();
      p = r.value();
    }
    code.push_back(requant_vcfg(p));
    if (op.pool_by_conv) return emit_pool_by_conv(gs, op, need, code);
  }
  const int64_t max_window = field_max("pool", "kh"), max_pad = field_max("pool", "pad_top");
  if (win.kernel_h > max_window || win.kernel_w > max_window)
    return fail("pool '" + op.name + "': a " + std::to_string(win.kernel_h) + "x" +
                std::to_string(win.kernel_w) + " window (the pool instruction takes at most " +
                std::to_string(max_window) + ")");
  const int64_t ya = out_box.h.b * win.stride_h - win.pad_top;
  const int64_t yb = (out_box.h.e - 1) * win.stride_h + win.kernel_h - win.pad_top;
  const int64_t xa = out_box.w.b * win.stride_w - win.pad_left;
  const int64_t xb = (out_box.w.e - 1) * win.stride_w + win.kernel_w - win.pad_left;
  const int64_t y0 = std::max<int64_t>(ya, 0), y1 = std::min(yb, in_shape.h);
  const int64_t x0 = std::max<int64_t>(xa, 0), x1 = std::min(xb, in_shape.w);
  const int64_t pads[4] = {y0 - ya, yb - y1, x0 - xa, xb - x1};
  for (int64_t pad : pads)
    if (pad > max_pad)
      return fail("pool '" + op.name + "': padding of " + std::to_string(pad) +
                  " at a tile edge (the pool instruction pads at most " + std::to_string(max_pad) +
                  ")");
  isa::Pool pool;
  pool.src_sp = static_cast<std::uint32_t>(in.value().sp);
  pool.dst_sp = static_cast<std::uint32_t>(out.value().sp);
  pool.elem = act_elem_;
  pool.mode = average ? isa::PoolMode::kAvg : isa::PoolMode::kMax;
  pool.src_addr = static_cast<std::uint32_t>(in.value().addr(y0, x0, out_box.c.b));
  pool.dst_addr =
      static_cast<std::uint32_t>(out.value().addr(out_box.h.b, out_box.w.b, out_box.c.b));
  pool.out_h = static_cast<std::uint32_t>(out_box.h.size());
  pool.out_w = static_cast<std::uint32_t>(out_box.w.size());
  pool.c_size = static_cast<std::uint32_t>(out_box.c.size());
  pool.kh = static_cast<std::uint32_t>(win.kernel_h);
  pool.kw = static_cast<std::uint32_t>(win.kernel_w);
  pool.stride_h = static_cast<std::uint32_t>(win.stride_h);
  pool.stride_w = static_cast<std::uint32_t>(win.stride_w);
  pool.pad_top = static_cast<std::uint32_t>(pads[0]);
  pool.pad_bottom = static_cast<std::uint32_t>(pads[1]);
  pool.pad_left = static_cast<std::uint32_t>(pads[2]);
  pool.pad_right = static_cast<std::uint32_t>(pads[3]);
  pool.src_stride_y = static_cast<std::uint32_t>(in.value().stride_y());
  pool.src_stride_x = static_cast<std::uint32_t>(in.value().pixel_elems);
  pool.dst_stride_y = static_cast<std::uint32_t>(out.value().stride_y());
  pool.dst_stride_x = static_cast<std::uint32_t>(out.value().pixel_elems);
  code.push_back(pool);
  return {};
}

Status Lowering::emit_pool_by_conv(const sched::GroupSchedule& gs, const sched::Op& op,
                                   const std::vector<Box>& need,
                                   std::vector<isa::Instruction>& code) {
  // docs/codegen.md, "SE pools wider than the pool window": the sum of every sub-window into
  // int32 accumulators (depthwise convs of the ones, init zero then acc), then the vcfg already
  // emitted (the pool's M, r) and one requant: the golden pool's clamp(rha(sum * M, r) + z).
  const int index = static_cast<int>(&op - net_.ops.data());
  const Box& out_box = need[static_cast<size_t>(op.output)];
  const int in_t = op.inputs[0];
  const sched::Shape3 in_shape = net_.tensor(in_t).shape;
  auto in = view_of(gs, in_t, need[static_cast<size_t>(in_t)]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, out_box);
  if (!out.ok()) return out.failure();
  const sched::BufferAlloc* acc = accumulator_of(gs, op);
  const auto ones = table_at_.find(index);
  const int64_t blocks = ceil_div(out_box.c.size(), cols_);
  if (acc == nullptr || ones == table_at_.end() || ones_blocks_[index] < blocks)
    return fail("pool '" + op.name + "': the schedule has no accumulator or all-one weights");
  const int64_t nh = sched::pool_sub_windows(in_shape.h), nw = sched::pool_sub_windows(in_shape.w);
  isa::Conv c;
  c.in_sp = static_cast<std::uint32_t>(in.value().sp);
  c.w_sp = static_cast<std::uint32_t>(ones->second.first);
  c.acc_sp = static_cast<std::uint32_t>(acc->scratchpad);
  c.elem = act_elem_;
  c.depthwise = true;
  c.w_addr = static_cast<std::uint32_t>(ones->second.second);
  c.acc_addr = static_cast<std::uint32_t>(acc->offset);
  c.out_h = c.out_w = c.ic_blocks = 1;
  c.oc_blocks = static_cast<std::uint32_t>(blocks);
  c.stride_h = c.stride_w = c.dil_h = c.dil_w = 1;
  c.in_stride_y = static_cast<std::uint32_t>(in.value().stride_y());
  c.in_stride_x = static_cast<std::uint32_t>(in.value().pixel_elems);
  c.acc_stride_y = c.acc_stride_x = static_cast<std::uint32_t>(blocks * cols_);
  for (int64_t i = 0; i < nh; ++i) {
    for (int64_t j = 0; j < nw; ++j) {
      const sched::Interval ys = sched::part(in_shape.h, nh, i),
                            xs = sched::part(in_shape.w, nw, j);
      c.init = i == 0 && j == 0 ? isa::Init::kZero : isa::Init::kAcc;
      c.in_addr = static_cast<std::uint32_t>(in.value().addr(ys.b, xs.b, out_box.c.b));
      c.kh = static_cast<std::uint32_t>(ys.size());
      c.kw = static_cast<std::uint32_t>(xs.size());
      code.push_back(c);
    }
  }
  isa::Requant q;
  q.src_sp = c.acc_sp;
  q.dst_sp = static_cast<std::uint32_t>(out.value().sp);
  q.dst_elem = act_elem_;
  q.per_channel = false;
  q.src_addr = c.acc_addr;
  q.dst_addr = static_cast<std::uint32_t>(out.value().addr(0, 0, out_box.c.b));
  q.y_size = q.x_size = 1;
  q.c_size = static_cast<std::uint32_t>(out_box.c.size());
  q.src_stride_y = q.src_stride_x = c.acc_stride_x;
  q.dst_stride_y = static_cast<std::uint32_t>(out.value().stride_y());
  q.dst_stride_x = static_cast<std::uint32_t>(out.value().pixel_elems);
  code.push_back(q);
  return {};
}

Status Lowering::emit_concat(const sched::GroupSchedule& gs, const sched::Op& op,
                             const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  auto out = view_of(gs, op.output, out_box);
  if (!out.ok()) return out.failure();
  // The quantizer gives every input the concat's scale (docs/quantization.md, "Concat"): the
  // copy is add(x * 1 + x * 0) with no shift and the full clamp, which is exact.
  const int bits = static_cast<int>(act_bytes_ * 8);
  isa::Vcfg cfg;
  cfg.mult_a = 1;
  cfg.mult_b = 0;
  cfg.shift = 0;
  cfg.lo = intops::qmin(bits);
  cfg.hi = intops::qmax(bits);
  code.push_back(cfg);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int x = op.inputs[i];
    const int64_t offset = op.concat_offsets[i];
    const int64_t first = std::max(out_box.c.b, offset);
    const int64_t end = std::min(out_box.c.e, offset + net_.tensor(x).shape.c);
    if (first >= end) continue;  // no channel of this input in the tile
    auto in = view_of(gs, x, need[static_cast<size_t>(x)]);
    if (!in.ok()) return in.failure();
    code.push_back(unary_add(in.value(), out.value(), act_elem_, out_box.h.b, out_box.w.b,
                             first - offset, first, out_box.h.size(), out_box.w.size(),
                             end - first));
  }
  return {};
}

}  // namespace tessel::codegen::detail
