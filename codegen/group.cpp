// Lowering of a tiled group (docs/codegen.md): weight placement, per-tile load/compute/store
// lists, halo-cache row copies, and the serialised or double-buffered token protocol; also the
// cross-group weight prefetch and the per-group figures every group records.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "scheduler/group_mapping.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

Status Lowering::place_group_ops(const std::string& where, const sched::GroupSchedule& gs) {
  if (gs.weight_sweep && (gs.ops.empty() || net_.op(gs.ops.front()).kind != sched::OpKind::Conv ||
                          gs.op_slices.size() != gs.ops.size()))
    return fail(where + ": malformed (a conv first, one slice count per op)");
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    const OpEmitter* emitter = emitter_for(op.kind);
    if (emitter == nullptr)
      return fail(where + ": op '" + op.name + "' (" + sched::to_string(op.kind) +
                  ") is not supported by codegen yet");
    // An op-major nest (a weight sweep) runs each conv's slices through the sweep's pair of
    // slice buffers, the ops of its block per slice, pools and Concats whole.
    if (gs.weight_sweep && !emitter->matrix && !emitter->per_slice &&
        !sched::runs_whole_in_sweep(op))
      return fail(where + ": op '" + op.name + "' (" + sched::to_string(op.kind) +
                  ") cannot run per slice");
    if (emitter->matrix)
      if (auto s = place_conv(gs, op); !s.ok()) return fail(where + ": " + s.reason());
  }
  return {};
}

Status Lowering::emit_op(const sched::GroupSchedule& gs, size_t pos, const std::vector<Box>& need,
                         std::vector<Phase>& phases) {
  const sched::Op& op = net_.op(gs.ops[pos]);
  const OpEmitter& emitter = *emitter_for(op.kind);  // place_group_ops checked every op
  if (hidden_chunk_ >= 0 && gs.ops[pos] == hidden_reducer(gs))
    return emit_hidden_chunk(gs, pos, op, need, phases);
  return emitter.matrix ? emit_conv(gs, pos, op, need, phases)
                        : (this->*emitter.emit)(gs, op, need, phases.back().compute);
}

int Lowering::hidden_reducer(const sched::GroupSchedule& gs) const {
  if (gs.weight_sweep || gs.dram_view ||
      !sched::chunks_hidden(net_, gs.ops, gs.row_tiles, gs.col_tiles, gs.channel_tiles))
    return -1;
  return gs.ops[static_cast<size_t>(sched::hidden_chunks(net_, gs.ops).reducer)];
}

bool Lowering::idle_in_tile(const sched::GroupSchedule& gs, int op, int64_t tile) const {
  if (gs.weight_sweep || gs.dram_view) return false;
  const auto at = std::find(gs.ops.begin(), gs.ops.end(), op) - gs.ops.begin();
  return !sched::runs_once(net_, gs.ops, gs.row_tiles, gs.col_tiles, gs.channel_tiles)
              .runs(static_cast<size_t>(at), tile);
}

Status Lowering::lower_group(size_t index, const sched::GroupSchedule& gs) {
  if (gs.dram_view) return {};  // a view costs nothing and moves nothing
  const std::string where =
      "group " + std::to_string(index) + (gs.weight_sweep ? " (weight sweep)" : "");
  conv_params_.clear();
  extra_top_.clear();
  table_copy_of_.clear();
  table_at_.clear();
  table_channels_.clear();
  if (auto s = place_group_ops(where, gs); !s.ok()) return s;
  size_t before = emitter_.size();
  const CodeTraffic traffic_before = out_.traffic;
  // The mapping's loop nest as steps (docs/codegen.md "One lowering walk"): the one
  // enumeration of its steps (sched::nest_steps: a tile-major nest's tiles, an op-major nest's
  // conv slices), each lowered into a TileCode.
  auto nest = sched::nest_steps(net_, sched::derive_mapping(net_, gs));
  if (!nest.ok()) return fail(where + ": " + nest.reason());
  std::vector<TileCode> steps;
  bool pipelined = gs.weight_sweep;  // a sweep's slice pair always ping-pongs
  const Status walked = gs.weight_sweep ? sweep_steps(where, gs, nest.value(), steps)
                                        : tile_steps(where, gs, nest.value(), steps, pipelined);
  if (!walked.ok()) return walked;
  if (auto s = place_prefetch(where, before); !s.ok()) return s;
  const Status emitted =
      pipelined ? emit_double_buffered(where, steps) : emit_serialised(where, steps);
  if (!emitted.ok()) return emitted;
  record_group(gs, before, traffic_before);
  mark_prefetch_point(before);
  return {};
}

Status Lowering::tile_steps(const std::string& where, const sched::GroupSchedule& gs,
                            const std::vector<sched::NestStep>& nest, std::vector<TileCode>& tiles,
                            bool& pipelined) {
  // Tiles in the scheduler's order (GroupSchedule::channel_part): channel parts outermost, then
  // rows, then columns.
  // Double buffering uses the schedule's ping-pong copies: of inputs and stored outputs, and
  // of streamed weight slices (the next slice loads into the other copy under the running conv).
  GroupTiling tiling;
  for (int o : gs.ops)
    tiling.streamed |= !gs.weights_resident && (net_.op(o).kind == sched::OpKind::Conv ||
                                                net_.op(o).kind == sched::OpKind::Gemm);
  // Halo caching (row tiles only): every buffer keeps the rows it shares with the next tile's
  // window; before that tile's loads, a compute-engine copy moves them to the top of the
  // buffer, then only fresh input rows are loaded and fresh output rows computed.
  tiling.cache = gs.halo == sched::HaloMode::Cache;
  tiling.pipelined = gs.double_buffered && !tiling.cache;
  pipelined = tiling.pipelined;
  // Kept inputs (GroupSchedule::keeps_inputs): the same box in every tile, loaded once.
  tiling.kept = sched::tile_kept_inputs(net_, gs);
  // A double-buffered Gemm with reduction chunks ping-pongs chunk by chunk: phase q of the
  // group (a tile's chunk) loads into copy q % 2, the tile's bias and table into copy tile % 2.
  bool chunked = false;
  for (int o : gs.ops) {
    const auto params = conv_params_.find(o);
    chunked = chunked || (params != conv_params_.end() && params->second.chunks > 1);
  }
  chunk_pingpong_ = tiling.pipelined && tiling.streamed && chunked;
  std::vector<Box> previous(net_.tensors.size());
  int64_t weight_phase = 0;  // phases emitted so far (chunk ping-pong)
  if (static_cast<int64_t>(nest.size()) != gs.tiles())
    return fail(where + ": the mapping's loops give " + std::to_string(nest.size()) +
                " tiles, the schedule " + std::to_string(gs.tiles()));
  for (const sched::NestStep& step : nest) {
    const int64_t tile = step.tile;
    copy_ = tiling.pipelined ? static_cast<int>(tile % 2) : 0;
    // Streamed slices ping-pong per load: every tile, or every channel part when kept.
    weight_copy_ = tiling.pipelined && tiling.streamed
                       ? static_cast<int>((gs.keeps_weight_slices() ? step.channel_part : tile) % 2)
                       : 0;
    table_copy_ = chunk_pingpong_ ? static_cast<int>(tile % 2) : -1;
    if (chunk_pingpong_) weight_copy_ = static_cast<int>(weight_phase % 2);
    if (auto s = lower_tile(where, gs, tiling, step, previous, tiles); !s.ok()) return s;
    weight_phase += static_cast<int64_t>(tiles.back().phases.size());
  }
  copy_ = 0;
  weight_copy_ = 0;
  table_copy_ = -1;
  chunk_pingpong_ = false;
  layout_.clear();
  return {};
}

void Lowering::halo_copies(const sched::GroupSchedule& gs, const std::vector<Box>& window,
                           std::vector<Box>& previous, std::vector<Box>& need,
                           std::vector<isa::Instruction>& prelude) const {
  sched::halo_step(window, previous, need, [&](size_t t, const Box& prev) {
    // Rows [window.b, prev.e) are on chip at prev's positions: copy them up, row by row
    // (each destination lies above every later source).
    auto src = view_of(gs, static_cast<int>(t), prev);
    auto dst = view_of(gs, static_cast<int>(t), window[t]);
    if (!src.ok() || !dst.ok()) return;  // not buffered in this group
    if (prelude.empty()) {
      isa::Vcfg cfg;
      cfg.mult_a = 1;
      cfg.mult_b = 0;
      cfg.shift = 0;
      cfg.lo = intops::qmin(static_cast<int>(act_bytes_ * 8));
      cfg.hi = intops::qmax(static_cast<int>(act_bytes_ * 8));
      prelude.push_back(cfg);
    }
    for (int64_t y = window[t].h.b; y < prev.h.e; ++y) {
      prelude.push_back(unary_add(src.value(), dst.value(), act_elem_, y, window[t].w.b,
                                  window[t].c.b, window[t].c.b, 1, window[t].w.size(),
                                  window[t].c.size()));
    }
  });
}

Status Lowering::lower_tile(const std::string& where, const sched::GroupSchedule& gs,
                            const GroupTiling& tiling, const sched::NestStep& step,
                            std::vector<Box>& previous, std::vector<TileCode>& tiles) {
  const int64_t tile = step.tile, kt = step.channel_part;
  std::vector<Box> requested, window;
  sched::tile_boxes(net_, gs, tile, requested, window);
  const int reducer = hidden_reducer(gs);
  hidden_chunk_ = reducer >= 0 ? kt : -1;
  std::vector<Box> need = window;  // what this tile loads and computes
  std::vector<isa::Instruction> prelude, stores;
  std::vector<Phase> phases(1);
  std::vector<isa::Instruction>& loads = phases.front().loads;  // (emit_conv adds phases)
  layout_.clear();
  if (tiling.cache) halo_copies(gs, window, previous, need, prelude);
  layout_ = window;
  const bool first_tile = tile == 0;
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    if (idle_in_tile(gs, o, tile)) continue;  // an op run once (RunsOnce): the first tile only
    const bool matrix = op.kind == sched::OpKind::Conv || op.kind == sched::OpKind::Gemm;
    // Resident: every slice once, before the first tile; streamed: the tile's slice, once
    // per channel part when the part's row/column tiles keep it.
    const bool new_part = step.row_part == 0 && step.col_part == 0;
    const bool load_slice =
        gs.weights_resident ? first_tile : !gs.keeps_weight_slices() || new_part;
    if (matrix && o == reducer) {  // hidden chunks: chunk kt of B's one slice
      if (auto s = emit_conv_loads(op, 0, phases.front().loads, kt); !s.ok())
        return fail(where + ": " + s.reason());
    } else if (matrix && load_slice) {
      const int slice = gs.weights_resident ? -1 : static_cast<int>(kt);
      if (auto s = emit_conv_loads(op, slice, phases.front().loads); !s.ok())
        return fail(where + ": " + s.reason());
    }
  }
  if (auto s = emit_table_loads(gs, tiling, tile, window, phases.front().loads); !s.ok())
    return fail(where + ": " + s.reason());
  if (first_tile && gs.prefetched) {
    // The first tile's weight loads run in the previous group's tail (into bytes the
    // scheduler proved free there); the tile's own loads start with its activations.
    prefetch_ = std::move(phases.front().loads);
    phases.front().loads.clear();
    if (prefetch_.empty()) return fail(where + ": prefetched but the first tile loads no weights");
  }
  for (int t : gs.inputs) {
    const Box& box = need[static_cast<size_t>(t)];
    if (box.empty()) continue;
    if (tiling.kept[static_cast<size_t>(t)] && !first_tile) continue;  // on chip from tile 0
    if (sched::gathered_ids(net_, gs.ops, t)) {  // an Embedding's ids: its gathers read them
      if (auto s = append_embedding_gathers(gs, t, need, loads); !s.ok())
        return fail(where + ": " + s.reason());
      continue;
    }
    auto view = view_of(gs, t, box);
    if (!view.ok()) return fail(where + ": " + view.reason());
    if (auto s = append_activation_loads(loads, t, box, view.value()); !s.ok())
      return fail(where + ": " + s.reason());
    out_.traffic.activations_read += box.elements() * act_bytes_;
  }
  for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
    if (idle_in_tile(gs, gs.ops[pos], tile)) continue;
    if (auto s = emit_op(gs, pos, need, phases); !s.ok()) return fail(where + ": " + s.reason());
  }
  for (int t : gs.outputs) {
    const Box& box = requested[static_cast<size_t>(t)];
    if (box.empty()) continue;  // more tiles than rows: this tile stores nothing
    auto view = view_of(gs, t, need[static_cast<size_t>(t)]);
    if (!view.ok()) return fail(where + ": " + view.reason());
    stores.push_back(store_of(t, box, view.value()));
  }
  // A tile with nothing to load (all rows cached), compute or store keeps its place in
  // the token protocol with a nop on that engine.
  for (auto [list, engine] : {std::pair{&phases.front().loads, isa::Engine::kLoad},
                              std::pair{&phases.back().compute, isa::Engine::kCompute},
                              std::pair{&stores, isa::Engine::kStore}}) {
    if (!list->empty()) continue;
    isa::Nop nop;
    nop.engine = engine;
    list->push_back(nop);
  }
  if (tiling.pipelined && phases.size() > 1 && !chunk_pingpong_)
    return fail(where + ": reduction chunks in a double-buffered group");
  if (reducer >= 0 && tiling.pipelined)
    return fail(where + ": the MLP's hidden chunks are serialised (the schedule double-buffers)");
  hidden_chunk_ = -1;
  tiles.push_back({std::move(prelude), std::move(phases), std::move(stores)});
  return {};
}

Status Lowering::emit_all(const std::string& where, std::vector<isa::Instruction>& list) {
  for (auto& instruction : list)
    if (auto s = emitter_.emit(instruction); !s.ok()) return fail(where + ": " + s.reason());
  return {};
}

// The next phase's loads and this phase's compute. Instructions dispatch in program order and
// an engine's queue holds `depth` of them, so more loads than that in one run would stall the
// dispatch of this compute until all but `depth` had run: the loads the double buffer meant to
// overlap would run before it instead (MaxViT's grid attention on cloud-large: ~200 strided
// gather loads a tile, +6.8% cycles on its groups). Loads that fit the queue go first, as one
// run; more put depth / 2 first and spread the rest evenly over the compute. The loads depend
// only on earlier phases (compute(q - 1) frees their copy) and compute(q) only on earlier
// loads, so the order changes no result, as place_prefetch's spread does not.
size_t Lowering::loads_before(size_t i, size_t n, size_t m) const {
  const auto depth = static_cast<size_t>(std::max(2, config_.queues.instruction_queue_depth));
  const size_t head = n <= depth || m == 0 ? n : depth / 2;
  return i == 0 ? head : head + (n - head) * i / m;
}

Status Lowering::emit_loads_beside(const std::string& where, std::vector<isa::Instruction>& loads,
                                   std::vector<isa::Instruction>& compute) {
  const size_t m = compute.size();
  size_t next = 0;
  for (size_t i = 0; i <= m; ++i) {
    for (; next < loads_before(i, loads.size(), m); ++next)
      if (auto s = emitter_.emit(loads[next]); !s.ok()) return fail(where + ": " + s.reason());
    if (i < m)
      if (auto s = emitter_.emit(compute[i]); !s.ok()) return fail(where + ": " + s.reason());
  }
  return {};
}

Status Lowering::emit_serialised(const std::string& where, std::vector<TileCode>& tiles) {
  isa::Nop barrier;  // waits for a store, frees the next load
  barrier.engine = isa::Engine::kCompute;
  barrier.pop_next = true;
  barrier.push_prev = true;
  // Serialised tile protocol: the tile's loads wait for the previous tile's stores (via a
  // compute nop), compute waits for the loads, stores wait for compute.
  // With reduction chunks a tile has several load-then-compute phases: each phase's compute
  // frees the weight buffer for the next phase's loads (compute->load), the last one hands
  // the tile to the stores.
  for (size_t i = 0; i < tiles.size(); ++i) {
    TileCode& t = tiles[i];
    for (size_t j = 0; j < t.phases.size(); ++j) {
      Phase& phase = t.phases[j];
      const bool last = j + 1 == t.phases.size();
      set_flag(phase.loads.front(), [&](auto& x) { x.pop_next = j == 0 ? work_before_ : true; });
      set_flag(phase.loads.back(), [](auto& x) { x.push_next = true; });
      set_flag(phase.compute.front(), [](auto& x) { x.pop_prev = true; });
      set_flag(phase.compute.back(), [&](auto& x) {
        if (last)
          x.push_next = true;
        else
          x.push_prev = true;
      });
    }
    set_flag(t.stores.front(), [](auto& x) { x.pop_prev = true; });
    set_flag(t.stores.back(), [](auto& x) { x.push_prev = true; });
    for (Phase& phase : t.phases)
      for (auto* list : {&phase.loads, &phase.compute})
        if (auto s = emit_all(where, *list); !s.ok()) return s;
    if (auto s = emit_all(where, t.stores); !s.ok()) return s;
    // The barrier; with halo caching, the next tile's row copies are the barrier.
    std::vector<isa::Instruction>* next_prelude =
        i + 1 < tiles.size() && !tiles[i + 1].prelude.empty() ? &tiles[i + 1].prelude : nullptr;
    if (next_prelude != nullptr) {
      set_flag(next_prelude->front(), [](auto& x) { x.pop_next = true; });
      set_flag(next_prelude->back(), [](auto& x) { x.push_prev = true; });
      if (auto s = emit_all(where, *next_prelude); !s.ok()) return s;
    } else if (auto s = emitter_.emit(barrier); !s.ok()) {
      return fail(where + ": " + s.reason());
    }
    work_before_ = true;
  }
  return {};
}

Status Lowering::emit_double_buffered(const std::string& where, std::vector<TileCode>& tiles) {
  // Double buffering (docs/codegen.md): step t (a tile, or a weight sweep's slice phase) uses
  // copy t % 2 of every input and stored output. A step is one phase (loads, compute), or one
  // per Gemm reduction chunk; phase q of the group uses copy q % 2 of the weights. Program
  // order loads(0), then per phase: loads(q+1), compute(q), and after a step's last phase its
  // stores (a sweep's step may store nothing), so the next phase's loads are queued before
  // this phase's compute. Tokens:
  //   load->compute   each phase's loads -> its compute;
  //   compute->store  each step's last compute -> its stores;
  //   compute->load   compute(q) -> loads(q+2) (copy q % 2 of the inputs and weights is free
  //                   again; a chunk's tile table, in copy t % 2, is read by then: tile t+2's
  //                   first phase comes at least two phases after tile t's last);
  //   store->compute  stores(t) -> step t+2's first compute (copy t % 2 of the outputs is
  //                   free again; a sweep's: the bytes may be overwritten from then on).
  // Compute nops at the end take the last two steps' store tokens; the last one frees the next
  // group's loads, as the serialised barrier does.
  const size_t n = tiles.size();
  std::vector<std::pair<size_t, size_t>> order;  // (step, phase) of every phase, in order
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < tiles[t].phases.size(); ++j) order.emplace_back(t, j);
  const size_t phases = order.size();
  auto stores = [&](size_t t) { return !tiles[t].stores.empty(); };
  for (size_t q = 0; q < phases; ++q) {
    const size_t t = order[q].first, j = order[q].second;  // (clang 14: no binding in lambdas)
    Phase& ph = tiles[t].phases[j];
    const bool first = j == 0, last = j + 1 == tiles[t].phases.size();
    set_flag(ph.loads.front(), [&](auto& x) { x.pop_next = q == 0 ? work_before_ : q >= 2; });
    set_flag(ph.loads.back(), [](auto& x) { x.push_next = true; });
    set_flag(ph.compute.front(), [&](auto& x) {
      x.pop_prev = true;
      x.pop_next = first && t >= 2 && stores(t - 2);
    });
    set_flag(ph.compute.back(), [&](auto& x) {
      x.push_next = last && stores(t);
      x.push_prev = q + 2 < phases;
    });
  }
  for (size_t t = 0; t < n; ++t) {
    if (!stores(t)) continue;
    set_flag(tiles[t].stores.front(), [](auto& x) { x.pop_prev = true; });
    set_flag(tiles[t].stores.back(), [](auto& x) { x.push_prev = true; });
  }
  if (auto s = emit_all(where, tiles[0].phases.front().loads); !s.ok()) return s;
  for (size_t q = 0; q < phases; ++q) {
    const size_t t = order[q].first, j = order[q].second;  // (clang 14: no binding in lambdas)
    std::vector<isa::Instruction> none;
    std::vector<isa::Instruction>& next =
        q + 1 < phases ? tiles[order[q + 1].first].phases[order[q + 1].second].loads : none;
    if (auto s = emit_loads_beside(where, next, tiles[t].phases[j].compute); !s.ok()) return s;
    if (j + 1 == tiles[t].phases.size())
      if (auto s = emit_all(where, tiles[t].stores); !s.ok()) return s;
  }
  size_t pending = 0;  // store->compute tokens the end of the group takes
  for (size_t t = n >= 2 ? n - 2 : 0; t < n; ++t) pending += stores(t) ? 1 : 0;
  for (size_t k = 0; k + 1 < pending; ++k) {
    isa::Nop drain;  // takes one more of the last two steps' store tokens
    drain.engine = isa::Engine::kCompute;
    drain.pop_next = true;
    if (auto s = emitter_.emit(drain); !s.ok()) return fail(where + ": " + s.reason());
  }
  isa::Nop barrier;  // waits for a store, frees the next load
  barrier.engine = isa::Engine::kCompute;
  barrier.pop_next = pending > 0;
  barrier.push_prev = true;
  if (auto s = emitter_.emit(barrier); !s.ok()) return fail(where + ": " + s.reason());
  work_before_ = true;
  return {};
}

Status Lowering::place_prefetch(const std::string& where, size_t& before) {
  if (prefetch_.empty()) return {};
  if (prefetch_point_ < 0 || out_.groups.empty())
    return fail(where + ": prefetched, but no group runs before it");
  // Instructions dispatch in program order and an engine's queue holds `depth` of them: more
  // prefetch loads than that in one place would stall the dispatch of the tail's compute until
  // all but `depth` had run, the tail the prefetch was meant to overlap (regnet_y_400mf's
  // grouped convs: 194 loads of 576 B, +18.7 K cycles on cloud-large). So a prefetch that fits
  // the queue goes right after the last load, as one run; a longer one puts depth / 2 there and
  // spreads the rest evenly over the tail's instructions, the last of them before the group's
  // end. Each load still runs after the previous group's last load, into bytes that group
  // never touches (the scheduler's proof), so where in the tail it runs changes no result.
  const auto point = static_cast<size_t>(prefetch_point_);
  const size_t tail = before - point;
  const size_t n = prefetch_.size();
  GroupCode& previous = out_.groups.back();
  size_t at = point, next = 0;
  for (size_t i = 0; i <= tail; ++i) {
    for (; next < loads_before(i, n, tail); ++next) {
      ++previous.instructions[std::string(isa::mnemonic(prefetch_[next]))];
      if (auto s = emitter_.insert(at++, std::move(prefetch_[next])); !s.ok())
        return fail(where + ": " + s.reason());
    }
    ++at;  // tail instruction i
  }
  previous.end_instruction += static_cast<std::int64_t>(n);
  previous.prefetch_instructions += static_cast<std::int64_t>(n);
  before += prefetch_.size();
  prefetch_.clear();
  return {};
}

void Lowering::mark_prefetch_point(size_t before) {
  prefetch_point_ = -1;
  for (size_t i = emitter_.size(); i > before; --i) {
    if (isa::engine_of(emitter_.program().instructions[i - 1]) == isa::Engine::kLoad) {
      prefetch_point_ = static_cast<std::int64_t>(i);
      return;
    }
  }
}

void Lowering::record_group(const sched::GroupSchedule& gs, size_t before,
                            const CodeTraffic& traffic_before) {
  GroupCode group;
  for (int o : gs.ops) group.ops.push_back(net_.op(o).name);
  group.tiles = gs.tiles();
  for (size_t i = before; i < emitter_.size(); ++i)
    ++group.instructions[std::string(isa::mnemonic(emitter_.program().instructions[i]))];
  group.first_instruction = static_cast<int64_t>(before);
  group.end_instruction = static_cast<int64_t>(emitter_.size());
  group.traffic.weights_read = out_.traffic.weights_read - traffic_before.weights_read;
  group.traffic.activations_read = out_.traffic.activations_read - traffic_before.activations_read;
  group.traffic.activations_written =
      out_.traffic.activations_written - traffic_before.activations_written;
  group.traffic.requant_table_read =
      out_.traffic.requant_table_read - traffic_before.requant_table_read;
  group.macs = gs.macs;
  group.predicted_cycles = gs.cycles;
  out_.groups.push_back(std::move(group));
}

}  // namespace tessel::codegen::detail
