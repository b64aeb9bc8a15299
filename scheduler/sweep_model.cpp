// The weight-sweep model (docs/scheduler.md, "Weight sweeps"). One spatial tile: every tensor's
// box is its one-tile shape transfer. Ops form blocks (a conv and the per-slice ops after it);
// within a block the ops interleave slice by slice, so lifetimes are whole blocks. A tensor
// produced and consumed within one block and not stored holds one slice ("slice-local"); every
// other tensor holds its whole box. A per-slice op may write its output in place over an input
// it reads last, when its block's conv does not read that input and both hold the same layout
// (same offset, same pixel stride): slice k's output bytes are then exactly the input bytes
// slice k consumed.
#include <algorithm>
#include <string>
#include <utility>

#include "scheduler/buffers.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/timeline.hpp"

namespace tessel::sched {

namespace {

// A sweep's blocks and phases, and per local tensor its place in them.
struct SweepPlan {
  std::vector<size_t> block;               // per op position: position of its block's conv
  std::vector<int> block_last;             // per conv position: its block's last step
  std::vector<NestStep> steps;             // the phases: the nest's steps (nest_steps)
  std::vector<int> end_phase;              // per op position: the phase its last work runs in
  std::vector<int> phase_last_step;        // per phase: the last step of any op it runs
  std::vector<int> producer, last_reader;  // per local: op positions (-1: none)
  std::vector<char> slice_local;           // per local: holds one slice
  std::vector<int> overwrites;             // per local: the local it overwrites in place, or -1
  std::vector<size_t> chain;               // per local: the root of its in-place chain
  std::vector<int64_t> chain_pixel_bytes;  // per chain root: the widest pixel any member needs
  int last_step_of_block(size_t pos) const { return block_last[block[pos]]; }
  int phases() const { return static_cast<int>(phase_last_step.size()); }
};

// Checks that `m` is a sweep of `g` and fills `s`'s blocks and phases. Phases in program order
// (slice k of a conv and its block's per-slice ops; a block run whole joins the phase before
// it).
Status sweep_blocks(const Net& net, const GroupInfo& g, const Mapping& m, SweepPlan& s) {
  const size_t n_ops = g.ops.size();
  if (!is_weight_sweep_group(net, g.ops))
    return fail(
        "not a weight-sweep group (a conv first, at least two convs, then only "
        "elementwise ops of each conv's block, windowed pools and Concats)");
  if (m.row_tiles != 1 || m.col_tiles != 1 || m.channel_tiles != 1)
    return fail("a weight sweep has one tile");
  if (m.op_slices.size() != n_ops)
    return fail("weight sweep: " + std::to_string(m.op_slices.size()) + " slice counts for " +
                std::to_string(n_ops) + " ops");
  s.block.assign(n_ops, 0);
  s.block_last.assign(n_ops, 0);
  for (size_t pos = 0; pos < n_ops; ++pos) {
    const Op& op = net.op(g.ops[pos]);
    s.block[pos] = is_dense_conv(op) || runs_whole_in_sweep(op) ? pos : s.block[pos - 1];
    s.block_last[s.block[pos]] = static_cast<int>(pos) + 1;
    const int64_t slices = m.op_slices[pos];
    const int64_t channels = net.tensor(op.output).shape.c;
    if (is_dense_conv(op) ? slices < 1 || slices > channels : slices != 0)
      return fail("weight sweep: op '" + op.name + "' has " + std::to_string(slices) + " slices");
  }
  // Phases in program order: the steps of the sweep's loop nest (nest_steps).
  auto steps = nest_steps(net, mapping_loops(net, g.ops, m));
  if (!steps.ok()) return steps.failure();
  s.steps = std::move(steps.value());
  s.end_phase.assign(n_ops, -1);
  for (size_t w = 0; w < s.steps.size(); ++w) {
    const NestStep& step = s.steps[w];
    int last = s.block_last[step.first_op];
    for (size_t pos = step.first_op; pos < step.end_op; ++pos)
      s.end_phase[pos] = static_cast<int>(w);
    for (size_t pos : step.whole_ops) {
      last = std::max(last, static_cast<int>(pos) + 1);
      s.end_phase[pos] = static_cast<int>(w);
    }
    s.phase_last_step.push_back(last);
  }
  return {};
}

// In place (see above): a per-slice op's output over an input it reads last. Over a whole-map
// input the output holds the whole map too (it costs no byte: it is the input's buffer).
void find_in_place(const Net& net, const GroupInfo& g, const TileGeometry& one, SweepPlan& s) {
  const size_t locals = g.tensors.size();
  std::vector<char> taken(locals, 0);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (is_dense_conv(op) || runs_whole_in_sweep(op)) continue;  // never in place
    const auto y = static_cast<size_t>(g.out_local[pos]);
    if (one.need[y].empty()) continue;
    const Op& block_conv = net.op(g.ops[s.block[pos]]);
    // Whole-map inputs first: over one, the chain can go on to a stored output.
    std::vector<int> candidates = g.in_local[pos];
    std::stable_partition(candidates.begin(), candidates.end(),
                          [&](int l) { return !s.slice_local[static_cast<size_t>(l)]; });
    for (int in : candidates) {
      const auto x = static_cast<size_t>(in);
      if (s.overwrites[y] >= 0 || taken[x] || one.need[x].empty()) continue;
      const bool read_by_conv = std::find(block_conv.inputs.begin(), block_conv.inputs.end(),
                                          g.tensors[x]) != block_conv.inputs.end();
      if (s.last_reader[x] != static_cast<int>(pos) || g.stored[x] || read_by_conv ||
          one.need[x].h != one.need[y].h || one.need[x].w != one.need[y].w)
        continue;
      if (s.slice_local[x] && !s.slice_local[y]) continue;  // a slice cannot hold the whole map
      s.slice_local[y] = s.slice_local[x];
      s.overwrites[y] = static_cast<int>(x);
      taken[x] = 1;
    }
  }
}

// The widest slice of the block of the conv at `conv_pos`, in channels.
int64_t slice_channels(const Net& net, const GroupInfo& g, const Mapping& m, size_t conv_pos) {
  return ceil_div(net.tensor(net.op(g.ops[conv_pos]).output).shape.c, m.op_slices[conv_pos]);
}

// Fills `s`'s per-local figures: producers and readers, slice-local tensors, in-place chains
// and each chain's layout (every member has the chain's: the widest pixel any needs).
void sweep_locals(const Net& net, const GroupInfo& g, const Mapping& m, const TileGeometry& one,
                  const PlanOptions& options, SweepPlan& s) {
  const size_t locals = g.tensors.size();
  s.producer.assign(locals, -1);
  s.last_reader.assign(locals, -1);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    s.producer[static_cast<size_t>(g.out_local[pos])] = static_cast<int>(pos);
    for (int l : g.in_local[pos]) {
      s.last_reader[static_cast<size_t>(l)] = static_cast<int>(pos);
    }
  }
  s.slice_local.assign(locals, 0);
  for (size_t l = 0; l < locals; ++l) {
    s.slice_local[l] = s.producer[l] >= 0 && !g.stored[l] && s.last_reader[l] >= 0 &&
                       s.block[static_cast<size_t>(s.last_reader[l])] ==
                           s.block[static_cast<size_t>(s.producer[l])];
  }
  s.overwrites.assign(locals, -1);
  if (options.memory_reuse) find_in_place(net, g, one, s);
  s.chain.assign(locals, 0);
  s.chain_pixel_bytes.assign(locals, 0);
  for (size_t l = 0; l < locals; ++l) {
    size_t r = l;
    while (s.overwrites[r] >= 0) r = static_cast<size_t>(s.overwrites[r]);
    s.chain[l] = r;
    // The whole box's pixel as a tiling measures it (channels padded where a conv reads it),
    // or one slice's.
    const int64_t pixel =
        s.slice_local[l] ? slice_channels(net, g, m, s.block[static_cast<size_t>(s.producer[l])]) *
                               net.activation_bytes
                         : one.pixel_bytes[l];
    s.chain_pixel_bytes[r] = std::max(s.chain_pixel_bytes[r], pixel);
  }
}

// The sweep's buffers into `gs`: one per tensor the tile holds (live over whole blocks; a
// stored tensor until its store is waited for), the slice pair and each conv's accumulator.
void sweep_buffers(const Net& net, const Machine& machine, const GroupInfo& g, const Mapping& m,
                   const TileGeometry& one, const PlanOptions& options, const SweepPlan& s,
                   GroupSchedule& gs) {
  const size_t locals = g.tensors.size();
  const int store_step = static_cast<int>(g.ops.size()) + 1;
  const int n_phases = s.phases();
  // Early stores: a stored tensor is stored after the phase that completes it (r); the compute
  // of phase r + 2 waits for that store, so its buffer must outlive phase r + 1. Stores of the
  // last two phases are waited for by the group's end instead (docs/scheduler.md).
  auto stored_until = [&](int ready_phase) {
    return ready_phase + 2 < n_phases ? s.phase_last_step[static_cast<size_t>(ready_phase + 1)]
                                      : store_step;
  };
  std::vector<BufferAlloc>& buffers = gs.buffers;
  std::vector<int> buffer_of_local(locals, -1);
  for (size_t l = 0; l < locals; ++l) {
    const Box& box = one.need[l];
    if (box.empty()) continue;
    BufferAlloc b;
    b.tensor = g.tensors[l];
    // In-place chains cross roles (a loaded input overwritten by a stored output): every
    // activation buffer of a sweep lies in the activations scratchpad.
    b.kind = BufferKind::Activations;
    b.role = s.producer[l] < 0 ? BufferRole::Input
             : g.stored[l]     ? BufferRole::Output
                               : BufferRole::Intermediate;
    b.pixel_bytes = s.chain_pixel_bytes[s.chain[l]];
    b.size_bytes = box.h.size() * box.w.size() * b.pixel_bytes;
    b.first_step =
        s.producer[l] < 0 ? 0 : static_cast<int>(s.block[static_cast<size_t>(s.producer[l])]) + 1;
    b.last_step = s.last_reader[l] >= 0
                      ? s.last_step_of_block(static_cast<size_t>(s.last_reader[l]))
                      : b.first_step;
    if (g.stored[l])
      b.last_step = std::max(
          b.last_step, stored_until(s.end_phase[static_cast<size_t>(std::max(s.producer[l], 0))]));
    buffer_of_local[l] = add_buffer(buffers, b, machine, options, store_step);
  }
  int64_t widest = 0;
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (is_dense_conv(op))
      widest = std::max(widest, widest_slice_bytes(net, machine, op, m.op_slices[pos]));
  }
  BufferAlloc w;
  w.role = BufferRole::Weights;
  w.kind = BufferKind::Weights;
  w.size_bytes = widest;
  w.first_step = 0;
  w.last_step = store_step;
  add_buffer(buffers, w, machine, options, store_step);
  // Prefetch: the first slice lands in copy 0 during the previous group.
  if (options.prefetch_occupied != nullptr) buffers.back().first_step = -1;
  w.copy = 1;
  add_buffer(buffers, w, machine, options, store_step);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    if (!is_dense_conv(op)) continue;
    const Box& out = one.need[static_cast<size_t>(g.out_local[pos])];
    BufferAlloc a;
    a.role = BufferRole::Accumulator;
    a.kind = BufferKind::Accumulators;
    a.op = g.ops[pos];
    a.size_bytes =
        accumulator_bytes(machine, gs.rows_per_step[pos], out, slice_channels(net, g, m, pos));
    a.first_step = static_cast<int>(pos) + 1;
    a.last_step = s.last_step_of_block(pos);
    add_buffer(buffers, a, machine, options, store_step);
  }
  for (size_t l = 0; l < locals; ++l) {
    if (s.overwrites[l] >= 0 && buffer_of_local[l] >= 0)
      buffers[static_cast<size_t>(buffer_of_local[l])].reuses =
          buffer_of_local[static_cast<size_t>(s.overwrites[l])];
  }
}

// The steps of the one timeline (timeline.hpp), one per step of the sweep's loop nest
// (nest_steps: slice k of a conv, then the block's per-slice ops on it; a pool or Concat block
// runs whole at the end of the step before it, the last slice of the blocks before it:
// everything it can read is complete then): its slice's load cycles and its compute cycles (the
// stores come from sweep_costs).
StepCosts sweep_phases(const Net& net, const Machine& machine, const GroupInfo& g, const Mapping& m,
                       const TileGeometry& one, const SweepPlan& s, GroupSchedule& gs) {
  StepCosts ph;
  auto compute_of = [&](size_t pos, Interval channels) {
    const Box& out = one.need[static_cast<size_t>(g.out_local[pos])];
    return compute_cycles_of(net, machine, net.op(g.ops[pos]), Box{channels, out.h, out.w},
                             gs.rows_per_step[pos]);
  };
  for (const NestStep& step : s.steps) {
    const Op& conv = net.op(g.ops[step.first_op]);
    const Interval c =
        part(net.tensor(conv.output).shape.c, m.op_slices[step.first_op], step.slice);
    const int64_t start = gs.traffic.weight_traffic();
    ph.load.push_back(load_weight_slice(net, machine, conv, c, gs.traffic));
    if (ph.load.size() == 1) gs.prologue_weight_bytes = gs.traffic.weight_traffic() - start;
    int64_t compute = 0;
    for (size_t q = step.first_op; q < step.end_op; ++q) compute += compute_of(q, c);
    for (size_t pos : step.whole_ops)
      compute += compute_cycles_of(net, machine, net.op(g.ops[pos]),
                                   one.need[static_cast<size_t>(g.out_local[pos])], 1);
    ph.compute.push_back(compute);
  }
  return ph;
}

// The sweep's traffic and cycles into `gs`.
Status sweep_costs(const Net& net, const Machine& machine, const GroupInfo& g, const Mapping& m,
                   const TileGeometry& one, const PlanOptions& options, const SweepPlan& s,
                   GroupSchedule& gs) {
  const int n_phases = s.phases();
  // Activations as the one tile of a tiling loads and stores them: every input once, every
  // stored output whole, each after the phase that completes it (early stores).
  const std::vector<char> none(g.tensors.size(), 0);
  const TileGeometry::ActivationCosts& act = activation_costs(net, machine, g, one, none, false);
  gs.traffic.activations_read = act.read_bytes;
  gs.traffic.activations_written = act.written_bytes;
  std::vector<int64_t> phase_store(static_cast<size_t>(n_phases), 0);  // stores after phase w
  std::vector<int64_t> phase_store_bytes(static_cast<size_t>(n_phases), 0);
  for (size_t l = 0; l < g.tensors.size(); ++l) {
    if (!g.stored[l]) continue;
    const auto w = static_cast<size_t>(s.end_phase[static_cast<size_t>(s.producer[l])]);
    phase_store[w] += dma_cycles_for_box(net, machine, g.tensors[l], one.requested[l]);
    phase_store_bytes[w] += one.requested[l].elements() * net.activation_bytes;
  }
  set_tile_shape(g, one, gs);
  StepCosts ph = sweep_phases(net, machine, g, m, one, s, gs);
  const size_t phases = ph.load.size();
  if (static_cast<int>(phases) != n_phases) return fail("internal: weight sweep phase count");
  gs.prologue_weight_cycles = phases > 0 ? ph.load[0] : 0;
  // Prefetched: slice 0 is on chip when the group starts (its load is no longer on the LOAD
  // engine's path; phase 0 waits for the activations only).
  if (options.prefetch_occupied != nullptr && phases > 0) ph.load[0] = 0;
  gs.load_cycles = act.load[0];
  for (size_t w = 0; w < phases; ++w) {
    gs.load_cycles += ph.load[w];
    gs.compute_cycles += ph.compute[w];
  }
  gs.store_cycles = act.store[0];
  // The one timeline (timeline.hpp): the activations first, then phase by phase, slices and
  // stores rotating through the mapping's copies (a sweep is double-buffered).
  ph.store = std::move(phase_store);
  ph.store_bytes = std::move(phase_store_bytes);
  ph.before = act.load[0];
  ph.copies = m.double_buffered ? 2 : 1;
  const Timeline tl = run_timeline(ph);
  gs.cycles = tl.cycles;
  gs.tail_cycles = tl.tail_cycles;
  gs.tail_dma_cycles = tl.tail_dma_cycles;
  gs.tail_dma_bytes = tl.tail_dma_bytes;
  return {};
}

}  // namespace

Result<GroupSchedule> evaluate_sweep(const Net& net, const Machine& machine, const GroupInfo& g,
                                     const Mapping& m, const PlanOptions& options) {
  SweepPlan s;
  if (auto valid = sweep_blocks(net, g, m, s); !valid.ok()) return valid.failure();
  TileGeometry one = tile_group(net, g, Mapping{});
  measure_geometry(net, machine, g, one);
  sweep_locals(net, g, m, one, options, s);

  GroupSchedule gs = schedule_of_group(net, g, options);
  gs.weights_resident = false;
  gs.double_buffered = true;
  gs.weight_sweep = true;
  gs.op_slices = m.op_slices;
  gs.rows_per_step = one.rows_per_step;
  sweep_buffers(net, machine, g, m, one, options, s, gs);
  // One request per in-place chain, its members sharing one offset.
  if (auto placed = allocate_buffers(machine, options, true, gs); !placed.ok())
    return placed.failure();
  if (auto costed = sweep_costs(net, machine, g, m, one, options, s, gs); !costed.ok())
    return costed.failure();
  name_buffers(net, gs.buffers);
  return gs;
}

}  // namespace tessel::sched
