// Builders of the individual zoo models (one file per family); zoo.cpp lists them.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/ir/graph.hpp"
#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::zoo::detail {

/// A size option (ZooOptions::layers, sequence, ...) or the model's own when it is 0.
inline std::int64_t or_default(std::int64_t value, std::int64_t fallback) {
  return value > 0 ? value : fallback;
}

/// torchvision's BasicConv2d (GoogLeNet, Inception-v3): conv (no bias) -> BatchNorm (eps 0.001)
/// -> ReLU, named `<prefix>.conv`, `<prefix>.bn`, `<prefix>.relu`.
std::string basic_conv(NetBuilder& net, const std::string& x, const std::string& prefix,
                       const ConvSpec& spec);

ir::Graph build_resnet18(const ZooOptions& options);
ir::Graph build_resnet50(const ZooOptions& options);
ir::Graph build_vgg19(const ZooOptions& options);
ir::Graph build_googlenet(const ZooOptions& options);
ir::Graph build_inception_v3(const ZooOptions& options);
ir::Graph build_mobilenet_v2(const ZooOptions& options);
ir::Graph build_vit_b_16(const ZooOptions& options);
ir::Graph build_tiny_vit(const ZooOptions& options);
ir::Graph build_mobilenet_v3_large(const ZooOptions& options);
ir::Graph build_regnet_x_1_6gf(const ZooOptions& options);

/// SqueezeExcitation: pool -> fc1 (1x1 conv, bias) -> act -> fc2 -> gate -> scale x
/// (modern_cnns.cpp).
std::string squeeze_excite(NetBuilder& net, const std::string& x, const std::string& prefix,
                           std::int64_t squeeze, ir::OpKind act, ir::OpKind gate);
ir::Graph build_efficientnet_b0(const ZooOptions& options);
ir::Graph build_convnext_tiny(const ZooOptions& options);
ir::Graph build_bert_base(const ZooOptions& options);
ir::Graph build_gpt2(const ZooOptions& options);
ir::Graph build_gpt2_decode(const ZooOptions& options);
ir::Graph build_gpt2_lm(const ZooOptions& options);
ir::Graph build_gpt2_lm_decode(const ZooOptions& options);
ir::Graph build_llama_block(const ZooOptions& options);
ir::Graph build_tiny_conv(const ZooOptions& options);
ir::Graph build_tiny_residual(const ZooOptions& options);
ir::Graph build_tiny_inception(const ZooOptions& options);
ir::Graph build_tiny_mlp(const ZooOptions& options);
ir::Graph build_tiny_depthwise(const ZooOptions& options);
ir::Graph build_tiny_stem(const ZooOptions& options);
ir::Graph build_resnext50_32x4d(const ZooOptions& options);
ir::Graph build_tiny_se(const ZooOptions& options);
ir::Graph build_tiny_se_wide(const ZooOptions& options);
ir::Graph build_tiny_grouped(const ZooOptions& options);
ir::Graph build_tiny_attention(const ZooOptions& options);
ir::Graph build_tiny_causal(const ZooOptions& options);
ir::Graph build_tiny_lm(const ZooOptions& options);
ir::Graph build_tiny_lm_decode(const ZooOptions& options);
ir::Graph build_tiny_llama(const ZooOptions& options);
ir::Graph build_tiny_decode(const ZooOptions& options);
ir::Graph build_tiny_layout(const ZooOptions& options);
ir::Graph build_tiny_swin(const ZooOptions& options);
ir::Graph build_tiny_maxvit(const ZooOptions& options);

}  // namespace tessel::zoo::detail
