// Lowering of the data-movement ops (docs/quantization.md, "Data movement"): Transpose, Slice,
// Gather, Expand, Trilu, Pad, Concat/Split on any axis and Reshapes that are not views, each one
// `kMove`/`kReshape` workload kernel whose source view carries the permutation, offsets or
// broadcast as strides. A Slice of the last axis of rows is a view (no kernel), as a Split of
// NHWC channels is.
#include "compiler/ir/resize_taps.hpp"
#include "compiler/ir/shape_rules.hpp"
#include "compiler/targets/cuda/lower_internal.hpp"

namespace tessel::cuda::detail {

Status Lowering::lower_move(const ir::Op& op) {
  const std::string& in = op.inputs[0];
  const std::string& out = op.outputs[0];
  if (!place_.count(in)) return fail(where(op) + ": input not computed on the GPU");
  const auto& xs = graph_.tensor(in).shape;
  const auto& ys = graph_.tensor(out).shape;
  if (op.kind == OpKind::Slice) {
    auto axes = ir::slice_axes(op, xs);
    if (!axes) return axes.failure();
    // The last axis of rows, contiguous, every other axis whole: a view of the same rows.
    const PlanView v = place_.at(in);
    bool view = rows_layout(in) && v.h == 1 && v.w == 1 && !xs.empty() && v.c == xs.back() &&
                axes.value().back().step == 1;
    for (std::size_t d = 0; view && d + 1 < xs.size(); ++d)
      view =
          axes.value()[d].start == 0 && axes.value()[d].step == 1 && axes.value()[d].count == xs[d];
    if (view) {
      PlanView slice = v;
      slice.c = axes.value().back().count;
      slice.channel_offset += axes.value().back().start;
      place_[out] = slice;
      return {};
    }
  }
  auto s = work_step(op, kMove, out, {in});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  Strided& x = step.work.x;
  const Strided v = x;
  x.rank = static_cast<std::int32_t>(ys.size());
  switch (op.kind) {
    case OpKind::Transpose: {
      auto perm = op.get_ints("perm");
      if (perm.empty())
        for (int d = v.rank - 1; d >= 0; --d) perm.push_back(d);
      for (std::size_t d = 0; d < perm.size(); ++d) {
        x.dims[d] = v.dims[perm[d]];
        x.strides[d] = v.strides[perm[d]];
      }
      break;
    }
    case OpKind::Slice: {
      const auto axes = ir::slice_axes(op, xs).value();
      for (std::size_t d = 0; d < axes.size(); ++d) {
        x.offset += axes[d].start * v.strides[d];
        x.strides[d] = v.strides[d] * axes[d].step;
        x.dims[d] = axes[d].count;
      }
      break;
    }
    case OpKind::Expand:
      x = broadcast_to(v, ys);
      break;
    case OpKind::Trilu:
      if (ys.size() < 2) return fail(where(op) + ": needs rank >= 2");
      step.work.trilu = 1;
      step.work.trilu_upper = op.get_int("upper") != 0 ? 1 : 0;
      step.work.trilu_k = op.get_int("k");
      break;
    case OpKind::Gather: {
      std::int64_t axis = op.get_int("axis");
      if (axis < 0) axis += v.rank;
      const auto& indices = op.get_ints("indices");
      const std::size_t index_rank = op.get_ints("indices_shape").size();
      if (index_rank > 1)
        return fail(where(op) + ": the GPU backend gathers with 0-D or 1-D indices only");
      if (index_rank == 0) {  // the axis disappears
        x.offset += indices.at(0) * v.strides[axis];
        for (int d = static_cast<int>(axis); d + 1 < v.rank; ++d) {
          x.dims[d] = v.dims[d + 1];
          x.strides[d] = v.strides[d + 1];
        }
      } else {
        step.work.gather_axis = static_cast<std::int32_t>(axis);
        x.dims[axis] = static_cast<std::int64_t>(indices.size());
        step.weights.resize(indices.size() * sizeof(std::int64_t));
        std::memcpy(step.weights.data(), indices.data(), step.weights.size());
      }
      break;
    }
    case OpKind::Pad: {
      const auto& pads = op.get_ints("pads");
      const auto& q = graph_.tensor(in).quant;
      if (pads.size() < xs.size() || !q || q->scales.empty())
        return fail(where(op) + ": expects per-axis pads on a quantized input");
      for (const auto p : pads)
        if (p < 0) return fail(where(op) + ": negative pads (cropping) are not supported");
      for (std::size_t d = 0; d < xs.size(); ++d) step.work.pad_begin[d] = pads[d];
      step.work.pad = 1;
      step.work.pad_value =
          intops::quantize_value(static_cast<float>(op.get_float("value")), q->scales[0],
                                 quant::dtype_bits(graph_.tensor(in).dtype));
      x.rank = v.rank;  // the input's dims: the kernel tests each index against them
      break;
    }
    default:
      return fail(where(op) + ": not a data-movement op");
  }
  return push_work(std::move(step), out);
}

Status Lowering::lower_resize(const ir::Op& op) {
  const std::string& in = op.inputs[0];
  const std::string& out = op.outputs[0];
  if (!place_.count(in)) return fail(where(op) + ": input not computed on the GPU");
  const auto& xs = graph_.tensor(in).shape;
  if (xs.size() > static_cast<std::size_t>(kMaxRank))
    return fail(where(op) + ": rank " + std::to_string(xs.size()) + " is above the GPU's " +
                std::to_string(kMaxRank));
  auto taps = ir::resize_taps(op, xs, graph_.tensor(out).shape);
  if (!taps) return fail(taps.reason());
  auto s = work_step(op, kResize, out, {in});
  if (!s) return s.failure();
  Step step = std::move(s.value());
  step.work.resize_shift = taps.value().shift;
  std::vector<std::int64_t> table;  // axis after axis: (lo, hi, w_lo, w_hi) per output index
  for (const auto& axis : taps.value().axes)
    for (const auto& tap : axis) table.insert(table.end(), {tap.lo, tap.hi, tap.w_lo, tap.w_hi});
  step.weights.resize(table.size() * sizeof(std::int64_t));
  std::memcpy(step.weights.data(), table.data(), step.weights.size());
  return push_work(std::move(step), out);
}

Status Lowering::lower_concat_split(const ir::Op& op) {
  const bool concat = op.kind == OpKind::Concat;
  const std::string& whole = concat ? op.outputs[0] : op.inputs[0];
  const auto rank = static_cast<std::int64_t>(graph_.tensor(whole).shape.size());
  std::int64_t axis = op.get_int("axis");
  if (axis < 0) axis += rank;
  if (concat) {
    for (const auto& in : op.inputs)
      if (auto ok = place_constant(in, op); !ok) return ok;
    auto type = elem_type(graph_.tensor(whole).dtype, op);
    if (!type) return type.failure();
    const PlanView y = new_buffer(whole, type.value(), true);
    auto yv = logical_view(whole, op);
    if (!yv) return yv.failure();
    std::int64_t start = 0;
    for (const auto& in : op.inputs) {
      auto s = work_step(op, kMove, whole, {in});
      if (!s) return s.failure();
      Step step = std::move(s.value());
      Strided slice = yv.value();
      slice.dims[axis] = graph_.tensor(in).shape[static_cast<std::size_t>(axis)];
      slice.offset += start * slice.strides[axis];
      start += slice.dims[axis];
      step.work.y = slice;
      step.work_buffers[3] = y.buffer;
      step.y = y;
      step.launch = elementwise_launch(work_threads(step.work));
      step.bytes.activations_written = strided_elements(slice) * elem(y);
      plan_.steps.push_back(std::move(step));
    }
    return {};
  }
  std::int64_t start = 0;
  for (const auto& out : op.outputs) {
    auto s = work_step(op, kMove, out, {whole});
    if (!s) return s.failure();
    Step step = std::move(s.value());
    const std::int64_t count = graph_.tensor(out).shape[static_cast<std::size_t>(axis)];
    step.work.x.offset += start * step.work.x.strides[axis];
    step.work.x.dims[axis] = count;
    start += count;
    if (auto ok = push_work(std::move(step), out); !ok) return ok;
  }
  return {};
}

Status Lowering::lower_reshape(const ir::Op& op) {
  auto s = work_step(op, kReshape, op.outputs[0], {op.inputs[0]});
  if (!s) return s.failure();
  return push_work(std::move(s.value()), op.outputs[0]);
}

}  // namespace tessel::cuda::detail
