// Graph IR -> Net, the transformer kinds: head pixels (rotary embeddings), head views (head
// splits and merges, grouped-query heads), token Linear, MatMul, Norm, RowSoftmax, Mul by a
// scalar constant, and decode's KV cache append as a row view (docs/scheduler-transformers.md
// "Transformers", "Decode"). GraphConverter: scheduler/from_ir_converter.hpp.
#include <algorithm>
#include <string>

#include "scheduler/causal_mask.hpp"
#include "scheduler/from_ir_converter.hpp"

namespace tessel::sched::detail {

// ---- Head pixels (docs/scheduler-transformers.md "Transformers": rotary embeddings)
// ----------------- A heads-first view [1, H, S, hd] of a whole token tensor [S][H hd] is, byte for
// byte, the tensor of S rows of H pixels of hd channels: pixel (s, h) holds head h's row s. Ops on
// each head's rows elementwise (a rotary embedding's slices of the head dimension, its
// negation, its Concat, its multiplies by the [S, hd] cos/sin tables, its Add) run on that
// form, where a slice of the head dimension is a channel slice and a table broadcast over
// the heads is a stride-0 operand. The change of form is a Reshape (a DRAM view) each way.

bool GraphConverter::is_head_pixels(const std::string& name) const {
  const auto it = tensor_of_.find(name);
  return it != tensor_of_.end() && head_pixels_.count(it->second);
}

bool GraphConverter::reads_head_pixels(const std::string& op_name) const {
  const auto id = graph_.find_op(op_name);
  if (!id) return false;
  for (const std::string& in : graph_.op(*id).inputs)
    if (!in.empty() && is_head_pixels(in)) return true;
  return false;
}

// A Net op reshaping tensor `x` to `shape` (a DRAM view, no IR op), and its output.
int GraphConverter::reshape_view(int x, const std::string& name, Shape3 shape) {
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
Result<int> GraphConverter::pixel_tensor(const ir::Op& op, const std::string& name) {
  if (auto it = tensor_of_.find(name); it != tensor_of_.end()) return it->second;
  const auto it = views_.find(name);
  if (it == views_.end())
    return fail(describe_op(op) + ": input '" + name + "' is not an activation");
  const HeadView& v = it->second;
  const Shape3 base = net_.tensor(v.tensor).shape;
  if (!v.heads_first || v.transposed || v.repeat != 1 || v.offset != 0 || v.batch != 1 ||
      v.heads * v.head_dim != base.c || base.w != 1)
    return fail(describe_op(op) + ": input '" + name +
                "' is a partial, transposed, repeated or batched head view; only a whole [1, "
                "heads, tokens, head_dim] view is read elementwise");
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
GraphConverter::HeadView GraphConverter::token_view(int pixels) {
  auto cached = tokens_of_.find(pixels);
  const Shape3 s = net_.tensor(pixels).shape;
  if (cached == tokens_of_.end()) {
    const int t =
        reshape_view(pixels, net_.tensor(pixels).name + ".tokens", Shape3{s.c * s.w, s.h, 1});
    cached = tokens_of_.emplace(pixels, t).first;
  }
  return HeadView{cached->second, 0, s.w, s.c, true, false};
}

// A Concat of head-pixel tensors along their last axis (their channels): a rotary
// embedding's rotate_half.
bool GraphConverter::concat_of_channels_last(const ir::Op& op) const {
  const auto rank = static_cast<int64_t>(graph_.tensor(op.outputs[0]).shape.size());
  const int64_t axis = op.get_int("axis");
  if (axis != -1 && axis != rank - 1) return false;
  return std::all_of(op.inputs.begin(), op.inputs.end(),
                     [&](const std::string& in) { return is_head_pixels(in); });
}

// ---- Transformers (docs/scheduler-transformers.md "Transformers")
// -----------------------------------

std::string GraphConverter::describe_op(const ir::Op& op) const {
  return "op '" + op.name + "' (" + std::string(ir::to_string(op.kind)) + ")";
}

bool GraphConverter::is_graph_output(const std::string& tensor) const {
  for (const std::string& o : graph_.outputs())
    if (o == tensor) return true;
  return false;
}

bool GraphConverter::only_graph_output(const std::string& tensor) const {
  return consumers_of(tensor).empty() && is_graph_output(tensor);
}

Status GraphConverter::need_unit(const ir::Op& op, bool present, const std::string& unit) const {
  if (present) return {};
  return fail(describe_op(op) + " needs " + unit + "; config '" + machine_.name + "' has none");
}

// The index of a Mul's one-element constant operand, or -1.
int GraphConverter::scalar_constant_operand(const ir::Op& op) const {
  for (size_t i = 0; i < op.inputs.size() && op.inputs.size() == 2; ++i) {
    const ir::Tensor& t = graph_.tensor(op.inputs[i]);
    if (t.constant && ir::element_count(t.shape) == 1) return static_cast<int>(i);
  }
  return -1;
}

// The view of IR tensor `name`: its head view, or a whole net tensor of one head.
Result<GraphConverter::HeadView> GraphConverter::view_of(const ir::Op& op,
                                                         const std::string& name) {
  if (auto it = views_.find(name); it != views_.end()) return it->second;
  auto it = tensor_of_.find(name);
  if (it == tensor_of_.end())
    return fail(describe_op(op) + ": input '" + name + "' is no activation");
  if (head_pixels_.count(it->second)) return token_view(it->second);
  const Shape3 s = net_.tensor(it->second).shape;
  HeadView v{it->second, 0, 1, s.c, true, false};
  // A 3-D [B, S, d] of B * S rows: B sequences of one head.
  const ir::Shape& ir_shape = graph_.tensor(name).shape;
  if (ir_shape.size() == 3 && s.w == 1 && ir_shape[0] * ir_shape[1] == s.h) v.batch = ir_shape[0];
  return v;
}

// A token-wise Linear (a Gemm of [S, K] by a constant [K, N]): a 1x1 conv over the S pixels,
// K input and N output channels.
Status GraphConverter::add_token_linear(const ir::Op& op, Op out) {
  const Shape3 in = net_.tensor(out.inputs[0]).shape;
  Shape3& y = net_.tensors[static_cast<size_t>(out.output)].shape;
  if (y.h * y.w == in.h * in.w) y = Shape3{y.c, in.h, in.w};  // a token-wise op keeps the grid
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
bool GraphConverter::token_alias(const ir::Op& op) {
  const auto it = tensor_of_.find(op.inputs[0]);
  const auto& in = graph_.tensor(op.inputs[0]).shape;
  const auto& out = graph_.tensor(op.outputs[0]).shape;
  const auto rank = [](const ir::Shape& s) { return s.size() == 2 || s.size() == 3; };
  if (it == tensor_of_.end() || !rank(in) || !rank(out) || in.back() != out.back() ||
      ir::element_count(in) != ir::element_count(out) || is_graph_output(op.outputs[0]))
    return false;
  if (net_.tensor(it->second).shape.h <= 1) return false;  // a classifier's flatten stays
  tensor_of_[op.outputs[0]] = it->second;
  return true;
}

// A channel slice of a token tensor (Slice of its last axis, step 1): a DRAM view.
Status GraphConverter::add_slice(const ir::Op& op, Op out) {
  auto x = pixel_tensor(op, op.inputs[0]);
  if (!x.ok()) return x.failure();
  const auto& in = graph_.tensor(op.inputs[0]).shape;
  const auto& starts = op.get_ints("starts");
  const auto& ends = op.get_ints("ends");
  const auto& axes = op.get_ints("axes");
  const auto& steps = op.get_ints("steps");
  int64_t first = 0, first_row = 0;
  // The channel axis: an NCHW map's axis 1; a token tensor's or a [1, heads, tokens,
  // head_dim] head view's last.
  const bool head_view = head_pixels_.count(x.value()) > 0;
  const size_t channel_axis = in.size() == 4 && !head_view ? 1 : in.size() - 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto axis = static_cast<size_t>(axes[i] < 0 ? axes[i] + int64_t(in.size()) : axes[i]);
    const int64_t start =
        std::clamp<int64_t>(starts[i] < 0 ? starts[i] + in[axis] : starts[i], 0, in[axis]);
    const bool whole = start == 0 && ends[i] >= in[axis] && steps[i] == 1;
    // A token tensor's rows: whole sequences (axis 0), or tokens of one sequence (axis 1); a
    // 2-D [N, K] tensor's rows (axis 0: an unrolled recurrence's step of its input projection).
    const bool rows =
        steps[i] == 1 && ((in.size() == 3 && (axis == 0 || (axis == 1 && in[0] == 1))) ||
                          (in.size() == 2 && axis == 0));
    if (axis == channel_axis && steps[i] == 1) {
      first = start;
    } else if (rows && !whole) {
      first_row = start * (axis == 0 && in.size() == 3 ? in[1] : 1);
    } else if (!whole) {
      return fail(describe_op(op) +
                  ": only a slice of the channels (an NCHW map's axis 1, a token tensor's or "
                  "head view's last) " +
                  "or of a token tensor's rows, " +
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
Status GraphConverter::add_split(const ir::Op& op, Op out) {
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

// A Reshape of a token tensor ([S, d] or [S, 1, d]) to [S, heads, d / heads]: an exported
// nn.MultiheadAttention's heads, which add_view_reshape reads as a batch of one's.
bool GraphConverter::head_split_3d(const ir::Op& op) const {
  const auto& x = graph_.tensor(op.inputs[0]).shape;
  const auto& y = graph_.tensor(op.outputs[0]).shape;
  return tensor_of_.count(op.inputs[0]) && (x.size() == 2 || x.size() == 3) && y.size() == 3 &&
         y[0] == x[0] && y[0] > 1 && y.back() != x.back() &&
         ir::element_count(x) == ir::element_count(y);
}

// A Reshape of a token tensor [1, B, S, d] (channels last, B * S rows) to [1, B, S, heads,
// d / heads]: MaxViT's heads of B windows of S pixels, which add_view_reshape reads as the 4-D
// [B, S, heads, d / heads].
bool GraphConverter::head_split_5d(const ir::Op& op) const {
  const auto& x = graph_.tensor(op.inputs[0]).shape;
  const auto& y = graph_.tensor(op.outputs[0]).shape;
  return tensor_of_.count(op.inputs[0]) && !views_.count(op.inputs[0]) && x.size() == 4 &&
         y.size() == 5 && x[0] == 1 && y[0] == 1 && y[1] == x[1] && y[2] == x[2] &&
         y[3] * y[4] == x[3] && channel_axis_of(op.inputs[0]) == 3;
}

// A Reshape that splits a token tensor into heads or merges a head view back, or groups and
// ungroups the heads around grouped-query attention's Expand: no op.
Status GraphConverter::add_view_reshape(const ir::Op& op) {
  ir::Shape y = graph_.tensor(op.outputs[0]).shape;
  if (is_head_pixels(op.inputs[0]) && !views_.count(op.inputs[0]))
    views_[op.inputs[0]] = token_view(tensor_of_.at(op.inputs[0]));
  if (auto it = views_.find(op.inputs[0]); it != views_.end()) {
    HeadView v = it->second;
    const int64_t rows =
        v.heads_first && !v.transposed && v.batch == 1 ? net_.tensor(v.tensor).shape.h : -1;
    if (y.size() == 5 && !v.grouped && v.repeat == 1 && rows > 0 && y[0] == 1 && y[1] == v.heads &&
        y[2] == 1 && y[3] == rows && y[4] == v.head_dim) {
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
    // The merge to tokens [B, S, d] (B 1 or the view's batch), or, from a 3-D view, [S, d] or
    // [S, 1, d] (an exported nn.MultiheadAttention's sequence-first rows): the channels last,
    // the rows (the other axes) the token tensor's, in order.
    int64_t merged_rows = 1;
    for (size_t i = 0; i + 1 < y.size(); ++i) merged_rows *= y[i];
    const bool windows = y.size() == 4 && y[0] == 1;  // MaxViT's [1, G, P, d]: G * P rows
    if (!v.heads_first && v.offset == 0 && v.heads * v.head_dim == base.c && base.w == 1 &&
        y.back() == base.c && merged_rows == base.h &&
        (y.size() == 3 || y.size() == 2 || windows)) {
      tensor_of_[op.outputs[0]] = v.tensor;  // the merged heads are the tensor itself
      if (windows) channel_axis_[op.outputs[0]] = 3;
      return {};
    }
    return fail(describe_op(op) + ": a reshape of a head view other than the merge of its heads");
  }
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  const Shape3 base = net_.tensor(x.value()).shape;
  // [B, S, heads, d / heads] of B * S rows (B sequences, HeadMatMul::batch), or without the
  // batch axis [S, heads, d / heads] (an exported nn.MultiheadAttention's heads: its 3-D views
  // read as the 4-D ones of a batch of one), or [1, B, S, heads, d / heads] (MaxViT's windows).
  if (head_split_5d(op)) y = ir::Shape(y.begin() + 1, y.end());
  const size_t at = y.size() == 4 ? 1 : 0;
  const int64_t batch = y.size() == 4 ? y[0] : 1;
  if ((y.size() != 4 && y.size() != 3) || batch < 1 || batch * y[at] != base.h || base.w != 1 ||
      y[at + 1] * y[at + 2] != base.c)
    return fail(describe_op(op) + ": a reshape to " + ir::shape_string(y) +
                " (only [B, S, d] -> [B, S, heads, d / heads] or [S, d] -> [S, heads, d / "
                "heads] is supported)");
  HeadView v{x.value(), 0, y[at + 1], y[at + 2], false, false};
  v.batch = batch;
  views_[op.outputs[0]] = v;
  return {};
}

// Expand of grouped heads [1, H, 1, S, hd] -> [1, H, G, S, hd] (grouped-query attention's
// repeat_kv): a view in which each stored head serves G heads.
Status GraphConverter::add_expand(const ir::Op& op) {
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

// A Transpose of a token tensor [1, S, d] <-> [S, 1, d] that moves only axes of one element,
// the channels last (nn.MultiheadAttention's export of batch_first inputs, torchvision's ViTs):
// every element stays where it is, so the same token tensor, no op (as token_alias).
bool GraphConverter::token_transpose(const ir::Op& op) {
  const auto it = tensor_of_.find(op.inputs[0]);
  const auto& x = graph_.tensor(op.inputs[0]).shape;
  const auto& perm = op.get_ints("perm");
  if (it == tensor_of_.end() || x.size() != 3 || perm.size() != 3 || perm[2] != 2 ||
      is_graph_output(op.outputs[0]))
    return false;
  if (x[static_cast<size_t>(perm[0])] != 1 && x[static_cast<size_t>(perm[1])] != 1) return false;
  tensor_of_[op.outputs[0]] = it->second;
  return true;
}

// Transposes of head views: (0, 2, 1, 3) swaps heads and tokens, (0, 2, 3, 1) also reads the
// tokens as columns (K^T), (0, 1, 3, 2) on heads-first swaps rows and columns.
Status GraphConverter::add_transpose(const ir::Op& op) {
  auto it = views_.find(op.inputs[0]);
  if (it == views_.end() && token_transpose(op)) return {};
  if (it == views_.end()) return add_layout_transpose(op);
  HeadView v = it->second;
  using P = std::vector<int64_t>;
  // A 3-D view's permutation as the 4-D one of a batch of one.
  P perm = op.get_ints("perm");
  if (perm.size() == 3) perm = P{0, perm[0] + 1, perm[1] + 1, perm[2] + 1};
  // A 5-D view [1, B, ...] of a batch of windows (MaxViT) as the 4-D one without its leading 1.
  if (perm.size() == 5 && perm[0] == 0 && !v.grouped && graph_.tensor(op.inputs[0]).shape[0] == 1)
    perm = P{perm[1] - 1, perm[2] - 1, perm[3] - 1, perm[4] - 1};
  if (v.grouped) return fail(describe_op(op) + ": a transpose of grouped heads is not supported");
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

// Adds `out` reading head view `v`'s tensor, its output a tensor of the same shape, and records
// `op`'s result as the same view of that output.
void GraphConverter::add_view_op(const ir::Op& op, Op out, const HeadView& v) {
  const int t = net_.add_tensor(op.outputs[0], net_.tensor(v.tensor).shape);
  out.inputs = {v.tensor};
  out.output = t;
  net_.add_op(std::move(out));
  HeadView y = v;
  y.tensor = t;
  views_[op.outputs[0]] = y;
}

// An Add or Mul of a constant to a whole heads-first view [B, H, S, n] of a token tensor of
// B * S rows (the scores of Swin's windows plus its relative-position bias [1, H, S, S], or,
// its shift mask folded in, [B, H, S, S]): the constant [1 or B, 1 or H, S, n] is stored
// re-laid as the token tensor's rows (Op::constant_heads), and one sequence's rows broadcast
// over the batch are read again for every sequence (Op::constant_row_period). The output is
// the same view of the result, so the op stays in an attention group (no head-pixel view).
Status GraphConverter::add_view_constant(const ir::Op& op, Op out, size_t c, const HeadView& v) {
  const ir::Shape& k = graph_.tensor(op.inputs[c]).shape;
  const Shape3 base = net_.tensor(v.tensor).shape;
  const int64_t rows = base.h / v.batch;
  const size_t rank = k.size();
  auto dim = [&](size_t from_end) { return from_end <= rank ? k[rank - from_end] : int64_t{1}; };
  bool leading_ones = true;
  for (size_t i = 0; i + 4 < rank; ++i) leading_ones = leading_ones && k[i] == 1;
  if (!v.heads_first || v.transposed || v.repeat != 1 || v.grouped || v.offset != 0 ||
      v.heads * v.head_dim != base.c || base.w != 1 || !leading_ones ||
      (dim(1) != 1 && dim(1) != v.head_dim) || (dim(2) != 1 && dim(2) != rows) ||
      (dim(3) != 1 && dim(3) != v.heads) || (dim(4) != 1 && dim(4) != v.batch) ||
      (dim(4) > 1 && dim(2) == 1))
    return fail(describe_op(op) + ": the constant '" + op.inputs[c] + "' " + ir::shape_string(k) +
                " of a head view of " + std::to_string(v.batch) + " sequence(s) of " +
                std::to_string(rows) + " rows and " + std::to_string(v.heads) + " heads of " +
                std::to_string(v.head_dim) +
                " (only a constant [1 or B, 1 or H, 1 or S, 1 or n], S where B, of a whole "
                "heads-first view [B, H, S, n] is supported by the accelerator path)");
  out.kind = op.kind == ir::OpKind::Mul ? OpKind::Mul : OpKind::Add;  // Sub: add's subtract
  out.constant_operand = true;
  out.constant_heads = v.heads;
  out.constant_head_dim = v.head_dim;
  // One row of constants for every row (a per-head scale [H, 1, 1]), or a row per token.
  const int64_t stored_rows = dim(4) * dim(2);
  out.constant_stride_y = dim(2) == 1 ? 0 : base.c;
  out.constant_row_period = dim(4) == 1 && dim(2) > 1 && v.batch > 1 ? rows : 0;
  out.weight_bytes = stored_rows * base.c * net_.activation_bytes;
  out.vector_elements = base.elements();
  add_view_op(op, std::move(out), v);
  return {};
}

// x * c for a one-element constant c: a unary function of the 8-bit codes, so one table
// lookup (ISA `lut`, the golden rule's every code in the table; attention's 1/sqrt(d)).
Status GraphConverter::add_scalar_mul(const ir::Op& op, Op out) {
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

Status GraphConverter::add_norm(const ir::Op& op, Op out) {
  if (auto s =
          need_unit(op, machine_.row_normalise, "a row normaliser (vector.row_normalise: true)");
      !s.ok())
    return s;
  if (auto v = views_.find(op.inputs[0]); v != views_.end())
    return add_head_norm(op, out, v->second);
  auto x = input_tensor(op, 0);
  if (!x.ok()) return x.failure();
  const auto& in = graph_.tensor(op.inputs[0]).shape;
  int64_t axis = op.get_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(in.size());
  if (axis != static_cast<int64_t>(in.size()) - 1 || axis != channel_axis_of(op.inputs[0]))
    return fail(describe_op(op) + ": only a norm over the last axis, holding the channels, " +
                "is supported (a norm of an NCHW tensor needs its channels moved last first)");
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

// A norm over the last axis of a whole heads-first view [B, H, S, hd] (swin_v2's F.normalize of
// q and k, an RMSNormalization after fuse-l2-normalize): each pixel's channels as H rows of hd
// (Op::row_length), the result the same view.
Status GraphConverter::add_head_norm(const ir::Op& op, Op out, const HeadView& v) {
  const Shape3 base = net_.tensor(v.tensor).shape;
  const auto rank = static_cast<int64_t>(graph_.tensor(op.inputs[0]).shape.size());
  int64_t axis = op.get_int("axis");
  if (axis < 0) axis += rank;
  if (!v.heads_first || v.transposed || v.repeat != 1 || v.grouped || v.offset != 0 ||
      v.heads * v.head_dim != base.c || base.w != 1 || axis != rank - 1)
    return fail(describe_op(op) + ": a norm of a head view other than over the head dimension " +
                "of a whole heads-first view [B, H, S, hd]");
  out.kind = OpKind::Norm;
  out.centre = op.kind == ir::OpKind::LayerNormalization;
  out.row_length = v.head_dim;
  out.weight_bytes = 8 + 16 * v.head_dim;  // E, then per channel of a row int32 G, r, int64 B
  out.vector_elements = base.elements();
  add_view_op(op, std::move(out), v);
  return {};
}

Status GraphConverter::add_row_softmax(const ir::Op& op, Op out) {
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
Status GraphConverter::add_matmul(const ir::Op& op, Op out) {
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
  if (va.batch != vb.batch)
    return fail(describe_op(op) + ": operands of " + std::to_string(va.batch) + " and " +
                std::to_string(vb.batch) + " sequences");
  HeadMatMul& mm = out.matmul;
  mm.heads = va.heads;
  mm.batch = va.batch;
  const int64_t b_rows = net_.tensor(vb.tensor).shape.h / vb.batch;  // per sequence
  mm.m_size = net_.tensor(va.tensor).shape.h / va.batch;
  mm.k_size = va.head_dim;
  mm.transpose_b = vb.transposed;
  mm.n_size = vb.transposed ? b_rows : vb.head_dim;
  const int64_t b_k = vb.transposed ? vb.head_dim : b_rows;
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
  out.macs = mm.batch * mm.heads * mm.m_size * mm.n_size * mm.k_size;
  const int t =
      net_.add_tensor(op.outputs[0], Shape3{mm.heads * mm.n_size, mm.batch * mm.m_size, 1});
  out.output = t;
  HeadView y{t, 0, mm.heads, mm.n_size, true, false};
  y.batch = mm.batch;
  views_[op.outputs[0]] = y;
  net_.add_op(std::move(out));
  return {};
}

// ---- Decode (docs/scheduler-transformers.md "Decode")
// ----------------------------------------------

// A Concat of 3-D token tensors [1, S_i, d] along the tokens (axis 1): the KV cache append.
// Along the sequences (axis 0: a batch of rows, sequence after sequence) or one sequence's
// tokens (axis 1 of [1, S, d]); or of 2-D [N_i, d] rows along axis 0 (an unrolled
// recurrence's steps).
bool GraphConverter::is_token_concat(const ir::Op& op) const {
  const auto& y = graph_.tensor(op.outputs[0]).shape;
  const int64_t axis = op.get_int("axis");
  return (y.size() == 3 && (axis == 0 || axis == -3 || ((axis == 1 || axis == -2) && y[0] == 1))) ||
         (y.size() == 2 && (axis == 0 || axis == -2));
}

// The append as a row view: input i at rows [offset_i, ...) of the output's region, its
// pixels in order (a conv's 14 x 14 patch grid is 196 rows). A network input (the past cache)
// or a constant (ViT's class token: add_dram_constant) is written there in the DRAM image; a
// tensor a group stores (the patch embedding conv's output) is stored there by that group; any
// other input (a view: a channel slice of c_attn's output; a graph output, which keeps its own
// region) is first copied there by a one-input `copy_only` Concat (a network output keeps its
// name: the copy takes the IR tensor's name and the view it reads is renamed `<name>/view`).
Status GraphConverter::add_row_concat(const ir::Op& op, Op out) {
  const auto& y = graph_.tensor(op.outputs[0]).shape;
  int64_t row = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    auto x = graph_.tensor(op.inputs[i]).constant ? add_dram_constant(op, op.inputs[i])
                                                  : input_tensor(op, i);
    if (!x.ok()) return x.failure();
    const Shape3 s = net_.tensor(x.value()).shape;
    if (s.c != y.back())
      return fail(describe_op(op) + ": input '" + op.inputs[i] + "' is not a token tensor of " +
                  std::to_string(y.back()) + " channels");
    int t = x.value();
    if (!network_inputs_.count(t) && !stores_into_rows(t)) {
      auto copied = add_append_copy(op, i, t);
      if (!copied.ok()) return copied.failure();
      t = copied.value();
    }
    out.inputs.push_back(t);
    out.concat_offsets.push_back(row);
    row += s.h * s.w;
  }
  out.kind = OpKind::Concat;
  out.concat_rows = true;
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  out.output = t.value();
  net_.add_op(std::move(out));
  return {};
}

// Whether net tensor `x` can be stored by its producer straight into a row Concat's slice: a
// group stores it (its producer is no view: a Slice, a Reshape or a row Concat is no group's
// store), it is no graph output (which keeps its own region) and no slice of another row Concat
// yet (a tensor lies in one place only).
bool GraphConverter::stores_into_rows(int x) const {
  const Tensor& t = net_.tensor(x);
  for (const Op& op : net_.ops) {
    if (op.output == x &&
        (op.kind == OpKind::Slice || op.kind == OpKind::Reshape || op.kind == OpKind::Concat))
      return false;
    if (op.concat_rows && std::find(op.inputs.begin(), op.inputs.end(), x) != op.inputs.end())
      return false;
  }
  for (const std::string& o : graph_.outputs())
    if (o == t.name) return false;
  return true;
}

// A constant read by a row Concat (ViT's class token): an Input op of that name and type
// "Constant" (is_dram_constant), so that it lies in its row slice as a network input does and the
// DRAM image holds its values (docs/scheduler.md "Constants in DRAM").
Result<int> GraphConverter::add_dram_constant(const ir::Op& op, const std::string& name) {
  if (auto it = tensor_of_.find(name); it != tensor_of_.end()) return it->second;
  if (graph_.tensor(name).shape.size() != 3)
    return fail(describe_op(op) + ": the constant '" + name + "' " +
                ir::shape_string(graph_.tensor(name).shape) + " is not a token tensor [1, S, d]");
  auto s = net_shape(name, op.name);
  if (!s.ok()) return s.failure();
  Op in;
  in.name = name;
  in.type = "Constant";
  in.kind = OpKind::Input;
  const int t = net_.add_tensor(name, s.value());
  in.output = t;
  net_.add_op(std::move(in));
  tensor_of_[name] = t;
  network_inputs_.insert(t);
  return t;
}

// A Gather of consecutive tokens of a token tensor (ViT's class token x[:, 0] before the head):
// a row slice view of them (OpKind::Slice with `row_offset`), as a Slice of the rows is.
Status GraphConverter::add_gather(const ir::Op& op, Op out) {
  const auto& in = graph_.tensor(op.inputs[0]).shape;
  int64_t axis = op.get_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(in.size());
  const auto& indices = op.get_ints("indices");
  bool consecutive = !indices.empty();
  for (size_t i = 1; i < indices.size(); ++i) consecutive &= indices[i] == indices[0] + int64_t(i);
  // The tokens: axis 1 of one sequence [1, S, d], axis 0 of [S, d].
  const bool tokens = (in.size() == 3 && axis == 1 && in[0] == 1) || (in.size() == 2 && axis == 0);
  if (!tokens || !consecutive)
    return fail(describe_op(op) + ": only a Gather of consecutive tokens (rows) of a token " +
                "tensor is supported by the accelerator path");
  auto x = pixel_tensor(op, op.inputs[0]);
  if (!x.ok()) return x.failure();
  out.kind = OpKind::Slice;
  out.inputs = {x.value()};
  out.row_offset = indices[0];
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  const Shape3 xs = net_.tensor(x.value()).shape, ys = net_.tensor(t.value()).shape;
  if (xs.w != 1 || ys.c != xs.c || ys.h * ys.w != static_cast<int64_t>(indices.size()))
    return fail(describe_op(op) + ": " + ir::shape_string(graph_.tensor(op.outputs[0]).shape) +
                " is not a row slice of '" + op.inputs[0] + "'");
  out.output = t.value();
  net_.add_op(std::move(out));
  return {};
}

// An Embedding (rows of a constant table [V, d] by the token ids of a graph input): the load
// phase's gather fills its output's tile; its DRAM weights are the rows it gathers.
Status GraphConverter::add_embedding(const ir::Op& op, Op out) {
  const ir::Tensor& table = graph_.tensor(op.inputs[1]);
  if (!table.constant || table.shape.size() != 2)
    return fail(describe_op(op) + ": the table '" + op.inputs[1] + "' is not a constant [V, d]");
  auto ids = tensor_of_.find(op.inputs[0]);
  if (ids == tensor_of_.end() || !network_inputs_.count(ids->second))
    return fail(describe_op(op) + ": its ids '" + op.inputs[0] + "' are not a graph input");
  out.kind = OpKind::Embedding;
  out.inputs = {ids->second};
  auto t = new_tensor(op.outputs[0], op.name);
  if (!t.ok()) return t.failure();
  const Shape3 y = net_.tensor(t.value()).shape;
  const Shape3 x = net_.tensor(ids->second).shape;
  if (y.c != table.shape[1] || y.w != 1 || y.h != x.h)
    return fail(describe_op(op) + ": its output " +
                ir::shape_string(graph_.tensor(op.outputs[0]).shape) + " is not one row of '" +
                op.inputs[1] + "' a token");
  out.output = t.value();
  out.table_rows = table.shape[0];
  out.gather_row_bytes = y.c * net_.activation_bytes;
  net_.add_op(std::move(out));
  return {};
}

// The copy of input `i` (net tensor `x`) of row Concat `op` into its row slice.
Result<int> GraphConverter::add_append_copy(const ir::Op& op, size_t i, int x) {
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

}  // namespace tessel::sched::detail
