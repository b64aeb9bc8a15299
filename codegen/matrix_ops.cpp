// The matrix ops (Conv, Gemm; docs/codegen.md): integer weights as the matrix unit sees them,
// their per-group placement on chip (per output-channel slice; a streamed Gemm too large for
// its buffer in reduction chunks), their weight/bias/table loads, and the conv and requant
// instructions of a tile.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "compiler/quant/realize.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

namespace {
// The largest `y_size` of a DMA instruction (docs/isa.md: u12).
constexpr std::uint32_t kMaxDmaRows = 4095;

const sched::BufferAlloc* wbuf_of(const sched::GroupSchedule& gs, const sched::Op& op) {
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && b.name == "w:" + op.name) return &b;
  return nullptr;
}
}  // namespace

std::vector<sched::Interval> Lowering::slices_of(int op_index) const {
  const auto it = channel_tiles_.find(op_index);
  const int64_t n = it == channel_tiles_.end() ? 1 : it->second;
  const int64_t channels = net_.tensor(net_.op(op_index).output).shape.c;
  std::vector<sched::Interval> slices;
  for (int64_t k = 0; k < n; ++k) slices.push_back({channels * k / n, channels * (k + 1) / n});
  return slices;
}

Result<MatrixOp> Lowering::matrix_op(const sched::Op& op) const {
  const auto id = graph_.find_op(op.name);
  if (!id) return fail("op '" + op.name + "' is not in the quantized graph");
  MatrixOp m;
  m.op = &graph_.op(*id);
  if (m.op->inputs.size() < 2) return fail("op '" + op.name + "' has no weights");
  m.weights = &graph_.tensor(m.op->inputs[1]);
  if (m.op->inputs.size() > 2 && !m.op->inputs[2].empty()) m.bias = &graph_.tensor(m.op->inputs[2]);
  const auto& ws = m.weights->shape;
  if (m.op->kind == ir::OpKind::Conv) {
    if (ws.size() != 4) return fail("conv '" + op.name + "': weights are not 4-D");
    m.co = ws[0];
    m.ci = ws[1];
    m.kh = ws[2];
    m.kw = ws[3];
    m.depthwise = op.groups > 1 && op.groups == m.co && m.ci == 1;
    if (op.groups > 1 && !m.depthwise) {
      // Grouped: block-diagonal blocks of `pack` groups where several groups fit the array, a
      // dense conv per group otherwise; each unit from a column block of its own
      // (sched::column_blocks).
      m.groups = op.groups;
      m.pack = sched::conv_groups_per_block(machine_, op.groups, m.ci, m.co / op.groups);
      m.block_diagonal = m.pack > 1;
    }
    if (op.space_to_depth.channels > 0) {
      const sched::SpaceToDepthConv& s2d = op.space_to_depth;
      if (s2d.channels != m.ci || s2d.kernel_h != m.kh || s2d.kernel_w != m.kw)
        return fail("conv '" + op.name + "': the space-to-depth rewrite does not match its " +
                    "weights '" + m.weights->name + "'");
      m.s2d = s2d;
      m.ci = s2d.factor * s2d.factor * s2d.channels;
      m.kh = op.window.kernel_h;
      m.kw = op.window.kernel_w;
    }
  } else if (m.op->kind == ir::OpKind::Gemm && op.kind == sched::OpKind::Conv) {
    m.token_linear = true;
    m.trans_b = m.op->get_int("transB") != 0;
    m.co = net_.tensor(op.output).shape.c;
    m.ci = net_.tensor(op.inputs[0]).shape.c;
    if (ws.size() != 2 || ws[0] * ws[1] != m.co * m.ci)
      return fail("linear '" + op.name + "': weights do not match a " + std::to_string(m.ci) +
                  " -> " + std::to_string(m.co) + " layer");
  } else if (m.op->kind == ir::OpKind::Gemm) {
    m.gemm = true;
    m.trans_b = m.op->get_int("transB") != 0;
    // The input as stored: a Flatten/Reshape output is a view of an NHWC (C, H, W) tensor.
    std::string source = net_.tensor(op.inputs[0]).name;
    if (auto it = alias_.find(source); it != alias_.end()) source = it->second;
    const sched::Shape3 in = net_.tensor(tensor_index_.at(source)).shape;
    m.ci = in.elements();
    m.in_c = in.c;
    m.in_h = in.h;
    m.in_w = in.w;
    m.co = net_.tensor(op.output).shape.c;
    if (ws.size() != 2 || ws[0] * ws[1] != m.co * in.elements())
      return fail("gemm '" + op.name + "': weights do not match a " +
                  std::to_string(in.elements()) + " -> " + std::to_string(m.co) + " layer");
  } else {
    return fail("op '" + op.name + "' is not a Conv or Gemm in the quantized graph");
  }
  const size_t expected = static_cast<size_t>(ir::element_count(ws));
  if (m.weights->int_values.size() != expected)
    return fail("op '" + op.name + "': weights '" + m.weights->name + "' carry no integer values");
  if (m.bias != nullptr && m.bias->int_values.size() != static_cast<size_t>(m.co))
    return fail("op '" + op.name + "': bias '" + m.bias->name + "' carries no integer values");
  return m;
}

int64_t Lowering::chunk_blocks_of(const sched::GroupSchedule& gs, const sched::Op& op,
                                  const MatrixOp& m) const {
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  const sched::BufferAlloc* wbuf = wbuf_of(gs, op);
  const bool reducer = hidden_reducer(gs) == static_cast<int>(&op - net_.ops.data());
  if (m.depthwise || gs.weights_resident || wbuf == nullptr) return ic_blocks;
  // The schedule's mapping says the reduction loop (GroupSchedule::reduction_chunk_inputs, the
  // `reduction` loop of docs/scheduler.md "The explicit mapping"); a schedule without it (a JSON
  // of before session 26, when only a Gemm had chunks) has the chunk read back from the size its
  // buffer reserved.
  const auto at = std::find(gs.ops.begin(), gs.ops.end(), static_cast<int>(&op - net_.ops.data()));
  const auto pos = static_cast<size_t>(at - gs.ops.begin());
  if (const int64_t said = gs.chunk_blocks_at(pos, ic_blocks, rows_); said >= 0) return said;
  if (!m.gemm && !reducer) return ic_blocks;
  // The widest slice's packed blocks, bias vector (whole blocks, reserved with or without a
  // bias, as the scheduler sizes it) and table: when they fit the buffer, no chunks.
  int64_t widest = 0;
  for (const sched::Interval c : slices_of(static_cast<int>(&op - net_.ops.data())))
    widest = std::max(widest, c.size());
  const int64_t oc_blocks = ceil_div(widest, cols_);
  const int64_t block_row = oc_blocks * rows_ * cols_ * weight_bytes_;  // one input block
  const int64_t fixed = oc_blocks * cols_ * 4 + widest * 8;
  if (ceil_div(ic_blocks * block_row + fixed, 8) * 8 <= wbuf->size_bytes) return ic_blocks;
  // As many input blocks as the buffer holds: the scheduler's chunk (kGemmChunkBlocks), read
  // back from the size it reserved. A buffer too small for one block is place_conv's error.
  const int64_t fit = (wbuf->size_bytes - fixed) / block_row;
  return fit >= 1 ? std::min(fit, ic_blocks) : ic_blocks;
}

Result<WeightCopies> Lowering::weight_copies(const sched::GroupSchedule& gs,
                                             const sched::Op& op) const {
  WeightCopies w;
  w.shared = gs.weight_sweep;
  const std::string name = w.shared ? "w:sweep" : "w:" + op.name;
  // Streamed and double-buffered weights have a second copy: a sweep's always.
  const bool two = !gs.weights_resident && gs.double_buffered;
  for (const auto& b : gs.buffers) {
    if (b.role != sched::BufferRole::Weights) continue;
    if (b.name == name) w.copy[0] = &b;
    if (two && b.name == name + "#1") w.copy[1] = &b;
  }
  if (w.shared && (w.copy[0] == nullptr || w.copy[1] == nullptr))
    return fail("the weight sweep has no pair of slice buffers (w:sweep, w:sweep#1)");
  if (w.copy[0] == nullptr) return fail("op '" + op.name + "': the schedule has no weight buffer");
  if (two && w.copy[1] == nullptr)
    return fail("op '" + op.name +
                "': the schedule double-buffers its streamed weights "
                "but has no second weight buffer");
  if (w.copy[1] != nullptr && w.copy[1]->scratchpad != w.copy[0]->scratchpad)
    return fail(w.shared
                    ? std::string("the weight sweep's slice buffers lie in different scratchpads")
                    : "op '" + op.name + "': its two weight buffers lie in different scratchpads");
  return w;
}

Status Lowering::place_conv(const sched::GroupSchedule& gs, const sched::Op& op) {
  const int index = static_cast<int>(&op - net_.ops.data());
  auto matrix = matrix_op(op);
  if (!matrix.ok()) return matrix.failure();
  const MatrixOp& m = matrix.value();
  if (gs.weight_sweep && (m.gemm || m.depthwise))
    return fail("op '" + op.name + "' in a weight sweep is not a dense conv");
  ConvParams p;
  p.has_bias = m.bias != nullptr;
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  p.chunk_blocks = chunk_blocks_of(gs, op, m);
  p.chunks = ceil_div(ic_blocks, p.chunk_blocks);
  const int64_t max_ic_blocks = field_max("conv", "ic_blocks");
  if (p.chunk_blocks > max_ic_blocks)
    return fail("op '" + op.name + "': " + std::to_string(p.chunk_blocks) +
                " input blocks in one conv instruction (ic_blocks takes at most " +
                std::to_string(max_ic_blocks) + ")");
  if (p.chunks > 1 && gs.keeps_weight_slices())
    return fail("op '" + op.name + "': its reduction is chunked (" + std::to_string(p.chunks) +
                " chunks of " + std::to_string(p.chunk_blocks) +
                " input blocks) in a slice-keeping schedule, which codegen does not emit");
  // Per slice: packed blocks, the bias vector (whole blocks of C), the (M, r) table.
  struct SliceBytes {
    int64_t packed = 0, bias = 0, table = 0;
    int64_t total() const { return ceil_div(packed + bias + table, 8) * 8; }
  };
  const auto slices = slices_of(index);
  std::vector<SliceBytes> bytes;
  int64_t dram = out_.layout.find("w:" + op.name)->offset;
  for (const sched::Interval c : slices) {
    if (m.groups > 1 && (!sched::starts_unit_slice(c.b, m.unit(), m.pack) ||
                         (c.e < m.co && !sched::starts_unit_slice(c.e, m.unit(), m.pack))))
      return fail("conv '" + op.name + "': output channel slice [" + std::to_string(c.b) + ", " +
                  std::to_string(c.e) + ") does not start and end at a block of " +
                  std::to_string(m.pack) + " groups (" + std::to_string(m.unit_out()) +
                  " channels)");
    const int64_t oc_blocks = sched::column_block_count(c, m.unit(), cols_);
    SliceBytes b;
    // With reduction chunks the buffer holds one chunk of every output block.
    b.packed = m.depthwise
                   ? oc_blocks * m.kh * m.kw * cols_ * weight_bytes_
                   : oc_blocks * p.chunk_blocks * m.kh * m.kw * rows_ * cols_ * weight_bytes_;
    b.bias = p.has_bias ? oc_blocks * cols_ * 4 : 0;
    b.table = c.size() * 8;
    bytes.push_back(b);
    SliceParams sp;
    sp.channels = c;
    sp.dram_weights = dram;
    dram += c.size() * (m.depthwise ? 1 : m.ci) * m.kh * m.kw * weight_bytes_;
    p.slices.push_back(sp);
  }
  // Resident weights keep every slice on chip; streamed ones reuse one slice's room per tile
  // (a sweep's: per slice step).
  int64_t need = 0;
  for (const SliceBytes& b : bytes)
    need = gs.weights_resident ? need + b.total() : std::max(need, b.total());
  auto copies = weight_copies(gs, op);
  if (!copies.ok()) return copies.failure();
  const sched::BufferAlloc* wbuf = copies.value().copy[0];
  const sched::BufferAlloc* wbuf1 = copies.value().copy[1];
  p.sp = wbuf->scratchpad;
  if (wbuf1 != nullptr) p.copy1_delta = wbuf1->offset - wbuf->offset;
  int64_t base = wbuf->offset;
  if (copies.value().shared) {
    // A weight sweep's pair serves all its convs: it stays where the schedule put it, and
    // every slice must fit both copies.
    for (size_t k = 0; k < slices.size(); ++k) {
      for (const sched::BufferAlloc* w : {wbuf, wbuf1}) {
        if (bytes[k].total() > w->size_bytes)
          return fail("op '" + op.name + "': a slice of " + std::to_string(slices[k].size()) +
                      " channels needs " + std::to_string(bytes[k].total()) + " bytes; '" +
                      w->name + "' has " + std::to_string(w->size_bytes));
      }
    }
  } else if (auto moved = place_above_peak(gs, op, need, copies.value(), p, base); !moved.ok()) {
    return moved;
  }
  int64_t at = base;
  for (size_t k = 0; k < slices.size(); ++k) {
    SliceParams& sp = p.slices[k];
    sp.w_addr = at;
    sp.bias_addr = at + bytes[k].packed;
    sp.table_addr = sp.bias_addr + bytes[k].bias;
    if (gs.weights_resident) at += bytes[k].total();
  }
  conv_params_[index] = p;
  return {};
}

Status Lowering::place_above_peak(const sched::GroupSchedule& gs, const sched::Op& op, int64_t need,
                                  const WeightCopies& copies, ConvParams& p, int64_t& base) {
  const sched::BufferAlloc& w = *copies.copy[0];
  const sched::BufferAlloc* w1 = copies.copy[1];
  // The load engine fills a streamed slice before the tile's first op. The scheduler's slices
  // live from that load (step 0), so none shares bytes with a buffer of an earlier step; a
  // schedule that says otherwise (read from JSON, say) gets its slice placed above the peak.
  bool shared_lifetime = false;
  if (!gs.weights_resident) {
    for (const auto& b : gs.buffers) {
      if (&b == &w || b.scratchpad != w.scratchpad || b.first_step >= w.first_step) continue;
      if (b.offset < w.offset + w.size_bytes && w.offset < b.offset + b.size_bytes)
        shared_lifetime = true;  // written or read before this op's step, in these bytes
    }
  }
  if (w1 != nullptr) shared_lifetime |= need > w1->size_bytes;
  if (need <= w.size_bytes && !shared_lifetime) return {};
  // The scheduler sizes weight buffers in compact bytes; the matrix unit wants whole R x C
  // blocks plus the bias vector and requant table. Place them above the schedule's peak.
  const int64_t peak = gs.peak_bytes.size() > static_cast<size_t>(p.sp)
                           ? gs.peak_bytes[static_cast<size_t>(p.sp)]
                           : 0;
  int64_t& top = extra_top_[p.sp];
  top = std::max(top, ceil_div(peak, 64) * 64);
  base = top;
  top += ceil_div(need, 64) * 64;
  if (w1 != nullptr) {  // and the second copy right above
    p.copy1_delta = ceil_div(need, 64) * 64;
    top += p.copy1_delta;
  }
  const int64_t size = machine_.scratchpads[static_cast<size_t>(p.sp)].size_bytes;
  const int64_t n = w1 != nullptr ? 2 : 1;
  if (top > size)
    return fail("op '" + op.name + "': packed weights, bias and requant table need " +
                std::to_string(n) + " x " + std::to_string(need) +
                " bytes; the schedule reserved " + std::to_string(w.size_bytes) +
                " and scratchpad '" + machine_.scratchpads[static_cast<size_t>(p.sp)].name +
                "' has " + std::to_string(size - (top - n * ceil_div(need, 64) * 64)) +
                " bytes free above the schedule's peak");
  return {};
}

Status Lowering::emit_conv_loads(const sched::Op& op, int slice,
                                 std::vector<isa::Instruction>& loads, int64_t chunk) {
  const MatrixOp m = matrix_op(op).value();
  const ConvParams& p = conv_params_.at(static_cast<int>(&op - net_.ops.data()));
  for (size_t k = 0; k < p.slices.size(); ++k) {
    if (slice >= 0 && static_cast<size_t>(slice) != k) continue;
    SliceParams sp = p.slices[k];
    if (weight_copy_ == 1) sp.w_addr += p.copy1_delta;  // the second copy of a ping-pong slice
    if ((table_copy_ < 0 ? weight_copy_ : table_copy_) == 1) {
      sp.bias_addr += p.copy1_delta;
      sp.table_addr += p.copy1_delta;
    }
    // Reduction chunk `chunk`: input blocks [b0, b1), channels [b0 * R, min(b1 * R, ci)). The
    // slice's chunks lie one after another in DRAM (plan_dram); one chunk, all blocks, without
    // chunks.
    const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
    const int64_t b0 = chunk * p.chunk_blocks, b1 = std::min(ic_blocks, b0 + p.chunk_blocks);
    int64_t dram = sp.dram_weights +
                   sp.channels.size() * std::min(m.ci, b0 * rows_) * m.kh * m.kw * weight_bytes_;
    auto weights_load = [&](int64_t sram, int64_t y, int64_t x, int64_t c, int64_t sy, int64_t sx,
                            int64_t pad_right, int64_t pad_left = 0) {
      isa::Load l;
      l.sp = static_cast<std::uint32_t>(p.sp);
      l.elem = weight_elem_;
      l.kind = isa::Traffic::kWeights;
      l.sram_addr = static_cast<std::uint32_t>(sram);
      l.dram_addr = static_cast<std::uint64_t>(dram);
      l.y_size = static_cast<std::uint32_t>(y);
      l.x_size = static_cast<std::uint32_t>(x);
      l.c_size = static_cast<std::uint32_t>(c);
      l.dram_stride_y = static_cast<std::uint32_t>(x * c);
      l.dram_stride_x = static_cast<std::uint32_t>(c);
      l.sram_stride_y = static_cast<std::uint32_t>(sy);
      l.sram_stride_x = static_cast<std::uint32_t>(sx);
      l.pad_right = static_cast<std::uint32_t>(pad_right);
      l.pad_left = static_cast<std::uint32_t>(pad_left);
      dram += y * x * c * weight_bytes_;
      out_.traffic.weights_read += y * x * c * weight_bytes_;
      // A block that continues the previous load in DRAM and in SRAM with the same row shape
      // (the next input-channel block of a full-height output block, say) extends that load's
      // rows: one DMA instruction per contiguous run, not one per block. The bytes moved and
      // where they land are the same; the DRAM latency is paid once per run (docs/codegen.md).
      if (!loads.empty()) {
        auto* prev = std::get_if<isa::Load>(&loads.back());
        if (prev != nullptr && prev->kind == l.kind && prev->sp == l.sp && prev->elem == l.elem &&
            prev->x_size == l.x_size && prev->c_size == l.c_size &&
            prev->dram_stride_y == l.dram_stride_y && prev->dram_stride_x == l.dram_stride_x &&
            prev->sram_stride_y == l.sram_stride_y && prev->sram_stride_x == l.sram_stride_x &&
            prev->pad_top == 0 && prev->pad_bottom == 0 && prev->pad_left == 0 && l.pad_left == 0 &&
            prev->pad_right == l.pad_right &&
            prev->sram_addr + static_cast<std::uint64_t>(prev->y_size) * prev->sram_stride_y *
                                  static_cast<std::uint64_t>(weight_bytes_) ==
                l.sram_addr &&
            prev->dram_addr + static_cast<std::uint64_t>(prev->y_size) * prev->dram_stride_y *
                                  static_cast<std::uint64_t>(weight_bytes_) ==
                l.dram_addr &&
            prev->y_size + l.y_size <= kMaxDmaRows) {
          prev->y_size += l.y_size;
          return;
        }
      }
      loads.push_back(l);
    };
    const std::vector<sched::ColumnBlock> blocks =
        sched::column_blocks(sp.channels, m.unit(), cols_);
    // The zero rows of a block's padded input channels are the load's right padding.
    const int64_t max_pad_rows = field_max("load", "pad_right");
    for (int64_t ob = 0; ob < static_cast<int64_t>(blocks.size()); ++ob) {
      const int64_t cn = blocks[static_cast<size_t>(ob)].count;
      if (m.depthwise) {
        weights_load(sp.w_addr + ob * m.kh * m.kw * cols_ * weight_bytes_, m.kh * m.kw, 1, cn,
                     cols_, cols_, 0);
        continue;
      }
      if (m.block_diagonal) {
        // One load per group of the block: its out_pg columns at column j * out_pg, its in_pg
        // rows at row j * in_pg, every other row of those columns zero (the load's row
        // padding); the block's groups together write every column they use.
        const int64_t out_pg = m.co / m.groups;
        const int64_t block = ob * m.kh * m.kw * rows_ * cols_ * weight_bytes_;
        for (int64_t j = 0; j * out_pg < cn; ++j)
          weights_load(sp.w_addr + block + j * out_pg * weight_bytes_, m.kh * m.kw, m.ci, out_pg,
                       rows_ * cols_, cols_, rows_ - (j + 1) * m.ci, j * m.ci);
        continue;
      }
      for (int64_t ib = b0; ib < b1; ++ib) {
        const int64_t rn = std::min(rows_, m.ci - ib * rows_);
        if (rows_ - rn > max_pad_rows)
          return fail("conv '" + op.name + "': " + std::to_string(rows_ - rn) +
                      " zero weight rows to pad in one block (the DMA pads at most " +
                      std::to_string(max_pad_rows) + ")");
        // Rows r >= rn of the block are the padded input channels: zero weights (DMA padding).
        // On chip the chunk's blocks are [ocb][icb of the chunk], what a conv with
        // ic_blocks = b1 - b0 reads.
        const int64_t block =
            ((ob * (b1 - b0) + ib - b0) * m.kh * m.kw) * rows_ * cols_ * weight_bytes_;
        weights_load(sp.w_addr + block, m.kh * m.kw, rn, cn, rows_ * cols_, cols_, rows_ - rn);
      }
    }
    if (chunk > 0) continue;  // the bias and table came with chunk 0
    auto table_load = [&](const std::string& region, int64_t first_word, int64_t sram,
                          int64_t words) {
      isa::Load l;
      l.sp = static_cast<std::uint32_t>(p.sp);
      l.elem = isa::Elem::kI32;
      l.kind = isa::Traffic::kWeights;
      l.sram_addr = static_cast<std::uint32_t>(sram);
      l.dram_addr = static_cast<std::uint64_t>(out_.layout.find(region)->offset + first_word * 4);
      l.c_size = static_cast<std::uint32_t>(words);
      l.dram_stride_x = l.c_size;
      l.sram_stride_x = l.c_size;
      loads.push_back(l);
    };
    if (p.has_bias) {
      table_load("b:" + op.name, sp.channels.b, sp.bias_addr, sp.channels.size());
      out_.traffic.weights_read += sp.channels.size() * 4;
    }
    table_load("rq:" + op.name, 2 * sp.channels.b, sp.table_addr, 2 * sp.channels.size());
    out_.traffic.requant_table_read += sp.channels.size() * 8;
  }
  return {};
}

Status Lowering::emit_conv(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<Phase>& phases) {
  const MatrixOp m = matrix_op(op).value();
  const ConvParams& p = conv_params_.at(static_cast<int>(&op - net_.ops.data()));
  const int in_t = op.inputs[0];
  const Box& out_box = need[static_cast<size_t>(op.output)];
  if (out_box.empty()) return {};
  int slice_index = -1;
  for (size_t k = 0; k < p.slices.size(); ++k)
    if (p.slices[k].channels == out_box.c) slice_index = static_cast<int>(k);
  if (slice_index < 0)
    return fail("op '" + op.name + "': output channels [" + std::to_string(out_box.c.b) + ", " +
                std::to_string(out_box.c.e) + ") are not one of its weight slices");
  const SliceParams* slice = &p.slices[static_cast<size_t>(slice_index)];
  SliceParams in_copy = *slice;  // where this tile's copy of the slice lies
  const int64_t w_addr_copy0 = slice->w_addr;
  if (weight_copy_ == 1) in_copy.w_addr += p.copy1_delta;
  if ((table_copy_ < 0 ? weight_copy_ : table_copy_) == 1) {
    in_copy.bias_addr += p.copy1_delta;
    in_copy.table_addr += p.copy1_delta;
  }
  slice = &in_copy;
  auto in_view = view_of(gs, in_t, need[static_cast<size_t>(in_t)]);
  if (!in_view.ok()) return in_view.failure();
  auto out_view = view_of(gs, op.output, out_box);
  if (!out_view.ok()) return out_view.failure();
  const sched::BufferAlloc* acc = accumulator_of(gs, op);
  if (acc == nullptr) return fail("op '" + op.name + "': the schedule has no accumulator");
  // A Gemm is a 1x1 conv of one pixel over its input as stored, one pixel of K channels (HWC
  // order): the strides never step.
  sched::Window win = op.window;
  sched::Shape3 in_shape = net_.tensor(in_t).shape;
  int64_t in_stride_x = in_view.value().pixel_elems, in_stride_y = in_view.value().stride_y();
  const int64_t in_addr_base = in_view.value().offset;
  if (m.gemm) {
    win = sched::Window{};
    in_shape = {m.ci, 1, 1};
    in_stride_x = in_stride_y = 0;
  }
  const int64_t oc_blocks = sched::column_block_count(slice->channels, m.unit(), cols_);
  const int64_t acc_px = oc_blocks * cols_;
  const int64_t out_w = out_box.w.size();
  // Columns of the window, clamped to the stored input; the rest is the conv's own padding.
  const int64_t xa = out_box.w.b * win.stride_w - win.pad_left;
  const int64_t xb =
      (out_box.w.e - 1) * win.stride_w + (win.kernel_w - 1) * win.dilation_w + 1 - win.pad_left;
  const int64_t x0 = std::max<int64_t>(xa, 0), x1 = std::min(xb, in_shape.w);
  auto cfg = conv_requant_vcfg(op, *m.op);
  if (!cfg.ok()) return cfg.failure();
  phases.back().compute.push_back(cfg.value());
  int64_t step = pos < gs.rows_per_step.size() ? gs.rows_per_step[pos] : out_box.h.size();
  if (step < 1) step = out_box.h.size();
  if (p.chunks > 1 && out_box.h.size() > step)
    return fail("op '" + op.name + "': reduction chunks with more than one conv step per tile");
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
  const int64_t in_c0 = need[static_cast<size_t>(in_t)].c.b;
  const int64_t max_conv_pad = field_max("conv", "pad_top");  // every side's field is as wide
  for (int64_t r = out_box.h.b; r < out_box.h.e; r += step) {
    const int64_t rows = std::min(step, out_box.h.e - r);
    const int64_t ya = r * win.stride_h - win.pad_top;
    const int64_t yb =
        (r + rows - 1) * win.stride_h + (win.kernel_h - 1) * win.dilation_h + 1 - win.pad_top;
    const int64_t y0 = std::max<int64_t>(ya, 0), y1 = std::min(yb, in_shape.h);
    const int64_t pads[4] = {y0 - ya, yb - y1, x0 - xa, xb - x1};
    for (int64_t pad : pads)
      if (pad > max_conv_pad)
        return fail("conv '" + op.name + "': padding of " + std::to_string(pad) +
                    " at a tile edge (the conv instruction pads at most " +
                    std::to_string(max_conv_pad) + ")");
    isa::Conv c;
    c.in_sp = static_cast<std::uint32_t>(in_view.value().sp);
    c.w_sp = static_cast<std::uint32_t>(p.sp);
    c.acc_sp = static_cast<std::uint32_t>(acc->scratchpad);
    c.elem = act_elem_;
    c.init = p.has_bias ? isa::Init::kBias : isa::Init::kZero;
    c.depthwise = m.depthwise;
    // The quantizer's input shift (docs/quantization.md, "Input shift on Conv/Gemm").
    c.in_shift = static_cast<std::uint32_t>(m.op->get_int("input_shift"));
    c.in_addr = static_cast<std::uint32_t>(
        m.gemm ? in_addr_base : in_view.value().addr(y0, x0, m.depthwise ? in_c0 : 0));
    c.w_addr = static_cast<std::uint32_t>(slice->w_addr);
    c.acc_addr = static_cast<std::uint32_t>(acc->offset);
    c.bias_addr = static_cast<std::uint32_t>(slice->bias_addr);
    c.out_h = static_cast<std::uint32_t>(rows);
    c.out_w = static_cast<std::uint32_t>(out_w);
    c.ic_blocks = static_cast<std::uint32_t>(std::min(ic_blocks, p.chunk_blocks));
    c.oc_blocks = static_cast<std::uint32_t>(oc_blocks);
    c.kh = static_cast<std::uint32_t>(win.kernel_h);
    c.kw = static_cast<std::uint32_t>(win.kernel_w);
    c.stride_h = static_cast<std::uint32_t>(win.stride_h);
    c.stride_w = static_cast<std::uint32_t>(win.stride_w);
    c.dil_h = static_cast<std::uint32_t>(win.dilation_h);
    c.dil_w = static_cast<std::uint32_t>(win.dilation_w);
    c.pad_top = static_cast<std::uint32_t>(pads[0]);
    c.pad_bottom = static_cast<std::uint32_t>(pads[1]);
    c.pad_left = static_cast<std::uint32_t>(pads[2]);
    c.pad_right = static_cast<std::uint32_t>(pads[3]);
    c.in_stride_y = static_cast<std::uint32_t>(in_stride_y);
    c.in_stride_x = static_cast<std::uint32_t>(in_stride_x);
    c.acc_stride_y = static_cast<std::uint32_t>(out_w * acc_px);
    c.acc_stride_x = static_cast<std::uint32_t>(acc_px);
    if (m.groups > 1) {
      emit_grouped_convs(m, c, in_view.value(), y0, x0, *slice, phases.back().compute);
    } else {
      phases.back().compute.push_back(c);
    }
    // Reduction chunks (a streamed Gemm or dense conv): chunk k loads into the buffer chunk
    // k-1's conv read, or, double-buffered, into the other copy, then accumulates onto the
    // accumulator, reading the tile's input from its chunk's first channel (docs/codegen.md,
    // "Reduction chunks").
    const int first_copy = weight_copy_;
    for (int64_t k = 1; k < p.chunks; ++k) {
      phases.emplace_back();
      if (chunk_pingpong_) weight_copy_ = static_cast<int>((first_copy + k) % 2);
      const Status loaded = emit_conv_loads(op, slice_index, phases.back().loads, k);
      isa::Conv more = c;
      more.w_addr =
          static_cast<std::uint32_t>(w_addr_copy0 + (weight_copy_ == 1 ? p.copy1_delta : 0));
      weight_copy_ = first_copy;
      if (!loaded.ok()) return loaded;
      more.init = isa::Init::kAcc;
      more.in_addr =
          static_cast<std::uint32_t>(c.in_addr + k * p.chunk_blocks * rows_ * act_bytes_);
      more.ic_blocks =
          static_cast<std::uint32_t>(std::min(ic_blocks - k * p.chunk_blocks, p.chunk_blocks));
      phases.back().compute.push_back(more);
    }
    const isa::Requant q =
        requant_of(c, out_view.value(), *slice, p.sp, r, out_box.w.b, rows, out_w);
    if (sched::columns_contiguous(slice->channels, m.unit(), cols_)) {
      phases.back().compute.push_back(q);
      continue;
    }
    // One requant per unit portion where the portions' columns are not consecutive channels:
    // its channels from its first block's accumulators, with its rows of the (M, r) table.
    int64_t block = 0;
    for (const sched::Interval part : sched::unit_portions(slice->channels, m.unit())) {
      isa::Requant one = q;
      one.src_addr = static_cast<std::uint32_t>(q.src_addr + block * cols_ * 4);
      one.dst_addr = static_cast<std::uint32_t>(out_view.value().addr(r, out_box.w.b, part.b));
      one.param_addr = static_cast<std::uint32_t>(q.param_addr + (part.b - slice->channels.b) * 8);
      one.c_size = static_cast<std::uint32_t>(part.size());
      phases.back().compute.push_back(one);
      block += ceil_div(part.size(), cols_);
    }
  }
  return {};
}

void Lowering::emit_grouped_convs(const MatrixOp& m, const isa::Conv& whole, const TileView& in,
                                  int64_t y0, int64_t x0, const SliceParams& slice,
                                  std::vector<isa::Instruction>& compute) const {
  // One conv per unit portion (a block-diagonal block of `pack` groups, or one group's columns
  // in the slice): its inputs from its group's first channel, its weight blocks and its
  // accumulator columns after the previous portions', its bias from its first channel
  // (loaded compact; a padded unit's last columns read the next unit's, into accumulators no
  // requant reads) (docs/codegen.md, "Grouped convolution").
  const int64_t out_pg = m.co / m.groups;
  const int64_t ic_blocks = ceil_div(m.ci, rows_);
  int64_t block = 0;  // the portion's first column block in the slice
  for (const sched::Interval part : sched::unit_portions(slice.channels, m.unit())) {
    const int64_t blocks = ceil_div(part.size(), cols_);
    isa::Conv c = whole;
    c.in_addr = static_cast<std::uint32_t>(in.addr(y0, x0, part.b / out_pg * m.ci));
    c.w_addr = static_cast<std::uint32_t>(whole.w_addr + block * ic_blocks * m.kh * m.kw * rows_ *
                                                             cols_ * weight_bytes_);
    c.bias_addr = static_cast<std::uint32_t>(whole.bias_addr + (part.b - slice.channels.b) * 4);
    c.acc_addr = static_cast<std::uint32_t>(whole.acc_addr + block * cols_ * 4);
    c.oc_blocks = static_cast<std::uint32_t>(blocks);
    compute.push_back(c);
    block += blocks;
  }
}

isa::Requant Lowering::requant_of(const isa::Conv& c, const TileView& out, const SliceParams& slice,
                                  int param_sp, int64_t y, int64_t x, int64_t rows,
                                  int64_t cols) const {
  isa::Requant q;
  q.src_sp = c.acc_sp;
  q.dst_sp = static_cast<std::uint32_t>(out.sp);
  q.param_sp = static_cast<std::uint32_t>(param_sp);
  q.dst_elem = act_elem_;
  q.per_channel = true;
  q.src_addr = c.acc_addr;
  q.dst_addr = static_cast<std::uint32_t>(out.addr(y, x, slice.channels.b));
  q.param_addr = static_cast<std::uint32_t>(slice.table_addr);
  q.y_size = static_cast<std::uint32_t>(rows);
  q.x_size = static_cast<std::uint32_t>(cols);
  q.c_size = static_cast<std::uint32_t>(slice.channels.size());
  q.src_stride_y = c.acc_stride_y;
  q.src_stride_x = c.acc_stride_x;
  q.dst_stride_y = static_cast<std::uint32_t>(out.stride_y());
  q.dst_stride_x = static_cast<std::uint32_t>(out.pixel_elems);
  return q;
}

}  // namespace tessel::codegen::detail

namespace tessel::codegen::detail {

Status Lowering::emit_hidden_chunk(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                                   const std::vector<Box>& need, std::vector<Phase>& phases) {
  const MatrixOp m = matrix_op(op).value();
  const ConvParams& p = conv_params_.at(static_cast<int>(&op - net_.ops.data()));
  const int in_t = op.inputs[0];
  const Box& out_box = need[static_cast<size_t>(op.output)];
  const Box& in_box = need[static_cast<size_t>(in_t)];
  if (out_box.empty() || in_box.empty()) return {};
  if (p.slices.size() != 1 || p.chunks != gs.channel_tiles ||
      in_box.c.size() != p.chunk_blocks * rows_)
    return fail("op '" + op.name + "': hidden chunks of " + std::to_string(in_box.c.size()) +
                " channels, but its weights are " + std::to_string(p.slices.size()) +
                " slice(s) of " + std::to_string(p.chunks) + " chunks of " +
                std::to_string(p.chunk_blocks) + " input blocks");
  const SliceParams& slice = p.slices.front();
  auto in_view = view_of(gs, in_t, in_box);
  if (!in_view.ok()) return in_view.failure();
  auto out_view = view_of(gs, op.output, out_box);
  if (!out_view.ok()) return out_view.failure();
  const sched::BufferAlloc* acc = accumulator_of(gs, op);
  if (acc == nullptr) return fail("op '" + op.name + "': the schedule has no accumulator");
  const bool last = hidden_chunk_ + 1 == gs.channel_tiles;
  std::vector<isa::Instruction>& code = phases.back().compute;
  if (last) {  // the requant's zero point and clamp
    auto cfg = conv_requant_vcfg(op, *m.op);
    if (!cfg.ok()) return cfg.failure();
    code.push_back(cfg.value());
  }
  const int64_t acc_px = ceil_div(slice.channels.size(), cols_) * cols_;
  const int64_t out_w = out_box.w.size();
  int64_t step = pos < gs.rows_per_step.size() ? gs.rows_per_step[pos] : out_box.h.size();
  if (step < 1) step = out_box.h.size();
  for (int64_t r = out_box.h.b; r < out_box.h.e; r += step) {
    const int64_t rows = std::min(step, out_box.h.e - r);
    isa::Conv c;
    c.in_sp = static_cast<std::uint32_t>(in_view.value().sp);
    c.w_sp = static_cast<std::uint32_t>(p.sp);
    c.acc_sp = static_cast<std::uint32_t>(acc->scratchpad);
    c.elem = act_elem_;
    // Chunk 0 starts from the bias; every later chunk adds onto the rows' sums.
    c.init = hidden_chunk_ > 0 ? isa::Init::kAcc : p.has_bias ? isa::Init::kBias : isa::Init::kZero;
    c.in_shift = static_cast<std::uint32_t>(m.op->get_int("input_shift"));
    c.in_addr = static_cast<std::uint32_t>(in_view.value().addr(r, out_box.w.b, in_box.c.b));
    c.w_addr = static_cast<std::uint32_t>(slice.w_addr);
    // The accumulators hold every row of the output: this step's rows at their offset.
    c.acc_addr = static_cast<std::uint32_t>(acc->offset + (r - out_box.h.b) * out_w * acc_px *
                                                              machine_.accumulator_bytes);
    c.bias_addr = static_cast<std::uint32_t>(slice.bias_addr);
    c.out_h = static_cast<std::uint32_t>(rows);
    c.out_w = static_cast<std::uint32_t>(out_w);
    c.ic_blocks = static_cast<std::uint32_t>(p.chunk_blocks);
    c.oc_blocks = static_cast<std::uint32_t>(acc_px / cols_);
    c.kh = c.kw = c.stride_h = c.stride_w = c.dil_h = c.dil_w = 1;
    c.in_stride_y = static_cast<std::uint32_t>(in_view.value().stride_y());
    c.in_stride_x = static_cast<std::uint32_t>(in_view.value().pixel_elems);
    c.acc_stride_y = static_cast<std::uint32_t>(out_w * acc_px);
    c.acc_stride_x = static_cast<std::uint32_t>(acc_px);
    code.push_back(c);
    if (last)
      code.push_back(requant_of(c, out_view.value(), slice, p.sp, r, out_box.w.b, rows, out_w));
  }
  return {};
}

}  // namespace tessel::codegen::detail
