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

}  // namespace tessel::zoo::detail
