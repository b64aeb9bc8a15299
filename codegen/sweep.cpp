// Lowering of a weight sweep (GroupSchedule::weight_sweep; docs/codegen.md "Weight sweeps"):
// one tile; each conv's output-channel slices in turn through the ping-pong slice pair
// `w:sweep`/`w:sweep#1` with the block's elementwise ops per slice, pools and Concats whole at
// the end of the phase before them, and each output stored after the phase that completes it.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "scheduler/plan.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

Status Lowering::place_sweep_conv(const sched::GroupSchedule& gs, const sched::Op& op) {
  const int index = static_cast<int>(&op - net_.ops.data());
  auto matrix = matrix_op(op);
  if (!matrix.ok()) return matrix.failure();
  const MatrixOp& m = matrix.value();
  if (m.gemm || m.depthwise)
    return fail("op '" + op.name + "' in a weight sweep is not a dense conv");
  const sched::BufferAlloc* copies[2] = {nullptr, nullptr};
  for (const auto& b : gs.buffers)
    if (b.role == sched::BufferRole::Weights && (b.name == "w:sweep" || b.name == "w:sweep#1"))
      copies[b.copy == 1 ? 1 : 0] = &b;
  if (copies[0] == nullptr || copies[1] == nullptr)
    return fail("the weight sweep has no pair of slice buffers (w:sweep, w:sweep#1)");
  if (copies[0]->scratchpad != copies[1]->scratchpad)
    return fail("the weight sweep's slice buffers lie in different scratchpads");
  ConvParams p;
  p.sp = copies[0]->scratchpad;
  p.has_bias = m.bias != nullptr;
  p.chunk_blocks = ceil_div(m.ci, rows_);
  p.chunks = 1;
  p.copy1_delta = copies[1]->offset - copies[0]->offset;
  const int64_t max_ic_blocks = field_max("conv", "ic_blocks");
  if (p.chunk_blocks > max_ic_blocks)
    return fail("op '" + op.name + "': " + std::to_string(p.chunk_blocks) +
                " input blocks in one conv instruction (ic_blocks takes at most " +
                std::to_string(max_ic_blocks) + ")");
  int64_t dram = out_.layout.find("w:" + op.name)->offset;
  for (const sched::Interval c : slices_of(index)) {
    const int64_t oc_blocks = ceil_div(c.size(), cols_);
    const int64_t packed = oc_blocks * p.chunk_blocks * m.kh * m.kw * rows_ * cols_ * weight_bytes_;
    const int64_t bias = p.has_bias ? oc_blocks * cols_ * 4 : 0;
    const int64_t need = ceil_div(packed + bias + c.size() * 8, 8) * 8;
    for (const sched::BufferAlloc* w : copies)
      if (need > w->size_bytes)
        return fail("op '" + op.name + "': a slice of " + std::to_string(c.size()) +
                    " channels needs " + std::to_string(need) + " bytes; '" + w->name + "' has " +
                    std::to_string(w->size_bytes));
    SliceParams sp;
    sp.channels = c;
    sp.dram_weights = dram;
    dram += c.size() * m.ci * m.kh * m.kw * weight_bytes_;
    sp.w_addr = copies[0]->offset;
    sp.bias_addr = sp.w_addr + packed;
    sp.table_addr = sp.bias_addr + bias;
    p.slices.push_back(sp);
  }
  conv_params_[index] = p;
  return {};
}

Status Lowering::place_sweep_ops(const std::string& where, const sched::GroupSchedule& gs) {
  auto is_conv = [&](int o) { return net_.op(o).kind == sched::OpKind::Conv; };
  if (gs.ops.empty() || !is_conv(gs.ops.front()) || gs.op_slices.size() != gs.ops.size())
    return fail(where + ": malformed (a conv first, one slice count per op)");
  for (int o : gs.ops) {
    const sched::Op& op = net_.op(o);
    const OpEmitter* emitter = emitter_for(op.kind);
    if (is_conv(o)) {
      if (auto s = place_sweep_conv(gs, op); !s.ok()) return fail(where + ": " + s.reason());
    } else if (!sched::runs_whole_in_sweep(op) && (emitter == nullptr || !emitter->per_slice)) {
      return fail(where + ": op '" + op.name + "' (" + sched::to_string(op.kind) +
                  ") cannot run per slice");
    }
  }
  return {};
}

Status Lowering::lower_sweep_group(size_t index, const sched::GroupSchedule& gs) {
  const std::string where = "group " + std::to_string(index) + " (weight sweep)";
  conv_params_.clear();
  extra_top_.clear();
  if (auto s = place_sweep_ops(where, gs); !s.ok()) return s;
  size_t before = emitter_.size();
  const CodeTraffic traffic_before = out_.traffic;
  // One tile: every stored output whole, shape transfer for the rest.
  std::vector<Box> requested(net_.tensors.size());
  for (int t : gs.outputs)
    requested[static_cast<size_t>(t)] = sched::full_box(net_.tensor(t).shape);
  const std::vector<Box> whole = sched::transfer(net_, gs.ops, requested).need;
  copy_ = 0;
  layout_ = whole;
  std::vector<isa::Instruction> activation_loads;
  for (int t : gs.inputs) {
    const Box& box = whole[static_cast<size_t>(t)];
    if (box.empty()) continue;
    auto view = view_of(gs, t, box);
    if (!view.ok()) return fail(where + ": " + view.reason());
    if (auto s = append_activation_loads(activation_loads, t, box, view.value()); !s.ok())
      return fail(where + ": " + s.reason());
    out_.traffic.activations_read += box.elements() * act_bytes_;
  }
  std::vector<Phase> phases;
  std::map<int, size_t> ready_phase;  // per tensor made here: the phase that completes it
  if (auto s = sweep_phases(where, gs, whole, phases, ready_phase); !s.ok()) return s;
  weight_copy_ = 0;
  layout_ = whole;
  // Early stores (docs/codegen.md, "Weight sweeps"): each output after the phase that
  // completes it.
  std::vector<std::vector<isa::Instruction>> stores(phases.size());
  for (int t : gs.outputs) {
    const Box& box = requested[static_cast<size_t>(t)];
    auto view = view_of(gs, t, whole[static_cast<size_t>(t)]);
    if (!view.ok()) return fail(where + ": " + view.reason());
    const auto ready = ready_phase.find(t);
    if (ready == ready_phase.end())
      return fail(where + ": output '" + net_.tensor(t).name + "' is made by no op of the group");
    stores[ready->second].push_back(store_of(t, box, view.value()));
  }
  layout_.clear();
  if (phases.empty() || gs.outputs.empty()) return fail(where + ": nothing to compute or store");
  if (gs.prefetched) {
    // Slice 0 (copy 0) loads in the previous group's tail; phase 0 waits for the activations.
    prefetch_ = std::move(phases.front().loads);
    phases.front().loads.clear();
    if (activation_loads.empty()) {
      isa::Nop nop;
      nop.engine = isa::Engine::kLoad;
      activation_loads.push_back(nop);
    }
  }
  phases.front().loads.insert(phases.front().loads.begin(), activation_loads.begin(),
                              activation_loads.end());
  if (auto s = place_prefetch(where, before); !s.ok()) return s;
  if (auto s = emit_sweep(where, phases, stores); !s.ok()) return s;
  record_group(gs, before, traffic_before);
  mark_prefetch_point(before);
  return {};
}

Status Lowering::sweep_phases(const std::string& where, const sched::GroupSchedule& gs,
                              const std::vector<Box>& whole, std::vector<Phase>& phases,
                              std::map<int, size_t>& ready_phase) {
  auto is_conv = [&](int o) { return net_.op(o).kind == sched::OpKind::Conv; };
  auto is_whole = [&](int o) { return sched::runs_whole_in_sweep(net_.op(o)); };
  // A buffer holds its tensor's whole box when its pixel has every channel, else the slice
  // being computed (docs/scheduler.md, "Weight sweeps").
  std::vector<char> holds_slice(net_.tensors.size(), 0);
  for (const auto& b : gs.buffers) {
    if (b.tensor < 0) continue;
    const Box& box = whole[static_cast<size_t>(b.tensor)];
    holds_slice[static_cast<size_t>(b.tensor)] = b.pixel_bytes < box.c.size() * act_bytes_;
  }
  // Weight phases: slice k of a conv and its block's elementwise ops on those channels. A pool
  // or Concat runs whole, over every channel, at the end of the phase before it (the blocks
  // before it are complete then).
  for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
    if (is_whole(gs.ops[pos])) {
      const sched::Op& op = net_.op(gs.ops[pos]);
      if (phases.empty()) return fail(where + ": '" + op.name + "' before the first conv");
      ready_phase[op.output] = phases.size() - 1;
      layout_ = whole;
      const Status s = (this->*emitter_for(op.kind)->emit)(gs, op, whole, phases.back().compute);
      if (!s.ok()) return fail(where + ": " + s.reason());
      continue;
    }
    if (!is_conv(gs.ops[pos])) continue;
    const sched::Op& conv = net_.op(gs.ops[pos]);
    size_t block_end = pos + 1;
    while (block_end < gs.ops.size() && !is_conv(gs.ops[block_end]) && !is_whole(gs.ops[block_end]))
      ++block_end;
    const auto slices = slices_of(gs.ops[pos]);
    for (size_t k = 0; k < slices.size(); ++k) {
      weight_copy_ = static_cast<int>(phases.size() % 2);
      std::vector<Phase> phase(1);
      if (auto s = emit_conv_loads(conv, static_cast<int>(k), phase.front().loads); !s.ok())
        return fail(where + ": " + s.reason());
      std::vector<Box> need = whole;
      layout_ = whole;
      auto slice_of = [&](int t) {
        Box box = whole[static_cast<size_t>(t)];
        box.c = slices[k];
        need[static_cast<size_t>(t)] = box;
        if (holds_slice[static_cast<size_t>(t)]) layout_[static_cast<size_t>(t)] = box;
      };
      for (size_t q = pos; q < block_end; ++q) {
        const sched::Op& op = net_.op(gs.ops[q]);
        slice_of(op.output);
        if (q > pos)
          for (int t : op.inputs) slice_of(t);
      }
      if (auto s = emit_conv(gs, pos, conv, need, phase); !s.ok())
        return fail(where + ": " + s.reason());
      if (phase.size() != 1) return fail(where + ": reduction chunks in a weight sweep");
      std::vector<isa::Instruction>& compute = phase.front().compute;
      for (size_t q = pos + 1; q < block_end; ++q) {
        const sched::Op& op = net_.op(gs.ops[q]);
        const Status s = (this->*emitter_for(op.kind)->emit)(gs, op, need, compute);
        if (!s.ok()) return fail(where + ": " + s.reason());
      }
      phases.push_back(std::move(phase.front()));
    }
    for (size_t q = pos; q < block_end; ++q)
      ready_phase[net_.op(gs.ops[q]).output] = phases.size() - 1;
  }
  return {};
}

Status Lowering::emit_sweep(const std::string& where, std::vector<Phase>& phases,
                            std::vector<std::vector<isa::Instruction>>& stores) {
  // Tokens (docs/codegen.md, "Weight sweeps"): phase w's loads -> its compute (load->compute);
  // compute of phase w frees its slice copy for phase w + 2's loads (compute->load); the
  // compute of phase w -> the stores it completed (compute->store); those stores -> the compute
  // of phase w + 2 (store->compute: their bytes may be overwritten from then on), or, for the
  // last two phases' stores, -> the end of the group, whose barrier frees the next group's
  // loads.
  const size_t n = phases.size();
  for (size_t w = 0; w < n; ++w) {
    set_flag(phases[w].loads.front(),
             [&](auto& x) { x.pop_next = w == 0 ? work_before_ : w >= 2; });
    set_flag(phases[w].loads.back(), [](auto& x) { x.push_next = true; });
    set_flag(phases[w].compute.front(), [&](auto& x) {
      x.pop_prev = true;
      if (w >= 2 && !stores[w - 2].empty()) x.pop_next = true;
    });
    set_flag(phases[w].compute.back(), [&](auto& x) {
      if (w + 2 < n) x.push_prev = true;
      if (!stores[w].empty()) x.push_next = true;
    });
    if (!stores[w].empty()) {
      set_flag(stores[w].front(), [](auto& x) { x.pop_prev = true; });
      set_flag(stores[w].back(), [](auto& x) { x.push_prev = true; });
    }
  }
  size_t pending = 0;  // store->compute tokens the end of the group takes
  for (size_t w = n >= 2 ? n - 2 : 0; w < n; ++w) pending += stores[w].empty() ? 0 : 1;
  // Program order: loads of phase w + 1 before the compute of phase w (the prefetch), the
  // stores of phase w after its compute.
  if (auto s = emit_all(where, phases[0].loads); !s.ok()) return s;
  for (size_t w = 0; w < n; ++w) {
    if (w + 1 < n)
      if (auto s = emit_all(where, phases[w + 1].loads); !s.ok()) return s;
    if (auto s = emit_all(where, phases[w].compute); !s.ok()) return s;
    if (auto s = emit_all(where, stores[w]); !s.ok()) return s;
  }
  for (size_t k = 0; k + 1 < pending; ++k) {
    isa::Nop wait;  // takes one more of the last two phases' store tokens
    wait.engine = isa::Engine::kCompute;
    wait.pop_next = true;
    if (auto s = emitter_.emit(wait); !s.ok()) return fail(where + ": " + s.reason());
  }
  isa::Nop barrier;
  barrier.engine = isa::Engine::kCompute;
  barrier.pop_next = pending > 0;
  barrier.push_prev = true;
  if (auto s = emitter_.emit(barrier); !s.ok()) return fail(where + ": " + s.reason());
  work_before_ = true;
  return {};
}

}  // namespace tessel::codegen::detail
