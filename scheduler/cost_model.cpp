// The cost model's parts every mapping shares: engine cycles of an op's tile, DMA cycles of a
// box or a weight slice, on-chip weight sizes; DRAM views; evaluate_mapping, which dispatches a
// mapping to its model (tiling_model.cpp, sweep_model.cpp).
#include "scheduler/cost_model.hpp"

#include <algorithm>
#include <optional>

#include "isa/instruction.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/pixel_gather.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/weight_loads.hpp"

namespace tessel::sched {

int64_t conv_rows_per_step(const Machine& machine, int64_t tile_width) {
  return std::max<int64_t>(1, ceil_div(machine.matrix_rows, std::max<int64_t>(1, tile_width)));
}

namespace {
// Cycles of the conv instructions that reduce `in_channels` inputs: one instruction, or with
// reduction chunks of `chunk_channels` one per chunk (each its own weight load, fill and drain).
int64_t reduction_cycles(const Machine& machine, int64_t pixels, int64_t out_channels,
                         int64_t in_channels, int64_t kernel_h, int64_t kernel_w, bool depthwise,
                         int64_t chunk_channels) {
  if (chunk_channels <= 0 || chunk_channels >= in_channels)
    return conv_instruction_cycles(machine, pixels, out_channels, in_channels, kernel_h, kernel_w,
                                   depthwise);
  const int64_t full = in_channels / chunk_channels, rest = in_channels % chunk_channels;
  return full * conv_instruction_cycles(machine, pixels, out_channels, chunk_channels, kernel_h,
                                        kernel_w, depthwise) +
         (rest > 0 ? conv_instruction_cycles(machine, pixels, out_channels, rest, kernel_h,
                                             kernel_w, depthwise)
                   : 0);
}
}  // namespace

int64_t compute_cycles_of(const Net& net, const Machine& machine, const Op& op, const Box& out,
                          int64_t rows_per_step, int64_t reduction_channels, bool requant) {
  if (out.empty()) return 0;
  // A streamed op whose reduction does not fit the weights' scratchpad runs it in chunks
  // (reduction_chunk_blocks; a hidden-chunk reducer's tile is one chunk already).
  const int64_t chunk_channels =
      reduction_channels > 0 ? 0 : reduction_chunk_blocks(net, machine, op) * machine.matrix_rows;
  const int64_t pixels = out.h.size() * out.w.size();
  const int64_t channels = out.c.size();
  switch (op.kind) {
    case OpKind::Conv: {
      Shape3 in = net.tensor(op.inputs[0]).shape;
      if (reduction_channels > 0) in.c = reduction_channels;
      const int64_t out_channels = net.tensor(op.output).shape.c;
      const bool depthwise = is_depthwise(net, op);
      // A conv instruction per block of `pack` groups (block-diagonal; 1: per group).
      const int64_t pack = depthwise ? 1
                                     : conv_groups_per_block(machine, op.groups, in.c / op.groups,
                                                             out_channels / op.groups);
      // Per step of rows_per_step rows (the last may have fewer): a conv instruction per unit
      // portion (unit_portions; the whole box but for a grouped conv) and one requant pass,
      // or one per portion where the portions' columns are not consecutive channels
      // (column_blocks). The full steps all cost the same.
      const int64_t unit = depthwise || op.groups <= 1 ? 0 : out_channels / op.groups * pack;
      const bool one_requant = columns_contiguous(out.c, unit, machine.matrix_cols);
      auto step_cycles = [&](int64_t rows) {
        const int64_t step_pixels = rows * out.w.size();
        int64_t cycles =
            requant && one_requant ? vector_instruction_cycles(machine, step_pixels, channels) : 0;
        for (int64_t b = out.c.b; b < out.c.e;) {
          const int64_t e = unit > 0 ? std::min(out.c.e, (b / unit + 1) * unit) : out.c.e;
          cycles +=
              reduction_cycles(machine, step_pixels, e - b, in.c / op.groups * pack,
                               op.window.kernel_h, op.window.kernel_w, depthwise, chunk_channels);
          if (requant && !one_requant)
            cycles += vector_instruction_cycles(machine, step_pixels, e - b);
          b = e;
        }
        return cycles;
      };
      const int64_t full_steps = out.h.size() / rows_per_step;
      const int64_t rest = out.h.size() % rows_per_step;
      return (full_steps > 0 ? full_steps * step_cycles(rows_per_step) : 0) +
             (rest > 0 ? step_cycles(rest) : 0);
    }
    case OpKind::Gemm:
      return reduction_cycles(machine, 1, channels, net.tensor(op.inputs[0]).shape.elements(), 1, 1,
                              false, chunk_channels) +
             vector_instruction_cycles(machine, 1, channels);
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return pool_instruction_cycles(machine, pixels, op.window.kernel_h * op.window.kernel_w,
                                     channels);
    case OpKind::GlobalPool: {
      const Shape3 in = net.tensor(op.inputs[0]).shape;
      if (!op.pool_by_conv) return pool_instruction_cycles(machine, 1, in.h * in.w, channels);
      // One depthwise conv of one pixel per sub-window, then one requant (docs/codegen.md).
      const int64_t nh = pool_sub_windows(in.h), nw = pool_sub_windows(in.w);
      int64_t cycles = vector_instruction_cycles(machine, 1, channels);
      for (int64_t i = 0; i < nh; ++i)
        for (int64_t j = 0; j < nw; ++j)
          cycles += conv_instruction_cycles(machine, 1, channels, 1, part(in.h, nh, i).size(),
                                            part(in.w, nw, j).size(), true);
      return cycles;
    }
    case OpKind::Norm: {  // one norm over the tile's rows (docs/codegen.md "Transformers")
      const int64_t row = op.row_length > 0 ? op.row_length : channels;
      return norm_instruction_cycles(machine, pixels * (channels / row), row);
    }
    case OpKind::RowSoftmax:  // one softmax over every row of the tile's pixels
      return softmax_instruction_cycles(machine, pixels * (channels / op.row_length),
                                        op.row_length);
    case OpKind::MatMul: {  // per sequence of the tile's rows a matmul per head, one requant
      const HeadMatMul& mm = op.matmul;
      int64_t cycles = vector_instruction_cycles(machine, pixels, channels);
      for (const Interval rows : unit_portions(out.h, mm.batch > 1 ? mm.m_size : 0))
        cycles += mm.heads * matmul_instruction_cycles(machine, rows.size(), mm.n_size, mm.k_size,
                                                       mm.transpose_b);
      return cycles;
    }
    case OpKind::Embedding:  // no compute: the load phase's gathers fill its output
      return 0;
    case OpKind::Concat: {
      if (op.concat_rows || op.copy_only)  // offsets in rows: one copy of the whole box
        return vector_instruction_cycles(machine, pixels, channels);
      // One copy per input with channels in the tile (codegen's emit_concat), each a vector
      // instruction over that input's channels: DenseNet's 32-channel inputs take a lane pass
      // of their own, not a share of the output's.
      int64_t cycles = 0;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int64_t offset = op.concat_offsets[i];
        const int64_t first = std::max(out.c.b, offset);
        const int64_t end = std::min(out.c.e, offset + net.tensor(op.inputs[i]).shape.c);
        if (first < end) cycles += vector_instruction_cycles(machine, pixels, end - first);
      }
      return cycles;
    }
    default: {  // Eltwise, Add, Mul, Pad, Softmax, Reshape: one vector pass
      // A `lut` first reads its 256-entry table, V entries a cycle (docs/timing.md). A constant
      // broadcast over a batch's sequences: a pass per period of rows (constant_row_portions).
      int64_t cycles = op.lookup_table ? ceil_div(256, machine.vector_lanes) : 0;
      for (const Interval rows : constant_row_portions(op, out.h))
        cycles += vector_instruction_cycles(machine, rows.size() * out.w.size(), channels);
      return cycles;
    }
  }
}

namespace {

// DRAM bursts of one DMA of `box` of an NHWC tensor of `shape` (base burst-aligned): one
// request per maximal contiguous run (docs/timing.md).
int64_t box_bursts(const Shape3& shape, const Box& box, int64_t element_bytes,
                   int64_t burst_bytes) {
  if (box.empty()) return 0;
  const int64_t pixel = shape.c * element_bytes;
  if (box.c.size() == shape.c && box.w.size() == shape.w) {
    return bursts_covering(box.h.b * shape.w * pixel, box.h.size() * shape.w * pixel, burst_bytes);
  }
  const int64_t row_bytes = shape.w * pixel;
  if (box.c.size() == shape.c && row_bytes % burst_bytes == 0) {
    // Every row starts on a burst boundary: each row's run costs the same.
    return box.h.size() * bursts_covering(box.w.b * pixel, box.w.size() * pixel, burst_bytes);
  }
  if (box.c.size() != shape.c && pixel % burst_bytes == 0) {
    // Every pixel starts on a burst boundary: each pixel's channel run costs the same.
    return box.h.size() * box.w.size() *
           bursts_covering(box.c.b * element_bytes, box.c.size() * element_bytes, burst_bytes);
  }
  int64_t bursts = 0;
  for (int64_t r = box.h.b; r < box.h.e; ++r) {
    if (box.c.size() == shape.c) {
      bursts += bursts_covering((r * shape.w + box.w.b) * pixel, box.w.size() * pixel, burst_bytes);
      continue;
    }
    for (int64_t x = box.w.b; x < box.w.e; ++x) {
      bursts += bursts_covering((r * shape.w + x) * pixel + box.c.b * element_bytes,
                                box.c.size() * element_bytes, burst_bytes);
    }
  }
  return bursts;
}

}  // namespace

int64_t dma_cycles_for_box(const Net& net, const Machine& machine, int tensor, const Box& box) {
  const Tensor& t = net.tensor(tensor);
  const int64_t f = t.space_to_depth;
  if (f > 1 && !box.empty()) {
    // One DMA per row phase a (codegen): stored rows f y + a, from stored column f x0, whole
    // pixels (the box has every channel; docs/scheduler.md, "Space-to-depth stem"). As a box of
    // the stored tensor seen with f stored rows per row: columns a W + [f x0, f x1).
    const int64_t stored_w = f * t.shape.w;
    const Shape3 row_groups{t.shape.c / (f * f), t.shape.h, f * stored_w};
    int64_t cycles = 0;
    for (int64_t a = 0; a < f; ++a) {
      Box phase = box;
      phase.c = {0, row_groups.c};
      phase.w = {a * stored_w + f * box.w.b, a * stored_w + f * box.w.e};
      cycles += dma_instruction_cycles(
          machine, box_bursts(row_groups, phase, net.activation_bytes, machine.burst_bytes));
    }
    return cycles;
  }
  if (const Op* gather = gather_of(net, tensor); gather != nullptr && !box.empty()) {
    // Each of the decomposition's DMAs (codegen's): `rows` runs of `cols` consecutive pixels
    // of the gathered tensor, seen as one pixel per row.
    const Shape3 base = net.tensor(gather->inputs[0]).shape;
    const Shape3 pixels{base.c, base.h * base.w, 1};
    int64_t cycles = 0;
    for (const GatherDma& d : gather_dmas(gather->pixel_source, t.shape.w, box)) {
      int64_t bursts = 0;
      for (int64_t i = 0; i < d.rows; ++i) {
        const int64_t first = d.source + i * d.source_step;
        bursts += box_bursts(pixels, Box{box.c, {first, first + d.cols}, {0, 1}},
                             net.activation_bytes, machine.burst_bytes);
      }
      cycles += dma_instruction_cycles(machine, bursts);
    }
    return cycles;
  }
  // A Slice's output lies in its input's region (a DRAM view; codegen reads it there): its box
  // is the same box of the input moved by the Slice's offsets, runs of the slice's channels in
  // the input's pixels (ShuffleNet's halves: 24 of 48 channels per pixel).
  Box stored = box;
  int storage = tensor;
  while (net.op(net.tensor(storage).producer).kind == OpKind::Slice) {
    const Op& slice = net.op(net.tensor(storage).producer);
    stored.c = {stored.c.b + slice.channel_offset, stored.c.e + slice.channel_offset};
    stored.h = {stored.h.b + slice.row_offset, stored.h.e + slice.row_offset};
    storage = slice.inputs[0];
  }
  return dma_instruction_cycles(machine, box_bursts(net.tensor(storage).shape, stored,
                                                    net.activation_bytes, machine.burst_bytes));
}

int64_t dma_cycles_for_bytes(const Machine& machine, int64_t bytes) {
  return dma_instruction_cycles(machine, bursts_covering(0, bytes, machine.burst_bytes));
}

int64_t weight_bytes_for(const Net& net, const Op& op, Interval c) {
  if (op.weight_bytes == 0 || c.empty()) return 0;
  // The whole table (or pixel of ones) for any channels.
  if (loads_table(op)) return op.weight_bytes;
  const int64_t channels = net.tensor(op.output).shape.c;
  return op.weight_bytes / channels * c.size();
}

int64_t table_bytes_for(const Net& net, const Op& op, Interval c) {
  if (op.requant_table_bytes == 0 || c.empty()) return 0;
  return op.requant_table_bytes / net.tensor(op.output).shape.c * c.size();
}

int64_t load_weight_slice(const Net& net, const Machine& machine, const Op& op, Interval c,
                          Traffic& traffic, int64_t chunk_blocks) {
  const int64_t slice = weight_bytes_for(net, op, c);
  const int64_t table = table_bytes_for(net, op, c);
  traffic.weights_read += slice;
  traffic.requant_tables_read += table;
  return weight_dma_cycles(net, machine, op, c, slice + table, chunk_blocks);
}

// `bytes` in `dmas` DMA instructions of about equal size, each paying the latency.
static int64_t split_dma_cycles(const Machine& machine, int64_t bytes, int64_t dmas) {
  if (bytes <= 0) return 0;
  dmas = std::clamp<int64_t>(dmas, 1, bytes);
  const int64_t small = bytes / dmas, large = dmas - bytes % dmas;  // `large` DMAs of `small`
  return large * dma_cycles_for_bytes(machine, small) +
         (dmas - large) * dma_cycles_for_bytes(machine, small + 1);
}

int64_t weight_dma_cycles(const Net& net, const Machine& machine, const Op& op, Interval c,
                          int64_t bytes, int64_t chunk_blocks) {
  if ((op.kind != OpKind::Conv && op.kind != OpKind::Gemm) || c.empty())
    return dma_cycles_for_bytes(machine, bytes);
  // The weight blocks (as codegen merges them), the bias vector and the requant table are DMA
  // instructions of their own, each paying the DRAM latency: one latency per op under-predicted
  // the loads of nets of many small ops threefold (mobilenet_v3_large's SE blocks).
  const MatrixShape m = matrix_shape(net, machine, op);
  const int64_t table = table_bytes_for(net, op, c);
  const int64_t bias = m.bias_bytes_per_channel * c.size();
  const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, machine.matrix_rows);
  // Reduction chunks load one after another, each its own runs (emit_conv_loads per chunk).
  const int64_t step = chunk_blocks > 0 ? chunk_blocks : ic_blocks;
  int64_t dmas = 0;
  for (int64_t b0 = 0; b0 < ic_blocks; b0 += step)
    dmas += weight_block_dmas(m, machine, c, b0, std::min(ic_blocks, b0 + step));
  return split_dma_cycles(machine, bytes - table - bias, dmas) +
         dma_cycles_for_bytes(machine, bias) + dma_cycles_for_bytes(machine, table);
}

int64_t load_reduction_chunk(const Net& net, const Machine& machine, const Op& op,
                             int64_t chunk_inputs, int64_t k, Traffic& traffic) {
  const MatrixShape m = matrix_shape(net, machine, op);
  const int64_t out_channels = m.co;
  const int64_t weights = out_channels * chunk_inputs * machine.weight_bytes;
  const int64_t bias = k == 0 ? m.bias_bytes_per_channel * out_channels : 0;
  const int64_t table = k == 0 ? op.requant_table_bytes : 0;
  traffic.weights_read += weights + bias;
  traffic.requant_tables_read += table;
  // The chunk's blocks as codegen merges them; chunk 0 brings the bias and the table, each its
  // own DMA (emit_conv_loads).
  const int64_t chunk_blocks = ceil_div(chunk_inputs, machine.matrix_rows);
  const int64_t b0 = k * chunk_blocks;
  const int64_t b1 = std::min(ceil_div(m.ci, machine.matrix_rows), b0 + chunk_blocks);
  return split_dma_cycles(machine, weights,
                          weight_block_dmas(m, machine, Interval{0, out_channels}, b0, b1)) +
         dma_cycles_for_bytes(machine, bias) + dma_cycles_for_bytes(machine, table);
}

int64_t onchip_chunk_bytes(const Net& net, const Machine& machine, const Op& op,
                           int64_t chunk_inputs) {
  const int64_t cols = machine.matrix_cols, rows = machine.matrix_rows;
  const int64_t channels = net.tensor(op.output).shape.c;
  const int64_t oc_blocks = ceil_div(channels, cols);
  return ceil_div(oc_blocks * ceil_div(chunk_inputs, rows) * rows * cols * machine.weight_bytes +
                      oc_blocks * cols * 4 + channels * kRequantEntryBytes,
                  8) *
         8;
}

namespace {
// A vcfg instruction's cycles (docs/timing.md: one, as every compute-engine nop).
constexpr int64_t kVcfgCycles = 1;

// At most this many input blocks per reduction chunk (VGG-19's classifier.0 on npc19: 25,088
// inputs in 25 chunks of 64 blocks of 16).
constexpr int64_t kMaxChunkBlocks = 64;

// The most input blocks one conv instruction reduces (the ISA's ic_blocks field).
int64_t max_conv_ic_blocks() {
  static const int64_t max = [] {
    const isa::OpcodeSpec* conv = isa::find_opcode("conv");
    for (const isa::FieldSpec& field : conv->fields())
      if (field.name == "ic_blocks") return static_cast<int64_t>(field.max_value);
    return int64_t{0};
  }();
  return max;
}

// A Gemm's or dense, ungrouped Conv's reduction as packed blocks: input blocks, the bytes of one
// input block of one output block (every kernel tap), and a block's bias and table.
struct ReductionBlocks {
  int64_t ic_blocks = 0, block = 0, fixed = 0;
  int64_t whole() const { return ic_blocks * block + fixed; }
};
std::optional<ReductionBlocks> reduction_blocks(const Net& net, const Machine& machine,
                                                const Op& op) {
  if (op.kind != OpKind::Gemm && op.kind != OpKind::Conv) return std::nullopt;
  if (op.kind == OpKind::Conv && (op.groups != 1 || op.pool_by_conv || is_depthwise(net, op)))
    return std::nullopt;
  const int64_t cols = machine.matrix_cols, rows = machine.matrix_rows;
  const Shape3 in = net.tensor(op.inputs[0]).shape;
  const int64_t taps = op.kind == OpKind::Gemm ? 1 : op.window.kernel_h * op.window.kernel_w;
  return ReductionBlocks{ceil_div(op.kind == OpKind::Gemm ? in.elements() : in.c, rows),
                         taps * rows * cols * machine.weight_bytes,
                         cols * 4 + cols * kRequantEntryBytes};
}
}  // namespace

int64_t output_block_reduction_bytes(const Net& net, const Machine& machine, const Op& op) {
  const auto r = reduction_blocks(net, machine, op);
  return r ? r->whole() : 0;
}

int64_t output_block_chunk_bytes(const Net& net, const Machine& machine, const Op& op) {
  const auto r = reduction_blocks(net, machine, op);
  return r ? r->block + r->fixed : 0;
}

bool reduces_in_chunks(int64_t whole, int64_t chunk, int64_t capacity) {
  return whole > capacity && chunk <= capacity;
}

int64_t reduction_chunk_blocks(const Net& net, const Machine& machine, const Op& op) {
  const auto r = reduction_blocks(net, machine, op);
  const int64_t capacity =
      machine.scratchpads[static_cast<size_t>(machine.scratchpad(BufferKind::Weights))].size_bytes;
  if (!r) return 0;
  // A reduction longer than one conv instruction's ic_blocks field runs in chunks even where it
  // fits (AlexNet's 9,216-input classifier on edge-small's 8-row array: 1,152 blocks).
  const bool too_long_for_one_instruction = r->ic_blocks > max_conv_ic_blocks();
  const bool chunk_fits = r->block + r->fixed <= capacity;
  if (!reduces_in_chunks(r->whole(), r->block + r->fixed, capacity) &&
      !(too_long_for_one_instruction && chunk_fits))
    return 0;
  const int64_t fit = (capacity - r->fixed) / r->block;  // blocks one output block's room holds
  return std::min({r->ic_blocks, kMaxChunkBlocks, fit});
}

bool one_step_per_tile(const Net& net, const Machine& machine, const Op& op) {
  return op.kind == OpKind::MatMul || reduction_chunk_blocks(net, machine, op) > 0;
}

int64_t onchip_weight_bytes(const Net& net, const Machine& machine, const Op& op, Interval c,
                            bool streamed) {
  if (c.empty() || (op.weight_bytes == 0 && op.requant_table_bytes == 0)) return 0;
  const int64_t cols = machine.matrix_cols, rows = machine.matrix_rows;
  if (op.pool_by_conv) return pool_ones_bytes(net, machine, op, c);
  if (!has_matrix_work(op)) return weight_bytes_for(net, op, c);
  // Codegen packs a slice from its first channel (docs/codegen.md), a grouped conv's units
  // each from a block of its own (column_blocks).
  const int64_t oc_blocks = column_block_count(c, matrix_unit(net, machine, op), cols);
  const Shape3 in = net.tensor(op.inputs[0]).shape;
  int64_t blocks_elements = 0;
  // A slice holds its columns' whole reduction; a large op streams in more channel tiles. Only
  // when one output block's whole reduction exceeds the weights' scratchpad (VGG-19's
  // classifier.0 on npc19: 25088 x 16 16-bit weights; a transformer's token Linear on a small
  // buffer) does a streamed slice hold one reduction chunk of reduction_chunk_blocks input
  // blocks, accumulated in place (docs/codegen.md "Reduction chunks": serialised, or chunk by
  // chunk through two copies when double-buffered).
  const int64_t chunk = streamed ? reduction_chunk_blocks(net, machine, op) : 0;
  if (op.kind == OpKind::Gemm) {
    const int64_t ic_blocks = chunk > 0 ? chunk : ceil_div(in.elements(), rows);
    blocks_elements = oc_blocks * ic_blocks * rows * cols;
  } else if (is_depthwise(net, op)) {
    blocks_elements = oc_blocks * op.window.kernel_h * op.window.kernel_w * cols;
  } else {
    const int64_t ic_blocks = chunk > 0 ? chunk : ceil_div(in.c / op.groups, rows);
    blocks_elements = oc_blocks * ic_blocks * op.window.kernel_h * op.window.kernel_w * rows * cols;
  }
  // Packed blocks, the bias vector of whole blocks and the table, rounded up to 8 bytes.
  return ceil_div(blocks_elements * machine.weight_bytes + oc_blocks * cols * 4 +
                      c.size() * kRequantEntryBytes,
                  8) *
         8;
}

int64_t pool_ones_bytes(const Net& net, const Machine& machine, const Op& op, Interval c) {
  // The depthwise blocks of ones: one per block of matrix_cols channels, as many taps as the
  // largest sub-window (docs/codegen.md, "SE pools wider than the pool window").
  const Shape3 in = net.tensor(op.inputs[0]).shape;
  const int64_t taps =
      ceil_div(in.h, pool_sub_windows(in.h)) * ceil_div(in.w, pool_sub_windows(in.w));
  return ceil_div(ceil_div(c.size(), machine.matrix_cols) * taps * machine.matrix_cols *
                      machine.weight_bytes,
                  8) *
         8;
}

int64_t accumulator_bytes(const Machine& machine, int64_t rows_per_step, const Box& out,
                          int64_t channels) {
  return std::min(rows_per_step, out.h.size()) * out.w.size() *
         ceil_div(channels, machine.matrix_cols) * machine.matrix_cols * machine.accumulator_bytes;
}

int64_t widest_slice_bytes(const Net& net, const Machine& machine, const Op& op, int64_t parts,
                           bool streamed) {
  const int64_t channels = net.tensor(op.output).shape.c;
  return onchip_weight_bytes(net, machine, op, Interval{0, ceil_div(channels, parts)}, streamed);
}

void set_tile_shape(const GroupInfo& g, const TileGeometry& geo, GroupSchedule& gs) {
  const auto last_out = static_cast<size_t>(g.out_local.back());
  Box first = geo.requested[last_out];
  for (int64_t t = 1; first.empty() && t < geo.tiles; ++t)
    first = geo.requested[static_cast<size_t>(t) * g.tensors.size() + last_out];
  gs.tile_rows = first.h.size();
  gs.tile_cols = first.w.size();
  gs.tile_channels = first.c.size();
}

const TileGeometry::ActivationCosts& activation_costs(const Net& net, const Machine& machine,
                                                      const GroupInfo& g, const TileGeometry& geo,
                                                      const std::vector<char>& kept, bool cache) {
  TileGeometry::ActivationCosts& act = geo.costs[cache ? 1 : 0];
  if (act.done) return act;
  const size_t locals = g.tensors.size();
  act.load.assign(static_cast<size_t>(geo.tiles), 0);
  act.compute.assign(static_cast<size_t>(geo.tiles), 0);
  act.store.assign(static_cast<size_t>(geo.tiles), 0);
  act.store_bytes.assign(static_cast<size_t>(geo.tiles), 0);
  std::vector<Box> previous(cache ? locals : 0);  // cache mode: the previous row tile's boxes
  for (int64_t t = 0; t < geo.tiles; ++t) {
    const Box* need = &geo.need[static_cast<size_t>(t) * locals];
    const Box* req = &geo.requested[static_cast<size_t>(t) * locals];
    auto fresh = [&](size_t l) {
      Box box = need[l];
      if (cache && !previous[l].empty() && !box.empty()) {
        box.h.b = std::max(box.h.b, previous[l].h.e);
        if (box.h.e < box.h.b) box.h.e = box.h.b;
      }
      return box;
    };
    for (size_t l = 0; l < locals; ++l) {
      if (g.is_input[l] && !(kept[l] && t > 0)) {
        const Box box = fresh(l);
        act.read_bytes += box.elements() * net.activation_bytes;
        act.load[static_cast<size_t>(t)] += dma_cycles_for_box(net, machine, g.tensors[l], box);
      }
      if (g.stored[l]) {
        act.written_bytes += req[l].elements() * net.activation_bytes;
        act.store_bytes[static_cast<size_t>(t)] += req[l].elements() * net.activation_bytes;
        act.store[static_cast<size_t>(t)] += dma_cycles_for_box(net, machine, g.tensors[l], req[l]);
      }
    }
    for (size_t pos = 0; pos < g.ops.size(); ++pos) {
      if (!geo.once.runs(pos, t)) continue;  // an op run once (RunsOnce): the first tile only
      const Op& op = net.op(g.ops[pos]);
      const size_t out = static_cast<size_t>(g.out_local[pos]);
      // The MLP's hidden chunks: the reducer's conv over its tile's chunk, requantized last.
      const bool reducer = static_cast<int>(pos) == geo.hidden_reducer;
      act.compute[static_cast<size_t>(t)] +=
          compute_cycles_of(net, machine, op, fresh(out), geo.rows_per_step[pos],
                            reducer ? net.tensor(op.inputs[0]).shape.c / geo.hidden_parts : 0,
                            !reducer || t + 1 == geo.tiles);
    }
    if (cache) {
      // codegen's halo_copies (sched::halo_step's rule): the rows a tensor's window shares with
      // the previous tile's move up its buffer, one vector copy a row, after one vcfg.
      int64_t copies = 0;
      for (size_t l = 0; l < locals; ++l) {
        const Box& prev = previous[l];
        const Box& window = need[l];
        if (prev.empty() || window.empty()) continue;
        if (window.h.b <= prev.h.b || window.h.b >= prev.h.e) continue;
        copies += (prev.h.e - window.h.b) *
                  vector_instruction_cycles(machine, window.w.size(), window.c.size());
      }
      if (copies > 0) act.compute[static_cast<size_t>(t)] += copies + kVcfgCycles;
      for (size_t l = 0; l < locals; ++l) {
        if (!need[l].empty()) previous[l] = need[l];
      }
    }
  }
  act.done = true;
  return act;
}

GroupSchedule schedule_of_group(const Net& net, const GroupInfo& g, const PlanOptions& options) {
  GroupSchedule gs;
  gs.ops = g.ops;
  gs.memory_reuse = options.memory_reuse;
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if (g.is_input[l]) gs.inputs.push_back(g.tensors[l]);
    if (g.stored[l]) gs.outputs.push_back(g.tensors[l]);
  }
  for (int op : g.ops) gs.macs += net.op(op).macs;
  return gs;
}

GroupSchedule view_group(const Net& net, const std::vector<int>& ops) {
  GroupSchedule gs;
  gs.ops = ops;
  gs.dram_view = true;
  const Op& op = net.op(ops[0]);
  gs.inputs = op.inputs;
  gs.outputs = {op.output};
  return gs;
}

bool is_view_group(const Net& net, const std::vector<int>& ops, const PlanOptions& options) {
  if (ops.size() != 1 || !is_view(net.op(ops[0]), options)) return false;
  const Op& op = net.op(ops[0]);
  if (op.kind != OpKind::Concat || op.concat_rows) return true;  // rows: inputs placed in it
  // Producers store into a view's channel slices, so each input must be stored by a group and
  // nowhere else: not a network input (never stored), not a network output (its own region),
  // not an input of a second Concat or twice of this one (one slice only). Codegen refuses these
  // views (docs/codegen.md "Concat"); the Concat is then an on-chip copy like any group (found by
  // the bytes bound).
  for (int x : op.inputs) {
    const Tensor& t = net.tensor(x);
    if (net.op(t.producer).kind == OpKind::Input || t.network_output) return false;
    // A view's output (a Slice, a Reshape) is no group's store: the Concat copies it.
    if (is_view(net.op(t.producer), options)) return false;
    if (std::count(op.inputs.begin(), op.inputs.end(), x) > 1) return false;  // two slices
    for (int c : t.consumers)
      if (c != ops[0] && net.op(c).kind == OpKind::Concat) return false;
  }
  return true;
}

Result<GroupSchedule> evaluate_mapping(const Net& net, const Machine& machine,
                                       const std::vector<int>& ops, const Mapping& mapping,
                                       const PlanOptions& options) {
  if (auto s = check_group(net, ops, options); !s.ok()) return s.failure();
  if (is_view_group(net, ops, options)) return view_group(net, ops);
  const GroupInfo g = describe(net, ops);
  if (mapping.weight_sweep) return evaluate_sweep(net, machine, g, mapping, options);
  TileGeometry geo = tile_group(net, g, mapping);
  measure_geometry(net, machine, g, geo);
  return evaluate_with(net, machine, g, geo, mapping, options);
}

}  // namespace tessel::sched
