// (internal) The graph IR -> Net converter behind net_from_graph, one class whose methods are
// defined by concept: from_ir.cpp (the per-kind rules of the CNN kinds, the generic path, Mul by
// a constant), from_ir_transformer.cpp (head pixels, head views, the transformer kinds, decode's
// row Concat), from_ir_layout.cpp (layout views: channels at another axis than the default)
// and from_ir_gather.cpp (pixel views: the pixels in another order, stored as gathers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/net.hpp"
#include "support/result.hpp"

namespace tessel::sched::detail {

inline constexpr int64_t kBiasBytes = 4;

/// Whether an op of `kind` computes each output pixel from the same pixel of its inputs, every
/// pixel's channels alike (elementwise ops, unary functions, norms over the channels): its
/// output keeps its input's layout and pixel grid (from_ir_layout.cpp).
bool reads_pixels_alike(ir::OpKind kind);

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

  Status add(const ir::Op& op);
  Net take();

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
    /// Sequences of the token tensor's rows ([B, S, heads, hd] of B * S rows; HeadMatMul::batch).
    int64_t batch = 1;
  };

  /// A pixel view: an IR tensor with its channels at `channel_axis` whose pixel p (row-major
  /// over its other axes) is pixel source[p] of net tensor `base` (from_ir_gather.cpp).
  struct PixelView {
    int base = -1;
    std::vector<int64_t> source;
    int64_t channel_axis = -1;
  };
  struct PixelHead {
    int base = -1;
    int64_t channel_axis = -1;
  };

  auto consumers_of(const std::string& t) const { return graph_.consumers(t); }

  // ---- from_ir.cpp: the per-kind rules, the generic path, Mul by a constant
  Result<int> input_tensor(const ir::Op& op, size_t i);
  Result<int> new_tensor(const std::string& name, const std::string& op_name);
  Op* foldable_producer(const ir::Op& op, int x);
  Status add_input(const ir::Op& op, Op out);
  Status add_conv(const ir::Op& op, Op out);
  Status add_batch_norm(const ir::Op& op, Op out);
  Status add_gemm(const ir::Op& op, Op out);
  void mark_pool_by_conv(const ir::Op& op, Op& out) const;
  Status add_lookup_table(const ir::Op& op, Op out);
  Status add_mul(const ir::Op& op, Op out);
  Status add_constant_operand(const ir::Op& op, Op out, size_t c);
  /// Add or Mul of constant `op.inputs[c]` to head view `v` (from_ir_transformer.cpp).
  Status add_view_constant(const ir::Op& op, Op out, size_t c, const HeadView& v);
  /// Adds `out` on head view `v`'s tensor; `op`'s result is the same view of its output.
  void add_view_op(const ir::Op& op, Op out, const HeadView& v);
  /// A Norm over the head dimension of head view `v` (from_ir_transformer.cpp).
  Status add_head_norm(const ir::Op& op, Op out, const HeadView& v);
  Status fold_activation(const ir::Op& op, bool& folded);
  Status generic_kind(const ir::Op& op, Op& out) const;
  Status add_generic(const ir::Op& op, Op out);

  // ---- from_ir_transformer.cpp: head pixels (rotary embeddings)
  bool is_head_pixels(const std::string& name) const;
  bool reads_head_pixels(const std::string& op_name) const;
  int reshape_view(int x, const std::string& name, Shape3 shape);
  Result<int> pixel_tensor(const ir::Op& op, const std::string& name);
  HeadView token_view(int pixels);
  bool concat_of_channels_last(const ir::Op& op) const;

  // ---- from_ir_transformer.cpp: transformers (head views, MatMul, Norm, RowSoftmax)
  std::string describe_op(const ir::Op& op) const;
  bool is_graph_output(const std::string& tensor) const;
  bool only_graph_output(const std::string& tensor) const;
  Status need_unit(const ir::Op& op, bool present, const std::string& unit) const;
  int scalar_constant_operand(const ir::Op& op) const;
  Result<HeadView> view_of(const ir::Op& op, const std::string& name);
  Status add_token_linear(const ir::Op& op, Op out);
  bool token_alias(const ir::Op& op);
  Status add_slice(const ir::Op& op, Op out);
  Status add_split(const ir::Op& op, Op out);
  Status add_view_reshape(const ir::Op& op);
  bool head_split_3d(const ir::Op& op) const;
  bool head_split_5d(const ir::Op& op) const;
  bool token_transpose(const ir::Op& op);
  Status add_expand(const ir::Op& op);
  Status add_transpose(const ir::Op& op);
  Status add_scalar_mul(const ir::Op& op, Op out);
  Status add_norm(const ir::Op& op, Op out);
  Status add_row_softmax(const ir::Op& op, Op out);
  Status add_matmul(const ir::Op& op, Op out);

  // ---- from_ir_transformer.cpp: row Concat views (decode's KV cache append, ViT's class
  // token) and row selection (a Gather of tokens)
  bool is_token_concat(const ir::Op& op) const;
  Status add_row_concat(const ir::Op& op, Op out);
  Result<int> add_append_copy(const ir::Op& op, size_t i, int x);
  bool stores_into_rows(int x) const;
  Result<int> add_dram_constant(const ir::Op& op, const std::string& name);
  Status add_gather(const ir::Op& op, Op out);
  Status add_embedding(const ir::Op& op, Op out);

  // ---- from_ir_gather.cpp: pixel views
  std::optional<PixelHead> pixel_head(const std::string& name) const;
  std::optional<PixelView> pixel_view(const std::string& name) const;
  bool pixel_reshape_applies(const ir::Op& op) const;
  bool pixel_transpose_applies(const ir::Op& op) const;
  bool pixel_slice_applies(const ir::Op& op) const;
  bool pixel_concat_applies(const ir::Op& op) const;
  bool continues_pixel_view(const ir::Op& op) const;
  bool takes_pixel_view(const ir::Op& op) const;
  Status add_pixel_op(const ir::Op& op);
  Status add_pixel_reshape(const ir::Op& op);
  Status add_pixel_transpose(const ir::Op& op);
  Status add_pixel_slice(const ir::Op& op);
  Status add_pixel_concat(const ir::Op& op);
  bool keeps_grid(const ir::Op& op) const;
  std::optional<Shape3> grid_met_downstream(const std::string& name, Shape3 s) const;
  Status materialize_pixel_views(const ir::Op& op);

 public:
  Status check_pixel_outputs() const;

 private:
  // ---- from_ir_layout.cpp: layout views
  int64_t channel_axis_of(const std::string& name) const;
  Result<Shape3> net_shape(const std::string& name, const std::string& op_name);
  Status carry_layout(const ir::Op& op);
  Status alias_layout(const ir::Op& op, int x, const std::string& name, int64_t axis);
  Status add_layout_transpose(const ir::Op& op);
  bool layout_reshape_applies(const ir::Op& op) const;
  Status add_layout_reshape(const ir::Op& op);

  const ir::Graph& graph_;
  const Machine& machine_;
  const NetForm form_;
  const MapSpaceFeatures& features_;
  Net net_;
  std::map<std::string, int, std::less<>> tensor_of_;   // IR tensor name -> Net tensor
  std::map<std::string, HeadView, std::less<>> views_;  // IR tensor name -> its head view
  std::set<int> network_inputs_;                        // Net tensors of Input ops
  std::set<int> head_pixels_;                           // Net tensors in head-pixel form
  std::map<int, int> pixels_of_;     // token tensor -> its head-pixel Reshape view
  std::map<int, int> tokens_of_;     // head-pixel tensor -> its token Reshape view
  std::vector<int> copied_outputs_;  // append copies of graph outputs (which have a consumer)
  std::map<std::string, int64_t, std::less<>> channel_axis_;  // IR tensor -> its channel axis
  std::optional<Shape3> grid_hint_;  // the pixel grid the op being added keeps
  std::map<std::string, PixelView, std::less<>> pixel_views_;     // IR tensor -> its pixel view
  std::map<std::string, std::string, std::less<>> pixel_makers_;  // IR tensor -> its IR op
};

}  // namespace tessel::sched::detail
