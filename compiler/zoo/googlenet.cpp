// GoogLeNet (torchvision googlenet.py, eval: no aux heads, transform_input=False).
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

std::string inception(NetBuilder& net, const std::string& x, const std::string& name,
                      std::int64_t ch1x1, std::int64_t ch3x3red, std::int64_t ch3x3,
                      std::int64_t ch5x5red, std::int64_t ch5x5, std::int64_t pool_proj) {
  const std::string b1 = basic_conv(net, x, name + ".branch1", conv_spec(ch1x1, 1));
  std::string b2 = basic_conv(net, x, name + ".branch2.0", conv_spec(ch3x3red, 1));
  b2 = basic_conv(net, b2, name + ".branch2.1", conv_spec(ch3x3, 3, 1, 1));
  // torchvision's "5x5" branch really uses a 3x3 kernel (kept for weight compatibility).
  std::string b3 = basic_conv(net, x, name + ".branch3.0", conv_spec(ch5x5red, 1));
  b3 = basic_conv(net, b3, name + ".branch3.1", conv_spec(ch5x5, 3, 1, 1));
  std::string b4 = net.max_pool(x, name + ".branch4.0", 3, 1, 1, true);
  b4 = basic_conv(net, b4, name + ".branch4.1", conv_spec(pool_proj, 1));
  return net.concat({b1, b2, b3, b4}, name);
}

}  // namespace

ir::Graph build_googlenet(const ZooOptions& options) {
  NetBuilder net("googlenet", options);
  std::string x = net.input("input", 3, 224, 224);
  x = basic_conv(net, x, "conv1", conv_spec(64, 7, 2, 3));
  x = net.max_pool(x, "maxpool1", 3, 2, 0, true);
  x = basic_conv(net, x, "conv2", conv_spec(64, 1));
  x = basic_conv(net, x, "conv3", conv_spec(192, 3, 1, 1));
  x = net.max_pool(x, "maxpool2", 3, 2, 0, true);
  x = inception(net, x, "inception3a", 64, 96, 128, 16, 32, 32);
  x = inception(net, x, "inception3b", 128, 128, 192, 32, 96, 64);
  x = net.max_pool(x, "maxpool3", 3, 2, 0, true);
  x = inception(net, x, "inception4a", 192, 96, 208, 16, 48, 64);
  x = inception(net, x, "inception4b", 160, 112, 224, 24, 64, 64);
  x = inception(net, x, "inception4c", 128, 128, 256, 24, 64, 64);
  x = inception(net, x, "inception4d", 112, 144, 288, 32, 64, 64);
  x = inception(net, x, "inception4e", 256, 160, 320, 32, 128, 128);
  x = net.max_pool(x, "maxpool4", 2, 2, 0, true);
  x = inception(net, x, "inception5a", 256, 160, 320, 32, 128, 128);
  x = inception(net, x, "inception5b", 384, 192, 384, 48, 128, 128);
  x = net.global_average_pool(x, "avgpool");
  x = net.flatten(x, "flatten");
  x = net.linear(x, "fc", 1000);
  return net.finish({x});
}

}  // namespace tessel::zoo::detail
