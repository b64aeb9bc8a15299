// ResNet-18 and ResNet-50 (torchvision resnet.py: BasicBlock / Bottleneck v1.5, stride on 3x3).
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

/// The final BN of a residual branch starts near 0.5 (see zoo.hpp: variance grows slowly).
constexpr double kResidualGamma = 0.5;

std::string downsample_if_needed(NetBuilder& net, const std::string& x, const std::string& block,
                                 std::int64_t out_channels, std::int64_t stride) {
  if (stride == 1 && net.channels(x) == out_channels) return x;
  const std::string conv = net.conv(x, block + ".downsample.0", conv_spec(out_channels, 1, stride));
  return net.batch_norm(conv, block + ".downsample.1");
}

std::string basic_block(NetBuilder& net, const std::string& x, const std::string& block,
                        std::int64_t planes, std::int64_t stride) {
  std::string y = net.conv(x, block + ".conv1", conv_spec(planes, 3, stride, 1));
  y = net.relu(net.batch_norm(y, block + ".bn1"), block + ".relu1");
  y = net.conv(y, block + ".conv2", conv_spec(planes, 3, 1, 1));
  y = net.batch_norm(y, block + ".bn2", 1e-5, kResidualGamma);
  const std::string identity = downsample_if_needed(net, x, block, planes, stride);
  return net.relu(net.add(y, identity, block + ".add"), block + ".relu2");
}

/// torchvision's Bottleneck; `groups` and `width` (of conv1/conv2) for ResNeXt (width =
/// planes * base_width / 64 * groups; ResNet: planes, 1 group).
std::string bottleneck(NetBuilder& net, const std::string& x, const std::string& block,
                       std::int64_t planes, std::int64_t stride, std::int64_t groups = 1,
                       std::int64_t width = 0) {
  constexpr std::int64_t kExpansion = 4;
  if (width == 0) width = planes;
  std::string y = net.conv(x, block + ".conv1", conv_spec(width, 1));
  y = net.relu(net.batch_norm(y, block + ".bn1"), block + ".relu1");
  ConvSpec grouped = conv_spec(width, 3, stride, 1);
  grouped.group = groups;
  y = net.conv(y, block + ".conv2", grouped);
  y = net.relu(net.batch_norm(y, block + ".bn2"), block + ".relu2");
  y = net.conv(y, block + ".conv3", conv_spec(planes * kExpansion, 1));
  y = net.batch_norm(y, block + ".bn3", 1e-5, kResidualGamma);
  const std::string identity = downsample_if_needed(net, x, block, planes * kExpansion, stride);
  return net.relu(net.add(y, identity, block + ".add"), block + ".relu3");
}

ir::Graph build_resnet(const std::string& name, const ZooOptions& options, bool use_bottleneck,
                       const std::int64_t (&blocks)[4], std::int64_t groups = 1,
                       std::int64_t width_per_group = 64) {
  NetBuilder net(name, options);
  std::string x = net.input("input", 3, 224, 224);
  x = net.conv(x, "conv1", conv_spec(64, 7, 2, 3));
  x = net.relu(net.batch_norm(x, "bn1"), "relu");
  x = net.max_pool(x, "maxpool", 3, 2, 1);
  const std::int64_t planes[4] = {64, 128, 256, 512};
  for (int layer = 0; layer < 4; ++layer) {
    for (std::int64_t i = 0; i < blocks[layer]; ++i) {
      const std::string block = "layer" + std::to_string(layer + 1) + "." + std::to_string(i);
      const std::int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      const std::int64_t width = planes[layer] * width_per_group / 64 * groups;
      x = use_bottleneck ? bottleneck(net, x, block, planes[layer], stride, groups, width)
                         : basic_block(net, x, block, planes[layer], stride);
    }
  }
  x = net.global_average_pool(x, "avgpool");
  x = net.flatten(x, "flatten");
  x = net.linear(x, "fc", 1000);
  return net.finish({x});
}

}  // namespace

ir::Graph build_resnet18(const ZooOptions& options) {
  return build_resnet("resnet18", options, false, {2, 2, 2, 2});
}

ir::Graph build_resnet50(const ZooOptions& options) {
  return build_resnet("resnet50", options, true, {3, 4, 6, 3});
}

ir::Graph build_resnext50_32x4d(const ZooOptions& options) {
  return build_resnet("resnext50_32x4d", options, true, {3, 4, 6, 3}, 32, 4);
}

}  // namespace tessel::zoo::detail
