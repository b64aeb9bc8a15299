// VGG-19 (torchvision vgg.py, configuration "E", no batch norm).
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {

ir::Graph build_vgg19(const ZooOptions& options) {
  constexpr std::int64_t kPool = 0;  // 'M' in torchvision's cfgs
  const std::int64_t config[] = {64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
                                 512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool};
  NetBuilder net("vgg19", options);
  std::string x = net.input("input", 3, 224, 224);
  int index = 0;  // torchvision's `features.<index>` numbering counts conv, relu and pool
  for (std::int64_t channels : config) {
    const std::string name = "features." + std::to_string(index);
    if (channels == kPool) {
      x = net.max_pool(x, name, 2, 2);
      index += 1;
    } else {
      ConvSpec spec = conv_spec(channels, 3, 1, 1);
      spec.bias = true;
      x = net.conv(x, name, spec);
      x = net.relu(x, "features." + std::to_string(index + 1));
      index += 2;
    }
  }
  // AdaptiveAvgPool2d((7, 7)) of a 7x7 map: torch.onnx exports a 1x1 AveragePool.
  x = net.average_pool(x, "avgpool", 1, 1);
  x = net.flatten(x, "flatten");
  x = net.relu(net.linear(x, "classifier.0", 4096, 2.0), "classifier.1");
  x = net.relu(net.linear(x, "classifier.3", 4096, 2.0), "classifier.4");
  x = net.linear(x, "classifier.6", 1000);
  return net.finish({x});
}

}  // namespace tessel::zoo::detail
