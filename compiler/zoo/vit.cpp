// ViT-B/16 (torchvision vision_transformer.py: patch embedding conv, class token, learned
// position embedding, 12 pre-norm encoder blocks with nn.MultiheadAttention and a GELU MLP).
#include <cmath>
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {

ir::Graph build_vit_b_16(const ZooOptions& options) {
  using ir::OpKind;
  const std::int64_t d = 768, heads = 12, hd = 64, tokens = 197, b = options.batch;
  NetBuilder net("vit_b_16", options);
  std::string x = net.input("input", 3, 224, 224);
  ConvSpec patch = conv_spec(d, 16, 16);
  patch.bias = true;
  patch.gain = 1.0;
  x = net.conv(x, "conv_proj", patch);                   // [B, 768, 14, 14]
  x = net.reshape(x, "conv_proj.flatten", {b, d, 196});  // [B, 768, 196]
  x = net.transpose(x, "conv_proj.permute", {0, 2, 1});  // [B, 196, 768]
  const std::string token = net.parameter("class_token", {1, 1, d}, 0.0, 0.02);
  const std::string tokens_b = b == 1 ? token
                                      : net.op("class_token.expand", OpKind::Expand, {token},
                                               {{"shape", ir::Shape{b, 1, d}}});
  x = net.concat_axis({tokens_b, x}, "class_token.concat", 1);  // [B, 197, 768]
  const std::string pos = net.parameter("encoder.pos_embedding", {1, tokens, d}, 0.0, 0.02);
  x = net.add(x, pos, "encoder.pos_add");
  const std::string scale = net.constant("attention.scale", {1}, {0.125f});
  for (int i = 0; i < 12; ++i) {
    const std::string p = "encoder.layers.encoder_layer_" + std::to_string(i);
    const std::string a = p + ".self_attention";
    const std::string n1 = net.layer_norm(x, p + ".ln_1", 1e-6);
    const std::string qkv = net.dense(n1, a + ".in_proj", 3 * d);
    const auto heads_of = [&](std::int64_t part, const std::vector<std::int64_t>& perm) {
      const std::string name = a + (part == 0 ? ".q" : part == 1 ? ".k" : ".v");
      const std::string s = net.slice(qkv, name, 2, part * d, (part + 1) * d);
      const std::string r = net.reshape(s, name + ".heads", {b, tokens, heads, hd});
      return net.transpose(r, name + ".transpose", perm);
    };
    const std::string q = net.op(a + ".q_scaled", OpKind::Mul, {heads_of(0, {0, 2, 1, 3}), scale});
    const std::string kT = heads_of(1, {0, 2, 3, 1});
    const std::string v = heads_of(2, {0, 2, 1, 3});
    const std::string probs =
        net.softmax_axis(net.matmul(q, kT, a + ".scores"), a + ".softmax", -1);
    std::string c = net.matmul(probs, v, a + ".context");
    c = net.reshape(net.transpose(c, a + ".merge", {0, 2, 1, 3}), a + ".merged", {b, tokens, d});
    x = net.add(x, net.dense(c, a + ".out_proj", d), p + ".add1");
    const std::string n2 = net.layer_norm(x, p + ".ln_2", 1e-6);
    std::string f = net.op(p + ".mlp.1", OpKind::Gelu, {net.dense(n2, p + ".mlp.0", 3072, 2.0)});
    x = net.add(x, net.dense(f, p + ".mlp.3", d), p + ".add2");
  }
  x = net.layer_norm(x, "encoder.ln", 1e-6);
  // x[:, 0]: the class token's row.
  x = net.op("class_token.select", OpKind::Gather, {x},
             {{"axis", std::int64_t{1}},
              {"indices", std::vector<std::int64_t>{0}},
              {"indices_shape", std::vector<std::int64_t>{}}});
  return net.finish({net.linear(x, "heads.head", 1000)});
}

}  // namespace tessel::zoo::detail
