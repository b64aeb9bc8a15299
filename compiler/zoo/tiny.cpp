// Tiny test nets (a few KB each) exercising one structural feature apiece.
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {

ir::Graph build_tiny_conv(const ZooOptions& options) {
  NetBuilder net("tiny_conv", options);
  std::string x = net.input("input", 3, 8, 8);
  ConvSpec spec = conv_spec(4, 3, 1, 1);
  spec.bias = true;
  x = net.relu(net.conv(x, "conv", spec), "relu");
  return net.finish({x});
}

ir::Graph build_tiny_residual(const ZooOptions& options) {
  NetBuilder net("tiny_residual", options);
  const std::string x = net.input("input", 4, 8, 8);
  std::string y = net.conv_bn_relu(x, "conv1", "bn1", "relu1", conv_spec(4, 3, 1, 1));
  y = net.batch_norm(net.conv(y, "conv2", conv_spec(4, 3, 1, 1)), "bn2", 1e-5, 0.5);
  y = net.relu(net.add(y, x, "add"), "relu2");
  return net.finish({y});
}

ir::Graph build_tiny_inception(const ZooOptions& options) {
  NetBuilder net("tiny_inception", options);
  const std::string x = net.input("input", 8, 8, 8);
  const std::string b1 = net.relu(net.conv(x, "branch1.conv", conv_spec(4, 1)), "branch1.relu");
  std::string b2 = net.relu(net.conv(x, "branch2.0.conv", conv_spec(4, 1)), "branch2.0.relu");
  b2 = net.relu(net.conv(b2, "branch2.1.conv", conv_spec(4, 3, 1, 1)), "branch2.1.relu");
  std::string b3 = net.max_pool(x, "branch3.pool", 3, 1, 1);
  b3 = net.relu(net.conv(b3, "branch3.conv", conv_spec(4, 1)), "branch3.relu");
  return net.finish({net.concat({b1, b2, b3}, "concat")});
}

ir::Graph build_tiny_mlp(const ZooOptions& options) {
  NetBuilder net("tiny_mlp", options);
  std::string x = net.input("input", 4, 2, 2);
  x = net.flatten(x, "flatten");
  x = net.relu(net.linear(x, "fc1", 8, 2.0), "relu");
  x = net.softmax(net.linear(x, "fc2", 4), "softmax");
  return net.finish({x});
}

ir::Graph build_tiny_depthwise(const ZooOptions& options) {
  NetBuilder net("tiny_depthwise", options);
  std::string x = net.input("input", 4, 8, 8);
  ConvSpec depthwise = conv_spec(4, 3, 1, 1);
  depthwise.group = 4;
  x = net.clip(net.batch_norm(net.conv(x, "dw", depthwise), "dw_bn"), "dw_relu6", 0.0, 6.0);
  ConvSpec pointwise = conv_spec(8, 1);
  pointwise.gain = 1.0;
  x = net.batch_norm(net.conv(x, "pw", pointwise), "pw_bn");
  x = net.flatten(net.global_average_pool(x, "pool"), "flatten");
  return net.finish({x});
}

ir::Graph build_tiny_stem(const ZooOptions& options) {
  NetBuilder net("tiny_stem", options);
  std::string x = net.input("input", 3, 16, 16);
  x = net.conv_bn_relu(x, "conv1", "bn1", "relu1", conv_spec(8, 7, 2, 3));
  x = net.max_pool(x, "maxpool", 3, 2, 1);
  ConvSpec spec = conv_spec(8, 3, 1, 1);
  spec.bias = true;
  x = net.relu(net.conv(x, "conv2", spec), "relu2");
  return net.finish({x});
}

namespace {
// The modern-CNN ops of the accelerator path (issue 36): a unary function per kind the lut
// instruction runs (HardSwish, SiLU, HardSigmoid, Sigmoid) and an SE block's per-channel Mul,
// over an h x w map.
ir::Graph tiny_se_net(const char* name, int64_t h, int64_t w, const ZooOptions& options) {
  NetBuilder net(name, options);
  std::string x = net.input("input", 8, h, w);
  x = net.batch_norm(net.conv(x, "expand", conv_spec(16, 1)), "expand_bn");
  x = net.op("expand_hswish", ir::OpKind::HardSwish, {x});
  ConvSpec depthwise = conv_spec(16, 3, 1, 1);
  depthwise.group = 16;
  x = net.batch_norm(net.conv(x, "dw", depthwise), "dw_bn");
  x = net.op("dw_silu", ir::OpKind::Silu, {x});
  std::string s = net.global_average_pool(x, "se.pool");
  ConvSpec fc1 = conv_spec(4, 1);
  fc1.bias = true;
  s = net.relu(net.conv(s, "se.fc1", fc1), "se.relu");
  ConvSpec fc2 = conv_spec(16, 1);
  fc2.bias = true;
  fc2.gain = 1.0;
  s = net.op("se.gate", ir::OpKind::HardSigmoid, {net.conv(s, "se.fc2", fc2)},
             {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
  x = net.op("se.scale", ir::OpKind::Mul, {s, x});
  x = net.batch_norm(net.conv(x, "project", conv_spec(8, 1)), "project_bn");
  return net.finish({net.op("sigmoid", ir::OpKind::Sigmoid, {x})});
}
}  // namespace

ir::Graph build_tiny_se(const ZooOptions& options) {
  return tiny_se_net("tiny_se", 8, 8, options);
}

ir::Graph build_tiny_se_wide(const ZooOptions& options) {
  // The SE pool over a 20 x 32 map, wider than the pool instruction's 15 x 15 window: 2 x 3
  // sub-windows of 10 x 10 and 10 x 11 (docs/codegen.md, "SE pools wider than the pool window").
  return tiny_se_net("tiny_se_wide", 20, 32, options);
}

ir::Graph build_tiny_grouped(const ZooOptions& options) {
  // Grouped convolutions as ResNeXt has them (issue 36): 4 groups of 8 channels, then 8 groups
  // of 4 (block-diagonal on arrays of 8 columns and more; a conv per group where a group is a
  // whole number of column blocks).
  NetBuilder net("tiny_grouped", options);
  std::string x = net.input("input", 8, 8, 8);
  x = net.conv_bn_relu(x, "conv1", "bn1", "relu1", conv_spec(32, 1));
  ConvSpec g4 = conv_spec(32, 3, 1, 1);
  g4.group = 4;
  x = net.conv_bn_relu(x, "conv2", "bn2", "relu2", g4);
  ConvSpec g8 = conv_spec(32, 3, 2, 1);
  g8.group = 8;
  x = net.conv_bn_relu(x, "conv3", "bn3", "relu3", g8);
  return net.finish({net.conv(x, "conv4", conv_spec(16, 1))});
}

}  // namespace tessel::zoo::detail
