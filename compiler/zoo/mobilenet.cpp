// MobileNet-v2 (torchvision mobilenetv2.py: inverted residuals, ReLU6, linear bottlenecks).
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

std::string conv_bn_relu6(NetBuilder& net, const std::string& x, const std::string& prefix,
                          const ConvSpec& spec) {
  const std::string conv = net.conv(x, prefix + ".0", spec);
  return net.clip(net.batch_norm(conv, prefix + ".1"), prefix + ".2", 0.0, 6.0);
}

}  // namespace

ir::Graph build_mobilenet_v2(const ZooOptions& options) {
  struct Stage {
    std::int64_t expand, channels, repeats, stride;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  NetBuilder net("mobilenet_v2", options);
  std::string x = net.input("input", 3, 224, 224);
  x = conv_bn_relu6(net, x, "features.0", conv_spec(32, 3, 2, 1));
  int index = 1;
  for (const Stage& stage : stages) {
    for (std::int64_t i = 0; i < stage.repeats; ++i, ++index) {
      const std::string block = "features." + std::to_string(index) + ".conv";
      const std::int64_t stride = i == 0 ? stage.stride : 1;
      const std::int64_t in_channels = net.channels(x);
      const std::int64_t hidden = in_channels * stage.expand;
      std::string y = x;
      int layer = 0;
      if (stage.expand != 1) {
        y = conv_bn_relu6(net, y, block + "." + std::to_string(layer++), conv_spec(hidden, 1));
      }
      ConvSpec depthwise = conv_spec(hidden, 3, stride, 1);
      depthwise.group = hidden;
      y = conv_bn_relu6(net, y, block + "." + std::to_string(layer++), depthwise);
      ConvSpec project = conv_spec(stage.channels, 1);
      project.gain = 1.0;  // linear bottleneck: no activation follows
      y = net.conv(y, block + "." + std::to_string(layer++), project);
      const bool residual = stride == 1 && in_channels == stage.channels;
      y = net.batch_norm(y, block + "." + std::to_string(layer++), 1e-5, residual ? 0.5 : 1.0);
      x = residual ? net.add(x, y, "features." + std::to_string(index) + ".add") : y;
    }
  }
  x = conv_bn_relu6(net, x, "features.18", conv_spec(1280, 1));
  x = net.global_average_pool(x, "avgpool");
  x = net.flatten(x, "flatten");
  x = net.linear(x, "classifier.1", 1000);
  return net.finish({x});
}

}  // namespace tessel::zoo::detail
