// Graph IR -> Net, pixel views: Reshapes, Transposes, Slices and Concats that keep an
// activation's channels whole but reorder its pixels (Swin's window partition [1, H, W, C] ->
// [nW, ws * ws, C] through [1, H / ws, ws, W / ws, ws, C], and its reverse; MaxViT's partition of
// an NCHW map [1, C, H, W] -> [1, C, H / p, p, W / p, p] -> [1, H / p, W / p, p, p, C], which
// moves the channels last on the way, and its departition back to NCHW). Each IR tensor of such
// a chain is its base net tensor's pixels in another order, one source pixel per pixel, with its
// channels at a recorded axis; where another op reads one, it becomes a net tensor made by one
// gather (OpKind::Reshape with Op::pixel_source: a DRAM view loaded in strided boxes;
// docs/scheduler-transformers.md "Pixel gathers"). GraphConverter: scheduler/from_ir_converter.hpp.
#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/from_ir_converter.hpp"
#include "scheduler/layout_view.hpp"
#include "scheduler/pixel_gather.hpp"

namespace tessel::sched::detail {

namespace {

int64_t pixel_count(const ir::Shape& shape, int64_t channel_axis) {
  int64_t n = 1;
  for (size_t a = 0; a < shape.size(); ++a)
    if (static_cast<int64_t>(a) != channel_axis) n *= shape[a];
  return n;
}

int64_t axis_of(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// Per axis of `shape`, the step between its pixels in pixel order (row-major over every axis
// but `channel_axis`, whose entry is 0).
std::vector<int64_t> pixel_strides(const ir::Shape& shape, int64_t channel_axis) {
  std::vector<int64_t> stride(shape.size(), 0);
  int64_t step = 1;
  for (size_t a = shape.size(); a-- > 0;) {
    if (static_cast<int64_t>(a) == channel_axis) continue;
    stride[a] = step;
    step *= shape[a];
  }
  return stride;
}

bool is_identity(const std::vector<int64_t>& source) {
  for (size_t p = 0; p < source.size(); ++p)
    if (source[p] != static_cast<int64_t>(p)) return false;
  return true;
}

// The pixels of a view whose pixel j (a multi-index over `dims`, row-major) is pixel
// `offset + sum_a j[a] * stride[a]` of a view with sources `source`: a Transpose's (strides
// permuted) and a Slice's (offset at its starts, strides times its steps) one walk.
std::vector<int64_t> affine_pixels(const std::vector<int64_t>& source,
                                   const std::vector<int64_t>& dims, int64_t offset,
                                   const std::vector<int64_t>& stride) {
  int64_t total = 1;
  for (int64_t n : dims) total *= n;
  std::vector<int64_t> out, j(dims.size(), 0);
  out.reserve(static_cast<size_t>(total));
  for (int64_t p = 0; p < total; ++p) {
    int64_t i = offset;
    for (size_t a = 0; a < dims.size(); ++a) i += j[a] * stride[a];
    out.push_back(source[static_cast<size_t>(i)]);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++j[a] < dims[a]) break;
      j[a] = 0;
    }
  }
  return out;
}

// The net shape of an IR shape with its channels at `channel_axis`, when it has one: ranks 2 to
// 4, at most two pixel axes (a 3-D [B, S, d] being B * S rows).
std::optional<Shape3> view_net_shape(const ir::Shape& shape, int64_t channel_axis) {
  if (shape.size() < 2 || shape.size() > 4) return std::nullopt;
  auto s = activation_shape(shape, channel_axis);
  if (!s.ok()) return std::nullopt;
  return s.value();
}

/// The net shape of a view with its channels last that view_net_shape cannot store, read
/// without its pixel axes of size 1 (a bidirectional recurrence's [seq, batch 1, dirs,
/// hidden]: seq * dirs token rows), where that leaves one or two pixel axes.
std::optional<Shape3> squeezed_net_shape(const ir::Shape& shape, int64_t channel_axis) {
  ir::Shape squeezed;
  int64_t axis = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) == channel_axis)
      axis = static_cast<int64_t>(squeezed.size());
    else if (shape[i] == 1)
      continue;
    squeezed.push_back(shape[i]);
  }
  if (squeezed.size() == shape.size() || squeezed.size() < 2 || squeezed.size() > 3 ||
      axis != static_cast<int64_t>(squeezed.size()) - 1)
    return std::nullopt;
  auto s = activation_shape(squeezed, axis);
  if (!s.ok()) return std::nullopt;
  return s.value();
}

}  // namespace

// The base and channel axis of IR tensor `name`'s pixel view, without its source list (what the
// *_applies tests read, for every Reshape, Transpose, Slice and Concat).
std::optional<GraphConverter::PixelHead> GraphConverter::pixel_head(const std::string& name) const {
  if (auto it = pixel_views_.find(name); it != pixel_views_.end())
    return PixelHead{it->second.base, it->second.channel_axis};
  const auto t = tensor_of_.find(name);
  if (t == tensor_of_.end() || views_.count(name) || is_head_pixels(name)) return std::nullopt;
  const ir::Shape& shape = graph_.tensor(name).shape;
  const int64_t axis = channel_axis_of(name);
  if (shape.size() < 2 || axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return std::nullopt;
  const Shape3 s = net_.tensor(t->second).shape;
  if (s.c != shape[static_cast<size_t>(axis)] || s.h * s.w != pixel_count(shape, axis))
    return std::nullopt;
  // A gather's output is its input's pixels in the gather's order: one gather, never two.
  const Op* gather = gather_of(net_, t->second);
  return PixelHead{gather != nullptr ? gather->inputs[0] : t->second, axis};
}

std::optional<GraphConverter::PixelView> GraphConverter::pixel_view(const std::string& name) const {
  if (auto it = pixel_views_.find(name); it != pixel_views_.end()) return it->second;
  const auto head = pixel_head(name);
  if (!head) return std::nullopt;
  PixelView v;
  v.base = head->base;
  v.channel_axis = head->channel_axis;
  const int tensor = tensor_of_.at(name);
  if (const Op* gather = gather_of(net_, tensor)) {
    v.source = gather->pixel_source;
  } else {
    v.source.resize(static_cast<size_t>(net_.tensor(tensor).shape.h * net_.tensor(tensor).shape.w));
    std::iota(v.source.begin(), v.source.end(), int64_t{0});
  }
  return v;
}

// A Reshape that keeps the channels whole, the same number of elements before them, and so the
// pixels' order: of a pixel view, or into a shape with more than two pixel axes (a window
// partition's first step), which no net tensor has.
bool GraphConverter::pixel_reshape_applies(const ir::Op& op) const {
  const auto v = pixel_head(op.inputs[0]);
  if (!v) return false;
  const ir::Shape& out = graph_.tensor(op.outputs[0]).shape;
  const auto axis = reshape_channel_axis(graph_.tensor(op.inputs[0]).shape, v->channel_axis, out);
  if (!axis) return false;
  return pixel_views_.count(op.inputs[0]) || !view_net_shape(out, *axis);
}

// A Transpose of a pixel view (the channel axis goes where the permutation puts it).
bool GraphConverter::pixel_transpose_applies(const ir::Op& op) const {
  const auto& perm = op.get_ints("perm");
  return perm.size() == graph_.tensor(op.inputs[0]).shape.size() &&
         pixel_head(op.inputs[0]).has_value();
}

Status GraphConverter::add_pixel_reshape(const ir::Op& op) {
  PixelView v = *pixel_view(op.inputs[0]);
  v.channel_axis = *reshape_channel_axis(graph_.tensor(op.inputs[0]).shape, v.channel_axis,
                                         graph_.tensor(op.outputs[0]).shape);
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

Status GraphConverter::add_pixel_transpose(const ir::Op& op) {
  PixelView v = *pixel_view(op.inputs[0]);
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const auto& perm = op.get_ints("perm");
  if (perm.size() != in.size())
    return fail(describe_op(op) + ": perm " + ir::shape_string(ir::Shape(perm)) + " of " +
                ir::shape_string(in));
  const std::vector<int64_t> in_stride = pixel_strides(in, v.channel_axis);
  std::vector<int64_t> out_dims, stride;
  int64_t channel_axis = -1;
  for (size_t j = 0; j < perm.size(); ++j) {
    const auto a = static_cast<size_t>(axis_of(perm[j], in.size()));
    if (static_cast<int64_t>(a) == v.channel_axis) {
      channel_axis = static_cast<int64_t>(j);
      continue;
    }
    out_dims.push_back(in[a]);
    stride.push_back(in_stride[a]);
  }
  std::vector<int64_t> source = affine_pixels(v.source, out_dims, 0, stride);
  v.source = std::move(source);
  v.channel_axis = channel_axis;
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

// A Slice of pixel axes only, with positive steps (torch.roll's halves, patch merging's
// x[:, 0::2, 1::2], a crop of an NCHW map), of a pixel view or of a map of rank 4 or more.
bool GraphConverter::pixel_slice_applies(const ir::Op& op) const {
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const auto v = pixel_head(op.inputs[0]);
  if (!v) return false;
  const auto& axes = op.get_ints("axes");
  const auto& steps = op.get_ints("steps");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axis_of(axes[i], in.size()) == v->channel_axis || steps[i] <= 0) return false;
  return pixel_views_.count(op.inputs[0]) || in.size() >= 4;
}

// A Concat along a pixel axis of pixel views of one base, one of them a view in flight
// (torch.roll's halves joined the other way round).
bool GraphConverter::pixel_concat_applies(const ir::Op& op) const {
  const size_t rank = graph_.tensor(op.outputs[0]).shape.size();
  const int64_t axis = axis_of(op.get_int("axis"), rank);
  int base = -1;
  int64_t channel_axis = -1;
  bool in_flight = false;
  for (const std::string& in : op.inputs) {
    const auto v = pixel_head(in);
    if (!v || (base >= 0 && (v->base != base || v->channel_axis != channel_axis)) ||
        v->channel_axis == axis)
      return false;
    base = v->base;
    channel_axis = v->channel_axis;
    in_flight = in_flight || pixel_views_.count(in) > 0;
  }
  return in_flight;
}

Status GraphConverter::add_pixel_slice(const ir::Op& op) {
  PixelView v = *pixel_view(op.inputs[0]);
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const auto& starts = op.get_ints("starts");
  const auto& ends = op.get_ints("ends");
  const auto& axes = op.get_ints("axes");
  const auto& steps = op.get_ints("steps");
  std::vector<int64_t> first(in.size(), 0), step(in.size(), 1), count(in.begin(), in.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<size_t>(axis_of(axes[i], in.size()));
    const int64_t b = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + in[a] : starts[i], 0, in[a]);
    const int64_t e = std::clamp<int64_t>(ends[i] < 0 ? ends[i] + in[a] : ends[i], 0, in[a]);
    first[a] = b;
    step[a] = steps[i];
    count[a] = e > b ? (e - b + steps[i] - 1) / steps[i] : 0;
  }
  const std::vector<int64_t> in_stride = pixel_strides(in, v.channel_axis);
  std::vector<int64_t> dims, stride;
  int64_t offset = 0;
  for (size_t a = 0; a < in.size(); ++a) {
    if (static_cast<int64_t>(a) == v.channel_axis) continue;
    offset += first[a] * in_stride[a];
    dims.push_back(count[a]);
    stride.push_back(step[a] * in_stride[a]);
  }
  std::vector<int64_t> source = affine_pixels(v.source, dims, offset, stride);
  v.source = std::move(source);
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

Status GraphConverter::add_pixel_concat(const ir::Op& op) {
  const ir::Shape& out = graph_.tensor(op.outputs[0]).shape;
  const auto axis = static_cast<size_t>(axis_of(op.get_int("axis"), out.size()));
  std::vector<PixelView> views;
  for (const std::string& in : op.inputs) views.push_back(*pixel_view(in));
  const auto channel_axis = static_cast<size_t>(views.front().channel_axis);
  // Output pixel p: row-major over the outer pixel axes (before `axis`), then `axis` and the
  // inner ones; each input contributes its own extent along `axis` in turn.
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a)
    if (a != channel_axis) outer *= out[a];
  for (size_t a = axis + 1; a < out.size(); ++a)
    if (a != channel_axis) inner *= out[a];
  PixelView v;
  v.base = views.front().base;
  v.channel_axis = views.front().channel_axis;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < views.size(); ++k) {
      const int64_t extent = graph_.tensor(op.inputs[k]).shape[axis];
      const auto& s = views[k].source;
      const auto from = s.begin() + o * extent * inner;
      v.source.insert(v.source.end(), from, from + extent * inner);
    }
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

// Whether `op` carries a pixel view on (a Reshape, Transpose, Slice or Concat of one that keeps
// its channels last) rather than reading it.
bool GraphConverter::continues_pixel_view(const ir::Op& op) const {
  switch (op.kind) {
    case ir::OpKind::Reshape:
      return pixel_reshape_applies(op);
    case ir::OpKind::Transpose:
      return pixel_transpose_applies(op);
    case ir::OpKind::Slice:
      return pixel_slice_applies(op);
    case ir::OpKind::Concat:
      return pixel_concat_applies(op);
    default:
      return false;
  }
}

// The ops that start or carry a pixel view: every one continues_pixel_view names, but a
// Transpose of a tensor that is no view yet (the layout transposes come first).
bool GraphConverter::takes_pixel_view(const ir::Op& op) const {
  if (op.kind == ir::OpKind::Transpose && !pixel_views_.count(op.inputs[0])) return false;
  return continues_pixel_view(op);
}

Status GraphConverter::add_pixel_op(const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Reshape:
      return add_pixel_reshape(op);
    case ir::OpKind::Transpose:
      return add_pixel_transpose(op);
    case ir::OpKind::Slice:
      return add_pixel_slice(op);
    default:
      return add_pixel_concat(op);
  }
}

// Whether `op`'s output keeps its input's pixel grid: an op that reads each pixel alike, a
// Linear, or a Reshape around a Linear that keeps the channels last.
bool GraphConverter::keeps_grid(const ir::Op& op) const {
  if (reads_pixels_alike(op.kind) || op.kind == ir::OpKind::Gemm || op.kind == ir::OpKind::MatMul)
    return true;
  if (op.kind != ir::OpKind::Reshape) return false;
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const ir::Shape& out = graph_.tensor(op.outputs[0]).shape;
  return !in.empty() && !out.empty() && in.back() == out.back() && out.size() <= 4;
}

// The grid of a stored tensor of `s`'s channels and pixel count, not token rows, that IR tensor
// `name` meets in an elementwise Add or Mul, following its consumers through the ops that keep
// its grid (Swin's window reverse meets its shortcut [1, H, W, C] at once, swin_v2's after its
// post-norm); nullopt when it meets none.
std::optional<Shape3> GraphConverter::grid_met_downstream(const std::string& name, Shape3 s) const {
  std::vector<std::string> frontier{name};
  std::set<std::string, std::less<>> seen;
  while (!frontier.empty() && seen.size() < 256) {
    const std::string t = frontier.back();
    frontier.pop_back();
    if (!seen.insert(t).second) continue;
    for (const ir::Use& use : graph_.consumers(t)) {
      const ir::Op& op = graph_.op(use.op);
      if (op.kind == ir::OpKind::Add || op.kind == ir::OpKind::Sub || op.kind == ir::OpKind::Mul)
        for (const std::string& other : op.inputs)
          if (auto it = tensor_of_.find(other); other != t && it != tensor_of_.end()) {
            const Shape3 o = net_.tensor(it->second).shape;
            if (o.c == s.c && o.h * o.w == s.h * s.w && o.w > 1) return o;
          }
      if (keeps_grid(op))
        for (const std::string& out : op.outputs) frontier.push_back(out);
    }
  }
  return std::nullopt;
}

// The pixel views `op` reads become net tensors: the base itself where the order and the grid
// are its own, else one gather of it. A view with its channels last, or an NCHW map's (rank 4,
// axis 1), of at most two pixel axes is stored. An NCHW map keeps its image grid (convs read
// it). A rank-4 [1, A, B, C] with its channels last, the same bytes in any grid, takes the grid
// of a stored map it meets downstream in an Add or Mul (Swin's window reverse and its shortcut
// [1, H, W, C]); else, read by an op that keeps its grid (a norm, a Linear), A * B token rows
// (MaxViT's windows [1, G, P, C], which head views read as G sequences of P rows); else its
// image grid A x B (patch merging's Concat).
Status GraphConverter::materialize_pixel_views(const ir::Op& op) {
  if (continues_pixel_view(op)) return {};
  for (const std::string& name : op.inputs) {
    const auto it = pixel_views_.find(name);
    if (name.empty() || it == pixel_views_.end() || tensor_of_.count(name)) continue;
    const PixelView& v = it->second;
    const ir::Shape& shape = graph_.tensor(name).shape;
    const auto rank = static_cast<int64_t>(shape.size());
    std::optional<Shape3> s;
    if (v.channel_axis == rank - 1 || (rank == 4 && v.channel_axis == 1))
      s = view_net_shape(shape, v.channel_axis);
    if (!s && v.channel_axis == rank - 1) s = squeezed_net_shape(shape, v.channel_axis);
    if (!s)
      return fail(describe_op(op) + " reads '" + name + "' " + ir::shape_string(shape) +
                  ", a reordering of the pixels of '" + net_.tensor(v.base).name +
                  "' with its channels at axis " + std::to_string(v.channel_axis) +
                  "; the accelerator path stores such a reordering only as a tensor of at most " +
                  "two pixel axes with its channels last, or an NCHW map");
    if (rank == 4 && v.channel_axis == 3) {
      if (const auto met = grid_met_downstream(name, *s))
        s = *met;
      else if (keeps_grid(op))
        s = Shape3{s->c, s->h * s->w, 1};
    }
    if (v.channel_axis != default_channel_axis(shape.size())) channel_axis_[name] = v.channel_axis;
    const bool identity = is_identity(v.source);
    if (identity && net_.tensor(v.base).shape == *s) {
      tensor_of_[name] = v.base;
      continue;
    }
    Op gather;
    gather.name = pixel_makers_.at(name);
    gather.type = identity ? "Reshape" : "PixelGather";
    gather.kind = OpKind::Reshape;
    gather.inputs = {v.base};
    gather.output = net_.add_tensor(name, *s);
    if (!identity) gather.pixel_source = v.source;
    tensor_of_[name] = gather.output;
    net_.add_op(std::move(gather));
  }
  return {};
}

// A graph output still in flight as a pixel view has no bytes of its own to be read from.
Status GraphConverter::check_pixel_outputs() const {
  for (const std::string& o : graph_.outputs())
    if (pixel_views_.count(o) && !tensor_of_.count(o))
      return fail("graph output '" + o + "' (made by op '" + pixel_makers_.at(o) +
                  "') is a reordering of the pixels of '" +
                  net_.tensor(pixel_views_.at(o).base).name +
                  "'; the accelerator path stores such a reordering only where an op reads it");
  return {};
}

}  // namespace tessel::sched::detail
