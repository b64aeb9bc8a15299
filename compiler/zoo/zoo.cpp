// The zoo's model table and build_model.
#include "compiler/zoo/zoo.hpp"

#include <functional>
#include <stdexcept>

#include "compiler/zoo/models_internal.hpp"
#include "support/strings.hpp"

namespace tessel::zoo {
namespace {

struct Entry {
  ModelInfo info;
  std::function<ir::Graph(const ZooOptions&)> build;
};

const std::vector<Entry>& entries() {
  using namespace detail;
  static const std::vector<Entry> table = {
      {{"resnet18", "ResNet-18, 224x224, BasicBlock x [2,2,2,2]", false}, build_resnet18},
      {{"resnet50", "ResNet-50 (v1.5), 224x224, Bottleneck x [3,4,6,3]", false}, build_resnet50},
      {{"vgg19", "VGG-19, 224x224, 16 conv + 3 FC, no BN", false}, build_vgg19},
      {{"googlenet", "GoogLeNet (Inception v1), 224x224, no aux heads", false}, build_googlenet},
      {{"inception_v3", "Inception-v3, 299x299, no aux head", false}, build_inception_v3},
      {{"mobilenet_v2", "MobileNet-v2, 224x224, inverted residuals, ReLU6", false},
       build_mobilenet_v2},
      {{"vit_b_16", "ViT-B/16, 224x224, 12 pre-norm encoder blocks, 197 tokens", false, false},
       build_vit_b_16},
      {{"resnext50_32x4d",
        "ResNeXt-50 32x4d, 224x224, Bottleneck x [3,4,6,3], 3x3 convs in 32 groups", false, true},
       build_resnext50_32x4d},
      {{"regnet_x_1_6gf",
        "RegNet-X 1.6GF, 224x224, ResBottleneck x [2,4,10,2], 3x3 convs in groups of 24", false,
        true},
       build_regnet_x_1_6gf},
      {{"mobilenet_v3_large", "MobileNet-v3-large, 224x224, SE blocks, HardSwish", false, true},
       build_mobilenet_v3_large},
      {{"efficientnet_b0", "EfficientNet-B0, 224x224, MBConv with SE, SiLU", false, true},
       build_efficientnet_b0},
      {{"convnext_tiny", "ConvNeXt-Tiny, 224x224, 7x7 depthwise, LayerNorm, GELU", false, true},
       build_convnext_tiny},
      {{"bert_base",
        "BERT-base encoder (--layers post-norm layers (12), d 768), --seq tokens (128)", false,
        false},
       build_bert_base},
      {{"gpt2",
        "GPT-2 124M decoder prefill (--layers pre-norm layers (12), causal), --seq tokens "
        "(128)",
        false, false},
       build_gpt2},
      {{"gpt2_decode",
        "GPT-2 124M one decode step (--layers (12)) against a --kv-length cache (1024)", false,
        false},
       build_gpt2_decode},
      {{"gpt2_lm",
        "GPT-2 124M language model prefill: token ids (--seq, 128) -> token and position tables "
        "-> --layers (12) -> LM head tied to the token table (vocabulary 50,257)",
        false, false},
       build_gpt2_lm},
      {{"gpt2_lm_decode",
        "gpt2_lm's decode step: one token id per sequence against a --kv-length cache (1024), "
        "logits out",
        false, false},
       build_gpt2_lm_decode},
      {{"llama_block", "one Llama layer at TinyLlama sizes (RMSNorm, rotary, GQA 32/4, SwiGLU)",
        false},
       build_llama_block},
      {{"tiny_conv", "3x8x8 -> conv3x3(4, bias) -> relu", true}, build_tiny_conv},
      {{"tiny_residual", "conv-bn-relu-conv-bn + skip add + relu on 4x8x8", true},
       build_tiny_residual},
      {{"tiny_inception", "three branches (1x1, 1x1->3x3, pool->1x1) + concat on 8x8x8", true},
       build_tiny_inception},
      {{"tiny_mlp", "flatten -> gemm -> relu -> gemm -> softmax", true}, build_tiny_mlp},
      {{"tiny_depthwise", "depthwise 3x3 + BN + ReLU6, pointwise + BN, global pool", true},
       build_tiny_depthwise},
      {{"tiny_stem", "3x16x16 -> conv7x7/2(8)-bn-relu -> maxpool3/2 -> conv3x3(8, bias) -> relu",
        true},
       build_tiny_stem},
      {{"tiny_se",
        "8x8x8 -> 1x1(16) HardSwish -> dw3x3 SiLU -> SE (pool, fc, HardSigmoid, Mul) -> 1x1(8) "
        "Sigmoid",
        true},
       build_tiny_se},
      {{"tiny_se_wide", "tiny_se over a 20x32 map: its SE pool is wider than the pool window",
        true},
       build_tiny_se_wide},
      {{"tiny_grouped",
        "8x8x8 -> 1x1(32) -> 3x3 groups 4 (8 per group) -> 3x3/2 groups 8 -> 1x1(16)", true},
       build_tiny_grouped},
      {{"tiny_attention",
        "one post-norm encoder layer: sequence 16, d 32, 2 heads, LayerNorm, GELU MLP of 64", true},
       build_tiny_attention},
      {{"tiny_causal",
        "one pre-norm GPT-2 block: sequence 16, d 32, 2 heads, causal mask, GELU tanh MLP of 128",
        true},
       build_tiny_causal},
      {{"tiny_lm",
        "tiny_causal's block as a language model: token ids (vocabulary 64, sequence 16), "
        "position rows, ln_f, LM head tied to the token table",
        true},
       build_tiny_lm},
      {{"tiny_lm_decode",
        "tiny_lm's decode step: one token id against a --kv-length cache (16), logits out", true},
       build_tiny_lm_decode},
      {{"tiny_llama",
        "one Llama layer: sequence 8, d 32, 4 heads of 8 on 2 key/value heads (GQA), RMSNorm, "
        "rotary, causal, SwiGLU of 64",
        true},
       build_tiny_llama},
      {{"tiny_decode",
        "one GPT-2 decode step: d 32, 2 heads, one block against a --kv-length cache (16)", true},
       build_tiny_decode},
      {{"tiny_layout",
        "8x6x6 -> conv3x3(16) -> NHWC LayerNorm, Linear(32) GELU Linear(16) -> NCHW x layer "
        "scale + skip -> "
        "flatten, permute to 36 tokens -> LayerNorm, Linear(24), LayerNorm",
        true},
       build_tiny_layout},
      {{"tiny_vit",
        "vit_b_16's graph at 3x16x16: 4x4 patches (d 32), class token, position embedding, one "
        "pre-norm encoder layer (2 heads, GELU MLP of 64), token 0 to a 10-way head",
        true},
       build_tiny_vit},
      {{"tiny_swin",
        "Swin's windowed attention on 16x8x8: 4 windows of 4x4 tokens (d 32, 2 heads), a "
        "relative-position bias, then swin_v2's cosine attention with a shift mask, and the "
        "reverse to the map",
        true},
       build_tiny_swin},
      {{"tiny_maxvit",
        "MaxViT's block then grid attention over an NCHW 32x8x8 map (4 windows of 16, 2 heads, "
        "a relative-position bias, MLP of 64), then a 1x1 conv and residual on the map",
        true},
       build_tiny_maxvit},
  };
  return table;
}

}  // namespace

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> list;
    for (const Entry& entry : entries()) list.push_back(entry.info);
    return list;
  }();
  return infos;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ModelInfo& info : models()) names.push_back(info.name);
  return names;
}

bool is_zoo_model(const std::string& name) {
  for (const ModelInfo& info : models()) {
    if (info.name == name) return true;
  }
  return false;
}

Result<ir::Graph> build_model(const std::string& name, const ZooOptions& options) {
  if (options.batch < 1)
    return fail("batch must be at least 1, got " + std::to_string(options.batch));
  for (const Entry& entry : entries()) {
    if (entry.info.name == name) return entry.build(options);
  }
  return fail("unknown model '" + name + "'" + did_you_mean(name, model_names()) +
              " (zoo models: " +
              [] {
                std::string list;
                for (const std::string& n : model_names()) list += (list.empty() ? "" : ", ") + n;
                return list;
              }() +
              ")");
}

}  // namespace tessel::zoo
