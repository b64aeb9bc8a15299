// Converters for data movement: Concat, Flatten, Reshape, Squeeze/Unsqueeze (as Reshape),
// Transpose, Slice, Split, Gather, Expand, Trilu and Resize. Shapes, axes, indices and sizes
// given as inputs must be constants (initializers, Constant nodes or folded values).
#include <algorithm>
#include <cmath>

#include "compiler/frontend/importer.hpp"

namespace tessel::frontend::detail {
/// The most elements a shape given by the model may describe: the import limit of any tensor.
constexpr std::int64_t kMaxElements = kMaxTensorElements;

Ints Importer::axes_operand(int slot, std::string_view attr_name, std::int64_t input_from_opset) {
  if (opset_ >= input_from_opset) {
    return has_input(slot) ? ints_input(slot, attr_name) : Ints{};
  }
  return attr_ints(attr_name).value_or(Ints{});
}

void Importer::convert_concat() {
  check_attributes({"axis"});
  expect_outputs(1);
  if (input_count() == 0) fail_node("has no inputs");
  if (!attribute("axis", onnx::AttributeProto_AttributeType_INT)) {
    fail_node("attribute 'axis' is required");
  }
  std::vector<std::string> inputs;
  for (int slot = 0; slot < static_cast<int>(input_count()); ++slot) {
    inputs.push_back(data_input(slot));
  }
  const std::int64_t axis = normalize_axis(attr_int("axis", 0), shape_of(inputs[0]).size(), "axis");
  emit(ir::OpKind::Concat, std::move(inputs), {{"axis", axis}}, node().output(0));
}

void Importer::convert_flatten() {
  check_attributes({"axis"});
  expect_outputs(1);
  expect_inputs(1, 1);
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  std::int64_t axis = attr_int("axis", 1);
  // Flatten accepts axis == rank (everything in the first dimension).
  if (axis != static_cast<std::int64_t>(rank)) axis = normalize_axis(axis, rank, "axis");
  emit(ir::OpKind::Flatten, {x}, {{"axis", axis}}, node().output(0));
}

void Importer::convert_reshape() {
  check_attributes({"allowzero"});
  expect_outputs(1);
  expect_inputs(2, 2);
  const std::string x = data_input(0);
  Ints shape = ints_input(1, "shape");
  if (attr_int("allowzero", 0) != 0 && std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    fail_node("allowzero=1 with a 0 in shape " + ints_string(shape) + " is not supported");
  }
  std::int64_t product = 1;
  for (std::int64_t d : shape) {
    if (d < -1) fail_node("shape " + ints_string(shape) + " has the entry " + std::to_string(d));
    if (d > 0 && product > kMaxElements / d)
      fail_node("shape " + ints_string(shape) + " is too large");
    if (d > 0) product *= d;
  }
  if (shape.empty()) shape = {1};  // a rank-0 result; the IR has no rank-0 tensors
  emit(ir::OpKind::Reshape, {x}, {{"shape", shape}}, node().output(0));
}

void Importer::convert_squeeze() {
  check_attributes(opset_ >= 13 ? std::initializer_list<std::string_view>{}
                                : std::initializer_list<std::string_view>{"axes"});
  expect_outputs(1);
  expect_inputs(1, opset_ >= 13 ? 2 : 1);
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  const Ints axes = axes_operand(1, "axes", 13);
  std::vector<bool> removed(shape.size(), false);
  for (std::int64_t axis : axes) {
    const auto a = static_cast<std::size_t>(normalize_axis(axis, shape.size(), "axes"));
    if (shape[a] != 1) {
      fail_node("axis " + std::to_string(axis) + " of " + ir::shape_string(shape) + " has extent " +
                std::to_string(shape[a]) + ", not 1");
    }
    removed[a] = true;
  }
  Ints out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const bool drop = axes.empty() ? shape[d] == 1 : removed[d];
    if (!drop) out.push_back(shape[d]);
  }
  if (out.empty()) out = {1};
  emit(ir::OpKind::Reshape, {x}, {{"shape", out}}, node().output(0));
}

void Importer::convert_unsqueeze() {
  check_attributes(opset_ >= 13 ? std::initializer_list<std::string_view>{}
                                : std::initializer_list<std::string_view>{"axes"});
  expect_outputs(1);
  expect_inputs(opset_ >= 13 ? 2 : 1, opset_ >= 13 ? 2 : 1);
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  const Ints axes = axes_operand(1, "axes", 13);
  if (axes.empty()) fail_node("axes are missing");
  const std::size_t rank = shape.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (std::int64_t axis : axes) {
    const auto a = static_cast<std::size_t>(normalize_axis(axis, rank, "axes"));
    if (inserted[a]) fail_node("axes " + ints_string(axes) + " repeat axis " + std::to_string(a));
    inserted[a] = true;
  }
  Ints out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : shape[next++]);
  emit(ir::OpKind::Reshape, {x}, {{"shape", out}}, node().output(0));
}

void Importer::convert_transpose() {
  check_attributes({"perm"});
  expect_outputs(1);
  expect_inputs(1, 1);
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  Ints perm = attr_ints("perm").value_or(Ints{});
  if (perm.empty()) {
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  emit(ir::OpKind::Transpose, {x}, {{"perm", perm}}, node().output(0));
}

void Importer::convert_slice() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(3, 5);
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  const Ints starts = ints_input(1, "starts"), ends = ints_input(2, "ends");
  Ints axes, steps;
  if (has_input(3)) {
    for (std::int64_t axis : ints_input(3, "axes"))
      axes.push_back(normalize_axis(axis, rank, "axes"));
  } else {
    for (std::size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
  }
  steps = has_input(4) ? ints_input(4, "steps") : Ints(axes.size(), 1);
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size()) {
    fail_node("starts " + ints_string(starts) + ", ends " + ints_string(ends) + ", axes " +
              ints_string(axes) + " and steps " + ints_string(steps) + " differ in length");
  }
  emit(ir::OpKind::Slice, {x},
       {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}}, node().output(0));
}

void Importer::convert_split() {
  check_attributes(opset_ >= 18   ? std::initializer_list<std::string_view>{"axis", "num_outputs"}
                   : opset_ >= 13 ? std::initializer_list<std::string_view>{"axis"}
                                  : std::initializer_list<std::string_view>{"axis", "split"});
  expect_inputs(1, opset_ >= 13 ? 2 : 1);
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  const std::int64_t axis = normalize_axis(attr_int("axis", 0), shape.size(), "axis");
  const std::int64_t extent = shape[static_cast<std::size_t>(axis)];
  const auto outputs = static_cast<std::int64_t>(node().output_size());
  if (outputs == 0) fail_node("has no outputs");
  Ints sizes = opset_ >= 13 ? (has_input(1) ? ints_input(1, "split") : Ints{})
                            : attr_ints("split").value_or(Ints{});
  if (sizes.empty()) {
    const std::int64_t parts = opset_ >= 18 ? attr_int("num_outputs", outputs) : outputs;
    if (parts != outputs) {
      fail_node("num_outputs " + std::to_string(parts) + " but " + std::to_string(outputs) +
                " outputs");
    }
    // Equal parts; opset 18 lets the last one be smaller (ceil division).
    const std::int64_t part = (extent + parts - 1) / parts;
    if (opset_ < 18 && extent % parts != 0) {
      fail_node("axis " + std::to_string(axis) + " of extent " + std::to_string(extent) +
                " does not split into " + std::to_string(parts) + " equal parts");
    }
    for (std::int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(part, extent - i * part));
  }
  if (static_cast<std::int64_t>(sizes.size()) != outputs) {
    fail_node("split " + ints_string(sizes) + " has " + std::to_string(sizes.size()) +
              " sizes for " + std::to_string(outputs) + " outputs");
  }
  for (std::int64_t s : sizes) {
    if (s <= 0) fail_node("split " + ints_string(sizes) + " has an empty part (not supported)");
  }
  std::vector<std::string> names;
  for (int slot = 0; slot < node().output_size(); ++slot) {
    const std::string& name = node().output(slot);
    names.push_back(name.empty() ? fresh_tensor_name(node().output(0) + ".unused") : name);
  }
  emit_multi(ir::OpKind::Split, {x}, {{"axis", axis}, {"split", sizes}}, names);
}

void Importer::convert_gather() {
  check_attributes({"axis"});
  expect_outputs(1);
  expect_inputs(2, 2);
  if (!is_constant_input(1)) {
    // Rows of a constant table by token ids: an embedding.
    if (!is_constant_input(0) || attr_int("axis", 0) != 0) {
      fail_node("indices (input 1 " + in_quotes(node().input(1)) +
                ") are computed at run time; Tessel takes run-time indices only as rows of a "
                "constant table (axis 0: an embedding)");
    }
    const std::string ids = input_value(1).ir_name;
    if (graph_.tensor(ids).dtype != ir::DType::i32) {
      fail_node("indices (input 1 " + in_quotes(node().input(1)) +
                ") are computed in float; run-time indices must be integer token ids (a graph "
                "input of type INT64 or INT32)");
    }
    emit(ir::OpKind::Embedding, {ids, data_input(0)}, {}, node().output(0));
    return;
  }
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  const std::int64_t axis = normalize_axis(attr_int("axis", 0), shape.size(), "axis");
  const std::int64_t extent = shape[static_cast<std::size_t>(axis)];
  const ConstantData indices = constant_input(1, "indices");
  Ints values = ints_input(1, "indices");
  if (values.empty()) fail_node("indices are empty");
  for (std::int64_t& i : values) {
    if (i < -extent || i >= extent) {
      fail_node("index " + std::to_string(i) + " is outside [-" + std::to_string(extent) + ", " +
                std::to_string(extent - 1) + "] for axis " + std::to_string(axis) + " of " +
                ir::shape_string(shape));
    }
    if (i < 0) i += extent;
  }
  emit(ir::OpKind::Gather, {x},
       {{"axis", axis}, {"indices", values}, {"indices_shape", indices.dims}}, node().output(0));
}

void Importer::convert_expand() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(2, 2);
  const std::string x = data_input(0);
  const Ints shape = ints_input(1, "shape");
  std::int64_t product = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) fail_node("shape " + ints_string(shape) + " has a non-positive entry");
    if (product > kMaxElements / d) fail_node("shape " + ints_string(shape) + " is too large");
    product *= d;
  }
  emit(ir::OpKind::Expand, {x}, {{"shape", shape}}, node().output(0));
}

void Importer::convert_trilu() {
  check_attributes({"upper"});
  expect_outputs(1);
  expect_inputs(1, 2);
  const std::string x = data_input(0);
  std::int64_t k = 0;
  if (has_input(1)) {
    const Ints values = ints_input(1, "k");
    if (values.size() != 1) fail_node("k must be a single integer");
    k = values[0];
  }
  const std::int64_t upper = attr_int("upper", 1);
  if (upper != 0 && upper != 1) fail_node("upper " + std::to_string(upper) + " must be 0 or 1");
  emit(ir::OpKind::Trilu, {x}, {{"upper", upper}, {"k", k}}, node().output(0));
}

void Importer::convert_resize() {
  check_attributes({"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
                    "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
                    "nearest_mode"});
  expect_outputs(1);
  expect_inputs(1, 4);
  const std::string mode = attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") {
    fail_node("mode " + in_quotes(mode) + " is not supported (nearest, linear)");
  }
  const std::string coordinates = attr_string("coordinate_transformation_mode", "half_pixel");
  if (coordinates != "half_pixel" && coordinates != "asymmetric" &&
      coordinates != "align_corners" && coordinates != "pytorch_half_pixel") {
    fail_node("coordinate_transformation_mode " + in_quotes(coordinates) +
              " is not supported (half_pixel, asymmetric, align_corners, pytorch_half_pixel)");
  }
  const std::string nearest = attr_string("nearest_mode", "round_prefer_floor");
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil") {
    fail_node("nearest_mode " + in_quotes(nearest) +
              " is not one of round_prefer_floor, "
              "round_prefer_ceil, floor, ceil");
  }
  if (attr_int("antialias", 0) != 0) fail_node("antialias=1 is not supported");
  if (attr_ints("axes")) fail_node("attribute 'axes' (opset 18) is not supported");
  if (attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    fail_node("keep_aspect_ratio_policy other than 'stretch' is not supported");
  }
  const std::string x = data_input(0);
  const ir::Shape shape = shape_of(x);
  Ints sizes;
  if (has_input(3) && constant_input(3, "sizes").count() > 0) {
    sizes = ints_input(3, "sizes");
  } else if (has_input(2) && constant_input(2, "scales").count() > 0) {
    const ConstantData scales = constant_input(2, "scales");
    if (scales.count() != static_cast<std::int64_t>(shape.size())) {
      fail_node("scales has " + std::to_string(scales.count()) + " values for rank " +
                std::to_string(shape.size()));
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      // The kernel works from sizes; scales that give a whole size mean the same resize.
      const double exact = static_cast<double>(shape[d]) * scales.at(static_cast<std::int64_t>(d));
      const double whole = std::floor(exact);
      if (std::fabs(exact - std::round(exact)) > 1e-9 * std::max(1.0, exact)) {
        fail_node("scale " + std::to_string(scales.at(static_cast<std::int64_t>(d))) + " on axis " +
                  std::to_string(d) + " of extent " + std::to_string(shape[d]) +
                  " gives the fractional size " + std::to_string(exact) +
                  " (not supported: Tessel resizes to whole sizes)");
      }
      sizes.push_back(static_cast<std::int64_t>(std::round(std::max(whole, exact))));
    }
  } else {
    fail_node("needs constant scales or sizes");
  }
  std::int64_t product = 1;
  for (std::int64_t d : sizes) {
    if (d <= 0 || product > kMaxElements / d)
      fail_node("sizes " + ints_string(sizes) + " is out of range");
    product *= d;
  }
  emit(ir::OpKind::Resize, {x},
       {{"mode", mode},
        {"sizes", sizes},
        {"coordinate_transformation_mode", coordinates},
        {"nearest_mode", nearest}},
       node().output(0));
}

}  // namespace tessel::frontend::detail
