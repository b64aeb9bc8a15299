// ViT-B/16 (torchvision vision_transformer.py: patch embedding conv, class token, learned
// position embedding, 12 pre-norm encoder blocks with nn.MultiheadAttention and a GELU MLP),
// and tiny_vit, the same graph at test sizes.
#include <cmath>
#include <string>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {

namespace {

struct VitSizes {
  const char* name;
  std::int64_t image, patch, d, heads, layers, mlp, classes;
};

ir::Graph build_vit(const VitSizes& z, const ZooOptions& options) {
  using ir::OpKind;
  const std::int64_t d = z.d, heads = z.heads, hd = d / heads, b = options.batch;
  const std::int64_t grid = z.image / z.patch, tokens = grid * grid + 1;
  NetBuilder net(z.name, options);
  std::string x = net.input("input", 3, z.image, z.image);
  ConvSpec patch = conv_spec(d, z.patch, z.patch);
  patch.bias = true;
  patch.gain = 1.0;
  x = net.conv(x, "conv_proj", patch);                           // [B, d, 14, 14]
  x = net.reshape(x, "conv_proj.flatten", {b, d, grid * grid});  // [B, d, 196]
  x = net.transpose(x, "conv_proj.permute", {0, 2, 1});          // [B, 196, d]
  const std::string token = net.parameter("class_token", {1, 1, d}, 0.0, 0.02);
  const std::string tokens_b = b == 1 ? token
                                      : net.op("class_token.expand", OpKind::Expand, {token},
                                               {{"shape", ir::Shape{b, 1, d}}});
  x = net.concat_axis({tokens_b, x}, "class_token.concat", 1);  // [B, 197, d]
  const std::string pos = net.parameter("encoder.pos_embedding", {1, tokens, d}, 0.0, 0.02);
  x = net.add(x, pos, "encoder.pos_add");
  const std::string scale = net.constant(
      "attention.scale", {1}, {static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)))});
  const std::int64_t layers = or_default(options.layers, z.layers);  // --layers: the first N
  for (std::int64_t i = 0; i < layers; ++i) {
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
    std::string f = net.op(p + ".mlp.1", OpKind::Gelu, {net.dense(n2, p + ".mlp.0", z.mlp, 2.0)});
    x = net.add(x, net.dense(f, p + ".mlp.3", d), p + ".add2");
  }
  x = net.layer_norm(x, "encoder.ln", 1e-6);
  // x[:, 0]: the class token's row.
  x = net.op("class_token.select", OpKind::Gather, {x},
             {{"axis", std::int64_t{1}},
              {"indices", std::vector<std::int64_t>{0}},
              {"indices_shape", std::vector<std::int64_t>{}}});
  return net.finish({net.linear(x, "heads.head", z.classes)});
}

}  // namespace

ir::Graph build_vit_b_16(const ZooOptions& options) {
  return build_vit({"vit_b_16", 224, 16, 768, 12, 12, 3072, 1000}, options);
}

ir::Graph build_tiny_vit(const ZooOptions& options) {
  return build_vit({"tiny_vit", 16, 4, 32, 2, 1, 64, 10}, options);
}

}  // namespace tessel::zoo::detail
