// Counting a group's actions from its tiles (scheduler/energy_counts.hpp). Each op of each tile
// is counted as the instructions codegen emits for it (docs/codegen.md) and the simulator's
// per-instruction counters (sim/core/costs.cpp) would count them.
#include "scheduler/energy_counts.hpp"

#include <algorithm>
#include <map>

#include "scheduler/group_info.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/shape.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/int_ops.hpp"

namespace tessel::sched {
namespace {

constexpr int64_t kLutEntries = 256;  // the lut instruction's table (docs/isa.md)

bool depthwise(const Net& net, const Op& op) {
  return op.kind == OpKind::Conv && op.groups > 1 &&
         op.groups == net.tensor(op.inputs[0]).shape.c &&
         op.groups == net.tensor(op.output).shape.c;
}

class Counter {
 public:
  Counter(const Net& net, const Machine& machine, const GroupSchedule& g, size_t scratchpads)
      : net_(net), m_(machine), g_(g) {
    out_.sram_read_bytes.assign(scratchpads, 0);
    out_.sram_write_bytes.assign(scratchpads, 0);
  }

  ActionCounts run() {
    out_.dram_bytes = static_cast<uint64_t>(g_.traffic.total());
    if (g_.dram_view) return out_;
    for (int o : g_.ops)
      if (net_.op(o).kind == OpKind::Softmax) return out_;  // the host's (docs/codegen.md)
    if (g_.weight_sweep) {
      sweep();
    } else {
      tiles();
    }
    return out_;
  }

 private:
  // ---- where things live ----
  int tensor_sp(int tensor) const {
    for (const auto& b : g_.buffers)
      if (b.tensor == tensor) return b.scratchpad;
    return m_.scratchpad(BufferKind::Activations);
  }
  bool buffered(int tensor) const {
    for (const auto& b : g_.buffers)
      if (b.tensor == tensor) return true;
    return false;
  }
  int op_sp(int op, BufferRole role, BufferKind kind) const {
    for (const auto& b : g_.buffers)
      if (b.op == op && b.role == role) return b.scratchpad;
    return m_.scratchpad(kind);
  }
  void read(int sp, int64_t bytes) {
    if (sp >= 0 && static_cast<size_t>(sp) < out_.sram_read_bytes.size())
      out_.sram_read_bytes[static_cast<size_t>(sp)] += static_cast<uint64_t>(bytes);
  }
  void write(int sp, int64_t bytes) {
    if (sp >= 0 && static_cast<size_t>(sp) < out_.sram_write_bytes.size())
      out_.sram_write_bytes[static_cast<size_t>(sp)] += static_cast<uint64_t>(bytes);
  }

  // ---- one instruction each ----
  // A one-operand add (copy, ReLU, Clip, concat slice): a and b both read the source.
  void unary(int src_sp, int dst_sp, int64_t elements) {
    const int64_t bytes = elements * net_.activation_bytes;
    read(src_sp, 2 * bytes);
    write(dst_sp, bytes);
    out_.add_elements += static_cast<uint64_t>(elements);
  }

  // A two-operand vector op (add, mul) over `elements`: a and b read per element (a constant b
  // from the op's weights buffer, loaded whole like a table; b broadcast by strides 0), y written.
  void binary(const Op& op, int op_index, int64_t elements) {
    const int64_t bytes = elements * net_.activation_bytes;
    read(tensor_sp(op.inputs[0]), bytes);
    if (op.constant_operand)
      read(op_sp(op_index, BufferRole::Weights, BufferKind::Weights), bytes);
    else
      read(tensor_sp(op.inputs[1]), bytes);
    write(tensor_sp(op.output), bytes);
  }

  // Input channels of a matrix op as the conv instruction sees them (a Gemm: its whole input).
  int64_t in_channels(const Op& op) const {
    const Shape3 in = net_.tensor(op.inputs[0]).shape;
    return op.kind == OpKind::Gemm ? in.elements() : in.c / op.groups;
  }

  // A conv/Gemm's weight slice of `channels` output channels loaded into SRAM: its blocks with
  // the padded input channels as DMA padding, its bias (when it has one) and its requant table.
  void weight_load(const Op& op, int op_index, int64_t channels) {
    const int sp = op_sp(op_index, BufferRole::Weights, BufferKind::Weights);
    const int64_t kernel = op.kind == OpKind::Gemm ? 1 : op.window.kernel_h * op.window.kernel_w;
    const int64_t wb = m_.weight_bytes;
    int64_t bytes = 0;
    if (depthwise(net_, op)) {
      bytes = kernel * channels * wb;
    } else {
      bytes = kernel * channels * ceil_div(in_channels(op), m_.matrix_rows) * m_.matrix_rows * wb;
    }
    write(sp, bytes);
    const int64_t all = net_.tensor(op.output).shape.c;
    // Bias: weight_bytes beyond the weights (4 B per output channel when present).
    const bool bias = op.weight_bytes > kernel * in_channels(op) * all * wb;
    if (bias) write(sp, channels * 4);
    write(sp, channels * kRequantEntryBytes);
  }

  // The MLP's hidden chunks (codegen's emit_conv of the reducer B): tile k of `parts` loads
  // chunk k of B's weights (all output channels; the bias and table with chunk 0) and runs one
  // conv per step over the chunk's input blocks (init bias at k = 0, else acc), requantizing
  // every step's sums at the last chunk only.
  void hidden_chunk(const Op& op, int op_index, const Box& out, int64_t rows_per_step, int64_t k,
                    int64_t parts) {
    const int64_t R = m_.matrix_rows, C = m_.matrix_cols, wb = m_.weight_bytes;
    const int64_t all = net_.tensor(op.output).shape.c;
    const int64_t chunk_blocks = in_channels(op) / parts / R;
    const int64_t oc_blocks = ceil_div(all, C);
    const bool bias = op.weight_bytes > in_channels(op) * all * wb;
    const int w_sp = op_sp(op_index, BufferRole::Weights, BufferKind::Weights);
    const int acc_sp = op_sp(op_index, BufferRole::Accumulator, BufferKind::Accumulators);
    write(w_sp, all * chunk_blocks * R * wb);
    if (k == 0) {
      if (bias) write(w_sp, all * 4);
      write(w_sp, all * kRequantEntryBytes);
    }
    const int64_t passes = oc_blocks * chunk_blocks;
    const int64_t step = std::max<int64_t>(1, rows_per_step);
    for (int64_t r = 0; r < out.h.size(); r += step) {
      const int64_t pixels = std::min(step, out.h.size() - r) * out.w.size();
      out_.macs += static_cast<uint64_t>(pixels * passes * R * C);
      read(tensor_sp(op.inputs[0]), pixels * passes * R * net_.activation_bytes);
      read(w_sp, passes * R * C * wb);
      if (k == 0 && bias) read(w_sp, oc_blocks * C * 4);
      if (k > 0) read(acc_sp, pixels * oc_blocks * C * 4);
      write(acc_sp, pixels * oc_blocks * C * 4);
      if (k + 1 < parts) continue;
      const int64_t n = pixels * all;
      read(acc_sp, n * 4);
      read(w_sp, all * kRequantEntryBytes);
      write(tensor_sp(op.output), n * net_.activation_bytes);
      out_.requant_elements += static_cast<uint64_t>(n);
    }
  }

  // Input blocks per conv instruction of `op` (codegen's chunk_blocks_of, docs/codegen.md
  // "Reduction chunks"): the schedule's reduction chunk; for a schedule that does not say (read
  // from a JSON without mappings, when only a Gemm had chunks), the whole reduction, unless a
  // streamed Gemm's widest slice (its blocks, whole-block bias vector and table) exceeds its
  // weights buffer, which then holds as many input blocks of every output block as fit.
  int64_t chunk_blocks(const Op& op, int op_index, int64_t ic_blocks) const {
    if (g_.weights_resident) return ic_blocks;
    const auto at = std::find(g_.ops.begin(), g_.ops.end(), op_index);
    const int64_t said =
        g_.chunk_blocks_at(static_cast<size_t>(at - g_.ops.begin()), ic_blocks, m_.matrix_rows);
    if (said >= 0) return said;
    if (op.kind != OpKind::Gemm) return ic_blocks;
    const BufferAlloc* wbuf = nullptr;
    for (const auto& b : g_.buffers)
      if (wbuf == nullptr && b.op == op_index && b.role == BufferRole::Weights && b.copy == 0)
        wbuf = &b;
    if (wbuf == nullptr) return ic_blocks;
    int64_t parts = g_.channel_tiles;
    if (g_.weight_sweep) {
      const auto pos =
          static_cast<size_t>(std::find(g_.ops.begin(), g_.ops.end(), op_index) - g_.ops.begin());
      if (pos < g_.op_slices.size()) parts = g_.op_slices[pos];
    }
    // The slices of channels * k / parts differ by at most one channel: the widest has
    // ceil(channels / parts).
    const int64_t widest = ceil_div(net_.tensor(op.output).shape.c, std::max<int64_t>(1, parts));
    const int64_t oc_blocks = ceil_div(widest, m_.matrix_cols);
    const int64_t block_row = oc_blocks * m_.matrix_rows * m_.matrix_cols * m_.weight_bytes;
    const int64_t fixed = oc_blocks * m_.matrix_cols * 4 + widest * kRequantEntryBytes;
    if (ceil_div(ic_blocks * block_row + fixed, 8) * 8 <= wbuf->size_bytes) return ic_blocks;
    const int64_t fit = (wbuf->size_bytes - fixed) / block_row;
    return fit >= 1 ? std::min(fit, ic_blocks) : ic_blocks;
  }

  // A conv/Gemm producing `out` (output box) in steps of `rows_per_step` rows: per step one
  // conv instruction per reduction chunk and one requant.
  void matrix(const Op& op, int op_index, const Box& out, int64_t rows_per_step) {
    if (out.empty()) return;
    const bool dw = depthwise(net_, op);
    const bool gemm = op.kind == OpKind::Gemm;
    const int64_t R = m_.matrix_rows, C = m_.matrix_cols;
    const int64_t kernel = gemm ? 1 : op.window.kernel_h * op.window.kernel_w;
    const int64_t channels = out.c.size();
    // A grouped conv's units each from a block of their own (column_blocks).
    const int64_t oc_blocks = column_block_count(out.c, matrix_unit(net_, m_, op), C);
    const int64_t ic_blocks = dw ? 1 : ceil_div(in_channels(op), R);
    const int64_t passes = dw ? oc_blocks * kernel : oc_blocks * ic_blocks * kernel;
    const int in_sp = tensor_sp(op.inputs[0]);
    const int w_sp = op_sp(op_index, BufferRole::Weights, BufferKind::Weights);
    const int acc_sp = op_sp(op_index, BufferRole::Accumulator, BufferKind::Accumulators);
    const int dst_sp = tensor_sp(op.output);
    const int64_t all = net_.tensor(op.output).shape.c;
    const bool bias = op.weight_bytes > kernel * in_channels(op) * all * m_.weight_bytes;
    // Each chunk's conv writes the accumulators; every chunk after the first (init=acc) reads
    // them first.
    const int64_t chunks = dw ? 1 : ceil_div(ic_blocks, chunk_blocks(op, op_index, ic_blocks));
    const int64_t h = gemm ? 1 : out.h.size();
    const int64_t w = gemm ? 1 : out.w.size();
    const int64_t step = gemm ? 1 : std::max<int64_t>(1, rows_per_step);
    for (int64_t r = 0; r < h; r += step) {
      const int64_t pixels = std::min(step, h - r) * w;
      out_.macs += static_cast<uint64_t>(pixels * passes * (dw ? C : R * C));
      read(in_sp, pixels * passes * (dw ? C : R) * net_.activation_bytes);
      read(w_sp, passes * (dw ? C : R * C) * m_.weight_bytes);
      if (bias) read(w_sp, oc_blocks * C * 4);
      write(acc_sp, chunks * pixels * oc_blocks * C * 4);
      read(acc_sp, (chunks - 1) * pixels * oc_blocks * C * 4);
      // requant: the accumulators, the per-channel table, the outputs
      const int64_t n = pixels * channels;
      read(acc_sp, n * 4);
      read(w_sp, channels * kRequantEntryBytes);
      write(dst_sp, n * net_.activation_bytes);
      out_.requant_elements += static_cast<uint64_t>(n);
    }
  }

  void pool(const Op& op, const Box& out) {
    if (out.empty()) return;
    const int64_t window = op.kind == OpKind::GlobalPool ? net_.tensor(op.inputs[0]).shape.h *
                                                               net_.tensor(op.inputs[0]).shape.w
                                                         : op.window.kernel_h * op.window.kernel_w;
    const int64_t outputs = out.elements();
    read(tensor_sp(op.inputs[0]), outputs * window * net_.activation_bytes);
    write(tensor_sp(op.output), outputs * net_.activation_bytes);
    out_.pool_window_elements += static_cast<uint64_t>(outputs * window);
  }

  // A global pool wider than the pool window (Op::pool_by_conv; codegen's emit_pool_by_conv):
  // per sub-window one depthwise conv of all-one weights over the channels' blocks (init zero,
  // then acc), then one requant of the int32 sums (per tensor: no table read).
  void pool_by_conv(const Op& op, int op_index, const Box& out) {
    const Shape3 in = net_.tensor(op.inputs[0]).shape;
    const int64_t C = m_.matrix_cols;
    const int64_t oc_blocks = ceil_div(out.c.size(), C);
    const int64_t windows = pool_sub_windows(in.h) * pool_sub_windows(in.w);
    // The sub-windows tile the map: their taps sum to H x W.
    const int64_t taps = in.h * in.w;
    const int acc_sp = op_sp(op_index, BufferRole::Accumulator, BufferKind::Accumulators);
    out_.macs += static_cast<uint64_t>(oc_blocks * taps * C);
    read(tensor_sp(op.inputs[0]), oc_blocks * taps * C * net_.activation_bytes);
    read(op_sp(op_index, BufferRole::Weights, BufferKind::Weights),
         oc_blocks * taps * C * m_.weight_bytes);
    write(acc_sp, windows * oc_blocks * C * 4);
    read(acc_sp, (windows - 1) * oc_blocks * C * 4);
    const int64_t n = out.c.size();
    read(acc_sp, n * 4);
    write(tensor_sp(op.output), n * net_.activation_bytes);
    out_.requant_elements += static_cast<uint64_t>(n);
  }

  // A norm (LayerNorm, RMSNorm) over the box's pixels, each pixel's channels one row (codegen's
  // emit_norm; the box has whole rows): per row its parameters (E, then G, r, B of every
  // channel: the op's `weight_bytes`), two reads of the row (statistics, normalise), one write.
  void norm(const Op& op, int op_index, const Box& out) {
    const int64_t row = op.row_length > 0 ? op.row_length : out.c.size();
    const int64_t rows = out.h.size() * out.w.size() * (out.c.size() / row);
    const int64_t n = out.elements();
    read(op_sp(op_index, BufferRole::Weights, BufferKind::Weights), rows * op.weight_bytes);
    read(tensor_sp(op.inputs[0]), 2 * n * net_.activation_bytes);
    write(tensor_sp(op.output), n * net_.activation_bytes);
    out_.norm_rows += static_cast<uint64_t>(rows);
    out_.norm_elements += static_cast<uint64_t>(n);
  }

  // One softmax over every row of `row_length` channels of the box's pixels (codegen's
  // emit_row_softmax): its exp tables once (the op's `weight_bytes`, 1 KiB), three reads of
  // every row (max, sum of exp, normalise), one write.
  void row_softmax(const Op& op, int op_index, const Box& out) {
    const int64_t n = out.elements();
    read(op_sp(op_index, BufferRole::Weights, BufferKind::Weights), op.weight_bytes);
    read(tensor_sp(op.inputs[0]), 3 * n * net_.activation_bytes);
    write(tensor_sp(op.output), n * net_.activation_bytes);
    out_.softmax_rows += static_cast<uint64_t>(
        out.h.size() * out.w.size() * (out.c.size() / std::max<int64_t>(1, op.row_length)));
    out_.softmax_elements += static_cast<uint64_t>(n);
  }

  // An activation MatMul producing the box's rows (codegen's emit_matmul): per head one matmul
  // of m = rows (init zero: the accumulators written, not read) with the MAC slots of the array
  // (m x column blocks x reduction blocks x R x C), a's k elements per row once per column
  // block, b's k x n once; then one per-tensor requant of every head's accumulators.
  void matmul(const Op& op, int op_index, const Box& out) {
    const HeadMatMul& mm = op.matmul;
    const int64_t R = m_.matrix_rows, C = m_.matrix_cols;
    const int64_t m = out.h.size() * out.w.size();
    const int64_t n_blocks = ceil_div(mm.n_size, C);
    const int64_t e = net_.activation_bytes;
    const int acc_sp = op_sp(op_index, BufferRole::Accumulator, BufferKind::Accumulators);
    // Per sequence of a batch (HeadMatMul::batch) its rows of the box, b's k x n once each.
    const int64_t sequences =
        static_cast<int64_t>(unit_portions(out.h, mm.batch > 1 ? mm.m_size : 0).size());
    for (int64_t h = 0; h < mm.heads; ++h) {
      out_.macs += static_cast<uint64_t>(m * n_blocks * ceil_div(mm.k_size, R) * R * C);
      read(tensor_sp(op.inputs[0]), m * n_blocks * mm.k_size * e);
      read(tensor_sp(op.inputs[1]), sequences * mm.k_size * mm.n_size * e);
      write(acc_sp, m * mm.n_size * 4);
    }
    const int64_t n = m * mm.heads * mm.n_size;
    read(acc_sp, n * 4);
    write(tensor_sp(op.output), n * e);
    out_.requant_elements += static_cast<uint64_t>(n);
  }

  // The table of a lut op, the parameters of a norm, the exp tables of a softmax or the ones
  // of a pool_by_conv loaded into its weights buffer (codegen's emit_table_load): 256 entries
  // of the activation type; the norm's, softmax's and a constant Mul's or Add's `weight_bytes`; the
  // ones' blocks of `taps` pixels, one per block of matrix_cols channels (the load's padding of
  // value 1).
  void table_load(const Op& op, int op_index, const Box& box) {
    const Interval channels = box.c;
    const int sp = op_sp(op_index, BufferRole::Weights, BufferKind::Weights);
    if (constant_by_rows(op) && !g_.weights_resident) {  // the tile's rows of the constant
      write(sp, table_tile_bytes(net_, op, box));
      return;
    }
    if (op.kind == OpKind::Norm || op.kind == OpKind::RowSoftmax || op.constant_operand) {
      write(sp, op.weight_bytes);
      return;
    }
    if (!op.pool_by_conv) {
      write(sp, kLutEntries * net_.activation_bytes);
      return;
    }
    const Shape3 in = net_.tensor(op.inputs[0]).shape;
    const int64_t taps =
        ceil_div(in.h, pool_sub_windows(in.h)) * ceil_div(in.w, pool_sub_windows(in.w));
    write(sp, ceil_div(channels.size(), m_.matrix_cols) * taps * m_.matrix_cols *
                  net_.activation_bytes);
  }

  // As codegen's emit_table_loads: resident, every table once before the first tile (all
  // channels); streamed, every tile whose window has channels of the op, unless the group keeps
  // slices and the channels are those loaded last.
  template <typename Idle>
  void table_loads(int64_t tile, const std::vector<Box>& window, const Idle& idle) {
    for (int o : g_.ops) {
      const Op& op = net_.op(o);
      if (!loads_table(op) || idle(o, tile)) continue;
      const Box& box = window[static_cast<size_t>(op.output)];
      if (g_.weights_resident) {
        if (tile == 0) table_load(op, o, full_box(net_.tensor(op.output).shape));
        continue;
      }
      const Interval part = table_part(op, box);
      auto last = table_channels_.find(o);
      const bool kept =
          g_.keeps_weight_slices() && last != table_channels_.end() && last->second == part;
      table_channels_[o] = part;
      if (!kept && !box.c.empty() && !part.empty()) table_load(op, o, box);
    }
  }

  void compute(int op_index, const Box& out, int64_t rows_per_step) {
    const Op& op = net_.op(op_index);
    if (out.empty()) return;
    switch (op.kind) {
      case OpKind::Conv:
      case OpKind::Gemm:
        matrix(op, op_index, out, rows_per_step);
        return;
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalPool:
        if (op.pool_by_conv) {
          pool_by_conv(op, op_index, out);
        } else {
          pool(op, out);
        }
        return;
      case OpKind::Add:
        binary(op, op_index, out.elements());
        out_.add_elements += static_cast<uint64_t>(out.elements());
        return;
      case OpKind::Concat:
        // One copy per input slice in the box: the box's elements in all.
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          const int64_t first = std::max(out.c.b, op.concat_offsets[i]);
          const int64_t end =
              std::min(out.c.e, op.concat_offsets[i] + net_.tensor(op.inputs[i]).shape.c);
          if (first < end)
            unary(tensor_sp(op.inputs[i]), tensor_sp(op.output),
                  (end - first) * out.h.size() * out.w.size());
        }
        return;
      case OpKind::Reshape:
      case OpKind::Slice:
      case OpKind::Softmax:
      case OpKind::Input:
        return;
      case OpKind::Embedding:  // the gather writes the tile's rows (its ids stay in DRAM)
        write(tensor_sp(op.output), out.elements() * net_.activation_bytes);
        return;
      case OpKind::Norm:
        norm(op, op_index, out);
        return;
      case OpKind::RowSoftmax:
        row_softmax(op, op_index, out);
        return;
      case OpKind::MatMul:
        matmul(op, op_index, out);
        return;
      case OpKind::Mul:
        binary(op, op_index, out.elements());
        out_.mul_elements += static_cast<uint64_t>(out.elements());
        return;
      default:
        if (op.lookup_table) {  // ISA lut: the table, then the source; result bytes looked up
          const int64_t bytes = out.elements() * net_.activation_bytes;
          read(op_sp(op_index, BufferRole::Weights, BufferKind::Weights), op.weight_bytes);
          read(tensor_sp(op.inputs[0]), out.elements());
          write(tensor_sp(op.output), bytes);
          out_.lut_bytes += static_cast<uint64_t>(bytes);
          return;
        }
        // Eltwise (ReLU, Clip), Pad: one one-operand add
        unary(tensor_sp(op.inputs[0]), tensor_sp(op.output), out.elements());
        return;
    }
  }

  static bool is_matrix(const Op& op) { return op.kind == OpKind::Conv || op.kind == OpKind::Gemm; }

  // Tiled groups (every mapping but a weight sweep).
  void tiles() {
    const int64_t T = g_.tiles();
    const bool cache = g_.halo == HaloMode::Cache;
    std::vector<std::vector<Box>> windows, stored;
    windows.reserve(static_cast<size_t>(T));
    // The MLP's hidden chunks: tile t is chunk t (hidden_chunk_boxes), B runs hidden_chunk.
    const bool hidden = chunks_hidden(net_, g_.ops, g_.row_tiles, g_.col_tiles, g_.channel_tiles);
    const HiddenChunks hc = hidden ? hidden_chunks(net_, g_.ops) : HiddenChunks{};
    const int reducer = hidden ? g_.ops[static_cast<size_t>(hc.reducer)] : -1;
    // An op run once (RunsOnce: a hidden-chunk prefix, K and V) loads and runs in the first
    // tile only.
    const RunsOnce once = runs_once(net_, g_.ops, g_.row_tiles, g_.col_tiles, g_.channel_tiles);
    const auto idle = [&](int o, int64_t t) {
      const auto at = std::find(g_.ops.begin(), g_.ops.end(), o) - g_.ops.begin();
      return !once.runs(static_cast<size_t>(at), t);
    };
    for (int64_t t = 0; t < T; ++t) {  // the tiling rule, or the hidden chunks' boxes
      std::vector<Box> req, need;
      tile_boxes(net_, g_, t, req, need);
      windows.push_back(std::move(need));
      stored.push_back(std::move(req));
    }
    // Kept inputs: the same box in every tile, loaded by the first.
    const std::vector<char> kept = tile_kept_inputs(net_, g_);
    std::vector<Box> previous(net_.tensors.size());
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<Box>& window = windows[static_cast<size_t>(t)];
      std::vector<Box> need = window;
      if (cache)
        halo_step(window, previous, need, [&](size_t x, const Box& prev) {
          if (!buffered(static_cast<int>(x))) return;
          // The halo rows copied to the top of the buffer.
          const int sp = tensor_sp(static_cast<int>(x));
          unary(sp, sp, (prev.h.e - window[x].h.b) * window[x].w.size() * window[x].c.size());
        });
      // Weights: resident, every slice before the first tile; streamed, the tile's slice (once
      // per channel part when kept).
      const bool new_part = g_.row_part(t) == 0 && g_.col_part(t) == 0;
      const bool load_slice = g_.weights_resident ? t == 0 : !g_.keeps_weight_slices() || new_part;
      for (int o : g_.ops) {
        const Op& op = net_.op(o);
        if (!is_matrix(op) || !load_slice || o == reducer || idle(o, t)) continue;
        const int64_t all = net_.tensor(op.output).shape.c;
        weight_load(op, o,
                    g_.weights_resident ? all : window[static_cast<size_t>(op.output)].c.size());
      }
      table_loads(t, window, idle);
      for (int x : g_.inputs) {
        if (kept[static_cast<size_t>(x)] && t > 0) continue;
        if (gathered_ids(net_, g_.ops, x)) continue;  // read by the gather from DRAM
        const Box& box = need[static_cast<size_t>(x)];
        write(tensor_sp(x), box.elements() * net_.activation_bytes);
      }
      for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
        const int o = g_.ops[pos];
        const int64_t rows = pos < g_.rows_per_step.size() ? g_.rows_per_step[pos] : 1;
        const Box& out = need[static_cast<size_t>(net_.op(o).output)];
        if (idle(o, t)) continue;
        if (o == reducer) {
          hidden_chunk(net_.op(o), o, out, rows, t, T);
          continue;
        }
        compute(o, out, rows);
      }
      const std::vector<Box>& req = stored[static_cast<size_t>(t)];
      for (int x : g_.outputs)
        read(tensor_sp(x), req[static_cast<size_t>(x)].elements() * net_.activation_bytes);
    }
  }

  // A weight sweep: one tile of whole maps; each dense conv in `op_slices` output-channel
  // slices (its block's elementwise ops per slice: the same elements in all).
  void sweep() {
    std::vector<Box> requested_all(net_.tensors.size());
    for (int t : g_.outputs) requested_all[static_cast<size_t>(t)] = full_box(net_.tensor(t).shape);
    const std::vector<Box> need = transfer(net_, g_.ops, requested_all).need;
    for (int x : g_.inputs)
      if (!gathered_ids(net_, g_.ops, x))
        write(tensor_sp(x), need[static_cast<size_t>(x)].elements() * net_.activation_bytes);
    for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
      const int o = g_.ops[pos];
      const Op& op = net_.op(o);
      const Box& out = need[static_cast<size_t>(op.output)];
      const int64_t rows = pos < g_.rows_per_step.size() ? g_.rows_per_step[pos] : 1;
      const int64_t slices = pos < g_.op_slices.size() ? g_.op_slices[pos] : 0;
      if (!is_matrix(op) || slices < 1) {
        compute(o, out, rows);
        continue;
      }
      const int64_t channels = net_.tensor(op.output).shape.c;
      for (int64_t k = 0; k < slices; ++k) {
        const Interval c{channels * k / slices, channels * (k + 1) / slices};
        weight_load(op, o, c.size());
        compute(o, Box{c, out.h, out.w}, rows);
      }
    }
    for (int x : g_.outputs)
      read(tensor_sp(x), full_box(net_.tensor(x).shape).elements() * net_.activation_bytes);
  }

  const Net& net_;
  const Machine& m_;
  const GroupSchedule& g_;
  ActionCounts out_;
  std::map<int, Interval> table_channels_;  // per table op, the channels loaded last
};

}  // namespace

bool counts_kind(OpKind kind) {
  switch (kind) {
    case OpKind::Input:
    case OpKind::Conv:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::Pad:
    case OpKind::Eltwise:
    case OpKind::Add:
    case OpKind::Concat:
    case OpKind::GlobalPool:
    case OpKind::Gemm:
    case OpKind::Softmax:
    case OpKind::Reshape:
    case OpKind::Mul:
    case OpKind::Norm:
    case OpKind::RowSoftmax:
    case OpKind::MatMul:
    case OpKind::Slice:
    case OpKind::Embedding:
      return true;
  }
  return false;
}

ActionCounts count_group_actions(const Net& net, const Machine& machine, const GroupSchedule& group,
                                 size_t scratchpads) {
  return Counter(net, machine, group, scratchpads).run();
}

}  // namespace tessel::sched
