// A lower bound on the DRAM bytes of every schedule of a network as a function of the on-chip
// capacity (the "ski slope"; docs/bounds.md, "Lower bounds: DRAM bytes per capacity").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"

namespace tessel::sched {

/// One tensor that every schedule moves beyond the compulsory bytes at a capacity.
struct ForcedTraffic {
  int tensor = -1;
  int64_t crossing_bytes = 0;  ///< its store and one load (it cannot stay on chip)
  int64_t reread_bytes = 0;    ///< further loads: a conv's channel parts each read it
  std::string why;             ///< "span" (no group can hold its producer and readers), "reread"
};

/// The bound at one capacity and its terms.
struct BytesBound {
  int64_t capacity_bytes = 0;    ///< every scratchpad together
  int64_t compulsory_bytes = 0;  ///< as Schedule::compulsory_bytes
  /// Compulsory, less the network-input bytes that no op reads (a strided 1x1 window that
  /// skips rows); equal to compulsory on every net whose inputs are read whole.
  int64_t base_bytes = 0;
  int64_t crossing_bytes = 0;  ///< stores + first loads of tensors that must cross DRAM
  int64_t reread_bytes = 0;    ///< loads beyond the first, forced by weight slices
  /// base + crossing + reread: the per-tensor bound (each tensor charged alone).
  int64_t per_tensor_bytes = 0;
  /// The chain bound: the least over every partition of the net's order into groups that pass
  /// the capacity conditions of the execution model, of the bytes its cuts force (-1: no
  /// partition passes, no schedule exists at this capacity).
  int64_t chain_bytes = -1;
  /// Positions (in the net's non-Input ops) where the groups of a partition giving chain_bytes
  /// begin.
  std::vector<int> chain_groups;
  int64_t bytes = 0;  ///< max(per_tensor_bytes, chain_bytes): no schedule moves fewer
  /// The bound from this capacity's facts alone; `bytes` may be higher after
  /// lift_to_larger_capacities (a larger capacity's bound holds here too).
  int64_t own_bytes = 0;
  std::vector<ForcedTraffic> forced;
};

/// One axis of a dense conv's tile grids (F9, docs/bounds.md): `parts` near-equal parts of the
/// output extent (as tiles split stored tensors), the widest input extent one part's windows
/// touch (clamped to the input: padding is never loaded) and the sum of those extents.
struct AxisTiling {
  int64_t parts = 1, widest = 0, total = 0;
};

/// The part counts 1 .. `out` of one axis that no other count beats in both `widest` and
/// `total` (fewer parts first: `widest` descending, `total` ascending; parts = 1 is first).
std::vector<AxisTiling> axis_tilings(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                     int64_t dilation, int64_t pad_begin);

/// A dense conv's input traffic in a weight-streaming group (F7, F9): each of `parts` channel
/// parts loads the input box of each of the `row_tiles` x `col_tiles` tiles, and the widest
/// weight slice and the largest box are on chip together (one tile alone keeps the input
/// whole, loaded once).
struct StreamedLoads {
  int64_t bytes = -1;  ///< the least input bytes over every feasible (parts, grid); -1: none
  int64_t parts = 0, row_tiles = 0, col_tiles = 0;
};

/// The geometry of one dense conv that the F9 floor needs (built once per net).
struct ConvTiles {
  bool valid = false;           ///< a dense conv, not a space-to-depth stem, output needed
  int64_t pixel_bytes = 0;      ///< one input pixel, every input channel
  int64_t per_channel = 0;      ///< compact weights of one output channel
  int64_t channels = 0;         ///< output channels
  int64_t read_bytes = 0;       ///< bytes_read_by (every output element computed)
  int64_t whole_box_bytes = 0;  ///< the input box of one tile (rows and columns whole)
  std::vector<AxisTiling> rows, cols;
  /// The least bytes the largest input box of any tiling holds: the widest one-position window
  /// of each axis (a tiling computes every position, so some tile's box holds that window).
  int64_t min_box_bytes() const;
};
ConvTiles conv_tiles(const Net& net, int conv, bool output_needed = true);

/// The least input bytes any streaming group headed by the conv loads, with `weights` and `maps`
/// bytes of capacity (one buffer of `weights` bytes when `unified`). `power_of_two_parts`: only
/// the part counts the map space offers (powers of two up to 1024), a planner's floor, not a
/// bound (for `deep_fusion_run --gap`).
/// `widest_slice(k)`: the on-chip bytes of the widest of k parts (the packed layout,
/// `widest_slice_bytes`); empty: ceil(C / k) channels of compact weights.
StreamedLoads streamed_input_loads(const ConvTiles& conv, int64_t weights, int64_t maps,
                                   bool unified, bool power_of_two_parts = false,
                                   const std::function<int64_t(int64_t)>& widest_slice = {});

/// The capacity-independent part of the bound of one network (per tensor: its span's conv
/// weights, the largest sweep cut, what a crossing stores and loads; per conv reader: its
/// weights and the bytes it reads). Build once, then evaluate at each capacity (`at`).
class BytesBoundModel {
 public:
  /// `group_caps`: also use F8, the planner's group lengths (PlanOptions::max_group_ops and
  /// max_sweep_ops): a bound for Tessel's planner as it is, no longer equal to compulsory when
  /// everything fits on a net longer than a group may be (docs/scheduler.md, "The chain bound").
  explicit BytesBoundModel(const Net& net, bool group_caps = false);

  /// The bound on `machine`'s scratchpads (the weights' and the activations' scratchpad
  /// capacities; one unified scratchpad serves both).
  BytesBound at(const Machine& machine) const;

  /// What the bound adds for one tensor at given capacities of the weights' and the
  /// activations' scratchpads (ForcedTraffic with tensor -1 when nothing).
  struct Reader {
    int op = -1;
    int64_t weight_bytes = 0;  ///< the conv's compact weights + bias
    int64_t channels = 0;      ///< its output channels
    int64_t read_bytes = 0;    ///< the input bytes its windows touch
  };
  struct TensorTerms {
    int tensor = -1;
    bool network_input = false;
    bool counts_store = true;    ///< false: a view's consumer, a network output, a view of an input
    bool always_forced = false;  ///< its span holds a Softmax or a Reshape and another op
    int64_t span_weights = 0;    ///< conv weights any group holding the span keeps at step 0
    int span_first = -1, span_last = -1;  ///< the span's ops: [producer, last reader] (op indices)
    bool sweep_shaped = false;            ///< every op of the span may be in a weight sweep
    int64_t sweep_cut = 0;  ///< the most whole maps a sweep holding the span keeps at once
    int64_t store_bytes = 0;
    int64_t min_load_bytes = 0;   ///< the least any one reader loads
    std::vector<Reader> readers;  ///< dense conv readers that compute every output element
  };
  const std::vector<TensorTerms>& terms() const { return terms_; }

  /// One candidate group of the chain bound: the non-Input ops [first, first + length) of the
  /// net's order (docs/scheduler.md, "The chain bound").
  struct GroupTerms {
    int64_t traffic = 0;  ///< loads of what it reads from outside + stores of what leaves
    /// Compact weights of its convs (F4 holds their packed bytes, `PackedWeights`, per machine).
    int64_t conv_weights = 0;
    int64_t head_input_load = 0;  ///< its load of the head conv's input (step 3's rereads)
    /// Most map bytes live at a conv's first phase or a pool's or Concat's block (-1: no sweep).
    int64_t sweep_maps = -1;
    /// Two weight-slice copies of one channel's compact weights each (F5 holds two packed
    /// slices of one column block, `PackedWeights`, per machine).
    int64_t sweep_weights = 0;
    /// F10: the most bytes of activation-MatMul `b` operands (each whole: a MatMul's output rows
    /// need all of `b`) live at one MatMul's step (0: no MatMul).
    int64_t matmul_maps = 0;
    bool streams = false;        ///< may be a weight-streaming group
    bool hidden_chunks = false;  ///< may chunk the MLP's hidden dimension (map_space.hpp)
    int64_t fixed_bytes = 0;     ///< its weights, tables and network outputs, each once
    /// A Concat or Reshape alone: a DRAM view that moves nothing itself (`traffic` counts the
    /// stores its inputs' groups make into its output, as the chain counts them).
    bool view = false;
  };
  /// The candidate groups beginning at position `first` (index: length - 1), up to the first
  /// length no group may have.
  const std::vector<GroupTerms>& groups_from(size_t first) const { return groups_[first]; }

  /// The fewest DRAM bytes any mapping of the group of positions [first, first + length) moves
  /// on `machine` (its loads, stores, forced rereads, weights, tables and network outputs), or
  /// -1 where the execution model's facts rule every mapping of it out (`optimal` then does not
  /// plan it; docs/scheduler.md, "Search speed").
  int64_t group_floor(size_t first, size_t length, const Machine& machine) const;

  /// F9 for the dense conv at position `first` on `machine` (bytes -1: not a dense conv, or no
  /// tiling fits), as streamed_input_loads.
  StreamedLoads head_streamed_loads(size_t first, const Machine& machine,
                                    bool power_of_two_parts = false) const;

 private:
  struct HeadConv {
    int op = -1;
    int64_t weight_bytes = 0, channels = 0, read_bytes = 0;  ///< read_bytes 0: none
  };
  /// The on-chip bytes of the convs' weights on one machine's array (F4, F5: the packed layout
  /// codegen places in weight buffers), by position in the net's non-Input ops.
  /// A range-maximum table: level j, position p: the most over positions p .. p + 2^j - 1.
  using RangeMax = std::vector<std::vector<int64_t>>;
  struct PackedWeights {
    int64_t rows = 0, cols = 0, weight_bytes = 0;  ///< the machine fields the packing reads
    int64_t accumulator_bytes = 0;                 ///< 0: accumulators in a scratchpad of their own
    std::vector<int64_t> prefix;  ///< sum over positions < p of every Conv's whole packed weights
    /// A dense conv's packed one-channel slice (one column block; 0 for other ops).
    RangeMax slice_max;
    /// F11, per position: a Conv's input window (its widest one-position window, every
    /// channel padded to the block it packs: columns for a depthwise conv, rows else) in bytes
    /// (0 for other ops), and its accumulator's bytes per pixel where accumulators share the
    /// one scratchpad (0 else).
    std::vector<int64_t> window, acc_pixel;
    /// Per position, one output block of a Gemm's or dense conv's whole reduction on chip
    /// (output_block_reduction_bytes), and the least room of a reduction chunk (one input
    /// block of it with the block's bias and table); 0 for other ops.
    std::vector<int64_t> block_whole, block_chunk;
    int64_t conv_weights(size_t first, size_t length) const;
    int64_t one_slice(size_t first, size_t length) const;
    /// Whether an op of positions [first, first + length) runs its reduction in chunks with
    /// `weights` bytes of weight scratchpad: its weights need not be on chip whole, nor one
    /// output block of them (docs/codegen.md "Reduction chunks"), so no fact about the weights'
    /// room holds for such a group.
    bool chunks(size_t first, size_t length, int64_t weights) const;
  };
  /// The scratchpads the facts check: the weights' and the activations' capacities.
  struct Capacities {
    int64_t weights = 0, maps = 0;
    bool unified = false;         ///< one scratchpad holds both
    const Machine* on = nullptr;  ///< the machine (packed slice sizes)
    const PackedWeights* packed = nullptr;
    Capacities(const BytesBoundModel& model, const Machine& machine);
  };
  /// The packed weights on `machine`'s array, built once per array shape and weight width.
  const PackedWeights& packed_weights(const Machine& machine) const;
  /// F9 for conv `op` with its packed slices on `c.machine`.
  StreamedLoads packed_streamed_loads(int op, const Capacities& c, bool power_of_two_parts) const;
  bool group_fits(size_t first, const GroupTerms& g, size_t length, const Capacities& c) const;
  bool sweep_fits(size_t first, size_t length, const GroupTerms& g, const Capacities& c) const;
  /// The least input bytes conv `op` loads where it must stream its weights in channel parts
  /// (step 3 with F9; the old k x read where no tiling fits: no schedule exists then).
  int64_t streamed_loads(int op, int64_t weight_bytes, int64_t channels, int64_t read_bytes,
                         const Capacities& c) const;
  /// Bytes the group's head conv loads beyond head_input_load (step 3), 0 if none;
  /// `streamed`: streamed_loads of the head, when known (-1: compute it).
  int64_t head_rereads(size_t first, size_t length, const GroupTerms& g, const Capacities& c,
                       int64_t streamed = -1) const;
  void chain_bound(const Machine& machine, BytesBound& bound) const;

  bool group_caps_ = false;
  int64_t compulsory_ = 0;
  int64_t base_ = 0;
  int64_t base_without_inputs_ = 0;  ///< base less every network input's load (the chain's)
  std::vector<TensorTerms> terms_;
  std::vector<std::vector<GroupTerms>> groups_;  ///< per first position
  std::vector<HeadConv> heads_;                  ///< per position: a dense conv reading its input
  std::shared_ptr<const Net> net_;               ///< a copy: packed slice sizes per machine
  std::vector<ConvTiles> tiles_;                 ///< per op: a dense conv's tile geometry (F9)
  /// F11, per position: a Conv's widest one-position input window in pixels and its width
  /// (0: none), and the positions of the Convs with a window that read its output.
  std::vector<int64_t> window_pixels_, window_cols_;
  std::vector<std::vector<size_t>> conv_readers_;
  /// F11: the most bytes live at one conv's step of a tiled group [first, first + length)
  /// with no channel tiles (weights, window boxes and accumulators on one scratchpad), and
  /// the largest window box alone.
  struct TiledSteps {
    int64_t unified = 0, maps = 0;
  };
  TiledSteps tiled_steps(size_t first, size_t length, const Capacities& c) const;
  std::vector<int> seq_;  ///< per position: its op
  mutable std::mutex packed_mutex_;
  mutable std::vector<std::unique_ptr<PackedWeights>> packed_;  ///< per array shape seen
};

/// Makes bounds of one model at several capacities non-increasing in capacity (docs/bounds.md,
/// "Monotone in capacity"): every schedule that fits a capacity fits each larger one (every
/// scratchpad no smaller, as scale_scratchpads makes them) and moves the same bytes there, so
/// the bound at a larger capacity also holds at a smaller one. Each row's `bytes` becomes the
/// most of its own and every larger capacity's; `own_bytes` keeps its own. Any order.
void lift_to_larger_capacities(std::vector<BytesBound>& rows);

/// The bound of `net` on `machine` (BytesBoundModel(net).at(machine)).
BytesBound bytes_lower_bound(const Net& net, const Machine& machine);

/// `machine` with every scratchpad scaled by `total_bytes` / (their sum), so that they hold
/// `total_bytes` together (rounded down per scratchpad; a unified buffer becomes exactly
/// `total_bytes`).
Machine scale_scratchpads(const Machine& machine, int64_t total_bytes);

/// Bytes of `tensor` that op `reader` touches when it computes every output element: every
/// element, except for a conv or pool whose windows miss rows or columns (a strided 1x1
/// window), where only the rows and columns some window reads count.
int64_t bytes_read_by(const Net& net, int reader, int tensor);

/// The smallest number of output-channel parts of `channels` channels whose widest part
/// (ceil(channels / k) channels of `per_channel` bytes) fits `capacity`; `channels` when not
/// even one channel fits (no schedule exists then).
int64_t fewest_channel_parts(int64_t channels, int64_t per_channel, int64_t capacity);

}  // namespace tessel::sched
