// The map space of a group: which groups may form, which mappings a group has (group tilings,
// channel splits, weight sweeps), and the mapping a planned group was evaluated with.
#include "scheduler/map_space.hpp"

#include <algorithm>
#include <string>

#include "scheduler/cost_model.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/weight_loads.hpp"

namespace tessel::sched {

bool is_weight_streaming_group(const Net& net, const std::vector<int>& ops) {
  // A pool by convs (its ones loaded as a table's) is no weight sweep.
  if (ops.empty() || !has_matrix_work(net.op(ops[0])) || net.op(ops[0]).pool_by_conv) return false;
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

bool is_attention_op(const Op& op) {
  return op.kind == OpKind::MatMul || op.kind == OpKind::RowSoftmax ||
         (op.kind == OpKind::Eltwise && op.lookup_table);
}

namespace {

bool is_token_linear(const Op& op) {
  const Window& w = op.window;
  return is_dense_conv(op) && op.groups == 1 && w.kernel_h == 1 && w.kernel_w == 1 &&
         w.stride_h == 1 && w.stride_w == 1 && w.pad_top == 0 && w.pad_bottom == 0 &&
         w.pad_left == 0 && w.pad_right == 0 && op.space_to_depth.channels == 0;
}

// An op that works on each token (row) alone: a token Linear, an Add, an Eltwise or a Norm.
bool is_token_op(const Op& op) {
  return is_token_linear(op) || op.kind == OpKind::Add || op.kind == OpKind::Eltwise ||
         op.kind == OpKind::Norm;
}

// The position of net op `op` in group `ops` (ascending), or -1.
int position_in(const std::vector<int>& ops, int op) {
  const auto it = std::lower_bound(ops.begin(), ops.end(), op);
  return it != ops.end() && *it == op ? static_cast<int>(it - ops.begin()) : -1;
}

// The most rows and columns of a tensor group `ops` (ascending) stores: one a network output or
// read outside the group; (1, 1) when it stores none. Tiles past these would be empty.
std::pair<int64_t, int64_t> stored_extent(const Net& net, const std::vector<int>& ops) {
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
  return {max_rows, max_cols};
}

}  // namespace

std::vector<char> attention_whole_ops(const Net& net, const std::vector<int>& ops) {
  std::vector<char> whole(ops.size(), 0);
  for (size_t pos = ops.size(); pos-- > 0;) {
    const int out = net.op(ops[pos]).output;
    bool read = false, only_whole = true;
    for (int consumer : net.tensor(out).consumers) {
      const int at = position_in(ops, consumer);
      if (at < 0) continue;
      read = true;
      const Op& reader = net.op(consumer);
      // A batch of sequences reads its second operand by sequences, as rows (deduce_input).
      const bool second_operand = reader.kind == OpKind::MatMul && reader.inputs.size() > 1 &&
                                  reader.inputs[1] == out && reader.inputs[0] != out &&
                                  reader.matmul.batch == 1;
      only_whole = only_whole && (second_operand || whole[static_cast<size_t>(at)] != 0);
    }
    whole[pos] = read && only_whole ? 1 : 0;
  }
  return whole;
}

Status check_attention_group(const Net& net, const std::vector<int>& ops) {
  const std::vector<char> whole = attention_whole_ops(net, ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = net.op(ops[i]);
    if (!is_attention_op(op) && !is_token_op(op))
      return fail("op '" + op.name + "' (" + to_string(op.kind) +
                  ") is not a MatMul, RowSoftmax, lookup table or token op (a token Linear, "
                  "Add, Eltwise or Norm)");
    // Run once, whole (K, V and what only they read): a token op; a MatMul's or RowSoftmax's
    // accumulators hold a row block, not every row.
    if (whole[i] != 0 && !is_token_op(op))
      return fail("op '" + op.name + "' (" + to_string(op.kind) +
                  ") is read whole (a MatMul's second operand) but is not a token op");
    if (op.kind != OpKind::MatMul || op.inputs.size() < 2 || op.matmul.batch > 1) continue;
    // A row block reads all of K (V): a group input, or made once by the first row block.
    const int producer = net.tensor(op.inputs[1]).producer;
    const int at = producer < 0 ? -1 : position_in(ops, producer);
    if (at >= 0 && whole[static_cast<size_t>(at)] == 0)
      return fail("op '" + op.name + "' reads '" + net.op(producer).name +
                  "' whole as its second operand, but other ops of the group read it by rows");
  }
  return {};
}

RunsOnce runs_once(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                   int64_t channels) {
  RunsOnce r;
  if (rows * cols * channels <= 1) return r;
  if (chunks_hidden(net, ops, rows, cols, channels)) {
    const HiddenChunks hc = hidden_chunks(net, ops);
    r.once.assign(ops.size(), 0);
    for (size_t pos = 0; pos < ops.size(); ++pos) r.once[pos] = hc.prefix(pos) ? 1 : 0;
    return r;
  }
  if (std::none_of(ops.begin(), ops.end(),
                   [&](int op) { return net.op(op).kind == OpKind::MatMul; }))
    return r;
  r.once = attention_whole_ops(net, ops);
  return r;
}

bool keeps_inputs(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                  int64_t channels) {
  if (GroupSchedule::keeps_inputs(rows, cols, channels)) return true;
  if (rows <= 1 || cols != 1 || channels != 1) return false;
  return std::any_of(ops.begin(), ops.end(),
                     [&](int op) { return net.op(op).kind == OpKind::MatMul; });
}

namespace {

// Read only by `next` (the next op of the chain), and not a network output.
bool only_read_by(const Net& net, int tensor, int next) {
  const Tensor& t = net.tensor(tensor);
  return !t.network_output && t.consumers.size() == 1 && t.consumers[0] == next;
}

}  // namespace

namespace {

// The chunked part `[A, E..., B, T...]` of group `ops`, A at position `a`; B's position, or 0.
int hidden_reducer_from(const Net& net, const std::vector<int>& ops, size_t a) {
  if (!is_token_linear(net.op(ops[a]))) return 0;
  size_t b = a + 1;
  while (b < ops.size() && net.op(ops[b]).kind == OpKind::Eltwise) ++b;
  if (b == ops.size() || !is_token_linear(net.op(ops[b]))) return 0;
  std::vector<int> hidden;  // A's and the E's outputs
  for (size_t i = a; i < b; ++i) {
    const Op& op = net.op(ops[i]);
    if (i > a && (op.inputs.size() != 1 || op.inputs[0] != net.op(ops[i - 1]).output)) return 0;
    if (!only_read_by(net, op.output, ops[i + 1])) return 0;
    hidden.push_back(op.output);
  }
  if (net.op(ops[b]).inputs[0] != hidden.back()) return 0;
  for (size_t i = b + 1; i < ops.size(); ++i) {
    const Op& op = net.op(ops[i]);
    if (op.kind != OpKind::Add && op.kind != OpKind::Eltwise && op.kind != OpKind::Norm) return 0;
    for (int in : op.inputs)
      if (std::find(hidden.begin(), hidden.end(), in) != hidden.end()) return 0;
  }
  return static_cast<int>(b);
}

}  // namespace

HiddenChunks hidden_chunks(const Net& net, const std::vector<int>& ops) {
  // A is the first token Linear after a (possibly empty) prefix of ops run whole by the first
  // chunk, whose chunked part has the [A, E..., B, T...] form.
  for (size_t a = 0; a + 1 < ops.size(); ++a) {
    if (const int b = hidden_reducer_from(net, ops, a); b > 0) return {static_cast<int>(a), b};
    if (!is_token_op(net.op(ops[a]))) return {};  // a prefix op: run whole by the first chunk
  }
  return {};
}

bool chunks_hidden(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                   int64_t channels) {
  return channels > 1 && rows * cols == 1 && hidden_chunks(net, ops).found();
}

void hidden_chunk_boxes(const Net& net, const std::vector<int>& ops, int64_t parts, int64_t k,
                        std::vector<Box>& need, std::vector<Box>& requested) {
  const HiddenChunks hc = hidden_chunks(net, ops);
  const bool last = k + 1 == parts;
  requested.assign(net.tensors.size(), Box{});
  std::vector<Box> whole(net.tensors.size());
  for (int op : ops) {
    const Tensor& t = net.tensor(net.op(op).output);
    bool stored = t.network_output;
    for (int consumer : t.consumers)
      stored |= !std::binary_search(ops.begin(), ops.end(), consumer);
    if (stored) whole[static_cast<size_t>(net.op(op).output)] = full_box(t.shape);
  }
  need = transfer(net, ops, whole).need;
  if (last) requested = whole;
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const int out = net.op(ops[pos]).output;
    Box& box = need[static_cast<size_t>(out)];
    if (static_cast<int>(pos) >= hc.producer && static_cast<int>(pos) < hc.reducer) {
      const int64_t channels = net.tensor(out).shape.c;
      box.c = {channels * k / parts, channels * (k + 1) / parts};
    } else if (static_cast<int>(pos) > hc.reducer && !last) {
      box = Box{};
    }
  }
}

Status check_group(const Net& net, const std::vector<int>& ops, const PlanOptions& options) {
  if (ops.empty()) return fail("empty group");
  if (ops.size() > static_cast<size_t>(options.max_group_ops) &&
      !(options.allow_weight_sweep && ops.size() <= static_cast<size_t>(options.max_sweep_ops) &&
        is_weight_sweep_group(net, ops))) {
    return fail("group longer than " + std::to_string(options.max_group_ops) + " ops");
  }
  const Op* attention = nullptr;  // the first RowSoftmax or activation MatMul of the group
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = net.op(ops[i]);
    if (op.kind == OpKind::Input) return fail("op '" + op.name + "' is a network input");
    if (i > 0 && ops[i] <= ops[i - 1]) return fail("group ops are not ascending");
    if ((op.kind == OpKind::Reshape || op.kind == OpKind::Slice || op.concat_rows) &&
        ops.size() > 1) {
      return fail("op '" + op.name + "' is a DRAM view (" + to_string(op.kind) +
                  ") and must be alone in its group");
    }
    if ((op.kind == OpKind::RowSoftmax || op.kind == OpKind::MatMul) && attention == nullptr)
      attention = &op;
    if (op.kind == OpKind::Softmax && ops.size() > 1) {  // docs/codegen.md "Host ops"
      return fail("op '" + op.name + "' (Softmax) runs on the host and must be alone in its group");
    }
  }
  // A Norm groups as a per-pixel op (no mapping splits its channels: docs/scheduler-mapping.md
  // "LayerNorm in a group"); a RowSoftmax or an activation MatMul only alone or in an attention
  // group ("Attention fusion"), checked once for the whole group.
  if (attention != nullptr && ops.size() > 1) {
    if (auto group = check_attention_group(net, ops); !group.ok())
      return fail("op '" + attention->name + "' (" + to_string(attention->kind) +
                  ") runs alone or in an attention group: " + group.reason());
  }
  return {};
}

std::vector<int64_t> channel_part_counts(int64_t channels, int64_t cols) {
  std::vector<int64_t> counts = {1};
  for (int64_t k = 2; k <= channels && k <= 1024; k *= 2) counts.push_back(k);
  if (cols > 0) {
    const int64_t blocks = (channels + cols - 1) / cols;
    for (int64_t w = 1; w <= blocks; ++w) counts.push_back((blocks + w - 1) / w);
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  }
  return counts;
}

std::vector<int64_t> unit_part_counts(const Net& net, const Machine& machine,
                                      const std::vector<int>& ops) {
  std::vector<int64_t> counts;
  if (ops.empty()) return counts;
  const Op& op = net.op(ops[0]);
  const int64_t unit = matrix_unit(net, machine, op);
  const int64_t channels = net.tensor(op.output).shape.c;
  if (unit <= 0) return counts;
  // Whole units; with a group a unit of whole blocks, whole blocks too.
  for (const int64_t step :
       {unit, matrix_shape(net, machine, op).pack == 1 && unit % machine.matrix_cols == 0
                  ? machine.matrix_cols
                  : int64_t{0}}) {
    if (step <= 0 || channels % step != 0) continue;
    for (int64_t n = 2; n <= channels / step && n <= 1024; ++n)
      if (channels / step % n == 0) counts.push_back(n);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

int vector_rows_overflow(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                         int64_t channels) {
  const RunsOnce once = runs_once(net, ops, rows, cols, channels);
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const Op& op = net.op(ops[pos]);
    if (has_matrix_work(op) || op.kind == OpKind::Input || op.kind == OpKind::Reshape ||
        op.kind == OpKind::Slice || op.kind == OpKind::Softmax)
      continue;
    const int64_t h = net.tensor(op.output).shape.h;
    const int64_t tile_rows = once.at(pos) ? h : ceil_div(h, std::max<int64_t>(1, rows));
    if (tile_rows > kVectorRowsMax) return ops[pos];
  }
  return -1;
}

std::vector<Mapping> enumerate_mappings(const Net& net, const std::vector<int>& ops,
                                        const PlanOptions& options, const Machine* machine) {
  std::vector<Mapping> out;
  // Tiles split the tensors the group stores; more parts than their rows (columns) would only
  // add empty tiles.
  const auto [max_rows, max_cols] = stored_extent(net, ops);
  std::vector<int64_t> row_counts;
  for (int64_t k = 1; k <= max_rows;) {
    row_counts.push_back(k);
    k = k < 8 ? k + 1 : k + k / 4;
  }
  if (row_counts.back() != max_rows) row_counts.push_back(max_rows);
  const int64_t channels = net.tensor(net.op(ops[0]).output).shape.c;
  std::vector<int64_t> channel_counts = channel_part_counts(channels, options.channel_part_blocks);
  if (machine != nullptr) {  // none that splits a grouped conv's unit; its own counts added
    const std::vector<int64_t> units = unit_part_counts(net, *machine, ops);
    channel_counts.insert(channel_counts.end(), units.begin(), units.end());
    std::sort(channel_counts.begin(), channel_counts.end());
    channel_counts.erase(std::unique(channel_counts.begin(), channel_counts.end()),
                         channel_counts.end());
    std::erase_if(channel_counts,
                  [&](int64_t n) { return !channel_parts_fit_units(net, *machine, ops, n); });
  }
  std::vector<int64_t> col_counts = {1};
  for (int64_t k = 2; k <= 16 && k <= max_cols; k *= 2) col_counts.push_back(k);
  const bool runs_ops_once = !runs_once(net, ops, max_rows, 1, 1).once.empty();
  auto push = [&](int64_t rows, int64_t cols, int64_t channel_tiles) {
    if (vector_rows_overflow(net, ops, rows, cols, channel_tiles) >= 0) return;
    for (bool resident : {true, false}) {
      if (!resident && !options.allow_streamed_weights) continue;
      for (HaloMode halo : {HaloMode::Recompute, HaloMode::Cache}) {
        if (halo == HaloMode::Cache &&
            (!options.allow_cache || rows == 1 || cols > 1 || channel_tiles > 1 || runs_ops_once)) {
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
  // The MLP's hidden chunks: one row and one column tile, weights streamed one chunk at a time,
  // serialised (the second matrix op's bias and table stay in its one weight buffer).
  if (const HiddenChunks hc = hidden_chunks(net, ops);
      hc.found() && options.allow_streamed_weights) {
    const Op& producer = net.op(ops[static_cast<size_t>(hc.producer)]);
    for (int64_t parts :
         channel_part_counts(net.tensor(producer.output).shape.c, options.channel_part_blocks))
      if (parts > 1 && vector_rows_overflow(net, ops, 1, 1, parts) < 0)
        out.push_back({1, 1, parts, HaloMode::Recompute, false, false});
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

int64_t finest_sweep_slices(const Net& net, const Machine& machine, const Op& op) {
  const int64_t channels = std::max<int64_t>(1, net.tensor(op.output).shape.c);
  return ceil_div(channels, std::max<int64_t>(1, machine.matrix_cols));
}

std::vector<Mapping> enumerate_sweep_mappings(const Net& net, const Machine& machine,
                                              const std::vector<int>& ops) {
  std::vector<Mapping> out;
  // One tile of whole maps: no vector instruction may hold more rows than one instruction can.
  if (!is_weight_sweep_group(net, ops) || vector_rows_overflow(net, ops, 1, 1, 1) >= 0) return out;
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
  // The finest slicing: one column block per slice (ceil(C / cols) near-equal parts, any count),
  // the fewest weight bytes a sweep can hold; the halving budgets above stop at a power of two.
  Mapping finest = out.back();
  for (size_t pos = 0; pos < ops.size(); ++pos)
    if (is_dense_conv(net.op(ops[pos])))
      finest.op_slices[pos] = finest_sweep_slices(net, machine, net.op(ops[pos]));
  if (finest.op_slices != out.back().op_slices) out.push_back(std::move(finest));
  return out;
}

namespace {

bool power_of_two(int64_t n) {
  return n >= 1 && (n & (n - 1)) == 0;
}

Status check_sweep_mapping(const Net& net, const Machine& machine, const std::vector<int>& ops,
                           const Mapping& m) {
  if (!is_weight_sweep_group(net, ops))
    return fail(
        "nest: op_major (a weight sweep) needs a dense conv first, two dense convs at "
        "least, and only elementwise ops, Adds, windowed pools and Concats besides");
  if (m.row_tiles != 1 || m.col_tiles != 1 || m.channel_tiles != 1 || m.weights_resident ||
      !m.double_buffered || m.halo != HaloMode::Recompute)
    return fail("nest: op_major runs one tile, its weights streamed and double-buffered");
  if (const int op = vector_rows_overflow(net, ops, 1, 1, 1); op >= 0)
    return fail("nest: op_major's one tile gives op '" + net.op(op).name + "' more than " +
                std::to_string(kVectorRowsMax) + " rows in one vector instruction");
  if (m.op_slices.size() != ops.size())
    return fail("ops: " + std::to_string(m.op_slices.size()) + " slice counts for " +
                std::to_string(ops.size()) + " ops");
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const Op& op = net.op(ops[pos]);
    const std::string at = "ops[" + std::to_string(pos) + "].loops";
    if (!is_dense_conv(op)) {
      if (m.op_slices[pos] != 0)
        return fail(at + ": only a dense conv has slices of its own in a sweep");
      continue;
    }
    const int64_t most = std::max<int64_t>(1, net.tensor(op.output).shape.c / machine.matrix_cols);
    const int64_t finest = finest_sweep_slices(net, machine, op);
    if (m.op_slices[pos] != finest && (!power_of_two(m.op_slices[pos]) || m.op_slices[pos] > most))
      return fail(at + ": " + std::to_string(m.op_slices[pos]) + " slices of '" + op.name +
                  "' (a power of two up to " + std::to_string(most) + ", or " +
                  std::to_string(finest) + ": one per matrix column block)");
  }
  return {};
}

}  // namespace

Status check_hidden_chunks(const Net& net, const Machine& machine, const std::vector<int>& ops,
                           const Mapping& m) {
  const Op& producer = net.op(ops[static_cast<size_t>(hidden_chunks(net, ops).producer)]);
  const int64_t hidden = net.tensor(producer.output).shape.c;
  if (m.row_tiles != 1 || m.col_tiles != 1 || m.weights_resident || m.double_buffered)
    return fail(
        "loops (channels): hidden chunks run one row and one column tile, their weights "
        "streamed and not double-buffered");
  if (hidden % m.channel_tiles != 0 || hidden / m.channel_tiles % machine.matrix_rows != 0)
    return fail("loops (channels): " + std::to_string(m.channel_tiles) + " chunks of the " +
                std::to_string(hidden) + " hidden channels of '" + producer.name +
                "' (each chunk whole blocks of the " + std::to_string(machine.matrix_rows) +
                " matrix rows)");
  // Each chunk's ops hold their whole reduction (the reducer's is the chunks themselves).
  const HiddenChunks hc = hidden_chunks(net, ops);
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    const Op& op = net.op(ops[pos]);
    if (static_cast<int>(pos) != hc.reducer && reduction_chunk_blocks(net, machine, op) > 0)
      return fail("loops (channels): hidden chunks with '" + op.name +
                  "', whose reduction exceeds the weights' scratchpad (reduction chunks)");
  }
  return {};
}

bool channel_parts_fit_units(const Net& net, const Machine& machine, const std::vector<int>& ops,
                             int64_t channel_tiles) {
  if (channel_tiles <= 1) return true;
  for (int index : ops) {
    const int64_t unit = matrix_unit(net, machine, net.op(index));
    if (unit <= 0) continue;
    const int64_t pack = matrix_shape(net, machine, net.op(index)).pack;
    const int64_t channels = net.tensor(net.op(index).output).shape.c;
    for (int64_t k = 1; k < channel_tiles; ++k)
      if (!starts_unit_slice(channels * k / channel_tiles, unit, pack)) return false;
  }
  return true;
}

Status check_mapping(const Net& net, const Machine& machine, const std::vector<int>& ops,
                     const Mapping& m) {
  if (m.weight_sweep) return check_sweep_mapping(net, machine, ops, m);
  const auto [max_rows, max_cols] = stored_extent(net, ops);
  if (m.row_tiles < 1 || m.row_tiles > max_rows)
    return fail("loops (rows): " + std::to_string(m.row_tiles) + " row tiles (1 to the " +
                std::to_string(max_rows) + " rows of the stored outputs)");
  if (m.col_tiles < 1 || m.col_tiles > max_cols)
    return fail("loops (cols): " + std::to_string(m.col_tiles) + " column tiles (1 to the " +
                std::to_string(max_cols) + " columns of the stored outputs)");
  const int64_t channels = net.tensor(net.op(ops[0]).output).shape.c;
  if (m.channel_tiles != 1 && hidden_chunks(net, ops).found()) {
    if (auto s = check_hidden_chunks(net, machine, ops, m); !s.ok()) return s;
  } else if (m.channel_tiles != 1) {
    if (!is_weight_streaming_group(net, ops) && !is_channel_split_group(net, ops))
      return fail(
          "loops (channels): channel tiles need a conv or Gemm followed only by "
          "elementwise ops, or a group of per-channel ops");
    const std::vector<int64_t> counts = channel_part_counts(channels, machine.matrix_cols);
    const std::vector<int64_t> units = unit_part_counts(net, machine, ops);
    if (!std::binary_search(counts.begin(), counts.end(), m.channel_tiles) &&
        std::find(units.begin(), units.end(), m.channel_tiles) == units.end())
      return fail("loops (channels): " + std::to_string(m.channel_tiles) +
                  " channel tiles (a power of two up to " +
                  std::to_string(std::min<int64_t>(channels, 1024)) +
                  ", or ceil(B / w) parts of the B = " +
                  std::to_string((channels + machine.matrix_cols - 1) / machine.matrix_cols) +
                  " column blocks)");
    if (!channel_parts_fit_units(net, machine, ops, m.channel_tiles))
      return fail("loops (channels): " + std::to_string(m.channel_tiles) +
                  " channel tiles split a grouped conv's block of groups (one conv instruction's "
                  "unit, docs/codegen.md \"Grouped convolution\")");
  }
  if (m.halo == HaloMode::Cache &&
      (m.row_tiles == 1 || m.col_tiles > 1 || m.channel_tiles > 1 || m.double_buffered))
    return fail(
        "halo: cache keeps rows between row tiles alone (more than one, no column or "
        "channel tiles) and is never double-buffered");
  // An attention group's row blocks have no halo, and its K and V, made once, are whole.
  if (m.halo == HaloMode::Cache &&
      !runs_once(net, ops, m.row_tiles, m.col_tiles, m.channel_tiles).once.empty())
    return fail("halo: cache in a group with ops run once (its K and V projections)");
  if (const int op = vector_rows_overflow(net, ops, m.row_tiles, m.col_tiles, m.channel_tiles);
      op >= 0)
    return fail("loops (rows): " + std::to_string(m.row_tiles) + " row tiles give op '" +
                net.op(op).name + "' more than " + std::to_string(kVectorRowsMax) +
                " rows in one vector instruction");
  return {};
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

}  // namespace tessel::sched
