// The import-time constant evaluator: decodes ONNX tensors and folds the shape and mask
// arithmetic exporters write (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range -> Less
// -> Where, ...), NumPy broadcasting included.
#include "compiler/frontend/constant_eval.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

namespace tessel::frontend::detail {
namespace {

/// The most elements the evaluator creates (a malformed ConstantOfShape must not exhaust memory).
constexpr std::int64_t kMaxFoldedElements = std::int64_t{1} << 26;

bool is_float_type(int data_type) {
  return data_type == onnx::TensorProto_DataType_FLOAT ||
         data_type == onnx::TensorProto_DataType_DOUBLE ||
         data_type == onnx::TensorProto_DataType_FLOAT16 ||
         data_type == onnx::TensorProto_DataType_BFLOAT16;
}

bool is_int_type(int data_type) {
  switch (data_type) {
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT16:
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_UINT16:
    case onnx::TensorProto_DataType_UINT32:
    case onnx::TensorProto_DataType_BOOL:
      return true;
    default:
      return false;
  }
}

/// Wrapping int64 arithmetic (two's complement, as ONNX runtimes compute; no UB on overflow).
std::int64_t wrap(std::uint64_t v) {
  return static_cast<std::int64_t>(v);
}
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return wrap(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return wrap(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return wrap(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
std::int64_t safe_div(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}

/// A double as int64, truncated toward zero, saturating (NaN: 0).
std::int64_t saturating_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

Result<std::int64_t> checked_count(const Ints& dims) {
  std::int64_t count = 1;
  for (std::int64_t d : dims) {
    if (d < 0) return fail("has a negative dimension " + std::to_string(d));
    if (d != 0 && count > kMaxFoldedElements / d) {
      return fail("dims " + dims_string(dims) + " hold more than " +
                  std::to_string(kMaxFoldedElements) + " elements");
    }
    count *= d;
  }
  return count;
}

Ints strides_of(const Ints& dims) {
  Ints strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

/// For every element of `out` (row-major), the index of the element of `in` that NumPy
/// broadcasting reads.
Ints broadcast_map(const Ints& in, const Ints& out) {
  const Ints in_strides = strides_of(in);
  Ints strides(out.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::size_t o = out.size() - in.size() + i;
    strides[o] = in[i] == 1 ? 0 : in_strides[i];
  }
  std::int64_t total = 1;
  for (std::int64_t d : out) total *= d;
  Ints map(static_cast<std::size_t>(total));
  Ints counter(out.size(), 0);
  std::int64_t source = 0;
  for (std::int64_t e = 0; e < total; ++e) {
    map[static_cast<std::size_t>(e)] = source;
    for (std::size_t d = out.size(); d-- > 0;) {
      source += strides[d];
      if (++counter[d] < out[d]) break;
      source -= strides[d] * counter[d];
      counter[d] = 0;
    }
  }
  return map;
}

/// The elements of `src` at `index`, shaped `dims`, with src's type.
ConstantData take(const ConstantData& src, const Ints& index, Ints dims) {
  ConstantData out;
  out.data_type = src.data_type;
  out.dims = std::move(dims);
  if (src.is_float()) {
    out.floats.reserve(index.size());
    for (std::int64_t i : index) out.floats.push_back(src.floats[static_cast<std::size_t>(i)]);
  } else {
    out.ints.reserve(index.size());
    for (std::int64_t i : index) out.ints.push_back(src.ints[static_cast<std::size_t>(i)]);
  }
  return out;
}

// --- attributes --------------------------------------------------------------------------

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::int64_t int_attr(const onnx::NodeProto& node, std::string_view name, std::int64_t fallback) {
  const auto* attr = find_attr(node, name);
  return attr && attr->type() == onnx::AttributeProto_AttributeType_INT ? attr->i() : fallback;
}

std::optional<Ints> ints_attr(const onnx::NodeProto& node, std::string_view name) {
  const auto* attr = find_attr(node, name);
  if (!attr || attr->type() != onnx::AttributeProto_AttributeType_INTS) return std::nullopt;
  return Ints(attr->ints().begin(), attr->ints().end());
}

Result<std::int64_t> normal_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) {
    return fail("axis " + std::to_string(axis) + " is outside [-" + std::to_string(r) + ", " +
                std::to_string(r - 1) + "]");
  }
  return axis < 0 ? axis + r : axis;
}

/// Integer values of an input (an integer payload, or a float payload of whole numbers).
Result<Ints> as_ints(const ConstantInput& input, std::string_view role) {
  if (!input.present) return fail(std::string(role) + " is missing");
  if (!input.data.is_float()) return input.data.ints;
  Ints out;
  for (float v : input.data.floats) {
    if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 9.2e18F) {
      return fail(std::string(role) + " holds the non-integer " + std::to_string(v));
    }
    out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

// --- elementwise -------------------------------------------------------------------------

using FloatOp = std::function<double(double, double)>;
using IntOp = std::function<std::int64_t(std::int64_t, std::int64_t)>;

struct BinarySpec {
  FloatOp on_floats;
  IntOp on_ints;  ///< empty: integer operands are computed in double and truncated
  bool comparison = false;
  bool logical = false;  ///< And/Or: operands are truth values
};

const std::map<std::string, BinarySpec, std::less<>>& binary_specs() {
  static const std::map<std::string, BinarySpec, std::less<>> specs = {
      {"Add", {std::plus<double>(), wrap_add}},
      {"Sub", {std::minus<double>(), wrap_sub}},
      {"Mul", {std::multiplies<double>(), wrap_mul}},
      {"Div", {std::divides<double>(), safe_div}},
      {"Pow", {[](double a, double b) { return std::pow(a, b); }, {}}},
      {"Min",
       {[](double a, double b) { return std::min(a, b); },
        [](std::int64_t a, std::int64_t b) { return std::min(a, b); }}},
      {"Max",
       {[](double a, double b) { return std::max(a, b); },
        [](std::int64_t a, std::int64_t b) { return std::max(a, b); }}},
      {"Equal", {[](double a, double b) { return double(a == b); }, {}, true}},
      {"Less", {[](double a, double b) { return double(a < b); }, {}, true}},
      {"LessOrEqual", {[](double a, double b) { return double(a <= b); }, {}, true}},
      {"Greater", {[](double a, double b) { return double(a > b); }, {}, true}},
      {"GreaterOrEqual", {[](double a, double b) { return double(a >= b); }, {}, true}},
      {"And", {[](double a, double b) { return double(a != 0 && b != 0); }, {}, true, true}},
      {"Or", {[](double a, double b) { return double(a != 0 || b != 0); }, {}, true, true}},
  };
  return specs;
}

Result<ConstantData> binary(const BinarySpec& spec, const ConstantData& a, const ConstantData& b) {
  auto dims = broadcast(a.dims, b.dims);
  if (!dims) return dims.failure();
  const Ints ia = broadcast_map(a.dims, dims.value()), ib = broadcast_map(b.dims, dims.value());
  ConstantData out;
  out.dims = dims.value();
  const std::size_t n = ia.size();
  if (spec.comparison) {
    out.data_type = onnx::TensorProto_DataType_BOOL;
    // Integers compare exactly (int64 shape values exceed double's 53 bits).
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t x = static_cast<std::int64_t>(ia[i]), y = static_cast<std::int64_t>(ib[i]);
      if (!a.is_float() && !b.is_float() && !spec.logical) {
        const std::int64_t u = a.ints[static_cast<std::size_t>(x)];
        const std::int64_t v = b.ints[static_cast<std::size_t>(y)];
        out.ints.push_back(spec.on_floats(u < v ? -1.0 : (u > v ? 1.0 : 0.0), 0.0) != 0 ? 1 : 0);
      } else {
        out.ints.push_back(spec.on_floats(a.at(x), b.at(y)) != 0 ? 1 : 0);
      }
    }
    return out;
  }
  out.data_type = a.data_type;
  if (a.is_float()) {
    for (std::size_t i = 0; i < n; ++i) {
      out.floats.push_back(static_cast<float>(spec.on_floats(a.at(ia[i]), b.at(ib[i]))));
    }
  } else if (!b.is_float() && spec.on_ints) {
    for (std::size_t i = 0; i < n; ++i) {
      out.ints.push_back(spec.on_ints(a.ints[static_cast<std::size_t>(ia[i])],
                                      b.ints[static_cast<std::size_t>(ib[i])]));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      out.ints.push_back(saturating_int(spec.on_floats(a.at(ia[i]), b.at(ib[i]))));
    }
  }
  return out;
}

Result<ConstantData> unary(std::string_view op, const ConstantData& x) {
  ConstantData out;
  out.data_type = x.data_type;
  out.dims = x.dims;
  if (op == "Not") {
    for (std::int64_t i = 0; i < x.count(); ++i) out.ints.push_back(x.at(i) == 0 ? 1 : 0);
    out.data_type = onnx::TensorProto_DataType_BOOL;
    return out;
  }
  if (!x.is_float()) {
    if (op != "Neg" && op != "Abs" && op != "Floor" && op != "Ceil") {
      return fail(std::string(op) + " of an integer constant is not evaluated");
    }
    for (std::int64_t v : x.ints)
      out.ints.push_back(op == "Neg" ? wrap_sub(0, v) : op == "Abs" && v < 0 ? wrap_sub(0, v) : v);
    return out;
  }
  const std::map<std::string_view, double (*)(double)> functions = {
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::fabs(v); }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Reciprocal", [](double v) { return 1.0 / v; }},
      {"Erf", [](double v) { return std::erf(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"Relu", [](double v) { return std::max(v, 0.0); }},
  };
  const auto fn = functions.at(op);
  for (float v : x.floats) out.floats.push_back(static_cast<float>(fn(v)));
  return out;
}

Result<ConstantData> cast(const onnx::NodeProto& node, const ConstantData& x) {
  const std::int64_t to = int_attr(node, "to", 0);
  ConstantData out;
  out.dims = x.dims;
  out.data_type = static_cast<int>(to);
  if (to == onnx::TensorProto_DataType_FLOAT16 || to == onnx::TensorProto_DataType_BFLOAT16) {
    return fail("Cast to " + data_type_name(static_cast<int>(to)) + " is not evaluated");
  }
  if (is_float_type(static_cast<int>(to))) {
    for (std::int64_t i = 0; i < x.count(); ++i) out.floats.push_back(static_cast<float>(x.at(i)));
    out.data_type = onnx::TensorProto_DataType_FLOAT;
    return out;
  }
  if (!is_int_type(static_cast<int>(to))) {
    return fail("Cast to " + data_type_name(static_cast<int>(to)) + " is not evaluated");
  }
  for (std::int64_t i = 0; i < x.count(); ++i) {
    if (to == onnx::TensorProto_DataType_BOOL) {
      out.ints.push_back(x.at(i) != 0 ? 1 : 0);
    } else if (x.is_float()) {
      const double v = x.at(i);
      if (!std::isfinite(v) || std::fabs(v) > 9.2e18) {
        return fail("Cast of " + std::to_string(v) + " to an integer overflows");
      }
      out.ints.push_back(static_cast<std::int64_t>(v));
    } else {
      out.ints.push_back(x.ints[static_cast<std::size_t>(i)]);
    }
  }
  return out;
}

Result<ConstantData> where(const ConstantData& cond, const ConstantData& a, const ConstantData& b) {
  auto ab = broadcast(a.dims, b.dims);
  if (!ab) return ab.failure();
  auto dims = broadcast(cond.dims, ab.value());
  if (!dims) return dims.failure();
  const Ints ic = broadcast_map(cond.dims, dims.value());
  const Ints ia = broadcast_map(a.dims, dims.value()), ib = broadcast_map(b.dims, dims.value());
  ConstantData out;
  out.data_type = a.data_type;
  out.dims = dims.value();
  for (std::size_t i = 0; i < ic.size(); ++i) {
    const bool pick_a = cond.at(ic[i]) != 0;
    const ConstantData& src = pick_a ? a : b;
    const std::int64_t at = pick_a ? ia[i] : ib[i];
    if (a.is_float()) {
      out.floats.push_back(static_cast<float>(src.at(at)));
    } else {
      out.ints.push_back(src.is_float() ? saturating_int(src.at(at))
                                        : src.ints[static_cast<std::size_t>(at)]);
    }
  }
  return out;
}

// --- shapes and data movement ------------------------------------------------------------

Result<ConstantData> reshape(const ConstantData& x, const Ints& target, bool allow_zero) {
  Ints dims = target;
  std::int64_t known = 1;
  int infer_at = -1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0 && !allow_zero) {
      if (d >= x.dims.size()) return fail("shape " + dims_string(target) + " copies a missing dim");
      dims[d] = x.dims[d];
    }
    if (dims[d] == -1) {
      if (infer_at >= 0) return fail("shape " + dims_string(target) + " has two -1 entries");
      infer_at = static_cast<int>(d);
    } else if (dims[d] < 0) {
      return fail("shape " + dims_string(target) + " has a negative entry");
    } else {
      known *= dims[d];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || x.count() % known != 0) {
      return fail("cannot infer -1 of " + dims_string(target) + " for " + dims_string(x.dims));
    }
    dims[static_cast<std::size_t>(infer_at)] = x.count() / known;
  } else if (known != x.count()) {
    return fail("shape " + dims_string(target) + " does not hold the " + std::to_string(x.count()) +
                " elements of " + dims_string(x.dims));
  }
  ConstantData out = x;
  out.dims = dims;
  return out;
}

Result<ConstantData> squeeze_unsqueeze(const onnx::NodeProto& node, std::int64_t opset,
                                       const std::vector<ConstantInput>& in, bool unsqueeze) {
  const ConstantData& x = in[0].data;
  Ints axes;
  if (opset >= 13) {
    if (in.size() > 1 && in[1].present) {
      auto values = as_ints(in[1], "axes");
      if (!values) return values.failure();
      axes = values.value();
    }
  } else {
    axes = ints_attr(node, "axes").value_or(Ints{});
  }
  Ints dims;
  if (unsqueeze) {
    const std::size_t rank = x.dims.size() + axes.size();
    std::vector<bool> inserted(rank, false);
    for (std::int64_t axis : axes) {
      auto a = normal_axis(axis, rank);
      if (!a) return a.failure();
      if (inserted[static_cast<std::size_t>(a.value())]) return fail("axes repeat an axis");
      inserted[static_cast<std::size_t>(a.value())] = true;
    }
    if (axes.empty()) return fail("Unsqueeze needs axes");
    std::size_t next = 0;
    for (std::size_t d = 0; d < rank; ++d) dims.push_back(inserted[d] ? 1 : x.dims[next++]);
  } else {
    std::vector<bool> removed(x.dims.size(), axes.empty());
    if (axes.empty()) {
      for (std::size_t d = 0; d < x.dims.size(); ++d) removed[d] = x.dims[d] == 1;
    }
    for (std::int64_t axis : axes) {
      auto a = normal_axis(axis, x.dims.size());
      if (!a) return a.failure();
      if (x.dims[static_cast<std::size_t>(a.value())] != 1) {
        return fail("Squeeze of axis " + std::to_string(axis) + " whose extent is not 1");
      }
      removed[static_cast<std::size_t>(a.value())] = true;
    }
    for (std::size_t d = 0; d < x.dims.size(); ++d) {
      if (!removed[d]) dims.push_back(x.dims[d]);
    }
  }
  ConstantData out = x;
  out.dims = dims;
  return out;
}

Result<ConstantData> gather(const onnx::NodeProto& node, const ConstantData& x,
                            const ConstantInput& indices_in) {
  if (x.dims.empty()) return fail("Gather of a scalar");
  auto axis = normal_axis(int_attr(node, "axis", 0), x.dims.size());
  if (!axis) return axis.failure();
  auto indices = as_ints(indices_in, "indices");
  if (!indices) return indices.failure();
  const auto a = static_cast<std::size_t>(axis.value());
  const std::int64_t extent = x.dims[a];
  Ints dims(x.dims.begin(), x.dims.begin() + axis.value());
  dims.insert(dims.end(), indices_in.data.dims.begin(), indices_in.data.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis.value() + 1, x.dims.end());
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= x.dims[d];
  for (std::size_t d = a + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  Ints index;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i : indices.value()) {
      if (i < -extent || i >= extent) {
        return fail("index " + std::to_string(i) + " is outside [-" + std::to_string(extent) +
                    ", " + std::to_string(extent - 1) + "]");
      }
      const std::int64_t row = i < 0 ? i + extent : i;
      for (std::int64_t k = 0; k < inner; ++k) index.push_back((o * extent + row) * inner + k);
    }
  }
  return take(x, index, dims);
}

Result<ConstantData> concat(const onnx::NodeProto& node, const std::vector<ConstantInput>& in) {
  const ConstantData& first = in[0].data;
  auto axis = normal_axis(int_attr(node, "axis", 0), first.dims.size());
  if (!axis) return axis.failure();
  const auto a = static_cast<std::size_t>(axis.value());
  ConstantData out;
  out.data_type = first.data_type;
  out.dims = first.dims;
  out.dims[a] = 0;
  for (const ConstantInput& input : in) {
    const ConstantData& x = input.data;
    if (x.dims.size() != first.dims.size() || x.is_float() != first.is_float()) {
      return fail("Concat inputs differ in rank or type");
    }
    for (std::size_t d = 0; d < x.dims.size(); ++d) {
      if (d != a && x.dims[d] != first.dims[d]) return fail("Concat inputs differ off the axis");
    }
    out.dims[a] += x.dims[a];
  }
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= first.dims[d];
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const ConstantInput& input : in) {
      const ConstantData& x = input.data;
      const std::int64_t block = x.count() / std::max<std::int64_t>(outer, 1);
      for (std::int64_t k = 0; k < block; ++k) {
        const auto i = static_cast<std::size_t>(o * block + k);
        if (x.is_float()) {
          out.floats.push_back(x.floats[i]);
        } else {
          out.ints.push_back(x.ints[i]);
        }
      }
    }
  }
  return out;
}

Result<ConstantData> transpose(const onnx::NodeProto& node, const ConstantData& x) {
  const std::size_t rank = x.dims.size();
  Ints perm = ints_attr(node, "perm").value_or(Ints{});
  if (perm.empty()) {
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  Ints sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t d = 0; d < sorted.size(); ++d) {
    if (sorted.size() != rank || sorted[d] != static_cast<std::int64_t>(d)) {
      return fail("perm " + dims_string(perm) + " is not a permutation of rank " +
                  std::to_string(rank));
    }
  }
  const Ints in_strides = strides_of(x.dims);
  Ints dims, strides;
  for (std::int64_t p : perm) {
    dims.push_back(x.dims[static_cast<std::size_t>(p)]);
    strides.push_back(in_strides[static_cast<std::size_t>(p)]);
  }
  Ints index;
  Ints counter(rank, 0);
  for (std::int64_t e = 0; e < x.count(); ++e) {
    std::int64_t source = 0;
    for (std::size_t d = 0; d < rank; ++d) source += counter[d] * strides[d];
    index.push_back(source);
    for (std::size_t d = rank; d-- > 0;) {
      if (++counter[d] < dims[d]) break;
      counter[d] = 0;
    }
  }
  return take(x, index, dims);
}

Result<ConstantData> slice(const std::vector<ConstantInput>& in) {
  const ConstantData& x = in[0].data;
  const std::size_t rank = x.dims.size();
  auto starts = as_ints(in[1], "starts");
  auto ends = as_ints(in[2], "ends");
  if (!starts) return starts.failure();
  if (!ends) return ends.failure();
  Ints axes, steps;
  if (in.size() > 3 && in[3].present) {
    auto values = as_ints(in[3], "axes");
    if (!values) return values.failure();
    axes = values.value();
  } else {
    for (std::size_t d = 0; d < starts.value().size(); ++d)
      axes.push_back(static_cast<std::int64_t>(d));
  }
  if (in.size() > 4 && in[4].present) {
    auto values = as_ints(in[4], "steps");
    if (!values) return values.failure();
    steps = values.value();
  } else {
    steps.assign(axes.size(), 1);
  }
  if (starts.value().size() != axes.size() || ends.value().size() != axes.size() ||
      steps.size() != axes.size()) {
    return fail("starts, ends, axes and steps differ in length");
  }
  Ints first(rank, 0), step(rank, 1), dims = x.dims;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    auto axis = normal_axis(axes[i], rank);
    if (!axis) return axis.failure();
    const auto a = static_cast<std::size_t>(axis.value());
    const std::int64_t dim = x.dims[a];
    if (steps[i] == 0) return fail("step 0");
    // A step longer than the axis takes at most the first element: clamp it (no overflow).
    const std::int64_t s = std::clamp<std::int64_t>(steps[i], -std::max<std::int64_t>(dim, 1),
                                                    std::max<std::int64_t>(dim, 1));
    auto clamp_index = [&](std::int64_t v) {
      if (v < 0) v += dim;
      return s > 0 ? std::clamp<std::int64_t>(v, 0, dim) : std::clamp<std::int64_t>(v, -1, dim - 1);
    };
    const std::int64_t b = clamp_index(starts.value()[i]), e = clamp_index(ends.value()[i]);
    first[a] = b;
    step[a] = s;
    dims[a] = s > 0 ? std::max<std::int64_t>(0, (e - b + s - 1) / s)
                    : std::max<std::int64_t>(0, (b - e - s - 1) / -s);
  }
  const Ints strides = strides_of(x.dims);
  std::int64_t total = 1;
  for (std::int64_t d : dims) total *= d;
  Ints index;
  Ints counter(rank, 0);
  for (std::int64_t e = 0; e < total; ++e) {
    std::int64_t source = 0;
    for (std::size_t d = 0; d < rank; ++d) source += (first[d] + counter[d] * step[d]) * strides[d];
    index.push_back(source);
    for (std::size_t d = rank; d-- > 0;) {
      if (++counter[d] < dims[d]) break;
      counter[d] = 0;
    }
  }
  return take(x, index, dims);
}

Result<ConstantData> trilu(const onnx::NodeProto& node, const std::vector<ConstantInput>& in) {
  const ConstantData& x = in[0].data;
  if (x.dims.size() < 2) return fail("Trilu needs rank >= 2");
  std::int64_t k = 0;
  if (in.size() > 1 && in[1].present) {
    auto values = as_ints(in[1], "k");
    if (!values || values.value().size() != 1) return fail("k must be one integer");
    k = values.value()[0];
  }
  const bool upper = int_attr(node, "upper", 1) != 0;
  const std::int64_t rows = x.dims[x.dims.size() - 2], cols = x.dims.back();
  ConstantData out = x;
  for (std::int64_t e = 0; e < x.count(); ++e) {
    const std::int64_t i = (e / cols) % rows, j = e % cols;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) continue;
    if (out.is_float()) {
      out.floats[static_cast<std::size_t>(e)] = 0.0F;
    } else {
      out.ints[static_cast<std::size_t>(e)] = 0;
    }
  }
  return out;
}

Result<ConstantData> constant_of_shape(const onnx::NodeProto& node, const ConstantInput& shape) {
  auto dims = as_ints(shape, "shape");
  if (!dims) return dims.failure();
  auto count = checked_count(dims.value());
  if (!count) return count.failure();
  ConstantData fill = ConstantData::of_floats({}, {0.0F});
  if (const auto* attr = find_attr(node, "value")) {
    if (attr->type() != onnx::AttributeProto_AttributeType_TENSOR)
      return fail("value must be a tensor");
    auto decoded = decode_tensor(attr->t());
    if (!decoded) return decoded.failure();
    if (decoded.value().count() != 1) return fail("value must hold one element");
    fill = decoded.value();
  }
  ConstantData out;
  out.data_type = fill.data_type;
  out.dims = dims.value();
  if (fill.is_float()) {
    out.floats.assign(static_cast<std::size_t>(count.value()), fill.floats[0]);
  } else {
    out.ints.assign(static_cast<std::size_t>(count.value()), fill.ints[0]);
  }
  return out;
}

Result<ConstantData> range(const std::vector<ConstantInput>& in) {
  for (const auto& input : in) {
    if (!input.present || input.data.count() != 1) return fail("Range takes three scalars");
  }
  const ConstantData &start = in[0].data, &limit = in[1].data, &delta = in[2].data;
  if (delta.at(0) == 0) return fail("Range delta is 0");
  const double steps = std::ceil((limit.at(0) - start.at(0)) / delta.at(0));
  if (!(steps < static_cast<double>(kMaxFoldedElements))) return fail("Range is too long to fold");
  const std::int64_t count = std::max<std::int64_t>(0, static_cast<std::int64_t>(steps));
  ConstantData out;
  out.data_type = start.data_type;
  out.dims = {count};
  for (std::int64_t i = 0; i < count; ++i) {
    if (start.is_float()) {
      out.floats.push_back(static_cast<float>(start.at(0) + static_cast<double>(i) * delta.at(0)));
    } else {
      out.ints.push_back(delta.is_float()
                             ? saturating_int(start.at(0) + static_cast<double>(i) * delta.at(0))
                             : wrap_add(start.ints[0], wrap_mul(i, delta.ints[0])));
    }
  }
  return out;
}

Result<ConstantData> expand(const ConstantData& x, const ConstantInput& shape) {
  auto target = as_ints(shape, "shape");
  if (!target) return target.failure();
  auto dims = broadcast(x.dims, target.value());
  if (!dims) return dims.failure();
  auto count = checked_count(dims.value());
  if (!count) return count.failure();
  return take(x, broadcast_map(x.dims, dims.value()), dims.value());
}

/// ONNX Mod: `fmod` 0 (integers only) takes the divisor's sign, as Python's %; `fmod` 1
/// takes the dividend's, as C's fmod. A zero divisor gives 0 (ONNX leaves it undefined).
Result<ConstantData> mod(const onnx::NodeProto& node, const ConstantData& a,
                         const ConstantData& b) {
  const bool c_style = int_attr(node, "fmod", 0) != 0;
  if (!c_style && (a.is_float() || b.is_float())) {
    return fail("Mod of floating-point values needs fmod=1");
  }
  const BinarySpec spec = {[](double x, double y) { return y == 0 ? 0.0 : std::fmod(x, y); },
                           [c_style](std::int64_t x, std::int64_t y) -> std::int64_t {
                             if (y == 0 || y == -1) return 0;
                             const std::int64_t r = x % y;
                             return !c_style && r != 0 && (r < 0) != (y < 0) ? r + y : r;
                           }};
  return binary(spec, a, b);
}

/// ONNX ScatterND: `data` with the slices `indices` (last axis: a prefix of data's index)
/// names replaced by `updates`, or combined with them by `reduction` (add, mul, max, min).
Result<ConstantData> scatter_nd(const onnx::NodeProto& node, const std::vector<ConstantInput>& in) {
  if (in.size() != 3 || !in[1].present || !in[2].present) return fail("ScatterND takes 3 inputs");
  const ConstantData &data = in[0].data, &indices = in[1].data, &updates = in[2].data;
  if (indices.is_float() || indices.dims.empty())
    return fail("indices must be integers, rank >= 1");
  if (data.is_float() != updates.is_float()) return fail("updates' type differs from data's");
  const auto k = static_cast<std::size_t>(indices.dims.back());
  if (k < 1 || k > data.dims.size()) {
    return fail("an index of " + std::to_string(k) + " values into data of rank " +
                std::to_string(data.dims.size()));
  }
  Ints expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(k),
                  data.dims.end());
  if (updates.dims != expected) {
    return fail("updates are " + dims_string(updates.dims) + ", expected " + dims_string(expected));
  }
  std::string reduction = "none";
  if (const auto* attr = find_attr(node, "reduction")) reduction = attr->s();
  const std::map<std::string, FloatOp, std::less<>> combine = {
      {"none", [](double, double u) { return u; }},
      {"add", std::plus<double>()},
      {"mul", std::multiplies<double>()},
      {"max", [](double v, double u) { return std::max(v, u); }},
      {"min", [](double v, double u) { return std::min(v, u); }}};
  const auto how = combine.find(reduction);
  if (how == combine.end()) return fail("reduction '" + reduction + "' is not one of ONNX's");
  const Ints strides = strides_of(data.dims);
  const std::int64_t slice = k == data.dims.size() ? 1 : strides[k - 1];
  const std::int64_t count = indices.count() / static_cast<std::int64_t>(k);
  ConstantData out = data;
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t base = 0;
    for (std::size_t d = 0; d < k; ++d) {
      std::int64_t i = indices.ints[static_cast<std::size_t>(n) * k + d];
      if (i < 0) i += data.dims[d];
      if (i < 0 || i >= data.dims[d]) {
        return fail("index " + std::to_string(i) + " is outside axis " + std::to_string(d) +
                    " of " + std::to_string(data.dims[d]));
      }
      base += i * strides[d];
    }
    for (std::int64_t e = 0; e < slice; ++e) {
      const auto at = static_cast<std::size_t>(base + e);
      const auto from = static_cast<std::size_t>(n * slice + e);
      if (out.is_float()) {
        out.floats[at] = static_cast<float>(how->second(out.floats[at], updates.floats[from]));
      } else if (reduction == "none") {
        out.ints[at] = updates.ints[from];  // exact beyond 2^53
      } else {
        out.ints[at] = saturating_int(how->second(static_cast<double>(out.ints[at]),
                                                  static_cast<double>(updates.ints[from])));
      }
    }
  }
  return out;
}

Result<ConstantData> evaluate_one(const onnx::NodeProto& node, std::int64_t opset,
                                  const std::vector<ConstantInput>& in) {
  const std::string& op = node.op_type();
  auto need = [&](std::size_t n) { return in.size() >= n && in[0].present; };
  if (!need(1) && op != "Range") return fail("input 0 is missing");
  const ConstantData& x = in[0].data;
  if (const auto it = binary_specs().find(op); it != binary_specs().end()) {
    if (in.size() < 2) return fail(op + " takes two inputs");
    for (const ConstantInput& input : in) {
      if (!input.present) return fail(op + " has an omitted input");
    }
    ConstantData acc = x;
    for (std::size_t i = 1; i < in.size(); ++i) {
      auto next = binary(it->second, acc, in[i].data);
      if (!next) return next.failure();
      acc = std::move(next.value());
    }
    return acc;
  }
  if (op == "Mod") {
    return in.size() == 2 && in[1].present ? mod(node, x, in[1].data) : fail("Mod takes 2");
  }
  if (op == "ScatterND") return scatter_nd(node, in);
  if (op == "Identity") return x;
  if (op == "Cast") return cast(node, x);
  if (op == "Shape" || op == "Size") {
    return op == "Shape" ? shape_value(x.dims, node) : ConstantData::of_ints({}, {x.count()});
  }
  if (op == "Where")
    return in.size() == 3 ? where(x, in[1].data, in[2].data) : fail("Where takes 3");
  if (op == "Reshape") {
    auto target = in.size() > 1 ? as_ints(in[1], "shape") : Result<Ints>(fail("shape is missing"));
    if (!target) return target.failure();
    return reshape(x, target.value(), int_attr(node, "allowzero", 0) != 0);
  }
  if (op == "Flatten") {
    auto axis = int_attr(node, "axis", 1);
    if (axis < 0) axis += static_cast<std::int64_t>(x.dims.size());
    if (axis < 0 || axis > static_cast<std::int64_t>(x.dims.size()))
      return fail("axis out of range");
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < axis; ++d) outer *= x.dims[static_cast<std::size_t>(d)];
    ConstantData out = x;
    out.dims = {outer, outer == 0 ? 0 : x.count() / outer};
    return out;
  }
  if (op == "Squeeze" || op == "Unsqueeze")
    return squeeze_unsqueeze(node, opset, in, op == "Unsqueeze");
  if (op == "Gather")
    return in.size() == 2 ? gather(node, x, in[1]) : fail("Gather takes 2 inputs");
  if (op == "Concat") return concat(node, in);
  if (op == "Transpose") return transpose(node, x);
  if (op == "Slice") return in.size() >= 3 ? slice(in) : fail("Slice takes 3 to 5 inputs");
  if (op == "Trilu") return trilu(node, in);
  if (op == "ConstantOfShape") return constant_of_shape(node, in[0]);
  if (op == "Range") return in.size() == 3 ? range(in) : fail("Range takes 3 inputs");
  if (op == "Expand") return in.size() == 2 ? expand(x, in[1]) : fail("Expand takes 2 inputs");
  return unary(op, x);
}

}  // namespace

std::string dims_string(const Ints& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// --- ConstantData ------------------------------------------------------------------------

bool ConstantData::is_float() const {
  return is_float_type(data_type);
}

std::int64_t ConstantData::count() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

double ConstantData::at(std::int64_t i) const {
  return is_float() ? static_cast<double>(floats[static_cast<std::size_t>(i)])
                    : static_cast<double>(ints[static_cast<std::size_t>(i)]);
}

ConstantData ConstantData::of_ints(Ints dims, Ints values, int data_type) {
  ConstantData out;
  out.data_type = data_type;
  out.dims = std::move(dims);
  out.ints = std::move(values);
  return out;
}

ConstantData ConstantData::of_floats(Ints dims, std::vector<float> values) {
  ConstantData out;
  out.dims = std::move(dims);
  out.floats = std::move(values);
  return out;
}

Result<Ints> broadcast(const Ints& a, const Ints& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Ints out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      return fail("shapes " + dims_string(a) + " and " + dims_string(b) + " do not broadcast");
    }
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

Result<ConstantData> shape_value(const Ints& dims, const onnx::NodeProto& node) {
  const auto rank = static_cast<std::int64_t>(dims.size());
  auto clamp = [&](std::int64_t v) {
    return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  const std::int64_t start = clamp(int_attr(node, "start", 0));
  const std::int64_t end = clamp(int_attr(node, "end", rank));
  Ints values;
  for (std::int64_t d = start; d < end; ++d) values.push_back(dims[static_cast<std::size_t>(d)]);
  const auto n = static_cast<std::int64_t>(values.size());
  return ConstantData::of_ints({n}, std::move(values));
}

bool can_evaluate(std::string_view op_type) {
  static const std::vector<std::string_view> ops = {
      "Abs",       "Cast",   "Ceil",    "Concat", "ConstantOfShape", "Erf",
      "Exp",       "Expand", "Flatten", "Floor",  "Gather",          "Identity",
      "Mod",       "Neg",    "Not",     "Range",  "Reciprocal",      "Relu",
      "Reshape",   "Shape",  "Sigmoid", "Size",   "ScatterND",       "Slice",
      "Split",     "Sqrt",   "Squeeze", "Tanh",   "Transpose",       "Trilu",
      "Unsqueeze", "Where"};
  return binary_specs().count(op_type) > 0 ||
         std::find(ops.begin(), ops.end(), op_type) != ops.end();
}

namespace {

/// ONNX Split of a constant: the sizes from input 1 (opset 13 on) or the `split` attribute,
/// else `num_outputs` (opset 18: equal parts, the last smaller) or one equal part per output.
Result<std::vector<ConstantData>> split(const onnx::NodeProto& node, std::int64_t opset,
                                        const std::vector<ConstantInput>& in) {
  const ConstantData& x = in[0].data;
  auto axis = normal_axis(int_attr(node, "axis", 0), x.dims.size());
  if (!axis) return axis.failure();
  const std::int64_t dim = x.dims[static_cast<std::size_t>(axis.value())];
  const auto parts = static_cast<std::int64_t>(node.output_size());
  Ints sizes;
  if (opset >= 13 && in.size() > 1 && in[1].present) {
    auto values = as_ints(in[1], "split");
    if (!values) return values.failure();
    sizes = values.value();
  } else if (auto attr = ints_attr(node, "split"); attr && opset < 13) {
    sizes = *attr;
  } else {
    const std::int64_t each = (dim + parts - 1) / std::max<std::int64_t>(parts, 1);
    if (opset < 18 && each * parts != dim) {
      return fail("axis of " + std::to_string(dim) + " does not split into " +
                  std::to_string(parts) + " equal parts");
    }
    for (std::int64_t k = 0, left = dim; k < parts; ++k, left -= each)
      sizes.push_back(std::min(each, std::max<std::int64_t>(left, 0)));
  }
  std::int64_t total = 0;
  for (std::int64_t v : sizes) {
    if (v < 0) return fail("a negative split size " + std::to_string(v));
    total += v;
  }
  if (static_cast<std::int64_t>(sizes.size()) != parts || total != dim) {
    return fail("split sizes " + dims_string(sizes) + " do not cover the axis of " +
                std::to_string(dim) + " in " + std::to_string(parts) + " outputs");
  }
  std::vector<ConstantData> outs;
  std::int64_t begin = 0;
  for (std::int64_t size : sizes) {
    std::vector<ConstantInput> args = {in[0],
                                       {true, ConstantData::of_ints({1}, {begin})},
                                       {true, ConstantData::of_ints({1}, {begin + size})},
                                       {true, ConstantData::of_ints({1}, {axis.value()})}};
    auto part = slice(args);
    if (!part) return part.failure();
    outs.push_back(std::move(part.value()));
    begin += size;
  }
  return outs;
}

}  // namespace

Result<std::vector<ConstantData>> evaluate(const onnx::NodeProto& node, std::int64_t opset,
                                           const std::vector<ConstantInput>& inputs) {
  if (node.op_type() == "Split" && !inputs.empty() && inputs[0].present) {
    return split(node, opset, inputs);
  }
  if (node.output_size() != 1) {
    return fail(node.op_type() + " with " + std::to_string(node.output_size()) +
                " outputs is not evaluated");
  }
  auto out = evaluate_one(node, opset, inputs);
  if (!out) return out.failure();
  auto count = checked_count(out.value().dims);
  if (!count) return count.failure();
  return std::vector<ConstantData>{std::move(out.value())};
}

}  // namespace tessel::frontend::detail
