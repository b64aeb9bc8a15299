// The vector-unit ops of ISA version 3 (docs/codegen.md, "Unary functions and broadcast Mul"):
// a unary function by table lookup (`lut`, every function of an 8-bit input through one
// mechanism), its table's DRAM region, placement and loads, and the broadcast `mul` of two
// activations (equal shapes, or an SE block's per-channel scale).
#include <algorithm>

#include "codegen/lowering.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/quant/workload_params.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

namespace {
constexpr int64_t kTableEntries = 256;

std::string table_region(const sched::Op& op) {
  return (op.pool_by_conv ? "ones:" : "lut:") + op.name;
}

using sched::loads_table;

// A table computed by codegen (param_bytes) rather than read from the graph's table tensor.
bool computed_table(const ir::Graph& graph, const sched::Op& op) {
  if (op.kind == sched::OpKind::Norm || op.kind == sched::OpKind::RowSoftmax || op.constant_operand)
    return true;
  const auto id = graph.find_op(op.name);
  return op.lookup_table && id && graph.op(*id).kind == ir::OpKind::Mul;
}
}  // namespace

Result<const ir::Tensor*> Lowering::lookup_table_of(const sched::Op& op) const {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (!ir::is_unary_function(ir_op.kind) || ir_op.inputs.size() < 2 || ir_op.inputs[1].empty())
    return fail("op '" + op.name + "' (" + op.type +
                ") has no lookup table in the quantized graph (quantize the model first)");
  const ir::Tensor& table = graph_.tensor(ir_op.inputs[1]);
  if (static_cast<int64_t>(table.int_values.size()) != kTableEntries)
    return fail("op '" + op.name + "': table '" + table.name + "' has " +
                std::to_string(table.int_values.size()) + " entries; the lut instruction takes " +
                std::to_string(kTableEntries) + " (an 8-bit input)");
  return &table;
}

Status Lowering::plan_table_regions() {
  for (size_t g = 0; g < host_from_; ++g) {
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (!loads_table(op)) continue;
      if (computed_table(graph_, op)) {
        if (auto bytes = param_bytes(op); !bytes.ok()) return bytes.failure();
      } else if (op.lookup_table) {
        if (auto table = lookup_table_of(op); !table.ok()) return table.failure();
      }
      if (auto r = out_.layout.add(table_region(op), RegionKind::Weights, op.weight_bytes); !r.ok())
        return r.failure();
    }
  }
  return {};
}

Status Lowering::write_table_values() {
  for (size_t g = 0; g < host_from_; ++g) {
    for (int index : schedule_.groups[g].ops) {
      const sched::Op& op = net_.op(index);
      if (!loads_table(op)) continue;
      const int64_t at = out_.layout.find(table_region(op))->offset;
      if (computed_table(graph_, op)) {
        const std::vector<std::uint8_t> bytes = param_bytes(op).value();  // checked when planned
        for (size_t i = 0; i < bytes.size(); ++i)
          write_bytes(at + static_cast<int64_t>(i), bytes[i], 1);
        continue;
      }
      if (op.pool_by_conv) {  // one pixel of ones, matrix_cols weights
        for (int64_t i = 0; i < op.weight_bytes / act_bytes_; ++i)
          write_bytes(at + i * act_bytes_, 1, static_cast<int>(act_bytes_));
        continue;
      }
      const ir::Tensor* table = lookup_table_of(op).value();
      const int64_t entry = op.weight_bytes / kTableEntries;
      for (int64_t i = 0; i < kTableEntries; ++i)
        write_bytes(at + i * entry, table->int_values[static_cast<size_t>(i)],
                    static_cast<int>(entry));
    }
  }
  return {};
}

Status Lowering::emit_table_load(const sched::GroupSchedule& gs, const sched::Op& op,
                                 bool pipelined, const Box& box,
                                 std::vector<isa::Instruction>& loads) {
  const sched::Interval channels = box.c;
  // The elements loaded: a row-varying constant's rows of the box (all when resident), else
  // the whole table.
  const sched::Interval elements = sched::constant_rows(net_, op, box.h);
  // Copy 0 first (the copy a prefetch loads during the previous group: its buffer is the one
  // pinned there), then under double buffering the other copy than the one the running tile
  // reads.
  const int index = static_cast<int>(&op - net_.ops.data());
  const auto [last, first_load] = table_copy_of_.try_emplace(index, 0);
  const int copy = pipelined && !gs.weights_resident && !first_load ? (last->second + 1) % 2 : 0;
  last->second = copy;
  const std::string name = "w:" + op.name + (copy == 1 ? "#1" : "");
  const sched::BufferAlloc* buffer = nullptr;
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && b.name == name) buffer = &b;
  const int64_t need_bytes = op.pool_by_conv ? sched::pool_ones_bytes(net_, machine_, op, channels)
                             : sched::constant_by_rows(op) ? elements.size() * act_bytes_
                                                           : op.weight_bytes;
  if (buffer == nullptr || buffer->size_bytes < need_bytes)
    return fail("op '" + op.name + "': the schedule has no " + std::to_string(need_bytes) +
                "-byte buffer '" + name + "' for its " +
                (op.pool_by_conv ? "all-one weights" : "lookup table or parameters"));
  isa::Load l;
  l.sp = static_cast<std::uint32_t>(buffer->scratchpad);
  l.elem = act_elem_;
  l.kind = isa::Traffic::kWeights;
  l.sram_addr = static_cast<std::uint32_t>(buffer->offset);
  const int64_t first = elements.b;  // 0 but for a row-varying constant's rows
  l.dram_addr =
      static_cast<std::uint64_t>(out_.layout.find(table_region(op))->offset + first * act_bytes_);
  l.c_size = static_cast<std::uint32_t>(op.pool_by_conv ? kTableEntries : need_bytes / act_bytes_);
  l.dram_stride_x = l.c_size;
  l.sram_stride_x = l.c_size;
  if (const int64_t n = need_bytes / act_bytes_;
      !op.pool_by_conv && n > field_max("load", "c_size")) {
    // More elements than one pixel's c_size (a ViT's position embedding, 197 x 768): the
    // contiguous run as x pixels of c elements, c the largest divisor of n a pixel can hold.
    int64_t c =
        std::min(n, std::min(field_max("load", "c_size"), field_max("load", "sram_stride_x")));
    while (c > 0 && (n % c != 0 || n / c > field_max("load", "x_size"))) --c;
    if (c == 0 || n / c > field_max("load", "x_size"))
      return fail("op '" + op.name + "': its " + std::to_string(n) +
                  "-element constant is not x pixels of c elements that one load can describe");
    l.c_size = static_cast<std::uint32_t>(c);
    l.x_size = static_cast<std::uint32_t>(n / c);
    l.dram_stride_x = l.c_size;
    l.sram_stride_x = l.c_size;
    // One row (y_size 1): no row stride, which for a constant of 2^20 elements (swin_v2_b's
    // bias and shift mask of 64 windows, 4 heads, 64 x 64) would not fit its field.
    l.dram_stride_y = 0;
    l.sram_stride_y = 0;
  }
  if (op.pool_by_conv) {
    // One DRAM pixel of ones (cols elements) and its padding of value 1: `taps` pixels a row,
    // one row per block of cols channels (docs/codegen.md, "SE pools wider than the pool
    // window"): the weights scratchpad takes only DMA writes.
    const sched::Shape3 in = net_.tensor(op.inputs[0]).shape;
    const int64_t taps = ceil_div(in.h, sched::pool_sub_windows(in.h)) *
                         ceil_div(in.w, sched::pool_sub_windows(in.w));
    const int64_t blocks = ceil_div(channels.size(), cols_);
    if (taps - 1 > field_max("load", "pad_right") || blocks - 1 > field_max("load", "pad_bottom"))
      return fail("pool '" + op.name + "': " + std::to_string(blocks) + " blocks of " +
                  std::to_string(taps) + " taps of ones exceed one load's padding");
    l.c_size = static_cast<std::uint32_t>(cols_);
    l.dram_stride_x = l.c_size;
    l.sram_stride_x = l.c_size;
    l.sram_stride_y = static_cast<std::uint32_t>(taps * cols_);
    l.pad_right = static_cast<std::uint32_t>(taps - 1);
    l.pad_bottom = static_cast<std::uint32_t>(blocks - 1);
    l.pad_value = 1;
    ones_blocks_[index] = blocks;
  }
  loads.push_back(l);
  // Where element 0 of the constant would lie (constant_b adds an element's index): the loaded
  // rows start at `first`.
  table_at_[index] = {buffer->scratchpad, buffer->offset - first * act_bytes_};
  out_.traffic.weights_read += sched::constant_by_rows(op) ? need_bytes : op.weight_bytes;
  return {};
}

Status Lowering::emit_table_loads(const sched::GroupSchedule& gs, const GroupTiling& tiling,
                                  int64_t tile, const std::vector<Box>& need,
                                  std::vector<isa::Instruction>& loads) {
  // As the scheduler streams weights (tiling_model.cpp, stream_weights): resident, once before
  // the first tile; streamed, every tile, unless the group keeps slices and the op's channels
  // are those of the table already loaded.
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    if (!loads_table(op) || idle_in_tile(gs, o, tile)) continue;
    Box box = need[static_cast<size_t>(op.output)];
    if (gs.weights_resident) {
      box = sched::full_box(net_.tensor(op.output).shape);
      if (tile > 0) continue;
    } else {
      // A row-varying constant loads the tile's rows (sched::table_part), anything else the
      // whole table whatever the channels.
      const sched::Interval part = sched::table_part(op, box);
      const auto last = table_channels_.find(o);
      const bool kept =
          gs.keeps_weight_slices() && last != table_channels_.end() && last->second == part;
      table_channels_[o] = part;
      if (kept || box.c.empty() || part.empty()) continue;  // no load for an empty box
    }
    if (auto s = emit_table_load(gs, op, tiling.pipelined, box, loads); !s.ok()) return s;
  }
  return {};
}

Status Lowering::emit_lookup(const sched::GroupSchedule& gs, const sched::Op& op,
                             const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  auto in = view_of(gs, op.inputs[0], need[static_cast<size_t>(op.inputs[0])]);
  if (!in.ok()) return in.failure();
  auto out = view_of(gs, op.output, box);
  if (!out.ok()) return out.failure();
  const auto at = table_at_.find(static_cast<int>(&op - net_.ops.data()));
  if (at == table_at_.end()) return fail("op '" + op.name + "': its lookup table was not loaded");
  isa::Lut lut;
  set_box_operands(lut, in.value(), out.value(), box);
  lut.table_sp = static_cast<std::uint32_t>(at->second.first);
  lut.dst_elem = act_elem_;
  lut.table_addr = static_cast<std::uint32_t>(at->second.second);
  code.push_back(lut);
  return {};
}

Result<Lowering::ConstantB> Lowering::constant_b(const sched::Op& op, const Box& box) const {
  const auto at = table_at_.find(static_cast<int>(&op - net_.ops.data()));
  if (at == table_at_.end()) return fail("op '" + op.name + "': its constant was not loaded");
  // Row y reads the constant's row y mod the period (one sequence's rows broadcast over a
  // batch; the box lies in one period: constant_row_portions).
  const int64_t row = op.constant_row_period > 0 ? box.h.b % op.constant_row_period : box.h.b;
  ConstantB b;
  b.sp = static_cast<std::uint32_t>(at->second.first);
  b.addr = static_cast<std::uint32_t>(
      at->second.second +
      (row * op.constant_stride_y + box.w.b * op.constant_stride_x + box.c.b) * act_bytes_);
  b.stride_y = static_cast<std::uint32_t>(op.constant_stride_y);
  b.stride_x = static_cast<std::uint32_t>(op.constant_stride_x);
  return b;
}

// ISA `mul`: a times b, requantized. b is the second activation, equal-shaped (gating) or one
// value per channel broadcast over the pixels with strides 0 (an SE block's scale), or a
// constant (sched::Op::constant_operand) loaded whole like a table, element (y, x, c) at
// y * constant_stride_y + x * constant_stride_x + c (a rotary table, a layer scale).
Status Lowering::emit_mul(const sched::GroupSchedule& gs, const sched::Op& op,
                          const std::vector<Box>& need, std::vector<isa::Instruction>& code) {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  const ir::Op& ir_op = graph_.op(*id);
  if (ir_op.inputs.size() != 2 || (!op.constant_operand && op.inputs.size() != 2))
    return fail("mul '" + op.name + "' with other than two inputs");
  const Box& box = need[static_cast<size_t>(op.output)];
  if (box.empty()) return {};
  const int a_t = op.inputs[0];
  auto a = view_of(gs, a_t, need[static_cast<size_t>(a_t)]);
  if (!a.ok()) return a.failure();
  auto y = view_of(gs, op.output, box);
  if (!y.ok()) return y.failure();
  isa::Mul mul;
  if (op.constant_operand) {
    auto b = constant_b(op, box);
    if (!b.ok()) return b.failure();
    mul.b_sp = b.value().sp;
    mul.b_stride_y = b.value().stride_y;
    mul.b_stride_x = b.value().stride_x;
  } else {
    const int b_t = op.inputs[1];
    auto b = view_of(gs, b_t, need[static_cast<size_t>(b_t)]);
    if (!b.ok()) return b.failure();
    const bool per_channel = net_.tensor(b_t).shape.h == 1 && net_.tensor(b_t).shape.w == 1 &&
                             net_.tensor(op.output).shape.elements() != net_.tensor(b_t).shape.c;
    mul.b_sp = static_cast<std::uint32_t>(b.value().sp);
    mul.b_addr = static_cast<std::uint32_t>(
        per_channel ? b.value().addr(0, 0, box.c.b) : b.value().addr(box.h.b, box.w.b, box.c.b));
    // Per channel: b's strides are 0, the same C values for every pixel (docs/isa.md, `mul`).
    mul.b_stride_y = per_channel ? 0 : static_cast<std::uint32_t>(b.value().stride_y());
    mul.b_stride_x = per_channel ? 0 : static_cast<std::uint32_t>(b.value().pixel_elems);
  }
  const auto p = quant::mul_params(graph_.tensor(ir_op.inputs[0]), graph_.tensor(ir_op.inputs[1]),
                                   graph_.tensor(ir_op.outputs[0]));
  code.push_back(requant_vcfg(p));
  set_a_dst_strides(mul, a.value(), y.value(), box);
  mul.elem = act_elem_;
  mul.dst_elem = act_elem_;
  return emit_row_portions(op, box, a.value(), y.value(), mul, code);
}

}  // namespace tessel::codegen::detail
