// The program's size from the schedule (program_size.hpp): the lowering's instruction counts
// (codegen/group.cpp, sweep.cpp, matrix_ops.cpp, vector_ops.cpp, table_ops.cpp,
// transformer_ops.cpp) over the steps of each group's mapping, the one step enumeration both
// walk (sched::nest_steps). Each count names the codegen function it follows.
#include "scheduler/program_size.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "isa/instruction.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/group_mapping.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/pixel_gather.hpp"
#include "scheduler/shape.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/int_ops.hpp"

namespace tessel::sched {

namespace {

bool is_matrix(const Op& op) {
  return op.kind == OpKind::Conv || op.kind == OpKind::Gemm;
}

class ProgramCounter {
 public:
  ProgramCounter(const Net& net, const Machine& machine, const Schedule& schedule)
      : net_(net), machine_(machine), schedule_(schedule) {
    rows_ = machine.matrix_rows;
    cols_ = machine.matrix_cols;
  }

  Result<int64_t> run() {
    // Groups from the first Softmax group on run on the host (codegen's find_host_groups).
    size_t host_from = schedule_.groups.size();
    for (size_t g = 0; g < schedule_.groups.size(); ++g)
      for (int o : schedule_.groups[g].ops)
        if (net_.op(o).kind == OpKind::Softmax) host_from = std::min(host_from, g);
    for (size_t g = 0; g < host_from; ++g) plan_channel_tiles(schedule_.groups[g]);
    for (size_t g = 0; g < host_from; ++g) {
      const GroupSchedule& gs = schedule_.groups[g];
      if (gs.dram_view) continue;
      const std::string where = "group " + std::to_string(g);
      for (int o : gs.ops)
        if (!supported(net_.op(o)))
          return fail(where + ": op '" + net_.op(o).name + "' (" + to_string(net_.op(o).kind) +
                      ") is not lowered by codegen");
      auto counted = count_group(where, gs);
      if (!counted.ok()) return counted.failure();
      total_ += counted.value();
      work_before_ = true;
    }
    if (work_before_) ++total_;  // the drain nop that takes the last barrier's token
    return total_ + 1;           // finish
  }

 private:
  static bool supported(const Op& op) {
    switch (op.kind) {
      case OpKind::Conv:
      case OpKind::Gemm:
      case OpKind::Eltwise:
      case OpKind::Add:
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalPool:
      case OpKind::Concat:
      case OpKind::Mul:
      case OpKind::Norm:
      case OpKind::Embedding:
      case OpKind::RowSoftmax:
      case OpKind::MatMul:
        return true;
      default:
        return false;
    }
  }

  // codegen's plan_weight_regions: a matrix op's slices are its group's channel tiles (1 for
  // the MLP's reducer, each sweep conv its own count).
  void plan_channel_tiles(const GroupSchedule& gs) {
    for (size_t pos = 0; pos < gs.ops.size(); ++pos) {
      const int index = gs.ops[pos];
      if (!is_matrix(net_.op(index))) continue;
      int64_t tiles = gs.channel_tiles;
      if (hidden_reducer(gs) == index) tiles = 1;
      if (idle_in_tile(gs, index, 1)) tiles = 1;  // an op run once: whole
      if (gs.weight_sweep && pos < gs.op_slices.size()) tiles = gs.op_slices[pos];
      channel_tiles_[index] = tiles;
    }
  }

  std::vector<Interval> slices_of(int index) const {
    const auto it = channel_tiles_.find(index);
    const int64_t n = it == channel_tiles_.end() ? 1 : it->second;
    const int64_t channels = net_.tensor(net_.op(index).output).shape.c;
    std::vector<Interval> slices;
    for (int64_t k = 0; k < n; ++k) slices.push_back({channels * k / n, channels * (k + 1) / n});
    return slices;
  }

  int hidden_reducer(const GroupSchedule& gs) const {
    if (gs.weight_sweep || gs.dram_view ||
        !chunks_hidden(net_, gs.ops, gs.row_tiles, gs.col_tiles, gs.channel_tiles))
      return -1;
    return gs.ops[static_cast<size_t>(hidden_chunks(net_, gs.ops).reducer)];
  }

  // codegen's idle_in_tile: an op run once (RunsOnce) runs in the first tile only.
  bool idle_in_tile(const GroupSchedule& gs, int index, int64_t tile) const {
    if (gs.weight_sweep || gs.dram_view) return false;
    const auto at = std::find(gs.ops.begin(), gs.ops.end(), index) - gs.ops.begin();
    return !runs_once(net_, gs.ops, gs.row_tiles, gs.col_tiles, gs.channel_tiles)
                .runs(static_cast<size_t>(at), tile);
  }

  MatrixShape matrix_shape(const Op& op) const { return sched::matrix_shape(net_, machine_, op); }

  // codegen's chunk_blocks_of: input blocks per reduction chunk.
  int64_t chunk_blocks_of(const GroupSchedule& gs, int index, const MatrixShape& m) const {
    const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
    const Op& op = net_.op(index);
    const BufferAlloc* wbuf = nullptr;
    for (const auto& b : gs.buffers)
      if (b.role == BufferRole::Weights && b.name == "w:" + op.name) wbuf = &b;
    const bool reducer = hidden_reducer(gs) == index;
    if (m.depthwise || gs.weights_resident || wbuf == nullptr) return ic_blocks;
    const auto pos =
        static_cast<size_t>(std::find(gs.ops.begin(), gs.ops.end(), index) - gs.ops.begin());
    if (const int64_t said = gs.chunk_blocks_at(pos, ic_blocks, rows_); said >= 0) return said;
    if (!m.gemm && !reducer) return ic_blocks;
    int64_t widest = 0;
    for (const Interval c : slices_of(index)) widest = std::max(widest, c.size());
    const int64_t oc_blocks = ceil_div(widest, cols_);
    const int64_t block_row = oc_blocks * rows_ * cols_ * machine_.weight_bytes;
    const int64_t fixed = oc_blocks * cols_ * 4 + widest * 8;
    if (ceil_div(ic_blocks * block_row + fixed, 8) * 8 <= wbuf->size_bytes) return ic_blocks;
    const int64_t fit = (wbuf->size_bytes - fixed) / block_row;
    return fit >= 1 ? std::min(fit, ic_blocks) : ic_blocks;
  }

  struct MatrixParams {
    MatrixShape m;
    int64_t chunk_blocks = 1, chunks = 1;
  };

  // codegen's emit_conv_loads: the loads of slice `slice` (all when -1), reduction chunk `chunk`.
  int64_t conv_loads(int index, int slice, int64_t chunk = 0) const {
    const MatrixParams& p = params_.at(index);
    const MatrixShape& m = p.m;
    const auto slices = slices_of(index);
    const int64_t ic_blocks = m.depthwise ? 1 : ceil_div(m.ci, rows_);
    const int64_t b0 = chunk * p.chunk_blocks, b1 = std::min(ic_blocks, b0 + p.chunk_blocks);
    int64_t n = 0;
    for (size_t k = 0; k < slices.size(); ++k) {
      if (slice >= 0 && static_cast<size_t>(slice) != k) continue;
      n += weight_block_dmas(m, machine_, slices[k], b0, b1);
      if (chunk > 0) continue;          // the bias and table came with chunk 0
      n += (m.has_bias() ? 1 : 0) + 1;  // bias vector, (M, r) table
    }
    return n;
  }

  // codegen's emit_conv: vcfg, then per conv step the conv(s), further reduction chunks (their
  // loads and conv) and the requant.
  int64_t conv_code(const GroupSchedule& gs, size_t pos, const Op& op,
                    const std::vector<Box>& need) const {
    const int index = gs.ops[pos];
    const MatrixParams& p = params_.at(index);
    const Box& out_box = need[static_cast<size_t>(op.output)];
    if (out_box.empty()) return 0;
    const auto slices = slices_of(index);
    int slice_index = -1;
    for (size_t k = 0; k < slices.size(); ++k)
      if (slices[k] == out_box.c) slice_index = static_cast<int>(k);
    int64_t step = pos < gs.rows_per_step.size() ? gs.rows_per_step[pos] : out_box.h.size();
    if (step < 1) step = out_box.h.size();
    const int64_t steps = ceil_div(out_box.h.size(), step);
    const int64_t convs =
        p.m.groups > 1 ? static_cast<int64_t>(unit_portions(out_box.c, p.m.unit()).size()) : 1;
    // + one requant, or one per unit where the units' columns are not consecutive channels
    const int64_t requants = columns_contiguous(out_box.c, p.m.unit(), cols_) ? 1 : convs;
    int64_t per_step = convs + requants;
    for (int64_t k = 1; k < p.chunks; ++k) per_step += 1 + conv_loads(index, slice_index, k);
    return 1 + steps * per_step;
  }

  // codegen's emit_hidden_chunk: the MLP reducer's conv per step of rows, requant at the end.
  int64_t hidden_chunk_code(const GroupSchedule& gs, size_t pos, const Op& op,
                            const std::vector<Box>& need, int64_t chunk) const {
    const Box& out_box = need[static_cast<size_t>(op.output)];
    const Box& in_box = need[static_cast<size_t>(op.inputs[0])];
    if (out_box.empty() || in_box.empty()) return 0;
    const bool last = chunk + 1 == gs.channel_tiles;
    int64_t step = pos < gs.rows_per_step.size() ? gs.rows_per_step[pos] : out_box.h.size();
    if (step < 1) step = out_box.h.size();
    return (last ? 1 : 0) + ceil_div(out_box.h.size(), step) * (last ? 2 : 1);
  }

  // One op of a step (codegen's emit_op through the emitter of its kind).
  int64_t op_code(const GroupSchedule& gs, size_t pos, const std::vector<Box>& need,
                  int64_t hidden_chunk) const {
    const Op& op = net_.op(gs.ops[pos]);
    if (hidden_chunk >= 0 && gs.ops[pos] == hidden_reducer(gs))
      return hidden_chunk_code(gs, pos, op, need, hidden_chunk);
    if (is_matrix(op)) return conv_code(gs, pos, op, need);
    const Box& box = need[static_cast<size_t>(op.output)];
    if (box.empty()) return 0;
    switch (op.kind) {
      case OpKind::Eltwise:
        return op.lookup_table ? 1 : 2;  // lut; or vcfg + add (Relu/Clip)
      case OpKind::Add:
      case OpKind::Mul:  // vcfg + the instruction, one per period of a constant's rows
        return 1 + static_cast<int64_t>(constant_row_portions(op, box.h).size());
      case OpKind::Norm:
      case OpKind::RowSoftmax:
        return 2;             // vcfg + the instruction
      case OpKind::MatMul: {  // per sequence of the rows a matmul per head; vcfg, requant
        const HeadMatMul& mm = op.matmul;
        const auto sequences = unit_portions(box.h, mm.batch > 1 ? mm.m_size : 0).size();
        return static_cast<int64_t>(sequences) * mm.heads + 2;
      }
      case OpKind::MaxPool:
        return 1;
      case OpKind::AvgPool:
      case OpKind::GlobalPool: {
        if (!op.pool_by_conv) return 2;  // vcfg + pool
        const Shape3 in = net_.tensor(op.inputs[0]).shape;
        return 1 + pool_sub_windows(in.h) * pool_sub_windows(in.w) + 1;  // vcfg, convs, requant
      }
      case OpKind::Concat: {
        int64_t n = 1;  // vcfg, then a copy per input with channels in the box
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          const int64_t offset = op.concat_offsets[i];
          const int64_t first = std::max(box.c.b, offset);
          const int64_t end = std::min(box.c.e, offset + net_.tensor(op.inputs[i]).shape.c);
          n += first < end ? 1 : 0;
        }
        return n;
      }
      default:
        return 0;
    }
  }

  Status place_params(const GroupSchedule& gs) {
    params_.clear();
    for (int o : gs.ops) {
      if (!is_matrix(net_.op(o))) continue;
      MatrixParams p;
      p.m = matrix_shape(net_.op(o));
      const int64_t ic_blocks = p.m.depthwise ? 1 : ceil_div(p.m.ci, rows_);
      p.chunk_blocks = chunk_blocks_of(gs, o, p.m);
      p.chunks = ceil_div(ic_blocks, p.chunk_blocks);
      params_[o] = p;
    }
    return {};
  }

  Result<int64_t> count_group(const std::string& where, const GroupSchedule& gs) {
    if (auto s = place_params(gs); !s.ok()) return s.failure();
    auto nest = nest_steps(net_, derive_mapping(net_, gs));
    if (!nest.ok()) return fail(where + ": " + nest.reason());
    return gs.weight_sweep ? sweep_count(gs, nest.value()) : tile_count(where, gs, nest.value());
  }

  // Whether codegen's view_of finds copy 0 of an activation buffer of `t` holding `box`.
  static bool buffered(const GroupSchedule& gs, int t, const Box& box) {
    for (const auto& b : gs.buffers)
      if (b.tensor == t && b.role != BufferRole::Weights && b.role != BufferRole::Accumulator &&
          b.copy == 0)
        return box.h.size() * box.w.size() * b.pixel_bytes <= b.size_bytes;
    return false;
  }

  // codegen's halo_copies: trims `need` to the fresh rows; returns the prelude's instructions
  // (a vcfg, then a copy per row shared with the previous tile).
  int64_t halo_copies(const GroupSchedule& gs, const std::vector<Box>& window,
                      std::vector<Box>& previous, std::vector<Box>& need) const {
    int64_t prelude = 0;
    halo_step(window, previous, need, [&](size_t t, const Box& prev) {
      if (!buffered(gs, static_cast<int>(t), prev) || !buffered(gs, static_cast<int>(t), window[t]))
        return;
      if (prelude == 0) prelude = 1;
      prelude += prev.h.e - window[t].h.b;
    });
    return prelude;
  }

  // codegen's tile_steps + lower_tile + emit_serialised / emit_double_buffered.
  Result<int64_t> tile_count(const std::string& where, const GroupSchedule& gs,
                             const std::vector<NestStep>& nest) {
    const bool cache = gs.halo == HaloMode::Cache;
    const bool pipelined = gs.double_buffered && !cache;
    const std::vector<char> kept = tile_kept_inputs(net_, gs);
    const int reducer = hidden_reducer(gs);
    if (static_cast<int64_t>(nest.size()) != gs.tiles())
      return fail(where + ": the mapping's loops give " + std::to_string(nest.size()) +
                  " tiles, the schedule " + std::to_string(gs.tiles()));
    std::map<int, Interval> table_channels;
    std::vector<Box> previous(net_.tensors.size());
    std::vector<int64_t> preludes;
    int64_t n = 0;
    for (const NestStep& step : nest) {
      const int64_t tile = step.tile, kt = step.channel_part;
      std::vector<Box> requested, window;
      tile_boxes(net_, gs, tile, requested, window);
      std::vector<Box> need = window;
      preludes.push_back(cache ? halo_copies(gs, window, previous, need) : 0);
      n += preludes.back();
      const bool first_tile = tile == 0;
      int64_t weight_loads = 0, activation_loads = 0, compute = 0, stores = 0;
      for (int o : gs.ops) {
        if (!is_matrix(net_.op(o)) || idle_in_tile(gs, o, tile)) continue;
        const bool new_part = step.row_part == 0 && step.col_part == 0;
        const bool load_slice =
            gs.weights_resident ? first_tile : !gs.keeps_weight_slices() || new_part;
        if (o == reducer)
          weight_loads += conv_loads(o, 0, kt);
        else if (load_slice)
          weight_loads += conv_loads(o, gs.weights_resident ? -1 : static_cast<int>(kt));
      }
      for (int o : gs.ops) {  // codegen's emit_table_loads
        const Op& op = net_.op(o);
        if (!loads_table(op) || idle_in_tile(gs, o, tile)) continue;
        const Box& box = window[static_cast<size_t>(op.output)];
        if (gs.weights_resident) {
          if (tile > 0) continue;
        } else {
          const Interval part = table_part(op, box);
          const auto last = table_channels.find(o);
          const bool same =
              gs.keeps_weight_slices() && last != table_channels.end() && last->second == part;
          table_channels[o] = part;
          if (same || box.c.empty() || part.empty()) continue;
        }
        ++weight_loads;
      }
      for (int t : gs.inputs) {
        const Box& box = need[static_cast<size_t>(t)];
        if (box.empty()) continue;
        if (kept[static_cast<size_t>(t)] && !first_tile) continue;
        // An Embedding's ids: its gathers (4095 rows at most each) are these loads.
        activation_loads += gathered_ids(net_, gs.ops, t)
                                ? ceil_div(box.h.size() * box.w.size(), kGatherRows)
                                : load_dma_count(net_, t, box);  // row phases, gather runs
      }
      for (size_t pos = 0; pos < gs.ops.size(); ++pos)
        if (!idle_in_tile(gs, gs.ops[pos], tile))
          compute += op_code(gs, pos, need, reducer >= 0 ? kt : -1);
      for (int t : gs.outputs) stores += requested[static_cast<size_t>(t)].empty() ? 0 : 1;
      // An engine with nothing to do keeps its place in the token protocol with a nop; the
      // first tile of a prefetched group has its weight loads in the previous group's tail.
      const int64_t own_loads =
          first_tile && gs.prefetched ? activation_loads : weight_loads + activation_loads;
      n += weight_loads + activation_loads + compute + stores;
      n += (own_loads == 0 ? 1 : 0) + (compute == 0 ? 1 : 0) + (stores == 0 ? 1 : 0);
    }
    if (pipelined) return n + std::min<int64_t>(2, gs.tiles());  // drain nop(s) and barrier
    // Serialised: a barrier after each tile, unless the next tile's halo copies take its place.
    for (size_t i = 0; i < preludes.size(); ++i)
      n += i + 1 < preludes.size() && preludes[i + 1] > 0 ? 0 : 1;
    return n;
  }

  // codegen's sweep_steps + sweep_phases + emit_double_buffered.
  Result<int64_t> sweep_count(const GroupSchedule& gs, const std::vector<NestStep>& nest) {
    std::vector<Box> requested(net_.tensors.size());
    for (int t : gs.outputs) requested[static_cast<size_t>(t)] = full_box(net_.tensor(t).shape);
    const std::vector<Box> whole = transfer(net_, gs.ops, requested).need;
    int64_t n = 0, activation_loads = 0;
    for (int t : gs.inputs) {
      if (whole[static_cast<size_t>(t)].empty()) continue;
      activation_loads += load_dma_count(net_, t, whole[static_cast<size_t>(t)]);
    }
    n += activation_loads;
    if (gs.prefetched && activation_loads == 0) ++n;  // a load nop starts step 0
    std::vector<int64_t> stores_of(nest.size(), 0);
    std::map<int, size_t> ready;
    for (size_t i = 0; i < nest.size(); ++i) {
      const NestStep& at = nest[i];
      const auto slices = slices_of(gs.ops[at.first_op]);
      const auto k = static_cast<size_t>(at.slice);
      n += conv_loads(gs.ops[at.first_op], static_cast<int>(k));
      std::vector<Box> need = whole;
      for (size_t q = at.first_op; q < at.end_op; ++q) {
        const Op& op = net_.op(gs.ops[q]);
        need[static_cast<size_t>(op.output)].c = slices[k];
        if (q > at.first_op)
          for (int t : op.inputs) need[static_cast<size_t>(t)].c = slices[k];
      }
      for (size_t q = at.first_op; q < at.end_op; ++q) n += op_code(gs, q, need, -1);
      if (i + 1 == nest.size() || nest[i + 1].first_op != at.first_op)
        for (size_t q = at.first_op; q < at.end_op; ++q) ready[net_.op(gs.ops[q]).output] = i;
      for (size_t pos : at.whole_ops) {
        ready[net_.op(gs.ops[pos]).output] = i;
        n += op_code(gs, pos, whole, -1);
      }
    }
    for (int t : gs.outputs) {
      const auto r = ready.find(t);
      if (r == ready.end()) return fail("output '" + net_.tensor(t).name + "' is made by no op");
      ++stores_of[r->second];
      ++n;
    }
    int64_t pending = 0;  // the last two steps that store
    for (size_t t = nest.size() >= 2 ? nest.size() - 2 : 0; t < nest.size(); ++t)
      pending += stores_of[t] > 0 ? 1 : 0;
    return n + std::max<int64_t>(0, pending - 1) + 1;  // drain nops, barrier
  }

  const Net& net_;
  const Machine& machine_;
  const Schedule& schedule_;
  int64_t rows_ = 16, cols_ = 16;
  std::map<int, int64_t> channel_tiles_;  // matrix op -> its slices (codegen's channel_tiles_)
  std::map<int, MatrixParams> params_;    // the current group's matrix ops
  int64_t total_ = 0;
  bool work_before_ = false;
};

}  // namespace

Result<int64_t> predict_instructions(const Net& net, const Machine& machine,
                                     const Schedule& schedule) {
  return ProgramCounter(net, machine, schedule).run();
}

Result<int64_t> predict_instruction_fetch_bytes(const Net& net, const Machine& machine,
                                                const Schedule& schedule) {
  auto n = predict_instructions(net, machine, schedule);
  if (!n.ok()) return n.failure();
  return n.value() * static_cast<int64_t>(isa::kInstructionBytes);
}

}  // namespace tessel::sched
