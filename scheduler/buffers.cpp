// A group tiling's buffers: activation tiles (ping-pong copies, cached halos, kept inputs),
// weight slices, accumulators, deep reuse; their allocation requests and demand check.
#include "scheduler/buffers.hpp"

#include <algorithm>

#include "scheduler/cost_model.hpp"

namespace tessel::sched {

int add_buffer(std::vector<BufferAlloc>& buffers, BufferAlloc b, const Machine& machine,
               const PlanOptions& options, int store_step) {
  if (!options.memory_reuse) {
    b.first_step = 0;
    b.last_step = store_step;
  }
  b.scratchpad = machine.scratchpad(b.kind);
  buffers.push_back(std::move(b));
  return static_cast<int>(buffers.size()) - 1;
}

void name_buffers(const Net& net, std::vector<BufferAlloc>& buffers) {
  for (BufferAlloc& b : buffers) {
    if (b.role == BufferRole::Weights) {
      b.name = b.op >= 0 ? "w:" + net.op(b.op).name : "w:sweep";
    } else if (b.role == BufferRole::Accumulator) {
      b.name = "acc:" + net.op(b.op).name;
    } else {
      b.name = net.tensor(b.tensor).name;
    }
    if (b.copy == 1) b.name += "#1";
  }
}

namespace {

// One activation buffer per local a tile holds (two copies where double-buffered, unless a
// kept input); per local, its (first copy's) index in `buffers`, or -1.
std::vector<int> activation_buffers(const Machine& machine, const GroupInfo& g,
                                    const BufferSizes& sizes, const Mapping& m,
                                    const PlanOptions& options, const std::vector<char>& kept,
                                    std::vector<BufferAlloc>& buffers) {
  const size_t locals = g.tensors.size();
  const int store_step = static_cast<int>(g.ops.size()) + 1;
  const bool cache = m.halo == HaloMode::Cache;
  std::vector<int> buffer_of_local(locals, -1);
  for (size_t l = 0; l < locals; ++l) {
    BufferAlloc b;
    b.pixel_bytes = sizes.pixel_bytes[l];
    b.size_bytes = sizes.max_pixels[l] * sizes.pixel_bytes[l];
    if (b.size_bytes == 0) continue;
    b.tensor = g.tensors[l];
    // A kept input is loaded once: it has no second copy. An Embedding's output is loaded as
    // an input is (the tile's gathers, in its load phase): two copies where double-buffered, on
    // chip from step 0.
    const bool ping_pong =
        m.double_buffered && (g.is_input[l] || g.stored[l] || g.gathered[l]) && !kept[l];
    if (g.is_input[l]) {
      b.role = BufferRole::Input;
      b.kind = BufferKind::Activations;
      b.first_step = 0;
      b.last_step = g.last_use_step[l];
    } else if (g.stored[l]) {
      b.role = BufferRole::Output;
      b.kind = g.internal_use[l] ? BufferKind::Activations : BufferKind::Outputs;
      b.first_step = g.produced_step[l];
      b.last_step = store_step;
    } else {
      b.role = BufferRole::Intermediate;
      b.kind = BufferKind::Activations;
      b.first_step = g.produced_step[l];
      b.last_step = g.last_use_step[l];
    }
    if (ping_pong || cache || kept[l] || g.gathered[l]) {
      b.first_step = 0;
      b.last_step = store_step;
    }
    buffer_of_local[l] = add_buffer(buffers, b, machine, options, store_step);
    if (ping_pong) {
      b.copy = 1;
      add_buffer(buffers, b, machine, options, store_step);
    }
  }
  return buffer_of_local;
}

// Each op's weight buffer (two copies where streamed and double-buffered) and accumulator.
void weight_and_accumulator_buffers(const Net& net, const Machine& machine, const GroupInfo& g,
                                    const BufferSizes& sizes, const Mapping& m,
                                    const PlanOptions& options, bool keep_slices,
                                    std::vector<BufferAlloc>& buffers) {
  const int store_step = static_cast<int>(g.ops.size()) + 1;
  const int hidden_reducer = chunks_hidden(net, g.ops, m.row_tiles, m.col_tiles, m.channel_tiles)
                                 ? hidden_chunks(net, g.ops).reducer
                                 : -1;
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    const int step = static_cast<int>(pos) + 1;
    const bool reducer = hidden_reducer == static_cast<int>(pos);
    if (sizes.weight_slice_max[pos] > 0) {
      BufferAlloc w;
      w.role = BufferRole::Weights;
      w.kind = BufferKind::Weights;
      w.op = g.ops[pos];
      // Resident: every channel part's slice, each packed from its first channel.
      int64_t resident_bytes = 0;
      if (m.weights_resident) {
        const int64_t channels = net.tensor(op.output).shape.c;
        const int64_t parts = pos == 0 ? m.channel_tiles : 1;
        for (int64_t k = 0; k < parts; ++k)
          resident_bytes += onchip_weight_bytes(net, machine, op, part(channels, parts, k));
      }
      w.size_bytes = m.weights_resident ? resident_bytes : sizes.weight_slice_max[pos];
      // A streamed slice kept across the row/column tiles of its channels lives over whole
      // tiles; a slice reloaded every tile lives from the tile's loads (step 0: the load engine
      // writes it before the tile's first op) to its op's step, so it shares no byte with
      // buffers of the steps in between.
      // Double-buffered streamed weights ping-pong like activations: two copies, each live
      // over whole tiles (the next tile's slice loads while this tile's conv reads the other).
      const bool ping_pong = m.double_buffered && !m.weights_resident;
      // The MLP's hidden chunks: B's bias and table, loaded with chunk 0, stay to the last tile.
      const bool whole_tile = m.weights_resident || keep_slices || ping_pong || reducer;
      w.first_step = 0;
      w.last_step = whole_tile ? store_step : step;
      add_buffer(buffers, w, machine, options, store_step);
      if (ping_pong) {
        w.copy = 1;
        add_buffer(buffers, w, machine, options, store_step);
      }
    }
    if (sizes.acc_max[pos] > 0) {
      BufferAlloc a;
      a.role = BufferRole::Accumulator;
      a.kind = BufferKind::Accumulators;
      a.op = g.ops[pos];
      a.size_bytes = sizes.acc_max[pos];
      a.first_step = a.last_step = step;
      if (reducer) {  // B's partial sums stay on chip from the first chunk to the last
        a.first_step = 0;
        a.last_step = store_step;
      }
      add_buffer(buffers, a, machine, options, store_step);
    }
  }
}

// Deep reuse: an op's output may overwrite the consumed part of an input it reads last.
void claim_deep_reuse(const Net& net, const GroupInfo& g, const TileGeometry* geo,
                      const std::vector<int>& buffer_of_local, std::vector<BufferAlloc>& buffers) {
  std::vector<char> reused(buffers.size(), 0);
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    const Op& op = net.op(g.ops[pos]);
    const int step = static_cast<int>(pos) + 1;
    const size_t out_l = static_cast<size_t>(g.out_local[pos]);
    const int out_buffer = buffer_of_local[out_l];
    if (out_buffer < 0) continue;
    if (buffers[static_cast<size_t>(out_buffer)].first_step != step) continue;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (buffers[static_cast<size_t>(out_buffer)].reuses >= 0) break;
      const size_t l = static_cast<size_t>(g.in_local[pos][i]);
      const int in_buffer = buffer_of_local[l];
      if (in_buffer < 0) continue;
      const BufferAlloc& x = buffers[static_cast<size_t>(in_buffer)];
      BufferAlloc& y = buffers[static_cast<size_t>(out_buffer)];
      if (x.last_step != step || x.scratchpad != y.scratchpad) continue;
      if (reused[static_cast<size_t>(in_buffer)]) continue;
      y.reuses = in_buffer;
      y.reuse_gap_bytes = geo != nullptr ? reuse_gap_of(net, g, *geo, pos, i) : 0;
      reused[static_cast<size_t>(in_buffer)] = 1;
    }
  }
}

}  // namespace

std::vector<AllocRequest> allocation_requests(const std::vector<BufferAlloc>& buffers,
                                              const PlanOptions& options, bool in_place_chains,
                                              std::vector<int>* request_of) {
  std::vector<AllocRequest> requests;
  requests.reserve(buffers.size());
  std::vector<int> root(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    int r = static_cast<int>(i);
    if (in_place_chains)
      while (buffers[static_cast<size_t>(r)].reuses >= 0)
        r = buffers[static_cast<size_t>(r)].reuses;
    root[i] = r;
  }
  std::vector<int> of(buffers.size(), -1);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (root[i] != static_cast<int>(i)) continue;
    const BufferAlloc& b = buffers[i];
    of[i] = static_cast<int>(requests.size());
    // A deep-reuse claim is the allocator's pair; an in-place chain has none (one request).
    requests.push_back({b.size_bytes, b.first_step, b.last_step, b.scratchpad,
                        in_place_chains ? -1 : b.reuses, in_place_chains ? 0 : b.reuse_gap_bytes});
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    of[i] = of[static_cast<size_t>(root[i])];
    if (!in_place_chains) continue;
    AllocRequest& r = requests[static_cast<size_t>(of[i])];
    r.first_step = std::min(r.first_step, buffers[i].first_step);
    r.last_step = std::max(r.last_step, buffers[i].last_step);
    r.size_bytes = std::max(r.size_bytes, buffers[i].size_bytes);
  }
  // Prefetch: the previous group's bytes, pinned at step -1.
  if (options.prefetch_occupied != nullptr)
    requests.insert(requests.end(), options.prefetch_occupied->begin(),
                    options.prefetch_occupied->end());
  if (request_of != nullptr) *request_of = std::move(of);
  return requests;
}

Status allocate_buffers(const Machine& machine, const PlanOptions& options, bool in_place_chains,
                        GroupSchedule& gs) {
  std::vector<int> request_of;
  const std::vector<AllocRequest> requests =
      allocation_requests(gs.buffers, options, in_place_chains, &request_of);
  auto placed = allocate(requests, machine.capacities());
  if (!placed.ok()) return placed.failure();
  for (size_t i = 0; i < gs.buffers.size(); ++i)
    gs.buffers[i].offset = placed.value().offsets[static_cast<size_t>(request_of[i])];
  gs.peak_bytes = placed.value().peak_bytes;
  return {};
}

namespace {

// The buffers of a tiling's mapping `m` into `buffers` (buffer_requests, place_buffers).
void tiling_buffers(const Net& net, const Machine& machine, const GroupInfo& g,
                    const BufferSizes& sizes, const TileGeometry* geo, const Mapping& m,
                    const PlanOptions& options, const std::vector<char>& kept, bool keep_slices,
                    std::vector<BufferAlloc>& buffers) {
  buffers.clear();
  buffers.reserve(2 * g.tensors.size() + 2 * g.ops.size());
  // An op run once (RunsOnce: a hidden-chunk prefix op, an attention group's K or V): its
  // output, read by an op of every tile or stored by a later tile, is made by the first tile;
  // like a kept input it lives over them all.
  std::vector<char> whole = kept;
  const RunsOnce& once =
      geo != nullptr ? geo->once : runs_once(net, g.ops, m.row_tiles, m.col_tiles, m.channel_tiles);
  if (!once.once.empty()) {
    for (size_t pos = 0; pos < g.ops.size(); ++pos) {
      if (once.at(pos)) {
        const auto out = static_cast<size_t>(g.out_local[pos]);
        whole[out] = whole[out] | g.stored[out];
        continue;
      }
      for (int in : g.in_local[pos]) {
        const auto l = static_cast<size_t>(in);
        if (!g.is_input[l] && once.at(static_cast<size_t>(g.produced_step[l] - 1))) whole[l] = 1;
      }
    }
  }
  const std::vector<int> buffer_of_local =
      activation_buffers(machine, g, sizes, m, options, whole, buffers);
  weight_and_accumulator_buffers(net, machine, g, sizes, m, options, keep_slices, buffers);
  if (options.memory_reuse && m.halo != HaloMode::Cache)
    claim_deep_reuse(net, g, geo, buffer_of_local, buffers);
  // Prefetch: the prologue weights (resident: all; streamed: the first tile's slices, copy 0)
  // are loaded during the previous group, whose bytes are pinned at step -1.
  if (options.prefetch_occupied != nullptr) {
    for (auto& b : buffers)
      if (b.role == BufferRole::Weights && b.copy == 0) b.first_step = -1;
  }
}

}  // namespace

std::vector<AllocRequest> buffer_requests(const Net& net, const Machine& machine,
                                          const GroupInfo& g, const BufferSizes& sizes,
                                          const TileGeometry* geo, const Mapping& m,
                                          const PlanOptions& options, const std::vector<char>& kept,
                                          bool keep_slices, std::vector<BufferAlloc>& buffers) {
  tiling_buffers(net, machine, g, sizes, geo, m, options, kept, keep_slices, buffers);
  return allocation_requests(buffers, options, false, nullptr);
}

bool tiling_may_fit(const Machine& machine, const GroupInfo& g, const BufferSizes& sizes,
                    const PlanOptions& options, const std::vector<int64_t>& capacities) {
  std::vector<int64_t> live(capacities.size());
  for (size_t pos = 0; pos < g.ops.size(); ++pos) {
    std::fill(live.begin(), live.end(), 0);
    auto add = [&](BufferKind kind, int64_t bytes) {
      live[static_cast<size_t>(machine.scratchpad(kind))] += bytes;
    };
    const auto out = static_cast<size_t>(g.out_local[pos]);
    const int64_t out_bytes = sizes.max_pixels[out] * sizes.pixel_bytes[out];
    const BufferKind out_kind =
        g.stored[out] && !g.internal_use[out] ? BufferKind::Outputs : BufferKind::Activations;
    add(out_kind, out_bytes);
    int64_t shared = 0;  // the most an input can share with the output
    for (size_t i = 0; i < g.in_local[pos].size(); ++i) {
      const auto l = static_cast<size_t>(g.in_local[pos][i]);
      if (std::find(g.in_local[pos].begin(), g.in_local[pos].begin() + static_cast<long>(i),
                    g.in_local[pos][i]) != g.in_local[pos].begin() + static_cast<long>(i))
        continue;  // read twice, held once
      const int64_t bytes = sizes.max_pixels[l] * sizes.pixel_bytes[l];
      add(BufferKind::Activations, bytes);
      if (options.memory_reuse &&
          machine.scratchpad(BufferKind::Activations) == machine.scratchpad(out_kind))
        shared = std::max(shared, std::min(bytes, out_bytes));
    }
    live[static_cast<size_t>(machine.scratchpad(out_kind))] -= shared;
    add(BufferKind::Weights, sizes.weight_slice_max[pos]);
    add(BufferKind::Accumulators, sizes.acc_max[pos]);
    for (size_t pad = 0; pad < live.size(); ++pad)
      if (live[pad] > capacities[pad]) return false;
  }
  return true;
}

// The buffers of mapping `m` and their places in the scratchpads, into `gs`.
Status place_buffers(const Net& net, const Machine& machine, const GroupInfo& g,
                     const TileGeometry& geo, const Mapping& m, const PlanOptions& options,
                     const std::vector<char>& kept, bool keep_slices, GroupSchedule& gs) {
  tiling_buffers(net, machine, g, geo, &geo, m, options, kept, keep_slices, gs.buffers);
  return allocate_buffers(machine, options, false, gs);
}

}  // namespace tessel::sched
