// Inception-v3 (torchvision inception.py, eval: no aux head, 299x299 input).
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

/// Rectangular kernel (kh x kw) with padding (ph, pw).
ConvSpec rect(std::int64_t out, std::int64_t kh, std::int64_t kw, std::int64_t ph,
              std::int64_t pw) {
  return {out, kh, kw, 1, ph, pw};
}

/// F.avg_pool2d(x, 3, stride=1, padding=1): count_include_pad=True (PyTorch's default).
std::string pool_3x3(NetBuilder& net, const std::string& x, const std::string& name) {
  return net.average_pool(x, name, 3, 1, 1, true);
}

std::string inception_a(NetBuilder& net, const std::string& x, const std::string& n,
                        std::int64_t pool_features) {
  const std::string b1 = basic_conv(net, x, n + ".branch1x1", conv_spec(64, 1));
  std::string b5 = basic_conv(net, x, n + ".branch5x5_1", conv_spec(48, 1));
  b5 = basic_conv(net, b5, n + ".branch5x5_2", conv_spec(64, 5, 1, 2));
  std::string b3 = basic_conv(net, x, n + ".branch3x3dbl_1", conv_spec(64, 1));
  b3 = basic_conv(net, b3, n + ".branch3x3dbl_2", conv_spec(96, 3, 1, 1));
  b3 = basic_conv(net, b3, n + ".branch3x3dbl_3", conv_spec(96, 3, 1, 1));
  std::string bp = pool_3x3(net, x, n + ".avg_pool");
  bp = basic_conv(net, bp, n + ".branch_pool", conv_spec(pool_features, 1));
  return net.concat({b1, b5, b3, bp}, n);
}

std::string inception_b(NetBuilder& net, const std::string& x, const std::string& n) {
  const std::string b3 = basic_conv(net, x, n + ".branch3x3", conv_spec(384, 3, 2));
  std::string bd = basic_conv(net, x, n + ".branch3x3dbl_1", conv_spec(64, 1));
  bd = basic_conv(net, bd, n + ".branch3x3dbl_2", conv_spec(96, 3, 1, 1));
  bd = basic_conv(net, bd, n + ".branch3x3dbl_3", conv_spec(96, 3, 2));
  const std::string bp = net.max_pool(x, n + ".max_pool", 3, 2);
  return net.concat({b3, bd, bp}, n);
}

std::string inception_c(NetBuilder& net, const std::string& x, const std::string& n,
                        std::int64_t c7) {
  const std::string b1 = basic_conv(net, x, n + ".branch1x1", conv_spec(192, 1));
  std::string b7 = basic_conv(net, x, n + ".branch7x7_1", conv_spec(c7, 1));
  b7 = basic_conv(net, b7, n + ".branch7x7_2", rect(c7, 1, 7, 0, 3));
  b7 = basic_conv(net, b7, n + ".branch7x7_3", rect(192, 7, 1, 3, 0));
  std::string bd = basic_conv(net, x, n + ".branch7x7dbl_1", conv_spec(c7, 1));
  bd = basic_conv(net, bd, n + ".branch7x7dbl_2", rect(c7, 7, 1, 3, 0));
  bd = basic_conv(net, bd, n + ".branch7x7dbl_3", rect(c7, 1, 7, 0, 3));
  bd = basic_conv(net, bd, n + ".branch7x7dbl_4", rect(c7, 7, 1, 3, 0));
  bd = basic_conv(net, bd, n + ".branch7x7dbl_5", rect(192, 1, 7, 0, 3));
  std::string bp = pool_3x3(net, x, n + ".avg_pool");
  bp = basic_conv(net, bp, n + ".branch_pool", conv_spec(192, 1));
  return net.concat({b1, b7, bd, bp}, n);
}

std::string inception_d(NetBuilder& net, const std::string& x, const std::string& n) {
  std::string b3 = basic_conv(net, x, n + ".branch3x3_1", conv_spec(192, 1));
  b3 = basic_conv(net, b3, n + ".branch3x3_2", conv_spec(320, 3, 2));
  std::string b7 = basic_conv(net, x, n + ".branch7x7x3_1", conv_spec(192, 1));
  b7 = basic_conv(net, b7, n + ".branch7x7x3_2", rect(192, 1, 7, 0, 3));
  b7 = basic_conv(net, b7, n + ".branch7x7x3_3", rect(192, 7, 1, 3, 0));
  b7 = basic_conv(net, b7, n + ".branch7x7x3_4", conv_spec(192, 3, 2));
  const std::string bp = net.max_pool(x, n + ".max_pool", 3, 2);
  return net.concat({b3, b7, bp}, n);
}

std::string inception_e(NetBuilder& net, const std::string& x, const std::string& n) {
  const std::string b1 = basic_conv(net, x, n + ".branch1x1", conv_spec(320, 1));
  const std::string b3 = basic_conv(net, x, n + ".branch3x3_1", conv_spec(384, 1));
  const std::string b3a = basic_conv(net, b3, n + ".branch3x3_2a", rect(384, 1, 3, 0, 1));
  const std::string b3b = basic_conv(net, b3, n + ".branch3x3_2b", rect(384, 3, 1, 1, 0));
  std::string bd = basic_conv(net, x, n + ".branch3x3dbl_1", conv_spec(448, 1));
  bd = basic_conv(net, bd, n + ".branch3x3dbl_2", conv_spec(384, 3, 1, 1));
  const std::string bda = basic_conv(net, bd, n + ".branch3x3dbl_3a", rect(384, 1, 3, 0, 1));
  const std::string bdb = basic_conv(net, bd, n + ".branch3x3dbl_3b", rect(384, 3, 1, 1, 0));
  std::string bp = pool_3x3(net, x, n + ".avg_pool");
  bp = basic_conv(net, bp, n + ".branch_pool", conv_spec(192, 1));
  // torchvision concatenates the two 3x3 pairs first and then the four branches; a concat of
  // concats along one axis is one concat, and torch.onnx.export writes it as one 6-input Concat.
  return net.concat({b1, b3a, b3b, bda, bdb, bp}, n);
}

}  // namespace

ir::Graph build_inception_v3(const ZooOptions& options) {
  NetBuilder net("inception_v3", options);
  std::string x = net.input("input", 3, 299, 299);
  x = basic_conv(net, x, "Conv2d_1a_3x3", conv_spec(32, 3, 2));
  x = basic_conv(net, x, "Conv2d_2a_3x3", conv_spec(32, 3));
  x = basic_conv(net, x, "Conv2d_2b_3x3", conv_spec(64, 3, 1, 1));
  x = net.max_pool(x, "maxpool1", 3, 2);
  x = basic_conv(net, x, "Conv2d_3b_1x1", conv_spec(80, 1));
  x = basic_conv(net, x, "Conv2d_4a_3x3", conv_spec(192, 3));
  x = net.max_pool(x, "maxpool2", 3, 2);
  x = inception_a(net, x, "Mixed_5b", 32);
  x = inception_a(net, x, "Mixed_5c", 64);
  x = inception_a(net, x, "Mixed_5d", 64);
  x = inception_b(net, x, "Mixed_6a");
  x = inception_c(net, x, "Mixed_6b", 128);
  x = inception_c(net, x, "Mixed_6c", 160);
  x = inception_c(net, x, "Mixed_6d", 160);
  x = inception_c(net, x, "Mixed_6e", 192);
  x = inception_d(net, x, "Mixed_7a");
  x = inception_e(net, x, "Mixed_7b");
  x = inception_e(net, x, "Mixed_7c");
  x = net.global_average_pool(x, "avgpool");
  x = net.flatten(x, "flatten");
  x = net.linear(x, "fc", 1000);
  return net.finish({x});
}

}  // namespace tessel::zoo::detail
