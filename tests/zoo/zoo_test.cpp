// Zoo models match torchvision: parameter counts, shapes, op counts; weights are deterministic.
#include "compiler/zoo/zoo.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <cmath>
#include <map>

#include "compiler/ir/analysis.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/diagnostic.hpp"

namespace tessel::zoo {
namespace {

ir::Graph shapes_only(const std::string& name, std::int64_t batch = 1) {
  ZooOptions options;
  options.with_weights = false;
  options.batch = batch;
  auto built = build_model(name, options);
  EXPECT_TRUE(built.ok()) << built.reason();
  return std::move(built).value();
}

std::map<ir::OpKind, int> kind_counts(const ir::Graph& graph) {
  std::map<ir::OpKind, int> counts;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) ++counts[graph.op(id).kind];
  return counts;
}

// Expected values: `sum(p.numel() for p in m.parameters())` printed by torchvision 0.14 under
// /usr/bin/python3 (Debian python3-torchvision), models built with init_weights=False.
// googlenet and inception_v3 with aux_logits=False: the eval graph that ONNX export writes has no
// aux heads (with them torchvision reports 13,004,888 and 27,161,264).
TEST(Zoo, parameter_counts_equal_torchvision) {
  const std::map<std::string, std::int64_t> expected = {
      {"resnet18", 11'689'512},    {"resnet50", 25'557'032}, {"vgg19", 143'667'240},
      {"mobilenet_v2", 3'504'872}, {"googlenet", 6'624'904}, {"inception_v3", 23'834'568},
  };
  for (const auto& [name, count] : expected) {
    EXPECT_EQ(ir::parameter_count(shapes_only(name)), count) << name;
  }
}

TEST(Zoo, output_is_batch_by_1000_logits) {
  for (const char* name :
       {"resnet18", "resnet50", "vgg19", "googlenet", "inception_v3", "mobilenet_v2"}) {
    const ir::Graph graph = shapes_only(name, 2);
    ASSERT_EQ(graph.outputs().size(), 1u);
    EXPECT_EQ(graph.tensor(graph.outputs()[0]).shape, (ir::Shape{2, 1000})) << name;
  }
}

TEST(Zoo, resnet18_layer_shapes_and_op_counts) {
  const ir::Graph g = shapes_only("resnet18");
  EXPECT_EQ(g.tensor("conv1").shape, (ir::Shape{1, 64, 112, 112}));
  EXPECT_EQ(g.tensor("maxpool").shape, (ir::Shape{1, 64, 56, 56}));
  EXPECT_EQ(g.tensor("layer2.0.downsample.0").shape, (ir::Shape{1, 128, 28, 28}));
  EXPECT_EQ(g.tensor("layer4.1.relu2").shape, (ir::Shape{1, 512, 7, 7}));
  const auto counts = kind_counts(g);
  EXPECT_EQ(counts.at(ir::OpKind::Conv), 20);  // 1 + 16 + 3 downsample
  EXPECT_EQ(counts.at(ir::OpKind::BatchNormalization), 20);
  EXPECT_EQ(counts.at(ir::OpKind::Relu), 17);
  EXPECT_EQ(counts.at(ir::OpKind::Add), 8);
  EXPECT_EQ(counts.at(ir::OpKind::Gemm), 1);
}

TEST(Zoo, googlenet_ceil_mode_pools_and_inception_widths) {
  const ir::Graph g = shapes_only("googlenet");
  EXPECT_EQ(g.tensor("maxpool1").shape, (ir::Shape{1, 64, 56, 56}));
  EXPECT_EQ(g.tensor("maxpool2").shape, (ir::Shape{1, 192, 28, 28}));
  EXPECT_EQ(g.tensor("inception3a").shape, (ir::Shape{1, 256, 28, 28}));
  EXPECT_EQ(g.tensor("maxpool4").shape, (ir::Shape{1, 832, 7, 7}));
  EXPECT_EQ(g.tensor("inception5b").shape, (ir::Shape{1, 1024, 7, 7}));
  EXPECT_EQ(kind_counts(g).at(ir::OpKind::Conv), 57);
}

TEST(Zoo, inception_v3_shapes_at_299) {
  const ir::Graph g = shapes_only("inception_v3");
  EXPECT_EQ(g.tensor("maxpool2").shape, (ir::Shape{1, 192, 35, 35}));
  EXPECT_EQ(g.tensor("Mixed_5d").shape, (ir::Shape{1, 288, 35, 35}));
  EXPECT_EQ(g.tensor("Mixed_6e").shape, (ir::Shape{1, 768, 17, 17}));
  EXPECT_EQ(g.tensor("Mixed_7c").shape, (ir::Shape{1, 2048, 8, 8}));
  EXPECT_EQ(kind_counts(g).at(ir::OpKind::Conv), 94);
}

TEST(Zoo, mobilenet_v2_depthwise_and_relu6) {
  const ir::Graph g = shapes_only("mobilenet_v2");
  const ir::Op& depthwise = g.op(*g.find_op("features.2.conv.1.0"));
  EXPECT_EQ(depthwise.get_int("group"), 96);
  EXPECT_EQ(g.tensor("features.18.2").shape, (ir::Shape{1, 1280, 7, 7}));
  const auto counts = kind_counts(g);
  EXPECT_EQ(counts.at(ir::OpKind::Conv), 52);
  EXPECT_EQ(counts.at(ir::OpKind::Clip), 35);
  EXPECT_EQ(counts.at(ir::OpKind::Add), 10);
}

TEST(Zoo, weights_depend_on_seed_and_name_not_on_build_order) {
  auto a = build_model("tiny_residual");
  auto b = build_model("tiny_residual");
  ZooOptions other_seed;
  other_seed.seed = 7;
  auto c = build_model("tiny_residual", other_seed);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value().tensor("conv1.weight").f32_values,
            c.value().tensor("conv1.weight").f32_values);
  // The same tensor name in another model gets the same values (counter RNG keyed by name).
  auto conv = build_model("tiny_conv");
  ASSERT_TRUE(conv.ok());
  const auto& w = conv.value().tensor("conv.weight").f32_values;
  ASSERT_EQ(w.size(), 4u * 3u * 3u * 3u);
  double sum = 0, sum_sq = 0;
  for (float v : w) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  // He-normal: std = sqrt(2 / 27) = 0.272; 108 samples put the estimate within +-25%.
  const double std_dev = std::sqrt(sum_sq / 108 - (sum / 108) * (sum / 108));
  EXPECT_NEAR(std_dev, 0.272, 0.07);
}

TEST(Zoo, batchnorm_parameters_are_sane) {
  auto built = build_model("tiny_residual");
  ASSERT_TRUE(built.ok());
  for (float v : built.value().tensor("bn1.running_var").f32_values) {
    EXPECT_GT(v, 0.5f);
    EXPECT_LT(v, 2.0f);
  }
  for (float v : built.value().tensor("bn1.weight").f32_values) {
    EXPECT_GT(v, 0.5f);
    EXPECT_LT(v, 1.5f);
  }
}

TEST(Zoo, unknown_model_suggests_a_name) {
  auto built = build_model("resnet81");
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.reason().rfind("unknown model 'resnet81'; did you mean 'resnet18'?", 0), 0u)
      << built.reason();
}

TEST(Zoo, load_model_rejects_unknown_names_and_missing_files) {
  try {
    load_model("resnt18");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.diagnostics()[0].str().rfind(
                  "<input>: error: --model: unknown model 'resnt18'; did you mean 'resnet18'?", 0),
              0u)
        << error.what();
  }
  try {
    load_model("/nonexistent/model.tir");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.diagnostics()[0].str(), "/nonexistent/model.tir: error: cannot open the file");
  }
}

// A text graph may leave results unshaped (`f32[?]`): load_model infers them (a Relu's result
// ran as one element before, a silent wrong answer) and checks every declared shape.
TEST(LoadModel, infers_the_shapes_a_text_graph_leaves_out_and_checks_the_declared_ones) {
  const auto dir = std::filesystem::temp_directory_path() / "tessel_load_model_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "r.tir").string();
  std::ofstream(path)
      << "graph r {\n  input %x : f32[1,3]\n  %y = Relu(%x) : f32[?]\n  output %y\n}\n";
  EXPECT_EQ(load_model(path).tensor("y").shape, (ir::Shape{1, 3}));
  std::ofstream(path)
      << "graph r {\n  input %x : f32[1,3]\n  %y = Relu(%x) : f32[1,4]\n  output %y\n}\n";
  try {
    load_model(path);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.diagnostics()[0].str(),
              path + ": error: %y is declared [1,4] but infers to [1,3]");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::zoo
