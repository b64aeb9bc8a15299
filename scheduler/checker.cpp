// The checker: derives lifetimes and reads from the group's ops, never from the allocator.
#include "scheduler/checker.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/map_space.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched {

namespace {

std::string range_str(int64_t b, int64_t e) {
  return "[" + std::to_string(b) + ", " + std::to_string(e) + ")";
}

struct Span {
  int first = 0;
  int last = -1;
};

// The tiling rule (restated here on purpose): tile (r, c, k) asks each stored tensor for the
// r-th of row_tiles near-equal row parts, the c-th column part and the k-th channel part.
std::vector<std::vector<Box>> tile_boxes(const Net& net, const GroupSchedule& g) {
  std::vector<char> in_group(net.ops.size(), 0);
  for (int op : g.ops) in_group[static_cast<size_t>(op)] = 1;
  std::vector<std::vector<Box>> tiles;
  if (chunks_hidden(net, g.ops, g.row_tiles, g.col_tiles, g.channel_tiles)) {
    // The MLP's hidden chunks: tile k computes the hidden tensors' channel part k
    // (hidden_chunk_boxes, the rule every stage reads).
    std::vector<Box> need, requested;
    for (int64_t k = 0; k < g.channel_tiles; ++k) {
      hidden_chunk_boxes(net, g.ops, g.channel_tiles, k, need, requested);
      tiles.push_back(need);
    }
    return tiles;
  }
  auto part = [](int64_t extent, int64_t parts, int64_t i) {
    return Interval{extent * i / parts, extent * (i + 1) / parts};
  };
  for (int64_t r = 0; r < g.row_tiles; ++r) {
    for (int64_t c = 0; c < g.col_tiles; ++c) {
      for (int64_t k = 0; k < g.channel_tiles; ++k) {
        std::vector<Box> requested(net.tensors.size());
        for (int t : g.outputs) {
          const Shape3 s = net.tensor(t).shape;
          Box box{part(s.c, g.channel_tiles, k), part(s.h, g.row_tiles, r),
                  part(s.w, g.col_tiles, c)};
          requested[static_cast<size_t>(t)] = box.empty() ? Box{} : box;
        }
        tiles.push_back(transfer(net, g.ops, requested).need);
      }
    }
  }
  return tiles;
}

// Replays op `op` writing buffer y (its output) over buffer x (its input) for one tile, step by
// step: a conv step is `rows_per_step` output rows (one conv instruction), any other op's step
// one output pixel. A step reads its whole window, then writes its output; the replay fails at
// the first step that reads a byte an earlier step already overwrote.
Status replay_deep_reuse(const Op& op, const BufferAlloc& x, const Box& in, const BufferAlloc& y,
                         const Box& out, int64_t rows_per_step) {
  const int64_t in_row = in.w.size() * x.pixel_bytes;
  const int64_t out_row = out.w.size() * y.pixel_bytes;
  int64_t kh = 1, sh = 1, dh = 1, pt = 0, kw = 1, sw = 1, dw = 1, pl = 0;
  bool whole_input = false;
  switch (op.kind) {
    case OpKind::Conv:
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      kh = op.window.kernel_h, sh = op.window.stride_h, dh = op.window.dilation_h;
      pt = op.window.pad_top;
      kw = op.window.kernel_w, sw = op.window.stride_w, dw = op.window.dilation_w;
      pl = op.window.pad_left;
      break;
    case OpKind::Pad:
      pt = op.window.pad_top;
      pl = op.window.pad_left;
      break;
    case OpKind::Eltwise:
    case OpKind::Add:
      break;
    default:
      whole_input = true;
  }
  // Steps as (first row, rows, first column, columns) of the output box.
  struct Step {
    int64_t row, rows, col, cols;
  };
  std::vector<Step> steps;
  if (op.kind == OpKind::Conv) {
    for (int64_t r = out.h.b; r < out.h.e; r += rows_per_step) {
      steps.push_back({r, std::min(rows_per_step, out.h.e - r), out.w.b, out.w.size()});
    }
  } else {
    for (int64_t r = out.h.b; r < out.h.e; ++r) {
      for (int64_t c = out.w.b; c < out.w.e; ++c) steps.push_back({r, 1, c, 1});
    }
  }
  int64_t written = 0;  // bytes of y written by earlier steps, from y.offset up
  for (const Step& step : steps) {
    int64_t rb = in.h.b, re = in.h.e, cb = in.w.b, ce = in.w.e;
    if (!whole_input) {
      rb = std::max(in.h.b, step.row * sh - pt);
      re = std::min(in.h.e, (step.row + step.rows - 1) * sh + (kh - 1) * dh + 1 - pt);
      cb = std::max(in.w.b, step.col * sw - pl);
      ce = std::min(in.w.e, (step.col + step.cols - 1) * sw + (kw - 1) * dw + 1 - pl);
    }
    const int64_t clobber_b = y.offset;
    const int64_t clobber_e = y.offset + written;
    for (int64_t row = rb; row < re && cb < ce; ++row) {
      const int64_t read_b = x.offset + (row - in.h.b) * in_row + (cb - in.w.b) * x.pixel_bytes;
      const int64_t read_e = x.offset + (row - in.h.b) * in_row + (ce - in.w.b) * x.pixel_bytes;
      if (read_b < clobber_e && clobber_b < read_e) {
        return fail("output row " + std::to_string(step.row) + " of '" + op.name + "' reads '" +
                    x.name + "' bytes " + range_str(read_b, read_e) + " already overwritten by '" +
                    y.name + "' " + range_str(clobber_b, clobber_e));
      }
    }
    written = (step.row - out.h.b) * out_row + (step.col - out.w.b + step.cols) * y.pixel_bytes;
    if (step.cols == out.w.size()) written = (step.row + step.rows - out.h.b) * out_row;
  }
  return {};
}

// A buffer lies within the scratchpad it names.
Status check_placement(const std::string& where, const Machine& machine, const BufferAlloc& b) {
  if (b.scratchpad < 0 || b.scratchpad >= static_cast<int>(machine.scratchpads.size())) {
    return fail(where + "buffer '" + b.name + "' names no scratchpad");
  }
  const auto& pad = machine.scratchpads[static_cast<size_t>(b.scratchpad)];
  if (b.offset < 0 || b.offset + b.size_bytes > pad.size_bytes) {
    return fail(where + "buffer '" + b.name + "' at " +
                range_str(b.offset, b.offset + b.size_bytes) + " exceeds scratchpad '" + pad.name +
                "' of " + std::to_string(pad.size_bytes) + " bytes");
  }
  return {};
}

// A buffer is declared live over at least the steps `need` it is used.
Status check_lifetime(const std::string& where, const BufferAlloc& b, Span need) {
  if (b.first_step > need.first || b.last_step < need.last) {
    return fail(where + "buffer '" + b.name + "' is declared live over steps [" +
                std::to_string(b.first_step) + ", " + std::to_string(b.last_step) +
                "] but is used over [" + std::to_string(need.first) + ", " +
                std::to_string(need.last) + "]");
  }
  return {};
}

// Every pair of buffers i < j that share bytes of one scratchpad while both are used (over
// `required`), in order: `allowed(i, j, first)` (`first`: the first step both are used) says
// whether they may; the first refusal is the answer.
template <typename Allowed>
Status check_overlaps(const GroupSchedule& g, const std::vector<Span>& required, Allowed allowed) {
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    for (size_t j = i + 1; j < g.buffers.size(); ++j) {
      const BufferAlloc& a = g.buffers[i];
      const BufferAlloc& b = g.buffers[j];
      if (a.scratchpad != b.scratchpad) continue;
      if (a.offset >= b.offset + b.size_bytes || b.offset >= a.offset + a.size_bytes) continue;
      const int first = std::max(required[i].first, required[j].first);
      const int last = std::min(required[i].last, required[j].last);
      if (first > last) continue;  // never live together
      if (auto s = allowed(i, j, first); !s.ok()) return s;
    }
  }
  return {};
}

Status overlap_failure(const std::string& where, const Machine& machine, const BufferAlloc& a,
                       const BufferAlloc& b, int step) {
  return fail(where + "buffers '" + a.name + "' " + range_str(a.offset, a.offset + a.size_bytes) +
              " and '" + b.name + "' " + range_str(b.offset, b.offset + b.size_bytes) +
              " overlap in scratchpad '" +
              machine.scratchpads[static_cast<size_t>(a.scratchpad)].name +
              "' while both live at step " + std::to_string(step));
}

// Ops a weight sweep runs whole, as blocks of their own (every channel at once).
bool runs_whole(const Op& op) {
  return op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool || op.kind == OpKind::Concat;
}

bool is_dense(const Net& net, const GroupSchedule& g, size_t p) {
  const Op& op = net.op(g.ops[p]);
  return op.kind == OpKind::Conv && op.groups == 1;
}

// A group's loop nest, restated from its choices, and what its ops need of their tensors.
// Tile major (a group tiling): one loop over tiles (channel parts, rows, columns) around all
// ops, so an op's work in one tile is its own step. Op major (a weight sweep): blocks in turn,
// a dense conv and the elementwise ops after it looping over the conv's output-channel slices
// with their ops interleaved slice by slice, or a windowed pool or Concat run whole, so an
// op's step stands for its whole block. Per net tensor: its producer and last reader, whether
// the group touches, loads, stores or keeps it (kept: loaded once, the same box in every tile);
// per tile (a sweep: one) every tensor's box, and the largest part a buffer must hold (a
// sweep's slice-local tensor: one slice).
struct GroupNeeds {
  bool op_major = false;
  int hidden_reducer = -1;    // the MLP's hidden chunks: B, whose weights and sums live every tile
  RunsOnce once;              // the ops the first tile runs alone (a prefix, K and V)
  int last_step = 0;          // n + 1: the stores
  std::vector<int> pos_of;    // per net op: its position in the group, -1 outside
  std::vector<Span> op_span;  // per position: the steps its work is live over
  std::vector<int> producer, last_reader;  // per tensor: positions (-1: loaded / never read)
  std::vector<char> touched, loaded, stored, kept;
  std::vector<char> read_by_every_tile;  // read by an op not run once
  std::vector<std::vector<Box>> tiles;
  std::vector<int64_t> max_pixels, max_channels;
  // Op major: per position its block's first position; per block start its last step; per
  // phase (a slice of a conv's block; an op run whole joins the phase before it) its last step;
  // per position the phase its last work runs in.
  std::vector<size_t> block;
  std::vector<int> block_end, phase_last, end_phase;
  int position(int op) const {  // -1: not an op of the group
    return op >= 0 && op < static_cast<int>(pos_of.size()) ? pos_of[static_cast<size_t>(op)] : -1;
  }
  bool slice_local(size_t t) const {
    return op_major && producer[t] >= 0 && !stored[t] && last_reader[t] >= 0 &&
           block[static_cast<size_t>(last_reader[t])] == block[static_cast<size_t>(producer[t])];
  }
};

// An op-major nest's blocks and phases, checking its ops: a dense conv first, then per-slice
// elementwise ops of a conv's block, or pools and Concats run whole.
Status sweep_blocks(const std::string& where, const Net& net, const GroupSchedule& g,
                    GroupNeeds& u) {
  const size_t n = g.ops.size();
  if (g.row_tiles * g.col_tiles * g.channel_tiles != 1) return fail(where + "more than one tile");
  if (g.op_slices.size() != n) return fail(where + "slice counts do not match the ops");
  u.block.assign(n, 0);
  u.block_end.assign(n, 0);
  for (size_t p = 0; p < n; ++p) {
    const Op& op = net.op(g.ops[p]);
    const bool dense = is_dense(net, g, p);
    if (p == 0 && !dense) return fail(where + "does not start with a dense conv");
    const bool whole = runs_whole(op);
    if (!dense && !whole && op.kind != OpKind::Eltwise && op.kind != OpKind::Add)
      return fail(where + "op '" + op.name + "' cannot run per slice");
    if (dense != (g.op_slices[p] > 0) || g.op_slices[p] > net.tensor(op.output).shape.c)
      return fail(where + "op '" + op.name + "' has " + std::to_string(g.op_slices[p]) + " slices");
    if (!dense && !whole && runs_whole(net.op(g.ops[u.block[p - 1]])))
      return fail(where + "op '" + op.name + "' follows '" + net.op(g.ops[u.block[p - 1]]).name +
                  "', which runs whole, not per slice");
    u.block[p] = dense || whole ? p : u.block[p - 1];
    u.block_end[u.block[p]] = static_cast<int>(p) + 1;
  }
  // A stored tensor is stored after the phase that completes it; the compute of the phase after
  // next waits for that store, so its bytes are in use through the next phase (through the
  // group's end when no phase after next exists).
  u.end_phase.assign(n, -1);
  for (size_t p = 0; p < n; ++p) {
    if (is_dense(net, g, p)) {
      u.phase_last.insert(u.phase_last.end(), static_cast<size_t>(g.op_slices[p]), u.block_end[p]);
    } else if (runs_whole(net.op(g.ops[p]))) {
      u.phase_last.back() = std::max(u.phase_last.back(), static_cast<int>(p) + 1);
    }
    u.end_phase[p] = static_cast<int>(u.phase_last.size()) - 1;
  }
  return {};
}

// The loop nest of `g` into `u`: positions and each op's span (its step, or its block's).
Status loop_nest(const std::string& where, const Net& net, const GroupSchedule& g, GroupNeeds& u) {
  const size_t n = g.ops.size();
  u.op_major = g.weight_sweep;
  u.last_step = static_cast<int>(n) + 1;
  if (chunks_hidden(net, g.ops, g.row_tiles, g.col_tiles, g.channel_tiles)) {
    const HiddenChunks hc = hidden_chunks(net, g.ops);
    u.hidden_reducer = g.ops[static_cast<size_t>(hc.reducer)];
  }
  if (!g.weight_sweep) u.once = runs_once(net, g.ops, g.row_tiles, g.col_tiles, g.channel_tiles);
  u.pos_of.assign(net.ops.size(), -1);
  for (size_t p = 0; p < n; ++p) u.pos_of[static_cast<size_t>(g.ops[p])] = static_cast<int>(p);
  if (u.op_major)
    if (auto s = sweep_blocks(where, net, g, u); !s.ok()) return s;
  u.op_span.resize(n);
  for (size_t p = 0; p < n; ++p) {
    const int step = static_cast<int>(p) + 1;
    u.op_span[p] = u.op_major ? Span{static_cast<int>(u.block[p]) + 1, u.block_end[u.block[p]]}
                              : Span{step, step};
  }
  return {};
}

// Per tensor: producer, last reader, touched, loaded, stored, kept; the tiles' boxes and the
// largest part of each a buffer holds.
void tensor_needs(const Net& net, const GroupSchedule& g, GroupNeeds& u) {
  const size_t tensors = net.tensors.size();
  u.producer.assign(tensors, -1);
  u.last_reader.assign(tensors, -1);
  u.touched.assign(tensors, 0);
  u.loaded.assign(tensors, 0);
  u.stored.assign(tensors, 0);
  u.read_by_every_tile.assign(tensors, 0);
  for (size_t p = 0; p < g.ops.size(); ++p) {
    const Op& op = net.op(g.ops[p]);
    for (int t : op.inputs) {
      u.touched[static_cast<size_t>(t)] = 1;
      if (!u.once.at(p)) u.read_by_every_tile[static_cast<size_t>(t)] = 1;
      u.last_reader[static_cast<size_t>(t)] = static_cast<int>(p);
      const int producer = net.tensor(t).producer;
      if (producer < 0 || u.pos_of[static_cast<size_t>(producer)] < 0)
        u.loaded[static_cast<size_t>(t)] = 1;
    }
    u.touched[static_cast<size_t>(op.output)] = 1;
    u.producer[static_cast<size_t>(op.output)] = static_cast<int>(p);
    bool external = net.tensor(op.output).network_output;
    for (int c : net.tensor(op.output).consumers) external |= u.pos_of[static_cast<size_t>(c)] < 0;
    u.stored[static_cast<size_t>(op.output)] = external;
  }
  u.tiles = tile_boxes(net, g);
  // Kept inputs (keeps_inputs in map_space.hpp): loaded once, the same box in every tile.
  u.kept.assign(tensors, 0);
  const bool keeps = keeps_inputs(net, g.ops, g.row_tiles, g.col_tiles, g.channel_tiles);
  for (size_t t = 0; t < tensors; ++t) {
    if (!u.loaded[t] || !keeps) continue;
    u.kept[t] = 1;
    for (const auto& boxes : u.tiles) u.kept[t] = u.kept[t] && boxes[t] == u.tiles.front()[t];
  }
  u.max_pixels.assign(tensors, 0);
  u.max_channels.assign(tensors, 0);
  for (const auto& boxes : u.tiles) {
    for (size_t t = 0; t < boxes.size(); ++t) {
      if (boxes[t].empty()) continue;
      int64_t channels = boxes[t].c.size();
      if (u.slice_local(t)) {  // one slice of its block's conv
        const size_t conv = u.block[static_cast<size_t>(u.producer[t])];
        const int64_t all = net.tensor(net.op(g.ops[conv]).output).shape.c;
        channels = (all + g.op_slices[conv] - 1) / g.op_slices[conv];
      }
      u.max_pixels[t] = std::max(u.max_pixels[t], boxes[t].h.size() * boxes[t].w.size());
      u.max_channels[t] = std::max(u.max_channels[t], channels);
    }
  }
}

// The steps tensor `t` is used over: from its producer's span (0: loaded) to its last reader's,
// a stored tensor until its store (a sweep's early store: see sweep_blocks); in a group tiling,
// cached halos, ping-pong copies and kept inputs (loaded by the first tile, read by every tile)
// live over the whole tile.
Span tensor_span(const GroupSchedule& g, const GroupNeeds& u, size_t t) {
  const auto span_of = [&](int p) { return u.op_span[static_cast<size_t>(p)]; };
  Span need;
  need.first = u.producer[t] < 0 ? 0 : span_of(u.producer[t]).first;
  need.last = u.last_reader[t] >= 0 ? span_of(u.last_reader[t]).last : need.first;
  if (u.stored[t]) {
    int until = u.last_step;
    if (u.op_major) {
      const int ready = u.end_phase[static_cast<size_t>(std::max(u.producer[t], 0))];
      const int phases = static_cast<int>(u.phase_last.size());
      if (ready + 2 < phases) until = u.phase_last[static_cast<size_t>(ready + 1)];
    }
    need.last = std::max(need.last, until);
  }
  const bool ping_pong = g.double_buffered && (u.loaded[t] || u.stored[t]);
  // The output of an op run once (RunsOnce) that an op of every tile reads or a later tile
  // stores: made by the first tile, live over all.
  const bool once = u.producer[t] >= 0 && u.once.at(static_cast<size_t>(u.producer[t])) &&
                    (u.read_by_every_tile[t] || u.stored[t]);
  if (!u.op_major && (g.halo == HaloMode::Cache || ping_pong || u.kept[t] || once))
    need = {0, u.last_step};
  return need;
}

// The steps buffer `b` is used over (into `need`), checking that a tensor buffer holds a tensor
// of the group and is large enough for every tile, and that an op's buffer belongs to an op of
// the group.
Status buffer_need(const std::string& where, const Net& net, const GroupSchedule& g,
                   const GroupNeeds& u, const BufferAlloc& b, Span& need) {
  if (b.tensor >= 0) {
    const auto t = static_cast<size_t>(b.tensor);
    if (!u.touched[t])
      return fail(where + "buffer '" + b.name + "' holds a tensor the group never touches");
    need = tensor_span(g, u, t);
    if (b.pixel_bytes < u.max_channels[t] * net.activation_bytes ||
        b.size_bytes < u.max_pixels[t] * b.pixel_bytes) {
      return fail(where + "buffer '" + b.name + "' has " + std::to_string(b.size_bytes) +
                  " bytes of " + std::to_string(b.pixel_bytes) + "-byte pixels but a tile needs " +
                  std::to_string(u.max_pixels[t]) + " pixels of " +
                  std::to_string(u.max_channels[t] * net.activation_bytes) + " bytes");
    }
    return {};
  }
  if (b.role == BufferRole::Weights) {
    // Whole tile: resident weights, kept slices (GroupSchedule::keeps_weight_slices) and
    // double-buffered streamed slices (two copies ping-pong), a sweep's slice pair (it serves
    // every conv's slices); a slice reloaded every tile is written by the tile's loads (step
    // 0) and read at its op's step.
    // Hidden chunks: B's bias and table, loaded with its first chunk, are read by the last tile.
    const bool whole = u.op_major || g.weights_resident || g.keeps_weight_slices() ||
                       g.double_buffered || (b.op >= 0 && b.op == u.hidden_reducer);
    if (!whole && u.position(b.op) < 0)
      return fail(where + "buffer '" + b.name + "' belongs to no op of the group");
    need = whole ? Span{0, u.last_step}
                 : Span{0, u.op_span[static_cast<size_t>(u.position(b.op))].last};
    if (g.prefetched && b.copy == 0) need.first = -1;  // loaded during the previous group
    return {};
  }
  if (u.position(b.op) < 0)
    return fail(where + "buffer '" + b.name + "' belongs to no op of the group");
  need = u.op_span[static_cast<size_t>(u.position(b.op))];
  // Hidden chunks: B's accumulators add every tile's chunk; they live over whole tiles.
  if (b.role == BufferRole::Accumulator && b.op == u.hidden_reducer) need = {0, u.last_step};
  return {};
}

// Every tensor a tile holds has a buffer, and a second copy where a group tiling double-buffers
// it; streamed double-buffered weights have two copies (a sweep: the one slice pair).
Status check_copies(const std::string& where, const Net& net, const GroupSchedule& g,
                    const GroupNeeds& u) {
  std::vector<char> has_copy0(net.tensors.size(), 0), has_copy1(net.tensors.size(), 0);
  std::vector<char> weight_copy0(net.ops.size(), 0), weight_copy1(net.ops.size(), 0);
  int slice_buffers = 0;
  for (const BufferAlloc& b : g.buffers) {
    if (b.tensor >= 0) {
      (b.copy == 0 ? has_copy0 : has_copy1)[static_cast<size_t>(b.tensor)] = 1;
    } else if (b.role == BufferRole::Weights && b.op < 0) {
      ++slice_buffers;
    } else if (b.role == BufferRole::Weights && u.position(b.op) >= 0) {
      (b.copy == 0 ? weight_copy0 : weight_copy1)[static_cast<size_t>(b.op)] = 1;
    }
  }
  if (u.op_major && slice_buffers != 2) return fail(where + "needs two weight slice buffers");
  for (int op : g.ops) {
    const auto o = static_cast<size_t>(op);
    if (weight_copy0[o] && g.double_buffered && !g.weights_resident && !weight_copy1[o]) {
      return fail(where + "weights of op '" + net.op(op).name +
                  "' are streamed and double-buffered but have one copy");
    }
  }
  for (size_t t = 0; t < net.tensors.size(); ++t) {
    if (!u.touched[t] || u.max_pixels[t] == 0) continue;
    if (!has_copy0[t])
      return fail(where + "tensor '" + net.tensor(static_cast<int>(t)).name + "' has no buffer");
    // A kept input is loaded once and needs no second copy; a sweep's activations have one.
    const bool ping_pong = !u.op_major && (u.stored[t] || (u.loaded[t] && !u.kept[t]));
    if (g.double_buffered && ping_pong && !has_copy1[t]) {
      return fail(where + "tensor '" + net.tensor(static_cast<int>(t)).name +
                  "' is double-buffered but has one copy");
    }
  }
  return {};
}

// Two buffers of a group tiling that share bytes while both live: only deep reuse, y
// overwriting x at the step where x is read for the last time, replayed tile by tile.
Status check_deep_reuse(const std::string& where, const Net& net, const Machine& machine,
                        const GroupSchedule& g, const GroupNeeds& u,
                        const std::vector<Span>& required, size_t i, size_t j, int first) {
  const BufferAlloc& a = g.buffers[i];
  const BufferAlloc& b = g.buffers[j];
  const int last = std::min(required[i].last, required[j].last);
  const bool a_on_b = a.reuses == static_cast<int>(j);
  const bool b_on_a = b.reuses == static_cast<int>(i);
  const BufferAlloc& y = a_on_b ? a : b;
  const BufferAlloc& x = a_on_b ? b : a;
  const Span& ys = a_on_b ? required[i] : required[j];
  const Span& xs = a_on_b ? required[j] : required[i];
  const bool claimed =
      (a_on_b || b_on_a) && x.tensor >= 0 && y.tensor >= 0 && xs.last == ys.first && first == last;
  if (!claimed) return overlap_failure(where, machine, a, b, first);
  const int op_index = g.ops[static_cast<size_t>(ys.first - 1)];
  const Op& op = net.op(op_index);
  int input_index = -1;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    if (op.inputs[k] == x.tensor) input_index = static_cast<int>(k);
  }
  if (op.output != y.tensor || input_index < 0) {
    return fail(where + "buffer '" + y.name + "' claims to reuse '" + x.name +
                "' but is not produced from it");
  }
  for (const auto& boxes : u.tiles) {
    const Box& in = boxes[static_cast<size_t>(x.tensor)];
    const Box& out = boxes[static_cast<size_t>(y.tensor)];
    if (in.empty() || out.empty()) continue;
    const int64_t rows_per_step =
        g.rows_per_step.empty() ? 1 : g.rows_per_step[static_cast<size_t>(ys.first - 1)];
    if (auto s = replay_deep_reuse(op, x, in, y, out, rows_per_step); !s.ok()) {
      return fail(where + s.reason());
    }
  }
  return {};
}

// Every in-place link (BufferAlloc::reuses) of a sweep is legal: the same offset and layout, an
// elementwise op over an input it reads last that its block's conv does not read. A tensor
// buffer holds the whole box when its pixel has every channel, else one slice (the layout
// codegen uses); an in-place chain keeps one layout.
Status check_in_place_links(const std::string& where, const Net& net, const GroupSchedule& g,
                            const GroupNeeds& u) {
  auto holds_whole = [&](const BufferAlloc& b) {
    return b.pixel_bytes >=
           u.tiles.front()[static_cast<size_t>(b.tensor)].c.size() * net.activation_bytes;
  };
  for (const BufferAlloc& y : g.buffers) {
    if (y.reuses < 0) continue;
    if (y.reuses >= static_cast<int>(g.buffers.size()))
      return fail(where + "buffer '" + y.name + "' reuses no buffer");
    const BufferAlloc& x = g.buffers[static_cast<size_t>(y.reuses)];
    const int p = y.tensor >= 0 ? u.producer[static_cast<size_t>(y.tensor)] : -1;
    bool legal = p >= 0 && x.tensor >= 0 && !is_dense(net, g, static_cast<size_t>(p)) &&
                 !runs_whole(net.op(g.ops[static_cast<size_t>(p)])) && x.offset == y.offset &&
                 x.pixel_bytes == y.pixel_bytes && x.size_bytes == y.size_bytes &&
                 x.scratchpad == y.scratchpad;
    if (legal) {
      const auto xt = static_cast<size_t>(x.tensor);
      const Op& op = net.op(g.ops[static_cast<size_t>(p)]);
      const Op& conv = net.op(g.ops[u.block[static_cast<size_t>(p)]]);
      legal = std::find(op.inputs.begin(), op.inputs.end(), x.tensor) != op.inputs.end() &&
              u.last_reader[xt] == p && !u.stored[xt] &&
              std::find(conv.inputs.begin(), conv.inputs.end(), x.tensor) == conv.inputs.end() &&
              holds_whole(x) == holds_whole(y);
    }
    if (!legal)
      return fail(where + "buffer '" + y.name + "' cannot overwrite '" + x.name +
                  "' in place (same offset and layout, an elementwise op over an input it reads "
                  "last that its block's conv does not read)");
  }
  return {};
}

// Buffers of a sweep that share bytes while both live: only one in-place chain, every link
// legal (then slice k's output bytes are exactly the input bytes slice k consumed).
Status check_in_place_chains(const std::string& where, const Net& net, const Machine& machine,
                             const GroupSchedule& g, const GroupNeeds& u,
                             const std::vector<Span>& required) {
  if (auto s = check_in_place_links(where, net, g, u); !s.ok()) return s;
  std::vector<size_t> root(g.buffers.size());
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    size_t r = i;
    for (int guard = 0; g.buffers[r].reuses >= 0 && guard <= static_cast<int>(g.buffers.size());
         ++guard)
      r = static_cast<size_t>(g.buffers[r].reuses);
    root[i] = r;
  }
  return check_overlaps(g, required, [&](size_t i, size_t j, int first) {
    if (root[i] == root[j]) return Status{};
    return overlap_failure(where, machine, g.buffers[i], g.buffers[j], first);
  });
}

// A group's buffers against its loop nest: each lies in its scratchpad, holds what every tile
// needs and is declared live over every step it is used; every tensor has its copies; buffers
// that share bytes while both live are a deep-reuse claim, replayed (a group tiling), or one
// in-place chain (a weight sweep, whose blocks interleave slice by slice).
Status check_group_buffers(const Net& net, const Machine& machine, const GroupSchedule& g,
                           size_t group_index) {
  const std::string where =
      "group " + std::to_string(group_index) + (g.weight_sweep ? ": weight sweep: " : ": ");
  GroupNeeds u;
  if (auto s = loop_nest(where, net, g, u); !s.ok()) return s;
  tensor_needs(net, g, u);
  std::vector<Span> required(g.buffers.size());
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    const BufferAlloc& b = g.buffers[i];
    if (auto s = check_placement(where, machine, b); !s.ok()) return s;
    Span need;
    if (auto s = buffer_need(where, net, g, u, b, need); !s.ok()) return s;
    if (auto s = check_lifetime(where, b, need); !s.ok()) return s;
    required[i] = need;
  }
  if (auto s = check_copies(where, net, g, u); !s.ok()) return s;
  if (u.op_major) return check_in_place_chains(where, net, machine, g, u, required);
  return check_overlaps(g, required, [&](size_t i, size_t j, int first) {
    return check_deep_reuse(where, net, machine, g, u, required, i, j, first);
  });
}

// Cross-group weight prefetch: a prefetched group's prologue weight buffers (every weight
// buffer of copy 0: resident weights, a streamed group's first slices, a sweep's `w:sweep`) are
// written while the previous group (DRAM views skipped) still runs, so they must be declared
// live from step -1 and share no byte with any buffer of that group. A buffer live before
// step 0 in a group that is not prefetched is an error.
Status check_prefetch(const Machine& machine, const Schedule& schedule, size_t group_index) {
  const GroupSchedule& g = schedule.groups[group_index];
  const std::string where = "group " + std::to_string(group_index) + ": ";
  if (!g.prefetched) {
    for (const auto& b : g.buffers)
      if (b.first_step < 0)
        return fail(where + "buffer '" + b.name + "' is declared live from step " +
                    std::to_string(b.first_step) + " but the group is not prefetched");
    return {};
  }
  size_t previous = group_index;
  while (previous > 0 && schedule.groups[previous - 1].dram_view) --previous;
  if (previous == 0) return fail(where + "is prefetched but no group runs before it");
  const GroupSchedule& p = schedule.groups[previous - 1];
  bool any = false;
  for (const auto& b : g.buffers) {
    if (b.role != BufferRole::Weights || b.copy != 0) {
      if (b.first_step < 0)
        return fail(where + "buffer '" + b.name + "' is declared live from step " +
                    std::to_string(b.first_step) + " but is not a prefetched weight buffer");
      continue;
    }
    any = true;
    if (b.first_step != -1)
      return fail(where + "prefetched buffer '" + b.name + "' is declared live from step " +
                  std::to_string(b.first_step) + ", not -1 (the previous group's tail)");
    for (const auto& q : p.buffers) {
      if (q.scratchpad != b.scratchpad) continue;
      if (b.offset >= q.offset + q.size_bytes || q.offset >= b.offset + b.size_bytes) continue;
      return fail(where + "prefetched buffer '" + b.name + "' " +
                  range_str(b.offset, b.offset + b.size_bytes) + " overlaps buffer '" + q.name +
                  "' " + range_str(q.offset, q.offset + q.size_bytes) + " of group " +
                  std::to_string(previous - 1) + " in scratchpad '" +
                  machine.scratchpads[static_cast<size_t>(b.scratchpad)].name +
                  "' while that group runs");
    }
  }
  if (!any) return fail(where + "is prefetched but has no weight buffer");
  return {};
}

}  // namespace

Status check_schedule(const Net& net, const Machine& machine, const Schedule& schedule) {
  // Dataflow through DRAM: coverage and order.
  std::vector<int> group_of(net.ops.size(), -1);
  std::vector<char> in_dram(net.tensors.size(), 0);
  for (size_t t = 0; t < net.tensors.size(); ++t) {
    const int p = net.tensor(static_cast<int>(t)).producer;
    if (p >= 0 && net.op(p).kind == OpKind::Input) in_dram[t] = 1;
  }
  for (size_t gi = 0; gi < schedule.groups.size(); ++gi) {
    const GroupSchedule& g = schedule.groups[gi];
    const std::string where = "group " + std::to_string(gi) + ": ";
    for (int op : g.ops) {
      if (op < 0 || op >= net.size()) return fail(where + "op index out of range");
      if (group_of[static_cast<size_t>(op)] >= 0) {
        return fail(where + "op '" + net.op(op).name + "' is already in group " +
                    std::to_string(group_of[static_cast<size_t>(op)]));
      }
      group_of[static_cast<size_t>(op)] = static_cast<int>(gi);
    }
    for (int op : g.ops) {
      for (int t : net.op(op).inputs) {
        const int p = net.tensor(t).producer;
        const bool inside = p >= 0 && group_of[static_cast<size_t>(p)] == static_cast<int>(gi);
        if (!inside && !in_dram[static_cast<size_t>(t)]) {
          return fail(where + "op '" + net.op(op).name + "' reads '" + net.tensor(t).name +
                      "' before any group stored it");
        }
      }
    }
    if (!g.dram_view)
      if (auto s = check_group_buffers(net, machine, g, gi); !s.ok()) return s;
    if (auto s = check_prefetch(machine, schedule, gi); !s.ok()) return s;
    for (int op : g.ops) {
      const int out = net.op(op).output;
      bool external = net.tensor(out).network_output;
      for (int c : net.tensor(out).consumers) {
        external |= group_of[static_cast<size_t>(c)] != static_cast<int>(gi);
      }
      if (external) in_dram[static_cast<size_t>(out)] = 1;
    }
  }
  for (int i = 0; i < net.size(); ++i) {
    if (net.op(i).kind != OpKind::Input && group_of[static_cast<size_t>(i)] < 0) {
      return fail("op '" + net.op(i).name + "' is in no group");
    }
  }
  return {};
}

}  // namespace tessel::sched
