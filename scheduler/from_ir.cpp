// Graph IR -> scheduler Net: shapes from the IR, weights and MACs from the ops'
// attributes.
#include "scheduler/from_ir.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "scheduler/causal_mask.hpp"
#include "scheduler/from_ir_shapes.hpp"
#include "scheduler/group_info.hpp"

namespace tessel::sched {

namespace {

constexpr int64_t kBiasBytes = 4;

// Builds a Net op by op in topological order: the kinds with rules of their own
// (Input, Conv, BatchNormalization, Gemm, a foldable activation) each in a
// method, every other kind on the generic path (activation inputs, constants as
// weights, one output).
class GraphConverter {
 public:
  GraphConverter(const ir::Graph& graph, const Machine& machine, NetForm form,
                 const MapSpaceFeatures& features)
      : graph_(graph), machine_(machine), form_(form), features_(features) {
    net_.name = graph.name();
    net_.activation_bytes = machine.activation_bytes;
  }

  Status add(const ir::Op& op) {
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
        if (views_.count(op.inputs[0]) || is_head_pixels(op.inputs[0]) ||
            (graph_.tensor(op.inputs[0]).shape.size() == 3 &&
             graph_.tensor(op.outputs[0]).shape.size() == 4))
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

  Net take() {
    net_.finalize();
    for (int t : copied_outputs_) net_.tensors[static_cast<size_t>(t)].network_output = true;
    return std::move(net_);
  }

 private:
  /// A head view: an IR tensor [1, S, H, hd] (split), [1, H, S, hd] (heads_first) or
  /// [1, H, hd, S] (heads_first, transposed) over net tensor `tensor`, whose pixel s holds head
  /// h's row s at channels offset + h * head_dim. Head splits and merges are these views, never
  /// copies.
  struct HeadView {
    int tensor = -1;
    int64_t offset = 0, heads = 1, head_dim = 0;
    bool heads_first = false, transposed = false;
    /// Grouped-query attention: heads that read one stored head (head h reads h / repeat).
    int64_t repeat = 1;
    /// [1, stored heads, repeat, S, hd]: the 5-D form between a Reshape and an Expand.
    bool grouped = false;
  };

  auto consumers_of(const std::string& t) const { return graph_.consumers(t); }

  Result<int> input_tensor(const ir::Op& op, size_t i) {
    auto it = tensor_of_.find(op.inputs[i]);
    if (it == tensor_of_.end()) {
      return fail("op '" + op.name + "': input '" + op.inputs[i] + "' is not an activation");
    }
    return it->second;
  }

  Result<int> new_tensor(const std::string& name, const std::string& op_name) {
    const ir::Shape& ir_shape = graph_.tensor(name).shape;
    if (ir_shape.size() == 4 && ir_shape[0] == 1 && reads_head_pixels(op_name)) {
      // [1, H, S, X] computed from head pixels: X channels of pixel (s, h), as its inputs.
      const int t = net_.add_tensor(name, Shape3{ir_shape[3], ir_shape[2], ir_shape[1]});
      tensor_of_[name] = t;
      head_pixels_.insert(t);
      return t;
    }
    auto s = shape3(graph_.tensor(name), op_name);
    if (!s.ok()) return s.failure();
    const int t = net_.add_tensor(name, s.value());
    tensor_of_[name] = t;
    return t;
  }

  // ---- Head pixels (docs/scheduler.md "Transformers": rotary embeddings) -----------------
  // A heads-first view [1, H, S, hd] of a whole token tensor [S][H hd] is, byte for byte, the
  // tensor of S rows of H pixels of hd channels: pixel (s, h) holds head h's row s. Ops on
  // each head's rows elementwise (a rotary embedding's slices of the head dimension, its
  // negation, its Concat, its multiplies by the [S, hd] cos/sin tables, its Add) run on that
  // form, where a slice of the head dimension is a channel slice and a table broadcast over
  // the heads is a stride-0 operand. The change of form is a Reshape (a DRAM view) each way.

  bool is_head_pixels(const std::string& name) const {
    const auto it = tensor_of_.find(name);
    return it != tensor_of_.end() && head_pixels_.count(it->second);
  }

  bool reads_head_pixels(const std::string& op_name) const {
    const auto id = graph_.find_op(op_name);
    if (!id) return false;
    for (const std::string& in : graph_.op(*id).inputs)
      if (!in.empty() && is_head_pixels(in)) return true;
    return false;
  }

  // A Net op reshaping tensor `x` to `shape` (a DRAM view, no IR op), and its output.
  int reshape_view(int x, const std::string& name, Shape3 shape) {
    Op view;
    view.name = name;
    view.type = "Reshape";
    view.kind = OpKind::Reshape;
    view.inputs = {x};
    view.output = net_.add_tensor(name, shape);
    net_.add_op(view);
    return view.output;
  }

  // The net tensor an elementwise op reads for IR tensor `name`: its tensor, or, for a whole
  // heads-first view, the head-pixel form of the token tensor.
  Result<int> pixel_tensor(const ir::Op& op, const std::string& name) {
    if (auto it = tensor_of_.find(name); it != tensor_of_.end()) return it->second;
    const auto it = views_.find(name);
    if (it == views_.end())
      return fail(describe_op(op) + ": input '" + name + "' is not an activation");
    const HeadView& v = it->second;
    const Shape3 base = net_.tensor(v.tensor).shape;
    if (!v.heads_first || v.transposed || v.repeat != 1 || v.offset != 0 ||
        v.heads * v.head_dim != base.c || base.w != 1)
      return fail(describe_op(op) + ": input '" + name +
                  "' is a partial, transposed or repeated head view; only a whole [1, heads, "
                  "tokens, head_dim] view is read elementwise");
    auto cached = pixels_of_.find(v.tensor);
    if (cached == pixels_of_.end()) {
      const int t = reshape_view(v.tensor, net_.tensor(v.tensor).name + ".head_pixels",
                                 Shape3{v.head_dim, base.h, v.heads});
      head_pixels_.insert(t);
      cached = pixels_of_.emplace(v.tensor, t).first;
    }
    tensor_of_[name] = cached->second;  // the same bytes: later readers share the view
    return cached->second;
  }

  // The heads-first view of a head-pixel tensor: its token form (a Reshape view back).
  HeadView token_view(int pixels) {
    auto cached = tokens_of_.find(pixels);
    const Shape3 s = net_.tensor(pixels).shape;
    if (cached == tokens_of_.end()) {
      const int t =
          reshape_view(pixels, net_.tensor(pixels).name + ".tokens", Shape3{s.c * s.w, s.h, 1});
      cached = tokens_of_.emplace(pixels, t).first;
    }
    return HeadView{cached->second, 0, s.w, s.c, true, false};
  }

  // The net op that an activation `op` reading net tensor `x` folds into, or
  // null: folding is on, the form is not Caffe, `x` is made by a Conv, Gemm or
  // Add with no activation yet, the activation is its only reader and `x` is no
  // graph output.
  Op* foldable_producer(const ir::Op& op, int x) {
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

  Status add_input(const ir::Op& op, Op out) {
    out.kind = OpKind::Input;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    network_inputs_.insert(t.value());
    net_.add_op(std::move(out));
    return {};
  }

  Status add_conv(const ir::Op& op, Op out) {
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
    // Folding: a BatchNormalization that is this conv's only consumer becomes
    // its bias.
    std::string result = op.outputs[0];
    if (form_ != NetForm::Caffe) {
      const auto uses = consumers_of(result);
      if (uses.size() == 1 && graph_.op(uses[0].op).kind == ir::OpKind::BatchNormalization) {
        bias = true;
      }
    }
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
        in.shape = Shape3{4 * in.shape.c, in.shape.h / 2, in.shape.w / 2};
        in.space_to_depth = 2;
        const int64_t taps = out.window.kernel_h * out.window.kernel_w;
        out.zero_weight_bytes = w[0] * (in.shape.c * taps - per_output) * wb;
        out.weight_bytes += out.zero_weight_bytes;  // stored and moved as the conv's
      }
    }
    net_.add_op(std::move(out));
    return {};
  }

  Status add_batch_norm(const ir::Op& op, Op out) {
    const int64_t wb = machine_.weight_bytes;
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    const Shape3 s = net_.tensor(x.value()).shape;
    const auto producer = graph_.producer(op.inputs[0]);
    const bool folds = form_ != NetForm::Caffe && producer &&
                       graph_.op(*producer).kind == ir::OpKind::Conv &&
                       consumers_of(op.inputs[0]).size() == 1;
    if (folds) {  // the conv already produces the normalized tensor
      tensor_of_[op.outputs[0]] = x.value();
      return {};
    }
    out.kind = OpKind::Eltwise;
    out.inputs = {x.value()};
    if (form_ == NetForm::Caffe) {
      Op bn = out;
      bn.type = "BatchNorm";
      bn.name = op.name + "/bn";
      auto mid = net_.add_tensor(op.name + "/bn", s);
      bn.output = mid;
      bn.weight_bytes = 2 * s.c * wb;  // mean, variance
      net_.add_op(std::move(bn));
      out.name = op.name + "/scale";
      out.type = "Scale";
      out.inputs = {mid};
    }
    out.weight_bytes = 2 * s.c * wb;  // gamma, beta (or folded scale, shift)
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  Status add_gemm(const ir::Op& op, Op out) {
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
  void mark_pool_by_conv(const ir::Op& op, Op& out) const {
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    if (in.size() != 4 || (in[2] <= kPoolWindowMax && in[3] <= kPoolWindowMax)) return;
    out.pool_by_conv = true;
    out.weight_bytes = machine_.matrix_cols * net_.activation_bytes;
  }

  Status add_lookup_table(const ir::Op& op, Op out) {
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
  Status add_mul(const ir::Op& op, Op out) {
    const std::string what = "op '" + op.name + "' (Mul)";
    if (!machine_.broadcast_multiply)
      return fail(what + " needs a vector unit with a broadcast multiply " +
                  "(vector.broadcast_multiply: true); config '" + machine_.name + "' has none");
    if (op.inputs.size() != 2) return fail(what + " with other than two inputs");
    for (size_t i = 0; i < 2; ++i)
      if (graph_.tensor(op.inputs[i]).constant) return add_constant_mul(op, std::move(out), i);
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
      return fail(what + ": operands " + ir::shape_string(graph_.tensor(op.inputs[0]).shape) +
                  " x " + ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                  " (only equal shapes or one value per channel are supported)");
    out.kind = OpKind::Mul;
    out.inputs = xs;
    out.output = t.value();
    out.vector_elements = y.elements();
    net_.add_op(std::move(out));
    return {};
  }

  // Mul of an activation by constant `op.inputs[c]` that broadcasts against it along the
  // tensor's rows and columns, whole along its channels (the last axis): a rotary embedding's
  // [S, hd] cos/sin table against [1, H, S, hd] head pixels (the same rows for every head), a
  // per-channel scale. ISA `mul` with b the constant, loaded whole like a lookup table.
  Status add_constant_mul(const ir::Op& op, Op out, size_t c) {
    const std::string what = describe_op(op);
    auto x = pixel_tensor(op, op.inputs[1 - c]);
    if (!x.ok()) return x.failure();
    const ir::Shape& k = graph_.tensor(op.inputs[c]).shape;
    const ir::Shape& y_ir = graph_.tensor(op.outputs[0]).shape;
    const Shape3 xs = net_.tensor(x.value()).shape;
    // The IR axis of each net axis: channels last; rows the one before; head pixels' columns
    // the heads before that (a token tensor has one column).
    const auto rank = static_cast<int64_t>(y_ir.size());
    const bool pixels = head_pixels_.count(x.value()) > 0;
    if (graph_.tensor(op.inputs[1 - c]).shape != y_ir || rank < 2 ||
        static_cast<int64_t>(k.size()) > rank || (!pixels && xs.w != 1) || y_ir.back() != xs.c ||
        y_ir[static_cast<size_t>(rank - 2)] != xs.h)
      return fail(what + ": a Mul by the constant '" + op.inputs[c] + "' " + ir::shape_string(k) +
                  " of " + ir::shape_string(y_ir) +
                  " (only a constant broadcast over the rows or heads of a token tensor is "
                  "supported by the accelerator path)");
    auto strides = constant_strides(k, y_ir, pixels);
    if (!strides.ok())
      return fail(what + ": the constant '" + op.inputs[c] + "' " + strides.reason());
    out.kind = OpKind::Mul;
    out.constant_operand = true;
    out.constant_stride_y = strides.value().first;
    out.constant_stride_x = strides.value().second;
    out.inputs = {x.value()};
    out.weight_bytes = ir::element_count(k) * net_.activation_bytes;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    out.vector_elements = net_.tensor(t.value()).shape.elements();
    net_.add_op(std::move(out));
    return {};
  }

  // ---- Transformers (docs/scheduler.md "Transformers") -----------------------------------

  std::string describe_op(const ir::Op& op) const {
    return "op '" + op.name + "' (" + std::string(ir::to_string(op.kind)) + ")";
  }

  bool only_graph_output(const std::string& tensor) const {
    if (!consumers_of(tensor).empty()) return false;
    for (const std::string& o : graph_.outputs())
      if (o == tensor) return true;
    return false;
  }

  Status need_unit(const ir::Op& op, bool present, const std::string& unit) const {
    if (present) return {};
    return fail(describe_op(op) + " needs " + unit + "; config '" + machine_.name + "' has none");
  }

  // The index of a Mul's one-element constant operand, or -1.
  int scalar_constant_operand(const ir::Op& op) const {
    for (size_t i = 0; i < op.inputs.size() && op.inputs.size() == 2; ++i) {
      const ir::Tensor& t = graph_.tensor(op.inputs[i]);
      if (t.constant && ir::element_count(t.shape) == 1) return static_cast<int>(i);
    }
    return -1;
  }

  // The view of IR tensor `name`: its head view, or a whole net tensor of one head.
  Result<HeadView> view_of(const ir::Op& op, const std::string& name) {
    if (auto it = views_.find(name); it != views_.end()) return it->second;
    auto it = tensor_of_.find(name);
    if (it == tensor_of_.end())
      return fail(describe_op(op) + ": input '" + name + "' is no activation");
    if (head_pixels_.count(it->second)) return token_view(it->second);
    const Shape3 s = net_.tensor(it->second).shape;
    return HeadView{it->second, 0, 1, s.c, true, false};
  }

  // A token-wise Linear (a Gemm of [S, K] by a constant [K, N]): a 1x1 conv over the S pixels,
  // K input and N output channels.
  Status add_token_linear(const ir::Op& op, Op out) {
    const Shape3 in = net_.tensor(out.inputs[0]).shape;
    const Shape3 y = net_.tensor(out.output).shape;
    const bool bias = op.inputs.size() > 2 && !op.inputs[2].empty();
    out.kind = OpKind::Conv;
    out.weight_bytes = in.c * y.c * machine_.weight_bytes + (bias ? y.c * kBiasBytes : 0);
    out.requant_table_bytes = y.c * kRequantEntryBytes;
    out.macs = y.elements() * in.c;
    net_.add_op(std::move(out));
    return {};
  }

  // A Reshape between [1, S, d] and [S, d] (a Linear's flatten and unflatten): the same token
  // tensor, no op, so that the ops around it may share a group. Not for a graph output (its
  // name is the output's).
  bool token_alias(const ir::Op& op) {
    const auto it = tensor_of_.find(op.inputs[0]);
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    const auto& out = graph_.tensor(op.outputs[0]).shape;
    const auto rank = [](const ir::Shape& s) { return s.size() == 2 || s.size() == 3; };
    if (it == tensor_of_.end() || !rank(in) || !rank(out) || in.back() != out.back() ||
        ir::element_count(in) != ir::element_count(out) || only_graph_output(op.outputs[0]))
      return false;
    for (const std::string& o : graph_.outputs())
      if (o == op.outputs[0]) return false;
    if (net_.tensor(it->second).shape.h <= 1) return false;  // a classifier's flatten stays
    tensor_of_[op.outputs[0]] = it->second;
    return true;
  }

  // A channel slice of a token tensor (Slice of its last axis, step 1): a DRAM view.
  Status add_slice(const ir::Op& op, Op out) {
    auto x = pixel_tensor(op, op.inputs[0]);
    if (!x.ok()) return x.failure();
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    const auto& starts = op.get_ints("starts");
    const auto& ends = op.get_ints("ends");
    const auto& axes = op.get_ints("axes");
    const auto& steps = op.get_ints("steps");
    int64_t first = 0, first_row = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto axis = static_cast<size_t>(axes[i] < 0 ? axes[i] + int64_t(in.size()) : axes[i]);
      const bool whole = starts[i] == 0 && ends[i] >= in[axis] && steps[i] == 1;
      // A token tensor's rows: whole sequences (axis 0), or tokens of one sequence (axis 1).
      const bool rows = in.size() == 3 && steps[i] == 1 && (axis == 0 || (axis == 1 && in[0] == 1));
      if (axis + 1 == in.size() && steps[i] == 1) {
        first = starts[i];
      } else if (rows && !whole) {
        first_row = starts[i] * (axis == 0 ? in[1] : 1);
      } else if (!whole) {
        return fail(describe_op(op) +
                    ": only a slice of the last axis (channels) or of a token tensor's rows, " +
                    "with step 1, is supported by the accelerator path");
      }
    }
    out.kind = OpKind::Slice;
    out.inputs = {x.value()};
    out.channel_offset = first;
    out.row_offset = first_row;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  // A Split of a token tensor's last axis (an exported q|k|v split): one channel-slice view per
  // output, named `<split>.<i>`, exactly as the Slices it stands for.
  Status add_split(const ir::Op& op, Op out) {
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    const int64_t axis = op.get_int("axis");
    if (axis != -1 && axis != static_cast<int64_t>(in.size()) - 1)
      return fail(describe_op(op) + ": only a Split of a token tensor's last axis (channels) " +
                  "is supported by the accelerator path");
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    int64_t first = 0;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      Op slice = out;
      slice.name = op.name + "." + std::to_string(i);
      slice.kind = OpKind::Slice;
      slice.inputs = {x.value()};
      slice.channel_offset = first;
      auto t = new_tensor(op.outputs[i], op.name);
      if (!t.ok()) return t.failure();
      slice.output = t.value();
      first += net_.tensor(t.value()).shape.c;
      net_.add_op(std::move(slice));
    }
    return {};
  }

  // A Reshape that splits a token tensor into heads or merges a head view back, or groups and
  // ungroups the heads around grouped-query attention's Expand: no op.
  Status add_view_reshape(const ir::Op& op) {
    const auto& y = graph_.tensor(op.outputs[0]).shape;
    if (is_head_pixels(op.inputs[0]) && !views_.count(op.inputs[0]))
      views_[op.inputs[0]] = token_view(tensor_of_.at(op.inputs[0]));
    if (auto it = views_.find(op.inputs[0]); it != views_.end()) {
      HeadView v = it->second;
      const int64_t rows = v.heads_first && !v.transposed ? net_.tensor(v.tensor).shape.h : -1;
      if (y.size() == 5 && !v.grouped && v.repeat == 1 && rows > 0 && y[0] == 1 &&
          y[1] == v.heads && y[2] == 1 && y[3] == rows && y[4] == v.head_dim) {
        v.grouped = true;  // [1, H, 1, S, hd]
        views_[op.outputs[0]] = v;
        return {};
      }
      if (y.size() == 4 && v.grouped && y[0] == 1 && y[1] == v.heads * v.repeat && y[2] == rows &&
          y[3] == v.head_dim) {
        v.grouped = false;  // [1, H * repeat, S, hd]: head h reads stored head h / repeat
        v.heads *= v.repeat;
        views_[op.outputs[0]] = v;
        return {};
      }
      const Shape3 base = net_.tensor(v.tensor).shape;
      if (y.size() == 3 && !v.heads_first && v.offset == 0 && v.heads * v.head_dim == base.c &&
          y[0] == 1 && y[1] == base.h && y[2] == base.c) {
        tensor_of_[op.outputs[0]] = v.tensor;  // the merged heads are the tensor itself
        return {};
      }
      return fail(describe_op(op) + ": a reshape of a head view other than the merge of its heads");
    }
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    const Shape3 base = net_.tensor(x.value()).shape;
    if (y.size() != 4 || y[0] != 1 || y[1] != base.h || base.w != 1 || y[2] * y[3] != base.c)
      return fail(describe_op(op) + ": a reshape to " + ir::shape_string(y) +
                  " (only [1, S, d] -> [1, S, heads, d / heads] is supported)");
    views_[op.outputs[0]] = HeadView{x.value(), 0, y[2], y[3], false, false};
    return {};
  }

  // Expand of grouped heads [1, H, 1, S, hd] -> [1, H, G, S, hd] (grouped-query attention's
  // repeat_kv): a view in which each stored head serves G heads.
  Status add_expand(const ir::Op& op) {
    auto it = views_.find(op.inputs[0]);
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    const auto& y = graph_.tensor(op.outputs[0]).shape;
    if (it == views_.end() || !it->second.grouped || it->second.repeat != 1 || y.size() != 5 ||
        in.size() != 5 || y[0] != in[0] || y[1] != in[1] || y[3] != in[3] || y[4] != in[4])
      return fail(describe_op(op) +
                  ": only the repeat of grouped heads [1, H, 1, S, hd] -> [1, H, G, S, hd] "
                  "(grouped-query attention) is supported by the accelerator path");
    HeadView v = it->second;
    v.repeat = y[2];
    views_[op.outputs[0]] = v;
    return {};
  }

  // Transposes of head views: (0, 2, 1, 3) swaps heads and tokens, (0, 2, 3, 1) also reads the
  // tokens as columns (K^T), (0, 1, 3, 2) on heads-first swaps rows and columns.
  Status add_transpose(const ir::Op& op) {
    auto it = views_.find(op.inputs[0]);
    if (it == views_.end())
      return fail(describe_op(op) +
                  ": a transpose of other than a head view is not supported by the " +
                  "accelerator path yet");
    HeadView v = it->second;
    const auto& perm = op.get_ints("perm");
    if (v.grouped) return fail(describe_op(op) + ": a transpose of grouped heads is not supported");
    using P = std::vector<int64_t>;
    if (perm == P{0, 2, 1, 3} && !v.transposed) {
      v.heads_first = !v.heads_first;
    } else if (perm == P{0, 2, 3, 1} && !v.heads_first && !v.transposed) {
      v.heads_first = v.transposed = true;
    } else if (perm == P{0, 1, 3, 2} && v.heads_first) {
      v.transposed = !v.transposed;
    } else {
      return fail(describe_op(op) + ": this permutation of a head view is not supported");
    }
    views_[op.outputs[0]] = v;
    return {};
  }

  // x * c for a one-element constant c: a unary function of the 8-bit codes, so one table
  // lookup (ISA `lut`, the golden rule's every code in the table; attention's 1/sqrt(d)).
  Status add_scalar_mul(const ir::Op& op, Op out) {
    const std::string x = op.inputs[static_cast<size_t>(1 - scalar_constant_operand(op))];
    if (auto s = need_unit(op, machine_.lookup_table,
                           "a vector unit with lookup tables (vector.lookup_table: true)");
        !s.ok())
      return s;
    if (net_.activation_bytes != 1)
      return fail(describe_op(op) + ": a Mul by a constant runs as an 8-bit table lookup; " +
                  std::to_string(8 * net_.activation_bytes) + "-bit activations are not supported");
    const bool as_view = views_.count(x) || is_head_pixels(x);
    auto v = view_of(op, x);
    if (!v.ok()) return v.failure();
    out.kind = OpKind::Eltwise;
    out.lookup_table = true;
    out.inputs = {v.value().tensor};
    out.weight_bytes = 256;
    const Shape3 shape = net_.tensor(v.value().tensor).shape;
    const int t = net_.add_tensor(op.outputs[0], shape);
    out.output = t;
    net_.add_op(std::move(out));
    if (as_view) {
      HeadView w = v.value();
      w.tensor = t;
      views_[op.outputs[0]] = w;
    } else {
      tensor_of_[op.outputs[0]] = t;
    }
    return {};
  }

  Status add_norm(const ir::Op& op, Op out) {
    if (auto s =
            need_unit(op, machine_.row_normalise, "a row normaliser (vector.row_normalise: true)");
        !s.ok())
      return s;
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    const int64_t axis = op.get_int("axis");
    if (axis != -1 && axis != static_cast<int64_t>(in.size()) - 1)
      return fail(describe_op(op) + ": only a norm over the last axis is supported");
    const Shape3 s = net_.tensor(x.value()).shape;
    out.kind = OpKind::Norm;
    out.centre = op.kind == ir::OpKind::LayerNormalization;
    out.inputs = {x.value()};
    out.weight_bytes = 8 + 16 * s.c;  // E, then per channel int32 G, int32 r, int64 B
    out.vector_elements = s.elements();
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  Status add_row_softmax(const ir::Op& op, Op out) {
    if (auto s =
            need_unit(op, machine_.row_normalise, "a row normaliser (vector.row_normalise: true)");
        !s.ok())
      return s;
    const std::optional<int64_t> diagonal = causal_diagonal(graph_, op);
    if (op.inputs.size() > 1 && !diagonal)
      return fail(describe_op(op) + ": its mask '" + op.inputs[1] +
                  "' is not a constant causal band (key j kept iff j <= query i + k, k >= 0, "
                  "the same for every head), the only mask the accelerator path supports");
    const int64_t axis = op.get_int("axis");
    const auto rank = static_cast<int64_t>(graph_.tensor(op.inputs[0]).shape.size());
    if (axis != -1 && axis != rank - 1)
      return fail(describe_op(op) + ": only a Softmax over the last axis is supported");
    auto v = view_of(op, op.inputs[0]);
    if (!v.ok()) return v.failure();
    const HeadView h = v.value();
    const Shape3 s = net_.tensor(h.tensor).shape;
    if (h.offset != 0 || h.transposed || h.heads * h.head_dim != s.c)
      return fail(describe_op(op) + ": a Softmax of a partial or transposed head view");
    out.kind = OpKind::RowSoftmax;
    out.inputs = {h.tensor};
    out.row_length = h.head_dim;
    out.causal = diagonal.has_value();
    out.mask_diagonal = diagonal.value_or(0);
    out.weight_bytes = 1024;  // exp_high, exp_low: 512 u16 entries
    out.vector_elements = s.elements();
    const int t = net_.add_tensor(op.outputs[0], s);
    out.output = t;
    net_.add_op(std::move(out));
    HeadView y = h;
    y.tensor = t;
    if (views_.count(op.inputs[0]))
      views_[op.outputs[0]] = y;
    else
      tensor_of_[op.outputs[0]] = t;
    return {};
  }

  // MatMul of two activations, per head: operands are head views (heads first), the result a
  // token tensor with the heads side by side, seen as heads first.
  Status add_matmul(const ir::Op& op, Op out) {
    if (auto s = need_unit(op, machine_.activation_operands,
                           "a matrix unit with activation operands "
                           "(matrix.activation_operands: true)");
        !s.ok())
      return s;
    for (const std::string& in : op.inputs)
      if (graph_.tensor(in).constant)
        return fail(describe_op(op) + ": a MatMul by the constant '" + in +
                    "' is not supported by the accelerator path (write it as a Gemm)");
    auto a = view_of(op, op.inputs[0]);
    auto b = view_of(op, op.inputs[1]);
    if (!a.ok()) return a.failure();
    if (!b.ok()) return b.failure();
    const HeadView va = a.value(), vb = b.value();
    if (!va.heads_first || va.transposed || !vb.heads_first || va.heads != vb.heads ||
        va.repeat != 1 || va.grouped || vb.grouped)
      return fail(describe_op(op) + ": operands that are not per-head views of token tensors");
    HeadMatMul& mm = out.matmul;
    mm.heads = va.heads;
    mm.m_size = net_.tensor(va.tensor).shape.h;
    mm.k_size = va.head_dim;
    mm.transpose_b = vb.transposed;
    mm.n_size = vb.transposed ? net_.tensor(vb.tensor).shape.h : vb.head_dim;
    const int64_t b_k = vb.transposed ? vb.head_dim : net_.tensor(vb.tensor).shape.h;
    if (b_k != mm.k_size)
      return fail(describe_op(op) + ": reduction " + std::to_string(mm.k_size) + " against " +
                  std::to_string(b_k));
    mm.a_offset = va.offset;
    mm.a_head_stride = va.head_dim;
    mm.b_offset = vb.offset;
    mm.b_head_stride = vb.head_dim;
    mm.b_head_repeat = vb.repeat;
    out.kind = OpKind::MatMul;
    out.inputs = {va.tensor, vb.tensor};
    out.macs = mm.heads * mm.m_size * mm.n_size * mm.k_size;
    const int t = net_.add_tensor(op.outputs[0], Shape3{mm.heads * mm.n_size, mm.m_size, 1});
    out.output = t;
    views_[op.outputs[0]] = HeadView{t, 0, mm.heads, mm.n_size, true, false};
    net_.add_op(std::move(out));
    return {};
  }

  // ---- Decode (docs/scheduler.md "Decode") ----------------------------------------------

  // A Concat of 3-D token tensors [1, S_i, d] along the tokens (axis 1): the KV cache append.
  // Along the sequences (axis 0: a batch of rows, sequence after sequence) or one sequence's
  // tokens (axis 1 of [1, S, d]).
  bool is_token_concat(const ir::Op& op) const {
    const auto& y = graph_.tensor(op.outputs[0]).shape;
    const int64_t axis = op.get_int("axis");
    return y.size() == 3 && (axis == 0 || axis == -3 || ((axis == 1 || axis == -2) && y[0] == 1));
  }

  // The append as a row view: input i at rows [offset_i, ...) of the output's region. A network
  // input (the past cache) is written there in the DRAM image; any other input is copied there
  // by a one-input `copy_only` Concat (its producer, a channel slice of c_attn's output, is a
  // view itself, and a network output keeps its name: the copy takes the IR tensor's name and
  // the view it reads is renamed `<name>/view`).
  Status add_row_concat(const ir::Op& op, Op out) {
    const auto& y = graph_.tensor(op.outputs[0]).shape;
    int64_t row = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      auto x = input_tensor(op, i);
      if (!x.ok()) return x.failure();
      const Shape3 s = net_.tensor(x.value()).shape;
      if (s.c != y[2] || s.w != 1)
        return fail(describe_op(op) + ": input '" + op.inputs[i] + "' is not a token tensor of " +
                    std::to_string(y[2]) + " channels");
      int t = x.value();
      if (!network_inputs_.count(t)) {
        auto copied = add_append_copy(op, i, t);
        if (!copied.ok()) return copied.failure();
        t = copied.value();
      }
      out.inputs.push_back(t);
      out.concat_offsets.push_back(row);
      row += s.h;
    }
    out.kind = OpKind::Concat;
    out.concat_rows = true;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  // The copy of input `i` (net tensor `x`) of row Concat `op` into its row slice.
  Result<int> add_append_copy(const ir::Op& op, size_t i, int x) {
    const std::string& name = op.inputs[i];
    Tensor& source = net_.tensors[static_cast<size_t>(x)];
    const bool keeps_name = source.name == name;
    if (keeps_name) source.name = name + "/view";
    Op copy;
    copy.name = op.name + ".append." + std::to_string(i);
    copy.type = "Concat";
    copy.kind = OpKind::Concat;
    copy.copy_only = true;
    copy.inputs = {x};
    copy.concat_offsets = {0};
    const int t = net_.add_tensor(keeps_name ? name : copy.name, source.shape);
    copy.output = t;
    copy.vector_elements = net_.tensor(t).shape.elements();
    net_.add_op(std::move(copy));
    if (keeps_name) tensor_of_[name] = t;
    for (const std::string& o : graph_.outputs())
      if (o == name) copied_outputs_.push_back(t);
    return t;
  }

  // Activation folding: the producer's output clamp applies it, and its output
  // tensor takes the activation's name (the pre-activation values are never
  // stored).
  Status fold_activation(const ir::Op& op, bool& folded) {
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
  Status generic_kind(const ir::Op& op, Op& out) const {
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
        // A mean over the spatial axes of an NCHW tensor is a global average pool (the pool
        // instruction, with ReduceMean's requantizer: docs/codegen.md).
        const auto& in = graph_.tensor(op.inputs[0]).shape;
        std::vector<int64_t> axes = op.get_ints("axes");
        for (int64_t& a : axes)
          if (a < 0) a += static_cast<int64_t>(in.size());
        std::sort(axes.begin(), axes.end());
        if (in.size() != 4 || axes != std::vector<int64_t>{2, 3})
          return fail("op '" + op.name + "': ReduceMean over axes other than the spatial ones " +
                      "(H, W of a 4-D tensor) is not supported by the accelerator path yet");
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
        if (graph_.tensor(op.inputs[0]).shape != graph_.tensor(op.inputs[1]).shape)
          return fail("op '" + op.name + "': Add with broadcasting (" +
                      ir::shape_string(graph_.tensor(op.inputs[0]).shape) + " + " +
                      ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                      ") is not supported by the accelerator path yet");
        out.kind = OpKind::Add;
        break;
      case ir::OpKind::Concat: {
        if (op.get_int("axis") != 1 && !concat_of_channels_last(op)) {
          return fail("op '" + op.name + "': Concat along axis " +
                      std::to_string(op.get_int("axis")) + " (only channels are supported)");
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

  // A Concat of head-pixel tensors along their last axis (their channels): a rotary
  // embedding's rotate_half.
  bool concat_of_channels_last(const ir::Op& op) const {
    const auto rank = static_cast<int64_t>(graph_.tensor(op.outputs[0]).shape.size());
    const int64_t axis = op.get_int("axis");
    if (axis != -1 && axis != rank - 1) return false;
    return std::all_of(op.inputs.begin(), op.inputs.end(),
                       [&](const std::string& in) { return is_head_pixels(in); });
  }

  // Generic path: activation inputs (constants are weights), one output.
  Status add_generic(const ir::Op& op, Op out) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i].empty()) continue;
      const ir::Tensor& t = graph_.tensor(op.inputs[i]);
      if (t.constant) {
        out.weight_bytes +=
            t.shape.empty() ? 0 : ir::element_count(t.shape) * machine_.weight_bytes;
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

  const ir::Graph& graph_;
  const Machine& machine_;
  const NetForm form_;
  const MapSpaceFeatures& features_;
  Net net_;
  std::map<std::string, int, std::less<>> tensor_of_;   // IR tensor name -> Net tensor
  std::map<std::string, HeadView, std::less<>> views_;  // IR tensor name -> its head view
  std::set<int> network_inputs_;                        // Net tensors of Input ops
  std::set<int> head_pixels_;                           // Net tensors in head-pixel form
  std::map<int, int> pixels_of_;  // token tensor -> its head-pixel Reshape view
  std::map<int, int> tokens_of_;  // head-pixel tensor -> its token Reshape view
  std::vector<int> copied_outputs_;  // append copies of graph outputs (which have a consumer)
};

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
  auto order = ir::topological_order(graph);
  if (!order.ok()) return order.failure();
  GraphConverter builder(graph, machine, form, features);
  for (ir::OpId id : order.value()) {
    if (auto s = builder.add(graph.op(id)); !s.ok()) return s.failure();
  }
  return builder.take();
}

}  // namespace tessel::sched
