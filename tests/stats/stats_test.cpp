// Statistics: hand-computed tiny nets, torchvision MAC totals, the Table 1 comparison.
#include "compiler/stats/stats.hpp"

#include <gtest/gtest.h>

#include <map>

#include "compiler/zoo/zoo.hpp"

namespace tessel::stats {
namespace {

NetworkStats stats_of(const std::string& model, StatsOptions options = {}) {
  zoo::ZooOptions zoo_options;
  zoo_options.with_weights = false;
  auto built = zoo::build_model(model, zoo_options);
  EXPECT_TRUE(built.ok());
  auto computed = compute_stats(built.value(), options);
  EXPECT_TRUE(computed.ok()) << computed.reason();
  return computed.value();
}

const TypeStats& type(const NetworkStats& stats, const std::string& name) {
  for (const TypeStats& row : stats.by_type) {
    if (row.layer_type == name) return row;
  }
  throw std::out_of_range(name);
}

TEST(Stats, tiny_conv_counts_by_hand) {
  // conv 3->4, 3x3, pad 1 on 8x8: MACs = 4*8*8 outputs * 27 = 6912; params 108 + 4 bias.
  // 8-bit bytes: input 3*64 = 192, weights 112, output 4*64 = 256 -> 560 -> 12.342857 ops/byte.
  const NetworkStats stats = stats_of("tiny_conv");
  ASSERT_EQ(stats.layers.size(), 2u);
  const LayerStats& conv = stats.layers[0];
  EXPECT_EQ(conv.macs, 6912);
  EXPECT_EQ(conv.params, 112);
  EXPECT_EQ(conv.input_bytes, 192);
  EXPECT_EQ(conv.weight_bytes, 112);
  EXPECT_EQ(conv.output_bytes, 256);
  EXPECT_NEAR(conv.compute_to_memory(), 6912.0 / 560.0, 1e-12);
  const LayerStats& relu = stats.layers[1];
  EXPECT_EQ(relu.ops, 256);
  EXPECT_EQ(relu.memory_bytes(), 512);
  EXPECT_EQ(stats.total_ops, 7168);
  EXPECT_NEAR(type(stats, "Convolution").compute_share, 6912.0 / 7168.0, 1e-12);
  EXPECT_NEAR(type(stats, "ReLU").memory_share, 512.0 / 1072.0, 1e-12);
}

TEST(Stats, bits_scale_bytes_not_ops) {
  StatsOptions sixteen;
  sixteen.bits = 16;
  const NetworkStats stats = stats_of("tiny_conv", sixteen);
  EXPECT_EQ(stats.layers[0].memory_bytes(), 2 * 560);
  EXPECT_EQ(stats.total_ops, 7168);
  zoo::ZooOptions zoo_options;
  auto built = zoo::build_model("tiny_conv", zoo_options);
  StatsOptions bad;
  bad.bits = 4;
  auto failed = compute_stats(built.value(), bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.reason(), "bits must be 8, 16 or 32, got 4");
}

TEST(Stats, batchnorm_counts_as_caffe_batchnorm_plus_scale) {
  // tiny_residual bn1 on 4x8x8 = 256 elements, 4 channels, 8-bit:
  // BatchNorm: 256 ops, in 256 + mean/var 8 + out 256 = 520 bytes, 0 params;
  // Scale:     256 ops, in 256 + gamma/beta 8 + out 256 = 520 bytes, 8 params.
  const NetworkStats stats = stats_of("tiny_residual");
  std::map<std::string, LayerStats> by_name;
  for (const LayerStats& layer : stats.layers) by_name[layer.name] = layer;
  ASSERT_TRUE(by_name.count("bn1") && by_name.count("bn1.scale"));
  EXPECT_EQ(by_name["bn1"].layer_type, "BatchNorm");
  EXPECT_EQ(by_name["bn1"].ops, 256);
  EXPECT_EQ(by_name["bn1"].memory_bytes(), 520);
  EXPECT_EQ(by_name["bn1"].params, 0);
  EXPECT_EQ(by_name["bn1.scale"].layer_type, "Scale");
  EXPECT_EQ(by_name["bn1.scale"].memory_bytes(), 520);
  EXPECT_EQ(by_name["bn1.scale"].params, 8);
  EXPECT_EQ(by_name["add"].layer_type, "Eltwise");
  EXPECT_EQ(by_name["add"].memory_bytes(), 3 * 256);

  StatsOptions fused;
  fused.caffe_batchnorm = false;
  const NetworkStats one = stats_of("tiny_residual", fused);
  for (const LayerStats& layer : one.layers) EXPECT_NE(layer.layer_type, "Scale");
}

// MAC totals computed independently with forward hooks on torchvision 0.14's models
// (Conv2d: out.numel() * in/groups * kh * kw; Linear: out.numel() * in_features).
TEST(Stats, mac_totals_equal_torchvision_hooks) {
  const std::map<std::string, std::int64_t> expected = {
      {"resnet18", 1'814'073'344},  {"resnet50", 4'089'184'256},     {"vgg19", 19'632'062'464},
      {"googlenet", 1'498'376'192}, {"inception_v3", 5'713'216'096}, {"mobilenet_v2", 300'774'272},
  };
  for (const auto& [model, macs] : expected) EXPECT_EQ(stats_of(model).total_macs, macs) << model;
}

TEST(Stats, resnet18_by_type_shares) {
  // Our convention on torchvision's ResNet-18 (no softmax), recorded so a counting change is
  // noticed; docs/ir.md compares them with the paper's Table 1.
  const NetworkStats stats = stats_of("resnet18");
  EXPECT_EQ(type(stats, "Convolution").layers, 20);
  EXPECT_EQ(type(stats, "BatchNorm").layers, 20);
  EXPECT_EQ(type(stats, "Scale").layers, 20);
  EXPECT_EQ(type(stats, "ReLU").layers, 17);
  EXPECT_EQ(type(stats, "Eltwise").layers, 8);
  EXPECT_EQ(type(stats, "Pooling").layers, 2);
  EXPECT_EQ(type(stats, "InnerProduct").layers, 1);
  // BatchNorm ops = sum of BN output elements = 2,483,712 (hand sum over the 20 BNs).
  EXPECT_EQ(type(stats, "BatchNorm").ops, 2'483'712);
  EXPECT_EQ(type(stats, "ReLU").ops, 2'308'096);
  EXPECT_GT(type(stats, "Convolution").compute_share, 0.99);
}

}  // namespace
}  // namespace tessel::stats
