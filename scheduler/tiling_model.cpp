// The model of a group tiling (docs/scheduler.md, "Cycles"): tiles run in order, each loading
// its inputs' boxes (and streamed weight slices), computing its ops and storing its outputs'
// parts; the steps of the one timeline (timeline.hpp), double-buffered or not.
#include <algorithm>
#include <string>

#include "scheduler/buffers.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/timeline.hpp"
#include "scheduler/weight_loads.hpp"

namespace tessel::sched {

namespace {

// Streamed weights: each tile loads its channels' slice of every op (a kept slice, still on
// chip from the previous tile, is not loaded again), adding to its loads; tile 0's are the
// prologue.
void stream_weights(const Net& net, const Machine& machine, const GroupInfo& g,
                    const TileGeometry& geo, bool keep_slices, GroupSchedule& gs,
                    std::vector<int64_t>& load) {
  const size_t locals = g.tensors.size();
  std::vector<Interval> loaded(g.ops.size(), Interval{-1, -1});
  const int64_t start = gs.traffic.weight_traffic();
  for (int64_t t = 0; t < geo.tiles; ++t) {
    const Box* need = &geo.need[static_cast<size_t>(t) * locals];
    for (size_t pos = 0; pos < g.ops.size(); ++pos) {
      if (static_cast<int>(pos) == geo.hidden_reducer) {  // reduction chunk t of B
        const Op& op = net.op(g.ops[pos]);
        const int64_t cycles = load_reduction_chunk(
            net, machine, op, net.tensor(op.inputs[0]).shape.c / geo.hidden_parts, t, gs.traffic);
        load[static_cast<size_t>(t)] += cycles;
        if (t == 0) gs.prologue_weight_cycles += cycles;
        continue;
      }
      if (!geo.once.runs(pos, t)) continue;  // an op run once (RunsOnce): the first tile
      const Op& op = net.op(g.ops[pos]);
      const Box& box = need[static_cast<size_t>(g.out_local[pos])];
      const Interval c = box.c;
      // What the tile loads: its channels' slice, or a row-varying constant's rows.
      const Interval part = loads_table(op) ? table_part(op, box) : c;
      if (keep_slices && part == loaded[pos]) continue;  // the slice is still on chip
      if (geo.hidden_parts > 0 && c.empty()) continue;   // an op after B, before the last chunk
      loaded[pos] = part;
      if (constant_by_rows(op)) {  // the rows the tile's output box adds (Op::constant_operand)
        if (box.empty()) continue;
        const int64_t bytes = table_tile_bytes(net, op, box);
        gs.traffic.weights_read += bytes;
        const int64_t cycles = dma_cycles_for_bytes(machine, bytes);
        load[static_cast<size_t>(t)] += cycles;
        if (t == 0) gs.prologue_weight_cycles += cycles;
        continue;
      }
      const int64_t chunk = pos < gs.reduction_chunk_inputs.size()
                                ? gs.reduction_chunk_inputs[pos] / machine.matrix_rows
                                : 0;
      const int64_t cycles =
          load_weight_slice(net, machine, net.op(g.ops[pos]), c, gs.traffic, chunk);
      load[static_cast<size_t>(t)] += cycles;
      if (t == 0) gs.prologue_weight_cycles += cycles;
    }
    if (t == 0) gs.prologue_weight_bytes = gs.traffic.weight_traffic() - start;  // tile 0's loads
  }
}

// An Embedding's gathered rows (docs/timing.md "gather"): every tile's own tokens, whatever the
// weights' residency, in the tile's load phase. The ids' DMA is already the tile's input load;
// the gather is one instruction with it (one latency), and waits for its mover.
void gather_rows(const Net& net, const Machine& machine, const GroupInfo& g,
                 const TileGeometry& geo, GroupSchedule& gs, std::vector<int64_t>& load) {
  const size_t locals = g.tensors.size();
  const int64_t mover = machine.dma_mover_bytes;
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (op.kind != OpKind::Embedding) continue;
    for (int64_t t = 0; t < geo.tiles; ++t) {
      const Box& box =
          geo.need[static_cast<size_t>(t) * locals + static_cast<size_t>(g.out_local[pos])];
      if (box.empty()) continue;
      const int64_t rows = box.h.size() * box.w.size();
      gs.traffic.weights_read += gathered_bytes(op, box);
      const int64_t ids = bursts_covering(0, 4 * rows, machine.burst_bytes);
      const int64_t row_bursts = ceil_div(op.gather_row_bytes, machine.burst_bytes);
      const int64_t gather = std::max(dma_instruction_cycles(machine, ids + rows * row_bursts),
                                      2 + rows * (2 + ceil_div(op.gather_row_bytes, mover)));
      load[static_cast<size_t>(t)] += gather - dma_instruction_cycles(machine, ids);
    }
  }
}

// Resident weights: every op's weights and table loaded once before the first tile; returns
// their DMA cycles.
int64_t load_resident_weights(const Net& net, const Machine& machine, const GroupInfo& g,
                              GroupSchedule& gs) {
  int64_t cycles = 0;
  for (int op : g.ops) {
    const Op& o = net.op(op);
    gs.traffic.weights_read += o.weight_bytes;
    gs.traffic.requant_tables_read += o.requant_table_bytes;
    cycles += weight_dma_cycles(net, machine, o, Interval{0, net.tensor(o.output).shape.c},
                                o.weight_bytes + o.requant_table_bytes);
  }
  return cycles;
}

Status check_cutoff(const GroupSchedule& gs, Cutoff cutoff) {
  if (cutoff.cycles >= 0 && gs.cycles > cutoff.cycles) {
    return fail("takes " + std::to_string(gs.cycles) + " cycles, over the cutoff " +
                std::to_string(cutoff.cycles));
  }
  if (cutoff.bytes >= 0 && gs.traffic.total() > cutoff.bytes) {
    return fail("moves " + std::to_string(gs.traffic.total()) + " bytes, over the cutoff " +
                std::to_string(cutoff.bytes));
  }
  return {};
}

}  // namespace

Result<GroupSchedule> evaluate_with(const Net& net, const Machine& machine, const GroupInfo& g,
                                    const TileGeometry& geo, const Mapping& m,
                                    const PlanOptions& options, Cutoff cutoff) {
  GroupSchedule gs = schedule_of_group(net, g, options);
  gs.row_tiles = m.row_tiles;
  gs.col_tiles = m.col_tiles;
  gs.channel_tiles = m.channel_tiles;
  gs.halo = m.halo;
  gs.weights_resident = m.weights_resident;
  gs.double_buffered = m.double_buffered;

  // Geometry-only figures (the same for every mapping of this tiling) come from `geo`. Without
  // a cutoff the buffers and their allocation come first, costs only once allocation succeeds,
  // so the many mappings that do not fit are rejected cheaply; with one, the costs come first
  // and a mapping slower than the cutoff is rejected without building its buffers.
  gs.rows_per_step = geo.rows_per_step;
  gs.reduction_chunk_inputs.assign(g.ops.size(), 0);
  if (!m.weights_resident)
    for (size_t pos = 0; pos < g.ops.size(); ++pos)
      gs.reduction_chunk_inputs[pos] =
          reduction_chunk_blocks(net, machine, net.op(g.ops[pos])) * machine.matrix_rows;
  if (geo.hidden_parts > 0) {  // the MLP's hidden chunks: B's reduction loop is the chunks
    if (auto s = check_hidden_chunks(net, machine, g.ops, m); !s.ok()) return s.failure();
    const Op& reducer = net.op(g.ops[static_cast<size_t>(geo.hidden_reducer)]);
    gs.reduction_chunk_inputs[static_cast<size_t>(geo.hidden_reducer)] =
        net.tensor(reducer.inputs[0]).shape.c / geo.hidden_parts;
  }
  // Streamed weights with channel tiles: each slice is loaded once and kept while the
  // row/column tiles of its channels run (channel parts are the outer tile loop).
  const bool keep_slices = gs.keeps_weight_slices();
  // Channel tiles alone (one row, one column tile), or an attention chain's row blocks: an input
  // box the same in every tile (a conv's whole input; K, V) stays on chip from the first tile.
  const std::vector<char> kept = kept_inputs(net, g, geo, m);
  if (!cutoff.active()) {
    if (auto placed = place_buffers(net, machine, g, geo, m, options, kept, keep_slices, gs);
        !placed.ok())
      return placed.failure();
  }

  // ---- costs: per-tile traffic and cycles ----
  set_tile_shape(g, geo, gs);
  const TileGeometry::ActivationCosts& act =
      activation_costs(net, machine, g, geo, kept, m.halo == HaloMode::Cache);
  gs.traffic.activations_read = act.read_bytes;
  gs.traffic.activations_written = act.written_bytes;
  std::vector<int64_t> load = act.load;
  int64_t resident_weight_cycles = 0;
  if (m.weights_resident) {
    const int64_t start = gs.traffic.weight_traffic();
    resident_weight_cycles = load_resident_weights(net, machine, g, gs);
    gs.prologue_weight_bytes = gs.traffic.weight_traffic() - start;
  } else {
    stream_weights(net, machine, g, geo, keep_slices, gs, load);
  }
  gather_rows(net, machine, g, geo, gs, load);
  for (int64_t t = 0; t < geo.tiles; ++t) {
    gs.load_cycles += load[static_cast<size_t>(t)];
    gs.compute_cycles += act.compute[static_cast<size_t>(t)];
    gs.store_cycles += act.store[static_cast<size_t>(t)];
  }
  if (m.weights_resident) gs.prologue_weight_cycles = resident_weight_cycles;
  if (options.prefetch_occupied != nullptr) {
    // The prologue is on chip when the group starts.
    if (m.weights_resident) {
      resident_weight_cycles = 0;
    } else {
      load[0] -= gs.prologue_weight_cycles;
      gs.load_cycles -= gs.prologue_weight_cycles;
    }
  }
  // The one timeline (timeline.hpp): tiles in order, rotating through one or two copies.
  const Timeline tl = run_timeline(load, act.compute, act.store, resident_weight_cycles,
                                   m.double_buffered ? 2 : 1, act.store_bytes);
  gs.cycles = tl.cycles;
  gs.tail_cycles = tl.tail_cycles;
  gs.tail_dma_cycles = tl.tail_dma_cycles;
  gs.tail_dma_bytes = tl.tail_dma_bytes;
  if (auto within = check_cutoff(gs, cutoff); !within.ok()) return within.failure();
  if (cutoff.active()) {
    if (auto placed = place_buffers(net, machine, g, geo, m, options, kept, keep_slices, gs);
        !placed.ok())
      return placed.failure();
  }
  // Names last: only a mapping that is kept needs them.
  name_buffers(net, gs.buffers);
  return gs;
}

}  // namespace tessel::sched
