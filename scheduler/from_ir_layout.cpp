// Graph IR -> Net, layout views: IR tensors whose channels are not at their rank's default
// axis, and the Transposes and Reshapes that only move or keep that axis
// (docs/scheduler-transformers.md "Layout views"). GraphConverter: scheduler/from_ir_converter.hpp.
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/unary.hpp"
#include "scheduler/from_ir_converter.hpp"
#include "scheduler/layout_view.hpp"

namespace tessel::sched::detail {

// ---- Layout views (docs/scheduler-transformers.md "Layout views")
// ------------------------------------ Every activation is stored pixel-major with its channels
// innermost, whatever the IR's axis order; `channel_axis_` records the IR tensors whose channels
// are not at their rank's default axis (an NCHW tensor permuted to NHWC, a conv output flattened to
// [1, C, H*W]).

int64_t GraphConverter::channel_axis_of(const std::string& name) const {
  if (auto it = channel_axis_.find(name); it != channel_axis_.end()) return it->second;
  return default_channel_axis(graph_.tensor(name).shape.size());
}

// The net shape of IR tensor `name`: from its layout, or, for an output of an op that keeps
// its input's pixel grid (`grid_hint_`), that grid when channels and pixel count agree.
Result<Shape3> GraphConverter::net_shape(const std::string& name, const std::string& op_name) {
  const auto it = channel_axis_.find(name);
  Result<Shape3> s = activation_shape(
      graph_.tensor(name).shape,
      it == channel_axis_.end() ? std::nullopt : std::optional<int64_t>(it->second));
  if (!s.ok()) return fail("op '" + op_name + "': tensor '" + name + "': " + s.reason());
  if (grid_hint_ && grid_hint_->c == s.value().c &&
      grid_hint_->h * grid_hint_->w == s.value().h * s.value().w)
    return *grid_hint_;
  return s;
}

bool reads_pixels_alike(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::LayerNormalization:
    case ir::OpKind::RMSNormalization:
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Relu:
    case ir::OpKind::Clip:
    case ir::OpKind::Quantize:
    case ir::OpKind::Dequantize:
    case ir::OpKind::Requantize:
    case ir::OpKind::Scale:
      return true;
    default:
      return ir::is_unary_function(kind);
  }
}

// Ops that read every pixel's channels alike keep their input's layout and pixel grid; any
// other op reading a tensor in a recorded layout is refused, naming both.
Status GraphConverter::carry_layout(const ir::Op& op) {
  grid_hint_.reset();
  const bool views = op.kind == ir::OpKind::Transpose || op.kind == ir::OpKind::Reshape;
  const bool elementwise = reads_pixels_alike(op.kind);
  // A Concat along the channel axis keeps every pixel where it is (patch merging's four maps).
  const auto channel_concat = [&](const std::string& in, int64_t axis) {
    if (op.kind != ir::OpKind::Concat) return false;
    const auto rank = static_cast<int64_t>(graph_.tensor(in).shape.size());
    return (op.get_int("axis") < 0 ? op.get_int("axis") + rank : op.get_int("axis")) == axis;
  };
  for (const std::string& in : op.inputs) {
    if (in.empty() || graph_.tensor(in).constant || views) continue;
    if (elementwise && !grid_hint_)
      if (auto it = tensor_of_.find(in); it != tensor_of_.end())
        grid_hint_ = net_.tensor(it->second).shape;
    auto it = channel_axis_.find(in);
    if (it == channel_axis_.end()) continue;
    if (!elementwise && !channel_concat(in, it->second))
      return fail(describe_op(op) + " reads '" + in + "' with its channels at axis " +
                  std::to_string(it->second) + " (a layout view); only elementwise ops and " +
                  "norms over the channels read such a tensor on the accelerator path");
    for (const std::string& o : op.outputs)
      if (graph_.tensor(o).shape.size() == graph_.tensor(in).shape.size())
        channel_axis_[o] = it->second;
  }
  return {};
}

// IR tensor `name` as net tensor `x` with its channels at `axis`: the same bytes, so the same
// net tensor when the channels and the pixel count agree (its grid stays the producer's).
Status GraphConverter::alias_layout(const ir::Op& op, int x, const std::string& name,
                                    int64_t axis) {
  const auto& shape = graph_.tensor(name).shape;
  auto s = layout_shape(shape, axis);
  if (!s.ok()) return fail(describe_op(op) + ": " + s.reason());
  const Shape3 have = net_.tensor(x).shape;
  if (s.value().c != have.c || s.value().h * s.value().w != have.h * have.w)
    return fail(describe_op(op) + ": " + ir::shape_string(shape) + " is not a view of '" +
                net_.tensor(x).name + "'");
  // An NCHW map (convs and pools read its grid) of a tensor stored as token rows: the same
  // bytes on its image grid, a Reshape view.
  if (shape.size() == 4 && axis == 1 && !(have == s.value())) x = reshape_view(x, name, s.value());
  tensor_of_[name] = x;
  if (axis != default_channel_axis(shape.size()))
    channel_axis_[name] = axis;
  else
    channel_axis_.erase(name);
  return {};
}

// A Transpose that only moves the channel axis (NCHW <-> NHWC, a conv output's [1, C, S] to
// tokens [1, S, C]): no op, no byte moved. One that reorders pixels is refused.
Status GraphConverter::add_layout_transpose(const ir::Op& op) {
  auto x = input_tensor(op, 0);
  if (!x.ok())
    return fail(describe_op(op) + ": a transpose of other than an activation or a head view");
  const auto& perm = op.get_ints("perm");
  const auto axis =
      transpose_channel_axis(graph_.tensor(op.inputs[0]).shape, channel_axis_of(op.inputs[0]),
                             std::vector<int64_t>(perm.begin(), perm.end()));
  if (!axis && pixel_transpose_applies(op)) return add_pixel_transpose(op);
  if (!axis)
    return fail(describe_op(op) + ": perm " + ir::shape_string(ir::Shape(perm)) + " of " +
                ir::shape_string(graph_.tensor(op.inputs[0]).shape) +
                " reorders pixels, which needs a data movement the accelerator path does not " +
                "have yet (only moving the channel axis is a layout view)");
  return alias_layout(op, x.value(), op.outputs[0], *axis);
}

// A Reshape that merges or splits pixel axes and keeps the channel axis whole, of a tensor in
// a recorded layout or into or out of rank 4 (a conv output's flatten, a Linear's unflatten
// to [1, H, W, C]); not a head split (the channel axis split in two).
bool GraphConverter::layout_reshape_applies(const ir::Op& op) const {
  const std::string& in = op.inputs[0];
  if (views_.count(in) || !tensor_of_.count(in)) return false;
  const auto& x = graph_.tensor(in).shape;
  const auto& y = graph_.tensor(op.outputs[0]).shape;
  if (channel_axis_.count(in)) return true;
  const auto axis = reshape_channel_axis(x, channel_axis_of(in), y);
  if (!axis || only_graph_output(op.outputs[0])) return false;
  return (x.size() == 4 && y.size() == 3) || (x.size() < 4 && y.size() == 4 && *axis == 3);
}

Status GraphConverter::add_layout_reshape(const ir::Op& op) {
  const auto axis =
      reshape_channel_axis(graph_.tensor(op.inputs[0]).shape, channel_axis_of(op.inputs[0]),
                           graph_.tensor(op.outputs[0]).shape);
  const ir::Shape& x = graph_.tensor(op.inputs[0]).shape;
  const ir::Shape& y = graph_.tensor(op.outputs[0]).shape;
  if (!axis && channel_axis_of(op.inputs[0]) == static_cast<int64_t>(x.size()) - 1 &&
      (y.size() == 2 || y.size() == 3) && !only_graph_output(op.outputs[0])) {
    // Channels last on both sides: the bytes are the IR order either way (pixel-major,
    // channels innermost), so merging pixels into channels ([seq, 1, dirs, hidden] to [seq, 1,
    // dirs * hidden]) or splitting them out is a Reshape view onto token rows.
    const int64_t c = y.back();
    tensor_of_[op.outputs[0]] = reshape_view(tensor_of_.at(op.inputs[0]), op.outputs[0],
                                             Shape3{c, ir::element_count(y) / c, 1});
    channel_axis_.erase(op.outputs[0]);
    return {};
  }
  if (!axis)
    return fail(describe_op(op) + ": a reshape of '" + op.inputs[0] + "' (channels at axis " +
                std::to_string(channel_axis_of(op.inputs[0])) + ") to " +
                ir::shape_string(graph_.tensor(op.outputs[0]).shape) +
                " that splits or mixes its channels");
  return alias_layout(op, tensor_of_.at(op.inputs[0]), op.outputs[0], *axis);
}

}  // namespace tessel::sched::detail
