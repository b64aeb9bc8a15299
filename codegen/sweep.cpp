// Lowering of a weight sweep (GroupSchedule::weight_sweep; docs/codegen.md "Weight sweeps"):
// one tile; each conv's output-channel slices in turn through the ping-pong slice pair
// `w:sweep`/`w:sweep#1` with the block's elementwise ops per slice, pools and Concats whole at
// the end of the phase before them, and each output stored after the phase that completes it.
#include <algorithm>

#include "codegen/lowering.hpp"
#include "scheduler/plan.hpp"
#include "support/diagnostic.hpp"

namespace tessel::codegen::detail {

Status Lowering::sweep_steps(const std::string& where, const sched::GroupSchedule& gs,
                             const std::vector<sched::NestStep>& nest,
                             std::vector<TileCode>& steps) {
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
  std::map<int, size_t> ready_phase;  // per tensor made here: the step that completes it
  if (auto s = sweep_phases(where, gs, nest, whole, steps, ready_phase); !s.ok()) return s;
  weight_copy_ = 0;
  layout_ = whole;
  // Early stores (docs/codegen.md, "Weight sweeps"): each output after the step that
  // completes it.
  for (int t : gs.outputs) {
    const Box& box = requested[static_cast<size_t>(t)];
    auto view = view_of(gs, t, whole[static_cast<size_t>(t)]);
    if (!view.ok()) return fail(where + ": " + view.reason());
    const auto ready = ready_phase.find(t);
    if (ready == ready_phase.end())
      return fail(where + ": output '" + net_.tensor(t).name + "' is made by no op of the group");
    steps[ready->second].stores.push_back(store_of(t, box, view.value()));
  }
  layout_.clear();
  if (steps.empty() || gs.outputs.empty()) return fail(where + ": nothing to compute or store");
  std::vector<isa::Instruction>& first_loads = steps.front().phases.front().loads;
  if (gs.prefetched) {
    // Slice 0 (copy 0) loads in the previous group's tail; step 0 waits for the activations.
    prefetch_ = std::move(first_loads);
    first_loads.clear();
    if (activation_loads.empty()) {
      isa::Nop nop;
      nop.engine = isa::Engine::kLoad;
      activation_loads.push_back(nop);
    }
  }
  first_loads.insert(first_loads.begin(), activation_loads.begin(), activation_loads.end());
  return {};
}

Status Lowering::sweep_phases(const std::string& where, const sched::GroupSchedule& gs,
                              const std::vector<sched::NestStep>& nest,
                              const std::vector<Box>& whole, std::vector<TileCode>& steps,
                              std::map<int, size_t>& ready_phase) {
  // A buffer holds its tensor's whole box when its pixel has every channel, else the slice
  // being computed (docs/scheduler.md, "Weight sweeps").
  std::vector<char> holds_slice(net_.tensors.size(), 0);
  for (const auto& b : gs.buffers) {
    if (b.tensor < 0) continue;
    const Box& box = whole[static_cast<size_t>(b.tensor)];
    holds_slice[static_cast<size_t>(b.tensor)] = b.pixel_bytes < box.c.size() * act_bytes_;
  }
  // The nest's steps (sched::nest_steps): slice k of a conv and its block's elementwise ops on
  // those channels; a pool or Concat runs whole, over every channel, at the end of the step
  // before it (the blocks before it are complete then).
  for (size_t i = 0; i < nest.size(); ++i) {
    const sched::NestStep& at = nest[i];
    const sched::Op& conv = net_.op(gs.ops[at.first_op]);
    const auto slices = slices_of(gs.ops[at.first_op]);
    if (at.slice < 0 || static_cast<size_t>(at.slice) >= slices.size())
      return fail(where + ": slice " + std::to_string(at.slice) + " of '" + conv.name + "' (" +
                  std::to_string(slices.size()) + " slices)");
    const auto k = static_cast<size_t>(at.slice);
    weight_copy_ = static_cast<int>(steps.size() % 2);
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
    for (size_t q = at.first_op; q < at.end_op; ++q) {
      const sched::Op& op = net_.op(gs.ops[q]);
      slice_of(op.output);
      if (q > at.first_op)
        for (int t : op.inputs) slice_of(t);
    }
    if (auto s = emit_op(gs, at.first_op, need, phase); !s.ok())
      return fail(where + ": " + s.reason());
    if (phase.size() != 1) return fail(where + ": reduction chunks in a weight sweep");
    for (size_t q = at.first_op + 1; q < at.end_op; ++q)
      if (auto s = emit_op(gs, q, need, phase); !s.ok()) return fail(where + ": " + s.reason());
    steps.push_back(TileCode{{}, std::move(phase), {}});
    // The block's last slice completes its ops' outputs.
    if (i + 1 == nest.size() || nest[i + 1].first_op != at.first_op)
      for (size_t q = at.first_op; q < at.end_op; ++q)
        ready_phase[net_.op(gs.ops[q]).output] = steps.size() - 1;
    for (size_t pos : at.whole_ops) {
      ready_phase[net_.op(gs.ops[pos]).output] = steps.size() - 1;
      layout_ = whole;
      if (auto s = emit_op(gs, pos, whole, steps.back().phases); !s.ok())
        return fail(where + ": " + s.reason());
    }
  }
  return {};
}

}  // namespace tessel::codegen::detail
