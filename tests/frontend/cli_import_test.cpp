// `tessel import --model x.onnx` end to end through the CLI registry (load_model -> import_onnx).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli.hpp"
#include "tests/frontend/onnx_builder.hpp"

namespace tessel::frontend {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ImportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_frontend_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_model(const ModelBuilder& model, const std::string& name) {
    const fs::path path = dir_ / name;
    std::ofstream out(path, std::ios::binary);
    out << model.bytes();
    return path;
  }
  fs::path dir_;
};

ModelBuilder relu_model(std::vector<std::int64_t> input_dims) {
  ModelBuilder model;
  model.input("x", std::move(input_dims))
      .weight("w", {2, 1, 1, 1}, {1, -1})
      .node("Conv", "conv", {"x", "w"}, {"conv"})
      .node("Relu", "relu", {"conv"}, {"relu"})
      .output("relu");
  return model;
}

TEST_F(ImportCli, import_dump_of_an_onnx_path_prints_the_ir_text) {
  const fs::path model = write_model(relu_model({1, 1, 2, 2}), "tiny.onnx");
  const fs::path out = dir_ / "tiny.tir";
  ASSERT_EQ(run({"import", "--model", model.string(), "--dump", "-o", out.string()}), 0);
  EXPECT_EQ(read(out),
            "graph tiny {\n"
            "  input %x : f32[1,1,2,2]\n"
            "  const %w : f32[2,1,1,1] = [1, -1]\n"
            "  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,2,2,2]\n"
            "  %relu = Relu(%conv) : f32[1,2,2,2]\n"
            "  output %relu\n"
            "}\n");
}

TEST_F(ImportCli, import_json_of_an_onnx_path_carries_the_ops) {
  const fs::path model = write_model(relu_model({1, 1, 2, 2}), "tiny.onnx");
  const fs::path out = dir_ / "tiny.json";
  ASSERT_EQ(run({"import", "--model", model.string(), "--json", "-o", out.string()}), 0);
  const auto json = nlohmann::json::parse(read(out));
  ASSERT_EQ(json.at("ops").size(), 3u);
  EXPECT_EQ(json.at("ops")[1].at("kind"), "Conv");
  EXPECT_EQ(json.at("ops")[2].at("kind"), "Relu");
}

TEST_F(ImportCli, input_shape_option_reaches_the_importer) {
  const fs::path model = write_model(relu_model({-1, 1, 2, 2}), "dynamic.onnx");
  const fs::path out = dir_ / "dynamic.tir";
  ASSERT_EQ(
      run({"import", "--model", model.string(), "--input-shape", "x:3x1x2x2", "-o", out.string()}),
      0);
  EXPECT_NE(read(out).find("input %x : f32[3,1,2,2]"), std::string::npos) << read(out);
}

TEST_F(ImportCli, a_bad_onnx_file_exits_1_with_the_located_message) {
  ModelBuilder model = relu_model({1, 1, 2, 2});
  model.proto().mutable_graph()->mutable_node(1)->set_op_type("NonMaxSuppression");
  const fs::path path = write_model(model, "bad.onnx");
  ::testing::internal::CaptureStderr();
  const int status = run({"import", "--model", path.string()});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(
      err.find(path.string() + ": error: node 1 'relu' (NonMaxSuppression): unsupported op type "
                               "'NonMaxSuppression'"),
      std::string::npos)
      << err;
}

}  // namespace
}  // namespace tessel::frontend
