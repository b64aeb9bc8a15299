// The op schema table, attribute checking and window geometry.
#include "compiler/ir/op.hpp"

#include <array>
#include <cassert>
#include <stdexcept>

#include "support/strings.hpp"

// GCC 12 at -O2 reports the empty-vector defaults below (AttrValue(Ints{})) as maybe
// uninitialised inside std::variant's destructor: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace tessel::ir {
namespace {

using Ints = std::vector<std::int64_t>;

AttrSpec kernel_attr() {
  return {"kernel", AttrType::Ints, std::nullopt, "window height, width"};
}
AttrSpec stride_attr() {
  return {"stride", AttrType::Ints, AttrValue(Ints{1, 1}), "step along height, width"};
}
AttrSpec pad_attr() {
  return {"pad", AttrType::Ints, AttrValue(Ints{0, 0, 0, 0}),
          "zero padding top, left, bottom, right"};
}
AttrSpec dilation_attr() {
  return {"dilation", AttrType::Ints, AttrValue(Ints{1, 1}), "window dilation height, width"};
}
AttrSpec ceil_attr() {
  return {"ceil_mode", AttrType::Int, AttrValue(std::int64_t{0}), "1: round the output size up"};
}

// Quantized graphs: the first input's codes are rounded right by this many bits (round half
// away) before the products (docs/quantization.md, "Input shift on Conv/Gemm").
AttrSpec input_shift_attr() {
  return {"input_shift", AttrType::Int, AttrValue(std::int64_t{0}),
          "quantized: x rounded right by this many bits before the products"};
}

std::vector<AttrSpec> reduce_attrs() {
  return {{"axes", AttrType::Ints, AttrValue(Ints{}), "reduced axes ([]: every axis)"},
          {"keepdims", AttrType::Int, AttrValue(std::int64_t{1}), "1: keep reduced axes as 1"}};
}

std::vector<OpSchema> build_schemas() {
  const int any = -1;
  std::vector<OpSchema> table = {
      {OpKind::Input, "Input", 0, 0, 1, 1, {}, "graph input"},
      {OpKind::Conv,
       "Conv",
       2,
       3,
       1,
       1,
       {kernel_attr(),
        stride_attr(),
        pad_attr(),
        dilation_attr(),
        {"group", AttrType::Int, AttrValue(std::int64_t{1}), "channel groups"},
        input_shift_attr()},
       "2-D convolution (NCHW x OIHW)"},
      {OpKind::Gemm,
       "Gemm",
       2,
       3,
       1,
       1,
       {{"transB", AttrType::Int, AttrValue(std::int64_t{0}), "1: B is [N,K]"},
        {"alpha", AttrType::Float, AttrValue(1.0), "product scale"},
        {"beta", AttrType::Float, AttrValue(1.0), "bias scale"},
        input_shift_attr()},
       "general matrix multiply, alpha*A*op(B) + beta*C"},
      {OpKind::MaxPool,
       "MaxPool",
       1,
       1,
       1,
       1,
       {kernel_attr(), stride_attr(), pad_attr(), dilation_attr(), ceil_attr()},
       "2-D max pooling"},
      {OpKind::AveragePool,
       "AveragePool",
       1,
       1,
       1,
       1,
       {kernel_attr(),
        stride_attr(),
        pad_attr(),
        ceil_attr(),
        {"count_include_pad", AttrType::Int, AttrValue(std::int64_t{0}),
         "1: divide by the full window, padding included"}},
       "2-D average pooling"},
      {OpKind::GlobalAveragePool,
       "GlobalAveragePool",
       1,
       1,
       1,
       1,
       {},
       "mean over height and width"},
      {OpKind::Relu, "Relu", 1, 1, 1, 1, {}, "max(x, 0)"},
      {OpKind::Clip,
       "Clip",
       1,
       1,
       1,
       1,
       {{"min", AttrType::Float, AttrValue(-3.4028234663852886e38), "lower bound"},
        {"max", AttrType::Float, AttrValue(3.4028234663852886e38), "upper bound"}},
       "clamp to [min, max]"},
      {OpKind::Add, "Add", 2, 2, 1, 1, {}, "elementwise sum"},
      {OpKind::BatchNormalization,
       "BatchNormalization",
       5,
       5,
       1,
       1,
       {{"epsilon", AttrType::Float, AttrValue(1e-5), "added to the variance"}},
       "inference batch normalization"},
      {OpKind::Scale, "Scale", 2, 3, 1, 1, {}, "per-channel x*scale + bias (Caffe Scale)"},
      {OpKind::Concat,
       "Concat",
       1,
       any,
       1,
       1,
       {{"axis", AttrType::Int, std::nullopt, "concatenation axis"}},
       "concatenation"},
      {OpKind::Split,
       "Split",
       1,
       1,
       1,
       any,
       {{"axis", AttrType::Int, std::nullopt, "split axis"},
        {"split", AttrType::Ints, std::nullopt, "output sizes along the axis"}},
       "split into consecutive slices"},
      {OpKind::Pad,
       "Pad",
       1,
       1,
       1,
       1,
       {{"pads", AttrType::Ints, std::nullopt, "begins of every axis, then ends"},
        {"value", AttrType::Float, AttrValue(0.0), "fill value"}},
       "constant padding"},
      {OpKind::Flatten,
       "Flatten",
       1,
       1,
       1,
       1,
       {{"axis", AttrType::Int, AttrValue(std::int64_t{1}), "first flattened axis"}},
       "flatten to 2-D"},
      {OpKind::Reshape,
       "Reshape",
       1,
       1,
       1,
       1,
       {{"shape", AttrType::Ints, std::nullopt, "target shape (0 copies, -1 infers)"}},
       "reshape"},
      {OpKind::Softmax,
       "Softmax",
       1,
       2,
       1,
       1,
       {{"axis", AttrType::Int, AttrValue(std::int64_t{-1}), "normalised axis"}},
       "softmax"},
      {OpKind::Quantize, "Quantize", 1, 1, 1, 1, {}, "f32 -> integer with the output's params"},
      {OpKind::Dequantize, "Dequantize", 1, 1, 1, 1, {}, "integer -> f32 with the input's params"},
      {OpKind::Requantize,
       "Requantize",
       1,
       1,
       1,
       1,
       {},
       "integer rescale from the input's to the output's params"},
      {OpKind::MatMul,
       "MatMul",
       2,
       2,
       1,
       1,
       {input_shift_attr(),
        {"operand_shift", AttrType::Int, AttrValue(std::int64_t{-1}),
         "quantized, two activations: both operands rounded right by this many bits (-1: the "
         "dtypes' rule, docs/quantization.md)"}},
       "NumPy matmul, batch dims broadcast"},
      {OpKind::Sub, "Sub", 2, 2, 1, 1, {}, "elementwise difference, broadcasting"},
      {OpKind::Mul, "Mul", 2, 2, 1, 1, {}, "elementwise product, broadcasting"},
      {OpKind::Div, "Div", 2, 2, 1, 1, {}, "elementwise quotient, broadcasting"},
      {OpKind::Pow,
       "Pow",
       2,
       3,
       1,
       1,
       {},
       "elementwise power, broadcasting ([table] when quantized)"},
      {OpKind::Where, "Where", 3, 3, 1, 1, {}, "select by a condition, broadcasting"},
      {OpKind::Sigmoid, "Sigmoid", 1, 2, 1, 1, {}, "logistic sigmoid"},
      {OpKind::HardSigmoid,
       "HardSigmoid",
       1,
       2,
       1,
       1,
       {{"alpha", AttrType::Float, AttrValue(0.2), "slope"},
        {"beta", AttrType::Float, AttrValue(0.5), "offset"}},
       "max(0, min(1, alpha*x + beta))"},
      {OpKind::HardSwish, "HardSwish", 1, 2, 1, 1, {}, "x * relu6(x + 3) / 6"},
      {OpKind::Tanh, "Tanh", 1, 2, 1, 1, {}, "hyperbolic tangent"},
      {OpKind::Erf, "Erf", 1, 2, 1, 1, {}, "error function"},
      {OpKind::Gelu,
       "Gelu",
       1,
       2,
       1,
       1,
       {{"approximate", AttrType::String, AttrValue(std::string("none")), "none | tanh"}},
       "Gaussian error linear unit"},
      {OpKind::Silu, "Silu", 1, 2, 1, 1, {}, "x * sigmoid(x)"},
      {OpKind::Sqrt, "Sqrt", 1, 2, 1, 1, {}, "square root"},
      {OpKind::Exp, "Exp", 1, 2, 1, 1, {}, "exponential"},
      {OpKind::Reciprocal, "Reciprocal", 1, 2, 1, 1, {}, "1 / x"},
      {OpKind::Neg, "Neg", 1, 2, 1, 1, {}, "-x"},
      {OpKind::LayerNormalization,
       "LayerNormalization",
       2,
       3,
       1,
       1,
       {{"axis", AttrType::Int, AttrValue(std::int64_t{-1}), "first normalised axis"},
        {"epsilon", AttrType::Float, AttrValue(1e-5), "added to the variance"}},
       "layer normalisation"},
      {OpKind::RMSNormalization,
       "RMSNormalization",
       2,
       2,
       1,
       1,
       {{"axis", AttrType::Int, AttrValue(std::int64_t{-1}), "first normalised axis"},
        {"epsilon", AttrType::Float, AttrValue(1e-5), "added to the mean square"}},
       "root-mean-square normalisation"},
      {OpKind::ReduceMean, "ReduceMean", 1, 1, 1, 1, reduce_attrs(), "mean over axes"},
      {OpKind::ReduceSum, "ReduceSum", 1, 1, 1, 1, reduce_attrs(), "sum over axes"},
      {OpKind::ReduceMax, "ReduceMax", 1, 1, 1, 1, reduce_attrs(), "maximum over axes"},
      {OpKind::Transpose,
       "Transpose",
       1,
       1,
       1,
       1,
       {{"perm", AttrType::Ints, std::nullopt, "output axis d is input axis perm[d]"}},
       "permute axes"},
      {OpKind::Slice,
       "Slice",
       1,
       1,
       1,
       1,
       {{"starts", AttrType::Ints, std::nullopt, "first index per listed axis"},
        {"ends", AttrType::Ints, std::nullopt, "end (exclusive) per listed axis"},
        {"axes", AttrType::Ints, std::nullopt, "the sliced axes"},
        {"steps", AttrType::Ints, std::nullopt, "step per listed axis (non-zero)"}},
       "strided slice"},
      {OpKind::Gather,
       "Gather",
       1,
       1,
       1,
       1,
       {{"axis", AttrType::Int, AttrValue(std::int64_t{0}), "gathered axis"},
        {"indices", AttrType::Ints, std::nullopt, "constant indices (non-negative)"},
        {"indices_shape", AttrType::Ints, AttrValue(Ints{}), "their shape ([]: a scalar)"}},
       "select entries along an axis"},
      {OpKind::Expand,
       "Expand",
       1,
       1,
       1,
       1,
       {{"shape", AttrType::Ints, std::nullopt, "output shape"}},
       "broadcast to a shape"},
      {OpKind::Trilu,
       "Trilu",
       1,
       1,
       1,
       1,
       {{"upper", AttrType::Int, AttrValue(std::int64_t{1}), "1: keep the upper triangle"},
        {"k", AttrType::Int, AttrValue(std::int64_t{0}), "diagonal offset"}},
       "triangle of the last two dims"},
      {OpKind::Resize,
       "Resize",
       1,
       1,
       1,
       1,
       {{"mode", AttrType::String, AttrValue(std::string("nearest")), "nearest | linear"},
        {"sizes", AttrType::Ints, std::nullopt, "output shape"},
        {"coordinate_transformation_mode", AttrType::String, AttrValue(std::string("half_pixel")),
         "half_pixel | asymmetric | align_corners | pytorch_half_pixel"},
        {"nearest_mode", AttrType::String, AttrValue(std::string("round_prefer_floor")),
         "round_prefer_floor | round_prefer_ceil | floor | ceil"}},
       "nearest or (bi)linear resize"},
      {OpKind::Embedding, "Embedding", 2, 2, 1, 1, {}, "rows of a constant table by token id"},
  };
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (static_cast<std::size_t>(table[i].kind) != i) throw std::logic_error("op schema order");
  }
  return table;
}

const std::vector<OpSchema>& schemas() {
  static const std::vector<OpSchema> table = build_schemas();
  return table;
}

template <class T>
const T& get_typed(const Op& op, std::string_view key) {
  const auto it = op.attrs.find(key);
  if (it == op.attrs.end()) {
    throw std::logic_error(op.name + ": missing attribute '" + std::string(key) + "'");
  }
  const T* value = std::get_if<T>(&it->second);
  if (!value) throw std::logic_error(op.name + ": attribute '" + std::string(key) + "' type");
  return *value;
}

}  // namespace

std::string_view to_string(OpKind kind) {
  return schema(kind).name;
}

Result<OpKind> parse_op_kind(std::string_view text) {
  std::vector<std::string> names;
  for (const OpSchema& entry : schemas()) {
    if (entry.name == text) return entry.kind;
    names.emplace_back(entry.name);
  }
  return fail("unknown op '" + std::string(text) + "'" + did_you_mean(text, names));
}

AttrType attr_type(const AttrValue& value) {
  return static_cast<AttrType>(value.index());
}

std::string_view to_string(AttrType type) {
  static constexpr std::array<std::string_view, 5> names = {"int", "float", "ints", "floats",
                                                            "string"};
  return names[static_cast<std::size_t>(type)];
}

const AttrSpec* OpSchema::find_attr(std::string_view attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  return nullptr;
}

const OpSchema& schema(OpKind kind) {
  return schemas()[static_cast<std::size_t>(kind)];
}

std::int64_t Op::get_int(std::string_view key) const {
  return get_typed<std::int64_t>(*this, key);
}
double Op::get_float(std::string_view key) const {
  return get_typed<double>(*this, key);
}
const std::vector<std::int64_t>& Op::get_ints(std::string_view key) const {
  return get_typed<std::vector<std::int64_t>>(*this, key);
}
const std::vector<double>& Op::get_floats(std::string_view key) const {
  return get_typed<std::vector<double>>(*this, key);
}
const std::string& Op::get_string(std::string_view key) const {
  return get_typed<std::string>(*this, key);
}

Result<Attrs> complete_attrs(OpKind kind, Attrs attrs) {
  const OpSchema& entry = schema(kind);
  std::vector<std::string> names;
  for (const AttrSpec& spec : entry.attrs) names.emplace_back(spec.name);
  for (auto& [key, value] : attrs) {
    const AttrSpec* spec = entry.find_attr(key);
    if (!spec) {
      return fail(std::string(entry.name) + ": unknown attribute '" + key + "'" +
                  did_you_mean(key, names));
    }
    // An integer given where a float is expected is widened (ONNX files do this).
    if (spec->type == AttrType::Float && attr_type(value) == AttrType::Int) {
      value = static_cast<double>(std::get<std::int64_t>(value));
    } else if (spec->type == AttrType::Floats && attr_type(value) == AttrType::Ints) {
      const auto& ints = std::get<std::vector<std::int64_t>>(value);
      value = std::vector<double>(ints.begin(), ints.end());
    }
    if (attr_type(value) != spec->type) {
      return fail(std::string(entry.name) + ": attribute '" + key + "' must be " +
                  std::string(to_string(spec->type)) + ", got " +
                  std::string(to_string(attr_type(value))));
    }
  }
  for (const AttrSpec& spec : entry.attrs) {
    if (attrs.count(spec.name)) continue;
    if (!spec.default_value) {
      return fail(std::string(entry.name) + ": missing required attribute '" +
                  std::string(spec.name) + "'");
    }
    attrs.emplace(std::string(spec.name), *spec.default_value);
  }
  return attrs;
}

std::int64_t WindowGeometry::output_extent(std::int64_t input, std::int64_t kernel,
                                           std::int64_t stride, std::int64_t pad_begin,
                                           std::int64_t pad_end, std::int64_t dilation) const {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t room = input + pad_begin + pad_end - span;
  if (room < 0) return 0;
  std::int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // PyTorch/ONNX: the last ceil-mode window must start inside the input or the begin padding.
  if (ceil_mode && (out - 1) * stride >= input + pad_begin) --out;
  return out;
}

std::int64_t WindowGeometry::output_h(std::int64_t input_h) const {
  return output_extent(input_h, kernel_h, stride_h, pad_top, pad_bottom, dilation_h);
}

std::int64_t WindowGeometry::output_w(std::int64_t input_w) const {
  return output_extent(input_w, kernel_w, stride_w, pad_left, pad_right, dilation_w);
}

WindowGeometry window_geometry(const Op& op) {
  assert(op.kind == OpKind::Conv || op.kind == OpKind::MaxPool || op.kind == OpKind::AveragePool);
  WindowGeometry geometry;
  const auto& kernel = op.get_ints("kernel");
  const auto& stride = op.get_ints("stride");
  const auto& pad = op.get_ints("pad");
  geometry.kernel_h = kernel.at(0);
  geometry.kernel_w = kernel.at(1);
  geometry.stride_h = stride.at(0);
  geometry.stride_w = stride.at(1);
  geometry.pad_top = pad.at(0);
  geometry.pad_left = pad.at(1);
  geometry.pad_bottom = pad.at(2);
  geometry.pad_right = pad.at(3);
  if (op.attrs.count("dilation")) {
    const auto& dilation = op.get_ints("dilation");
    geometry.dilation_h = dilation.at(0);
    geometry.dilation_w = dilation.at(1);
  }
  if (op.kind == OpKind::Conv) geometry.group = op.get_int("group");
  if (op.attrs.count("ceil_mode")) geometry.ceil_mode = op.get_int("ceil_mode") != 0;
  return geometry;
}

std::string where(const Op& op) {
  return "%" + op.name + " (" + std::string(to_string(op.kind)) + ")";
}

}  // namespace tessel::ir
