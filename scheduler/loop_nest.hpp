// The steps of a group's explicit mapping (issue 35, "one mapping"): the one enumeration of a
// loop nest into the units that code generation lowers and its token protocol runs, whatever
// the nest (docs/scheduler-mapping.md "One step enumeration").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "scheduler/group_mapping.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// One step of a mapping's loop nest: one load-then-compute phase (or one per Gemm reduction
/// chunk: the `reduction` loop runs inside a step) and the stores after it.
struct NestStep {
  /// Tile-major: the tile, in GroupSchedule::channel_part's order (channel parts outermost,
  /// then rows, then columns), and its part along each loop. Op-major: 0 (one tile).
  int64_t tile = 0;
  int64_t channel_part = 0, row_part = 0, col_part = 0;
  /// The positions (in the group's ops) of the ops the step runs: every op of a tile-major
  /// step; an op-major step's conv (at `first_op`) and the ops of its block after it.
  size_t first_op = 0, end_op = 0;
  /// Op-major: the output-channel slice of the conv at `first_op` (its `channels` loop) that
  /// the step computes, the ops of its block on the same channels; -1 in a tile-major nest.
  int64_t slice = -1;
  /// Op-major: ops run whole, over every channel, at the end of the step (a pool or Concat
  /// after the blocks before it, which this step completes).
  std::vector<size_t> whole_ops;
  bool operator==(const NestStep&) const = default;
};

/// The steps of `mapping`'s loop nest over the group's ops (`mapping.ops`, ops of `net`):
/// - tile-major: one per tile of the first op's `channels`, `rows` and `cols` loops (every op
///   runs the same tiles), each running every op;
/// - op-major: for each dense conv, one per slice of its `channels` loop, running the conv and
///   the ops of its block (up to the next conv or op run whole) on that slice; a pool or Concat
///   (runs_whole_in_sweep) runs whole at the end of the step before it;
/// - a DRAM view: none.
/// Fails naming the op where a nest is not one of these (a tile-major op without the three
/// loops, an op-major nest not starting with a conv).
Result<std::vector<NestStep>> nest_steps(const Net& net, const GroupMapping& mapping);

/// The boxes of tile `tile` of tile-major group `group` (GroupSchedule::channel_part's order):
/// each stored output's box (`stored`: the tile's channel, row and column part of it, near-equal
/// parts) and every tensor's window (`need`: the shape transfer of `stored`), or, where the group
/// chunks the MLP's hidden dimension, the chunks' boxes (hidden_chunk_boxes). The one tiling
/// rule code generation, the energy counts and the program size read (the checker restates it
/// on purpose).
void tile_boxes(const Net& net, const GroupSchedule& group, int64_t tile, std::vector<Box>& stored,
                std::vector<Box>& need);

/// Per tensor: 1 for an input of tile-major group `group` whose window is the same in every tile
/// (keeps_inputs), which the first tile loads for all.
std::vector<char> tile_kept_inputs(const Net& net, const GroupSchedule& group);

/// Halo caching (HaloMode::Cache) from one tile to the next: trims each tensor's box in `need`
/// to the rows the previous tile's window (`previous`, then set to `window`) does not hold, and
/// calls `shared(t, prev)` for each tensor whose rows [window[t].h.b, prev.h.e) are on chip at
/// the previous window's positions (they move to the top of its buffer). The one rule code
/// generation (the row copies), the energy counts and the program size read.
void halo_step(const std::vector<Box>& window, std::vector<Box>& previous, std::vector<Box>& need,
               const std::function<void(size_t t, const Box& prev)>& shared);

/// The loops of search mapping `m` over `ops` as an explicit mapping (nest, and per op its
/// loops with tile counts, sizes 0): what nest_steps reads, before the model has placed
/// anything. A weight sweep is op-major, each dense conv's `channels` loop its slices, the ops
/// of its block the same, a pool or Concat one; a tiling is tile-major, every op the mapping's
/// channel, row and column tiles.
GroupMapping mapping_loops(const Net& net, const std::vector<int>& ops, const Mapping& m);

}  // namespace tessel::sched
