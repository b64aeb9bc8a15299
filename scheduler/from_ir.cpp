// Graph IR -> scheduler Net: shapes from the IR, weights and MACs from the ops'
// attributes. Here the per-kind rules of the CNN kinds (Input, Conv, BatchNormalization, Gemm,
// activation folding), Mul by a constant, the generic path and net_from_graph; the transformer
// kinds in from_ir_transformer.cpp, layout views in from_ir_layout.cpp (GraphConverter:
// scheduler/from_ir_converter.hpp).
#include "scheduler/from_ir.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/passes/fold_constant_adds.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/passes/split_packed_heads.hpp"
#include "compiler/passes/split_sliced_linear.hpp"
#include "scheduler/from_ir_converter.hpp"
#include "scheduler/from_ir_shapes.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/layout_view.hpp"

namespace tessel::sched {

namespace detail {

Status GraphConverter::add(const ir::Op& op) {
  if (auto s = materialize_pixel_views(op); !s.ok()) return s;
  if (takes_pixel_view(op)) return add_pixel_op(op);
  if (auto s = carry_layout(op); !s.ok()) return s;
  Op out;
  out.name = op.name;
  out.type = std::string(ir::to_string(op.kind));
  switch (op.kind) {
    case ir::OpKind::Input:
      return add_input(op, std::move(out));
    case ir::OpKind::Conv:
      return add_conv(op, std::move(out));
    case ir::OpKind::BatchNormalization:
      return add_batch_norm(op, std::move(out));
    case ir::OpKind::Gemm:
      return add_gemm(op, std::move(out));
    case ir::OpKind::Mul:
      if (scalar_constant_operand(op) >= 0) return add_scalar_mul(op, std::move(out));
      return add_mul(op, std::move(out));
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
      for (size_t c = 0; c < op.inputs.size() && op.inputs.size() == 2; ++c)
        if (graph_.tensor(op.inputs[c]).constant) {
          // add's subtract flag takes b (the constant) away from a: x - c, never c - x.
          if (op.kind == ir::OpKind::Sub && c == 0)
            return fail(describe_op(op) + ": a Sub from the constant '" + op.inputs[0] +
                        "' (c - x) is not supported by the accelerator path (x - c is)");
          return add_constant_operand(op, std::move(out), c);
        }
      break;
    case ir::OpKind::Gather:
      return add_gather(op, std::move(out));
    case ir::OpKind::Embedding:
      return add_embedding(op, std::move(out));
    case ir::OpKind::LayerNormalization:
    case ir::OpKind::RMSNormalization:
      return add_norm(op, std::move(out));
    case ir::OpKind::MatMul:
      return add_matmul(op, std::move(out));
    case ir::OpKind::Transpose:
      return add_transpose(op);
    case ir::OpKind::Expand:
      return add_expand(op);
    case ir::OpKind::Slice:
      return add_slice(op, std::move(out));
    case ir::OpKind::Split:
      if (graph_.tensor(op.inputs[0]).shape.size() <= 3) return add_split(op, std::move(out));
      break;
    case ir::OpKind::Reshape:
      if (head_split_5d(op)) return add_view_reshape(op);
      if (layout_reshape_applies(op)) return add_layout_reshape(op);
      if (views_.count(op.inputs[0]) || is_head_pixels(op.inputs[0]) ||
          (graph_.tensor(op.inputs[0]).shape.size() == 3 &&
           graph_.tensor(op.outputs[0]).shape.size() == 4) ||
          head_split_3d(op))
        return add_view_reshape(op);
      if (token_alias(op)) return {};
      break;
    case ir::OpKind::Softmax:
      if (!only_graph_output(op.outputs[0])) return add_row_softmax(op, std::move(out));
      break;
    case ir::OpKind::Concat:
      if (is_token_concat(op)) return add_row_concat(op, std::move(out));
      break;
    case ir::OpKind::Relu:
    case ir::OpKind::Clip: {
      bool folded = false;
      if (auto s = fold_activation(op, folded); !s.ok() || folded) return s;
      break;
    }
    default:
      break;
  }
  if (ir::is_unary_function(op.kind)) return add_lookup_table(op, std::move(out));
  if (auto s = generic_kind(op, out); !s.ok()) return s;
  return add_generic(op, std::move(out));
}

Net GraphConverter::take() {
  net_.finalize();
  for (int t : copied_outputs_) net_.tensors[static_cast<size_t>(t)].network_output = true;
  for (Tensor& t : net_.tensors) {
    if (!t.network_output || !graph_.has_tensor(t.name)) continue;
    const ir::Shape& shape = graph_.tensor(t.name).shape;
    t.ir_channels_last = shape.size() == 4 && channel_axis_of(t.name) == 3 &&
                         t.shape.c == shape[3] && t.shape.h * t.shape.w == shape[1] * shape[2];
  }
  return std::move(net_);
}

Result<int> GraphConverter::input_tensor(const ir::Op& op, size_t i) {
  auto it = tensor_of_.find(op.inputs[i]);
  if (it == tensor_of_.end()) {
    return fail("op '" + op.name + "': input '" + op.inputs[i] + "' is not an activation");
  }
  return it->second;
}

Result<int> GraphConverter::new_tensor(const std::string& name, const std::string& op_name) {
  const ir::Shape& ir_shape = graph_.tensor(name).shape;
  if (ir_shape.size() == 4 && ir_shape[0] == 1 && reads_head_pixels(op_name)) {
    // [1, H, S, X] computed from head pixels: X channels of pixel (s, h), as its inputs.
    const int t = net_.add_tensor(name, Shape3{ir_shape[3], ir_shape[2], ir_shape[1]});
    tensor_of_[name] = t;
    head_pixels_.insert(t);
    return t;
  }
  auto s = net_shape(name, op_name);
  if (!s.ok()) return s.failure();
  const int t = net_.add_tensor(name, s.value());
  tensor_of_[name] = t;
  return t;
}

// The net op that an activation `op` reading net tensor `x` folds into, or
// null: folding is on, the form is not Caffe, `x` is made by a Conv, Gemm or
// Add with no activation yet, the activation is its only reader and `x` is no
// graph output.
Op* GraphConverter::foldable_producer(const ir::Op& op, int x) {
  if (!features_.fold_activations || form_ == NetForm::Caffe) return nullptr;
  const std::string& pre = op.inputs[0];
  if (consumers_of(pre).size() != 1) return nullptr;
  for (const std::string& o : graph_.outputs())
    if (o == pre) return nullptr;
  for (auto it = net_.ops.rbegin(); it != net_.ops.rend(); ++it) {
    if (it->output != x) continue;
    const bool clamps =
        it->kind == OpKind::Conv || it->kind == OpKind::Gemm || it->kind == OpKind::Add;
    return clamps && it->activation.empty() ? &*it : nullptr;
  }
  return nullptr;
}

Status GraphConverter::add_input(const ir::Op& op, Op out) {
  out.kind = OpKind::Input;
  const ir::Tensor& x = graph_.tensor(op.outputs[0]);
  // Token ids (int32; only an Embedding reads them): 4 bytes a token, as the gather reads them.
  auto t = x.dtype == ir::DType::i32
               ? Result<int>(net_.add_tensor(
                     x.name, Shape3{4 / net_.activation_bytes, ir::element_count(x.shape), 1}))
               : new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  if (x.dtype == ir::DType::i32) tensor_of_[x.name] = t.value();
  out.output = t.value();
  network_inputs_.insert(t.value());
  net_.add_op(std::move(out));
  return {};
}

Status GraphConverter::add_conv(const ir::Op& op, Op out) {
  const int64_t wb = machine_.weight_bytes;
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  const auto geo = ir::window_geometry(op);
  out.kind = OpKind::Conv;
  out.inputs = {x.value()};
  out.window = {geo.kernel_h,   geo.kernel_w, geo.stride_h, geo.stride_w,   geo.dilation_h,
                geo.dilation_w, geo.pad_top,  geo.pad_left, geo.pad_bottom, geo.pad_right};
  out.groups = geo.group;
  const auto& w = graph_.tensor(op.inputs[1]).shape;  // OIHW
  const int64_t per_output = w[1] * w[2] * w[3];
  bool bias = op.inputs.size() > 2 && !op.inputs[2].empty();
  // Folding: a BatchNormalization that is this conv's only consumer becomes its bias (the
  // Caffe form has none left: net_from_graph lowers them to depthwise Convs first).
  std::string result = op.outputs[0];
  const auto uses = consumers_of(result);
  if (uses.size() == 1 && graph_.op(uses[0].op).kind == ir::OpKind::BatchNormalization) bias = true;
  auto t = new_tensor(result, op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  out.weight_bytes = w[0] * per_output * wb + (bias ? w[0] * kBiasBytes : 0);
  out.requant_table_bytes = w[0] * kRequantEntryBytes;
  out.macs = net_.tensor(out.output).shape.elements() * per_output;
  Tensor& in = net_.tensors[static_cast<size_t>(x.value())];
  if (features_.space_to_depth_stem && network_inputs_.count(x.value()) &&
      consumers_of(op.inputs[0]).size() == 1) {
    const Shape3 y = net_.tensor(out.output).shape;
    if (auto r = space_to_depth_rewrite(out.window, out.groups, in.shape, y.h, y.w,
                                        machine_.matrix_rows)) {
      out.window = r->first;
      out.space_to_depth = r->second;
      const int64_t f = r->second.factor;
      in.shape = Shape3{f * f * in.shape.c, in.shape.h / f, in.shape.w / f};
      in.space_to_depth = f;
      const int64_t taps = out.window.kernel_h * out.window.kernel_w;
      out.zero_weight_bytes = w[0] * (in.shape.c * taps - per_output) * wb;
      out.weight_bytes += out.zero_weight_bytes;  // stored and moved as the conv's
    }
  }
  net_.add_op(std::move(out));
  return {};
}

Status GraphConverter::add_batch_norm(const ir::Op& op, Op out) {
  const int64_t wb = machine_.weight_bytes;
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  const Shape3 s = net_.tensor(x.value()).shape;
  const auto producer = graph_.producer(op.inputs[0]);
  const bool folds = producer && graph_.op(*producer).kind == ir::OpKind::Conv &&
                     consumers_of(op.inputs[0]).size() == 1;
  if (folds) {  // the conv already produces the normalized tensor
    tensor_of_[op.outputs[0]] = x.value();
    return {};
  }
  // Caffe form never gets here: net_from_graph lowers its BatchNorms to depthwise Convs first.
  out.kind = OpKind::Eltwise;
  out.inputs = {x.value()};
  out.weight_bytes = 2 * s.c * wb;  // the folded scale and shift
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  net_.add_op(std::move(out));
  return {};
}

Status GraphConverter::add_gemm(const ir::Op& op, Op out) {
  const int64_t wb = machine_.weight_bytes;
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  out.kind = OpKind::Gemm;
  out.inputs = {x.value()};
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  if (net_.tensor(x.value()).shape.h > 1) return add_token_linear(op, std::move(out));
  const int64_t k = net_.tensor(x.value()).shape.elements();
  const int64_t n = net_.tensor(out.output).shape.c;
  const bool bias = op.inputs.size() > 2 && !op.inputs[2].empty();
  out.weight_bytes = k * n * wb + (bias ? n * kBiasBytes : 0);
  out.requant_table_bytes = n * kRequantEntryBytes;
  out.macs = k * n;
  net_.add_op(std::move(out));
  return {};
}

// A unary function (Sigmoid, HardSwish, Silu, ...): one Eltwise kind, run by table lookup
// (ISA `lut`, docs/codegen.md "Unary functions"). Its weights are the 256-entry table, of the
// output's element type; the quantized graph passes it as the op's constant second input.
// A global pool wider than the pool instruction's window runs as depthwise convs of all-one
// weights (docs/codegen.md): its weights are one DRAM pixel of ones, matrix_cols elements.
void GraphConverter::mark_pool_by_conv(const ir::Op& op, Op& out) const {
  // The pixels the pool reads: an NCHW map's H x W, or a sequence's S token rows x 1.
  auto in = activation_shape(graph_.tensor(op.inputs[0]).shape, std::nullopt);
  if (!in.ok() || (in.value().h <= kPoolWindowMax && in.value().w <= kPoolWindowMax)) return;
  out.pool_by_conv = true;
  out.weight_bytes = machine_.matrix_cols * net_.activation_bytes;
}

Status GraphConverter::add_lookup_table(const ir::Op& op, Op out) {
  const std::string what = "op '" + op.name + "' (" + std::string(ir::to_string(op.kind)) + ")";
  if (!machine_.lookup_table)
    return fail(what + " needs a vector unit with lookup tables (vector.lookup_table: true); " +
                "config '" + machine_.name + "' has none");
  if (net_.activation_bytes != 1)
    return fail(what + ": the lut instruction looks up 8-bit codes; " +
                std::to_string(8 * net_.activation_bytes) +
                "-bit activations (interpolated tables) are not supported yet");
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  out.kind = OpKind::Eltwise;
  out.lookup_table = true;
  out.inputs = {x.value()};
  out.weight_bytes = 256 * net_.activation_bytes;
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  net_.add_op(std::move(out));
  return {};
}

// Mul of two activations, equal-shaped or the second one value per channel (C x 1 x 1, an
// SE block's scale) broadcast over the pixels: ISA `mul`. The full operand is input 0.
Status GraphConverter::add_mul(const ir::Op& op, Op out) {
  const std::string what = "op '" + op.name + "' (Mul)";
  if (!machine_.broadcast_multiply)
    return fail(what + " needs a vector unit with a broadcast multiply " +
                "(vector.broadcast_multiply: true); config '" + machine_.name + "' has none");
  if (op.inputs.size() != 2) return fail(what + " with other than two inputs");
  for (size_t i = 0; i < 2; ++i)
    if (graph_.tensor(op.inputs[i]).constant) return add_constant_operand(op, std::move(out), i);
  std::vector<int> xs;
  for (size_t i = 0; i < 2; ++i) {
    auto x = pixel_tensor(op, op.inputs[i]);
    if (!x.ok()) return x.failure();
    xs.push_back(x.value());
  }
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  const Shape3 y = net_.tensor(t.value()).shape;
  auto per_channel = [&](int x) {
    const Shape3 s = net_.tensor(x).shape;
    return s.c == y.c && s.h == 1 && s.w == 1;
  };
  if (net_.tensor(xs[0]).shape != y) std::swap(xs[0], xs[1]);
  if (net_.tensor(xs[0]).shape != y || !(net_.tensor(xs[1]).shape == y || per_channel(xs[1])))
    return fail(what + ": operands " + ir::shape_string(graph_.tensor(op.inputs[0]).shape) + " x " +
                ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                " (only equal shapes or one value per channel are supported)");
  out.kind = OpKind::Mul;
  out.inputs = xs;
  out.output = t.value();
  out.vector_elements = y.elements();
  net_.add_op(std::move(out));
  return {};
}

// Mul or Add of an activation and constant `op.inputs[c]`: ISA `mul` or `add` with b the
// constant, loaded whole like a lookup table (Op::constant_operand). Two broadcasts: one value
// per channel wherever the tensor's channels lie (ConvNeXt's layer scale [C, 1, 1] against
// NCHW), strides (0, 0); or a constant along the rows and columns, whole along its channels (the
// last axis): a rotary embedding's [S, hd] cos/sin table against [1, H, S, hd] head pixels (the
// same rows for every head), ViT's [1, S, d] position embedding against its tokens (against a
// batch of sequences, each sequence's rows read it again: Op::constant_row_period).
Status GraphConverter::add_constant_operand(const ir::Op& op, Op out, size_t c) {
  const std::string what = describe_op(op);
  const std::string kind = std::string(ir::to_string(op.kind));
  const std::string& x_name = op.inputs[1 - c];
  if (graph_.tensor(x_name).constant)
    return fail(what + ": a" + (kind == "Add" ? "n " : " ") + kind + " of two constants");
  // A head view of a batch of sequences, or a constant that varies by head (Swin's
  // relative-position bias on the scores): in the token tensor's own layout.
  if (auto v = views_.find(x_name); v != views_.end()) {
    const ir::Shape& k = graph_.tensor(op.inputs[c]).shape;
    if (v->second.batch > 1 || (k.size() >= 3 && k[k.size() - 3] > 1))
      return add_view_constant(op, std::move(out), c, v->second);
  }
  auto x = pixel_tensor(op, x_name);
  if (!x.ok()) return x.failure();
  const ir::Shape& k = graph_.tensor(op.inputs[c]).shape;
  const ir::Shape& y_ir = graph_.tensor(op.outputs[0]).shape;
  const Shape3 xs = net_.tensor(x.value()).shape;
  const bool pixels = head_pixels_.count(x.value()) > 0;
  std::pair<int64_t, int64_t> strides{0, 0};
  if (pixels || !broadcasts_per_channel(k, graph_.tensor(x_name).shape, channel_axis_of(x_name))) {
    // The IR axis of each net axis: channels last; rows the one before; head pixels' columns
    // the heads before that (a token tensor has one column).
    // A token tensor's rows are its leading axes' (a batch of sequences: B x S rows).
    const auto rank = static_cast<int64_t>(y_ir.size());
    const int64_t rows = rank < 2 ? 0 : y_ir[static_cast<size_t>(rank - 2)];
    const int64_t sequences = pixels || rank < 2 ? 1 : ir::element_count(y_ir) / (rows * xs.c);
    if (graph_.tensor(x_name).shape != y_ir || rank < 2 || static_cast<int64_t>(k.size()) > rank ||
        (!pixels && xs.w != 1) || y_ir.back() != xs.c || rows * sequences != xs.h)
      return fail(what + ": " + (kind == "Add" ? "an Add of" : "a Mul by") + " the constant '" +
                  op.inputs[c] + "' " + ir::shape_string(k) + " of " + ir::shape_string(y_ir) +
                  " (only one value per channel, or a constant broadcast over the rows or heads "
                  "of a token tensor, is supported by the accelerator path)");
    auto s = constant_strides(k, y_ir, pixels);
    if (!s.ok()) return fail(what + ": the constant '" + op.inputs[c] + "' " + s.reason());
    strides = s.value();
    // One sequence's rows broadcast over a batch (GPT-2's position rows [S, d] against B
    // sequences): row y reads the constant's row y mod S (constant_strides refused a constant
    // that varies along the batch).
    if (sequences > 1 && strides.first > 0) out.constant_row_period = rows;
  }
  out.kind = op.kind == ir::OpKind::Mul ? OpKind::Mul : OpKind::Add;  // Sub: add's subtract
  out.constant_operand = true;
  out.constant_stride_y = strides.first;
  out.constant_stride_x = strides.second;
  out.inputs = {x.value()};
  out.weight_bytes = ir::element_count(k) * net_.activation_bytes;
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  out.vector_elements = net_.tensor(t.value()).shape.elements();
  net_.add_op(std::move(out));
  return {};
}

// Activation folding: the producer's output clamp applies it, and its output
// tensor takes the activation's name (the pre-activation values are never
// stored).
Status GraphConverter::fold_activation(const ir::Op& op, bool& folded) {
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  if (Op* producer = foldable_producer(op, x.value())) {
    producer->activation = op.name;
    net_.tensors[static_cast<size_t>(x.value())].name = op.outputs[0];
    tensor_of_[op.outputs[0]] = x.value();
    folded = true;
  }
  return {};
}

// The kind (and window) of an op on the generic path; fails for kinds the
// scheduler cannot place.
Status GraphConverter::generic_kind(const ir::Op& op, Op& out) const {
  switch (op.kind) {
    case ir::OpKind::MaxPool:
    case ir::OpKind::AveragePool: {
      const auto geo = ir::window_geometry(op);
      out.kind = op.kind == ir::OpKind::MaxPool ? OpKind::MaxPool : OpKind::AvgPool;
      out.window = {geo.kernel_h,   geo.kernel_w, geo.stride_h, geo.stride_w,   geo.dilation_h,
                    geo.dilation_w, geo.pad_top,  geo.pad_left, geo.pad_bottom, geo.pad_right};
      break;
    }
    case ir::OpKind::GlobalAveragePool:
      out.kind = OpKind::GlobalPool;
      mark_pool_by_conv(op, out);
      break;
    case ir::OpKind::ReduceMean: {
      // A mean over every pixel of a map is a global average pool (the pool instruction, with
      // ReduceMean's requantizer: docs/codegen.md): the spatial axes of an NCHW tensor, or the
      // token axis of one sequence of token rows ([1, S, d] over axis 1, [S, d] over axis 0:
      // mean pooling over a sequence).
      const auto& in = graph_.tensor(op.inputs[0]).shape;
      std::vector<int64_t> axes = op.get_ints("axes");
      for (int64_t& a : axes)
        if (a < 0) a += static_cast<int64_t>(in.size());
      std::sort(axes.begin(), axes.end());
      const bool spatial = in.size() == 4 && axes == std::vector<int64_t>{2, 3};
      const bool tokens = (in.size() == 3 && in[0] == 1 && axes == std::vector<int64_t>{1}) ||
                          (in.size() == 2 && axes == std::vector<int64_t>{0});
      if (!spatial && !tokens)
        return fail("op '" + op.name + "': ReduceMean over axes " + ir::shape_string(axes) +
                    " of a tensor " + ir::shape_string(in) + " is not supported by the " +
                    "accelerator path yet (it takes the H and W axes of an NCHW map or the " +
                    "token axis of one sequence [1, S, d])");
      out.kind = OpKind::GlobalPool;
      mark_pool_by_conv(op, out);
      break;
    }
    case ir::OpKind::Relu:
    case ir::OpKind::Clip:
    case ir::OpKind::Quantize:
    case ir::OpKind::Dequantize:
    case ir::OpKind::Requantize:
      out.kind = OpKind::Eltwise;
      break;
    case ir::OpKind::Scale: {
      out.kind = OpKind::Eltwise;
      break;
    }
    case ir::OpKind::Add:
    case ir::OpKind::Sub:  // add with its subtract flag (codegen: emit_add)
      if (graph_.tensor(op.inputs[0]).shape != graph_.tensor(op.inputs[1]).shape)
        return fail("op '" + op.name + "': " + std::string(ir::to_string(op.kind)) +
                    " with broadcasting (" + ir::shape_string(graph_.tensor(op.inputs[0]).shape) +
                    " + " + ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                    ") is not supported by the accelerator path yet");
      out.kind = OpKind::Add;
      for (const std::string& in : op.inputs)
        if (auto it = tensor_of_.find(in);
            it != tensor_of_.end() && grid_hint_ && net_.tensor(it->second).shape != *grid_hint_)
          return fail("op '" + op.name + "': Add of '" + op.inputs[0] + "' and '" + in +
                      "', stored on different pixel grids");
      break;
    case ir::OpKind::Concat: {
      int64_t axis = op.get_int("axis");
      if (axis < 0) axis += static_cast<int64_t>(graph_.tensor(op.inputs[0]).shape.size());
      if (axis != channel_axis_of(op.inputs[0]) && !concat_of_channels_last(op)) {
        return fail("op '" + op.name + "': Concat along axis " +
                    std::to_string(op.get_int("axis")) + ", not the channel axis " +
                    std::to_string(channel_axis_of(op.inputs[0])) +
                    " (only channels are supported; pixels or tokens need a row-offset view)");
      }
      // A channel Concat copies pixel p of each input to pixel p of its output: one grid (the
      // output's from the IR, but for head pixels, whose output is made in their form).
      std::optional<Shape3> grid;
      if (!concat_of_channels_last(op))
        if (auto y = activation_shape(graph_.tensor(op.outputs[0]).shape,
                                      channel_axis_of(op.outputs[0]));
            y.ok())
          grid = y.value();
      for (const std::string& in : op.inputs) {
        const auto it = tensor_of_.find(in);
        if (it == tensor_of_.end()) continue;
        const Shape3 x = net_.tensor(it->second).shape;
        if (grid && (x.h != grid->h || x.w != grid->w))
          return fail("op '" + op.name + "': Concat of '" + in + "', stored on a pixel grid " +
                      "other than its output's or its other inputs'");
        grid = x;
      }
      out.kind = OpKind::Concat;
      break;
    }
    case ir::OpKind::Pad: {
      const auto& pads = op.get_ints("pads");  // N C H W begins, then ends
      out.kind = OpKind::Pad;
      if (pads.size() == 8) {
        out.window.pad_top = pads[2];
        out.window.pad_left = pads[3];
        out.window.pad_bottom = pads[6];
        out.window.pad_right = pads[7];
      }
      break;
    }
    case ir::OpKind::Flatten:
    case ir::OpKind::Reshape:
      out.kind = OpKind::Reshape;
      break;
    case ir::OpKind::Softmax:
      if (op.inputs.size() > 1)
        return fail("op '" + op.name +
                    "': a masked Softmax is not supported by the accelerator path yet");
      out.kind = OpKind::Softmax;
      break;
    case ir::OpKind::Split:
      return fail("op '" + op.name + "': Split is not supported by the scheduler");
    default:  // the modern-workload kinds (MatMul .. Resize): no instructions
              // for them yet
      return fail("op '" + op.name + "': " + std::string(ir::to_string(op.kind)) +
                  " is not supported by the accelerator path yet (the golden "
                  "executors run "
                  "it; the ISA, scheduler and codegen do not)");
  }

  return {};
}

// Generic path: activation inputs (constants are weights), one output.
Status GraphConverter::add_generic(const ir::Op& op, Op out) {
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i].empty()) continue;
    const ir::Tensor& t = graph_.tensor(op.inputs[i]);
    if (t.constant) {
      out.weight_bytes += t.shape.empty() ? 0 : ir::element_count(t.shape) * machine_.weight_bytes;
      continue;
    }
    auto x = input_tensor(op, i);
    if (!x.ok()) return x.failure();
    out.inputs.push_back(x.value());
  }
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  if (out.kind == OpKind::Concat) {
    int64_t offset = 0;
    for (int x : out.inputs) {
      out.concat_offsets.push_back(offset);
      offset += net_.tensor(x).shape.c;
    }
  }
  net_.add_op(std::move(out));
  return {};
}

}  // namespace detail

namespace {

bool has_batch_norm(const ir::Graph& graph) {
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    if (graph.op(id).kind == ir::OpKind::BatchNormalization) return true;
  }
  return false;
}

}  // namespace

Result<Net> net_from_graph(const ir::Graph& graph, const Machine& machine, NetForm form,
                           const MapSpaceFeatures& features) {
  // A graph the pass would change is rewritten on a copy (one the pipelines
  // already rewrote with passes::pools_before_concat, after quantizing, is not
  // copied).
  if (form == NetForm::FoldedPoolsBeforeConcat && passes::pools_before_concat_applies(graph)) {
    ir::Graph rewritten = graph;
    if (Status s = passes::run_passes(rewritten, "pools-before-concat"); !s) return s.failure();
    return net_from_graph(rewritten, machine, NetForm::Folded, features);
  }
  // Caffe form: each BatchNormalization runs as Caffe's BatchNorm and Scale layers, the two
  // depthwise 1x1 Convs that the program of the policy compiles (passes::graph_for_policy,
  // batchnorm-to-depthwise), so a schedule of the graph as loaded is the schedule of that program.
  if (form == NetForm::Caffe && has_batch_norm(graph)) {
    ir::Graph rewritten = graph;
    if (Status s = passes::run_passes(rewritten, "batchnorm-to-depthwise"); !s) return s.failure();
    return net_from_graph(rewritten, machine, form, features);
  }
  // The quantized graph's q, k and v projections (kQuantizationPreparation takes a packed one's
  // heads apart and splits a fused one) and its constant Adds (folded into one).
  if (passes::split_packed_heads_applies(graph) || passes::split_sliced_linear_applies(graph) ||
      passes::fold_constant_adds_applies(graph)) {
    ir::Graph rewritten = graph;
    if (Status s = passes::run_passes(rewritten,
                                      "split-packed-heads,split-sliced-linear,fold-constant-adds");
        !s)
      return s.failure();
    return net_from_graph(rewritten, machine, form, features);
  }
  auto order = ir::topological_order(graph);
  if (!order.ok()) return order.failure();
  detail::GraphConverter builder(graph, machine, form, features);
  for (ir::OpId id : order.value()) {
    if (auto s = builder.add(graph.op(id)); !s.ok()) return s.failure();
  }
  if (auto s = builder.check_pixel_outputs(); !s.ok()) return s.failure();
  return builder.take();
}

}  // namespace tessel::sched
