// ONNX import of hand-built models: exact IR text, attribute defaults, auto_pad arithmetic.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/ir/text.hpp"
#include "support/diagnostic.hpp"
#include "tests/frontend/onnx_builder.hpp"

namespace tessel::frontend {
namespace {

using testing::Attr;
using testing::ModelBuilder;
using Ints = std::vector<std::int64_t>;

ir::Graph import(const ModelBuilder& model, const OnnxImportOptions& options = {}) {
  return import_onnx_bytes(model.bytes(), "m.onnx", options);
}

std::string dump(const ir::Graph& graph) {
  return ir::to_text(graph, ir::TextOptions{64});
}

const ir::Op& op_named(const ir::Graph& graph, std::string_view name) {
  const auto id = graph.find_op(name);
  EXPECT_TRUE(id.has_value()) << "no op " << name;
  return graph.op(*id);
}

TEST(OnnxImport, conv_bias_relu_imports_to_the_expected_text) {
  ModelBuilder model;
  model.input("x", {1, 1, 4, 4})
      .weight("w", {2, 1, 1, 1}, {2, -1})
      .weight("b", {2}, {0.5F, 0})
      .node("Conv", "conv", {"x", "w", "b"}, {"conv"}, {{"kernel_shape", Ints{1, 1}}})
      .node("Relu", "relu", {"conv"}, {"relu"})
      .output("relu", {1, 2, 4, 4});
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[1,1,4,4]\n"
            "  const %b : f32[2] = [0.5, 0]\n"
            "  const %w : f32[2,1,1,1] = [2, -1]\n"
            "  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[1,2,4,4]\n"
            "  %relu = Relu(%conv) : f32[1,2,4,4]\n"
            "  output %relu\n"
            "}\n");
}

TEST(OnnxImport, conv_defaults_take_the_kernel_from_the_weight_and_unit_strides) {
  ModelBuilder model;
  model.input("x", {1, 3, 8, 8})
      .weight("w", {4, 3, 3, 3})
      .node("Conv", "conv", {"x", "w"}, {"conv"})
      .output("conv");
  const ir::Graph graph = import(model);
  const ir::Op& conv = op_named(graph, "conv");
  EXPECT_EQ(conv.get_ints("kernel"), (Ints{3, 3}));
  EXPECT_EQ(conv.get_ints("stride"), (Ints{1, 1}));
  EXPECT_EQ(conv.get_ints("pad"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(conv.get_ints("dilation"), (Ints{1, 1}));
  EXPECT_EQ(conv.get_int("group"), 1);
  EXPECT_EQ(graph.tensor("conv").shape, (ir::Shape{1, 4, 6, 6}));  // 8 - 3 + 1
}

/// Imports one Conv with the given attributes on a [1,1,H,W] input; returns (pad, output shape).
std::pair<Ints, ir::Shape> conv_with(std::int64_t height, std::int64_t width,
                                     std::vector<Attr> attrs, Ints weight = {1, 1, 3, 3}) {
  ModelBuilder model;
  model.input("x", {1, 1, height, width})
      .weight("w", weight)
      .node("Conv", "conv", {"x", "w"}, {"conv"}, std::move(attrs))
      .output("conv");
  const ir::Graph graph = import(model);
  return {op_named(graph, "conv").get_ints("pad"), graph.tensor("conv").shape};
}

// ONNX SAME_*: out = ceil(in / stride); total = max(0, (out-1)*stride + (k-1)*d + 1 - in).
TEST(OnnxImport, auto_pad_same_upper_puts_the_odd_pad_at_the_end) {
  // in 8, k 3, s 2: out 4, total = 3*2 + 3 - 8 = 1 -> begin 0, end 1.
  auto [pad, shape] = conv_with(8, 8, {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(pad, (Ints{0, 0, 1, 1}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 4, 4}));
}

TEST(OnnxImport, auto_pad_same_lower_puts_the_odd_pad_at_the_beginning) {
  auto [pad, shape] = conv_with(8, 8, {{"auto_pad", "SAME_LOWER"}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(pad, (Ints{1, 1, 0, 0}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 4, 4}));
}

TEST(OnnxImport, auto_pad_same_handles_each_axis_and_dilation_separately) {
  // H: in 7, k 3, d 2 (extent 5), s 1: out 7, total 4 -> 2, 2.
  // W: in 5, k 3, d 2, s 1: out 5, total 4 -> 2, 2. With stride 3 on W: out 2, total
  //    = 1*3 + 5 - 5 = 3 -> SAME_UPPER 1, 2.
  auto [pad, shape] = conv_with(
      7, 5, {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{1, 3}}, {"dilations", Ints{2, 2}}});
  EXPECT_EQ(pad, (Ints{2, 1, 2, 2}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 7, 2}));
}

TEST(OnnxImport, auto_pad_same_needs_no_padding_when_the_stride_tiles_exactly) {
  // in 9, k 3, s 3: out 3, total = 2*3 + 3 - 9 = 0.
  auto [pad, shape] = conv_with(9, 9, {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{3, 3}}});
  EXPECT_EQ(pad, (Ints{0, 0, 0, 0}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 3, 3}));
}

TEST(OnnxImport, auto_pad_valid_means_no_padding) {
  auto [pad, shape] = conv_with(8, 8, {{"auto_pad", "VALID"}});
  EXPECT_EQ(pad, (Ints{0, 0, 0, 0}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 6, 6}));
}

TEST(OnnxImport, explicit_pads_keep_onnx_order_top_left_bottom_right) {
  auto [pad, shape] = conv_with(8, 8, {{"pads", Ints{1, 2, 0, 3}}});
  EXPECT_EQ(pad, (Ints{1, 2, 0, 3}));
  EXPECT_EQ(shape, (ir::Shape{1, 1, 7, 11}));  // 8+1+0-3+1, 8+2+3-3+1
}

TEST(OnnxImport, depthwise_conv_keeps_group) {
  auto [pad, shape] = conv_with(4, 4, {{"group", 1}, {"pads", Ints{1, 1, 1, 1}}});
  EXPECT_EQ(shape, (ir::Shape{1, 1, 4, 4}));
  ModelBuilder model;
  model.input("x", {1, 8, 4, 4})
      .weight("w", {8, 1, 3, 3})
      .node("Conv", "dw", {"x", "w"}, {"dw"}, {{"group", 8}, {"pads", Ints{1, 1, 1, 1}}})
      .output("dw");
  const ir::Graph graph = import(model);
  EXPECT_EQ(op_named(graph, "dw").get_int("group"), 8);
  EXPECT_EQ(graph.tensor("dw").shape, (ir::Shape{1, 8, 4, 4}));
}

TEST(OnnxImport, pool_defaults_are_floor_mode_and_exclude_padding) {
  ModelBuilder model;
  model.input("x", {1, 2, 6, 6})
      .node("MaxPool", "max", {"x"}, {"max"},
            {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}})
      .node("AveragePool", "avg", {"x"}, {"avg"},
            {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})
      .output("max")
      .output("avg");
  const ir::Graph graph = import(model);
  const ir::Op& max = op_named(graph, "max");
  const ir::Op& avg = op_named(graph, "avg");
  EXPECT_EQ(max.get_int("ceil_mode"), 0);
  EXPECT_EQ(max.get_ints("dilation"), (Ints{1, 1}));
  EXPECT_EQ(avg.get_int("ceil_mode"), 0);
  EXPECT_EQ(avg.get_int("count_include_pad"), 0);
  EXPECT_EQ(graph.tensor("max").shape, (ir::Shape{1, 2, 2, 2}));  // floor((6-3)/2)+1
  EXPECT_EQ(graph.tensor("avg").shape, (ir::Shape{1, 2, 7, 7}));  // 6+2-2+1
}

TEST(OnnxImport, maxpool_ceil_mode_rounds_the_output_up) {
  ModelBuilder model;
  model.input("x", {1, 1, 6, 6})
      .node("MaxPool", "max", {"x"}, {"max"},
            {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}})
      .output("max");
  const ir::Graph graph = import(model);
  EXPECT_EQ(op_named(graph, "max").get_int("ceil_mode"), 1);
  EXPECT_EQ(graph.tensor("max").shape, (ir::Shape{1, 1, 3, 3}));  // ceil((6-3)/2)+1
}

TEST(OnnxImport, maxpool_same_upper_pads_from_the_input_size) {
  // in 5, k 2, s 2: out 3, total = 2*2 + 2 - 5 = 1 -> SAME_UPPER 0, 1.
  ModelBuilder model;
  model.input("x", {1, 1, 5, 5})
      .node("MaxPool", "max", {"x"}, {"max"},
            {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}})
      .output("max");
  const ir::Graph graph = import(model);
  EXPECT_EQ(op_named(graph, "max").get_ints("pad"), (Ints{0, 0, 1, 1}));
  EXPECT_EQ(graph.tensor("max").shape, (ir::Shape{1, 1, 3, 3}));
}

TEST(OnnxImport, identity_and_dropout_disappear_and_a_renamed_initializer_is_its_own_constant) {
  // PyTorch's exporter shares equal initializers through Identity: w2 = Identity(w1).
  ModelBuilder model;
  model.input("x", {1, 2, 2, 2})
      .weight("w1", {2, 2, 1, 1}, {1, 0, 0, 1})
      .node("Identity", "copy_w", {"w1"}, {"w2"})
      .node("Conv", "c1", {"x", "w1"}, {"c1"})
      .node("Dropout", "drop", {"c1"}, {"d"})
      .node("Identity", "id", {"d"}, {"i"})
      .node("Conv", "c2", {"i", "w2"}, {"c2"})
      .output("c2");
  const ir::Graph graph = import(model);
  EXPECT_EQ(dump(graph),
            "graph m {\n"
            "  input %x : f32[1,2,2,2]\n"
            "  const %w1 : f32[2,2,1,1] = [1, 0, 0, 1]\n"
            "  const %w2 : f32[2,2,1,1] = [1, 0, 0, 1]\n"
            "  %c1 = Conv(%x, %w1) {kernel=1x1} : f32[1,2,2,2]\n"
            "  %c2 = Conv(%c1, %w2) {kernel=1x1} : f32[1,2,2,2]\n"
            "  output %c2\n"
            "}\n");
  EXPECT_EQ(ir::parameter_count(graph), 8);
}

TEST(OnnxImport, matmul_plus_constant_bias_becomes_one_gemm) {
  ModelBuilder model;
  model.input("x", {1, 3})
      .weight("w", {3, 2})
      .weight("b", {2}, {1, -1})
      .node("MatMul", "fc", {"x", "w"}, {"mm"})
      .node("Add", "bias", {"mm", "b"}, {"y"})
      .output("y", {1, 2});
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[1,3]\n"
            "  const %b : f32[2] = [1, -1]\n"
            "  const %w : f32[3,2] = [0.5, 1, 1.5, 2, 2.5, 3]\n"
            "  %y = Gemm(%x, %w, %b) : f32[1,2] @fc\n"
            "  output %y\n"
            "}\n");
}

TEST(OnnxImport, matmul_alone_becomes_a_gemm_without_bias) {
  ModelBuilder model;
  model.input("x", {2, 3})
      .weight("w", {3, 4})
      .node("MatMul", "mm", {"x", "w"}, {"mm"})
      .node("Relu", "r", {"mm"}, {"r"})
      .output("r");
  const ir::Graph graph = import(model);
  const ir::Op& gemm = op_named(graph, "mm");
  EXPECT_EQ(gemm.kind, ir::OpKind::Gemm);
  EXPECT_EQ(gemm.inputs.size(), 2u);
  EXPECT_EQ(gemm.get_int("transB"), 0);
  EXPECT_EQ(graph.tensor("mm").shape, (ir::Shape{2, 4}));
}

TEST(OnnxImport, gemm_keeps_transb_alpha_beta) {
  ModelBuilder model;
  model.input("x", {1, 4})
      .weight("w", {3, 4})
      .weight("b", {3})
      .node("Gemm", "fc", {"x", "w", "b"}, {"fc"}, {{"transB", 1}, {"alpha", 0.5F}, {"beta", 2.0F}})
      .output("fc");
  const ir::Graph graph = import(model);
  const ir::Op& gemm = op_named(graph, "fc");
  EXPECT_EQ(gemm.get_int("transB"), 1);
  EXPECT_EQ(gemm.get_float("alpha"), 0.5);
  EXPECT_EQ(gemm.get_float("beta"), 2.0);
  EXPECT_EQ(graph.tensor("fc").shape, (ir::Shape{1, 3}));
}

TEST(OnnxImport, clip_bounds_from_constant_inputs_become_attributes) {
  // opset >= 11 passes min/max as inputs: an initializer and a Constant node here.
  ModelBuilder model(13);
  model.input("x", {1, 2, 2, 2}).scalar("lo", 0.0F);
  auto* constant = model.proto().mutable_graph()->add_node();
  constant->set_op_type("Constant");
  constant->set_name("six");
  constant->add_output("hi");
  auto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  value->mutable_t()->add_float_data(6.0F);
  model.node("Clip", "relu6", {"x", "lo", "hi"}, {"relu6"})
      .node("Clip", "upper", {"relu6", "", "hi"}, {"upper"})
      .output("upper");
  const ir::Graph graph = import(model);
  EXPECT_EQ(op_named(graph, "relu6").get_float("min"), 0.0);
  EXPECT_EQ(op_named(graph, "relu6").get_float("max"), 6.0);
  EXPECT_EQ(op_named(graph, "upper").get_float("min"), -3.4028234663852886e38);
  EXPECT_EQ(op_named(graph, "upper").get_float("max"), 6.0);
  EXPECT_EQ(graph.tensors().count("lo"), 0u) << "a bound is an attribute, not a tensor";
}

TEST(OnnxImport, zero_pad_before_average_pool_folds_into_the_pool) {
  // PyTorch exports avg_pool2d(k=3, s=1, padding=1) as Pad + AveragePool.
  ModelBuilder model;
  model.input("x", {1, 2, 5, 5})
      .ints("pads", {0, 0, 1, 1, 0, 0, 1, 1})
      .node("Pad", "pad", {"x", "pads"}, {"padded"})
      .node("AveragePool", "avg", {"padded"}, {"avg"}, {{"kernel_shape", Ints{3, 3}}})
      .output("avg", {1, 2, 5, 5});
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[1,2,5,5]\n"
            "  %avg = AveragePool(%x) {kernel=3x3, pad=1,1,1,1, count_include_pad=1} : "
            "f32[1,2,5,5]\n"
            "  output %avg\n"
            "}\n");
  OnnxImportOptions keep;
  keep.fold_pad_into_average_pool = false;
  EXPECT_EQ(dump(import(model, keep)),
            "graph m {\n"
            "  input %x : f32[1,2,5,5]\n"
            "  %padded = Pad(%x) {pads=0,0,1,1,0,0,1,1} : f32[1,2,7,7] @pad\n"
            "  %avg = AveragePool(%padded) {kernel=3x3} : f32[1,2,5,5]\n"
            "  output %avg\n"
            "}\n");
}

TEST(OnnxImport, pad_with_a_nonzero_value_is_not_folded) {
  ModelBuilder model;
  model.input("x", {1, 1, 3, 3})
      .ints("pads", {0, 0, 1, 1, 0, 0, 1, 1})
      .scalar("value", 1.0F)
      .node("Pad", "pad", {"x", "pads", "value"}, {"padded"})
      .node("AveragePool", "avg", {"padded"}, {"avg"}, {{"kernel_shape", Ints{3, 3}}})
      .output("avg");
  const ir::Graph graph = import(model);
  EXPECT_EQ(op_named(graph, "pad").get_float("value"), 1.0);
  EXPECT_EQ(op_named(graph, "avg").get_ints("pad"), (Ints{0, 0, 0, 0}));
}

TEST(OnnxImport, batchnorm_concat_flatten_reshape_softmax) {
  ModelBuilder model(11);
  model.input("x", {1, 2, 2, 2})
      .weight("gamma", {2}, {1, 2})
      .weight("beta", {2}, {0, 1})
      .weight("mean", {2}, {0, 0})
      .weight("var", {2}, {1, 1})
      .ints("shape", {1, -1})
      .node("BatchNormalization", "bn", {"x", "gamma", "beta", "mean", "var"}, {"bn"},
            {{"epsilon", 0.25F}})
      .node("Concat", "cat", {"x", "bn"}, {"cat"}, {{"axis", -3}})
      .node("Flatten", "flat", {"cat"}, {"flat"})
      .node("Reshape", "re", {"flat", "shape"}, {"re"})
      .node("Softmax", "sm", {"re"}, {"sm"})
      .output("sm", {1, 16});
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[1,2,2,2]\n"
            "  const %beta : f32[2] = [0, 1]\n"
            "  const %gamma : f32[2] = [1, 2]\n"
            "  const %mean : f32[2] = [0, 0]\n"
            "  const %var : f32[2] = [1, 1]\n"
            "  %bn = BatchNormalization(%x, %gamma, %beta, %mean, %var) {epsilon=0.25} : "
            "f32[1,2,2,2]\n"
            "  %cat = Concat(%x, %bn) {axis=1} : f32[1,4,2,2]\n"
            "  %flat = Flatten(%cat) : f32[1,16]\n"
            "  %re = Reshape(%flat) {shape=1,-1} : f32[1,16]\n"
            "  %sm = Softmax(%re) {axis=1} : f32[1,16]\n"
            "  output %sm\n"
            "}\n");
}

TEST(OnnxImport, softmax_default_axis_follows_the_opset) {
  for (const std::int64_t opset : {11, 13}) {
    ModelBuilder model(opset);
    model.input("x", {2, 5}).node("Softmax", "sm", {"x"}, {"sm"}).output("sm");
    // opset 11: default axis 1; opset 13: default -1. On [2,5] both are the last axis, 1.
    EXPECT_EQ(op_named(import(model), "sm").get_int("axis"), 1) << "opset " << opset;
  }
}

TEST(OnnxImport, raw_data_initializers_decode_little_endian) {
  ModelBuilder model;
  model.input("x", {1, 2})
      .raw_weight("w", {2, 2}, {1.5F, -2.0F, 0.25F, 8.0F})
      .node("Gemm", "fc", {"x", "w"}, {"fc"})
      .output("fc");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("w").f32_values, (std::vector<float>{1.5F, -2.0F, 0.25F, 8.0F}));
}

TEST(OnnxImport, nodes_listed_out_of_order_are_sorted_topologically) {
  ModelBuilder model;
  model.input("x", {1, 4})
      .node("Relu", "second", {"first"}, {"second"})
      .node("Relu", "first", {"x"}, {"first"})
      .output("second");
  const ir::Graph graph = import(model);
  EXPECT_EQ(dump(graph),
            "graph m {\n"
            "  input %x : f32[1,4]\n"
            "  %first = Relu(%x) : f32[1,4]\n"
            "  %second = Relu(%first) : f32[1,4]\n"
            "  output %second\n"
            "}\n");
  EXPECT_EQ(graph.op(1).name, "first");  // created in dependency order
}

TEST(OnnxImport, nodes_that_reach_no_output_are_skipped) {
  ModelBuilder model;
  model.input("x", {1, 4})
      .node("Relu", "used", {"x"}, {"used"})
      .node("LSTM", "dead", {"x"}, {"dead"})
      .output("used");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.num_ops(), 2u);
  EXPECT_FALSE(graph.find_op("dead"));
}

TEST(OnnxImport, unnamed_nodes_take_their_output_name) {
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "", {"x"}, {"y"}).output("y");
  EXPECT_TRUE(import(model).find_op("y").has_value());
}

TEST(OnnxImport, input_shape_option_fixes_dynamic_dimensions) {
  ModelBuilder model;
  model.input("x", {-1, 3, -1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r");
  OnnxImportOptions options;
  options.input_shapes["x"] = {2, 3, 5, 4};
  const ir::Graph graph = import(model, options);
  EXPECT_EQ(graph.tensor("x").shape, (ir::Shape{2, 3, 5, 4}));
  EXPECT_EQ(graph.tensor("r").shape, (ir::Shape{2, 3, 5, 4}));
}

TEST(OnnxImport, an_initializer_listed_as_graph_input_is_a_constant) {
  // IR version < 4 lists every initializer among the graph inputs.
  ModelBuilder model;
  model.input("x", {1, 2}).input("w", {2, 2}).weight("w", {2, 2});
  model.node("Gemm", "fc", {"x", "w"}, {"fc"}).output("fc");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.inputs().size(), 1u);
  EXPECT_TRUE(graph.tensor("w").constant);
}

TEST(OnnxImport, import_onnx_reads_a_file_and_names_the_graph_after_it) {
  const auto path = std::filesystem::temp_directory_path() / "tessel_frontend_tiny.onnx";
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r");
  {
    std::ofstream out(path, std::ios::binary);
    out << model.bytes();
  }
  const ir::Graph graph = import_onnx(path.string());
  EXPECT_EQ(graph.name(), "tessel_frontend_tiny");
  EXPECT_EQ(graph.num_ops(), 2u);
  std::filesystem::remove(path);
}

/// A folder holding model.onnx whose initializer `w` (2 floats, 2.5 and -1) lives in the file
/// `location` at `offset` (ONNX external data, as exports over 2 GB write it).
std::filesystem::path external_model(const std::string& location, std::int64_t offset,
                                     std::int64_t length, std::int64_t file_offset = -1) {
  if (file_offset < 0) file_offset = offset;  // where the values are written
  const auto folder = std::filesystem::temp_directory_path() / "tessel_external_data";
  std::filesystem::create_directories(folder);
  const float values[2] = {2.5f, -1.0f};
  {
    std::ofstream out(folder / "w.bin", std::ios::binary);
    out << std::string(static_cast<std::size_t>(file_offset), 'x');
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  }
  ModelBuilder model;
  model.input("x", {2}).raw_weight("w", {2}, {0.0f, 0.0f});
  model.node("Add", "add", {"x", "w"}, {"y"}).output("y");
  auto* w = model.proto().mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  const auto entry = [&](const std::string& key, const std::string& value) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  entry("location", location);
  entry("offset", std::to_string(offset));
  if (length >= 0) entry("length", std::to_string(length));
  std::ofstream(folder / "model.onnx", std::ios::binary) << model.bytes();
  return folder / "model.onnx";
}

std::string import_error(const std::filesystem::path& path) {
  try {
    import_onnx(path.string());
  } catch (const InputError& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(OnnxImport, initializers_in_external_data_files_are_read_from_the_models_folder) {
  // vit_h_14's and regnet_y_128gf's exports (over protobuf's 2 GB) keep every weight this way.
  const auto path = external_model("w.bin", 3, 8);
  const ir::Graph graph = import_onnx(path.string());
  EXPECT_EQ(graph.tensor("w").f32_values, (std::vector<float>{2.5f, -1.0f}));
  const std::string at = path.string() + ": error: initializer 0 'w': ";
  EXPECT_EQ(import_error(external_model("../w.bin", 0, -1)),
            at + "external data location '../w.bin' must be a relative path inside the model's "
                 "folder");
  EXPECT_EQ(import_error(external_model("w.bin", 0, 12)),
            at + "external data length 12 is not the 8 bytes its dims and type take");
  EXPECT_EQ(import_error(external_model("w.bin", 100, -1, 0)),
            at + "external data file '" + (path.parent_path() / "w.bin").string() +
                "' holds 8 bytes, the tensor needs 8 from offset 100");
  std::filesystem::remove_all(path.parent_path());
}

TEST(OnnxImport, parse_input_shape_accepts_name_colon_dims) {
  auto parsed = parse_input_shape("input:1x3x224x224");
  ASSERT_TRUE(parsed.ok()) << parsed.reason();
  EXPECT_EQ(parsed.value().first, "input");
  EXPECT_EQ(parsed.value().second, (ir::Shape{1, 3, 224, 224}));
  auto scoped = parse_input_shape("pkg:x:7");
  ASSERT_TRUE(scoped.ok());
  EXPECT_EQ(scoped.value().first, "pkg:x");
  EXPECT_EQ(scoped.value().second, (ir::Shape{7}));
}

TEST(OnnxImport, parse_input_shape_rejects_malformed_specs) {
  EXPECT_EQ(parse_input_shape("1x3x224x224").reason(),
            "--input-shape '1x3x224x224': expected NAME:D0xD1x... (e.g. input:1x3x224x224)");
  EXPECT_EQ(parse_input_shape("x:1x0x2").reason(),
            "--input-shape 'x:1x0x2': dimension '0' is not a positive integer");
  EXPECT_EQ(parse_input_shape("x:1xx2").reason(),
            "--input-shape 'x:1xx2': dimension '' is not a positive integer");
  EXPECT_EQ(parse_input_shape("x:-1").reason(),
            "--input-shape 'x:-1': dimension '-1' is not a positive integer");
}

}  // namespace
}  // namespace tessel::frontend
