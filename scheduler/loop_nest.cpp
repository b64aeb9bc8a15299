// The steps of a group's loop nest (loop_nest.hpp).
#include "scheduler/loop_nest.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "scheduler/group_info.hpp"
#include "scheduler/map_space.hpp"

namespace tessel::sched {

namespace {

// The tiles of `om`'s loop along `axis` (1 without one).
int64_t tiles_along(const OpMapping& om, const char* axis) {
  for (const TileLoop& loop : om.loops)
    if (loop.axis == axis) return loop.tiles;
  return 1;
}

Result<std::vector<NestStep>> tile_major_steps(const Net& net, const GroupMapping& mapping) {
  std::vector<NestStep> steps;
  if (mapping.ops.empty()) return fail("a tile-major nest without ops");
  const OpMapping& first = mapping.ops.front();
  const int64_t channels = tiles_along(first, "channels"), rows = tiles_along(first, "rows"),
                cols = tiles_along(first, "cols");
  if (channels < 1 || rows < 1 || cols < 1)
    return fail("op '" + net.op(first.op).name + "': a loop of fewer than one tile");
  for (int64_t kt = 0; kt < channels; ++kt) {
    for (int64_t rt = 0; rt < rows; ++rt) {
      for (int64_t ct = 0; ct < cols; ++ct) {
        NestStep s;
        s.tile = (kt * rows + rt) * cols + ct;
        s.channel_part = kt;
        s.row_part = rt;
        s.col_part = ct;
        s.first_op = 0;
        s.end_op = mapping.ops.size();
        steps.push_back(s);
      }
    }
  }
  return steps;
}

Result<std::vector<NestStep>> op_major_steps(const Net& net, const GroupMapping& mapping) {
  std::vector<NestStep> steps;
  const size_t n = mapping.ops.size();
  auto whole = [&](size_t pos) { return runs_whole_in_sweep(net.op(mapping.ops[pos].op)); };
  auto conv = [&](size_t pos) { return is_dense_conv(net.op(mapping.ops[pos].op)); };
  for (size_t pos = 0; pos < n; ++pos) {
    const std::string name = net.op(mapping.ops[pos].op).name;
    if (whole(pos)) {
      if (steps.empty()) return fail("op '" + name + "' runs whole before the first conv");
      steps.back().whole_ops.push_back(pos);
      continue;
    }
    if (!conv(pos)) {
      if (steps.empty()) return fail("op '" + name + "' before the first conv");
      continue;  // an op of the block of the conv before it
    }
    size_t end = pos + 1;
    while (end < n && !conv(end) && !whole(end)) ++end;
    const int64_t slices = tiles_along(mapping.ops[pos], "channels");
    if (slices < 1) return fail("op '" + name + "': fewer than one slice");
    for (int64_t k = 0; k < slices; ++k) {
      NestStep s;
      s.first_op = pos;
      s.end_op = end;
      s.slice = k;
      steps.push_back(s);
    }
  }
  return steps;
}

}  // namespace

Result<std::vector<NestStep>> nest_steps(const Net& net, const GroupMapping& mapping) {
  switch (mapping.nest) {
    case LoopNest::DramView:
      return std::vector<NestStep>{};
    case LoopNest::TileMajor:
      return tile_major_steps(net, mapping);
    case LoopNest::OpMajor:
      return op_major_steps(net, mapping);
  }
  return fail("unknown loop nest");
}

GroupMapping mapping_loops(const Net& net, const std::vector<int>& ops, const Mapping& m) {
  GroupMapping mapping;
  mapping.nest = m.weight_sweep ? LoopNest::OpMajor : LoopNest::TileMajor;
  int64_t block_slices = 1;  // the slices of the conv whose block the op is in
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    OpMapping om;
    om.op = ops[pos];
    if (!m.weight_sweep) {
      om.loops = {
          {"channels", m.channel_tiles, 0}, {"rows", m.row_tiles, 0}, {"cols", m.col_tiles, 0}};
    } else {
      const Op& op = net.op(ops[pos]);
      if (is_dense_conv(op) && pos < m.op_slices.size()) block_slices = m.op_slices[pos];
      om.loops = {{"channels", runs_whole_in_sweep(op) ? 1 : block_slices, 0}};
    }
    mapping.ops.push_back(std::move(om));
  }
  return mapping;
}

void tile_boxes(const Net& net, const GroupSchedule& group, int64_t tile, std::vector<Box>& stored,
                std::vector<Box>& need) {
  if (!group.weight_sweep && !group.dram_view &&
      chunks_hidden(net, group.ops, group.row_tiles, group.col_tiles, group.channel_tiles)) {
    hidden_chunk_boxes(net, group.ops, group.channel_tiles, tile, need, stored);
    return;
  }
  const int64_t kt = group.channel_part(tile), rt = group.row_part(tile), ct = group.col_part(tile);
  stored.assign(net.tensors.size(), Box{});
  for (int t : group.outputs) {
    const Shape3 s = net.tensor(t).shape;
    stored[static_cast<size_t>(t)] =
        Box{{s.c * kt / group.channel_tiles, s.c * (kt + 1) / group.channel_tiles},
            {s.h * rt / group.row_tiles, s.h * (rt + 1) / group.row_tiles},
            {s.w * ct / group.col_tiles, s.w * (ct + 1) / group.col_tiles}};
  }
  need = transfer(net, group.ops, stored).need;
}

std::vector<char> tile_kept_inputs(const Net& net, const GroupSchedule& group) {
  std::vector<char> kept(net.tensors.size(), 0);
  if (!keeps_inputs(net, group.ops, group.row_tiles, group.col_tiles, group.channel_tiles))
    return kept;
  std::vector<Box> first, stored, need;
  for (int64_t tile = 0; tile < group.tiles(); ++tile) {
    tile_boxes(net, group, tile, stored, need);
    if (tile == 0) {
      first = need;
      for (int t : group.inputs) kept[static_cast<size_t>(t)] = 1;
      continue;
    }
    for (int t : group.inputs)
      kept[static_cast<size_t>(t)] = kept[static_cast<size_t>(t)] &&
                                     need[static_cast<size_t>(t)] == first[static_cast<size_t>(t)];
  }
  return kept;
}

void halo_step(const std::vector<Box>& window, std::vector<Box>& previous, std::vector<Box>& need,
               const std::function<void(size_t t, const Box& prev)>& shared) {
  for (size_t t = 0; t < need.size(); ++t) {
    const Box& prev = previous[t];
    if (prev.empty() || need[t].empty()) continue;
    need[t].h.b = std::max(need[t].h.b, prev.h.e);
    if (need[t].h.e < need[t].h.b) need[t].h.e = need[t].h.b;
    if (window[t].h.b <= prev.h.b || window[t].h.b >= prev.h.e) continue;
    shared(t, prev);
  }
  for (size_t t = 0; t < window.size(); ++t)
    if (!window[t].empty()) previous[t] = window[t];
}

}  // namespace tessel::sched
