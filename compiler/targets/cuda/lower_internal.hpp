// The lowering pass's shared state (internal to compiler/targets/cuda): the Lowering class,
// its buffer/view/fusion helpers, and the op families it dispatches to. lower.cpp defines the
// classic CNN ops, lower_workloads.cpp the transformer and modern-CNN ops.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "compiler/ir/analysis.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cuda/lower.hpp"

namespace tessel::cuda::detail {

using ir::DType;
using ir::OpKind;

using ir::where;

inline Result<std::int32_t> elem_type(DType dtype, const ir::Op& op) {
  switch (dtype) {
    case DType::i8:
      return kI8;
    case DType::i16:
      return kI16;
    case DType::i32:
      return kI32;
    default:
      return fail(where(op) + ": the GPU backend runs i8/i16/i32 tensors, got " +
                  std::string(ir::to_string(dtype)) + " (is the graph quantized?)");
  }
}

/// `v` read with `out`'s dims (NumPy broadcast: right-aligned, stride 0 where v has extent 1
/// or no axis).
inline Strided broadcast_to(const Strided& v, const ir::Shape& out) {
  Strided b = v;
  b.rank = static_cast<std::int32_t>(out.size());
  for (int d = b.rank - 1, s = v.rank - 1; d >= 0; --d, --s) {
    b.dims[d] = out[static_cast<std::size_t>(d)];
    b.strides[d] = s >= 0 && v.dims[s] == b.dims[d] ? v.strides[s] : 0;
  }
  return b;
}

/// Per-step state while walking a fusion chain.
struct Chain {
  std::string tensor;  ///< the chain's current result
  int stage = 0;       ///< last epilogue stage used (1 bias, 2 requant, 3 clamp, 4 add, 5 clamp)
};

class Lowering {
 public:
  explicit Lowering(const ir::Graph& graph) : graph_(graph) {}

  Result<GpuPlan> run() {
    auto order = ir::topological_order(graph_);
    if (!order) return fail(order.reason());
    plan_.model = graph_.name();
    for (const ir::OpId id : order.value()) {
      if (fused_.count(id)) continue;
      if (auto ok = lower_op(id); !ok) return fail(ok.reason());
    }
    for (const auto& out : graph_.outputs()) {
      const auto producer = graph_.producer(out);
      if (producer && graph_.op(*producer).kind == OpKind::Softmax) continue;
      if (producer && graph_.op(*producer).kind == OpKind::Dequantize) continue;
      if (!place_.count(out)) return fail("graph output %" + out + " is not computed on the GPU");
      add_output(out);
    }
    if (plan_.input_buffer < 0) return fail("graph has no f32 input");
    return std::move(plan_);
  }

 private:
  // ---- buffers and views ------------------------------------------------------------------
  /// A new buffer for `tensor`: NHWC with padded channels for a rank-4 tensor unless `rows`;
  /// otherwise (and for every other rank) row-major rows: all dims but the last flattened into
  /// n, the last (padded to 4) as channels, h = w = 1.
  PlanView new_buffer(const std::string& tensor, std::int32_t type, bool rows = false) {
    const auto& shape = graph_.tensor(tensor).shape;
    Buffer b;
    b.tensor = tensor;
    b.type = type;
    b.rows = rows || shape.size() != 4;
    if (b.rows) {
      b.c = shape.empty() ? 1 : shape.back();
      b.n = shape.empty() ? 1 : ir::element_count(shape) / std::max<std::int64_t>(b.c, 1);
      b.h = b.w = 1;
    } else {
      b.n = shape[0];
      b.c = shape[1];
      b.h = shape[2];
      b.w = shape[3];
    }
    b.c_stride = padded_channels(b.c);
    plan_.buffers.push_back(b);
    PlanView v{static_cast<int>(plan_.buffers.size()) - 1, b.n, b.h, b.w, b.c, b.c_stride, 0};
    place_[tensor] = v;
    return v;
  }

  /// Whether `tensor` (placed) is laid out as rows (see new_buffer); rank-2 tensors are both.
  bool rows_layout(const std::string& tensor) const {
    return graph_.tensor(tensor).shape.size() != 4 ||
           plan_.buffers[static_cast<std::size_t>(place_.at(tensor).buffer)].rows;
  }

  void add_output(const std::string& tensor) {
    const auto& t = graph_.tensor(tensor);
    for (const auto& o : plan_.outputs)
      if (o.tensor == tensor) return;
    DeviceOutput out{tensor, place_.at(tensor), t.shape,
                     plan_.buffers[place_.at(tensor).buffer].type};
    plan_.outputs.push_back(out);
  }

  std::int64_t elem(const PlanView& v) const { return elem_bytes(plan_.buffers[v.buffer].type); }

  /// The sole reader of `tensor` when it has exactly one and is no graph output.
  std::optional<ir::OpId> sole_reader(const std::string& tensor) const {
    const auto& outs = graph_.outputs();
    if (std::find(outs.begin(), outs.end(), tensor) != outs.end()) return std::nullopt;
    const auto uses = graph_.consumers(tensor);
    if (uses.size() != 1) return std::nullopt;
    return uses[0].op;
  }

  // ---- epilogue stages ---------------------------------------------------------------------
  void set_requant(EpilogueTables& e, const std::string& acc, const std::string& out) {
    const auto params = quant::requantize_params(graph_.tensor(acc), graph_.tensor(out));
    const auto& q = graph_.tensor(out).quant;
    e.multiplier.clear();
    e.shift.clear();
    for (const auto& p : params) {
      e.multiplier.push_back(p.multiplier);
      e.shift.push_back(p.shift);
    }
    e.scalars.per_channel = params.size() > 1 ? 1 : 0;
    e.scalars.zero_point = q && !q->zero_points.empty() ? q->zero_points[0] : 0;
    e.scalars.requant_lo = params.at(0).lo;
    e.scalars.requant_hi = params.at(0).hi;
  }

  std::pair<std::int32_t, std::int32_t> act_bounds(const ir::Op& op) const {
    if (op.kind == OpKind::Relu) return {0, std::numeric_limits<std::int32_t>::max()};
    return quant::clip_bounds(graph_.tensor(op.inputs[0]), op.get_float("min"),
                              op.get_float("max"));
  }

  void set_add(Step& step, const ir::Op& add, const std::string& current) {
    const auto p = quant::add_params(graph_.tensor(add.inputs[0]), graph_.tensor(add.inputs[1]),
                                     graph_.tensor(add.outputs[0]));
    auto& s = step.epilogue.scalars;
    s.has_add = 1;
    s.residual_is_a = add.inputs[0] == current ? 0 : 1;
    s.add_multiplier_a = p.multiplier_a;
    s.add_multiplier_b = p.multiplier_b;
    s.add_shift = p.shift;
    s.add_zero_point = p.zero_point;
    s.add_lo = p.lo;
    s.add_hi = p.hi;
    step.second = place_.at(add.inputs[0] == current ? add.inputs[1] : add.inputs[0]);
    step.ops.push_back(add.name);
  }

  /// Absorbs the ops after `chain.tensor` that the epilogue can still take (see lower.hpp).
  void fuse_tail(Step& step, Chain& chain, bool allow_add = true) {
    while (true) {
      const auto reader = sole_reader(chain.tensor);
      if (!reader) return;
      const ir::Op& op = graph_.op(*reader);
      auto& s = step.epilogue.scalars;
      if (op.kind == OpKind::Requantize && chain.stage < 2 &&
          graph_.tensor(chain.tensor).dtype == DType::i32) {
        set_requant(step.epilogue, chain.tensor, op.outputs[0]);
        chain.stage = 2;
        step.ops.push_back(op.name);
      } else if ((op.kind == OpKind::Relu || op.kind == OpKind::Clip) && chain.stage < 3) {
        std::tie(s.clamp_lo, s.clamp_hi) = act_bounds(op);
        s.has_clamp = 1;
        chain.stage = 3;
        step.ops.push_back(op.name);
      } else if (op.kind == OpKind::Add && chain.stage < 4 && chain.stage >= 2) {
        const std::string& other = op.inputs[0] == chain.tensor ? op.inputs[1] : op.inputs[0];
        if (!allow_add || !place_.count(other) || other == chain.tensor) return;
        if (graph_.tensor(other).shape != graph_.tensor(chain.tensor).shape) return;
        if (rows_layout(other) != output_rows(step, chain)) return;
        set_add(step, op, chain.tensor);
        chain.stage = 4;
      } else if ((op.kind == OpKind::Relu || op.kind == OpKind::Clip) && chain.stage == 4) {
        std::tie(s.post_lo, s.post_hi) = act_bounds(op);
        s.has_post_clamp = 1;
        chain.stage = 5;
        step.ops.push_back(op.name);
      } else {
        return;
      }
      fused_.insert(*reader);
      chain.tensor = op.outputs[0];
    }
  }

  // ---- byte accounting ---------------------------------------------------------------------
  std::int64_t table_bytes(const EpilogueTables& e) const {
    return 4 * static_cast<std::int64_t>(e.bias.size() + e.multiplier.size() + e.shift.size());
  }

  /// The layout of a step's output: rows when its main input is rows (Gemm, a rows Eltwise).
  bool output_rows(const Step& step, const Chain& chain) const {
    return graph_.tensor(chain.tensor).shape.size() != 4 ||
           (step.x.buffer >= 0 && plan_.buffers[static_cast<std::size_t>(step.x.buffer)].rows);
  }

  void finish(Step& step, const Chain& chain, Result<std::int32_t> type) {
    step.y = new_buffer(chain.tensor, type.value(), output_rows(step, chain));
    if (step.epilogue.scalars.has_add)
      step.bytes.activations_read += step.second.elements() * elem(step.second);
    step.bytes.activations_written += step.y.elements() * elem(step.y);
    step.bytes.weights_read +=
        static_cast<std::int64_t>(step.weights.size()) + table_bytes(step.epilogue);
  }

  // ---- ops (lower.cpp: the classic CNN ops) ------------------------------------------------
  Status lower_op(ir::OpId id);
  Status lower_input(const ir::Op& op);
  Status lower_quantize(const ir::Op& op);
  static std::vector<std::uint8_t> pack(
      const std::vector<std::int32_t>& values, int elem_size, std::int64_t out_channels,
      std::int64_t taps, std::int64_t stride,
      const std::function<std::int64_t(std::int64_t, std::int64_t, std::int64_t)>& source,
      std::int64_t channels);
  Status lower_conv(const ir::Op& op);
  Status lower_pool(const ir::Op& op);
  Status lower_eltwise(const ir::Op& op);
  static bool channel_axis(const ir::Op& op, std::size_t rank);
  Status lower_copy(const ir::Op& op);
  Status lower_view(const ir::Op& op);

  // ---- ops (lower_workloads.cpp: transformer and modern-CNN ops) ---------------------------
  /// The logical (graph-order) strided view of placed `tensor` over its buffer; fails for a
  /// view no strides express (a flatten of an H x W map, which only a Gemm reads).
  Result<Strided> logical_view(const std::string& tensor, const ir::Op& op) const;
  /// Places a constant operand in a rows buffer whose contents are its integer values.
  Status place_constant(const std::string& tensor, const ir::Op& op);
  /// `tensor`'s NHWC view for a Conv/Pool/channel Concat: its place, or a relayout copy of a
  /// rank-4 rows tensor.
  Result<PlanView> nhwc_place(const std::string& tensor, const ir::Op& op);
  /// A workload step reading views of the given tensors as work.x, .second, .third (empty:
  /// absent; constants are placed first).
  Result<Step> work_step(const ir::Op& op, WorkOp kind, const std::string& out,
                         const std::vector<std::string>& operands);
  /// Appends `step` writing a new buffer for `out` (rank 4: the layout of its main input).
  Status push_work(Step step, const std::string& out);
  Status lower_workload(const ir::Op& op);
  Status lower_binary(const ir::Op& op);
  Status lower_table(const ir::Op& op);
  Status lower_resize(const ir::Op& op);
  Status lower_matmul(const ir::Op& op);
  Status lower_softmax(const ir::Op& op);
  Status lower_norm(const ir::Op& op);
  Status lower_reduce(const ir::Op& op);
  Status lower_move(const ir::Op& op);
  Status lower_concat_split(const ir::Op& op);
  Status lower_reshape(const ir::Op& op);

  const ir::Graph& graph_;
  GpuPlan plan_;
  std::map<std::string, PlanView> place_;
  std::set<ir::OpId> fused_;
};

}  // namespace tessel::cuda::detail
