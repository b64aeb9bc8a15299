// Shape deduction per op kind and shape transfer through a group's sub-DAG.
#include "scheduler/shape.hpp"

#include <algorithm>

namespace tessel::sched {

Interval hull(Interval a, Interval b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.b, b.b), std::max(a.e, b.e)};
}

Interval intersect(Interval a, Interval b) {
  Interval r{std::max(a.b, b.b), std::min(a.e, b.e)};
  if (r.e < r.b) r.e = r.b;
  return r;
}

Box hull(const Box& a, const Box& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {hull(a.c, b.c), hull(a.h, b.h), hull(a.w, b.w)};
}

Box full_box(const Shape3& shape) {
  return {{0, shape.c}, {0, shape.h}, {0, shape.w}};
}

namespace {

struct AxisNeed {
  Interval range;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

// One spatial axis of a sliding window: in = [o.b*s - pad, (o.e-1)*s + (k-1)*d + 1 - pad),
// clamped to [0, extent); what falls outside is padding.
AxisNeed window_axis(Interval out, int64_t kernel, int64_t stride, int64_t dilation,
                     int64_t pad_begin, int64_t extent) {
  if (out.empty()) return {};
  const int64_t begin = out.b * stride - pad_begin;
  const int64_t end = (out.e - 1) * stride + (kernel - 1) * dilation + 1 - pad_begin;
  AxisNeed need;
  need.range = intersect({begin, end}, {0, extent});
  need.pad_begin = std::max<int64_t>(0, std::min(end, int64_t{0}) - begin);
  need.pad_end = std::max<int64_t>(0, end - std::max(begin, extent));
  return need;
}

}  // namespace

InputNeed deduce_input(const Net& net, const Op& op, int input_index, const Box& out) {
  const Shape3 in = net.tensor(op.inputs[static_cast<size_t>(input_index)]).shape;
  InputNeed need;
  if (out.empty()) return need;
  const Window& win = op.window;
  switch (op.kind) {
    case OpKind::Conv:
    case OpKind::MaxPool:
    case OpKind::AvgPool: {
      const AxisNeed h =
          window_axis(out.h, win.kernel_h, win.stride_h, win.dilation_h, win.pad_top, in.h);
      const AxisNeed w =
          window_axis(out.w, win.kernel_w, win.stride_w, win.dilation_w, win.pad_left, in.w);
      Interval c = out.c;
      if (op.kind == OpKind::Conv) {
        const int64_t out_channels = net.tensor(op.output).shape.c;
        const int64_t out_per_group = out_channels / op.groups;
        const int64_t in_per_group = in.c / op.groups;
        c = {(out.c.b / out_per_group) * in_per_group,
             ((out.c.e - 1) / out_per_group + 1) * in_per_group};
      }
      need.box = {c, h.range, w.range};
      need.pad_top = h.pad_begin;
      need.pad_bottom = h.pad_end;
      need.pad_left = w.pad_begin;
      need.pad_right = w.pad_end;
      break;
    }
    case OpKind::Pad: {
      // A pad op is a window with kernel 1, stride 1 and the pad as "pad_begin".
      const AxisNeed h = window_axis(out.h, 1, 1, 1, win.pad_top, in.h);
      const AxisNeed w = window_axis(out.w, 1, 1, 1, win.pad_left, in.w);
      need.box = {out.c, h.range, w.range};
      need.pad_top = h.pad_begin;
      need.pad_bottom = h.pad_end;
      need.pad_left = w.pad_begin;
      need.pad_right = w.pad_end;
      break;
    }
    case OpKind::Eltwise:
    case OpKind::Add:
      need.box = out;
      break;
    case OpKind::Mul:
      // A per-channel operand (C x 1 x 1) is read at its one pixel for every output pixel.
      need.box = !op.constant_operand && in.h == 1 && in.w == 1 && !out.empty()
                     ? Box{out.c, {0, 1}, {0, 1}}
                     : out;
      break;
    case OpKind::Concat: {
      const int64_t offset = op.concat_offsets[static_cast<size_t>(input_index)];
      const Interval mine = intersect(out.c, {offset, offset + in.c});
      need.box = {{mine.b - offset, mine.e - offset}, out.h, out.w};
      if (mine.empty()) need.box = {};
      break;
    }
    case OpKind::GlobalPool:
      need.box = {out.c, {0, in.h}, {0, in.w}};
      break;
    case OpKind::Input:
      break;
    case OpKind::Embedding:  // the ids of the tile's tokens
    case OpKind::Norm:
    case OpKind::RowSoftmax:
      // A pixel's rows are whole: every channel of the tile's pixels.
      need.box = out.empty() ? Box{} : Box{{0, in.c}, out.h, out.w};
      break;
    case OpKind::MatMul: {
      // Output rows m need rows m of a (every channel) and all of b; over a batch of sequences
      // (HeadMatMul::batch), b's rows of the sequences the rows belong to.
      const HeadMatMul& mm = op.matmul;
      if (out.empty()) {
        need.box = {};
      } else if (input_index == 0) {
        need.box = Box{{0, in.c}, out.h, out.w};
      } else if (mm.batch > 1 && mm.m_size > 0 && in.h % mm.batch == 0) {
        const int64_t rows = in.h / mm.batch;  // b's rows per sequence
        const int64_t first = out.h.b / mm.m_size, end = (out.h.e + mm.m_size - 1) / mm.m_size;
        need.box = Box{{0, in.c}, {first * rows, end * rows}, {0, in.w}};
      } else {
        need.box = full_box(in);
      }
      break;
    }
    case OpKind::Gemm:
    case OpKind::Softmax:
    case OpKind::Reshape:
    case OpKind::Slice:
      need.box = full_box(in);
      break;
  }
  return need;
}

TileRanges transfer(const Net& net, const std::vector<int>& group_ops,
                    const std::vector<Box>& requested) {
  TileRanges ranges;
  ranges.need = requested;
  ranges.need.resize(net.tensors.size());
  for (auto it = group_ops.rbegin(); it != group_ops.rend(); ++it) {
    const Op& op = net.op(*it);
    const Box out = ranges.need[static_cast<size_t>(op.output)];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const InputNeed need = deduce_input(net, op, static_cast<int>(i), out);
      Box& slot = ranges.need[static_cast<size_t>(op.inputs[i])];
      slot = hull(slot, need.box);
    }
  }
  return ranges;
}

}  // namespace tessel::sched
