// The Schedule: fused groups with their tiling, halo mode, buffers and predicted cost.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/machine.hpp"

namespace tessel::sched {

/// How the overlap between neighbouring row tiles is handled inside a group.
enum class HaloMode {
  Recompute,  ///< every tile loads and computes its whole window (the paper)
  Cache,      ///< rows shared with the previous tile stay on chip (DeFiNES-style)
};
const char* to_string(HaloMode mode);

/// Why a buffer exists.
enum class BufferRole { Input, Intermediate, Output, Weights, Accumulator };
const char* to_string(BufferRole role);

/// One on-chip buffer of a group. Steps within one tile: 0 = loads, op at position j of the
/// group = j + 1, ops.size() + 1 = stores. Offsets are the same for every tile.
struct BufferAlloc {
  std::string name;  ///< tensor name, "w:<op>" or "acc:<op>"; "#1" marks the second copy
  BufferRole role = BufferRole::Intermediate;
  BufferKind kind = BufferKind::Activations;
  int tensor = -1;  ///< activation tensor index, else -1
  int op = -1;      ///< op owning weights/accumulator, else -1
  int copy = 0;     ///< 0, or 1 for the ping-pong copy of a double-buffered buffer
  int scratchpad = 0;
  int64_t offset = 0;
  int64_t size_bytes = 0;
  int64_t pixel_bytes = 0;  ///< activation buffers: bytes per stored pixel (HWC, x stride)
  int first_step = 0;
  int last_step = 0;
  int reuses = -1;  ///< deep reuse: index (in this group's buffers) of the buffer it overwrites
  int64_t reuse_gap_bytes = 0;
};

/// DRAM bytes by direction and kind.
struct Traffic {
  int64_t weights_read = 0;
  int64_t activations_read = 0;
  int64_t activations_written = 0;
  /// Requant tables of conv/Gemm weight loads (8 B per output channel per load); DMA'd with
  /// `kind=weights`, kept apart so `weights_read` stays the compact weights + bias.
  int64_t requant_tables_read = 0;
  int64_t weight_traffic() const { return weights_read + requant_tables_read; }
  int64_t read() const { return weights_read + requant_tables_read + activations_read; }
  int64_t write() const { return activations_written; }
  int64_t total() const { return read() + write(); }
  Traffic& operator+=(const Traffic& o) {
    weights_read += o.weights_read;
    activations_read += o.activations_read;
    activations_written += o.activations_written;
    requant_tables_read += o.requant_tables_read;
    return *this;
  }
};

/// One fused group: consecutive ops run tile by tile, intermediates on chip.
struct GroupSchedule {
  std::vector<int> ops;      ///< op indices, ascending (a topological order)
  std::vector<int> inputs;   ///< tensors loaded from DRAM
  std::vector<int> outputs;  ///< tensors stored to DRAM
  bool dram_view = false;    ///< Reshape, or a Concat whose producers write into its slices
  int64_t row_tiles = 1;     ///< each output's rows split in this many near-equal parts
  int64_t col_tiles = 1;
  /// Output-channel parts: weight streaming (a conv/Gemm + elementwise ops) or a per-channel
  /// group split by channels (pools, elementwise; plan.hpp is_channel_split_group).
  int64_t channel_tiles = 1;
  int64_t tile_rows = 0;  ///< rows of the first non-empty output tile of the last op (reports)
  int64_t tile_cols = 0;
  int64_t tile_channels = 0;
  HaloMode halo = HaloMode::Recompute;
  bool weights_resident = true;
  bool double_buffered = false;
  bool memory_reuse = true;  ///< lifetime sharing + deep reuse on
  /// Weight sweep (docs/scheduler.md, "Weight sweeps"): one spatial tile holding whole maps;
  /// each conv in turn streams its weights once in `op_slices[pos]` output-channel slices
  /// through one ping-pong pair of slice buffers (`w:sweep`, `w:sweep#1`), and the elementwise
  /// ops after it run per slice. Tile counts are 1; `double_buffered` is true (the slices
  /// ping-pong; activations have one copy).
  bool weight_sweep = false;
  std::vector<int64_t> op_slices;      ///< weight sweep: per op, slices of a conv (0 others)
  std::vector<int64_t> rows_per_step;  ///< per op: output rows per conv instruction (1 others)
  /// Group tilings, per op: the input elements (a conv's input channels) of one reduction chunk
  /// of a streamed Gemm or dense conv whose one output block's whole reduction exceeds the
  /// weights' scratchpad (docs/codegen.md "Reduction chunks"), or of the MLP's hidden-chunk
  /// reducer; 0 where the reduction is whole. Empty for sweeps and views.
  std::vector<int64_t> reduction_chunk_inputs;
  std::vector<BufferAlloc> buffers;
  std::vector<int64_t> peak_bytes;  ///< per scratchpad
  Traffic traffic;
  int64_t macs = 0;  ///< useful MACs of the group's ops (recomputation excluded)
  int64_t load_cycles = 0, compute_cycles = 0, store_cycles = 0;  ///< summed over tiles
  int64_t cycles = 0;  ///< with overlap as chosen (double_buffered) + prologue/epilogue
  /// Cross-group weight prefetch (docs/scheduler.md, "Cross-group weight prefetch"). The
  /// prologue weights are the weight loads the first tile waits for before its compute:
  /// resident weights (all), a streamed group's first slices, a sweep's first slice. Their
  /// DMA cycles, counted serially in `cycles` unless `prefetched`.
  int64_t prologue_weight_cycles = 0;
  int64_t prologue_weight_bytes = 0;  ///< their bytes (weights and requant tables)
  /// The group's tail as the next group's prefetch sees it: cycles from the end of its LOAD
  /// engine's last DMA to the group's end, and the DMA (store) cycles and bytes within that
  /// tail.
  int64_t tail_cycles = 0;
  int64_t tail_dma_cycles = 0;
  int64_t tail_dma_bytes = 0;
  /// The prologue weights are loaded during the previous group's tail (after its last load),
  /// into buffers that no buffer of that group touches; those buffers have first_step = -1
  /// (live before the group's first tile). `cycles` is then the group's cycles with the
  /// prologue on chip plus `prefetch_wait_cycles`, the part of the prefetch that the previous
  /// group's tail did not cover. The prefetch (LOAD engine) and the tail's stores (STORE
  /// engine) share the DRAM: together they take the longer of the two, or the DRAM's time for
  /// both streams' bytes where that is longer (plan_prefetched; docs/scheduler.md "Cross-group
  /// weight prefetch").
  bool prefetched = false;
  int64_t prefetch_wait_cycles = 0;

  int64_t tiles() const { return row_tiles * col_tiles * channel_tiles; }
  int steps() const { return static_cast<int>(ops.size()) + 2; }
  /// Tile `t` in the order both the cost model and code generation run tiles: channel parts
  /// outermost, then rows, then columns (a streamed slice serves all row/column tiles of its
  /// channels before the next is loaded).
  int64_t channel_part(int64_t t) const { return t / (row_tiles * col_tiles); }
  int64_t row_part(int64_t t) const { return t / col_tiles % row_tiles; }
  int64_t col_part(int64_t t) const { return t % col_tiles; }
  /// Channel tiles alone (one row and one column tile): an input whose box is the same in every
  /// tile (a conv's input: all channels) is *kept*: the first tile loads it and later tiles
  /// find it on chip (one copy, never ping-ponged). Inputs read per channel part (a residual
  /// add's other operand) are loaded by every tile.
  bool keeps_inputs() const { return keeps_inputs(row_tiles, col_tiles, channel_tiles); }
  static bool keeps_inputs(int64_t rows, int64_t cols, int64_t channels) {
    return channels > 1 && rows * cols == 1;
  }
  /// Streamed weights with channel and row/column tiles: a channel part's slice is loaded by
  /// its first tile and kept while the part's row/column tiles run; not where an op runs its
  /// reduction in chunks (`chunked`: its buffer holds one chunk, so every tile loads them all).
  bool keeps_weight_slices() const {
    return keeps_weight_slices(weights_resident, row_tiles, col_tiles, channel_tiles,
                               chunks_reduction());
  }
  static bool keeps_weight_slices(bool resident, int64_t rows, int64_t cols, int64_t channels,
                                  bool chunked) {
    return !resident && !chunked && channels > 1 && rows * cols > 1;
  }
  /// Input blocks (of `rows` inputs) per conv instruction of the op at position `pos` whose
  /// reduction has `ic_blocks` blocks: its reduction chunk, or `ic_blocks` where whole; -1 where
  /// the schedule does not say (read from a JSON without mappings).
  int64_t chunk_blocks_at(size_t pos, int64_t ic_blocks, int64_t rows) const {
    if (pos >= reduction_chunk_inputs.size()) return -1;
    const int64_t chunk = reduction_chunk_inputs[pos];
    return chunk > 0 ? std::min(ic_blocks, (chunk + rows - 1) / rows) : ic_blocks;
  }
  /// Whether an op runs its reduction in chunks (reduction_chunk_inputs).
  bool chunks_reduction() const {
    for (int64_t chunk : reduction_chunk_inputs)
      if (chunk > 0) return true;
    return false;
  }
};

/// Map-space features of a whole search (`optimal` honours them).
struct MapSpaceFeatures {
  bool weight_sweep = true;  ///< consider weight sweeps (docs/scheduler.md, "Weight sweeps")
  /// 2D tiles: column tiles (2, 4, 8, 16) at every row-tile count; off, columns split only once
  /// tiles are one row (docs/scheduler.md, "2D tiles"). `optimal`, `opfusion` and `layerwise`;
  /// the paper's greedy keeps its map space. On by default since session 13.
  bool column_tiles_every_row = true;
  /// Cross-group weight prefetch (plan_prefetched; docs/scheduler.md, "Cross-group weight
  /// prefetch"): a group's prologue weights load during the previous group's tail.
  bool prefetch = true;
  /// The space-to-depth stem (net_from_graph; docs/scheduler.md, "Space-to-depth stem"). Every
  /// policy: it is how the net is lowered, not a schedule choice.
  bool space_to_depth_stem = true;
  /// A ReLU or Clip that alone reads a Conv's, Gemm's or Add's output folds into that op's
  /// output clamp (net_from_graph; docs/scheduler.md, "Activation folding"). Every policy but
  /// `layerwise`, whose Caffe form keeps each ReLU as a layer of its own.
  bool fold_activations = true;
  /// PlanOptions::search_depth_*: the geometries each group's search tries past the first that
  /// fits; -1 all (the default for both). Both stop only where nothing left can win: bytes at
  /// the group's bytes lower bound, latency at tilings whose compute alone exceeds the best
  /// (docs/scheduler.md, "Search speed"). A depth N >= 0 trades schedules for search time.
  int search_depth_bytes = -1;
  int search_depth_latency = -1;
  /// `optimal` skips groups the bytes bound rules out and stops a group's search at its bytes
  /// floor (docs/scheduler.md, "Search speed"). Changes no schedule: a switch for
  /// bench/scheduler's side-by-side timing, not part of the map space (not in the JSON).
  bool bound_stop = true;
  /// `optimal` also offers channel part counts that are not powers of two: the fewest
  /// near-equal parts whose widest spans w whole matrix column blocks (PlanOptions::
  /// channel_part_blocks; docs/scheduler.md "Channel part counts"). On by default (session 27);
  /// off only for bench/scheduler's side-by-side timing (not in the JSON: a schedule's
  /// channel_tiles say which count it uses, and check_mapping accepts both kinds).
  bool block_channel_parts = true;
};

/// A whole network's schedule and its predicted figures.
struct Schedule {
  std::string model;
  std::string config;
  std::string policy;
  std::string objective;
  MapSpaceFeatures features;  ///< the map space the policy searched
  std::string tool_version;
  std::vector<GroupSchedule> groups;
  Traffic traffic;
  int64_t compulsory_bytes = 0;  ///< weights (+ requant tables) + network input + output, once
  int64_t cycles = 0;
  int64_t roofline_cycles = 0;  ///< max(MACs / MACs-per-cycle, compulsory / DRAM B-per-cycle)
  /// max(roofline_cycles, barrier_bound): no schedule of the net on the config is faster
  /// (scheduler/bound.hpp); `lower_bound_barrier` names the first op (a Gemm or a dense conv)
  /// of the completing set whose bound it is, or is empty where the roofline is the larger.
  int64_t lower_bound_cycles = 0;
  std::string lower_bound_barrier;
  std::string lower_bound_tensor;  ///< the tensor t of that bound, or empty as above
  int64_t macs = 0;
  double search_seconds = 0;
  /// The DRAM bytes the accelerator reads to fetch the program compiled from this schedule
  /// (instructions x isa::kInstructionBytes, as the simulator counts them): filled in by the
  /// layer above the scheduler and code generation once the program exists (tessel run, tessel
  /// compile: codegen::instruction_fetch_bytes); nullopt before (tessel schedule), where the
  /// DRAM and energy totals say they leave it out (docs/energy.md, "Instruction fetch").
  std::optional<int64_t> instruction_fetch_bytes;
};

}  // namespace tessel::sched
