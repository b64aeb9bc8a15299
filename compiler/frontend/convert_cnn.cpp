// Converters for the classic CNN ops: Constant, Identity, Dropout, Conv, pools, Gemm, Clip,
// BatchNormalization, Pad.
#include <algorithm>

#include "compiler/frontend/importer.hpp"

namespace tessel::frontend::detail {

void Importer::convert_identity() {
  check_attributes({});
  alias_output_to_input();
}

void Importer::convert_global_average_pool() {
  check_attributes({});
  expect_outputs(1);
  expect_inputs(1, 1);
  require_rank(0, 4, "input");
  emit(ir::OpKind::GlobalAveragePool, {data_input(0)}, {}, node().output(0));
}

void Importer::alias_output_to_input() {
  expect_outputs(1);
  if (input_count() != 1 && node().op_type() == "Identity") {
    fail_node("takes 1 input, got " + std::to_string(input_count()));
  }
  Value value = input_value(0);
  if (value.is_constant()) {
    // A renamed constant is its own constant (PyTorch's exporter shares equal initializers
    // through Identity; each is a separate parameter of the model).
    value.ir_name = node().output(0);
    value.origin = node_where(node_) + " (copy of " + value.origin + ")";
  }
  values_[node().output(0)] = value;
}

void Importer::convert_constant() {
  check_attributes({"value", "value_float", "value_floats", "value_int", "value_ints",
                    "sparse_value", "value_string", "value_strings"});
  expect_outputs(1);
  if (node().attribute_size() != 1) {
    fail_node("must have exactly one value attribute, has " +
              std::to_string(node().attribute_size()));
  }
  const onnx::AttributeProto& attr = node().attribute(0);
  onnx::TensorProto tensor;
  if (attr.name() == "value") {
    tensor = attribute("value", onnx::AttributeProto_AttributeType_TENSOR)->t();
  } else if (attr.name() == "value_float") {
    tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
    tensor.add_float_data(attr_float("value_float", 0.0F));
  } else if (attr.name() == "value_floats") {
    const auto* a = attribute("value_floats", onnx::AttributeProto_AttributeType_FLOATS);
    tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
    tensor.add_dims(a->floats_size());
    for (float v : a->floats()) tensor.add_float_data(v);
  } else if (attr.name() == "value_int") {
    tensor.set_data_type(onnx::TensorProto_DataType_INT64);
    tensor.add_int64_data(attr_int("value_int", 0));
  } else if (attr.name() == "value_ints") {
    const Ints values = *attr_ints("value_ints");
    tensor.set_data_type(onnx::TensorProto_DataType_INT64);
    tensor.add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t v : values) tensor.add_int64_data(v);
  } else {
    fail_node("attribute " + in_quotes(attr.name()) +
              " is not supported (sparse or string constant)");
  }
  tensor.set_name(node().output(0));
  owned_tensors_.push_back(std::move(tensor));
  const std::string origin = node_where(node_);
  decode(owned_tensors_.back(), origin);  // report a malformed payload here, at its node
  values_[node().output(0)] = Value{node().output(0), &owned_tensors_.back(), {}, origin};
}

void Importer::convert_dropout() {
  check_attributes({"seed", "ratio"});
  expect_outputs(1);
  if (has_input(2)) {
    const ConstantData mode = constant_input(2, "training_mode");
    if (mode.ints.size() != 1 && mode.floats.size() != 1) {
      fail_node("training_mode must be a scalar");
    }
    const bool training = mode.ints.empty() ? mode.floats[0] != 0.0F : mode.ints[0] != 0;
    // torchvision's Swin calls F.dropout(p=0) without training=False: training mode with a
    // ratio of 0 drops nothing, the identity.
    bool drops_nothing = false;
    if (training && has_input(1)) {
      const ConstantData ratio = constant_input(1, "ratio");
      drops_nothing = ratio.count() == 1 && ratio.at(0) == 0.0;
    }
    if (training && !drops_nothing) {
      fail_node("training_mode is true with a nonzero ratio; Tessel imports inference graphs only");
    }
  }
  alias_output_to_input();
}

Importer::Window Importer::read_window(const Ints& kernel_from_weight, bool allow_dilation) {
  Window window;
  const std::optional<Ints> kernel = attr_ints("kernel_shape");
  if (kernel) {
    window.kernel = *kernel;
    if (!kernel_from_weight.empty() && *kernel != kernel_from_weight) {
      fail_node("kernel_shape " + ints_string(*kernel) + " disagrees with the weight's " +
                ints_string(kernel_from_weight));
    }
  } else if (!kernel_from_weight.empty()) {
    window.kernel = kernel_from_weight;
  } else {
    fail_node("attribute 'kernel_shape' is required");
  }
  if (window.kernel.size() != 2) {
    fail_node("kernel_shape " + ints_string(window.kernel) +
              " is not 2-D; Tessel supports 2-D windows only");
  }
  for (std::int64_t k : window.kernel) {
    if (k <= 0) fail_node("kernel_shape " + ints_string(window.kernel) + " must be positive");
  }
  check_window_values("kernel_shape", window.kernel);
  window.strides = attr_ints("strides").value_or(Ints{1, 1});
  window.dilations = allow_dilation ? attr_ints("dilations").value_or(Ints{1, 1}) : Ints{1, 1};
  std::optional<Ints> pads = attr_ints("pads");
  if (window.strides.size() != 2)
    fail_node("strides " + ints_string(window.strides) + " must have 2 values");
  if (window.dilations.size() != 2) {
    fail_node("dilations " + ints_string(window.dilations) + " must have 2 values");
  }
  for (std::int64_t s : window.strides) {
    if (s <= 0) fail_node("strides " + ints_string(window.strides) + " must be positive");
  }
  for (std::int64_t d : window.dilations) {
    if (d <= 0) fail_node("dilations " + ints_string(window.dilations) + " must be positive");
  }
  check_window_values("strides", window.strides);
  check_window_values("dilations", window.dilations);
  if (pads) {
    if (pads->size() != 4) fail_node("pads " + ints_string(*pads) + " must have 4 values");
    for (std::int64_t p : *pads) {
      if (p < 0) fail_node("pads " + ints_string(*pads) + " must not be negative");
    }
    check_window_values("pads", *pads);
  }
  const std::string auto_pad = attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    window.pads = pads.value_or(Ints{0, 0, 0, 0});
    return window;
  }
  if (pads && std::any_of(pads->begin(), pads->end(), [](std::int64_t p) { return p != 0; })) {
    fail_node("pads " + ints_string(*pads) + " cannot be combined with auto_pad " + auto_pad);
  }
  if (auto_pad == "VALID") {
    window.pads = {0, 0, 0, 0};
    return window;
  }
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    fail_node("auto_pad " + in_quotes(auto_pad) +
              " is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  // ONNX: output = ceil(input / stride); the total padding that achieves it is split evenly,
  // the odd element going to the end (SAME_UPPER) or the beginning (SAME_LOWER).
  const ir::Shape input = shape_of(values_.at(node().input(0)).ir_name);
  window.pads.assign(4, 0);
  for (std::size_t axis = 0; axis < 2; ++axis) {
    const std::int64_t in = input[2 + axis];
    const std::int64_t stride = window.strides[axis];
    const std::int64_t extent = (window.kernel[axis] - 1) * window.dilations[axis] + 1;
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + extent - in);
    const std::int64_t small = total / 2, large = total - total / 2;
    window.pads[axis] = auto_pad == "SAME_UPPER" ? small : large;
    window.pads[axis + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return window;
}

void Importer::convert_conv() {
  check_attributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  expect_outputs(1);
  if (input_count() < 2 || input_count() > 3) {
    fail_node("takes 2 or 3 inputs, got " + std::to_string(input_count()));
  }
  require_rank(0, 4, "input");
  const std::string x = data_input(0);
  const std::string w = data_input(1);
  const ir::Shape weight = shape_of(w);
  if (weight.size() != 4) {
    fail_node("weight " + in_quotes(node().input(1)) + " has shape " + ir::shape_string(weight) +
              "; Tessel supports 2-D convolution only (OIHW weights)");
  }
  const std::int64_t group = attr_int("group", 1);
  if (group <= 0) fail_node("group " + std::to_string(group) + " must be positive");
  const Window window = read_window({weight[2], weight[3]}, true);
  std::vector<std::string> inputs{x, w};
  if (has_input(2)) inputs.push_back(data_input(2));
  emit(ir::OpKind::Conv, std::move(inputs),
       {{"kernel", window.kernel},
        {"stride", window.strides},
        {"pad", window.pads},
        {"dilation", window.dilations},
        {"group", group}},
       node().output(0));
}

void Importer::convert_pool(bool is_max) {
  if (is_max) {
    check_attributes(
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
    if (attr_int("storage_order", 0) != 0 && output_used(1)) {
      fail_node("storage_order 1 (column-major Indices) is not supported");
    }
  } else {
    check_attributes(
        {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  }
  expect_outputs(1);
  if (input_count() != 1) fail_node("takes 1 input, got " + std::to_string(input_count()));
  require_rank(0, 4, "input");
  std::string x = data_input(0);
  const std::int64_t ceil_mode = attr_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) {
    fail_node("ceil_mode " + std::to_string(ceil_mode) + " must be 0 or 1");
  }
  Window window = read_window({}, is_max);
  // A pad as large as the kernel makes a window that lies wholly in the padding: an average of
  // no elements (NaN with count_include_pad=0) or a max of none (-inf). onnxruntime refuses it
  // too ("Pad should be smaller than kernel").
  for (std::size_t axis = 0; axis < 2; ++axis) {
    for (const std::size_t side : {axis, axis + 2}) {
      if (window.pads[side] >= window.kernel[axis]) {
        fail_node("pads " + ints_string(window.pads) + ": pad " +
                  std::to_string(window.pads[side]) + " on axis " + std::to_string(axis + 2) +
                  " is not smaller than kernel_shape " + ints_string(window.kernel) +
                  " (a window would lie wholly in the padding)");
      }
    }
  }
  if (is_max) {
    emit(ir::OpKind::MaxPool, {x},
         {{"kernel", window.kernel},
          {"stride", window.strides},
          {"pad", window.pads},
          {"dilation", window.dilations},
          {"ceil_mode", ceil_mode}},
         node().output(0));
    return;
  }
  std::int64_t count_include_pad = attr_int("count_include_pad", 0);
  if (count_include_pad != 0 && count_include_pad != 1) {
    fail_node("count_include_pad " + std::to_string(count_include_pad) + " must be 0 or 1");
  }
  // Pad(0) -> AveragePool: the pool averages explicit zeros over the full window, which is
  // AveragePool with those pads and count_include_pad=1 (ceil_mode 0 only: with ceil_mode a
  // window may start in the padding and the two forms differ).
  const auto pad_op = graph_.producer(x);
  const bool pool_pads_zero =
      std::all_of(window.pads.begin(), window.pads.end(), [](std::int64_t p) { return p == 0; });
  if (options_.fold_pad_into_average_pool && pad_op && ceil_mode == 0 &&
      (pool_pads_zero || count_include_pad == 1) && graph_.op(*pad_op).kind == ir::OpKind::Pad &&
      graph_.op(*pad_op).get_float("value") == 0.0 && readers_[node().input(0)].size() == 1 &&
      !graph_output_names_.count(node().input(0))) {
    const ir::Op& pad = graph_.op(*pad_op);
    const Ints& pads = pad.get_ints("pads");  // [n, c, h, w] begins, then ends
    if (pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0) {
      window.pads = {window.pads[0] + pads[2], window.pads[1] + pads[3], window.pads[2] + pads[6],
                     window.pads[3] + pads[7]};
      count_include_pad = 1;
      const std::string source = pad.inputs[0];
      graph_.remove_ops({*pad_op});
      x = source;
    }
  }
  emit(ir::OpKind::AveragePool, {x},
       {{"kernel", window.kernel},
        {"stride", window.strides},
        {"pad", window.pads},
        {"ceil_mode", ceil_mode},
        {"count_include_pad", count_include_pad}},
       node().output(0));
}

void Importer::convert_gemm() {
  check_attributes({"alpha", "beta", "transA", "transB"});
  expect_outputs(1);
  if (input_count() < 2 || input_count() > 3) {
    fail_node("takes 2 or 3 inputs, got " + std::to_string(input_count()));
  }
  if (attr_int("transA", 0) != 0) fail_node("transA=1 is not supported");
  const std::int64_t trans_b = attr_int("transB", 0);
  if (trans_b != 0 && trans_b != 1)
    fail_node("transB " + std::to_string(trans_b) + " must be 0 or 1");
  require_rank(0, 2, "input A");
  require_rank(1, 2, "input B");
  std::vector<std::string> inputs{data_input(0), data_input(1)};
  if (has_input(2)) inputs.push_back(data_input(2));
  emit(ir::OpKind::Gemm, std::move(inputs),
       {{"transB", trans_b},
        {"alpha", static_cast<double>(attr_float("alpha", 1.0F))},
        {"beta", static_cast<double>(attr_float("beta", 1.0F))}},
       node().output(0));
}

void Importer::convert_clip() {
  check_attributes({"min", "max"});
  expect_outputs(1);
  if (input_count() < 1 || input_count() > 3) {
    fail_node("takes 1 to 3 inputs, got " + std::to_string(input_count()));
  }
  ir::Attrs attrs;
  auto bound = [&](int slot, std::string_view name) {
    const bool as_attr = attribute(name, onnx::AttributeProto_AttributeType_FLOAT) != nullptr;
    if (has_input(slot) && as_attr) {
      fail_node(std::string(name) + " is given both as input " + std::to_string(slot) +
                " and as an attribute");
    }
    if (as_attr) {
      attrs[std::string(name)] = static_cast<double>(attr_float(name, 0.0F));
    } else if (has_input(slot)) {
      const ConstantData data = constant_input(slot, name);
      if (data.floats.size() != 1) {
        fail_node(std::string(name) + " (input " + std::to_string(slot) +
                  ") must be a float scalar, has " +
                  std::to_string(std::max(data.floats.size(), data.ints.size())) + " " +
                  data_type_name(data.data_type) + " value(s)");
      }
      attrs[std::string(name)] = static_cast<double>(data.floats[0]);
    }
  };
  bound(1, "min");
  bound(2, "max");
  if (attrs.count("min") && attrs.count("max") &&
      std::get<double>(attrs["min"]) > std::get<double>(attrs["max"])) {
    fail_node("min " + std::to_string(std::get<double>(attrs["min"])) + " exceeds max " +
              std::to_string(std::get<double>(attrs["max"])));
  }
  emit(ir::OpKind::Clip, {data_input(0)}, std::move(attrs), node().output(0));
}

void Importer::convert_batchnorm() {
  check_attributes({"epsilon", "momentum", "training_mode"});
  expect_outputs(1);
  if (attr_int("training_mode", 0) != 0) {
    fail_node("training_mode=1 is not supported; Tessel imports inference graphs only");
  }
  if (input_count() != 5) fail_node("takes 5 inputs, got " + std::to_string(input_count()));
  const float epsilon = attr_float("epsilon", 1e-5F);
  if (!(epsilon >= 0.0F)) fail_node("epsilon " + std::to_string(epsilon) + " must not be negative");
  std::vector<std::string> inputs;
  for (int slot = 0; slot < 5; ++slot) inputs.push_back(data_input(slot));
  emit(ir::OpKind::BatchNormalization, std::move(inputs),
       {{"epsilon", static_cast<double>(epsilon)}}, node().output(0));
}

void Importer::convert_pad() {
  check_attributes({"mode", "pads", "value"});
  expect_outputs(1);
  const std::string mode = attr_string("mode", "constant");
  if (mode != "constant") {
    fail_node("mode " + in_quotes(mode) + " is not supported (only 'constant')");
  }
  if (input_count() > 3) fail_node("the axes input (opset 18) is not supported");
  const std::string x = data_input(0);
  const std::size_t rank = shape_of(x).size();
  Ints pads;
  if (const auto attr = attr_ints("pads")) {
    if (has_input(1)) fail_node("pads is given both as input 1 and as an attribute");
    pads = *attr;
  } else if (has_input(1)) {
    const ConstantData data = constant_input(1, "pads");
    if (data.ints.empty() && !data.floats.empty()) fail_node("pads must be INT64");
    pads = data.ints;
  } else {
    fail_node("pads are missing");
  }
  if (pads.size() != 2 * rank) {
    fail_node("pads " + ints_string(pads) + " must have " + std::to_string(2 * rank) +
              " values (begin and end of each of " + std::to_string(rank) + " axes)");
  }
  for (std::int64_t p : pads) {
    if (p < 0) fail_node("pads " + ints_string(pads) + " must not be negative (no cropping)");
  }
  check_window_values("pads", pads);
  double value = static_cast<double>(attr_float("value", 0.0F));
  if (has_input(2)) {
    const ConstantData data = constant_input(2, "constant_value");
    if (data.floats.size() != 1) fail_node("constant_value must be a float scalar");
    value = static_cast<double>(data.floats[0]);
  }
  if (std::all_of(pads.begin(), pads.end(), [](std::int64_t p) { return p == 0; })) {
    // Swin pads its windows to a multiple of the window size: nothing when they divide.
    alias_output_to_input();
    return;
  }
  emit(ir::OpKind::Pad, {x}, {{"pads", pads}, {"value", value}}, node().output(0));
}

}  // namespace tessel::frontend::detail
