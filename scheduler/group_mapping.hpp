// The explicit mapping of a group (issue 35): per op its loop nest over tiles and, per operand,
// how it lives across them (kept, streamed, recomputed or cached halos, double-buffered) and in
// which buffers. The schedule's JSON writes it and reads it back (docs/scheduler.md, "The
// explicit mapping"); group tilings, weight sweeps, 2D tiles, early stores and Gemm reduction
// chunks are all instances of it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// How the ops of a group and the loops over their tiles nest.
enum class LoopNest {
  TileMajor,  ///< one loop nest over the group's tiles around all ops (a group tiling)
  OpMajor,    ///< ops in order, each running its own loop (a weight sweep's slices)
  DramView,   ///< no data moves: a Reshape, or a Concat its producers write into
};
const char* to_string(LoopNest nest);

/// One loop over tiles. `axis` is "channels", "rows", "cols" (the op's output axes) or
/// "reduction" (a Gemm's input elements, accumulated chunk by chunk).
struct TileLoop {
  std::string axis;
  int64_t tiles = 1;  ///< near-equal parts of the axis (part i of n: [e*i/n, e*(i+1)/n))
  int64_t size = 0;   ///< the extent of the first tile along the axis (halos included)
  bool operator==(const TileLoop&) const = default;
};

/// How an operand lives across its op's tiles.
enum class Residency {
  Kept,        ///< one box for every tile: on chip from the first tile to the group's end
  Streamed,    ///< each tile (slice) brings its own part, loaded, computed or stored once
  Recomputed,  ///< tiles overlap (halos) and each tile loads or computes its whole box again
  Cached,      ///< tiles overlap and the rows shared with the previous tile stay on chip
};
const char* to_string(Residency residency);

/// One operand of an op: an activation input, its weights (with bias and requant table) or
/// its output.
struct OperandMapping {
  std::string operand;  ///< "input", "weights" or "output"
  int tensor = -1;      ///< activation operands: the tensor; weights: -1
  Residency residency = Residency::Streamed;
  bool double_buffered = false;  ///< two copies ping-pong between consecutive tiles (slices)
  /// Outputs stored to DRAM: "per_tile" (each tile stores its part), "end" (stored whole after
  /// the last slice) or "early" (a weight sweep's output stored after the phase completing it);
  /// empty for a tensor that stays on chip.
  std::string store;
  std::vector<std::string> buffers;  ///< BufferAlloc names, copies included
  bool operator==(const OperandMapping&) const = default;
};

/// One op of a group.
struct OpMapping {
  int op = -1;
  std::vector<TileLoop> loops;  ///< outermost first
  int64_t rows_per_step = 1;    ///< output rows per matrix instruction
  std::vector<OperandMapping> operands;
  std::string accumulator;  ///< its accumulator buffer, if any
  bool operator==(const OpMapping&) const = default;
};

/// The explicit mapping of one group.
struct GroupMapping {
  LoopNest nest = LoopNest::TileMajor;
  HaloMode halo = HaloMode::Recompute;
  bool memory_reuse = true;    ///< lifetime sharing and deep reuse
  bool prefetched = false;     ///< the prologue weights load during the previous group's tail
  std::vector<OpMapping> ops;  ///< one per op of the group, in its order (none for a view)
  bool operator==(const GroupMapping&) const = default;
};

/// The explicit mapping of a planned group (its tile counts, halo, residency, buffering, sweep
/// slices, rows per step, reduction chunks, prefetch, and the buffers its evaluation placed).
GroupMapping derive_mapping(const Net& net, const GroupSchedule& group);

/// JSON of a mapping: {nest, halo, memory_reuse, prefetched, ops: [{op (name), loops: [{axis,
/// tiles, size}], rows_per_step, operands: [{operand, tensor (name), residency,
/// double_buffered, store, buffers}], accumulator}]}; a view is {nest: "dram_view"}.
nlohmann::ordered_json mapping_to_json(const Net& net, const GroupMapping& mapping);

/// Reads a mapping without a net: names stay unresolved (tensor -1) and `op` is the position's
/// op from `ops`. `where` prefixes every error ("group 3"), which names the key:
/// "group 3: mapping.ops[1].operands[0].residency: unknown 'kep' (known: kept, ...)".
/// Keys a hand-written mapping may leave out: size, buffers, store, accumulator,
/// rows_per_step, memory_reuse (true), prefetched (false), halo (recompute).
Result<GroupMapping> mapping_from_json(const nlohmann::json& json, const std::vector<int>& ops,
                                       const std::string& where);

/// The choices a mapping makes, into `group`'s mode fields (tile counts, halo, residency,
/// double buffering, sweep slices, rows per step, reduction chunks, memory reuse, prefetch).
/// Fails naming the key where a mapping is not one today's mechanisms can run (tile-major ops
/// with different loops, loops out of the channels-rows-cols order, weights both kept and
/// streamed, an op-major nest with row tiles, ...).
Status apply_mapping(const GroupMapping& mapping, GroupSchedule& group, const std::string& where);

/// Whether `written` (read from JSON, perhaps by hand) says what `derived` (the mapping the
/// cost model built from its choices) does, key by key where `written` has the key: fails
/// naming the op, operand and key of the first difference, with both values.
Status compare_mappings(const Net& net, const GroupMapping& written, const GroupMapping& derived,
                        const nlohmann::json& written_json, const std::string& where);

}  // namespace tessel::sched
