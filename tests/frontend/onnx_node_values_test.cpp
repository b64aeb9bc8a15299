// Outside oracle: ONNX's backend node tests (libonnx-testdata) imported and run on the fp32
// executor, every output compared with the reference output ONNX ships.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/targets/cpu/executor.hpp"

namespace tessel::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// The ONNX backend tests' default tolerance (onnx/backend/test/case/node: rtol 1e-3, atol 1e-7).
constexpr double kRelativeTolerance = 1e-3;
constexpr double kAbsoluteTolerance = 1e-7;

template <class Message>
bool read_proto(const fs::path& path, Message& message) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return message.ParseFromString(bytes.str());
}

/// Float values of a FLOAT tensor (raw or listed), or of an INT64 one converted.
std::vector<float> float_values(const onnx::TensorProto& tensor) {
  if (tensor.data_type() == onnx::TensorProto_DataType_INT64) {
    std::vector<std::int64_t> ints(tensor.int64_data().begin(), tensor.int64_data().end());
    if (tensor.has_raw_data()) {
      ints.resize(tensor.raw_data().size() / sizeof(std::int64_t));
      std::memcpy(ints.data(), tensor.raw_data().data(), ints.size() * sizeof(std::int64_t));
    }
    return std::vector<float>(ints.begin(), ints.end());
  }
  if (tensor.data_type() == onnx::TensorProto_DataType_DOUBLE) {
    std::vector<double> doubles(tensor.double_data().begin(), tensor.double_data().end());
    if (tensor.has_raw_data()) {
      doubles.resize(tensor.raw_data().size() / sizeof(double));
      std::memcpy(doubles.data(), tensor.raw_data().data(), doubles.size() * sizeof(double));
    }
    return std::vector<float>(doubles.begin(), doubles.end());
  }
  if (tensor.has_raw_data()) {
    std::vector<float> values(tensor.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(float));
    return values;
  }
  return {tensor.float_data().begin(), tensor.float_data().end()};
}

/// A case: the test's name, then the graph inputs that are frozen to their test values as
/// initializers (Tessel takes shapes, indices, axes and masks as constants). Every non-float
/// graph input is frozen without being listed, unless `ints_as_floats`: then INT64 inputs and
/// outputs not listed are run as float (small whole numbers, exact in float; Trilu's tests).
/// `first_output_only`: the other graph outputs are dropped (LayerNormalization's Mean and
/// InvStdDev, which Tessel does not import). `doubles_as_floats`: DOUBLE inputs and outputs run
/// as float (Einsum's tests are float64; the tolerance covers float's rounding). `ids`: INT64
/// inputs not listed stay graph inputs, run as i32 token ids (a Gather from a frozen table is
/// an Embedding).
struct NodeCase {
  std::string name;
  std::set<std::string> frozen;
  bool first_output_only = false;
  bool ints_as_floats = false;
  bool doubles_as_floats = false;
  bool ids = false;
};

void PrintTo(const NodeCase& c, std::ostream* os) {
  *os << c.name;
}

class OnnxNodeValues : public ::testing::TestWithParam<NodeCase> {};

TEST_P(OnnxNodeValues, fp32_executor_matches_the_reference_outputs) {
  const NodeCase& param = GetParam();
  const fs::path dir = kNodeTests / ("test_" + param.name);
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is missing (install Debian's libonnx-testdata)";
  onnx::ModelProto model;
  ASSERT_TRUE(read_proto(dir / "model.onnx", model));
  auto* graph = model.mutable_graph();
  std::map<std::string, cpu::TensorData> inputs;
  std::vector<onnx::ValueInfoProto> kept;
  for (int i = 0; i < graph->input_size(); ++i) {
    const onnx::ValueInfoProto& info = graph->input(i);
    onnx::TensorProto value;
    ASSERT_TRUE(
        read_proto(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), value));
    const int type = info.type().tensor_type().elem_type();
    const bool as_float = type == onnx::TensorProto_DataType_FLOAT ||
                          (param.ints_as_floats && type == onnx::TensorProto_DataType_INT64) ||
                          (param.doubles_as_floats && type == onnx::TensorProto_DataType_DOUBLE);
    if (param.ids && type == onnx::TensorProto_DataType_INT64 && !param.frozen.count(info.name())) {
      kept.push_back(info);
      const std::vector<float> ids = float_values(value);  // small whole numbers: exact
      cpu::TensorData id_values(ir::DType::i32,
                                ir::Shape(value.dims().begin(), value.dims().end()));
      for (std::size_t k = 0; k < ids.size(); ++k)
        id_values.data<std::int32_t>()[k] = static_cast<std::int32_t>(ids[k]);
      inputs[info.name()] = std::move(id_values);
      continue;
    }
    if (!as_float || param.frozen.count(info.name())) {
      value.set_name(info.name());
      *graph->add_initializer() = value;
      continue;
    }
    kept.push_back(info);
    kept.back().mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto_DataType_FLOAT);
    const ir::Shape shape(value.dims().begin(), value.dims().end());
    inputs[info.name()] =
        cpu::TensorData::from_f32(shape.empty() ? ir::Shape{1} : shape, float_values(value));
  }
  graph->clear_input();
  for (const auto& info : kept) *graph->add_input() = info;
  if (param.ids) {  // the Gather's indices are token ids: the model reads them at run time
    bool embedding = false;
    const ir::Graph check = import_onnx_bytes(model.SerializeAsString(), "model.onnx");
    for (ir::OpId id = 0; id < check.num_ops(); ++id)
      embedding |= check.op(id).kind == ir::OpKind::Embedding;
    EXPECT_TRUE(embedding) << "no Embedding in the imported graph";
  }
  if (param.first_output_only) {
    while (graph->output_size() > 1) graph->mutable_output()->RemoveLast();
  }
  for (auto& output : *graph->mutable_output()) {
    output.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  }

  const ir::Graph imported =
      import_onnx_bytes(model.SerializeAsString(), (dir / "model.onnx").string());
  cpu::Executor executor(imported);
  auto outputs = executor.run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.reason();
  ASSERT_EQ(imported.outputs().size(), static_cast<std::size_t>(graph->output_size()));
  for (int o = 0; o < graph->output_size(); ++o) {
    onnx::TensorProto expected;
    ASSERT_TRUE(
        read_proto(dir / "test_data_set_0" / ("output_" + std::to_string(o) + ".pb"), expected));
    ASSERT_TRUE(
        expected.data_type() == onnx::TensorProto_DataType_FLOAT ||
        (param.ints_as_floats && expected.data_type() == onnx::TensorProto_DataType_INT64) ||
        (param.doubles_as_floats && expected.data_type() == onnx::TensorProto_DataType_DOUBLE));
    const std::vector<float> want = float_values(expected);
    const cpu::TensorData& got =
        outputs.value().at(imported.outputs()[static_cast<std::size_t>(o)]);
    ir::Shape want_shape(expected.dims().begin(), expected.dims().end());
    if (want_shape.empty()) want_shape = {1};  // the IR has no rank-0 tensors
    ASSERT_EQ(got.shape(), want_shape) << "output " << o;
    const std::vector<float> values = got.to_f32();
    ASSERT_EQ(values.size(), want.size());
    int bad = 0;
    for (std::size_t i = 0; i < want.size() && bad < 5; ++i) {
      const double limit = kAbsoluteTolerance + kRelativeTolerance * std::fabs(want[i]);
      const bool both_nan = std::isnan(want[i]) && std::isnan(values[i]);
      if (!both_nan && !(std::fabs(static_cast<double>(values[i]) - want[i]) <= limit)) {
        ADD_FAILURE() << "output " << o << " element " << i << ": got " << values[i]
                      << ", expected " << want[i];
        ++bad;
      }
    }
  }
}

// Which node tests run, and why the others of these ops do not: docs/onnx-import.md lists them.
INSTANTIATE_TEST_SUITE_P(
    Backend, OnnxNodeValues,
    ::testing::ValuesIn(std::vector<NodeCase>{
        // unary functions
        {"sigmoid", {}},
        {"sigmoid_example", {}},
        {"hardswish", {}},
        {"tanh", {}},
        {"tanh_example", {}},
        {"erf", {}},
        {"sqrt", {}},
        {"sqrt_example", {}},
        {"exp", {}},
        {"exp_example", {}},
        {"reciprocal", {}},
        {"reciprocal_example", {}},
        {"neg", {}},
        {"neg_example", {}},
        {"relu", {}},
        // broadcasting binary ops
        {"add", {}},
        {"add_bcast", {}},
        {"sub", {}},
        {"sub_bcast", {}},
        {"sub_example", {}},
        {"mul", {}},
        {"mul_bcast", {}},
        {"mul_example", {}},
        {"div", {}},
        {"div_bcast", {}},
        {"div_example", {}},
        {"pow", {}},
        {"pow_bcast_array", {}},
        {"pow_bcast_scalar", {"y"}},
        {"pow_example", {}},
        {"pow_types_float32_int32", {}},
        {"pow_types_float32_int64", {}},
        {"where_example", {}},
        {"where_long_example", {}, false, true},
        // matrix products
        {"matmul_2d", {}},
        {"matmul_3d", {}},
        {"matmul_4d", {}},
        {"einsum_batch_matmul", {}, false, false, true},
        {"einsum_transpose", {}, false, false, true},
        {"einsum_sum", {}, false, false, true},
        {"einsum_inner_prod", {}, false, false, true},
        {"gemm_default_no_bias", {}},
        {"gemm_default_matrix_bias", {}},
        // recurrences, unrolled
        {"lstm_defaults", {"W", "R", "B"}},
        {"lstm_with_initial_bias", {"W", "R", "B"}},
        {"lstm_batchwise", {"W", "R", "B"}},
        {"gru_defaults", {"W", "R", "B"}},
        {"gru_seq_length", {"W", "R", "B"}},
        {"gru_with_initial_bias", {"W", "R", "B"}},
        {"gru_batchwise", {"W", "R", "B"}},
        // normalisation and reductions
        {"softmax_axis_0", {}},
        {"softmax_axis_1", {}},
        {"softmax_axis_2", {}},
        {"softmax_default_axis", {}},
        {"softmax_example", {}},
        {"softmax_negative_axis", {}},
        {"softmax_large_number", {}},
        {"layer_normalization_2d_axis0", {}, true},
        {"layer_normalization_2d_axis1", {}, true},
        {"layer_normalization_2d_axis_negative_1", {}, true},
        {"layer_normalization_2d_axis_negative_2", {}, true},
        {"layer_normalization_3d_axis0_epsilon", {}, true},
        {"layer_normalization_3d_axis1_epsilon", {}, true},
        {"layer_normalization_3d_axis2_epsilon", {}, true},
        {"layer_normalization_3d_axis_negative_1_epsilon", {}, true},
        {"layer_normalization_3d_axis_negative_2_epsilon", {}, true},
        {"layer_normalization_3d_axis_negative_3_epsilon", {}, true},
        {"layer_normalization_4d_axis0", {}, true},
        {"layer_normalization_4d_axis1", {}, true},
        {"layer_normalization_4d_axis2", {}, true},
        {"layer_normalization_4d_axis3", {}, true},
        {"layer_normalization_4d_axis_negative_1", {}, true},
        {"layer_normalization_4d_axis_negative_2", {}, true},
        {"layer_normalization_4d_axis_negative_3", {}, true},
        {"layer_normalization_4d_axis_negative_4", {}, true},
        {"layer_normalization_default_axis", {}, true},
        // the function-expanded forms (ReduceMean/Sub/Pow/Sqrt/Div, ReduceMax/Exp/ReduceSum...)
        {"layer_normalization_2d_axis0_expanded", {}, true},
        {"layer_normalization_2d_axis1_expanded", {}, true},
        {"layer_normalization_2d_axis_negative_1_expanded", {}, true},
        {"layer_normalization_2d_axis_negative_2_expanded", {}, true},
        {"layer_normalization_3d_axis0_epsilon_expanded", {}, true},
        {"layer_normalization_3d_axis1_epsilon_expanded", {}, true},
        {"layer_normalization_3d_axis2_epsilon_expanded", {}, true},
        {"layer_normalization_3d_axis_negative_1_epsilon_expanded", {}, true},
        {"layer_normalization_3d_axis_negative_2_epsilon_expanded", {}, true},
        {"layer_normalization_3d_axis_negative_3_epsilon_expanded", {}, true},
        {"layer_normalization_4d_axis0_expanded", {}, true},
        {"layer_normalization_4d_axis1_expanded", {}, true},
        {"layer_normalization_4d_axis2_expanded", {}, true},
        {"layer_normalization_4d_axis3_expanded", {}, true},
        {"layer_normalization_4d_axis_negative_1_expanded", {}, true},
        {"layer_normalization_4d_axis_negative_2_expanded", {}, true},
        {"layer_normalization_4d_axis_negative_3_expanded", {}, true},
        {"layer_normalization_4d_axis_negative_4_expanded", {}, true},
        {"layer_normalization_default_axis_expanded", {}, true},
        {"softmax_axis_0_expanded", {}},
        {"softmax_axis_1_expanded", {}},
        {"softmax_axis_2_expanded", {}},
        {"softmax_default_axis_expanded", {}},
        {"softmax_example_expanded", {}},
        {"softmax_large_number_expanded", {}},
        {"softmax_negative_axis_expanded", {}},
        {"hardswish_expanded", {}},
        {"reduce_max_default_axes_keepdim_example", {}},
        {"reduce_max_default_axes_keepdims_random", {}},
        {"reduce_max_do_not_keepdims_example", {}},
        {"reduce_max_do_not_keepdims_random", {}},
        {"reduce_max_keepdims_example", {}},
        {"reduce_max_keepdims_random", {}},
        {"reduce_max_negative_axes_keepdims_example", {}},
        {"reduce_max_negative_axes_keepdims_random", {}},
        {"reduce_mean_default_axes_keepdims_example", {}},
        {"reduce_mean_default_axes_keepdims_random", {}},
        {"reduce_mean_do_not_keepdims_example", {}},
        {"reduce_mean_do_not_keepdims_random", {}},
        {"reduce_mean_keepdims_example", {}},
        {"reduce_mean_keepdims_random", {}},
        {"reduce_mean_negative_axes_keepdims_example", {}},
        {"reduce_mean_negative_axes_keepdims_random", {}},
        {"reduce_l2_default_axes_keepdims_example", {}},
        {"reduce_l2_default_axes_keepdims_random", {}},
        {"reduce_l2_do_not_keepdims_example", {}},
        {"reduce_l2_do_not_keepdims_random", {}},
        {"reduce_l2_keep_dims_example", {}},
        {"reduce_l2_keep_dims_random", {}},
        {"reduce_l2_negative_axes_keep_dims_example", {}},
        {"reduce_l2_negative_axes_keep_dims_random", {}},
        {"reduce_sum_square_default_axes_keepdims_example", {}},
        {"reduce_sum_square_default_axes_keepdims_random", {}},
        {"reduce_sum_square_do_not_keepdims_example", {}},
        {"reduce_sum_square_do_not_keepdims_random", {}},
        {"reduce_sum_square_keepdims_example", {}},
        {"reduce_sum_square_keepdims_random", {}},
        {"reduce_sum_square_negative_axes_keepdims_example", {}},
        {"reduce_sum_square_negative_axes_keepdims_random", {}},
        {"reduce_sum_default_axes_keepdims_example", {}},
        {"reduce_sum_default_axes_keepdims_random", {}},
        {"reduce_sum_do_not_keepdims_example", {}},
        {"reduce_sum_do_not_keepdims_random", {}},
        {"reduce_sum_empty_axes_input_noop_example", {}},
        {"reduce_sum_empty_axes_input_noop_random", {}},
        {"reduce_sum_keepdims_example", {}},
        {"reduce_sum_keepdims_random", {}},
        {"reduce_sum_negative_axes_keepdims_example", {}},
        {"reduce_sum_negative_axes_keepdims_random", {}},
        // data movement
        {"transpose_default", {}},
        {"transpose_all_permutations_0", {}},
        {"transpose_all_permutations_1", {}},
        {"transpose_all_permutations_2", {}},
        {"transpose_all_permutations_3", {}},
        {"transpose_all_permutations_4", {}},
        {"transpose_all_permutations_5", {}},
        {"squeeze", {}},
        {"squeeze_negative_axes", {}},
        {"unsqueeze_axis_0", {}},
        {"unsqueeze_axis_1", {}},
        {"unsqueeze_axis_2", {}},
        {"unsqueeze_axis_3", {}},
        {"unsqueeze_negative_axes", {}},
        {"unsqueeze_three_axes", {}},
        {"unsqueeze_two_axes", {}},
        {"unsqueeze_unsorted_axes", {}},
        {"flatten_axis0", {}},
        {"flatten_axis1", {}},
        {"flatten_axis2", {}},
        {"flatten_axis3", {}},
        {"flatten_default_axis", {}},
        {"flatten_negative_axis1", {}},
        {"flatten_negative_axis2", {}},
        {"flatten_negative_axis3", {}},
        {"flatten_negative_axis4", {}},
        {"reshape_extended_dims", {}},
        {"reshape_negative_dim", {}},
        {"reshape_negative_extended_dims", {}},
        {"reshape_one_dim", {}},
        {"reshape_reduced_dims", {}},
        {"reshape_reordered_all_dims", {}},
        {"reshape_reordered_last_dims", {}},
        {"reshape_zero_and_negative_dim", {}},
        {"reshape_zero_dim", {}},
        {"concat_1d_axis_0", {}},
        {"concat_1d_axis_negative_1", {}},
        {"concat_2d_axis_0", {}},
        {"concat_2d_axis_1", {}},
        {"concat_2d_axis_negative_1", {}},
        {"concat_2d_axis_negative_2", {}},
        {"concat_3d_axis_0", {}},
        {"concat_3d_axis_1", {}},
        {"concat_3d_axis_2", {}},
        {"concat_3d_axis_negative_1", {}},
        {"concat_3d_axis_negative_2", {}},
        {"concat_3d_axis_negative_3", {}},
        {"slice", {}},
        {"slice_default_axes", {}},
        {"slice_default_steps", {}},
        {"slice_end_out_of_bounds", {}},
        {"slice_neg", {}},
        {"slice_neg_steps", {}},
        {"slice_negative_axes", {}},
        {"split_equal_parts_1d", {}},
        {"split_equal_parts_2d", {}},
        {"split_equal_parts_default_axis", {}},
        {"split_variable_parts_1d", {}},
        {"split_variable_parts_2d", {}},
        {"split_variable_parts_default_axis", {}},
        {"gather_0", {}},
        {"gather_1", {}},
        {"gather_2d_indices", {}},
        {"gather_negative_indices", {}},
        // the same Gathers from a constant table by run-time INT64 indices: Embedding
        {"gather_0", {"data"}, false, false, false, true},
        {"gather_negative_indices", {"data"}, false, false, false, true},
        {"expand_dim_changed", {}},
        {"expand_dim_unchanged", {}},
        {"tril", {"k"}, false, true},
        {"tril_neg", {"k"}, false, true},
        {"tril_one_row_neg", {"k"}, false, true},
        {"tril_out_neg", {"k"}, false, true},
        {"tril_out_pos", {"k"}, false, true},
        {"tril_pos", {"k"}, false, true},
        {"tril_square", {"k"}, false, true},
        {"tril_square_neg", {"k"}, false, true},
        {"triu", {"k"}, false, true},
        {"triu_neg", {"k"}, false, true},
        {"triu_one_row", {"k"}, false, true},
        {"triu_out_neg_out", {"k"}, false, true},
        {"triu_out_pos", {"k"}, false, true},
        {"triu_pos", {"k"}, false, true},
        {"triu_square", {"k"}, false, true},
        {"triu_square_neg", {"k"}, false, true},
        {"resize_upsample_scales_nearest", {"scales"}},
        {"resize_downsample_sizes_nearest", {}},
        {"resize_upsample_sizes_nearest", {}},
        {"resize_upsample_sizes_nearest_ceil_half_pixel", {}},
        {"resize_upsample_sizes_nearest_floor_align_corners", {}},
        {"resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", {}},
        {"resize_upsample_scales_linear", {"scales"}},
        {"resize_upsample_scales_linear_align_corners", {"scales"}},
        {"resize_downsample_sizes_linear_pytorch_half_pixel", {}},
    }),
    [](const auto& param_info) {
      return param_info.param.name + (param_info.param.ids ? "_ids" : "");
    });

}  // namespace
}  // namespace tessel::frontend
