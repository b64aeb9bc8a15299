// Operators of the graph IR: the ordered op enum, attributes and each kind's schema.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/result.hpp"

namespace tessel::ir {

/// Every operator the IR knows, in a fixed order (the order is part of the JSON/text contract
/// only through the names; values may be appended). Inputs are listed as the op expects them;
/// `[x]` marks an optional input. Semantics follow ONNX unless stated.
enum class OpKind : std::uint8_t {
  // --- graph boundary -----------------------------------------------------------------------
  Input,  ///< () -> x. A graph input; its tensor carries shape and dtype.

  // --- compute-heavy (matrix unit) ------------------------------------------------------------
  Conv,  ///< (x, w, [b]) -> y. 2-D convolution, NCHW/OIHW. attrs: kernel (kh,kw), stride,
         ///< pad (top,left,bottom,right), dilation, group (group == C_in == C_out: depthwise).
  Gemm,  ///< (a, b, [c]) -> y = alpha * a * op(b) + beta * c. attrs: transB, alpha, beta.
         ///< a is [M,K]; b is [N,K] when transB=1 (torchvision's Linear) else [K,N].

  // --- pooling --------------------------------------------------------------------------------
  MaxPool,            ///< (x) -> y. attrs: kernel, stride, pad, dilation, ceil_mode.
  AveragePool,        ///< (x) -> y. attrs: kernel, stride, pad, ceil_mode, count_include_pad.
  GlobalAveragePool,  ///< (x) -> y, [N,C,H,W] -> [N,C,1,1].

  // --- elementwise (vector unit) --------------------------------------------------------------
  Relu,  ///< (x) -> max(x, 0).
  Clip,  ///< (x) -> min(max(x, min), max). attrs: min, max (ReLU6: 0, 6). ONNX passes them as
         ///< inputs since opset 11; the importer turns constant inputs into these attributes.
  Add,   ///< (a, b) -> a + b, broadcasting as NumPy (residual joins have equal shapes).
  BatchNormalization,  ///< (x, gamma, beta, mean, var) -> y, inference form. attrs: epsilon.
  Scale,  ///< (x, scale, [bias]) -> x * scale[c] + bias[c]: Caffe's Scale layer, per channel
          ///< along axis 1. Produced by split-batchnorm / fold-batchnorm on a BN without conv.

  // --- data movement --------------------------------------------------------------------------
  Concat,   ///< (x0, x1, ...) -> y. attrs: axis.
  Split,    ///< (x) -> (y0, y1, ...). attrs: axis, split (sizes). Made by combine-parallel-conv.
  Pad,      ///< (x) -> y. attrs: pads (ONNX order: all begins, then all ends), value.
  Flatten,  ///< (x) -> y, [d0..d(axis-1)] x [rest]. attrs: axis.
  Reshape,  ///< (x) -> y. attrs: shape (ONNX rules: 0 copies the input dim, -1 is inferred).
  Softmax,  ///< (x, [mask]) -> y. attrs: axis. `mask`, a constant broadcast to x, leaves the
            ///< positions where it is 0 out of the maximum and the sum (their result is 0).

  // --- quantization (added by compiler/quant) -------------------------------------------------
  Quantize,    ///< (x:f32) -> q. Output tensor's QuantParams give scale/zero point.
  Dequantize,  ///< (q) -> x:f32 using the input tensor's QuantParams.
  Requantize,  ///< (acc:i32) -> q. Rescale from the input's scale to the output's scale
  ///< (fixed-point multiplier/shift chosen by the quantizer; see docs/quantization.md).

  // --- modern workloads (transformers, today's CNNs); docs/quantization.md gives each its
  // integer semantics. Binary elementwise ops broadcast as NumPy does. -----------------------
  MatMul,  ///< (a, b) -> y. NumPy matmul: [..., M, K] x [..., K, N], batch dims broadcast; both
           ///< operands may be activations. Integer operands accumulate in i32 (as Conv).
  Sub,     ///< (a, b) -> a - b, broadcasting.
  Mul,     ///< (a, b) -> a * b, broadcasting.
  Div,     ///< (a, b) -> a / b, broadcasting (float; a constant divisor becomes a Mul).
  Pow,     ///< (a, b, [table]) -> a ^ b, broadcasting (float; on integers the exponent is a
           ///< constant scalar and `table` the unary table of x -> x ^ b).
  Where,   ///< (cond, a, b) -> cond != 0 ? a : b, broadcasting; cond is a constant.
  // Unary functions: (x, [table]) -> y. On integers every one is a table (256 entries for an
  // 8-bit input, 257 interpolated for 16 bits; docs/quantization.md) that the quantizer fills
  // from the float function and passes as the i32 constant input `table`.
  Sigmoid,      ///< 1 / (1 + exp(-x)).
  HardSigmoid,  ///< max(0, min(1, alpha * x + beta)). attrs: alpha, beta.
  HardSwish,    ///< x * max(0, min(1, x / 6 + 1 / 2)).
  Tanh,         ///< tanh(x).
  Erf,          ///< erf(x).
  Gelu,         ///< x * Phi(x). attrs: approximate ("none": the erf form, "tanh").
  Silu,         ///< x * sigmoid(x) (Tessel's; made by the fuse-patterns pass from Mul+Sigmoid).
  Sqrt,         ///< sqrt(x).
  Exp,          ///< exp(x).
  Reciprocal,   ///< 1 / x.
  Neg,          ///< -x.
  // Normalisation and reductions.
  LayerNormalization,  ///< (x, scale, [bias]) -> y over the dims from `axis` on. attrs: axis,
                       ///< epsilon. Integer: int64 sums, integer rsqrt (docs/quantization.md).
  RMSNormalization,    ///< (x, scale) -> x / sqrt(mean(x^2) + epsilon) * scale. attrs: axis,
                       ///< epsilon (ONNX opset 23's op; older exports are recognised by a pass).
  ReduceMean,          ///< (x) -> y. attrs: axes (empty: all), keepdims.
  ReduceSum,           ///< (x) -> y. attrs: axes (empty: all), keepdims.
  ReduceMax,           ///< (x) -> y. attrs: axes (empty: all), keepdims.
  // Data movement (integers keep their scale).
  Transpose,  ///< (x) -> y. attrs: perm.
  Slice,      ///< (x) -> y. attrs: starts, ends, axes, steps (normalised: every axis listed
              ///< once, 0 <= start, ends clamped, steps > 0 or < 0 as ONNX).
  Gather,     ///< (x) -> y, constant indices along `axis`. attrs: axis, indices, indices_shape
              ///< (empty: one scalar index, which removes the axis).
  Expand,     ///< (x) -> y broadcast to `shape`. attrs: shape.
  Trilu,      ///< (x) -> y, the lower (upper = 0) or upper triangle of the last two dims from
              ///< diagonal k on, the rest 0. attrs: upper, k.
  Resize,     ///< (x) -> y. attrs: mode ("nearest", "linear"), sizes (output shape),
              ///< coordinate_transformation_mode, nearest_mode.
  Embedding,  ///< (ids, table) -> y: y[i..., :] = table[ids[i...], :]. `ids` is an i32
              ///< activation (token ids, a graph input), `table` a constant [V, d...]; an id
              ///< in [-V, 0) counts from the end (ONNX Gather), one outside [-V, V) is an
              ///< error naming the op and the position. Integers keep the
              ///< table's codes (the table is a constant of the output's scale class).
};

/// Number of op kinds (for tables indexed by kind).
inline constexpr int kOpKindCount = static_cast<int>(OpKind::Embedding) + 1;

/// "Conv", "BatchNormalization", ...: the ONNX op_type where one exists.
std::string_view to_string(OpKind kind);
/// Inverse of to_string; failure names the unknown spelling and suggests a close one.
Result<OpKind> parse_op_kind(std::string_view text);

/// An attribute value: an integer, a float, an integer list, a float list or a string.
using AttrValue =
    std::variant<std::int64_t, double, std::vector<std::int64_t>, std::vector<double>, std::string>;
enum class AttrType : std::uint8_t { Int, Float, Ints, Floats, String };
AttrType attr_type(const AttrValue& value);
std::string_view to_string(AttrType type);

/// One attribute an op kind accepts. `default_value` is nullopt for a required attribute.
struct AttrSpec {
  std::string_view name;
  AttrType type;
  std::optional<AttrValue> default_value;
  std::string_view doc;
};

/// What an op kind accepts: input/output counts (max -1 = any number), attributes in their
/// canonical (print) order, and a one-line summary.
struct OpSchema {
  OpKind kind;
  std::string_view name;
  int min_inputs, max_inputs;
  int min_outputs, max_outputs;
  std::vector<AttrSpec> attrs;
  std::string_view summary;

  const AttrSpec* find_attr(std::string_view attr_name) const;
};

/// The schema of `kind` (a static table).
const OpSchema& schema(OpKind kind);

/// Attributes by name. Ops created through Graph::add_op hold every schema attribute:
/// defaults are filled in, unknown names are rejected.
using Attrs = std::map<std::string, AttrValue, std::less<>>;

/// An operator instance. `inputs`/`outputs` name tensors of the owning graph.
struct Op {
  std::string name;
  OpKind kind = OpKind::Input;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  Attrs attrs;

  /// Typed attribute access; the attribute must exist with that type (schema-checked ops do).
  std::int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  const std::vector<std::int64_t>& get_ints(std::string_view key) const;
  const std::vector<double>& get_floats(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;

  friend bool operator==(const Op&, const Op&) = default;
};

/// Fills defaults and checks names/types of `attrs` against `kind`'s schema; the failure message
/// names the attribute ("Conv: unknown attribute 'strides'; did you mean 'stride'?").
Result<Attrs> complete_attrs(OpKind kind, Attrs attrs);

/// The 2-D window geometry shared by Conv, MaxPool and AveragePool, read from attributes.
struct WindowGeometry {
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t group = 1;  ///< Conv only; 1 for pools
  bool ceil_mode = false;  ///< pools only

  /// Output extent along one axis (ONNX formula, floor or ceil; a ceil-mode window must start
  /// inside the padded input, as in PyTorch).
  std::int64_t output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                             std::int64_t pad_begin, std::int64_t pad_end,
                             std::int64_t dilation) const;
  std::int64_t output_h(std::int64_t input_h) const;
  std::int64_t output_w(std::int64_t input_w) const;
  friend bool operator==(const WindowGeometry&, const WindowGeometry&) = default;
};

/// Geometry of a Conv, MaxPool or AveragePool op.
WindowGeometry window_geometry(const Op& op);

/// How a diagnostic names an op: "%name (Kind)".
std::string where(const Op& op);

}  // namespace tessel::ir
