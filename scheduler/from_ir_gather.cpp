// Graph IR -> Net, pixel views: Reshapes and Transposes that keep an activation's channels last
// but reorder its pixels (Swin's window partition [1, H, W, C] -> [nW, ws * ws, C] through
// [1, H / ws, ws, W / ws, ws, C], and its reverse). Each IR tensor of such a chain is its base
// net tensor's pixels in another order, one source pixel per pixel; where another op reads one,
// it becomes a net tensor made by one gather (OpKind::Reshape with Op::pixel_source: a DRAM
// view loaded in strided boxes; docs/scheduler.md "Pixel gathers"). GraphConverter:
// scheduler/from_ir_converter.hpp.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/from_ir_converter.hpp"
#include "scheduler/layout_view.hpp"
#include "scheduler/pixel_gather.hpp"

namespace tessel::sched::detail {

namespace {

int64_t pixel_count(const ir::Shape& shape) {
  int64_t n = 1;
  for (size_t a = 0; a + 1 < shape.size(); ++a) n *= shape[a];
  return n;
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

// The net shape of an IR shape with its channels last, when it has one: ranks 2 to 4, at most
// two pixel axes (a 3-D [B, S, d] being B * S rows).
std::optional<Shape3> channels_last_shape(const ir::Shape& shape) {
  if (shape.size() < 2 || shape.size() > 4) return std::nullopt;
  auto s = activation_shape(
      shape, shape.size() == 4 ? std::optional<int64_t>(3) : std::optional<int64_t>());
  if (!s.ok()) return std::nullopt;
  return s.value();
}

}  // namespace

std::optional<GraphConverter::PixelView> GraphConverter::pixel_view(const std::string& name) const {
  if (auto it = pixel_views_.find(name); it != pixel_views_.end()) return it->second;
  const auto t = tensor_of_.find(name);
  if (t == tensor_of_.end() || views_.count(name) || is_head_pixels(name)) return std::nullopt;
  const ir::Shape& shape = graph_.tensor(name).shape;
  if (shape.size() < 2 || channel_axis_of(name) != static_cast<int64_t>(shape.size()) - 1)
    return std::nullopt;
  const Shape3 s = net_.tensor(t->second).shape;
  if (s.c != shape.back() || s.h * s.w != pixel_count(shape)) return std::nullopt;
  PixelView v;
  v.base = t->second;
  v.source.resize(static_cast<size_t>(pixel_count(shape)));
  std::iota(v.source.begin(), v.source.end(), int64_t{0});
  // A gather's output is its input's pixels in the gather's order: one gather, never two.
  if (const Op* gather = gather_of(net_, t->second)) {
    v.base = gather->inputs[0];
    v.source = gather->pixel_source;
  }
  return v;
}

// A Reshape that keeps the channels (the last axis) and so the pixels' order: of a pixel view,
// or into a shape with more than two pixel axes (the window partition's first step), which no
// net tensor has.
bool GraphConverter::pixel_reshape_applies(const ir::Op& op) const {
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const ir::Shape& out = graph_.tensor(op.outputs[0]).shape;
  if (in.empty() || out.empty() || in.back() != out.back()) return false;
  if (pixel_views_.count(op.inputs[0])) return true;
  return !channels_last_shape(out) && pixel_view(op.inputs[0]).has_value();
}

// A Transpose that keeps the channels last and permutes the pixel axes.
bool GraphConverter::pixel_transpose_applies(const ir::Op& op) const {
  const auto& perm = op.get_ints("perm");
  if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1) return false;
  return pixel_view(op.inputs[0]).has_value();
}

Status GraphConverter::add_pixel_reshape(const ir::Op& op) {
  pixel_views_[op.outputs[0]] = *pixel_view(op.inputs[0]);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

Status GraphConverter::add_pixel_transpose(const ir::Op& op) {
  PixelView v = *pixel_view(op.inputs[0]);
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const auto& perm = op.get_ints("perm");
  const size_t axes = in.size() - 1;
  if (perm.size() != in.size())
    return fail(describe_op(op) + ": perm " + ir::shape_string(ir::Shape(perm)) + " of " +
                ir::shape_string(in));
  std::vector<int64_t> in_stride(axes, 1), out_dims(axes), stride(axes);
  for (size_t a = axes; a-- > 1;) in_stride[a - 1] = in_stride[a] * in[a];
  for (size_t a = 0; a < axes; ++a) {
    out_dims[a] = in[static_cast<size_t>(perm[a])];
    stride[a] = in_stride[static_cast<size_t>(perm[a])];
  }
  std::vector<int64_t> source = affine_pixels(v.source, out_dims, 0, stride);
  v.source = std::move(source);
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

// A Slice of pixel axes only, with positive steps (torch.roll's halves, patch merging's
// x[:, 0::2, 1::2]), of a pixel view or of a map with its channels last.
bool GraphConverter::pixel_slice_applies(const ir::Op& op) const {
  const ir::Shape& in = graph_.tensor(op.inputs[0]).shape;
  const auto& axes = op.get_ints("axes");
  const auto& steps = op.get_ints("steps");
  const auto rank = static_cast<int64_t>(in.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis >= rank - 1 || steps[i] <= 0) return false;
  }
  if (pixel_views_.count(op.inputs[0])) return true;
  return in.size() >= 4 && pixel_view(op.inputs[0]).has_value();
}

// A Concat along a pixel axis of pixel views of one base, one of them a view in flight
// (torch.roll's halves joined the other way round).
bool GraphConverter::pixel_concat_applies(const ir::Op& op) const {
  const auto rank = static_cast<int64_t>(graph_.tensor(op.outputs[0]).shape.size());
  const int64_t axis = op.get_int("axis") < 0 ? op.get_int("axis") + rank : op.get_int("axis");
  if (axis >= rank - 1) return false;
  int base = -1;
  bool in_flight = false;
  for (const std::string& in : op.inputs) {
    const auto v = pixel_view(in);
    if (!v || (base >= 0 && v->base != base)) return false;
    base = v->base;
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
  const size_t dims = in.size() - 1;
  std::vector<int64_t> first(dims, 0), step(dims, 1), count(in.begin(), in.end() - 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<size_t>(axes[i] < 0 ? axes[i] + int64_t(in.size()) : axes[i]);
    const int64_t b = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + in[a] : starts[i], 0, in[a]);
    const int64_t e = std::clamp<int64_t>(ends[i] < 0 ? ends[i] + in[a] : ends[i], 0, in[a]);
    first[a] = b;
    step[a] = steps[i];
    count[a] = e > b ? (e - b + steps[i] - 1) / steps[i] : 0;
  }
  std::vector<int64_t> in_stride(dims, 1), stride(dims);
  for (size_t a = dims; a-- > 1;) in_stride[a - 1] = in_stride[a] * in[a];
  int64_t offset = 0;
  for (size_t a = 0; a < dims; ++a) {
    offset += first[a] * in_stride[a];
    stride[a] = step[a] * in_stride[a];
  }
  std::vector<int64_t> source = affine_pixels(v.source, count, offset, stride);
  v.source = std::move(source);
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

Status GraphConverter::add_pixel_concat(const ir::Op& op) {
  const ir::Shape& out = graph_.tensor(op.outputs[0]).shape;
  const auto rank = static_cast<int64_t>(out.size());
  const auto axis =
      static_cast<size_t>(op.get_int("axis") < 0 ? op.get_int("axis") + rank : op.get_int("axis"));
  // Output pixel p: row-major over the outer axes (before `axis`), then `axis` and the inner
  // ones; each input contributes its own extent along `axis` in turn.
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= out[a];
  for (size_t a = axis + 1; a + 1 < out.size(); ++a) inner *= out[a];
  std::vector<PixelView> views;
  for (const std::string& in : op.inputs) views.push_back(*pixel_view(in));
  PixelView v;
  v.base = views.front().base;
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

// The pixel views `op` reads become net tensors: the base itself where the order and the grid
// are its own, else one gather of it.
Status GraphConverter::materialize_pixel_views(const ir::Op& op) {
  if (continues_pixel_view(op)) return {};
  for (const std::string& name : op.inputs) {
    const auto it = pixel_views_.find(name);
    if (name.empty() || it == pixel_views_.end() || tensor_of_.count(name)) continue;
    const PixelView& v = it->second;
    const ir::Shape& shape = graph_.tensor(name).shape;
    const auto s = channels_last_shape(shape);
    if (!s)
      return fail(describe_op(op) + " reads '" + name + "' " + ir::shape_string(shape) +
                  ", a reordering of the pixels of '" + net_.tensor(v.base).name +
                  "' with more than two pixel axes; the accelerator path stores such a " +
                  "reordering only as a tensor of at most two pixel axes, channels last");
    if (shape.size() == 4) channel_axis_[name] = 3;
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
