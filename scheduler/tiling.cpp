// Tile geometry: the per-tile boxes of a group tiling and the buffer sizes they need.
#include "scheduler/tiling.hpp"

#include <algorithm>
#include <array>

#include "scheduler/alloc.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/weight_loads.hpp"

namespace tessel::sched {

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
  geo.once = runs_once(net, g.ops, m.row_tiles, m.col_tiles, m.channel_tiles);
  if (chunks_hidden(net, g.ops, m.row_tiles, m.col_tiles, m.channel_tiles)) {
    std::vector<Box> need, requested;
    geo.hidden_parts = m.channel_tiles;
    geo.hidden_reducer = hidden_chunks(net, g.ops).reducer;
    for (int64_t k = 0; k < geo.tiles; ++k) {
      hidden_chunk_boxes(net, g.ops, m.channel_tiles, k, need, requested);
      for (size_t l = 0; l < locals; ++l) {
        geo.need[static_cast<size_t>(k) * locals + l] = need[static_cast<size_t>(g.tensors[l])];
        geo.requested[static_cast<size_t>(k) * locals + l] =
            requested[static_cast<size_t>(g.tensors[l])];
      }
    }
    return geo;
  }
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

int64_t ChannelPadding::channels(int64_t c) const {
  const int64_t blocks = ceil_div(c, block) * block;
  if (unit <= 0 || c <= 0) return blocks;
  return std::max(blocks, (ceil_div(c, unit) - 1) * unit + reach);
}

std::vector<ChannelPadding> channel_blocks(const Net& net, const Machine& machine,
                                           const GroupInfo& g) {
  std::vector<ChannelPadding> padding_of(g.tensors.size());
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (!has_matrix_work(op)) continue;
    const int64_t unit = matrix_unit(net, machine, op);
    for (int in : g.in_local[pos]) {
      ChannelPadding& p = padding_of[static_cast<size_t>(in)];
      p.block = std::max(p.block, is_depthwise(net, op) || op.pool_by_conv ? machine.matrix_cols
                                                                           : machine.matrix_rows);
      if (unit <= 0 || in != g.in_local[pos].front()) continue;
      // A unit of k groups reads one block (k I <= R), a group alone its ceil(I / R) blocks.
      const MatrixShape m = matrix_shape(net, machine, op);
      const int64_t unit_inputs = m.ci * m.pack;
      const int64_t reach = m.pack > 1 ? machine.matrix_rows
                                       : ceil_div(m.ci, machine.matrix_rows) * machine.matrix_rows;
      // Two grouped readers of different units: a unit of one channel bounds both (a last
      // unit starts at c - 1 at most).
      p.unit = p.unit != 0 && p.unit != unit_inputs ? 1 : unit_inputs;
      p.reach = std::max(p.reach, reach);
    }
  }
  return padding_of;
}

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
    if (one_step_per_tile(net, machine, op)) {
      for (int64_t t = 0; t < geo.tiles; ++t)
        geo.rows_per_step[pos] = std::max(geo.rows_per_step[pos],
                                          geo.need[static_cast<size_t>(t) * locals + out].h.size());
    }
    Interval previous_c{-1, -1};
    const int64_t unit = matrix_unit(net, machine, op);
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box& box = geo.need[static_cast<size_t>(t) * locals + out];
      if (box.empty()) continue;
      if (constant_by_rows(op)) {  // the tile's rows of the constant
        weight_slice_max[pos] = std::max(weight_slice_max[pos], table_tile_bytes(net, op, box));
      } else if (!(box.c == previous_c)) {
        weight_slice_max[pos] =
            std::max(weight_slice_max[pos], onchip_weight_bytes(net, machine, op, box.c, true));
        previous_c = box.c;
      }
      if (has_matrix_work(op) || op.kind == OpKind::MatMul) {
        // Accumulator columns: a grouped conv's units each from a block of their own.
        const int64_t columns = column_block_count(box.c, unit, machine.matrix_cols);
        acc_max[pos] = std::max(
            acc_max[pos],
            accumulator_bytes(machine, geo.rows_per_step[pos], box, columns * machine.matrix_cols));
      }
    }
  }

  if (geo.hidden_parts > 0) {
    // The reducer (B) holds one reduction chunk of its weights for all output channels and
    // accumulates every row of its output over the chunks.
    const auto pos = static_cast<size_t>(geo.hidden_reducer);
    const Op& op = net.op(g.ops[pos]);
    const int64_t hidden = net.tensor(op.inputs[0]).shape.c;
    weight_slice_max[pos] = onchip_chunk_bytes(net, machine, op, hidden / geo.hidden_parts);
    const Box& out = geo.need[static_cast<size_t>(g.out_local[pos])];
    acc_max[pos] = accumulator_bytes(machine, out.h.size(), out, out.c.size());
  }
  std::vector<int64_t>& pixel_bytes = geo.pixel_bytes;
  std::vector<int64_t>& max_pixels = geo.max_pixels;
  pixel_bytes.assign(locals, 0);
  max_pixels.assign(locals, 0);
  const std::vector<ChannelPadding> padding_of = channel_blocks(net, machine, g);
  for (size_t l = 0; l < locals; ++l) {
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box& box = geo.need[static_cast<size_t>(t) * locals + l];
      if (box.empty()) continue;
      const int64_t channels = padding_of[l].channels(box.c.size());
      pixel_bytes[l] = std::max(pixel_bytes[l], channels * net.activation_bytes);
      max_pixels[l] = std::max(max_pixels[l], box.h.size() * box.w.size());
    }
  }
}

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

std::vector<char> kept_inputs(const Net& net, const GroupInfo& g, const TileGeometry& geo,
                              const Mapping& m) {
  const size_t locals = g.tensors.size();
  std::vector<char> kept(locals, 0);
  if (!keeps_inputs(net, g.ops, m.row_tiles, m.col_tiles, m.channel_tiles)) return kept;
  for (size_t l = 0; l < locals; ++l) {
    if (!g.is_input[l]) continue;
    kept[l] = 1;
    for (int64_t t = 1; t < geo.tiles && kept[l]; ++t)
      kept[l] = geo.need[static_cast<size_t>(t) * locals + l] == geo.need[l];
  }
  return kept;
}

}  // namespace tessel::sched
