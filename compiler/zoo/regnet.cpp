// RegNet (torchvision regnet.py, Radosavovic et al. 2020): a stem, four stages of
// ResBottleneckBlocks whose 3x3 conv runs in groups of a fixed width, and a linear head.
// RegNet-X 1.6GF's groups of 24 channels are whole blocks of no shipped array (128, 16 and 8
// columns): the zoo's grouped conv of that kind (docs/codegen.md "Grouped convolution").
#include <cmath>
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

/// The final BN of a residual branch starts near 0.5, as ResNet's (zoo.hpp).
constexpr double kRegNetResidualGamma = 0.5;

struct RegNetShape {
  std::int64_t depths[4];
  std::int64_t widths[4];
  std::int64_t group_width;
  double se_ratio;  ///< 0: no squeeze-excitation (RegNet-X)
};

/// ResBottleneckBlock (bottleneck multiplier 1): f.a 1x1 -> BN -> ReLU, f.b 3x3 in groups of
/// `group_width` at `stride` -> BN -> ReLU, [f.se], f.c 1x1 -> BN; a projection shortcut
/// (1x1 at `stride` -> BN) where the width or the size changes; add; ReLU.
std::string res_bottleneck(NetBuilder& net, const std::string& x, const std::string& p,
                           std::int64_t width, std::int64_t stride, const RegNetShape& shape) {
  const std::int64_t width_in = net.channels(x);
  std::string y = net.conv(x, p + ".f.a.0", conv_spec(width, 1));
  y = net.relu(net.batch_norm(y, p + ".f.a.1"), p + ".f.a.2");
  ConvSpec grouped = conv_spec(width, 3, stride, 1);
  grouped.group = width / shape.group_width;
  y = net.relu(net.batch_norm(net.conv(y, p + ".f.b.0", grouped), p + ".f.b.1"), p + ".f.b.2");
  if (shape.se_ratio > 0) {
    const auto squeeze =
        static_cast<std::int64_t>(std::round(shape.se_ratio * static_cast<double>(width_in)));
    y = squeeze_excite(net, y, p + ".f.se", squeeze, ir::OpKind::Relu, ir::OpKind::Sigmoid);
  }
  ConvSpec last = conv_spec(width, 1);
  last.gain = 1.0;
  y = net.batch_norm(net.conv(y, p + ".f.c.0", last), p + ".f.c.1", 1e-5, kRegNetResidualGamma);
  std::string shortcut = x;
  if (width_in != width || stride != 1)
    shortcut =
        net.batch_norm(net.conv(x, p + ".proj.0", conv_spec(width, 1, stride)), p + ".proj.1");
  return net.relu(net.add(shortcut, y, p + ".add"), p + ".activation");
}

ir::Graph build_regnet(const std::string& name, const ZooOptions& options,
                       const RegNetShape& shape) {
  NetBuilder net(name, options);
  std::string x = net.input("input", 3, 224, 224);
  x = net.conv(x, "stem.0", conv_spec(32, 3, 2, 1));
  x = net.relu(net.batch_norm(x, "stem.1"), "stem.2");
  for (int s = 0; s < 4; ++s) {
    const std::string stage = "trunk_output.block" + std::to_string(s + 1);
    for (std::int64_t i = 0; i < shape.depths[s]; ++i)
      x = res_bottleneck(net, x,
                         stage + "." + "block" + std::to_string(s + 1) + "-" + std::to_string(i),
                         shape.widths[s], i == 0 ? 2 : 1, shape);
  }
  x = net.global_average_pool(x, "avgpool");
  x = net.flatten(x, "flatten");
  x = net.linear(x, "fc", 1000);
  return net.finish({x});
}

}  // namespace

ir::Graph build_regnet_x_1_6gf(const ZooOptions& options) {
  // torchvision's BlockParams of regnet_x_1_6gf (depth 18, w_0 80, w_a 34.01, w_m 2.25,
  // group width 24), quantized: depths [2, 4, 10, 2], widths [72, 168, 408, 912].
  return build_regnet("regnet_x_1_6gf", options, {{2, 4, 10, 2}, {72, 168, 408, 912}, 24, 0.0});
}

}  // namespace tessel::zoo::detail
