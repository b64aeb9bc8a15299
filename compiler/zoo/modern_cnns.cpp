// Today's CNNs from torchvision 0.14: MobileNet-v3-large (SE blocks, HardSwish), EfficientNet-B0
// (MBConv, SiLU, SE) and ConvNeXt-Tiny (7x7 depthwise, LayerNorm, GELU MLP, layer scale).
// Exported as torch.onnx writes them: SE's pooling is GlobalAveragePool and its scaling a
// broadcasting Mul; SiLU (Sigmoid + Mul) appears fused, as the fuse-patterns pass makes it.
// tiny_layout holds ConvNeXt's permutes and layer scale and ViT's patch flatten in a few KB.
#include <algorithm>
#include <optional>
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {
namespace {

using ir::OpKind;

/// torchvision's _make_divisible(v, 8).
std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
  std::int64_t rounded = std::max<std::int64_t>(
      divisor, static_cast<std::int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

/// Conv2dNormActivation: conv (no bias) -> BatchNorm -> activation (None: none), named
/// `<prefix>.0/.1/.2`.
std::string conv_norm_act(NetBuilder& net, const std::string& x, const std::string& prefix,
                          ConvSpec spec, std::optional<OpKind> act, double eps) {
  spec.gain = act ? 2.0 : 1.0;
  std::string y = net.batch_norm(net.conv(x, prefix + ".0", spec), prefix + ".1", eps);
  if (!act) return y;
  if (*act == OpKind::Relu) return net.relu(y, prefix + ".2");
  return net.op(prefix + ".2", *act, {y});
}

}  // namespace

/// SqueezeExcitation: pool -> fc1 (1x1 conv, bias) -> act -> fc2 -> gate -> scale x.
std::string squeeze_excite(NetBuilder& net, const std::string& x, const std::string& prefix,
                           std::int64_t squeeze, OpKind act, OpKind gate) {
  const std::int64_t c = net.channels(x);
  std::string s = net.global_average_pool(x, prefix + ".avgpool");
  ConvSpec fc1 = conv_spec(squeeze, 1);
  fc1.bias = true;
  s = net.conv(s, prefix + ".fc1", fc1);
  s = act == OpKind::Relu ? net.relu(s, prefix + ".activation")
                          : net.op(prefix + ".activation", act, {s});
  ConvSpec fc2 = conv_spec(c, 1);
  fc2.bias = true;
  fc2.gain = 1.0;
  s = net.conv(s, prefix + ".fc2", fc2);
  ir::Attrs gate_attrs;
  if (gate == OpKind::HardSigmoid) gate_attrs = {{"alpha", 1.0 / 6.0}, {"beta", 0.5}};
  s = net.op(prefix + ".scale_activation", gate, {s}, gate_attrs);
  return net.op(prefix + ".scale", OpKind::Mul, {s, x});
}

ir::Graph build_mobilenet_v3_large(const ZooOptions& options) {
  struct Block {
    std::int64_t kernel, expanded, out;
    bool se;
    bool hardswish;
    std::int64_t stride;
  };
  const Block blocks[] = {
      {3, 16, 16, false, false, 1}, {3, 64, 24, false, false, 2}, {3, 72, 24, false, false, 1},
      {5, 72, 40, true, false, 2},  {5, 120, 40, true, false, 1}, {5, 120, 40, true, false, 1},
      {3, 240, 80, false, true, 2}, {3, 200, 80, false, true, 1}, {3, 184, 80, false, true, 1},
      {3, 184, 80, false, true, 1}, {3, 480, 112, true, true, 1}, {3, 672, 112, true, true, 1},
      {5, 672, 160, true, true, 2}, {5, 960, 160, true, true, 1}, {5, 960, 160, true, true, 1}};
  const double eps = 0.001;
  NetBuilder net("mobilenet_v3_large", options);
  std::string x = net.input("input", 3, 224, 224);
  x = conv_norm_act(net, x, "features.0", conv_spec(16, 3, 2, 1), OpKind::HardSwish, eps);
  int index = 1;
  for (const Block& blk : blocks) {
    const std::string p = "features." + std::to_string(index++) + ".block";
    const std::int64_t in = net.channels(x);
    const OpKind act = blk.hardswish ? OpKind::HardSwish : OpKind::Relu;
    std::string y = x;
    int layer = 0;
    if (blk.expanded != in)
      y = conv_norm_act(net, y, p + "." + std::to_string(layer++), conv_spec(blk.expanded, 1), act,
                        eps);
    ConvSpec dw = conv_spec(blk.expanded, blk.kernel, blk.stride, (blk.kernel - 1) / 2);
    dw.group = blk.expanded;
    y = conv_norm_act(net, y, p + "." + std::to_string(layer++), dw, act, eps);
    if (blk.se)
      y = squeeze_excite(net, y, p + "." + std::to_string(layer++),
                         make_divisible(static_cast<double>(blk.expanded / 4)), OpKind::Relu,
                         OpKind::HardSigmoid);
    y = conv_norm_act(net, y, p + "." + std::to_string(layer++), conv_spec(blk.out, 1),
                      std::nullopt, eps);
    x = blk.stride == 1 && in == blk.out ? net.add(x, y, p + ".add") : y;
  }
  x = conv_norm_act(net, x, "features.16", conv_spec(960, 1), OpKind::HardSwish, eps);
  x = net.flatten(net.global_average_pool(x, "avgpool"), "flatten");
  x = net.op("classifier.1", OpKind::HardSwish, {net.linear(x, "classifier.0", 1280, 2.0)});
  return net.finish({net.linear(x, "classifier.3", 1000)});
}

ir::Graph build_efficientnet_b0(const ZooOptions& options) {
  struct Stage {
    std::int64_t expand, kernel, stride, out, layers;
  };
  const Stage stages[] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                          {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  const double eps = 1e-5;
  NetBuilder net("efficientnet_b0", options);
  std::string x = net.input("input", 3, 224, 224);
  x = conv_norm_act(net, x, "features.0", conv_spec(32, 3, 2, 1), OpKind::Silu, eps);
  int stage_index = 1;
  for (const Stage& st : stages) {
    for (std::int64_t i = 0; i < st.layers; ++i) {
      const std::string p =
          "features." + std::to_string(stage_index) + "." + std::to_string(i) + ".block";
      const std::int64_t in = net.channels(x), stride = i == 0 ? st.stride : 1;
      const std::int64_t expanded = make_divisible(static_cast<double>(in * st.expand));
      std::string y = x;
      int layer = 0;
      if (expanded != in)
        y = conv_norm_act(net, y, p + "." + std::to_string(layer++), conv_spec(expanded, 1),
                          OpKind::Silu, eps);
      ConvSpec dw = conv_spec(expanded, st.kernel, stride, (st.kernel - 1) / 2);
      dw.group = expanded;
      y = conv_norm_act(net, y, p + "." + std::to_string(layer++), dw, OpKind::Silu, eps);
      y = squeeze_excite(net, y, p + "." + std::to_string(layer++),
                         std::max<std::int64_t>(1, in / 4), OpKind::Silu, OpKind::Sigmoid);
      y = conv_norm_act(net, y, p + "." + std::to_string(layer++), conv_spec(st.out, 1),
                        std::nullopt, eps);
      x = stride == 1 && in == st.out ? net.add(x, y, p + ".add") : y;
    }
    ++stage_index;
  }
  x = conv_norm_act(net, x, "features.8", conv_spec(1280, 1), OpKind::Silu, eps);
  x = net.flatten(net.global_average_pool(x, "avgpool"), "flatten");
  return net.finish({net.linear(x, "classifier.1", 1000)});
}

namespace {

/// LayerNorm2d: channels-last LayerNorm of an NCHW tensor (permute, normalise, permute back).
std::string layer_norm_2d(NetBuilder& net, const std::string& x, const std::string& name) {
  const std::string t = net.transpose(x, name + ".to_nhwc", {0, 2, 3, 1});
  return net.transpose(net.layer_norm(t, name, 1e-6), name + ".to_nchw", {0, 3, 1, 2});
}

}  // namespace

ir::Graph build_convnext_tiny(const ZooOptions& options) {
  const std::int64_t depths[] = {3, 3, 9, 3}, dims[] = {96, 192, 384, 768};
  NetBuilder net("convnext_tiny", options);
  std::string x = net.input("input", 3, 224, 224);
  ConvSpec stem = conv_spec(96, 4, 4);
  stem.bias = true;
  stem.gain = 1.0;
  x = layer_norm_2d(net, net.conv(x, "features.0.0", stem), "features.0.1");
  for (int s = 0; s < 4; ++s) {
    const int feature = 1 + 2 * s;
    if (s > 0) {
      x = layer_norm_2d(net, x, "features." + std::to_string(feature - 1) + ".0");
      ConvSpec down = conv_spec(dims[s], 2, 2);
      down.bias = true;
      down.gain = 1.0;
      x = net.conv(x, "features." + std::to_string(feature - 1) + ".1", down);
    }
    for (std::int64_t i = 0; i < depths[s]; ++i) {
      const std::string p = "features." + std::to_string(feature) + "." + std::to_string(i);
      ConvSpec dw = conv_spec(dims[s], 7, 1, 3);
      dw.group = dims[s];
      dw.bias = true;
      dw.gain = 1.0;
      std::string y = net.conv(x, p + ".block.0", dw);
      y = net.transpose(y, p + ".block.1", {0, 2, 3, 1});
      y = net.layer_norm(y, p + ".block.2", 1e-6);
      y = net.op(p + ".block.4", ir::OpKind::Gelu,
                 {net.dense(y, p + ".block.3", 4 * dims[s], 2.0)});
      y = net.dense(y, p + ".block.5", dims[s]);
      y = net.transpose(y, p + ".block.6", {0, 3, 1, 2});
      const std::string gamma = net.parameter(p + ".layer_scale", {dims[s], 1, 1}, 0.5, 0.05);
      y = net.op(p + ".layer_scale.mul", ir::OpKind::Mul, {y, gamma});
      x = net.add(x, y, p + ".add");
    }
  }
  x = layer_norm_2d(net, net.global_average_pool(x, "avgpool"), "classifier.0");
  x = net.flatten(x, "classifier.1");
  return net.finish({net.linear(x, "classifier.2", 1000)});
}

// The layout views of ConvNeXt and ViT in a few KB (docs/scheduler-transformers.md "Layout views"):
// a conv's NCHW output permuted to NHWC for a LayerNorm and a Linear-GELU-Linear, permuted back,
// scaled per channel by a constant (ConvNeXt's layer scale) into a residual add, then flattened and
// permuted to tokens for a LayerNorm, a Linear and a LayerNorm.
ir::Graph build_tiny_layout(const ZooOptions& options) {
  NetBuilder net("tiny_layout", options);
  const std::int64_t b = options.batch;
  std::string x = net.input("input", 8, 6, 6);
  ConvSpec spec = conv_spec(16, 3, 1, 1);
  spec.bias = true;
  x = net.conv(x, "conv", spec);                              // [B, 16, 6, 6]
  std::string y = net.transpose(x, "to_nhwc", {0, 2, 3, 1});  // [B, 6, 6, 16]
  y = net.layer_norm(y, "norm", 1e-6);
  y = net.op("gelu", ir::OpKind::Gelu, {net.dense(y, "fc1", 32, 2.0)});
  y = net.transpose(net.dense(y, "fc2", 16), "to_nchw", {0, 3, 1, 2});
  const std::string gamma = net.parameter("layer_scale", {16, 1, 1}, 0.5, 0.05);
  x = net.add(x, net.op("layer_scale.mul", ir::OpKind::Mul, {y, gamma}), "add");
  x = net.reshape(x, "flatten", {b, 16, 36});    // [B, 16, 36]
  x = net.transpose(x, "to_tokens", {0, 2, 1});  // [B, 36, 16]
  x = net.dense(net.layer_norm(x, "tokens.norm", 1e-6), "tokens.fc", 24);
  return net.finish({net.layer_norm(x, "tokens.out_norm", 1e-6)});
}

}  // namespace tessel::zoo::detail
