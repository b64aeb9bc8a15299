// Graph IR -> Net, pixel views: Reshapes and Transposes that keep an activation's channels last
// but reorder its pixels (Swin's window partition [1, H, W, C] -> [nW, ws * ws, C] through
// [1, H / ws, ws, W / ws, ws, C], and its reverse). Each IR tensor of such a chain is its base
// net tensor's pixels in another order, one source pixel per pixel; where another op reads one,
// it becomes a net tensor made by one gather (OpKind::Reshape with Op::pixel_source: a DRAM
// view loaded in strided boxes; docs/scheduler.md "Pixel gathers"). GraphConverter:
// scheduler/from_ir_converter.hpp.
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/from_ir_converter.hpp"
#include "scheduler/layout_view.hpp"

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
  std::vector<int64_t> in_stride(axes, 1), out_dims(axes);
  for (size_t a = axes; a-- > 1;) in_stride[a - 1] = in_stride[a] * in[a];
  for (size_t a = 0; a < axes; ++a) out_dims[a] = in[static_cast<size_t>(perm[a])];
  // Output pixel j (row-major over out_dims) is input pixel sum_a j[a] * in_stride[perm[a]].
  std::vector<int64_t> source(v.source.size()), j(axes, 0);
  for (size_t p = 0; p < source.size(); ++p) {
    int64_t i = 0;
    for (size_t a = 0; a < axes; ++a) i += j[a] * in_stride[static_cast<size_t>(perm[a])];
    source[p] = v.source[static_cast<size_t>(i)];
    for (size_t a = axes; a-- > 0;) {
      if (++j[a] < out_dims[a]) break;
      j[a] = 0;
    }
  }
  v.source = std::move(source);
  pixel_views_[op.outputs[0]] = std::move(v);
  pixel_makers_[op.outputs[0]] = op.name;
  return {};
}

// Whether `op` carries a pixel view on (a Reshape or Transpose of one that keeps its channels
// last) rather than reading it.
bool GraphConverter::continues_pixel_view(const ir::Op& op) const {
  if (op.kind == ir::OpKind::Reshape) return pixel_reshape_applies(op);
  if (op.kind == ir::OpKind::Transpose) return pixel_transpose_applies(op);
  return false;
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

}  // namespace tessel::sched::detail
