// A group tiling's geometry: the per-tile boxes of every local tensor (shape transfer per tile)
// and the buffer sizes they need. Internal to scheduler/.
#pragma once

#include <vector>

#include "scheduler/group_info.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/map_space.hpp"

namespace tessel::sched {

/// What a tiling's buffers need, independent of halo/residency/buffering: the sizes allocation
/// works with (measure_geometry from the per-tile boxes, SeparableTiling::sizes from the runs).
struct BufferSizes {
  std::vector<int64_t> rows_per_step;     // per op: output rows per conv instruction
  std::vector<int64_t> weight_slice_max;  // per op: on-chip weight bytes of the widest slice
  std::vector<int64_t> acc_max;           // per op: accumulator bytes of one instruction
  std::vector<int64_t> pixel_bytes;       // per local: bytes per stored pixel (block padded)
  std::vector<int64_t> max_pixels;        // per local: largest tile, pixels
};

/// Tile geometry results shared by every (halo, weights, buffering) choice.
struct TileGeometry : BufferSizes {
  int64_t tiles = 0;
  /// The MLP's hidden chunks (chunks_hidden): the chunk count and the reducer's position (B); 0
  /// and -1 for every other tiling.
  int64_t hidden_parts = 0;
  int hidden_reducer = -1;
  RunsOnce once;               // the ops run by the first tile only (runs_once)
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
    std::vector<int64_t> store_bytes;  ///< per tile: the bytes `store` moves
  };
  mutable ActivationCosts costs[2];
};

/// Tile (k, r, c)'s part of a stored tensor of `shape` under mapping `m` (empty: Box{}).
Box stored_part(const Shape3& shape, const Mapping& m, int64_t k, int64_t r, int64_t c);

/// The per-tile boxes of tiling `m`, each tile by shape transfer (channel parts outermost).
TileGeometry tile_group(const Net& net, const GroupInfo& g, const Mapping& m);

/// How a local's buffer pads a pixel of a tile's channels (buffers are HWC tiles): to whole
/// blocks where a matrix op reads it (`block`: rows, columns for a depthwise conv; 1
/// elsewhere), and where a grouped conv reads it, to the channels its last unit's conv reads:
/// from the unit's first channel (a multiple of `unit` inputs), `reach` channels (whole input
/// blocks), past the blocks where units are not whole blocks (docs/codegen.md "Grouped
/// convolution": RegNet-Y 1.6GF's 37 groups of 24 pad a pixel of 888 channels to 968 on a
/// 128-row array, not 896).
struct ChannelPadding {
  int64_t block = 1;
  int64_t unit = 0, reach = 0;  ///< 0: no grouped conv reads the local
  /// A tile of `channels` channels (from a unit's first channel) as its buffer holds a pixel.
  int64_t channels(int64_t c) const;
};

/// Per local: how its buffer pads a pixel (ChannelPadding).
std::vector<ChannelPadding> channel_blocks(const Net& net, const Machine& machine,
                                           const GroupInfo& g);

/// Fills the geometry-only figures of `geo` (its BufferSizes) from its per-tile boxes.
void measure_geometry(const Net& net, const Machine& machine, const GroupInfo& g,
                      TileGeometry& geo);

/// Deep reuse gap (alloc.hpp) of op `pos` over input `i`, the maximum over the tiles; depends
/// only on the tiling, so it is computed once per geometry.
int64_t reuse_gap_of(const Net& net, const GroupInfo& g, const TileGeometry& geo, size_t pos,
                     size_t i);

/// Per local tensor: whether it is a kept input (keeps_inputs in map_space.hpp): channel tiles
/// alone or an attention chain's row blocks, and every tile reads the same box of it (a conv's
/// input, all channels; a MatMul's K or V, all rows), so the first tile loads it and the others
/// find it on chip. An input read per part (a residual add's other operand, Q) is loaded by
/// every tile.
std::vector<char> kept_inputs(const Net& net, const GroupInfo& g, const TileGeometry& geo,
                              const Mapping& m);

}  // namespace tessel::sched
