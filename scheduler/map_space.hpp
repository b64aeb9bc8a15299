// The map space of a group (Timeloop's MapSpace): what a mapping is, which options a policy
// may use, and the mappings of a group, group tilings and weight sweeps. The model that costs
// a mapping is cost_model.hpp's; the search over mappings, search.cpp's (plan.hpp).
#pragma once

#include <vector>

#include "scheduler/alloc.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// What search minimises: DRAM bytes (cycles break ties) or cycles (bytes break ties); `optimal`
/// also predicted energy or energy x delay (scheduler/energy_objective.hpp; a group's mapping
/// search itself only ranks by Bytes or Latency).
enum class Objective { Bytes, Latency, Energy, Edp };
const char* to_string(Objective objective);

/// One point of a group's map space.
struct Mapping {
  int64_t row_tiles = 1;
  int64_t col_tiles = 1;
  int64_t channel_tiles = 1;
  HaloMode halo = HaloMode::Recompute;
  bool weights_resident = true;
  bool double_buffered = false;
  /// Weight sweep (GroupSchedule::weight_sweep): per op position, the output-channel slices of
  /// each conv (0 for other ops). Tile counts must be 1.
  bool weight_sweep = false;
  std::vector<int64_t> op_slices = {};
};

/// Which parts of the map space a policy may use.
struct PlanOptions {
  bool memory_reuse = true;  ///< lifetime sharing (Fig. 4) and deep reuse (Fig. 5)
  bool allow_cache = true;   ///< halo caching between row tiles
  bool allow_double_buffer = true;
  bool allow_streamed_weights = true;  ///< weights re-read per tile when they cannot stay
  bool alias_concat = true;  ///< a lone Concat costs nothing: producers write into its slices
  Objective objective = Objective::Bytes;
  int max_group_ops = 32;  ///< longest group considered (bounds search time)
  /// Longest weight-sweep group (allow_weight_sweep): a sweep-shaped group may grow past
  /// max_group_ops up to this, and is then planned as a sweep only (a sweep costs linear time
  /// in its ops; chains of inception blocks run to 60 ops).
  int max_sweep_ops = 64;
  /// Weight sweeps (is_weight_sweep_group) join the map space (MapSpaceFeatures; `optimal`).
  bool allow_weight_sweep = false;
  /// Column tiles at every row-tile count (2D tiles), not only with one-row tiles
  /// (MapSpaceFeatures::column_tiles_every_row).
  bool column_tiles_every_row = false;
  /// Geometries (row x column x channel tilings) search_group tries past the first one that
  /// fits, by objective; -1: every one (MapSpaceFeatures; docs/scheduler.md, "Search speed").
  int search_depth_bytes = -1;
  int search_depth_latency = -1;
  /// Set by plan_prefetched only: the bytes the previous group occupies, as pinned requests
  /// live at step -1. The group's prologue weight buffers then live from step -1 (so the
  /// allocation keeps them clear of those bytes) and its cycles count them as on chip.
  const std::vector<AllocRequest>* prefetch_occupied = nullptr;
  /// A known lower bound on the group's DRAM bytes (`optimal` passes the bytes bound's,
  /// BytesBoundModel::group_floor); once a mapping reaches it, the bytes search tries only
  /// tilings that could be as small and faster. -1: none.
  int64_t bytes_floor = -1;
  /// Channel part counts beyond powers of two (`optimal`; docs/scheduler.md "Channel part
  /// counts"): the matrix unit's columns, or 0 for powers of two only. With C output channels
  /// in B = ceil(C / cols) column blocks, the map space also offers, for every widest part of
  /// w whole blocks, the fewest parts that reach it: ceil(B / w).
  int64_t channel_part_blocks = 0;
};

/// Can `ops` (ascending indices, no Input) form one group? Reshape and aliased Concat groups
/// must be alone.
Status check_group(const Net& net, const std::vector<int>& ops, const PlanOptions& options);

/// An attention group (docs/scheduler-mapping.md "Attention fusion"), the one group a RowSoftmax
/// or an activation MatMul shares: activation MatMuls, RowSoftmaxes and lookup tables with token
/// ops (token Linears, Adds, Eltwises, Norms) before and after them, e.g. `q_proj, k_proj,
/// v_proj, scores, softmax, context, out_proj, add1`. Row blocks split the rows of what the
/// group stores; every MatMul reads its second operand (K, V) whole, so that operand is a group
/// input or made by ops run once (attention_whole_ops), which must be token ops.
Status check_attention_group(const Net& net, const std::vector<int>& ops);

/// Per position of group `ops`: whether the op's output is read in the group only whole, as a
/// MatMul's second operand or by ops that are themselves read only whole (a K or V projection).
/// Its box is the whole tensor in every row block: the first row block runs it, the rest read
/// it on chip (RunsOnce).
std::vector<char> attention_whole_ops(const Net& net, const std::vector<int>& ops);

/// Whether the tiles of group `ops` (`rows` x `cols` x `channels` of them) keep every input whose
/// box is the same in every tile (loaded by the first tile, one copy): channel tiles alone
/// (GroupSchedule::keeps_inputs), or row blocks of a group holding an activation MatMul, whose
/// second operand (K, V) each row block reads whole (docs/scheduler-mapping.md "Attention
/// fusion").
bool keeps_inputs(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                  int64_t channels);

/// The MLP's hidden chunks (docs/scheduler-mapping.md "The MLP's hidden chunks"): a group
/// `[A, E..., B, T...]` whose first op A is a dense 1x1 conv (a token-wise Linear), E lookup-table
/// or other elementwise ops each reading the op before, B a dense 1x1 conv reading the last of
/// them (the hidden tensor), every tensor from A to B's input read only by the next op, and T
/// Adds, Eltwises and Norms after B that read no hidden tensor (A may follow a prefix, below). Its
/// channel tiles split the hidden
/// dimension: tile k computes channels part k of A and the E's, B adds that part's products onto
/// accumulators kept over the tiles (reduction chunk k), and the last tile requantizes B and runs
/// the T's. `producer`/`reducer`: the positions of A and B in `ops`; -1 when no such group.
///
/// Ops before A (the prefix: token Linears, Adds, Eltwises and Norms, e.g. a transformer's
/// `out_proj, add1, norm1` before its MLP) run whole in the first tile only; their outputs stay on
/// chip to the last tile (their boxes are whole in every tile), which stores those read outside.
struct HiddenChunks {
  int producer = -1;
  int reducer = -1;
  bool found() const { return reducer > 0; }
  /// Whether position `pos` is a prefix op (its output lives over whole tiles).
  bool prefix(size_t pos) const { return found() && static_cast<int>(pos) < producer; }
};
HiddenChunks hidden_chunks(const Net& net, const std::vector<int>& ops);

/// The ops of group `ops`, tiled `rows` x `cols` x `channels`, that run in the first tile only,
/// their outputs kept on chip over every tile (docs/scheduler-mapping.md "Ops run once"): where
/// the tiles chunk the MLP's hidden dimension, the prefix before A (HiddenChunks::prefix); where
/// an attention group has more than one row block, the ops read only whole
/// (attention_whole_ops). The one rule the cost model, checker, buffers, energy counts,
/// program size and codegen read; empty (every op every tile) otherwise.
struct RunsOnce {
  std::vector<char> once;  ///< per position; empty: none
  bool runs(size_t pos, int64_t tile) const {
    return tile == 0 || pos >= once.size() || once[pos] == 0;
  }
  bool at(size_t pos) const { return pos < once.size() && once[pos] != 0; }
};
RunsOnce runs_once(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                   int64_t channels);

/// Whether tiles `rows` x `cols` x `channels` of group `ops` chunk its hidden dimension: more
/// than one channel tile, one row and one column tile, a HiddenChunks group.
bool chunks_hidden(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                   int64_t channels);

/// Tile `k` of `parts` hidden chunks of group `ops` (chunks_hidden): per net tensor, the box the
/// tile computes or reads (`need`) and the part of a stored output it stores (`requested`). The
/// shape transfer of the group's whole stored outputs, with A's and the E's outputs narrowed to
/// channel part k (near-equal parts, GroupSchedule::channel_part's `part`); before the last part
/// the T's outputs and every stored box are empty. B's output box is whole in every tile (its
/// accumulators); the one planner, checker, energy counts and codegen all read.
void hidden_chunk_boxes(const Net& net, const std::vector<int>& ops, int64_t parts, int64_t k,
                        std::vector<Box>& need, std::vector<Box>& requested);

/// Channel tiles that stream weights: a matrix op (Conv/Gemm) first, followed only by
/// elementwise ops (Eltwise, Add), so every op's output channels follow the matrix op's.
bool is_weight_streaming_group(const Net& net, const std::vector<int>& ops);

/// Channel tiles that split a per-channel group: every op is a pool (MaxPool, AvgPool,
/// GlobalPool), Eltwise, Add or Pad, so each input box has the channels of the output box it
/// feeds (a global pool's whole 7x7 map, but only the tile's channels). The map space lists
/// these splits after every whole-channel tiling and search uses them only when none fits.
bool is_channel_split_group(const Net& net, const std::vector<int>& ops);

/// Groups that can run as a weight sweep: a dense Conv first, at least two dense Convs, the
/// other ops Eltwise (without parameters of its own), Add, a windowed pool (MaxPool, AvgPool)
/// or a Concat. An Eltwise or Add
/// belongs to the block of the conv before it (it has that conv's output channels and reads a
/// tensor its block produced), so it runs per slice; a pool or Concat is a block of its own,
/// run once over every channel after the blocks before it (docs/scheduler.md, "Weight sweeps").
bool is_weight_sweep_group(const Net& net, const std::vector<int>& ops);

/// The ops that form a block of their own in a weight sweep, run whole (every channel at
/// once): MaxPool, AvgPool and Concat.
bool runs_whole_in_sweep(const Op& op);

/// A dense conv's finest sweep slicing: ceil(C / matrix_cols) near-equal slices, one column
/// block each (any count, not only a power of two; docs/scheduler-mapping.md).
int64_t finest_sweep_slices(const Net& net, const Machine& machine, const Op& op);

/// The weight-sweep mappings of a group (none unless is_weight_sweep_group): per budget of
/// `capacity / 2^i` bytes (i = 1..10) of the weights' scratchpad, each conv takes the fewest
/// power-of-two slices (at most one per matrix column block) whose packed slice fits it;
/// distinct slice vectors only, coarsest first; last, every conv at its finest slicing
/// (`finest_sweep_slices`) where that differs.
std::vector<Mapping> enumerate_sweep_mappings(const Net& net, const Machine& machine,
                                              const std::vector<int>& ops);

/// The channel part counts of a group whose first op has `channels` output channels: 1 and the
/// powers of two up to min(channels, 1024); with `cols` > 0 (PlanOptions::channel_part_blocks)
/// also ceil(B / w) for every w in 1..B, B = ceil(channels / cols) (the fewest near-equal parts
/// whose widest spans w column blocks); ascending, distinct.
std::vector<int64_t> channel_part_counts(int64_t channels, int64_t cols);

/// The map space of a group, largest tiles first (row tiles ascending); a per-channel group's
/// channel splits (is_channel_split_group) last, fewest channel tiles first. With `machine`,
/// channel tiles of a grouped conv split none of its units (channel_parts_fit_units), and the
/// divisors of its unit count are channel part counts too (unit_part_counts).
std::vector<Mapping> enumerate_mappings(const Net& net, const std::vector<int>& ops,
                                        const PlanOptions& options,
                                        const Machine* machine = nullptr);

/// The channel part counts that split a grouped conv `ops[0]` at its units alone, whatever the
/// policy's counts: the divisors (up to 1,024) of its unit count where its channels are whole
/// units (RegNet-X 3.2GF's 21 groups of 48 on a 16-column array: 3, 7, 21), and with one group a
/// unit of whole blocks the divisors of its block count (RegNet-X 8GF's 2 groups of 120 on 8
/// columns: 30 blocks, 2, 3, 5, 6, 10, 15, 30); none otherwise.
std::vector<int64_t> unit_part_counts(const Net& net, const Machine& machine,
                                      const std::vector<int>& ops);

/// Whether `channel_tiles` parts of every grouped conv among `ops` (codegen's slices, channels
/// * k / n) each start where a slice may (starts_unit_slice: at one of its conv instructions'
/// units of groups, sched::conv_groups_per_block, or a column block within a group a unit): a
/// part that splits a block-diagonal unit has no conv to run it.
bool channel_parts_fit_units(const Net& net, const Machine& machine, const std::vector<int>& ops,
                             int64_t channel_tiles);

/// The most rows (pixels of a token tensor) one vector instruction covers: the `y_size` and
/// `x_size` fields of lut, add, mul, copy, pool, requant, norm and softmax (docs/isa.md: u10).
inline constexpr int64_t kVectorRowsMax = 1023;

/// The first op of `ops` that a tiling of `rows` x `cols` x `channels` tiles would hand one
/// vector instruction more than kVectorRowsMax rows: an op without matrix work (a conv's rows
/// run in steps) and no view, whose tile holds ceil(H / rows) of its output's H rows (all of
/// them where it runs once: RunsOnce). -1 when every op fits. Swin's first stage holds 3,136
/// token rows: its token ops run in row blocks of at most 1,023.
int vector_rows_overflow(const Net& net, const std::vector<int>& ops, int64_t rows, int64_t cols,
                         int64_t channels);

/// Whether `m` is a point of the map space of `ops` (the rules enumerate_mappings and
/// enumerate_sweep_mappings follow; row and column counts need not be ones they list): row
/// (column) tiles at most the rows (columns) of the group's stored outputs; channel tiles one of
/// channel_part_counts(first op's output channels, machine.matrix_cols) (a power of two up to
/// the channels, 1024 at most, or the fewest parts for a widest part of whole column blocks),
/// only in a weight-streaming or per-channel group, splitting no grouped conv's unit
/// (channel_parts_fit_units); halo caching only with row tiles alone and not
/// double-buffered; a weight sweep only of a sweep-shaped group, one tile, weights streamed and
/// double-buffered, each dense conv a power of two of slices up to one per matrix column block and
/// the other ops none; no vector instruction of more than kVectorRowsMax rows
/// (vector_rows_overflow). A hand-written mapping is checked here before the model costs it;
/// fails naming the mapping's key ("halo: ...").
Status check_mapping(const Net& net, const Machine& machine, const std::vector<int>& ops,
                     const Mapping& m);

/// The hidden-chunk rules of check_mapping (a HiddenChunks group with channel tiles): one row and
/// one column tile, weights streamed, not double-buffered, each chunk of the hidden channels a
/// whole number of matrix-row blocks (B's reduction chunks; every chunk the same size).
Status check_hidden_chunks(const Net& net, const Machine& machine, const std::vector<int>& ops,
                           const Mapping& m);

/// The mapping `group` was evaluated with (its tile counts, halo, residency, buffering, sweep).
Mapping mapping_of(const GroupSchedule& group);

}  // namespace tessel::sched
