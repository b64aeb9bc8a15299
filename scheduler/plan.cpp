// The group model: proportional output tiling, shape transfer per tile, allocation and cost.
#include "scheduler/plan.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

#include "scheduler/alloc.hpp"
#include "scheduler/bound.hpp"

namespace tessel::sched {

const char* to_string(HaloMode mode) {
  return mode == HaloMode::Recompute ? "recompute" : "cache";
}

const char* to_string(BufferRole role) {
  switch (role) {
    case BufferRole::Input:
      return "input";
    case BufferRole::Intermediate:
      return "intermediate";
    case BufferRole::Output:
      return "output";
    case BufferRole::Weights:
      return "weights";
    case BufferRole::Accumulator:
      return "accumulator";
  }
  return "?";
}

const char* to_string(Objective objective) {
  return objective == Objective::Bytes ? "bytes" : "latency";
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Part i of `parts` near-equal parts of [0, extent).
Interval part(int64_t extent, int64_t parts, int64_t i) {
  return {extent * i / parts, extent * (i + 1) / parts};
}

// Reshape never moves data; a lone Concat (when aliased) lets its producers write into its
// channel slices in DRAM. A Concat inside a larger group is an on-chip copy.
bool is_view(const Op& op, const PlanOptions& options) {
  return op.kind == OpKind::Reshape || (op.kind == OpKind::Concat && options.alias_concat);
}

bool has_matrix_work(const Op& op) {
  return op.kind == OpKind::Conv || op.kind == OpKind::Gemm;
}

// Whether an op of `ops` has a window whose extent is below its stride (a strided 1x1 conv or
// pool): consecutive tiles' reads of its input then leave rows or columns out, so a tiled group
// can read less of an input than one tile (which reads its hull).
bool skips_rows_or_columns(const Net& net, const std::vector<int>& ops) {
  for (int op : ops) {
    const Op& o = net.op(op);
    if (o.kind != OpKind::Conv && o.kind != OpKind::MaxPool && o.kind != OpKind::AvgPool) continue;
    const Window& w = o.window;
    if ((w.kernel_h - 1) * w.dilation_h + 1 < w.stride_h ||
        (w.kernel_w - 1) * w.dilation_w + 1 < w.stride_w)
      return true;
  }
  return false;
}

// Everything about a group that does not depend on the mapping; tensors get local ids.
struct GroupInfo {
  std::vector<int> ops;
  std::vector<int> tensors;                // local id -> net tensor
  std::vector<int> out_local;              // per op position
  std::vector<std::vector<int>> in_local;  // per op position
  std::vector<char> is_input;              // loaded from DRAM
  std::vector<char> stored;                // written to DRAM
  std::vector<int> produced_step;          // 0 for inputs
  std::vector<int> last_use_step;          // last in-group consumer step, 0 if none
  std::vector<char> internal_use;          // read by an op of the group
};

GroupInfo describe(const Net& net, const std::vector<int>& ops) {
  GroupInfo g;
  g.ops = ops;
  std::vector<int> local_of(net.tensors.size(), -1);
  std::vector<char> in_group(net.ops.size(), 0);
  for (int op : ops) in_group[static_cast<size_t>(op)] = 1;
  auto local = [&](int tensor) {
    int& id = local_of[static_cast<size_t>(tensor)];
    if (id < 0) {
      id = static_cast<int>(g.tensors.size());
      g.tensors.push_back(tensor);
      g.is_input.push_back(0);
      g.stored.push_back(0);
      g.produced_step.push_back(0);
      g.last_use_step.push_back(0);
      g.internal_use.push_back(0);
    }
    return id;
  };
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const Op& op = net.op(ops[pos]);
    const int step = static_cast<int>(pos) + 1;
    std::vector<int> ins;
    for (int input : op.inputs) {
      const int l = local(input);
      ins.push_back(l);
      const int producer = net.tensor(input).producer;
      if (producer < 0 || !in_group[static_cast<size_t>(producer)])
        g.is_input[static_cast<size_t>(l)] = 1;
      g.last_use_step[static_cast<size_t>(l)] = step;
      g.internal_use[static_cast<size_t>(l)] = 1;
    }
    g.in_local.push_back(std::move(ins));
    const int out = local(op.output);
    g.out_local.push_back(out);
    g.produced_step[static_cast<size_t>(out)] = step;
    const Tensor& t = net.tensor(op.output);
    bool external = t.network_output;
    for (int consumer : t.consumers) {
      if (!in_group[static_cast<size_t>(consumer)]) external = true;
    }
    g.stored[static_cast<size_t>(out)] = external ? 1 : 0;
  }
  return g;
}

// Shape transfer for one tile on local ids (the same rule as sched::transfer).
void transfer_local(const Net& net, const GroupInfo& g, Box* need) {
  for (size_t pos = g.ops.size(); pos-- > 0;) {
    const Op& op = net.op(g.ops[pos]);
    const Box out = need[static_cast<size_t>(g.out_local[pos])];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const InputNeed in = deduce_input(net, op, static_cast<int>(i), out);
      Box& slot = need[static_cast<size_t>(g.in_local[pos][i])];
      slot = hull(slot, in.box);
    }
  }
}

// Output rows per conv instruction: enough rows that a pass streams at least R pixels (so it is
// not bound by the weight-block load), never more than the tile has.
int64_t conv_rows_per_step(const Machine& machine, int64_t tile_width) {
  return std::max<int64_t>(1, ceil_div(machine.matrix_rows, std::max<int64_t>(1, tile_width)));
}

bool is_depthwise(const Net& net, const Op& op) {
  return op.kind == OpKind::Conv && op.groups > 1 &&
         op.groups == net.tensor(op.inputs[0]).shape.c &&
         op.groups == net.tensor(op.output).shape.c;
}

// COMPUTE-engine cycles of one op producing box `out` of its output in one tile.
int64_t compute_cycles_of(const Net& net, const Machine& machine, const Op& op, const Box& out,
                          int64_t rows_per_step) {
  if (out.empty()) return 0;
  const int64_t pixels = out.h.size() * out.w.size();
  const int64_t channels = out.c.size();
  switch (op.kind) {
    case OpKind::Conv: {
      const Shape3 in = net.tensor(op.inputs[0]).shape;
      const int64_t out_channels = net.tensor(op.output).shape.c;
      const bool depthwise = is_depthwise(net, op);
      const int64_t out_per_group = out_channels / op.groups;
      const int64_t instructions =
          depthwise ? 1 : (out.c.e - 1) / out_per_group - out.c.b / out_per_group + 1;
      const int64_t oc = depthwise ? channels : std::min(channels, out_per_group);
      // Per step of rows_per_step rows (the last may have fewer): its conv instructions and
      // one requant pass. The full steps all cost the same.
      auto step_cycles = [&](int64_t rows) {
        const int64_t step_pixels = rows * out.w.size();
        return instructions * conv_instruction_cycles(machine, step_pixels, oc, in.c / op.groups,
                                                      op.window.kernel_h, op.window.kernel_w,
                                                      depthwise) +
               vector_instruction_cycles(machine, step_pixels, channels);
      };
      const int64_t full_steps = out.h.size() / rows_per_step;
      const int64_t rest = out.h.size() % rows_per_step;
      return (full_steps > 0 ? full_steps * step_cycles(rows_per_step) : 0) +
             (rest > 0 ? step_cycles(rest) : 0);
    }
    case OpKind::Gemm:
      return conv_instruction_cycles(machine, 1, channels,
                                     net.tensor(op.inputs[0]).shape.elements(), 1, 1, false) +
             vector_instruction_cycles(machine, 1, channels);
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return pool_instruction_cycles(machine, pixels, op.window.kernel_h * op.window.kernel_w,
                                     channels);
    case OpKind::GlobalPool: {
      const Shape3 in = net.tensor(op.inputs[0]).shape;
      return pool_instruction_cycles(machine, 1, in.h * in.w, channels);
    }
    case OpKind::Concat:
      // One copy per input slice.
      return vector_instruction_cycles(machine, pixels, channels) +
             static_cast<int64_t>(op.inputs.size() - 1) * kVectorPipelineCycles;
    default:  // Eltwise, Add, Pad, Softmax, Reshape: one vector pass
      return vector_instruction_cycles(machine, pixels, channels);
  }
}

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
  if (t.space_to_depth == 2 && !box.empty()) {
    // One DMA per row parity a (codegen): stored rows 2y + a, from stored column 2 x0, whole
    // pixels (the box has every channel; docs/scheduler.md, "Space-to-depth stem"). As a box of
    // the stored tensor seen with two stored rows per row: columns a W + [2 x0, 2 x1).
    const int64_t stored_w = 2 * t.shape.w;
    const Shape3 row_pairs{t.shape.c / 4, t.shape.h, 2 * stored_w};
    int64_t cycles = 0;
    for (int64_t a = 0; a < 2; ++a) {
      Box parity = box;
      parity.c = {0, row_pairs.c};
      parity.w = {a * stored_w + 2 * box.w.b, a * stored_w + 2 * box.w.e};
      cycles += dma_instruction_cycles(
          machine, box_bursts(row_pairs, parity, net.activation_bytes, machine.burst_bytes));
    }
    return cycles;
  }
  return dma_instruction_cycles(
      machine, box_bursts(t.shape, box, net.activation_bytes, machine.burst_bytes));
}

namespace {

int64_t dma_cycles_for_bytes(const Machine& machine, int64_t bytes) {
  return dma_instruction_cycles(machine, bursts_covering(0, bytes, machine.burst_bytes));
}

// Weight bytes an op needs to produce output channels `c` (per-channel share, exact for
// conv/Gemm weights + bias and per-channel BN/Scale parameters).
int64_t weight_bytes_for(const Net& net, const Op& op, Interval c) {
  if (op.weight_bytes == 0 || c.empty()) return 0;
  const int64_t channels = net.tensor(op.output).shape.c;
  return op.weight_bytes / channels * c.size();
}

// What a tiling's buffers need, independent of halo/residency/buffering: the sizes allocation
// works with (measure_geometry from the per-tile boxes, SeparableTiling::sizes from the runs).
struct BufferSizes {
  std::vector<int64_t> rows_per_step;     // per op: output rows per conv instruction
  std::vector<int64_t> weight_slice_max;  // per op: on-chip weight bytes of the widest slice
  std::vector<int64_t> acc_max;           // per op: accumulator bytes of one instruction
  std::vector<int64_t> pixel_bytes;       // per local: bytes per stored pixel (block padded)
  std::vector<int64_t> max_pixels;        // per local: largest tile, pixels
};

// Tile geometry results shared by every (halo, weights, buffering) choice.
struct TileGeometry : BufferSizes {
  int64_t tiles = 0;
  std::vector<Box> need;       // tiles x locals: computed (produced) or read (inputs)
  std::vector<Box> requested;  // tiles x locals: stored part (stored tensors only)
  // Deep-reuse gap per (op position, input index), computed on first use (-1: not yet).
  mutable std::vector<std::vector<int64_t>> reuse_gap;
  // Activation traffic and per-tile engine cycles (weights excluded), per halo mode, computed
  // on first use: every residency and buffering choice of the tiling shares them.
  struct ActivationCosts {
    bool done = false;
    int64_t read_bytes = 0, written_bytes = 0;
    std::vector<int64_t> load, compute, store;
  };
  mutable ActivationCosts costs[2];
};

// Tile (k, r, c)'s part of a stored tensor of `shape` under mapping `m` (empty: Box{}).
Box stored_part(const Shape3& shape, const Mapping& m, int64_t k, int64_t r, int64_t c) {
  const Box box{part(shape.c, m.channel_tiles, k), part(shape.h, m.row_tiles, r),
                part(shape.w, m.col_tiles, c)};
  return box.empty() ? Box{} : box;
}

TileGeometry tile_group(const Net& net, const GroupInfo& g, const Mapping& m) {
  TileGeometry geo;
  const size_t locals = g.tensors.size();
  geo.tiles = m.row_tiles * m.col_tiles * m.channel_tiles;
  geo.need.assign(static_cast<size_t>(geo.tiles) * locals, Box{});
  geo.requested.assign(static_cast<size_t>(geo.tiles) * locals, Box{});
  int64_t tile = 0;
  // Channel parts outermost: with streamed weights, one slice serves all row/column tiles of
  // its channels before the next slice is loaded.
  for (int64_t k = 0; k < m.channel_tiles; ++k) {
    for (int64_t r = 0; r < m.row_tiles; ++r) {
      for (int64_t c = 0; c < m.col_tiles; ++c, ++tile) {
        Box* need = &geo.need[static_cast<size_t>(tile) * locals];  // all empty until here
        for (size_t l = 0; l < locals; ++l) {
          if (!g.stored[l]) continue;
          const Box box = stored_part(net.tensor(g.tensors[l]).shape, m, k, r, c);
          need[l] = box;
          geo.requested[static_cast<size_t>(tile) * locals + l] = box;
        }
        transfer_local(net, g, need);
      }
    }
  }
  return geo;
}

}  // namespace

bool is_weight_streaming_group(const Net& net, const std::vector<int>& ops) {
  if (ops.empty() || !has_matrix_work(net.op(ops[0]))) return false;
  for (size_t i = 1; i < ops.size(); ++i) {
    const OpKind kind = net.op(ops[i]).kind;
    if (kind != OpKind::Eltwise && kind != OpKind::Add) return false;
  }
  return true;
}

bool is_channel_split_group(const Net& net, const std::vector<int>& ops) {
  if (ops.empty()) return false;
  for (int op : ops) {
    switch (net.op(op).kind) {
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalPool:
      case OpKind::Eltwise:
      case OpKind::Add:
      case OpKind::Pad:
        break;
      default:
        return false;
    }
  }
  return true;
}

namespace {
bool is_dense_conv(const Op& op) {
  return op.kind == OpKind::Conv && op.groups == 1;
}
}  // namespace

bool runs_whole_in_sweep(const Op& op) {
  return op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool || op.kind == OpKind::Concat;
}

bool is_weight_sweep_group(const Net& net, const std::vector<int>& ops) {
  if (ops.size() < 2 || !is_dense_conv(net.op(ops[0]))) return false;
  int convs = 0;
  int64_t block_channels = 0;
  std::vector<int> block_tensors;  // produced by the current block
  for (int index : ops) {
    const Op& op = net.op(index);
    if (is_dense_conv(op)) {
      ++convs;
      block_channels = net.tensor(op.output).shape.c;
      block_tensors.assign(1, op.output);
      continue;
    }
    if (runs_whole_in_sweep(op)) {  // a block of its own; nothing runs per slice after it
      block_channels = -1;
      block_tensors.clear();
      continue;
    }
    if (op.kind != OpKind::Eltwise && op.kind != OpKind::Add) return false;
    // A sweep streams only its convs' weights: an elementwise op with parameters of its own (a
    // Caffe-form BatchNorm or Scale) would run without them loaded.
    if (op.weight_bytes > 0 || op.requant_table_bytes > 0) return false;
    if (net.tensor(op.output).shape.c != block_channels) return false;
    bool reads_block = false;
    for (int t : op.inputs)
      reads_block |=
          std::find(block_tensors.begin(), block_tensors.end(), t) != block_tensors.end();
    if (!reads_block) return false;
    block_tensors.push_back(op.output);
  }
  return convs >= 2;
}

Status check_group(const Net& net, const std::vector<int>& ops, const PlanOptions& options) {
  if (ops.empty()) return fail("empty group");
  if (ops.size() > static_cast<size_t>(options.max_group_ops) &&
      !(options.allow_weight_sweep && ops.size() <= static_cast<size_t>(options.max_sweep_ops) &&
        is_weight_sweep_group(net, ops))) {
    return fail("group longer than " + std::to_string(options.max_group_ops) + " ops");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = net.op(ops[i]);
    if (op.kind == OpKind::Input) return fail("op '" + op.name + "' is a network input");
    if (i > 0 && ops[i] <= ops[i - 1]) return fail("group ops are not ascending");
    if (op.kind == OpKind::Reshape && ops.size() > 1) {
      return fail("op '" + op.name + "' is a DRAM view (Reshape) and must be alone in its group");
    }
    if (op.kind == OpKind::Softmax && ops.size() > 1) {  // docs/codegen.md "Host ops"
      return fail("op '" + op.name + "' (Softmax) runs on the host and must be alone in its group");
    }
  }
  return {};
}

std::vector<Mapping> enumerate_mappings(const Net& net, const std::vector<int>& ops,
                                        const PlanOptions& options) {
  std::vector<Mapping> out;
  // Tiles split the tensors the group stores; more parts than their rows (columns) would only
  // add empty tiles.
  int64_t max_rows = 1, max_cols = 1;
  for (int op : ops) {
    const Tensor& t = net.tensor(net.op(op).output);
    bool stored = t.network_output;
    for (int consumer : t.consumers)
      stored |= !std::binary_search(ops.begin(), ops.end(), consumer);
    if (!stored) continue;
    max_rows = std::max(max_rows, t.shape.h);
    max_cols = std::max(max_cols, t.shape.w);
  }
  std::vector<int64_t> row_counts;
  for (int64_t k = 1; k <= max_rows;) {
    row_counts.push_back(k);
    k = k < 8 ? k + 1 : k + k / 4;
  }
  if (row_counts.back() != max_rows) row_counts.push_back(max_rows);
  const int64_t channels = net.tensor(net.op(ops[0]).output).shape.c;
  std::vector<int64_t> channel_counts = {1};
  for (int64_t k = 2; k <= channels && k <= 1024; k *= 2) channel_counts.push_back(k);
  std::vector<int64_t> col_counts = {1};
  for (int64_t k = 2; k <= 16 && k <= max_cols; k *= 2) col_counts.push_back(k);
  auto push = [&](int64_t rows, int64_t cols, int64_t channel_tiles) {
    for (bool resident : {true, false}) {
      if (!resident && !options.allow_streamed_weights) continue;
      for (HaloMode halo : {HaloMode::Recompute, HaloMode::Cache}) {
        if (halo == HaloMode::Cache &&
            (!options.allow_cache || rows == 1 || cols > 1 || channel_tiles > 1)) {
          continue;
        }
        for (bool dbuf : {true, false}) {
          if (dbuf && !options.allow_double_buffer) continue;
          // Halo caching moves rows within one copy between tiles: never pipelined.
          if (dbuf && halo == HaloMode::Cache) continue;
          out.push_back({rows, cols, channel_tiles, halo, resident, dbuf});
        }
      }
    }
  };
  // Output-channel tiles of a matrix op alone or followed only by channel-wise elementwise ops
  // (conv + ReLU) stream its weights; without streaming a channel tile only re-reads the input.
  const bool streams = is_weight_streaming_group(net, ops) && options.allow_streamed_weights;
  for (int64_t rows : row_counts) {
    for (int64_t cols : col_counts) {
      // Columns split only once rows are single, unless 2D tiles are on.
      if (cols > 1 && rows != max_rows && !options.column_tiles_every_row) continue;
      for (int64_t channel_tiles : channel_counts) {
        if (channel_tiles > 1 && !streams) break;
        push(rows, cols, channel_tiles);
      }
    }
  }
  // A group of per-channel ops (pools, elementwise, Add) splits by channels as a last resort,
  // after every whole-channel tiling: a global pool cannot be split by rows, and a channel
  // split only trades contiguous DMA rows for per-pixel runs (no byte is saved).
  if (is_channel_split_group(net, ops)) {
    for (size_t k = 1; k < channel_counts.size(); ++k) {
      for (int64_t rows : row_counts) {
        for (int64_t cols : col_counts) {
          if (cols > 1 && rows != max_rows && !options.column_tiles_every_row) continue;
          push(rows, cols, channel_counts[k]);
        }
      }
    }
  }
  return out;
}

namespace {

// On-chip bytes of an op's weights for output channels `c`, in the layout the matrix unit reads
// (docs/isa.md): whole R x C blocks `[ocb][icb][ky][kx][R][C]` (depthwise `[cb][ky][kx][C]`),
// the int32 bias vector of whole output blocks and the requant table (8 B per channel). Ops
// without matrix work keep their compact parameters (BatchNorm/Scale vectors).
// Input blocks of one reduction chunk of a streamed Gemm too large to stream otherwise.
constexpr int64_t kGemmChunkBlocks = 64;

int64_t onchip_weight_bytes(const Net& net, const Machine& machine, const Op& op, Interval c,
                            bool streamed = false) {
  if (c.empty() || (op.weight_bytes == 0 && op.requant_table_bytes == 0)) return 0;
  if (!has_matrix_work(op)) return weight_bytes_for(net, op, c);
  const int64_t cols = machine.matrix_cols, rows = machine.matrix_rows;
  // Codegen packs a slice from its first channel (docs/codegen.md).
  const int64_t oc_blocks = ceil_div(c.size(), cols);
  const Shape3 in = net.tensor(op.inputs[0]).shape;
  int64_t blocks_elements = 0;
  if (op.kind == OpKind::Gemm) {
    // A slice holds its columns' whole reduction; a large Gemm streams in more channel tiles.
    // Only when one output block's whole reduction exceeds the weights' scratchpad (VGG-19's
    // classifier.0 on npc19: 25088 x 16 16-bit weights) is the reduction split in chunks of
    // kGemmChunkBlocks input blocks accumulated in place (docs/codegen.md "Gemm reduction
    // chunks": serialised, or chunk by chunk through two copies when double-buffered).
    int64_t ic_blocks = ceil_div(in.elements(), rows);
    const int64_t one_block =
        ic_blocks * rows * cols * machine.weight_bytes + cols * 4 + cols * kRequantEntryBytes;
    const int64_t capacity =
        machine.scratchpads[static_cast<size_t>(machine.scratchpad(BufferKind::Weights))]
            .size_bytes;
    if (streamed && one_block > capacity) ic_blocks = std::min(ic_blocks, kGemmChunkBlocks);
    blocks_elements = oc_blocks * ic_blocks * rows * cols;
  } else if (is_depthwise(net, op)) {
    blocks_elements = oc_blocks * op.window.kernel_h * op.window.kernel_w * cols;
  } else {
    blocks_elements = oc_blocks * ceil_div(in.c / op.groups, rows) * op.window.kernel_h *
                      op.window.kernel_w * rows * cols;
  }
  // Packed blocks, the bias vector of whole blocks and the table, rounded up to 8 bytes.
  return ceil_div(blocks_elements * machine.weight_bytes + oc_blocks * cols * 4 +
                      c.size() * kRequantEntryBytes,
                  8) *
         8;
}

// Requant-table DRAM bytes of the loads for output channels `c`.
int64_t table_bytes_for(const Net& net, const Op& op, Interval c) {
  if (op.requant_table_bytes == 0 || c.empty()) return 0;
  return op.requant_table_bytes / net.tensor(op.output).shape.c * c.size();
}

// The widest of `parts` near-equal output-channel slices of `op`, packed on chip (the packed
// size grows with the channel count alone; the widest part has ceil(C / parts) channels).
int64_t widest_slice_bytes(const Net& net, const Machine& machine, const Op& op, int64_t parts) {
  const int64_t channels = net.tensor(op.output).shape.c;
  return onchip_weight_bytes(net, machine, op, Interval{0, ceil_div(channels, parts)});
}

}  // namespace

std::vector<Mapping> enumerate_sweep_mappings(const Net& net, const Machine& machine,
                                              const std::vector<int>& ops) {
  std::vector<Mapping> out;
  if (!is_weight_sweep_group(net, ops)) return out;
  const int64_t capacity =
      machine.scratchpads[static_cast<size_t>(machine.scratchpad(BufferKind::Weights))].size_bytes;
  for (int i = 1; i <= 10; ++i) {
    const int64_t budget = capacity >> i;  // two slice copies share the scratchpad
    Mapping m;
    m.weights_resident = false;
    m.double_buffered = true;
    m.weight_sweep = true;
    m.op_slices.assign(ops.size(), 0);
    for (size_t pos = 0; pos < ops.size(); ++pos) {
      const Op& op = net.op(ops[pos]);
      if (!is_dense_conv(op)) continue;
      // At most one slice per column block of the matrix unit (narrower slices idle columns):
      // a conv that cannot meet the budget takes its finest slices and allocation decides.
      const int64_t max_slices =
          std::max<int64_t>(1, net.tensor(op.output).shape.c / machine.matrix_cols);
      int64_t k = 1;
      while (widest_slice_bytes(net, machine, op, k) > budget && k * 2 <= max_slices) k *= 2;
      m.op_slices[pos] = k;
    }
    if (out.empty() || out.back().op_slices != m.op_slices) out.push_back(std::move(m));
  }
  return out;
}

namespace {

// The weight-sweep model (docs/scheduler.md, "Weight sweeps"). One spatial tile: every tensor's
// box is its one-tile shape transfer. Ops form blocks (a conv and the per-slice ops after it);
// within a block the ops interleave slice by slice, so lifetimes are whole blocks. A tensor
// produced and consumed within one block and not stored holds one slice ("slice-local"); every
// other tensor holds its whole box. A per-slice op may write its output in place over an input
// it reads last, when its block's conv does not read that input and both hold the same layout
// (same offset, same pixel stride): slice k's output bytes are then exactly the input bytes
// slice k consumed.
Result<GroupSchedule> evaluate_sweep(const Net& net, const Machine& machine, const GroupInfo& g,
                                     const Mapping& m, const PlanOptions& options) {
  const size_t n_ops = g.ops.size();
  const int store_step = static_cast<int>(n_ops) + 1;
  if (!is_weight_sweep_group(net, g.ops))
    return fail(
        "not a weight-sweep group (a conv first, at least two convs, then only "
        "elementwise ops of each conv's block, windowed pools and Concats)");
  if (m.row_tiles != 1 || m.col_tiles != 1 || m.channel_tiles != 1)
    return fail("a weight sweep has one tile");
  if (m.op_slices.size() != n_ops)
    return fail("weight sweep: " + std::to_string(m.op_slices.size()) + " slice counts for " +
                std::to_string(n_ops) + " ops");
  std::vector<size_t> block(n_ops, 0);    // per op position: position of its block's conv
  std::vector<int> block_last(n_ops, 0);  // per conv position: its block's last step
  for (size_t pos = 0; pos < n_ops; ++pos) {
    const Op& op = net.op(g.ops[pos]);
    block[pos] = is_dense_conv(op) || runs_whole_in_sweep(op) ? pos : block[pos - 1];
    block_last[block[pos]] = static_cast<int>(pos) + 1;
    const int64_t slices = m.op_slices[pos];
    const int64_t channels = net.tensor(op.output).shape.c;
    if (is_dense_conv(op) ? slices < 1 || slices > channels : slices != 0)
      return fail("weight sweep: op '" + op.name + "' has " + std::to_string(slices) + " slices");
  }
  auto last_step_of_block = [&](size_t pos) { return block_last[block[pos]]; };
  auto slice_channels = [&](size_t conv_pos) {  // the widest slice of a block
    return ceil_div(net.tensor(net.op(g.ops[conv_pos]).output).shape.c, m.op_slices[conv_pos]);
  };
  // Phases in program order (slice k of a conv and its block's per-slice ops; a block run whole
  // joins the phase before it): per op position the phase its last work runs in, per phase the
  // last step of any op it runs.
  std::vector<int> end_phase(n_ops, -1);
  std::vector<int> phase_last_step;
  for (size_t pos = 0; pos < n_ops; ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (is_dense_conv(op)) {
      phase_last_step.insert(phase_last_step.end(), static_cast<size_t>(m.op_slices[pos]),
                             block_last[pos]);
    } else if (runs_whole_in_sweep(op)) {
      phase_last_step.back() = std::max(phase_last_step.back(), static_cast<int>(pos) + 1);
    }
    end_phase[pos] = static_cast<int>(phase_last_step.size()) - 1;
  }
  const int n_phases = static_cast<int>(phase_last_step.size());
  // Early stores: a stored tensor is stored after the phase that completes it (r); the compute
  // of phase r + 2 waits for that store, so its buffer must outlive phase r + 1. Stores of the
  // last two phases are waited for by the group's end instead (docs/scheduler.md).
  auto stored_until = [&](int ready_phase) {
    return ready_phase + 2 < n_phases ? phase_last_step[static_cast<size_t>(ready_phase + 1)]
                                      : store_step;
  };
  const TileGeometry one = tile_group(net, g, Mapping{});
  const size_t locals = g.tensors.size();
  std::vector<int> producer(locals, -1), last_reader(locals, -1);
  std::vector<char> conv_reads(locals, 0);
  for (size_t pos = 0; pos < n_ops; ++pos) {
    producer[static_cast<size_t>(g.out_local[pos])] = static_cast<int>(pos);
    for (int l : g.in_local[pos]) {
      last_reader[static_cast<size_t>(l)] = static_cast<int>(pos);
      if (is_dense_conv(net.op(g.ops[pos]))) conv_reads[static_cast<size_t>(l)] = 1;
    }
  }
  std::vector<char> slice_local(locals, 0);
  for (size_t l = 0; l < locals; ++l) {
    slice_local[l] =
        producer[l] >= 0 && !g.stored[l] && last_reader[l] >= 0 &&
        block[static_cast<size_t>(last_reader[l])] == block[static_cast<size_t>(producer[l])];
  }
  // In place (see above): a per-slice op's output over an input it reads last. Over a whole-map
  // input the output holds the whole map too (it costs no byte: it is the input's buffer).
  std::vector<int> overwrites(locals, -1);
  if (options.memory_reuse) {
    std::vector<char> taken(locals, 0);
    for (size_t pos = 0; pos < n_ops; ++pos) {
      const Op& op = net.op(g.ops[pos]);
      if (is_dense_conv(op) || runs_whole_in_sweep(op)) continue;  // never in place
      const auto y = static_cast<size_t>(g.out_local[pos]);
      if (one.need[y].empty()) continue;
      const Op& block_conv = net.op(g.ops[block[pos]]);
      // Whole-map inputs first: over one, the chain can go on to a stored output.
      std::vector<int> candidates = g.in_local[pos];
      std::stable_partition(candidates.begin(), candidates.end(),
                            [&](int l) { return !slice_local[static_cast<size_t>(l)]; });
      for (int in : candidates) {
        const auto x = static_cast<size_t>(in);
        if (overwrites[y] >= 0 || taken[x] || one.need[x].empty()) continue;
        const bool read_by_conv = std::find(block_conv.inputs.begin(), block_conv.inputs.end(),
                                            g.tensors[x]) != block_conv.inputs.end();
        if (last_reader[x] != static_cast<int>(pos) || g.stored[x] || read_by_conv ||
            one.need[x].h != one.need[y].h || one.need[x].w != one.need[y].w)
          continue;
        if (slice_local[x] && !slice_local[y]) continue;  // a slice cannot hold the whole map
        slice_local[y] = slice_local[x];
        overwrites[y] = static_cast<int>(x);
        taken[x] = 1;
      }
    }
  }
  // Every member of an in-place chain has the chain's layout: the widest pixel any needs.
  std::vector<size_t> chain(locals);
  std::vector<int64_t> chain_pixel_bytes(locals, 0);
  for (size_t l = 0; l < locals; ++l) {
    size_t r = l;
    while (overwrites[r] >= 0) r = static_cast<size_t>(overwrites[r]);
    chain[l] = r;
    int64_t channels = one.need[l].c.size();
    if (slice_local[l]) {
      channels = slice_channels(block[static_cast<size_t>(producer[l])]);
    } else if (conv_reads[l]) {
      channels = ceil_div(channels, machine.matrix_rows) * machine.matrix_rows;
    }
    chain_pixel_bytes[r] = std::max(chain_pixel_bytes[r], channels * net.activation_bytes);
  }

  GroupSchedule gs;
  gs.ops = g.ops;
  gs.weights_resident = false;
  gs.double_buffered = true;
  gs.weight_sweep = true;
  gs.op_slices = m.op_slices;
  gs.memory_reuse = options.memory_reuse;
  gs.rows_per_step.assign(n_ops, 1);
  for (size_t pos = 0; pos < n_ops; ++pos) {
    if (is_dense_conv(net.op(g.ops[pos]))) {
      gs.rows_per_step[pos] = conv_rows_per_step(
          machine, std::max<int64_t>(1, one.need[static_cast<size_t>(g.out_local[pos])].w.size()));
    }
  }
  std::vector<BufferAlloc>& buffers = gs.buffers;
  std::vector<int> buffer_of_local(locals, -1);
  auto add = [&](BufferAlloc b) {
    if (!options.memory_reuse) {
      b.first_step = 0;
      b.last_step = store_step;
    }
    b.scratchpad = machine.scratchpad(b.kind);
    buffers.push_back(std::move(b));
    return static_cast<int>(buffers.size()) - 1;
  };
  for (size_t l = 0; l < locals; ++l) {
    const Box& box = one.need[l];
    if (box.empty()) continue;
    BufferAlloc b;
    b.name = net.tensor(g.tensors[l]).name;
    b.tensor = g.tensors[l];
    // In-place chains cross roles (a loaded input overwritten by a stored output): every
    // activation buffer of a sweep lies in the activations scratchpad.
    b.kind = BufferKind::Activations;
    b.role = producer[l] < 0 ? BufferRole::Input
             : g.stored[l]   ? BufferRole::Output
                             : BufferRole::Intermediate;
    b.pixel_bytes = chain_pixel_bytes[chain[l]];
    b.size_bytes = box.h.size() * box.w.size() * b.pixel_bytes;
    b.first_step =
        producer[l] < 0 ? 0 : static_cast<int>(block[static_cast<size_t>(producer[l])]) + 1;
    b.last_step = last_reader[l] >= 0 ? last_step_of_block(static_cast<size_t>(last_reader[l]))
                                      : b.first_step;
    if (g.stored[l])
      b.last_step = std::max(
          b.last_step, stored_until(end_phase[static_cast<size_t>(std::max(producer[l], 0))]));
    buffer_of_local[l] = add(b);
  }
  {
    int64_t widest = 0;
    for (size_t pos = 0; pos < n_ops; ++pos) {
      const Op& op = net.op(g.ops[pos]);
      if (is_dense_conv(op))
        widest = std::max(widest, widest_slice_bytes(net, machine, op, m.op_slices[pos]));
    }
    BufferAlloc w;
    w.name = "w:sweep";
    w.role = BufferRole::Weights;
    w.kind = BufferKind::Weights;
    w.size_bytes = widest;
    w.first_step = 0;
    w.last_step = store_step;
    add(w);
    // Prefetch: the first slice lands in copy 0 during the previous group.
    if (options.prefetch_occupied != nullptr) buffers.back().first_step = -1;
    w.name += "#1";
    w.copy = 1;
    w.first_step = 0;
    add(w);
  }
  for (size_t pos = 0; pos < n_ops; ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (!is_dense_conv(op)) continue;
    const Box& out = one.need[static_cast<size_t>(g.out_local[pos])];
    BufferAlloc a;
    a.name = "acc:" + op.name;
    a.role = BufferRole::Accumulator;
    a.kind = BufferKind::Accumulators;
    a.op = g.ops[pos];
    a.size_bytes = std::min(gs.rows_per_step[pos], out.h.size()) * out.w.size() *
                   ceil_div(slice_channels(pos), machine.matrix_cols) * machine.matrix_cols *
                   machine.accumulator_bytes;
    a.first_step = static_cast<int>(pos) + 1;
    a.last_step = last_step_of_block(pos);
    add(a);
  }
  for (size_t l = 0; l < locals; ++l) {
    if (overwrites[l] >= 0 && buffer_of_local[l] >= 0)
      buffers[static_cast<size_t>(buffer_of_local[l])].reuses =
          buffer_of_local[static_cast<size_t>(overwrites[l])];
  }
  {
    // One request per in-place chain: its members share one offset.
    std::vector<int> root(buffers.size());
    std::vector<int> request_of(buffers.size(), -1);
    std::vector<AllocRequest> requests;
    for (size_t i = 0; i < buffers.size(); ++i) {
      int r = static_cast<int>(i);
      while (buffers[static_cast<size_t>(r)].reuses >= 0)
        r = buffers[static_cast<size_t>(r)].reuses;
      root[i] = r;
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (root[i] != static_cast<int>(i)) continue;
      const BufferAlloc& b = buffers[i];
      request_of[i] = static_cast<int>(requests.size());
      requests.push_back({b.size_bytes, b.first_step, b.last_step, b.scratchpad, -1, 0});
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      AllocRequest& r = requests[static_cast<size_t>(request_of[static_cast<size_t>(root[i])])];
      r.first_step = std::min(r.first_step, buffers[i].first_step);
      r.last_step = std::max(r.last_step, buffers[i].last_step);
      r.size_bytes = std::max(r.size_bytes, buffers[i].size_bytes);
    }
    if (options.prefetch_occupied != nullptr)
      requests.insert(requests.end(), options.prefetch_occupied->begin(),
                      options.prefetch_occupied->end());
    auto placed = allocate(requests, machine.capacities());
    if (!placed.ok()) return placed.failure();
    for (size_t i = 0; i < buffers.size(); ++i) {
      buffers[i].offset =
          placed.value().offsets[static_cast<size_t>(request_of[static_cast<size_t>(root[i])])];
    }
    gs.peak_bytes = placed.value().peak_bytes;
  }

  // ---- costs ----
  int64_t activation_load_cycles = 0, store_cycles = 0;
  std::vector<int64_t> phase_store(static_cast<size_t>(n_phases), 0);  // stores after phase w
  for (size_t l = 0; l < locals; ++l) {
    if (g.is_input[l]) {
      gs.inputs.push_back(g.tensors[l]);
      gs.traffic.activations_read += one.need[l].elements() * net.activation_bytes;
      activation_load_cycles += dma_cycles_for_box(net, machine, g.tensors[l], one.need[l]);
    }
    if (g.stored[l]) {
      gs.outputs.push_back(g.tensors[l]);
      const Box whole = full_box(net.tensor(g.tensors[l]).shape);
      gs.traffic.activations_written += whole.elements() * net.activation_bytes;
      const int64_t cycles = dma_cycles_for_box(net, machine, g.tensors[l], whole);
      store_cycles += cycles;
      phase_store[static_cast<size_t>(end_phase[static_cast<size_t>(producer[l])])] += cycles;
    }
  }
  {
    const Shape3 last = net.tensor(net.op(g.ops.back()).output).shape;
    gs.tile_rows = last.h;
    gs.tile_cols = last.w;
    gs.tile_channels = last.c;
  }
  for (int op : g.ops) gs.macs += net.op(op).macs;
  // Weight phases in program order: slice k of a conv, then the block's per-slice ops on it. A
  // pool or Concat block runs whole at the end of the phase before it (the last slice of the
  // blocks before it: everything it can read is complete then).
  std::vector<int64_t> phase_load, phase_compute;
  for (size_t pos = 0; pos < n_ops; ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (runs_whole_in_sweep(op)) {
      phase_compute.back() +=
          compute_cycles_of(net, machine, op, one.need[static_cast<size_t>(g.out_local[pos])], 1);
      continue;
    }
    if (!is_dense_conv(op)) continue;
    const int64_t channels = net.tensor(op.output).shape.c;
    for (int64_t k = 0; k < m.op_slices[pos]; ++k) {
      const Interval c = part(channels, m.op_slices[pos], k);
      const int64_t slice = weight_bytes_for(net, op, c);
      const int64_t table = table_bytes_for(net, op, c);
      gs.traffic.weights_read += slice;
      gs.traffic.requant_tables_read += table;
      phase_load.push_back(dma_cycles_for_bytes(machine, slice + table));
      int64_t compute = 0;
      for (size_t q = pos; q < n_ops && block[q] == pos; ++q) {
        const Box& out = one.need[static_cast<size_t>(g.out_local[q])];
        compute += compute_cycles_of(net, machine, net.op(g.ops[q]), Box{c, out.h, out.w},
                                     gs.rows_per_step[q]);
      }
      phase_compute.push_back(compute);
    }
  }
  // LOAD: activations, then the slices in order, slice w waiting until phase w-2 has computed
  // (its copy is free). STORE: after phase w, the tensors it completed (early stores).
  // COMPUTE: phase w after its slice, phase w-1 and the stores of phase w-2. Loads and stores
  // share one DRAM bus: each DMA starts when the bus is free, a load before a store that
  // becomes ready at the same time (docs/timing.md: LOAD first).
  const size_t phases = phase_load.size();
  if (static_cast<int>(phases) != n_phases) return fail("internal: weight sweep phase count");
  gs.prologue_weight_cycles = phases > 0 ? phase_load[0] : 0;
  // Prefetched: slice 0 is on chip when the group starts (its load is no longer on the LOAD
  // engine's path; phase 0 waits for the activations only).
  if (options.prefetch_occupied != nullptr && phases > 0) phase_load[0] = 0;
  std::vector<int64_t> load_end(phases), compute_end(phases), store_end(phases, 0);
  int64_t bus = activation_load_cycles;  // the DRAM bus is free from here
  int64_t load_free = activation_load_cycles, tail_dma = 0;
  auto store_after = [&](size_t w) {  // the stores of phase w, once it has computed
    if (phase_store[w] == 0) return;
    bus = std::max(bus, compute_end[w]) + phase_store[w];
    store_end[w] = bus;
  };
  for (size_t w = 0; w < phases; ++w) {
    const int64_t start = std::max(bus, w >= 2 ? compute_end[w - 2] : int64_t{0});
    load_end[w] = start + phase_load[w];
    bus = load_free = load_end[w];
    if (w >= 2) store_after(w - 2);
    if (w + 1 == phases && w >= 2) tail_dma += phase_store[w - 2];
    compute_end[w] = std::max({load_end[w], w >= 1 ? compute_end[w - 1] : int64_t{0},
                               w >= 2 ? store_end[w - 2] : int64_t{0}}) +
                     phase_compute[w];
  }
  for (size_t w = phases >= 2 ? phases - 2 : 0; w < phases; ++w) {
    store_after(w);
    tail_dma += phase_store[w];
  }
  gs.load_cycles = activation_load_cycles;
  for (size_t w = 0; w < phases; ++w) {
    gs.load_cycles += phase_load[w];
    gs.compute_cycles += phase_compute[w];
  }
  gs.store_cycles = store_cycles;
  gs.cycles = std::max(phases > 0 ? compute_end.back() : activation_load_cycles, bus);
  gs.tail_cycles = gs.cycles - load_free;
  gs.tail_dma_cycles = tail_dma;
  return gs;
}

// Per local: the channel block its buffer pads a pixel to (buffers are HWC tiles, channels
// padded to the matrix block where a matrix op reads them; 1 elsewhere).
std::vector<int64_t> channel_blocks(const Net& net, const Machine& machine, const GroupInfo& g) {
  std::vector<int64_t> block_of(g.tensors.size(), 1);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (!has_matrix_work(op)) continue;
    for (int in : g.in_local[pos]) {
      int64_t& block = block_of[static_cast<size_t>(in)];
      block = std::max(block, is_depthwise(net, op) ? machine.matrix_cols : machine.matrix_rows);
    }
  }
  return block_of;
}

// Fills the geometry-only figures of `geo` (its BufferSizes) from its per-tile boxes.
void measure_geometry(const Net& net, const Machine& machine, const GroupInfo& g,
                      TileGeometry& geo) {
  const size_t locals = g.tensors.size();
  // Conv instruction granularity (also the deep-reuse step): rows per conv instruction.
  geo.rows_per_step.assign(g.ops.size(), 1);
  std::vector<int64_t>& weight_slice_max = geo.weight_slice_max;
  std::vector<int64_t>& acc_max = geo.acc_max;
  weight_slice_max.assign(g.ops.size(), 0);
  acc_max.assign(g.ops.size(), 0);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    const size_t out = static_cast<size_t>(g.out_local[pos]);
    int64_t widest = 1;
    for (int64_t t = 0; t < geo.tiles; ++t) {
      widest = std::max(widest, geo.need[static_cast<size_t>(t) * locals + out].w.size());
    }
    if (op.kind == OpKind::Conv) geo.rows_per_step[pos] = conv_rows_per_step(machine, widest);
    Interval previous_c{-1, -1};
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box& box = geo.need[static_cast<size_t>(t) * locals + out];
      if (box.empty()) continue;
      if (!(box.c == previous_c)) {
        weight_slice_max[pos] =
            std::max(weight_slice_max[pos], onchip_weight_bytes(net, machine, op, box.c, true));
        previous_c = box.c;
      }
      if (has_matrix_work(op)) {
        const int64_t rows = std::min(geo.rows_per_step[pos], box.h.size());
        acc_max[pos] = std::max(acc_max[pos], rows * box.w.size() *
                                                  ceil_div(box.c.size(), machine.matrix_cols) *
                                                  machine.matrix_cols * machine.accumulator_bytes);
      }
    }
  }

  std::vector<int64_t>& pixel_bytes = geo.pixel_bytes;
  std::vector<int64_t>& max_pixels = geo.max_pixels;
  pixel_bytes.assign(locals, 0);
  max_pixels.assign(locals, 0);
  const std::vector<int64_t> block_of = channel_blocks(net, machine, g);
  for (size_t l = 0; l < locals; ++l) {
    const int64_t block = block_of[l];
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box& box = geo.need[static_cast<size_t>(t) * locals + l];
      if (box.empty()) continue;
      const int64_t channels = ceil_div(box.c.size(), block) * block;
      pixel_bytes[l] = std::max(pixel_bytes[l], channels * net.activation_bytes);
      max_pixels[l] = std::max(max_pixels[l], box.h.size() * box.w.size());
    }
  }
}

// Deep reuse gap (alloc.hpp) of op `pos` over input `i`, the maximum over the tiles; depends
// only on the tiling, so it is computed once per geometry.
int64_t reuse_gap_of(const Net& net, const GroupInfo& g, const TileGeometry& geo, size_t pos,
                     size_t i) {
  if (geo.reuse_gap.empty()) {
    geo.reuse_gap.resize(g.ops.size());
    for (size_t p = 0; p < g.ops.size(); ++p) {
      geo.reuse_gap[p].assign(g.in_local[p].size(), -1);
    }
  }
  int64_t& memo = geo.reuse_gap[pos][i];
  if (memo >= 0) return memo;
  const Op& op = net.op(g.ops[pos]);
  const size_t locals = g.tensors.size();
  const size_t l = static_cast<size_t>(g.in_local[pos][i]);
  const size_t out_l = static_cast<size_t>(g.out_local[pos]);
  const ReuseGranularity granularity =
      op.kind == OpKind::Conv ? ReuseGranularity::Row : ReuseGranularity::Point;
  int64_t gap = 0;
  // Interior tiles repeat the same relative geometry: compute each distinct one once.
  std::array<int64_t, 6> last_key{-1, -1, -1, -1, -1, -1};
  for (int64_t t = 0; t < geo.tiles; ++t) {
    const Box& in_box = geo.need[static_cast<size_t>(t) * locals + l];
    const Box& out_box = geo.need[static_cast<size_t>(t) * locals + out_l];
    if (in_box.empty() || out_box.empty()) continue;
    const std::array<int64_t, 6> key{in_box.h.size(),
                                     in_box.w.size(),
                                     out_box.h.size(),
                                     out_box.w.size(),
                                     out_box.h.b * op.window.stride_h - in_box.h.b,
                                     out_box.w.b * op.window.stride_w - in_box.w.b};
    if (key == last_key) continue;
    last_key = key;
    gap = std::max(
        gap, deep_reuse_gap_bytes(op, in_box, out_box, geo.pixel_bytes[l], geo.pixel_bytes[out_l],
                                  granularity, geo.rows_per_step[pos]));
  }
  memo = gap;
  return memo;
}

// Per local tensor: whether it is a kept input (GroupSchedule::keeps_inputs): channel tiles
// alone, and every tile reads the same box of it (a conv's input, all channels), so the first
// tile loads it and the others find it on chip. An input read per channel part (a residual
// add's other operand) is loaded by every tile.
std::vector<char> kept_inputs(const GroupInfo& g, const TileGeometry& geo, const Mapping& m) {
  const size_t locals = g.tensors.size();
  std::vector<char> kept(locals, 0);
  if (!GroupSchedule::keeps_inputs(m.row_tiles, m.col_tiles, m.channel_tiles)) return kept;
  for (size_t l = 0; l < locals; ++l) {
    if (!g.is_input[l]) continue;
    kept[l] = 1;
    for (int64_t t = 1; t < geo.tiles && kept[l]; ++t)
      kept[l] = geo.need[static_cast<size_t>(t) * locals + l] == geo.need[l];
  }
  return kept;
}

// What a tiling's tiles need, without tiling the group per tile. Shape transfer is separable:
// each axis of an input's need depends only on the same axis of the output box (deduce_input),
// and a hull of non-empty boxes is the hull of each axis. So while no box is empty, the need of
// local l in tile (k, r, c) is (channels of run k, rows of run r, columns of run c), where run
// r transfers the stored tensors' row part r at full channels and columns (likewise k and c).
// Any empty box in a run (more parts than a stored tensor has rows, a Concat input outside a
// channel part, a local no tile needs) couples the axes: the methods then give no figure. From
// the runs come the per-tile boxes (tile_group's), a tiling's summed COMPUTE cycles (a tile's
// cycles depend on its rows' and columns' sizes and its channel interval, so the sum runs over
// distinct values with counts) and the bytes it moves at least. The runs of each part count are
// kept: a group's tilings share them.
class SeparableTiling {
 public:
  SeparableTiling(const Net& net, const Machine& machine, const GroupInfo& g)
      : net_(net), machine_(machine), g_(g), channel_blocks_(channel_blocks(net, machine, g)) {}

  /// The per-tile boxes of tiling `m` (tile_group's), as products of the axes' parts; false
  /// (and `geo` untouched) where the axes do not separate.
  bool tile(const Mapping& m, TileGeometry& geo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return false;
    const size_t locals = g_.tensors.size();
    geo = TileGeometry{};
    geo.tiles = m.row_tiles * m.col_tiles * m.channel_tiles;
    geo.need.resize(static_cast<size_t>(geo.tiles) * locals);
    geo.requested.assign(static_cast<size_t>(geo.tiles) * locals, Box{});
    size_t tile = 0;
    for (size_t k = 0; k < static_cast<size_t>(m.channel_tiles); ++k) {
      for (size_t r = 0; r < static_cast<size_t>(m.row_tiles); ++r) {
        for (size_t c = 0; c < static_cast<size_t>(m.col_tiles); ++c, ++tile) {
          for (size_t l = 0; l < locals; ++l) {
            geo.need[tile * locals + l] = Box{cs->parts[k * locals + l], hs->parts[r * locals + l],
                                              ws->parts[c * locals + l]};
            if (!g_.stored[l]) continue;
            geo.requested[tile * locals + l] =
                stored_part(net_.tensor(g_.tensors[l]).shape, m, static_cast<int64_t>(k),
                            static_cast<int64_t>(r), static_cast<int64_t>(c));
          }
        }
      }
    }
    return true;
  }

  /// The DRAM bytes of every mapping of tiling `m` with halo mode `halo` at least move: the
  /// activations its tiles read (exactly, as the cost model counts them: a kept input once,
  /// cached rows once) and write, and every weight and table once (a slice is counted as its
  /// channels' share, rounded down: weight_bytes_for), or -1 where the axes do not separate.
  int64_t bytes_floor(const Mapping& m, HaloMode halo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return -1;
    const size_t locals = g_.tensors.size();
    auto sum = [&](const std::vector<Interval>& parts, size_t l) {
      int64_t total = 0;
      for (size_t i = 0; i < parts.size() / locals; ++i) total += parts[i * locals + l].size();
      return total;
    };
    const std::vector<char> kept = kept_inputs(m);
    int64_t elements = 0;
    for (size_t l = 0; l < locals; ++l) {
      if (g_.stored[l]) elements += net_.tensor(g_.tensors[l]).shape.elements();
      if (!g_.is_input[l]) continue;
      if (kept[l]) {
        elements += cs->parts[l].size() * hs->parts[l].size() * ws->parts[l].size();
        continue;
      }
      int64_t rows = 0;
      if (halo == HaloMode::Cache) {
        for (const Interval& h : fresh_rows(*hs, m.row_tiles, l)) rows += h.size();
      } else {
        rows = sum(hs->parts, l);
      }
      elements += sum(cs->parts, l) * rows * sum(ws->parts, l);
    }
    int64_t bytes = elements * net_.activation_bytes;
    for (int op : g_.ops) {
      const Op& o = net_.op(op);
      const Interval all{0, net_.tensor(o.output).shape.c};
      bytes += weight_bytes_for(net_, o, all) + table_bytes_for(net_, o, all);
    }
    return bytes;
  }

  /// The summed compute cycles of tiling `m` with halo mode `halo` (cached: rows computed by the
  /// previous row tile are not computed again, as evaluate_with's `fresh`), or -1 where the
  /// axes do not separate.
  int64_t compute_cycles(const Mapping& m, HaloMode halo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return -1;
    const size_t locals = g_.tensors.size();
    int64_t total = 0;
    for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
      const Op& op = net_.op(g_.ops[pos]);
      const auto out = static_cast<size_t>(g_.out_local[pos]);
      // A conv's cycles depend on where its channel part starts only through the groups it
      // spans (grouped, not depthwise).
      const bool grouped = op.kind == OpKind::Conv && op.groups > 1 && !is_depthwise(net_, op);
      const auto channels = counted(cs->parts, locals, out, !grouped);
      const auto cols = counted(ws->parts, locals, out, true);
      const auto rows = halo == HaloMode::Cache
                            ? counted(fresh_rows(*hs, m.row_tiles, out), 1, 0, true)
                            : counted(hs->parts, locals, out, true);
      int64_t rows_per_step = 1;  // as measure_geometry: from the widest tile
      if (op.kind == OpKind::Conv) {
        int64_t widest = 1;
        for (const auto& [w, count] : cols) widest = std::max(widest, w.size());
        rows_per_step = conv_rows_per_step(machine_, widest);
      }
      for (const auto& [c, c_count] : channels) {
        for (const auto& [h, h_count] : rows) {
          for (const auto& [w, w_count] : cols) {
            total += c_count * h_count * w_count *
                     compute_cycles_of(net_, machine_, op, Box{c, h, w}, rows_per_step);
          }
        }
      }
    }
    return total;
  }

  /// kept_inputs of tiling `m` (only channel tiles split it: each channel part's box of an input
  /// is its channel run's, so the input is kept where every run is the same); `m` must separate.
  std::vector<char> kept_inputs(const Mapping& m) {
    const Axis* cs = axes(m)[0];
    const size_t locals = g_.tensors.size();
    std::vector<char> kept(locals, 0);
    if (!GroupSchedule::keeps_inputs(m.row_tiles, m.col_tiles, m.channel_tiles)) return kept;
    for (size_t l = 0; l < locals; ++l) {
      kept[l] = g_.is_input[l];
      for (int64_t k = 1; k < m.channel_tiles && kept[l]; ++k)
        kept[l] = cs->parts[static_cast<size_t>(k) * locals + l] == cs->parts[l];
    }
    return kept;
  }

  /// measure_geometry's figures for tiling `m`, from the runs: every tile's box is a product of
  /// one part per axis (none empty where the axes separate), and each figure grows with each
  /// axis's size, so its largest over the tiles is the one at the largest part of each axis
  /// (`exact`). Where the axes do not separate, the tiles whose parts are all clean still are
  /// products of their runs' parts (a clean tile's boxes are all non-empty), so the figures
  /// over those tiles alone are at most the tiling's, with one row per accumulator step: a
  /// lower bound for the demand check (not `exact`). False (and `sizes` untouched) where an
  /// axis has no clean part, or the tiling keeps inputs and the axes do not separate (a kept
  /// input has one copy where a reloaded one may have two: no lower bound).
  bool sizes(const Mapping& m, BufferSizes& sizes, bool& exact) {
    const Axis* cs = axis(0, m.channel_tiles);
    const Axis* hs = axis(1, m.row_tiles);
    const Axis* ws = axis(2, m.col_tiles);
    exact = cs->separates && hs->separates && ws->separates;
    if (!exact && GroupSchedule::keeps_inputs(m.row_tiles, m.col_tiles, m.channel_tiles))
      return false;
    for (const Axis* a : {cs, hs, ws})
      if (std::find(a->clean.begin(), a->clean.end(), 1) == a->clean.end()) return false;
    const size_t locals = g_.tensors.size();
    auto largest = [&](const Axis& a, size_t l) {
      int64_t most = 0;
      for (size_t i = 0; i < a.clean.size(); ++i)
        if (a.clean[i]) most = std::max(most, a.parts[i * locals + l].size());
      return most;
    };
    sizes.rows_per_step.assign(g_.ops.size(), 1);
    sizes.weight_slice_max.assign(g_.ops.size(), 0);
    sizes.acc_max.assign(g_.ops.size(), 0);
    for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
      const Op& op = net_.op(g_.ops[pos]);
      const auto out = static_cast<size_t>(g_.out_local[pos]);
      if (op.kind == OpKind::Conv)
        sizes.rows_per_step[pos] =
            conv_rows_per_step(machine_, std::max<int64_t>(1, largest(*ws, out)));
      // A weight slice's bytes depend on where its channels start (blocks, groups): each
      // distinct channel part once.
      Interval previous_c{-1, -1};
      for (size_t k = 0; k < static_cast<size_t>(m.channel_tiles); ++k) {
        const Interval c = cs->parts[k * locals + out];
        if (!cs->clean[k] || c == previous_c) continue;
        sizes.weight_slice_max[pos] =
            std::max(sizes.weight_slice_max[pos], onchip_weight_bytes(net_, machine_, op, c, true));
        previous_c = c;
      }
      if (has_matrix_work(op)) {
        const int64_t rows = exact ? std::min(sizes.rows_per_step[pos], largest(*hs, out)) : 1;
        sizes.acc_max[pos] = rows * largest(*ws, out) *
                             ceil_div(largest(*cs, out), machine_.matrix_cols) *
                             machine_.matrix_cols * machine_.accumulator_bytes;
      }
    }
    sizes.pixel_bytes.assign(locals, 0);
    sizes.max_pixels.assign(locals, 0);
    for (size_t l = 0; l < locals; ++l) {
      const int64_t block = channel_blocks_[l];
      sizes.pixel_bytes[l] = ceil_div(largest(*cs, l), block) * block * net_.activation_bytes;
      sizes.max_pixels[l] = largest(*hs, l) * largest(*ws, l);
    }
    return true;
  }

 private:
  struct Axis {
    bool separates = true;        // every part is clean
    std::vector<char> clean;      // per part: no stored part and no need is empty
    std::vector<Interval> parts;  // part-major: parts x locals (clean parts only)
  };

  // The channel, row and column runs of tiling `m`; all null where one does not separate.
  std::array<const Axis*, 3> axes(const Mapping& m) {
    const std::array<const Axis*, 3> a = {axis(0, m.channel_tiles), axis(1, m.row_tiles),
                                          axis(2, m.col_tiles)};
    if (!a[0]->separates || !a[1]->separates || !a[2]->separates) return {};
    return a;
  }

  const Axis* axis(int which, int64_t parts) {
    auto& memo = memo_[which];
    auto it = memo.find(parts);
    if (it != memo.end()) return &it->second;
    Axis& a = memo[parts];
    const size_t locals = g_.tensors.size();
    a.parts.assign(static_cast<size_t>(parts) * locals, Interval{});
    a.clean.assign(static_cast<size_t>(parts), 1);
    std::vector<Box> need(locals);
    for (int64_t i = 0; i < parts; ++i) {
      char& clean = a.clean[static_cast<size_t>(i)];
      std::fill(need.begin(), need.end(), Box{});
      for (size_t l = 0; l < locals && clean; ++l) {
        if (!g_.stored[l]) continue;
        Box box = full_box(net_.tensor(g_.tensors[l]).shape);
        Interval& split = which == 0 ? box.c : which == 1 ? box.h : box.w;
        split = part(split.e, parts, i);
        clean = !box.empty();
        need[l] = box;
      }
      if (clean) transfer_local(net_, g_, need.data());
      for (size_t l = 0; l < locals && clean; ++l) clean = !need[l].empty();
      a.separates &= clean != 0;
      if (!clean) continue;
      for (size_t l = 0; l < locals; ++l) {
        a.parts[static_cast<size_t>(i) * locals + l] = which == 0   ? need[l].c
                                                       : which == 1 ? need[l].h
                                                                    : need[l].w;
      }
    }
    return &a;
  }

  // The rows of local `l` each row tile computes or reads with cached halos: those the previous
  // row tile did not (evaluate_with's `fresh`).
  std::vector<Interval> fresh_rows(const Axis& hs, int64_t row_tiles, size_t l) const {
    const size_t locals = g_.tensors.size();
    std::vector<Interval> fresh(static_cast<size_t>(row_tiles));
    for (size_t r = 0; r < fresh.size(); ++r) {
      Interval h = hs.parts[r * locals + l];
      if (r > 0) {
        h.b = std::max(h.b, hs.parts[(r - 1) * locals + l].e);
        if (h.e < h.b) h.e = h.b;
      }
      fresh[r] = h;
    }
    return fresh;
  }

  // Distinct intervals of local `l` over the parts, with counts; by size only where the cycles
  // depend on the size alone (rows, columns).
  static std::vector<std::pair<Interval, int64_t>> counted(const std::vector<Interval>& parts,
                                                           size_t locals, size_t l, bool by_size) {
    std::vector<std::pair<Interval, int64_t>> out;
    for (size_t i = 0; i < parts.size() / locals; ++i) {
      Interval v = parts[i * locals + l];
      if (by_size) v = {0, v.size()};
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == v; });
      if (it == out.end()) {
        out.push_back({v, 1});
      } else {
        ++it->second;
      }
    }
    return out;
  }

  const Net& net_;
  const Machine& machine_;
  const GroupInfo& g_;
  const std::vector<int64_t> channel_blocks_;  // per local (channel_blocks)
  std::map<int64_t, Axis> memo_[3];
};

// The buffers of mapping `m` (activation tiles, weight slices, accumulators; deep reuse) into
// `buffers`, and their allocation requests, prefetched weights pinned before the group included.
// Deep-reuse gaps come from `geo`; without one they are 0, which the demand check
// (check_demand) does not read: it counts a reuse pair as its larger member whatever the gap.
std::vector<AllocRequest> buffer_requests(const Net& net, const Machine& machine,
                                          const GroupInfo& g, const BufferSizes& sizes,
                                          const TileGeometry* geo, const Mapping& m,
                                          const PlanOptions& options, const std::vector<char>& kept,
                                          bool keep_slices, std::vector<BufferAlloc>& buffers) {
  const size_t locals = g.tensors.size();
  const int store_step = static_cast<int>(g.ops.size()) + 1;
  const bool cache = m.halo == HaloMode::Cache;
  const std::vector<int64_t>& weight_slice_max = sizes.weight_slice_max;
  const std::vector<int64_t>& acc_max = sizes.acc_max;
  const std::vector<int64_t>& pixel_bytes = sizes.pixel_bytes;
  const std::vector<int64_t>& max_pixels = sizes.max_pixels;
  buffers.clear();
  buffers.reserve(2 * locals + 2 * g.ops.size());
  std::vector<int> buffer_of_local(locals, -1);
  auto add = [&](BufferAlloc b) {
    if (!options.memory_reuse) {
      b.first_step = 0;
      b.last_step = store_step;
    }
    b.scratchpad = machine.scratchpad(b.kind);
    buffers.push_back(std::move(b));
    return static_cast<int>(buffers.size()) - 1;
  };
  for (size_t l = 0; l < locals; ++l) {
    BufferAlloc b;
    b.pixel_bytes = pixel_bytes[l];
    b.size_bytes = max_pixels[l] * pixel_bytes[l];
    if (b.size_bytes == 0) continue;
    b.tensor = g.tensors[l];
    // A kept input is loaded once: it has no second copy.
    const bool ping_pong = m.double_buffered && (g.is_input[l] || g.stored[l]) && !kept[l];
    if (g.is_input[l]) {
      b.role = BufferRole::Input;
      b.kind = BufferKind::Activations;
      b.first_step = 0;
      b.last_step = g.last_use_step[l];
    } else if (g.stored[l]) {
      b.role = BufferRole::Output;
      b.kind = g.internal_use[l] ? BufferKind::Activations : BufferKind::Outputs;
      b.first_step = g.produced_step[l];
      b.last_step = store_step;
    } else {
      b.role = BufferRole::Intermediate;
      b.kind = BufferKind::Activations;
      b.first_step = g.produced_step[l];
      b.last_step = g.last_use_step[l];
    }
    if (ping_pong || cache || kept[l]) {
      b.first_step = 0;
      b.last_step = store_step;
    }
    buffer_of_local[l] = add(b);
    if (ping_pong) {
      b.copy = 1;
      add(b);
    }
  }
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    const int step = static_cast<int>(pos) + 1;
    if (weight_slice_max[pos] > 0) {
      BufferAlloc w;
      w.role = BufferRole::Weights;
      w.kind = BufferKind::Weights;
      w.op = g.ops[pos];
      // Resident: every channel part's slice, each packed from its first channel.
      int64_t resident_bytes = 0;
      if (m.weights_resident) {
        const int64_t channels = net.tensor(op.output).shape.c;
        const int64_t parts = pos == 0 ? m.channel_tiles : 1;
        for (int64_t k = 0; k < parts; ++k)
          resident_bytes += onchip_weight_bytes(net, machine, op, part(channels, parts, k));
      }
      w.size_bytes = m.weights_resident ? resident_bytes : weight_slice_max[pos];
      // A streamed slice kept across the row/column tiles of its channels lives over whole
      // tiles; a slice reloaded every tile lives from the tile's loads (step 0: the load engine
      // writes it before the tile's first op) to its op's step, so it shares no byte with
      // buffers of the steps in between.
      // Double-buffered streamed weights ping-pong like activations: two copies, each live
      // over whole tiles (the next tile's slice loads while this tile's conv reads the other).
      const bool ping_pong = m.double_buffered && !m.weights_resident;
      const bool whole_tile = m.weights_resident || keep_slices || ping_pong;
      w.first_step = 0;
      w.last_step = whole_tile ? store_step : step;
      add(w);
      if (ping_pong) {
        w.copy = 1;
        add(w);
      }
    }
    if (acc_max[pos] > 0) {
      BufferAlloc a;
      a.role = BufferRole::Accumulator;
      a.kind = BufferKind::Accumulators;
      a.op = g.ops[pos];
      a.size_bytes = acc_max[pos];
      a.first_step = a.last_step = step;
      add(a);
    }
  }
  // Deep reuse: an op's output may overwrite the consumed part of an input it reads last.
  if (options.memory_reuse && !cache) {
    std::vector<char> reused(buffers.size(), 0);
    for (size_t pos = 0; pos < g.ops.size(); ++pos) {
      const Op& op = net.op(g.ops[pos]);
      const int step = static_cast<int>(pos) + 1;
      const size_t out_l = static_cast<size_t>(g.out_local[pos]);
      const int out_buffer = buffer_of_local[out_l];
      if (out_buffer < 0) continue;
      if (buffers[static_cast<size_t>(out_buffer)].first_step != step) continue;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (buffers[static_cast<size_t>(out_buffer)].reuses >= 0) break;
        const size_t l = static_cast<size_t>(g.in_local[pos][i]);
        const int in_buffer = buffer_of_local[l];
        if (in_buffer < 0) continue;
        const BufferAlloc& x = buffers[static_cast<size_t>(in_buffer)];
        BufferAlloc& y = buffers[static_cast<size_t>(out_buffer)];
        if (x.last_step != step || x.scratchpad != y.scratchpad) continue;
        if (reused[static_cast<size_t>(in_buffer)]) continue;
        y.reuses = in_buffer;
        y.reuse_gap_bytes = geo != nullptr ? reuse_gap_of(net, g, *geo, pos, i) : 0;
        reused[static_cast<size_t>(in_buffer)] = 1;
      }
    }
  }
  // Prefetch: the prologue weights (resident: all; streamed: the first tile's slices, copy 0)
  // are loaded during the previous group, whose bytes are pinned at step -1.
  const bool prefetch = options.prefetch_occupied != nullptr;
  if (prefetch) {
    for (auto& b : buffers)
      if (b.role == BufferRole::Weights && b.copy == 0) b.first_step = -1;
  }
  std::vector<AllocRequest> requests;
  requests.reserve(buffers.size());
  for (const auto& b : buffers) {
    requests.push_back(
        {b.size_bytes, b.first_step, b.last_step, b.scratchpad, b.reuses, b.reuse_gap_bytes});
  }
  if (prefetch)
    requests.insert(requests.end(), options.prefetch_occupied->begin(),
                    options.prefetch_occupied->end());
  return requests;
}

// Whether a tiling whose buffers have `sizes` may fit in some mapping: at each op's step, every
// mapping holds the op's inputs, its output, its accumulators and its weights (at least the
// widest streamed slice), and deep reuse lets the output share bytes with one input at most.
// Those live bytes, per scratchpad, must fit: a necessary condition for the demand check of
// every mapping of the tiling, whatever its residency, halo mode or buffering.
bool tiling_may_fit(const Machine& machine, const GroupInfo& g, const BufferSizes& sizes,
                    const PlanOptions& options, const std::vector<int64_t>& capacities) {
  std::vector<int64_t> live(capacities.size());
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    std::fill(live.begin(), live.end(), 0);
    auto add = [&](BufferKind kind, int64_t bytes) {
      live[static_cast<size_t>(machine.scratchpad(kind))] += bytes;
    };
    const auto out = static_cast<size_t>(g.out_local[pos]);
    const int64_t out_bytes = sizes.max_pixels[out] * sizes.pixel_bytes[out];
    const BufferKind out_kind =
        g.stored[out] && !g.internal_use[out] ? BufferKind::Outputs : BufferKind::Activations;
    add(out_kind, out_bytes);
    int64_t shared = 0;  // the most an input can share with the output
    for (size_t i = 0; i < g.in_local[pos].size(); ++i) {
      const auto l = static_cast<size_t>(g.in_local[pos][i]);
      if (std::find(g.in_local[pos].begin(), g.in_local[pos].begin() + static_cast<long>(i),
                    g.in_local[pos][i]) != g.in_local[pos].begin() + static_cast<long>(i))
        continue;  // read twice, held once
      const int64_t bytes = sizes.max_pixels[l] * sizes.pixel_bytes[l];
      add(BufferKind::Activations, bytes);
      if (options.memory_reuse &&
          machine.scratchpad(BufferKind::Activations) == machine.scratchpad(out_kind))
        shared = std::max(shared, std::min(bytes, out_bytes));
    }
    live[static_cast<size_t>(machine.scratchpad(out_kind))] -= shared;
    add(BufferKind::Weights, sizes.weight_slice_max[pos]);
    add(BufferKind::Accumulators, sizes.acc_max[pos]);
    for (size_t pad = 0; pad < live.size(); ++pad)
      if (live[pad] > capacities[pad]) return false;
  }
  return true;
}

// The buffers of mapping `m` and their places in the scratchpads, into `gs`.
Status place_buffers(const Net& net, const Machine& machine, const GroupInfo& g,
                     const TileGeometry& geo, const Mapping& m, const PlanOptions& options,
                     const std::vector<char>& kept, bool keep_slices, GroupSchedule& gs) {
  const std::vector<AllocRequest> requests =
      buffer_requests(net, machine, g, geo, &geo, m, options, kept, keep_slices, gs.buffers);
  auto placed = allocate(requests, machine.capacities());
  if (!placed.ok()) return placed.failure();
  for (size_t i = 0; i < gs.buffers.size(); ++i) gs.buffers[i].offset = placed.value().offsets[i];
  gs.peak_bytes = placed.value().peak_bytes;
  return {};
}

// What a mapping must not exceed to matter to a search past its first feasible mapping (-1:
// no limit): a mapping over either is rejected before its buffers are built and allocated.
struct Cutoff {
  int64_t cycles = -1;
  int64_t bytes = -1;
  bool active() const { return cycles >= 0 || bytes >= 0; }
};

Result<GroupSchedule> evaluate_with(const Net& net, const Machine& machine, const GroupInfo& g,
                                    const TileGeometry& geo, const Mapping& m,
                                    const PlanOptions& options, Cutoff cutoff = {}) {
  GroupSchedule gs;
  gs.ops = g.ops;
  gs.row_tiles = m.row_tiles;
  gs.col_tiles = m.col_tiles;
  gs.channel_tiles = m.channel_tiles;
  gs.halo = m.halo;
  gs.weights_resident = m.weights_resident;
  gs.double_buffered = m.double_buffered;
  gs.memory_reuse = options.memory_reuse;
  const size_t locals = g.tensors.size();
  const bool cache = m.halo == HaloMode::Cache;

  // Geometry-only figures (the same for every mapping of this tiling) come from `geo`. Without
  // a cutoff the buffers and their allocation come first, costs only once allocation succeeds,
  // so the many mappings that do not fit are rejected cheaply; with one, the costs come first
  // and a mapping slower than the cutoff is rejected without building its buffers.
  gs.rows_per_step = geo.rows_per_step;
  // Streamed weights with channel tiles: each slice is loaded once and kept while the
  // row/column tiles of its channels run (channel parts are the outer tile loop).
  const bool keep_slices = GroupSchedule::keeps_weight_slices(m.weights_resident, m.row_tiles,
                                                              m.col_tiles, m.channel_tiles);
  // Channel tiles alone (one row, one column tile): every tile reads the same input box, which
  // stays on chip from the first tile (output-channel tiling with a resident input).
  const std::vector<char> kept = kept_inputs(g, geo, m);
  if (!cutoff.active()) {
    if (auto placed = place_buffers(net, machine, g, geo, m, options, kept, keep_slices, gs);
        !placed.ok())
      return placed.failure();
  }

  // ---- costs: per-tile traffic and cycles ----
  for (size_t l = 0; l < locals; ++l) {
    if (g.is_input[l]) gs.inputs.push_back(g.tensors[l]);
    if (g.stored[l]) gs.outputs.push_back(g.tensors[l]);
  }
  {
    // A stored tensor with fewer rows than the tiling has tiles (a pooled branch beside its
    // unpooled block) leaves some tiles empty: report the first tile that is not.
    const auto last_out = static_cast<size_t>(g.out_local.back());
    Box first = geo.requested[last_out];
    for (int64_t t = 1; first.empty() && t < geo.tiles; ++t)
      first = geo.requested[static_cast<size_t>(t) * g.tensors.size() + last_out];
    gs.tile_rows = first.h.size();
    gs.tile_cols = first.w.size();
    gs.tile_channels = first.c.size();
  }
  for (int op : g.ops) gs.macs += net.op(op).macs;
  TileGeometry::ActivationCosts& act = geo.costs[cache ? 1 : 0];
  if (!act.done) {
    act.load.assign(static_cast<size_t>(geo.tiles), 0);
    act.compute.assign(static_cast<size_t>(geo.tiles), 0);
    act.store.assign(static_cast<size_t>(geo.tiles), 0);
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
          act.store[static_cast<size_t>(t)] +=
              dma_cycles_for_box(net, machine, g.tensors[l], req[l]);
        }
      }
      for (size_t pos = 0; pos < g.ops.size(); ++pos) {
        const Op& op = net.op(g.ops[pos]);
        const size_t out = static_cast<size_t>(g.out_local[pos]);
        act.compute[static_cast<size_t>(t)] +=
            compute_cycles_of(net, machine, op, fresh(out), geo.rows_per_step[pos]);
      }
      if (cache) {
        for (size_t l = 0; l < locals; ++l) {
          if (!need[l].empty()) previous[l] = need[l];
        }
      }
    }
    act.done = true;
  }
  gs.traffic.activations_read = act.read_bytes;
  gs.traffic.activations_written = act.written_bytes;
  std::vector<int64_t> load = act.load;
  const std::vector<int64_t>& compute = act.compute;
  const std::vector<int64_t>& store = act.store;
  int64_t resident_weight_cycles = 0;
  if (!m.weights_resident) {
    std::vector<Interval> loaded(g.ops.size(), Interval{-1, -1});
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box* need = &geo.need[static_cast<size_t>(t) * locals];
      for (size_t pos = 0; pos < g.ops.size(); ++pos) {
        const Op& op = net.op(g.ops[pos]);
        const Interval c = need[static_cast<size_t>(g.out_local[pos])].c;
        if (keep_slices && c == loaded[pos]) continue;  // the slice is still on chip
        loaded[pos] = c;
        const int64_t slice = weight_bytes_for(net, op, c);
        const int64_t table = table_bytes_for(net, op, c);
        gs.traffic.weights_read += slice;
        gs.traffic.requant_tables_read += table;
        const int64_t cycles = dma_cycles_for_bytes(machine, slice + table);
        load[static_cast<size_t>(t)] += cycles;
        if (t == 0) gs.prologue_weight_cycles += cycles;
      }
    }
  }
  if (m.weights_resident) {
    for (int op : g.ops) {
      const Op& o = net.op(op);
      gs.traffic.weights_read += o.weight_bytes;
      gs.traffic.requant_tables_read += o.requant_table_bytes;
      resident_weight_cycles +=
          dma_cycles_for_bytes(machine, o.weight_bytes + o.requant_table_bytes);
    }
  }
  for (int64_t t = 0; t < geo.tiles; ++t) {
    gs.load_cycles += load[static_cast<size_t>(t)];
    gs.compute_cycles += compute[static_cast<size_t>(t)];
    gs.store_cycles += store[static_cast<size_t>(t)];
  }
  if (m.weights_resident) gs.prologue_weight_cycles = resident_weight_cycles;
  if (options.prefetch_occupied != nullptr) {
    // The prologue is on chip when the group starts.
    if (m.weights_resident) {
      resident_weight_cycles = 0;
    } else {
      load[0] -= gs.prologue_weight_cycles;
      gs.load_cycles -= gs.prologue_weight_cycles;
    }
  }
  const auto T = static_cast<size_t>(geo.tiles);
  if (m.double_buffered) {
    // Tile t computes while tile t+1 loads and tile t-1 stores; the loads and the stores share
    // one DRAM bus, so they take their sum (docs/scheduler.md, "Cycles").
    int64_t cycles = resident_weight_cycles + load[0];
    int64_t last_load_end = cycles;  // the LOAD engine's last DMA (with its slot's stores)
    for (size_t t = 0; t < T; ++t) {
      const int64_t next_load = t + 1 < T ? load[t + 1] : 0;
      const int64_t prev_store = t > 0 ? store[t - 1] : 0;
      if (t + 2 == T) last_load_end = cycles + next_load + prev_store;
      cycles += std::max(compute[t], next_load + prev_store);
    }
    gs.cycles = cycles + store[T - 1];
    gs.tail_cycles = gs.cycles - last_load_end;
    gs.tail_dma_cycles = store[T - 1] + (T >= 2 ? store[T - 2] : 0);
  } else {
    gs.cycles = resident_weight_cycles + gs.load_cycles + gs.compute_cycles + gs.store_cycles;
    gs.tail_cycles = compute[T - 1] + store[T - 1];
    gs.tail_dma_cycles = store[T - 1];
  }
  if (cutoff.cycles >= 0 && gs.cycles > cutoff.cycles) {
    return fail("takes " + std::to_string(gs.cycles) + " cycles, over the cutoff " +
                std::to_string(cutoff.cycles));
  }
  if (cutoff.bytes >= 0 && gs.traffic.total() > cutoff.bytes) {
    return fail("moves " + std::to_string(gs.traffic.total()) + " bytes, over the cutoff " +
                std::to_string(cutoff.bytes));
  }
  if (cutoff.active()) {
    if (auto placed = place_buffers(net, machine, g, geo, m, options, kept, keep_slices, gs);
        !placed.ok())
      return placed.failure();
  }
  // Names last: only a mapping that is kept needs them.
  for (BufferAlloc& b : gs.buffers) {
    if (b.role == BufferRole::Weights) {
      b.name = "w:" + net.op(b.op).name;
    } else if (b.role == BufferRole::Accumulator) {
      b.name = "acc:" + net.op(b.op).name;
    } else {
      b.name = net.tensor(b.tensor).name;
    }
    if (b.copy == 1) b.name += "#1";
  }
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
  if (op.kind != OpKind::Concat) return true;
  // Producers store into a view's channel slices, so each input must be stored by a group and
  // nowhere else: not a network input (never stored), not a network output (its own region),
  // not an input of a second Concat or twice of this one (one slice only). Codegen refuses these
  // views (docs/codegen.md "Concat"); the Concat is then an on-chip copy like any group (found by
  // the bytes bound).
  for (int x : op.inputs) {
    const Tensor& t = net.tensor(x);
    if (net.op(t.producer).kind == OpKind::Input || t.network_output) return false;
    if (std::count(op.inputs.begin(), op.inputs.end(), x) > 1) return false;  // two slices
    for (int c : t.consumers)
      if (c != ops[0] && net.op(c).kind == OpKind::Concat) return false;
  }
  return true;
}

}  // namespace

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

Mapping mapping_of(const GroupSchedule& group) {
  Mapping m;
  m.row_tiles = group.row_tiles;
  m.col_tiles = group.col_tiles;
  m.channel_tiles = group.channel_tiles;
  m.halo = group.halo;
  m.weights_resident = group.weights_resident;
  m.double_buffered = group.double_buffered;
  m.weight_sweep = group.weight_sweep;
  m.op_slices = group.op_slices;
  return m;
}

Result<GroupSchedule> plan_prefetched(const Net& net, const Machine& machine,
                                      const GroupSchedule& previous, const GroupSchedule& next,
                                      const PlanOptions& options) {
  if (previous.dram_view || next.dram_view) return fail("prefetch: a DRAM view group");
  if (next.prologue_weight_cycles <= 0) return fail("prefetch: no prologue weights");
  // The previous group's bytes, merged per scratchpad, pinned at step -1.
  std::vector<AllocRequest> occupied;
  {
    std::vector<std::pair<int, Interval>> ranges;
    for (const auto& b : previous.buffers)
      if (b.size_bytes > 0) ranges.push_back({b.scratchpad, {b.offset, b.offset + b.size_bytes}});
    std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second.b < b.second.b;
    });
    for (size_t i = 0; i < ranges.size();) {
      const int pad = ranges[i].first;
      Interval r = ranges[i].second;
      size_t j = i + 1;
      for (; j < ranges.size() && ranges[j].first == pad && ranges[j].second.b <= r.e; ++j)
        r.e = std::max(r.e, ranges[j].second.e);
      AllocRequest pin;
      pin.size_bytes = r.size();
      pin.first_step = pin.last_step = -1;
      pin.scratchpad = pad;
      pin.fixed_offset = r.b;
      occupied.push_back(pin);
      i = j;
    }
  }
  PlanOptions with = options;
  with.prefetch_occupied = &occupied;
  auto planned = evaluate_mapping(net, machine, next.ops, mapping_of(next), with);
  if (!planned.ok()) return fail("prefetch: " + planned.reason());
  GroupSchedule gs = std::move(planned).value();
  gs.prefetched = true;
  gs.prefetch_wait_cycles = std::max<int64_t>(
      0, gs.prologue_weight_cycles + previous.tail_dma_cycles - previous.tail_cycles);
  gs.cycles += gs.prefetch_wait_cycles;
  return gs;
}

bool better(const GroupSchedule& a, const GroupSchedule& b, Objective objective) {
  if (objective == Objective::Bytes) {
    if (a.traffic.total() != b.traffic.total()) return a.traffic.total() < b.traffic.total();
    return a.cycles < b.cycles;
  }
  if (a.cycles != b.cycles) return a.cycles < b.cycles;
  return a.traffic.total() < b.traffic.total();
}

namespace {

// The least DRAM bytes a group can move: every stored output and weight once, and every input
// once unless a window skips rows or columns (then row or column tiles may read part of it).
int64_t bytes_lower_bound(const Net& net, const GroupInfo& g) {
  const bool skips = skips_rows_or_columns(net, g.ops);
  int64_t bytes = 0;
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if ((g.is_input[l] && !skips) || g.stored[l]) bytes += net.tensor_bytes(g.tensors[l]);
  }
  for (int op : g.ops) bytes += net.op(op).weight_bytes + net.op(op).requant_table_bytes;
  return bytes;
}

// Whether two mappings split the group into the same tiles (the same tiling).
bool same_tiling(const Mapping& a, const Mapping& b) {
  return a.row_tiles == b.row_tiles && a.col_tiles == b.col_tiles &&
         a.channel_tiles == b.channel_tiles;
}

Result<GroupSchedule> search_group(const Net& net, const Machine& machine,
                                   const std::vector<int>& ops, const PlanOptions& options,
                                   bool first_fit, const Mapping* start = nullptr,
                                   int64_t cycle_cutoff = -1) {
  if (auto s = check_group(net, ops, options); !s.ok()) return s.failure();
  if (is_view_group(net, ops, options)) return view_group(net, ops);
  const GroupInfo g = describe(net, ops);
  // Past max_group_ops only a sweep is planned (check_group let it through as one).
  const std::vector<Mapping> mappings = ops.size() > static_cast<size_t>(options.max_group_ops)
                                            ? std::vector<Mapping>{}
                                            : enumerate_mappings(net, ops, options);
  const int64_t lower_bound = bytes_lower_bound(net, g);
  bool found = false;
  GroupSchedule best;
  std::string last_reason = "no mapping";
  TileGeometry geo;
  Mapping geo_of{0, 0, 0};     // the tiling `geo` holds
  Mapping seen_of{0, 0, 0};    // the tiling of the last mapping considered
  bool resident_fits = false;  // in the current geometry
  bool bound_reached = false;  // bytes objective: nothing can beat the lower bound
  int geometries_since_feasible = -1;
  // Per class of the current tiling's mappings (0: recomputed halos, double-buffered; 1:
  // recomputed halos, single-buffered; 2: cached halos, never double-buffered): -1 not yet
  // known, 1 nothing of it can win (below).
  int skip_class[3] = {-1, -1, -1};
  // Per halo mode of the current tiling: its summed compute and its traffic floor
  // (SeparableTiling; -1: the axes do not separate, -2: not computed yet).
  int64_t tiling_compute[2] = {-2, -2}, tiling_floor[2] = {-2, -2};
  SeparableTiling separable(net, machine, g);
  // The per-tile boxes of tiling `m` (from the runs where the axes separate) and their figures.
  auto build_geometry = [&](const Mapping& m, TileGeometry& into) {
    if (!separable.tile(m, into)) into = tile_group(net, g, m);
    measure_geometry(net, machine, g, into);
  };
  // DRAM cycles of `bytes`, rounded down: no DMA moves them faster (docs/timing.md).
  auto dram_floor = [&](int64_t bytes) {
    return static_cast<int64_t>(static_cast<double>(bytes) / machine.dram_bytes_per_cycle);
  };
  // The fewest cycles a mapping of the current tiling's class can take: its summed COMPUTE,
  // and its DMA (the least bytes it moves, loads and stores on one bus), which a double-buffered
  // mapping overlaps with the compute and a single-buffered one adds to it; -1: unknown.
  // Prefetched weights (loaded before the group) are not on its DMA path.
  const bool dma_on_path = options.prefetch_occupied == nullptr;
  auto bytes_floor = [&](const Mapping& m) {
    const size_t h = m.halo == HaloMode::Cache;
    if (tiling_floor[h] == -2) tiling_floor[h] = separable.bytes_floor(m, m.halo);
    return tiling_floor[h];
  };
  auto cycle_floor = [&](const Mapping& m) -> int64_t {
    const size_t h = m.halo == HaloMode::Cache;
    if (tiling_compute[h] == -2) tiling_compute[h] = separable.compute_cycles(m, m.halo);
    const int64_t compute = tiling_compute[h];
    if (compute < 0 || !dma_on_path) return compute;
    const int64_t dma = dram_floor(std::max<int64_t>(0, bytes_floor(m)));
    return m.double_buffered ? std::max(compute, dma) : compute + dma;
  };
  // Latency with a caller's cutoff: a group whose floor (its MACs on the whole array, or its
  // least bytes over the DRAM bandwidth) exceeds it has no mapping the caller can use, so the
  // first feasible one answers (plan_group's contract).
  int64_t group_macs = 0;
  for (int op : ops) group_macs += net.op(op).macs;
  const bool hopeless =
      !first_fit && options.objective == Objective::Latency && cycle_cutoff >= 0 && dma_on_path &&
      std::max(group_macs / machine.macs_per_cycle(), dram_floor(lower_bound)) > cycle_cutoff;
  // The current tiling's buffer sizes from its runs (sizes_known: it separates), for the demand
  // check below.
  BufferSizes sizes;
  Mapping sizes_of{0, 0, 0};
  bool sizes_known = false, sizes_exact = false, tiling_fits = true;
  std::vector<char> sizes_kept;  // kept_inputs of the tiling (none where not exact: a floor)
  // The last mapping those checks rejected, while no later mapping set `last_reason`: if
  // nothing fits, the search reports its failure as evaluating it reports it.
  std::optional<Mapping> rejected;
  std::vector<BufferAlloc> scratch_buffers;
  const std::vector<int64_t> capacities = machine.capacities();
  // Latency, once a mapping fits: what a mapping must not exceed to matter (the best so far,
  // or the caller's cutoff when lower).
  auto cutoff = [&]() {
    return cycle_cutoff >= 0 ? std::min(cycle_cutoff, best.cycles) : best.cycles;
  };
  // First fit (the paper's greedy): shrink the tile with resident weights first; stream
  // weights per tile only when no tile size lets them stay.
  std::vector<Mapping> ordered = mappings;
  // A per-channel group's channel splits are a last resort (enumerate_mappings): they come
  // after every whole-channel mapping and are tried only when none of those fits.
  const bool channel_split_group = is_channel_split_group(net, ops);
  auto last_resort = [&](const Mapping& m) { return channel_split_group && m.channel_tiles > 1; };
  if (first_fit) {
    std::stable_partition(ordered.begin(), ordered.end(),
                          [](const Mapping& m) { return m.weights_resident; });
    std::stable_partition(ordered.begin(), ordered.end(),
                          [&](const Mapping& m) { return !last_resort(m); });
  }
  auto before_start = [&](const Mapping& m) {
    if (start == nullptr) return false;
    if (m.row_tiles != start->row_tiles) return m.row_tiles < start->row_tiles;
    if (m.col_tiles != start->col_tiles) return m.col_tiles < start->col_tiles;
    return m.channel_tiles < start->channel_tiles;
  };
  // Resident weights that alone exceed their scratchpad rule out every resident mapping.
  int64_t resident_weight_bytes = 0;
  for (int op : ops) {
    resident_weight_bytes += onchip_weight_bytes(net, machine, net.op(op),
                                                 full_box(net.tensor(net.op(op).output).shape).c);
  }
  const ScratchpadView& weight_pad =
      machine.scratchpads[static_cast<size_t>(machine.scratchpad(BufferKind::Weights))];
  const bool resident_possible = resident_weight_bytes <= weight_pad.size_bytes;
  for (const Mapping& m : ordered) {
    if (found && last_resort(m)) break;
    if (before_start(m)) continue;
    if (m.weights_resident && !resident_possible) {
      last_reason = "resident weights need " + std::to_string(resident_weight_bytes) +
                    " bytes, scratchpad '" + weight_pad.name + "' has " +
                    std::to_string(weight_pad.size_bytes);
      rejected.reset();
      continue;
    }
    const bool new_geometry = !same_tiling(m, seen_of);
    if (new_geometry) {
      seen_of = m;
      // Pruning (documented in docs/scheduler.md, "Search speed"): once the bytes lower bound
      // is met, later (smaller) tiles can only tie; past the first geometry that fits, try at
      // most the objective's search depth more (-1: all).
      if (bound_reached && options.objective == Objective::Bytes) break;
      const int depth = options.objective == Objective::Bytes ? options.search_depth_bytes
                                                              : options.search_depth_latency;
      if (depth >= 0 && geometries_since_feasible >= 0 && ++geometries_since_feasible > depth)
        break;
      resident_fits = false;
      // Latency: a class of this tiling's mappings whose cycle floor (cycle_floor) exceeds the
      // best so far cannot win; skipping it changes no result (docs/scheduler.md "Search
      // speed"). A cached halo computes and reads less. Bytes: likewise a tiling whose
      // activation traffic plus every weight once exceeds the best so far. Decided at the
      // tiling's first mapping of each class.
      std::fill(std::begin(skip_class), std::end(skip_class), -1);
      std::fill(std::begin(tiling_compute), std::end(tiling_compute), -2);
      std::fill(std::begin(tiling_floor), std::end(tiling_floor), -2);
    }
    int& skip = skip_class[m.halo == HaloMode::Cache ? 2 : m.double_buffered ? 0 : 1];
    if (skip < 0) {
      skip = found &&
             (options.objective == Objective::Latency ? cycle_floor(m) > cutoff()
                                                      : bytes_floor(m) > best.traffic.total());
    }
    if (skip == 1) continue;
    // Streamed weights only add bytes; try them for bytes only when resident ones do not fit.
    if (!m.weights_resident && resident_fits && options.objective == Objective::Bytes) continue;
    // A mapping whose buffers fail allocation's demand check (check_demand) is rejected before
    // its tiling's per-tile boxes are built, with the failure evaluate_with would give: its
    // requests are the same, sized from the runs (docs/scheduler.md "Search speed"). Where the
    // axes do not separate, sized from the clean tiles: smaller or equal, so a failure still
    // proves the mapping cannot fit.
    if (!same_tiling(m, sizes_of)) {
      sizes_known = separable.sizes(m, sizes, sizes_exact);
      sizes_of = m;
      tiling_fits = !sizes_known || tiling_may_fit(machine, g, sizes, options, capacities);
      if (sizes_known) {
        sizes_kept =
            sizes_exact ? separable.kept_inputs(m) : std::vector<char>(g.tensors.size(), 0);
      }
    }
    if (!tiling_fits) {
      rejected = m;
      continue;
    }
    if (sizes_known) {
      const bool keep_slices = GroupSchedule::keeps_weight_slices(m.weights_resident, m.row_tiles,
                                                                  m.col_tiles, m.channel_tiles);
      const auto requests = buffer_requests(net, machine, g, sizes, nullptr, m, options, sizes_kept,
                                            keep_slices, scratch_buffers);
      if (auto fits = check_demand(requests, capacities); !fits.ok()) {
        rejected = m;
        continue;
      }
    }
    rejected.reset();
    if (!same_tiling(m, geo_of)) {
      build_geometry(m, geo);
      geo_of = m;
    }
    Cutoff over;
    if (found && options.objective == Objective::Latency) over.cycles = cutoff();
    if (found && options.objective == Objective::Bytes) over.bytes = best.traffic.total();
    auto r = evaluate_with(net, machine, g, geo, m, options, over);
    if (!r.ok()) {
      last_reason = r.reason();
      continue;
    }
    if (first_fit || hopeless) return r;
    if (m.weights_resident) resident_fits = true;
    if (geometries_since_feasible < 0) geometries_since_feasible = 0;
    if (r.value().traffic.total() <= lower_bound) bound_reached = true;
    if (!found || better(r.value(), best, options.objective)) {
      best = std::move(r).value();
      found = true;
    }
  }
  if (!found && rejected) {
    TileGeometry rejected_geo;
    build_geometry(*rejected, rejected_geo);
    auto r = evaluate_with(net, machine, g, rejected_geo, *rejected, options);
    if (r.ok()) return fail("internal: a mapping the demand check rejected fits");
    last_reason = r.reason();
  }
  if (options.allow_weight_sweep && !first_fit) {
    for (const Mapping& m : enumerate_sweep_mappings(net, machine, ops)) {
      auto r = evaluate_sweep(net, machine, g, m, options);
      if (!r.ok()) {
        if (!found) last_reason = r.reason();
        continue;
      }
      if (hopeless) return r;
      if (!found || better(r.value(), best, options.objective)) {
        best = std::move(r).value();
        found = true;
      }
    }
  }
  if (!found) return fail(last_reason);
  return best;
}

}  // namespace

Result<GroupSchedule> plan_group(const Net& net, const Machine& machine,
                                 const std::vector<int>& ops, const PlanOptions& options,
                                 int64_t cycle_cutoff) {
  return search_group(net, machine, ops, options, false, nullptr,
                      options.objective == Objective::Latency ? cycle_cutoff : -1);
}

int64_t prefetch_saving_bound(const Net& net, const Machine& machine, const std::vector<int>& ops) {
  int64_t cycles = 0;
  for (int op : ops) {
    const Op& o = net.op(op);
    cycles += dma_cycles_for_bytes(machine, o.weight_bytes + o.requant_table_bytes);
  }
  return cycles;
}

Result<GroupSchedule> plan_group_first_fit(const Net& net, const Machine& machine,
                                           const std::vector<int>& ops, const PlanOptions& options,
                                           const Mapping* start) {
  return search_group(net, machine, ops, options, true, start);
}

GroupBound group_lower_bound(const Net& net, const Machine& machine, const std::vector<int>& ops) {
  GroupBound bound;
  if (ops.size() == 1 &&
      (net.op(ops[0]).kind == OpKind::Reshape || net.op(ops[0]).kind == OpKind::Concat)) {
    return bound;  // possibly a DRAM view: free
  }
  const GroupInfo g = describe(net, ops);
  // One tile: each input is read only where the outputs need it; more tiles only re-read
  // halos, caching never reads a byte twice. Not where a window skips rows or columns (a
  // strided 1x1 conv): tiles then leave out rows one tile's hull reads, so inputs count 0.
  const TileGeometry one = tile_group(net, g, Mapping{});
  const bool skips = skips_rows_or_columns(net, ops);
  int64_t read = 0, written = 0, macs = 0;
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if (g.is_input[l] && !skips) read += one.need[l].elements() * net.activation_bytes;
    if (g.stored[l]) written += net.tensor_bytes(g.tensors[l]);
  }
  for (int op : ops) {
    read += net.op(op).weight_bytes + net.op(op).requant_table_bytes;
    macs += net.op(op).macs;
  }
  bound.bytes = read + written;
  const auto dram_cycles = static_cast<int64_t>(static_cast<double>(std::max(read, written)) /
                                                machine.dram_bytes_per_cycle);
  bound.cycles = std::max(macs / machine.macs_per_cycle(), dram_cycles);
  return bound;
}

void finalize_schedule(const Net& net, const Machine& machine, Schedule& schedule) {
  schedule.traffic = {};
  schedule.cycles = 0;
  for (const auto& g : schedule.groups) {
    schedule.traffic += g.traffic;
    schedule.cycles += g.cycles;
  }
  schedule.macs = net.total_macs();
  schedule.compulsory_bytes =
      net.model_weight_bytes() + net.total_requant_table_bytes() + net.io_bytes();
  const int64_t compute_bound = ceil_div(schedule.macs, machine.macs_per_cycle());
  const auto memory_bound = static_cast<int64_t>(
      static_cast<double>(schedule.compulsory_bytes) / machine.dram_bytes_per_cycle + 0.999999);
  schedule.roofline_cycles = std::max(compute_bound, memory_bound);
  const BarrierBound barrier = barrier_bound(net, machine);
  schedule.lower_bound_cycles = std::max(schedule.roofline_cycles, barrier.cycles);
  const bool barrier_wins = barrier.cycles > schedule.roofline_cycles;
  schedule.lower_bound_barrier = barrier_wins ? net.op(barrier.barrier).name : "";
  schedule.lower_bound_tensor = barrier_wins ? net.tensor(barrier.tensor).name : "";
}

}  // namespace tessel::sched
