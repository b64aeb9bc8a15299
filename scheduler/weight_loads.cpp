// A matrix op's weight loads as code generation emits them (weight_loads.hpp).
#include "scheduler/weight_loads.hpp"

#include <algorithm>

#include "support/int_ops.hpp"

namespace tessel::sched {

namespace {

using intops::ceil_div;

// The largest `y_size` of a DMA instruction (docs/isa.md: u12), as codegen merges weight loads.
constexpr int64_t kMaxDmaRows = 4095;

// Counts DMA instructions of a run of weight blocks as codegen's emit_conv_loads merges them: a
// block continuing the previous load (same row shape, no left padding; blocks of one slice lie
// one after another in DRAM and on chip) extends it up to kMaxDmaRows rows.
struct LoadRuns {
  int64_t count = 0;
  bool open = false;
  int64_t x = 0, c = 0, pad_right = 0, pad_left = 0, y = 0;
  void add(int64_t n, int64_t rows, int64_t bx, int64_t bc, int64_t pr, int64_t pl) {
    if (n <= 0) return;
    if (open && pad_left == 0 && pl == 0 && x == bx && c == bc && pad_right == pr) {
      const int64_t room = (kMaxDmaRows - y) / rows;
      const int64_t t = std::min(n, room);
      y += t * rows;
      n -= t;
    }
    if (n <= 0) return;
    const int64_t per = std::max<int64_t>(1, kMaxDmaRows / rows);
    count += ceil_div(n, per);
    const int64_t last = n % per == 0 ? per : n % per;
    open = true;
    x = bx;
    c = bc;
    pad_right = pr;
    pad_left = pl;
    y = last * rows;
  }
};

}  // namespace

bool loads_table(const Op& op) {
  return op.lookup_table || op.pool_by_conv || op.constant_operand || op.kind == OpKind::Norm ||
         op.kind == OpKind::RowSoftmax;
}

bool constant_by_rows(const Op& op) {
  return op.constant_operand && op.constant_stride_y > 0 && op.constant_row_period == 0;
}

bool gathered_ids(const Net& net, const std::vector<int>& ops, int tensor) {
  for (int o : ops) {
    const Op& op = net.op(o);
    if (op.kind == OpKind::Embedding && !op.inputs.empty() && op.inputs[0] == tensor) return true;
  }
  return false;
}

int64_t gathered_bytes(const Op& op, const Box& box) {
  return op.kind == OpKind::Embedding ? box.h.size() * box.w.size() * op.gather_row_bytes : 0;
}

std::vector<Interval> constant_row_portions(const Op& op, Interval rows) {
  return unit_portions(rows, op.constant_operand ? op.constant_row_period : 0);
}

Interval constant_rows(const Net& net, const Op& op, Interval rows) {
  const int64_t all = op.weight_bytes / net.activation_bytes;
  if (!constant_by_rows(op)) return {0, all};
  if (rows.empty()) return {0, 0};
  const Shape3 out = net.tensor(op.output).shape;
  const int64_t end =
      (rows.e - 1) * op.constant_stride_y + (out.w - 1) * op.constant_stride_x + out.c;
  return {std::min(all, rows.b * op.constant_stride_y), std::min(all, end)};
}

Interval table_part(const Op& op, const Box& box) {
  return constant_by_rows(op) ? box.h : box.c;
}

int64_t table_tile_bytes(const Net& net, const Op& op, const Box& box) {
  return constant_rows(net, op, box.h).size() * net.activation_bytes;
}

std::vector<Interval> unit_portions(Interval c, int64_t unit) {
  std::vector<Interval> portions;
  if (c.empty()) return portions;
  if (unit <= 0) return {c};
  for (int64_t b = c.b; b < c.e; b = (b / unit + 1) * unit)
    portions.push_back({b, std::min(c.e, (b / unit + 1) * unit)});
  return portions;
}

std::vector<ColumnBlock> column_blocks(Interval c, int64_t unit, int64_t cols) {
  std::vector<ColumnBlock> blocks;
  for (const Interval part : unit_portions(c, unit))
    for (int64_t first = part.b; first < part.e; first += cols)
      blocks.push_back({first, std::min(cols, part.e - first)});
  return blocks;
}

int64_t column_block_count(Interval c, int64_t unit, int64_t cols) {
  if (c.empty()) return 0;
  if (unit <= 0 || c.b / unit == (c.e - 1) / unit) return ceil_div(c.size(), cols);
  // The first portion, the whole units between, the last portion.
  const int64_t first_end = (c.b / unit + 1) * unit, last_begin = (c.e - 1) / unit * unit;
  return ceil_div(first_end - c.b, cols) + (last_begin - first_end) / unit * ceil_div(unit, cols) +
         ceil_div(c.e - last_begin, cols);
}

bool columns_contiguous(Interval c, int64_t unit, int64_t cols) {
  if (c.empty() || unit <= 0 || c.b / unit == (c.e - 1) / unit) return true;
  // Every portion but the last whole blocks: the first, and the whole units between.
  const int64_t first_end = (c.b / unit + 1) * unit, last_begin = (c.e - 1) / unit * unit;
  return (first_end - c.b) % cols == 0 && (last_begin == first_end || unit % cols == 0);
}

bool starts_unit_slice(int64_t b, int64_t unit, int64_t pack) {
  return unit <= 0 || pack == 1 || b % unit == 0;
}

int64_t matrix_unit(const Net& net, const Machine& machine, const Op& op) {
  if (op.kind != OpKind::Conv || op.groups <= 1 || op.pool_by_conv) return 0;
  return matrix_shape(net, machine, op).unit();
}

MatrixShape matrix_shape(const Net& net, const Machine& machine, const Op& op) {
  MatrixShape m;
  const Shape3 in = net.tensor(op.inputs[0]).shape;
  m.co = net.tensor(op.output).shape.c;
  if (op.kind == OpKind::Gemm) {
    m.gemm = true;
    m.ci = in.elements();
  } else {
    m.ci = in.c / std::max<int64_t>(1, op.groups);
    m.kh = op.window.kernel_h;
    m.kw = op.window.kernel_w;
    m.depthwise = op.groups > 1 && op.groups == m.co && m.ci == 1;
    if (op.groups > 1 && !m.depthwise) {
      const int64_t out_pg = m.co / op.groups;
      m.groups = op.groups;
      m.pack = conv_groups_per_block(machine, op.groups, m.ci, out_pg);
      m.block_diagonal = m.pack > 1;
    }
    if (op.space_to_depth.channels > 0)
      m.ci = op.space_to_depth.factor * op.space_to_depth.factor * op.space_to_depth.channels;
  }
  // weight_bytes holds the weights as stored and the int32 bias, compact.
  const int64_t bias = op.weight_bytes - m.co * m.ci * m.kh * m.kw * machine.weight_bytes;
  m.bias_bytes_per_channel = bias > 0 ? bias / m.co : 0;
  return m;
}

int64_t weight_block_dmas(const MatrixShape& m, const Machine& machine, Interval channels,
                          int64_t b0, int64_t b1) {
  const int64_t rows = machine.matrix_rows, cols = machine.matrix_cols;
  LoadRuns runs;
  for (const ColumnBlock& block : column_blocks(channels, m.unit(), cols)) {
    const int64_t cn = block.count;
    if (m.depthwise) {
      runs.add(1, m.kh * m.kw, 1, cn, 0, 0);
    } else if (m.block_diagonal) {
      const int64_t out_pg = m.co / m.groups;
      for (int64_t j = 0; j * out_pg < cn; ++j)
        runs.add(1, m.kh * m.kw, m.ci, out_pg, rows - (j + 1) * m.ci, j * m.ci);
    } else {
      // Whole blocks of `rows` input channels, then perhaps one partial block.
      const int64_t full_end = std::min(b1, m.ci / rows);
      const int64_t full = std::max<int64_t>(0, full_end - b0);
      runs.add(full, m.kh * m.kw, rows, cn, 0, 0);
      for (int64_t ib = std::max(b0, full_end); ib < b1; ++ib) {
        const int64_t rn = std::min(rows, m.ci - ib * rows);
        runs.add(1, m.kh * m.kw, rn, cn, rows - rn, 0);
      }
    }
  }
  return runs.count;
}

}  // namespace tessel::sched
