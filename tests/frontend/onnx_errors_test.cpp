// The bad-input catalogue: every malformed or unsupported ONNX model fails with its located
// message.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include "compiler/frontend/onnx_import.hpp"
#include "support/diagnostic.hpp"
#include "tests/frontend/onnx_builder.hpp"

namespace tessel::frontend {
namespace {

using testing::Attr;
using testing::ModelBuilder;
using Ints = std::vector<std::int64_t>;

/// The InputError message of importing `bytes` as "m.onnx", or "<no error>".
std::string error_of(const std::string& bytes, const OnnxImportOptions& options = {}) {
  try {
    import_onnx_bytes(bytes, "m.onnx", options);
  } catch (const InputError& error) {
    return error.what();
  }
  return "<no error>";
}

std::string error_of(const ModelBuilder& model, const OnnxImportOptions& options = {}) {
  return error_of(model.bytes(), options);
}

/// A valid model (Conv 3->4, 3x3, then Relu) that the cases below break one way each.
ModelBuilder conv_model(std::vector<Attr> conv_attrs = {}) {
  ModelBuilder model;
  model.input("x", {1, 3, 8, 8})
      .weight("w", {4, 3, 3, 3})
      .node("Conv", "conv", {"x", "w"}, {"c"}, std::move(conv_attrs))
      .node("Relu", "relu", {"c"}, {"y"})
      .output("y");
  return model;
}

TEST(OnnxErrors, the_base_model_of_the_catalogue_imports) {
  EXPECT_EQ(error_of(conv_model()), "<no error>");
}

// --- files and protobuf -------------------------------------------------------------------

TEST(OnnxErrors, missing_file_is_named) {
  try {
    import_onnx("/nonexistent/tessel/model.onnx");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "/nonexistent/tessel/model.onnx: error: cannot open: No such file or directory");
  }
}

TEST(OnnxErrors, empty_file_is_not_a_model) {
  const auto path = std::filesystem::temp_directory_path() / "tessel_frontend_empty.onnx";
  { std::ofstream out(path, std::ios::binary); }
  try {
    import_onnx(path.string());
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              path.string() + ": error: empty file (0 bytes); not an ONNX model");
  }
  std::filesystem::remove(path);
}

TEST(OnnxErrors, truncated_file_reports_the_field_and_byte_offset_where_it_ends) {
  ModelBuilder model = conv_model();
  const std::string bytes = model.bytes();
  // ModelProto serializes by field number: ir_version (1: 2 bytes), producer_name (2: tag,
  // length, 11 bytes "tessel-test"), then graph (7) at offset 15 with tag 0x3a and a varint
  // length of the graph's size.
  ASSERT_EQ(static_cast<unsigned char>(bytes[15]), 0x3a);
  const std::size_t graph_size = model.proto().graph().ByteSizeLong();
  ASSERT_GT(graph_size, 127u);
  ASSERT_LT(graph_size, 16384u);  // a two-byte varint
  const std::string cut = bytes.substr(0, 100);
  EXPECT_EQ(error_of(cut),
            "m.onnx: error: byte offset 15: failed to parse ModelProto (100 bytes): "
            "graph (field 7) declares " +
                std::to_string(graph_size) + " bytes but only 82 remain");
}

TEST(OnnxErrors, corrupt_length_inside_the_graph_names_the_node) {
  // graph (7) of 4 bytes holding node (1) whose length prefix claims 5 bytes, 2 remain.
  const std::string bytes = std::string("\x08\x08", 2) + std::string("\x3a\x04\x0a\x05\x00\x00", 6);
  EXPECT_EQ(error_of(bytes),
            "m.onnx: error: byte offset 4: failed to parse ModelProto (8 bytes): "
            "graph.node[0] (field 1) declares 5 bytes but only 2 remain");
}

TEST(OnnxErrors, garbage_bytes_report_a_truncated_tag) {
  EXPECT_EQ(error_of(std::string("\xff\xff\xff", 3)),
            "m.onnx: error: byte offset 0: failed to parse ModelProto (3 bytes): truncated field "
            "tag");
}

TEST(OnnxErrors, garbage_bytes_that_parse_as_protobuf_are_not_a_model) {
  // Field 3 (producer_version) = "ab": valid protobuf, not a model.
  EXPECT_EQ(error_of(std::string("\x1a\x02"
                                 "ab",
                                 4)),
            "m.onnx: error: parsed 4 bytes as protobuf but found no ir_version and no graph; not "
            "an ONNX model");
}

TEST(OnnxErrors, random_bytes_never_crash_and_always_name_the_file) {
  std::mt19937 generator(20261121);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(1, 512);
  for (int trial = 0; trial < 500; ++trial) {
    std::string bytes(static_cast<std::size_t>(length(generator)), '\0');
    for (char& c : bytes) c = static_cast<char>(byte(generator));
    const std::string message = error_of(bytes);
    EXPECT_EQ(message.rfind("m.onnx: error: ", 0), 0u) << "trial " << trial << ": " << message;
  }
}

TEST(OnnxErrors, every_truncation_of_a_valid_model_fails_cleanly) {
  const std::string bytes = conv_model().bytes();
  for (std::size_t size = 1; size < bytes.size(); ++size) {
    const std::string message = error_of(bytes.substr(0, size));
    EXPECT_EQ(message.rfind("m.onnx: error: ", 0), 0u) << "size " << size << ": " << message;
  }
}

// --- model and graph ----------------------------------------------------------------------

TEST(OnnxErrors, opset_below_11_is_unsupported) {
  ModelBuilder model(9);
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: opset_import: opset 9 is not supported (Tessel imports 11 to 20)");
}

TEST(OnnxErrors, opset_above_20_is_unsupported) {
  ModelBuilder model(21);
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: opset_import: opset 21 is not supported (Tessel imports 11 to 20)");
}

TEST(OnnxErrors, graph_without_outputs) {
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"});
  EXPECT_EQ(error_of(model), "m.onnx: error: graph: has no outputs");
}

TEST(OnnxErrors, graph_without_inputs) {
  ModelBuilder model;
  model.weight("w", {1, 4}).node("Relu", "r", {"w"}, {"r"}).output("r");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph: has no inputs (every graph input is an initializer)");
}

TEST(OnnxErrors, dynamic_dimension_without_input_shape) {
  ModelBuilder model;
  model.input("x", {-1, 3, 8, 8}).node("Relu", "r", {"x"}, {"r"}).output("r");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph input 0 'x': dimension 0 ('N') is dynamic; fix it with "
            "--input-shape x:<d0>x<d1>x...");
}

TEST(OnnxErrors, input_shape_for_an_unknown_input_suggests_the_real_one) {
  OnnxImportOptions options;
  options.input_shapes["xx"] = {1, 3, 8, 8};
  EXPECT_EQ(error_of(conv_model(), options),
            "m.onnx: error: --input-shape: 'xx' is not a graph input (inputs: x); did you mean "
            "'x'?");
}

TEST(OnnxErrors, input_shape_that_contradicts_a_fixed_dimension) {
  OnnxImportOptions options;
  options.input_shapes["x"] = {1, 4, 8, 8};
  EXPECT_EQ(error_of(conv_model(), options),
            "m.onnx: error: graph input 0 'x': --input-shape gives dimension 1 as 4 but the model "
            "fixes it to 3");
}

TEST(OnnxErrors, non_float_graph_input) {
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r");
  model.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto_DataType_INT8);
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph input 0 'x': has element type INT8; Tessel imports float "
            "(FLOAT) inputs and integer token ids (INT64, INT32)");
  // INT64 is taken as token ids, which only an embedding may read.
  model.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto_DataType_INT64);
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'r' (Relu): input 0 'x' holds integer token ids; Tessel reads "
            "them only as the indices of a Gather from a constant table (an embedding)");
}

TEST(OnnxErrors, output_that_nothing_produces) {
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("z");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph output 0 'z': is not produced by any node and is not a graph "
            "input or initializer");
}

TEST(OnnxErrors, declared_output_shape_that_disagrees_with_inference) {
  ModelBuilder model;
  model.input("x", {1, 4}).node("Relu", "r", {"x"}, {"r"}).output("r", {1, 5});
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph output 0 'r': is declared with shape [1,5] but infers to [1,4]");
}

// --- nodes --------------------------------------------------------------------------------

TEST(OnnxErrors, unsupported_op_names_node_index_name_and_type) {
  ModelBuilder model = conv_model();
  model.proto().mutable_graph()->mutable_node(1)->set_op_type("NonMaxSuppression");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 1 'relu' (NonMaxSuppression): unsupported op type "
            "'NonMaxSuppression'");
}

TEST(OnnxErrors, misspelt_op_type_gets_a_suggestion) {
  ModelBuilder model = conv_model();
  model.proto().mutable_graph()->mutable_node(1)->set_op_type("ReLU");
  EXPECT_EQ(
      error_of(model),
      "m.onnx: error: node 1 'relu' (ReLU): unsupported op type 'ReLU'; did you mean 'Relu'?");
}

TEST(OnnxErrors, op_from_another_domain) {
  ModelBuilder model = conv_model();
  model.proto().mutable_graph()->mutable_node(1)->set_domain("com.microsoft");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 1 'relu' (Relu): unsupported op type 'Relu' "
            "from domain 'com.microsoft'");
}

TEST(OnnxErrors, missing_initializer) {
  ModelBuilder model;
  model.input("x", {1, 3, 8, 8}).node("Conv", "conv", {"x", "w"}, {"c"}).output("c");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'conv' (Conv): input 1 'w' is not defined (no initializer, "
            "graph input or node output has that name)");
}

TEST(OnnxErrors, conv_weight_channels_disagree_with_the_input) {
  ModelBuilder model;
  model.input("x", {1, 3, 8, 8})
      .weight("w", {4, 2, 3, 3})
      .node("Conv", "conv", {"x", "w"}, {"c"})
      .output("c");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'conv' (Conv): weight %w has 2 input channels per group but "
            "input %x has 3 (group 1)");
}

TEST(OnnxErrors, kernel_shape_disagrees_with_the_weight) {
  EXPECT_EQ(error_of(conv_model({{"kernel_shape", Ints{5, 5}}})),
            "m.onnx: error: node 0 'conv' (Conv): kernel_shape [5,5] disagrees with the "
            "weight's [3,3]");
}

TEST(OnnxErrors, add_of_shapes_that_do_not_broadcast) {
  ModelBuilder model;
  model.input("a", {1, 4, 2, 2})
      .input("b", {1, 3, 1, 1})
      .node("Add", "sum", {"a", "b"}, {"s"})
      .output("s");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'sum' (Add): operands 'a' [1,4,2,2] and 'b' [1,3,1,1] do not "
            "broadcast");
}

TEST(OnnxErrors, cycle_names_every_node_on_it) {
  ModelBuilder model;
  model.input("x", {1, 4})
      .node("Add", "a", {"x", "b_out"}, {"a_out"})
      .node("Relu", "b", {"a_out"}, {"b_out"})
      .output("b_out");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'a' (Add): is on a cycle: node 0 'a' (Add) -> node 1 'b' "
            "(Relu) -> node 0 'a' (Add)");
}

TEST(OnnxErrors, two_nodes_writing_one_tensor) {
  ModelBuilder model;
  model.input("x", {1, 4})
      .node("Relu", "a", {"x"}, {"y"})
      .node("Relu", "b", {"x"}, {"y"})
      .output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 1 'b' (Relu): output 'y' is already produced by node 0 'a' "
            "(Relu)");
}

TEST(OnnxErrors, zero_stride) {
  EXPECT_EQ(error_of(conv_model({{"strides", Ints{0, 1}}})),
            "m.onnx: error: node 0 'conv' (Conv): strides [0,1] must be positive");
}

TEST(OnnxErrors, negative_pads) {
  EXPECT_EQ(error_of(conv_model({{"pads", Ints{-1, 0, 0, 0}}})),
            "m.onnx: error: node 0 'conv' (Conv): pads [-1,0,0,0] must not be negative");
}

// --- limits (docs/onnx-import.md "Limits") -----------------------------------------------

TEST(OnnxErrors, conv_pads_past_the_window_limit_are_refused_before_shape_arithmetic) {
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_EQ(error_of(conv_model({{"pads", Ints{big, 0, 0, 0}}})),
            "m.onnx: error: node 0 'conv' (Conv): pads [4611686018427387904,0,0,0]: "
            "4611686018427387904 is over the limit of 1073741824");
  // 2^30 itself is allowed by the window limit (the output size is then what fails).
  EXPECT_EQ(error_of(conv_model({{"strides", Ints{std::int64_t{1} << 30, 1}}})), "<no error>");
}

TEST(OnnxErrors, graph_input_of_more_than_2p30_elements_is_refused_without_wrapping) {
  ModelBuilder model;
  // 2^32 * 2^32 * 4 wraps int64 to 0; the step-by-step check refuses it at the second dim.
  model.input("x", {std::int64_t{1} << 32, std::int64_t{1} << 32, 4})
      .node("Relu", "r", {"x"}, {"y"})
      .output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: graph input 0 'x': shape [4294967296,4294967296,4] has more than "
            "1073741824 elements (4 GiB of float32, the import limit)");
  ModelBuilder exact;  // 2^30 elements exactly: allowed
  exact.input("x", {1, std::int64_t{1} << 30}).node("Relu", "r", {"x"}, {"y"}).output("y");
  EXPECT_EQ(error_of(exact), "<no error>");
}

TEST(OnnxErrors, op_result_of_more_than_2p30_elements_is_refused) {
  ModelBuilder model;
  // Each input is small; their broadcast sum [65536, 32768] has 2^31 elements.
  model.input("a", {65536, 1}).input("b", {1, 32768}).node("Add", "ok", {"a", "b"}, {"s"});
  model.output("s");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'ok' (Add): result 's': shape [65536,32768] has more than "
            "1073741824 elements (4 GiB of float32, the import limit)");
}

TEST(OnnxErrors, average_pool_pad_not_smaller_than_the_kernel) {
  // kernel 2, pad 2: the first window [-2, -1] lies wholly in the padding (an average of no
  // elements: NaN with count_include_pad=0). Pad 1 is fine.
  auto pool = [](Ints pads) {
    ModelBuilder model;
    model.input("x", {1, 1, 4, 4})
        .node("AveragePool", "a", {"x"}, {"y"}, {{"kernel_shape", Ints{2, 2}}, {"pads", pads}})
        .output("y");
    return model;
  };
  EXPECT_EQ(error_of(pool({1, 1, 1, 1})), "<no error>");
  EXPECT_EQ(error_of(pool({0, 0, 0, 2})),
            "m.onnx: error: node 0 'a' (AveragePool): pads [0,0,0,2]: pad 2 on axis 3 is not "
            "smaller than kernel_shape [2,2] (a window would lie wholly in the padding)");
}

TEST(OnnxErrors, recurrence_longer_than_the_unroll_limit) {
  ModelBuilder model;
  model.input("x", {16385, 1, 1})
      .weight("W", {1, 4, 1})
      .weight("R", {1, 4, 1})
      .node("LSTM", "l", {"x", "W", "R"}, {"y"}, {{"hidden_size", 1}})
      .output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'l' (LSTM): sequence length 16385 is over the limit of 16384 "
            "unrolled steps");
}

TEST(OnnxErrors, pads_together_with_auto_pad) {
  EXPECT_EQ(error_of(conv_model({{"pads", Ints{1, 1, 1, 1}}, {"auto_pad", "SAME_UPPER"}})),
            "m.onnx: error: node 0 'conv' (Conv): pads [1,1,1,1] cannot be combined with auto_pad "
            "SAME_UPPER");
}

TEST(OnnxErrors, unknown_auto_pad_value) {
  EXPECT_EQ(error_of(conv_model({{"auto_pad", "SAME"}})),
            "m.onnx: error: node 0 'conv' (Conv): auto_pad 'SAME' is not one of NOTSET, "
            "SAME_UPPER, SAME_LOWER, VALID");
}

TEST(OnnxErrors, attribute_with_the_wrong_type) {
  EXPECT_EQ(error_of(conv_model({{"strides", 2}})),
            "m.onnx: error: node 0 'conv' (Conv): attribute 'strides' must be INTS, not INT");
}

TEST(OnnxErrors, unknown_attribute_gets_a_suggestion) {
  EXPECT_EQ(error_of(conv_model({{"stride", Ints{2, 2}}})),
            "m.onnx: error: node 0 'conv' (Conv): attribute 'stride' is not defined for Conv; did "
            "you mean 'strides'?");
}

TEST(OnnxErrors, non_constant_reshape_shape) {
  ModelBuilder model;
  model.input("x", {1, 4}).input("s", {2}).node("Reshape", "re", {"x", "s"}, {"r"}).output("r");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 're' (Reshape): shape (input 1 's') must be a constant (an "
            "initializer, a Constant node's output or a value computed from them)");
}

TEST(OnnxErrors, initializer_with_too_few_values) {
  ModelBuilder model;
  model.input("x", {1, 3, 8, 8})
      .weight("w", {4, 3, 3, 3}, {1, 2, 3})
      .node("Conv", "conv", {"x", "w"}, {"c"})
      .output("c");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: initializer 0 'w': holds 3 values but its dims [4,3,3,3] need 108");
}

TEST(OnnxErrors, external_data_is_not_read) {
  ModelBuilder model = conv_model();
  model.proto().mutable_graph()->mutable_initializer(0)->set_data_location(
      onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_EQ(error_of(model),
            "m.onnx: error: initializer 0 'w': stores its data in an external file, which Tessel "
            "reads only for a model imported from a file (the data's folder)");
}

TEST(OnnxErrors, maxpool_indices_output_in_use) {
  ModelBuilder model;
  model.input("x", {1, 1, 4, 4})
      .node("MaxPool", "pool", {"x"}, {"p", "idx"}, {{"kernel_shape", Ints{2, 2}}})
      .output("p")
      .output("idx");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'pool' (MaxPool): output 1 'idx' is read, but Tessel imports "
            "only the first 1 output(s) of MaxPool");
}

TEST(OnnxErrors, pool_without_kernel_shape) {
  ModelBuilder model;
  model.input("x", {1, 1, 4, 4}).node("MaxPool", "pool", {"x"}, {"p"}).output("p");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'pool' (MaxPool): attribute 'kernel_shape' is required");
}

TEST(OnnxErrors, conv1d_is_unsupported) {
  ModelBuilder model;
  model.input("x", {1, 3, 8})
      .weight("w", {4, 3, 3})
      .node("Conv", "conv", {"x", "w"}, {"c"})
      .output("c");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'conv' (Conv): input 'x' has shape [1,3,8]; expected rank 4");
}

TEST(OnnxErrors, reflect_padding_is_unsupported) {
  ModelBuilder model;
  model.input("x", {1, 1, 4, 4})
      .ints("pads", {0, 0, 1, 1, 0, 0, 1, 1})
      .node("Pad", "pad", {"x", "pads"}, {"p"}, {{"mode", "reflect"}})
      .output("p");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'pad' (Pad): mode 'reflect' is not supported (only "
            "'constant')");
}

TEST(OnnxErrors, gemm_with_transposed_a) {
  ModelBuilder model;
  model.input("x", {4, 1})
      .weight("w", {4, 2})
      .node("Gemm", "fc", {"x", "w"}, {"y"}, {{"transA", 1}})
      .output("y");
  EXPECT_EQ(error_of(model), "m.onnx: error: node 0 'fc' (Gemm): transA=1 is not supported");
}

TEST(OnnxErrors, batchnorm_in_training_mode) {
  ModelBuilder model(14);
  model.input("x", {1, 2, 2, 2})
      .weight("g", {2})
      .weight("b", {2})
      .weight("m", {2})
      .weight("v", {2})
      .node("BatchNormalization", "bn", {"x", "g", "b", "m", "v"}, {"y"}, {{"training_mode", 1}})
      .output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'bn' (BatchNormalization): training_mode=1 is not supported; "
            "Tessel imports inference graphs only");
}

TEST(OnnxErrors, clip_bound_that_is_not_constant) {
  ModelBuilder model;
  model.input("x", {1, 4}).input("lo", {1}).node("Clip", "c", {"x", "lo"}, {"y"}).output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'c' (Clip): min (input 1 'lo') must be a constant (an "
            "initializer, a Constant node's output or a value computed from them)");
}

}  // namespace
}  // namespace tessel::frontend
