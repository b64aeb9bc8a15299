// Outside oracle: ONNX's own backend node tests (libonnx-testdata) import with the output shape
// of their reference output, for every 2-D pool/conv padding mode and the other supported ops.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/frontend/onnx_import.hpp"

namespace tessel::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, output_shape_matches_the_reference_output) {
  const fs::path dir = kNodeTests / ("test_" + GetParam());
  if (!fs::exists(dir)) {
    GTEST_SKIP() << dir << " is missing (install Debian's libonnx-testdata)";
  }
  std::ifstream in(dir / "test_data_set_0" / "output_0.pb", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto expected;
  ASSERT_TRUE(expected.ParseFromString(bytes.str()));
  const ir::Shape expected_shape(expected.dims().begin(), expected.dims().end());

  const ir::Graph graph = import_onnx((dir / "model.onnx").string());
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.tensor(graph.outputs()[0]).shape, expected_shape);
}

// Cases left out, on purpose: Gemm with a broadcast [1,N] bias when M > 1 (the IR's Gemm takes
// [N] or [M,N]); Clip bounds and Pad/Reshape shapes given as graph inputs rather than constants;
// opset < 11 (GlobalAveragePool's tests are opset 1); 1-D and 3-D windows; graphs whose output
// is the input itself (Identity, Dropout).
INSTANTIATE_TEST_SUITE_P(
    Backend, OnnxNodeTest,
    ::testing::Values(
        "averagepool_2d_ceil", "averagepool_2d_default", "averagepool_2d_pads",
        "averagepool_2d_pads_count_include_pad", "averagepool_2d_precomputed_pads",
        "averagepool_2d_precomputed_pads_count_include_pad",
        "averagepool_2d_precomputed_same_upper", "averagepool_2d_precomputed_strides",
        "averagepool_2d_same_lower", "averagepool_2d_same_upper", "averagepool_2d_strides",
        "maxpool_2d_ceil", "maxpool_2d_default", "maxpool_2d_dilations", "maxpool_2d_pads",
        "maxpool_2d_precomputed_pads", "maxpool_2d_precomputed_same_upper",
        "maxpool_2d_precomputed_strides", "maxpool_2d_same_lower", "maxpool_2d_same_upper",
        "maxpool_2d_strides", "conv_with_autopad_same", "conv_with_strides_and_asymmetric_padding",
        "conv_with_strides_no_padding", "conv_with_strides_padding", "gemm_default_no_bias",
        "gemm_default_matrix_bias", "matmul_2d", "relu", "add", "concat_2d_axis_0",
        "concat_2d_axis_1", "concat_3d_axis_negative_2", "flatten_axis0", "flatten_axis2",
        "flatten_default_axis", "flatten_negative_axis1", "softmax_axis_0", "softmax_axis_1",
        "softmax_axis_2", "softmax_default_axis", "softmax_example", "softmax_negative_axis",
        "batchnorm_epsilon", "batchnorm_example", "clip_default_inbounds"),
    [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tessel::frontend
