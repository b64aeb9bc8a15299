// The search over a group's map space (Timeloop's Search): plan_group (best by the objective,
// pruned by bounds that change no result: docs/scheduler.md "Search speed") and
// plan_group_first_fit (the paper's greedy shrink-until-it-fits).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

#include "scheduler/buffers.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/cancel.hpp"

namespace tessel::sched {

namespace {

// What a tiling's tiles need, without tiling the group per tile. Shape transfer is separable:
// each axis of an input's need depends only on the same axis of the output box (deduce_input),
// and a hull of non-empty boxes is the hull of each axis. So while no box is empty, the need of
// local l in tile (k, r, c) is (channels of run k, rows of run r, columns of run c), where run
// r transfers the stored tensors' row part r at full channels and columns (likewise k and c).
// Any empty box in a run (more parts than a stored tensor has rows, a Concat input outside a
// channel part, a local no tile needs) couples the axes: the methods then give no figure. From
// the runs come the per-tile boxes (tile_group's), a tiling's summed COMPUTE cycles (a tile's
// cycles depend on its rows' and columns' sizes and its channel interval, so the sum runs over
// distinct values with counts) and the bytes it moves at least. The runs of each part count are
// kept: a group's tilings share them.
class SeparableTiling {
 public:
  SeparableTiling(const Net& net, const Machine& machine, const GroupInfo& g)
      : net_(net), machine_(machine), g_(g), channel_blocks_(channel_blocks(net, machine, g)) {}

  /// The per-tile boxes of tiling `m` (tile_group's), as products of the axes' parts; false
  /// (and `geo` untouched) where the axes do not separate.
  bool tile(const Mapping& m, TileGeometry& geo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return false;
    const size_t locals = g_.tensors.size();
    geo = TileGeometry{};
    geo.tiles = m.row_tiles * m.col_tiles * m.channel_tiles;
    geo.once = runs_once(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles);
    geo.need.resize(static_cast<size_t>(geo.tiles) * locals);
    geo.requested.assign(static_cast<size_t>(geo.tiles) * locals, Box{});
    size_t tile = 0;
    for (size_t k = 0; k < static_cast<size_t>(m.channel_tiles); ++k) {
      for (size_t r = 0; r < static_cast<size_t>(m.row_tiles); ++r) {
        for (size_t c = 0; c < static_cast<size_t>(m.col_tiles); ++c, ++tile) {
          for (size_t l = 0; l < locals; ++l) {
            geo.need[tile * locals + l] = Box{cs->parts[k * locals + l], hs->parts[r * locals + l],
                                              ws->parts[c * locals + l]};
            if (!g_.stored[l]) continue;
            geo.requested[tile * locals + l] =
                stored_part(net_.tensor(g_.tensors[l]).shape, m, static_cast<int64_t>(k),
                            static_cast<int64_t>(r), static_cast<int64_t>(c));
          }
        }
      }
    }
    return true;
  }

  /// The DRAM bytes of every mapping of tiling `m` with halo mode `halo` at least move: the
  /// activations its tiles read (exactly, as the cost model counts them: a kept input once,
  /// cached rows once) and write, and every weight and table once (a slice is counted as its
  /// channels' share, rounded down: weight_bytes_for), or -1 where the axes do not separate.
  int64_t bytes_floor(const Mapping& m, HaloMode halo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return -1;
    const size_t locals = g_.tensors.size();
    auto sum = [&](const std::vector<Interval>& parts, size_t l) {
      int64_t total = 0;
      for (size_t i = 0; i < parts.size() / locals; ++i) total += parts[i * locals + l].size();
      return total;
    };
    const std::vector<char> kept = kept_inputs(m);
    int64_t elements = 0;
    for (size_t l = 0; l < locals; ++l) {
      if (g_.stored[l]) elements += net_.tensor(g_.tensors[l]).shape.elements();
      if (!g_.is_input[l]) continue;
      if (kept[l]) {
        elements += cs->parts[l].size() * hs->parts[l].size() * ws->parts[l].size();
        continue;
      }
      int64_t rows = 0;
      if (halo == HaloMode::Cache) {
        for (const Interval& h : fresh_rows(*hs, m.row_tiles, l)) rows += h.size();
      } else {
        rows = sum(hs->parts, l);
      }
      elements += sum(cs->parts, l) * rows * sum(ws->parts, l);
    }
    int64_t bytes = elements * net_.activation_bytes;
    for (int op : g_.ops) {
      const Op& o = net_.op(op);
      const Interval all{0, net_.tensor(o.output).shape.c};
      bytes += weight_bytes_for(net_, o, all) + table_bytes_for(net_, o, all);
    }
    return bytes;
  }

  /// The summed compute cycles of tiling `m` with halo mode `halo` (cached: rows computed by the
  /// previous row tile are not computed again, as evaluate_with's `fresh`), or -1 where the
  /// axes do not separate.
  int64_t compute_cycles(const Mapping& m, HaloMode halo) {
    const auto [cs, hs, ws] = axes(m);
    if (cs == nullptr) return -1;
    const size_t locals = g_.tensors.size();
    const RunsOnce once = runs_once(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles);
    int64_t total = 0;
    for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
      const Op& op = net_.op(g_.ops[pos]);
      const auto out = static_cast<size_t>(g_.out_local[pos]);
      // An op run once (its box the same in every tile): the first tile's cycles alone.
      const bool first_tile_only = once.at(pos);
      // A conv's cycles depend on where its channel part starts only through the groups it
      // spans (grouped, not depthwise).
      const bool grouped = op.kind == OpKind::Conv && op.groups > 1 && !is_depthwise(net_, op);
      const auto channels = counted(cs->parts, locals, out, !grouped);
      const auto cols = counted(ws->parts, locals, out, true);
      const auto rows = halo == HaloMode::Cache
                            ? counted(fresh_rows(*hs, m.row_tiles, out), 1, 0, true)
                            : counted(hs->parts, locals, out, true);
      int64_t rows_per_step = 1;  // as measure_geometry: from the widest tile
      if (op.kind == OpKind::Conv) {
        int64_t widest = 1;
        for (const auto& [w, count] : cols) widest = std::max(widest, w.size());
        rows_per_step = conv_rows_per_step(machine_, widest);
      }
      if (one_step_per_tile(net_, machine_, op))
        for (const auto& [h, count] : rows) rows_per_step = std::max(rows_per_step, h.size());
      for (const auto& [c, c_count] : channels) {
        for (const auto& [h, h_count] : rows) {
          for (const auto& [w, w_count] : cols) {
            total += (first_tile_only ? 1 : c_count * h_count * w_count) *
                     compute_cycles_of(net_, machine_, op, Box{c, h, w}, rows_per_step);
          }
        }
      }
    }
    return total;
  }

  /// kept_inputs of tiling `m` (each tile's box of an input is a product of its axes' runs, so
  /// the input is kept where every run of every axis is the same); `m` must separate.
  std::vector<char> kept_inputs(const Mapping& m) {
    const auto a = axes(m);
    const size_t locals = g_.tensors.size();
    std::vector<char> kept(locals, 0);
    if (!keeps_inputs(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles)) return kept;
    const int64_t counts[3] = {m.channel_tiles, m.row_tiles, m.col_tiles};
    for (size_t l = 0; l < locals; ++l) {
      kept[l] = g_.is_input[l];
      for (size_t axis = 0; axis < 3; ++axis)
        for (int64_t k = 1; k < counts[axis] && kept[l]; ++k)
          kept[l] = a[axis]->parts[static_cast<size_t>(k) * locals + l] == a[axis]->parts[l];
    }
    return kept;
  }

  /// measure_geometry's figures for tiling `m`, from the runs: every tile's box is a product of
  /// one part per axis (none empty where the axes separate), and each figure grows with each
  /// axis's size, so its largest over the tiles is the one at the largest part of each axis
  /// (`exact`). Where the axes do not separate, the tiles whose parts are all clean still are
  /// products of their runs' parts (a clean tile's boxes are all non-empty), so the figures
  /// over those tiles alone are at most the tiling's, with one row per accumulator step: a
  /// lower bound for the demand check (not `exact`). False (and `sizes` untouched) where an
  /// axis has no clean part, or the tiling keeps inputs and the axes do not separate (a kept
  /// input has one copy where a reloaded one may have two: no lower bound).
  bool sizes(const Mapping& m, BufferSizes& sizes, bool& exact) {
    if (chunks_hidden(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles)) return false;
    const Axis* cs = axis(0, m.channel_tiles);
    const Axis* hs = axis(1, m.row_tiles);
    const Axis* ws = axis(2, m.col_tiles);
    exact = cs->separates && hs->separates && ws->separates;
    if (!exact && keeps_inputs(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles))
      return false;
    for (const Axis* a : {cs, hs, ws})
      if (std::find(a->clean.begin(), a->clean.end(), 1) == a->clean.end()) return false;
    const size_t locals = g_.tensors.size();
    auto largest = [&](const Axis& a, size_t l) {
      int64_t most = 0;
      for (size_t i = 0; i < a.clean.size(); ++i)
        if (a.clean[i]) most = std::max(most, a.parts[i * locals + l].size());
      return most;
    };
    sizes.rows_per_step.assign(g_.ops.size(), 1);
    sizes.weight_slice_max.assign(g_.ops.size(), 0);
    sizes.acc_max.assign(g_.ops.size(), 0);
    for (size_t pos = 0; pos < g_.ops.size(); ++pos) {
      const Op& op = net_.op(g_.ops[pos]);
      const auto out = static_cast<size_t>(g_.out_local[pos]);
      if (op.kind == OpKind::Conv)
        sizes.rows_per_step[pos] =
            conv_rows_per_step(machine_, std::max<int64_t>(1, largest(*ws, out)));
      // A weight slice's bytes depend on where its channels start (blocks, groups): each
      // distinct channel part once.
      Interval previous_c{-1, -1};
      // The accumulator columns of the widest part (a grouped conv's units each start a block
      // of their own: column_blocks).
      const int64_t unit = matrix_unit(net_, machine_, op);
      int64_t columns = ceil_div(largest(*cs, out), machine_.matrix_cols);
      for (size_t k = 0; k < static_cast<size_t>(m.channel_tiles); ++k) {
        const Interval c = cs->parts[k * locals + out];
        if (!cs->clean[k] || c == previous_c) continue;
        sizes.weight_slice_max[pos] =
            std::max(sizes.weight_slice_max[pos], onchip_weight_bytes(net_, machine_, op, c, true));
        if (unit > 0)
          columns = std::max(columns, column_block_count(c, unit, machine_.matrix_cols));
        previous_c = c;
      }
      if (constant_by_rows(op) && !m.weights_resident)  // the tallest tile's rows of it
        sizes.weight_slice_max[pos] = table_tile_bytes(
            net_, op, Box{Interval{0, 1}, Interval{0, largest(*hs, out)}, Interval{0, 1}});
      if (one_step_per_tile(net_, machine_, op))
        sizes.rows_per_step[pos] = largest(*hs, out);  // as measure_geometry
      if (has_matrix_work(op) || op.kind == OpKind::MatMul) {
        const int64_t rows = exact ? std::min(sizes.rows_per_step[pos], largest(*hs, out)) : 1;
        sizes.acc_max[pos] =
            rows * largest(*ws, out) * columns * machine_.matrix_cols * machine_.accumulator_bytes;
      }
    }
    sizes.pixel_bytes.assign(locals, 0);
    sizes.max_pixels.assign(locals, 0);
    for (size_t l = 0; l < locals; ++l) {
      sizes.pixel_bytes[l] = channel_blocks_[l].channels(largest(*cs, l)) * net_.activation_bytes;
      sizes.max_pixels[l] = largest(*hs, l) * largest(*ws, l);
    }
    return true;
  }

 private:
  struct Axis {
    bool separates = true;        // every part is clean
    std::vector<char> clean;      // per part: no stored part and no need is empty
    std::vector<Interval> parts;  // part-major: parts x locals (clean parts only)
  };

  // The channel, row and column runs of tiling `m`; all null where one does not separate.
  std::array<const Axis*, 3> axes(const Mapping& m) {
    // The MLP's hidden chunks narrow some tensors' channels and not others: no separable runs.
    if (chunks_hidden(net_, g_.ops, m.row_tiles, m.col_tiles, m.channel_tiles)) return {};
    const std::array<const Axis*, 3> a = {axis(0, m.channel_tiles), axis(1, m.row_tiles),
                                          axis(2, m.col_tiles)};
    if (!a[0]->separates || !a[1]->separates || !a[2]->separates) return {};
    return a;
  }

  const Axis* axis(int which, int64_t parts) {
    auto& memo = memo_[which];
    auto it = memo.find(parts);
    if (it != memo.end()) return &it->second;
    Axis& a = memo[parts];
    const size_t locals = g_.tensors.size();
    a.parts.assign(static_cast<size_t>(parts) * locals, Interval{});
    a.clean.assign(static_cast<size_t>(parts), 1);
    std::vector<Box> need(locals);
    for (int64_t i = 0; i < parts; ++i) {
      char& clean = a.clean[static_cast<size_t>(i)];
      std::fill(need.begin(), need.end(), Box{});
      for (size_t l = 0; l < locals && clean; ++l) {
        if (!g_.stored[l]) continue;
        Box box = full_box(net_.tensor(g_.tensors[l]).shape);
        Interval& split = which == 0 ? box.c : which == 1 ? box.h : box.w;
        split = part(split.e, parts, i);
        clean = !box.empty();
        need[l] = box;
      }
      if (clean) transfer_local(net_, g_, need.data());
      for (size_t l = 0; l < locals && clean; ++l) clean = !need[l].empty();
      a.separates &= clean != 0;
      if (!clean) continue;
      for (size_t l = 0; l < locals; ++l) {
        a.parts[static_cast<size_t>(i) * locals + l] = which == 0   ? need[l].c
                                                       : which == 1 ? need[l].h
                                                                    : need[l].w;
      }
    }
    return &a;
  }

  // The rows of local `l` each row tile computes or reads with cached halos: those the previous
  // row tile did not (evaluate_with's `fresh`).
  std::vector<Interval> fresh_rows(const Axis& hs, int64_t row_tiles, size_t l) const {
    const size_t locals = g_.tensors.size();
    std::vector<Interval> fresh(static_cast<size_t>(row_tiles));
    for (size_t r = 0; r < fresh.size(); ++r) {
      Interval h = hs.parts[r * locals + l];
      if (r > 0) {
        h.b = std::max(h.b, hs.parts[(r - 1) * locals + l].e);
        if (h.e < h.b) h.e = h.b;
      }
      fresh[r] = h;
    }
    return fresh;
  }

  // Distinct intervals of local `l` over the parts, with counts; by size only where the cycles
  // depend on the size alone (rows, columns).
  static std::vector<std::pair<Interval, int64_t>> counted(const std::vector<Interval>& parts,
                                                           size_t locals, size_t l, bool by_size) {
    std::vector<std::pair<Interval, int64_t>> out;
    for (size_t i = 0; i < parts.size() / locals; ++i) {
      Interval v = parts[i * locals + l];
      if (by_size) v = {0, v.size()};
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == v; });
      if (it == out.end()) {
        out.push_back({v, 1});
      } else {
        ++it->second;
      }
    }
    return out;
  }

  const Net& net_;
  const Machine& machine_;
  const GroupInfo& g_;
  const std::vector<ChannelPadding> channel_blocks_;  // per local (channel_blocks)
  std::map<int64_t, Axis> memo_[3];
};

// The least DRAM bytes a group can move: every stored output and weight once, and every input
// once unless a window skips rows or columns (then row or column tiles may read part of it).
int64_t bytes_lower_bound(const Net& net, const GroupInfo& g) {
  const bool skips = skips_rows_or_columns(net, g.ops);
  int64_t bytes = 0;
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if ((g.is_input[l] && !skips) || g.stored[l]) bytes += net.tensor_bytes(g.tensors[l]);
  }
  for (int op : g.ops) bytes += net.op(op).weight_bytes + net.op(op).requant_table_bytes;
  return bytes;
}

// Whether two mappings split the group into the same tiles (the same tiling).
bool same_tiling(const Mapping& a, const Mapping& b) {
  return a.row_tiles == b.row_tiles && a.col_tiles == b.col_tiles &&
         a.channel_tiles == b.channel_tiles;
}

// One group's search: the mappings of `ops` in enumeration order (first fit: resident weights
// first, channel splits last), each pruned, demand-checked or evaluated, then the weight sweeps.
class GroupSearch {
 public:
  GroupSearch(const Net& net, const Machine& machine, const std::vector<int>& ops,
              const PlanOptions& options, bool first_fit, const Mapping* start,
              int64_t cycle_cutoff);
  Result<GroupSchedule> run();

 private:
  std::vector<Mapping> ordered_mappings() const;
  bool last_resort(const Mapping& m) const { return channel_split_group_ && m.channel_tiles > 1; }
  bool before_start(const Mapping& m) const;
  bool enter_tiling(const Mapping& m);
  bool pruned(const Mapping& m);
  bool demand_rejects(const Mapping& m);
  void consider(Result<GroupSchedule> r, const Mapping& m);
  Result<GroupSchedule> finish();
  void build_geometry(const Mapping& m, TileGeometry& into);
  int64_t dram_floor(int64_t bytes) const;
  int64_t bytes_floor(const Mapping& m);
  int64_t cycle_floor(const Mapping& m);
  int64_t cutoff() const;

  const Net& net_;
  const Machine& machine_;
  const std::vector<int>& ops_;
  const PlanOptions& options_;
  const bool first_fit_;
  const Mapping* start_;
  const int64_t cycle_cutoff_;
  const GroupInfo g_;
  const int64_t lower_bound_;
  bool found_ = false;
  GroupSchedule best_;
  std::string last_reason_ = "no mapping";
  TileGeometry geo_;
  Mapping geo_of_{0, 0, 0};     // the tiling `geo_` holds
  Mapping seen_of_{0, 0, 0};    // the tiling of the last mapping considered
  bool resident_fits_ = false;  // in the current geometry
  bool bound_reached_ = false;  // bytes objective: nothing can beat the lower bound
  bool floor_reached_ = false;  // bytes: the best moves options.bytes_floor; only a faster tie wins
  int geometries_since_feasible_ = -1;
  // Per class of the current tiling's mappings (0: recomputed halos, double-buffered; 1:
  // recomputed halos, single-buffered; 2: cached halos, never double-buffered): -1 not yet
  // known, 1 nothing of it can win (pruned).
  int skip_class_[3] = {-1, -1, -1};
  // Per halo mode of the current tiling: its summed compute and its traffic floor
  // (SeparableTiling; -1: the axes do not separate, -2: not computed yet).
  int64_t tiling_compute_[2] = {-2, -2}, tiling_floor_[2] = {-2, -2};
  SeparableTiling separable_;
  // Prefetched weights (loaded before the group) are not on its DMA path.
  const bool dma_on_path_;
  bool hopeless_ = false;
  // The current tiling's buffer sizes from its runs (sizes_known_: it separates), for the
  // demand check.
  BufferSizes sizes_;
  Mapping sizes_of_{0, 0, 0};
  bool sizes_known_ = false, sizes_exact_ = false, tiling_fits_ = true;
  std::vector<char> sizes_kept_;  // kept_inputs of the tiling (none where not exact: a floor)
  // The last mapping those checks rejected, while no later mapping set `last_reason_`: if
  // nothing fits, the search reports its failure as evaluating it reports it.
  std::optional<Mapping> rejected_;
  std::vector<BufferAlloc> scratch_buffers_;
  const std::vector<int64_t> capacities_;
  const bool channel_split_group_;
  const bool chunked_;  // an op runs its reduction in chunks when streamed
  int64_t resident_weight_bytes_ = 0;
  const ScratchpadView& weight_pad_;
};

GroupSearch::GroupSearch(const Net& net, const Machine& machine, const std::vector<int>& ops,
                         const PlanOptions& options, bool first_fit, const Mapping* start,
                         int64_t cycle_cutoff)
    : net_(net),
      machine_(machine),
      ops_(ops),
      options_(options),
      first_fit_(first_fit),
      start_(start),
      cycle_cutoff_(cycle_cutoff),
      g_(describe(net, ops)),
      lower_bound_(bytes_lower_bound(net, g_)),
      separable_(net, machine, g_),
      dma_on_path_(options.prefetch_occupied == nullptr),
      capacities_(machine.capacities()),
      channel_split_group_(is_channel_split_group(net, ops)),
      chunked_(std::any_of(
          ops.begin(), ops.end(),
          [&](int op) { return reduction_chunk_blocks(net, machine, net.op(op)) > 0; })),
      weight_pad_(
          machine.scratchpads[static_cast<size_t>(machine.scratchpad(BufferKind::Weights))]) {
  // Latency with a caller's cutoff: a group whose floor (its MACs on the whole array, or its
  // least bytes over the DRAM bandwidth) exceeds it has no mapping the caller can use, so the
  // first feasible one answers (plan_group's contract).
  int64_t group_macs = 0;
  for (int op : ops) group_macs += net.op(op).macs;
  hopeless_ =
      !first_fit && options.objective == Objective::Latency && cycle_cutoff >= 0 && dma_on_path_ &&
      std::max(group_macs / machine.macs_per_cycle(), dram_floor(lower_bound_)) > cycle_cutoff;
  // Resident weights that alone exceed their scratchpad rule out every resident mapping.
  for (int op : ops) {
    resident_weight_bytes_ += onchip_weight_bytes(net, machine, net.op(op),
                                                  full_box(net.tensor(net.op(op).output).shape).c);
  }
}

// The per-tile boxes of tiling `m` (from the runs where the axes separate) and their figures.
void GroupSearch::build_geometry(const Mapping& m, TileGeometry& into) {
  if (!separable_.tile(m, into)) into = tile_group(net_, g_, m);
  measure_geometry(net_, machine_, g_, into);
}

// DRAM cycles of `bytes`, rounded down: no DMA moves them faster (docs/timing.md).
int64_t GroupSearch::dram_floor(int64_t bytes) const {
  return static_cast<int64_t>(static_cast<double>(bytes) / machine_.dram_bytes_per_cycle);
}

int64_t GroupSearch::bytes_floor(const Mapping& m) {
  const size_t h = m.halo == HaloMode::Cache;
  if (tiling_floor_[h] == -2) tiling_floor_[h] = separable_.bytes_floor(m, m.halo);
  return tiling_floor_[h];
}

// The fewest cycles a mapping of the current tiling's class can take: its summed COMPUTE, and
// its DMA (the least bytes it moves, loads and stores on one bus), which a double-buffered
// mapping overlaps with the compute and a single-buffered one adds to it; -1: unknown.
int64_t GroupSearch::cycle_floor(const Mapping& m) {
  const size_t h = m.halo == HaloMode::Cache;
  if (tiling_compute_[h] == -2) tiling_compute_[h] = separable_.compute_cycles(m, m.halo);
  const int64_t compute = tiling_compute_[h];
  if (compute < 0 || !dma_on_path_) return compute;
  const int64_t dma = dram_floor(std::max<int64_t>(0, bytes_floor(m)));
  return m.double_buffered ? std::max(compute, dma) : compute + dma;
}

// Latency, once a mapping fits: what a mapping must not exceed to matter (the best so far, or
// the caller's cutoff when lower).
int64_t GroupSearch::cutoff() const {
  return cycle_cutoff_ >= 0 ? std::min(cycle_cutoff_, best_.cycles) : best_.cycles;
}

std::vector<Mapping> GroupSearch::ordered_mappings() const {
  // Past max_group_ops only a sweep is planned (check_group let it through as one).
  std::vector<Mapping> ordered = ops_.size() > static_cast<size_t>(options_.max_group_ops)
                                     ? std::vector<Mapping>{}
                                     : enumerate_mappings(net_, ops_, options_, &machine_);
  // First fit (the paper's greedy): shrink the tile with resident weights first; stream
  // weights per tile only when no tile size lets them stay. A per-channel group's channel
  // splits are a last resort (enumerate_mappings): they come after every whole-channel mapping
  // and are tried only when none of those fits.
  if (first_fit_) {
    std::stable_partition(ordered.begin(), ordered.end(),
                          [](const Mapping& m) { return m.weights_resident; });
    std::stable_partition(ordered.begin(), ordered.end(),
                          [&](const Mapping& m) { return !last_resort(m); });
  }
  return ordered;
}

bool GroupSearch::before_start(const Mapping& m) const {
  if (start_ == nullptr) return false;
  if (m.row_tiles != start_->row_tiles) return m.row_tiles < start_->row_tiles;
  if (m.col_tiles != start_->col_tiles) return m.col_tiles < start_->col_tiles;
  return m.channel_tiles < start_->channel_tiles;
}

// A mapping of a new tiling: false where the search stops. Pruning (documented in
// docs/scheduler.md, "Search speed"): once the bytes lower bound is met, later (smaller) tiles
// can only tie; past the first geometry that fits, try at most the objective's search depth
// more (-1: all).
bool GroupSearch::enter_tiling(const Mapping& m) {
  seen_of_ = m;
  if (bound_reached_ && options_.objective == Objective::Bytes) return false;
  const int depth = options_.objective == Objective::Bytes ? options_.search_depth_bytes
                                                           : options_.search_depth_latency;
  if (depth >= 0 && geometries_since_feasible_ >= 0 && ++geometries_since_feasible_ > depth)
    return false;
  resident_fits_ = false;
  std::fill(std::begin(skip_class_), std::end(skip_class_), -1);
  std::fill(std::begin(tiling_compute_), std::end(tiling_compute_), -2);
  std::fill(std::begin(tiling_floor_), std::end(tiling_floor_), -2);
  return true;
}

// Latency: a class of this tiling's mappings whose cycle floor (cycle_floor) exceeds the best
// so far cannot win; skipping it changes no result (docs/scheduler.md "Search speed"). A cached
// halo computes and reads less. Bytes: likewise a tiling whose activation traffic plus every
// weight once exceeds the best so far. Decided at the tiling's first mapping of each class.
bool GroupSearch::pruned(const Mapping& m) {
  int& skip = skip_class_[m.halo == HaloMode::Cache ? 2 : m.double_buffered ? 0 : 1];
  if (skip < 0) {
    skip = found_ &&
           (options_.objective == Objective::Latency ? cycle_floor(m) > cutoff()
                                                     : bytes_floor(m) > best_.traffic.total());
    // Bytes, once the best moves the group's floor (BytesBoundModel::group_floor): no mapping
    // moves fewer bytes, so only one as few and strictly faster can win (better()).
    if (!skip && floor_reached_ && options_.objective == Objective::Bytes) {
      const int64_t fewest = cycle_floor(m);
      skip = fewest >= 0 && fewest >= best_.cycles;
    }
  }
  if (skip == 1) return true;
  // Streamed weights only add bytes; try them for bytes only when resident ones do not fit.
  return !m.weights_resident && resident_fits_ && options_.objective == Objective::Bytes;
}

// A mapping whose buffers fail allocation's demand check (check_demand) is rejected before its
// tiling's per-tile boxes are built, with the failure evaluate_with would give: its requests
// are the same, sized from the runs (docs/scheduler.md "Search speed"). Where the axes do not
// separate, sized from the clean tiles: smaller or equal, so a failure still proves the mapping
// cannot fit.
bool GroupSearch::demand_rejects(const Mapping& m) {
  if (!same_tiling(m, sizes_of_)) {
    sizes_known_ = separable_.sizes(m, sizes_, sizes_exact_);
    sizes_of_ = m;
    tiling_fits_ = !sizes_known_ || tiling_may_fit(machine_, g_, sizes_, options_, capacities_);
    if (sizes_known_) {
      sizes_kept_ =
          sizes_exact_ ? separable_.kept_inputs(m) : std::vector<char>(g_.tensors.size(), 0);
    }
  }
  if (!tiling_fits_) return true;
  if (!sizes_known_) return false;
  const bool keep_slices = GroupSchedule::keeps_weight_slices(
      m.weights_resident, m.row_tiles, m.col_tiles, m.channel_tiles, chunked_);
  const auto requests = buffer_requests(net_, machine_, g_, sizes_, nullptr, m, options_,
                                        sizes_kept_, keep_slices, scratch_buffers_);
  return !check_demand(requests, capacities_).ok();
}

// A feasible mapping `m`, evaluated as `r`.
void GroupSearch::consider(Result<GroupSchedule> r, const Mapping& m) {
  if (m.weights_resident) resident_fits_ = true;
  if (geometries_since_feasible_ < 0) geometries_since_feasible_ = 0;
  if (r.value().traffic.total() <= lower_bound_) bound_reached_ = true;
  if (r.value().traffic.total() <= options_.bytes_floor) floor_reached_ = true;
  if (!found_ || better(r.value(), best_, options_.objective)) {
    best_ = std::move(r).value();
    found_ = true;
  }
}

Result<GroupSchedule> GroupSearch::run() {
  // An op that reduces in chunks streams them through its buffer: never resident (one whose
  // reduction is too long for one instruction chunks even where all its weights fit).
  const bool resident_possible = resident_weight_bytes_ <= weight_pad_.size_bytes && !chunked_;
  for (const Mapping& m : ordered_mappings()) {
    if (cancel_requested()) return cancelled();
    if (found_ && last_resort(m)) break;
    if (before_start(m)) continue;
    if (m.weights_resident && !resident_possible) {
      last_reason_ = chunked_ ? std::string("an op reduces in chunks, which stream")
                              : "resident weights need " + std::to_string(resident_weight_bytes_) +
                                    " bytes, scratchpad '" + weight_pad_.name + "' has " +
                                    std::to_string(weight_pad_.size_bytes);
      rejected_.reset();
      continue;
    }
    if (!same_tiling(m, seen_of_) && !enter_tiling(m)) break;
    if (pruned(m)) continue;
    if (demand_rejects(m)) {
      rejected_ = m;
      continue;
    }
    rejected_.reset();
    if (!same_tiling(m, geo_of_)) {
      build_geometry(m, geo_);
      geo_of_ = m;
    }
    Cutoff over;
    if (found_ && options_.objective == Objective::Latency) over.cycles = cutoff();
    if (found_ && options_.objective == Objective::Bytes) over.bytes = best_.traffic.total();
    auto r = evaluate_with(net_, machine_, g_, geo_, m, options_, over);
    if (!r.ok()) {
      last_reason_ = r.reason();
      continue;
    }
    if (first_fit_ || hopeless_) return r;
    consider(std::move(r), m);
  }
  return finish();
}

// After the group tilings: the reason none fits, then the weight sweeps.
Result<GroupSchedule> GroupSearch::finish() {
  if (!found_ && rejected_) {
    TileGeometry rejected_geo;
    build_geometry(*rejected_, rejected_geo);
    auto r = evaluate_with(net_, machine_, g_, rejected_geo, *rejected_, options_);
    if (r.ok()) return fail("internal: a mapping the demand check rejected fits");
    last_reason_ = r.reason();
  }
  if (options_.allow_weight_sweep && !first_fit_) {
    for (const Mapping& m : enumerate_sweep_mappings(net_, machine_, ops_)) {
      auto r = evaluate_sweep(net_, machine_, g_, m, options_);
      if (!r.ok()) {
        if (!found_) last_reason_ = r.reason();
        continue;
      }
      if (hopeless_) return r;
      if (!found_ || better(r.value(), best_, options_.objective)) {
        best_ = std::move(r).value();
        found_ = true;
      }
    }
  }
  if (!found_) return fail(last_reason_);
  return best_;
}

Result<GroupSchedule> search_group(const Net& net, const Machine& machine,
                                   const std::vector<int>& ops, const PlanOptions& options,
                                   bool first_fit, const Mapping* start = nullptr,
                                   int64_t cycle_cutoff = -1) {
  // A cancelled call fails every group from here on, so the policy's loops run out at once
  // and schedule_graph returns cancelled() (support/cancel.hpp).
  if (cancel_requested()) return cancelled();
  if (auto s = check_group(net, ops, options); !s.ok()) return s.failure();
  if (is_view_group(net, ops, options)) return view_group(net, ops);
  return GroupSearch(net, machine, ops, options, first_fit, start, cycle_cutoff).run();
}

}  // namespace

Result<GroupSchedule> plan_group(const Net& net, const Machine& machine,
                                 const std::vector<int>& ops, const PlanOptions& options,
                                 int64_t cycle_cutoff) {
  return search_group(net, machine, ops, options, false, nullptr,
                      options.objective == Objective::Latency ? cycle_cutoff : -1);
}

Result<GroupSchedule> plan_group_first_fit(const Net& net, const Machine& machine,
                                           const std::vector<int>& ops, const PlanOptions& options,
                                           const Mapping* start) {
  return search_group(net, machine, ops, options, true, start);
}

}  // namespace tessel::sched
