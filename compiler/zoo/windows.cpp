// Windowed attention at test sizes: tiny_swin (Swin's window partition, attention over a batch
// of windows with a relative-position bias, swin_v2's cosine attention with its shift mask, and
// the reverse) and tiny_maxvit (MaxViT's block and grid attention over an NCHW map, its
// partitions moving the channels last). docs/scheduler-transformers.md "Pixel gathers" and "A
// batch of sequences".
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/models_internal.hpp"

namespace tessel::zoo::detail {

namespace {

constexpr std::int64_t kC = 32, kHeads = 2, kHd = 16;

// Attention over [1, G, P, C] windows of tokens (torchvision's RelativePositionalMultiHeadAttention
// and MLP, one head dimension of 16), with its two residual Adds.
std::string window_block(NetBuilder& net, const std::string& b, const std::string& windows,
                         std::int64_t n, std::int64_t g, std::int64_t p) {
  const std::string qkv = net.dense(net.layer_norm(windows, b + "norm", 1e-5), b + "qkv", 3 * kC);
  const auto head = [&](std::int64_t i, const std::string& name) {  // [1, G, H, P, hd]
    const std::string part = net.slice(qkv, b + name, 3, i * kC, (i + 1) * kC);
    return net.transpose(net.reshape(part, b + name + "_heads", {n, g, p, kHeads, kHd}),
                         b + name + "_first", {0, 1, 3, 2, 4});
  };
  const std::string q = head(0, "q"), v = head(2, "v");
  const std::string k = net.op(b + "k_scaled", ir::OpKind::Mul,
                               {head(1, "k"), net.constant(b + "scale", {1}, {0.25f})});
  std::vector<float> bias(static_cast<size_t>(kHeads * p * p));
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.5f * std::cos(0.29f * static_cast<float>(i));
  const std::string scores =
      net.add(net.matmul(q, net.transpose(k, b + "k_t", {0, 1, 2, 4, 3}), b + "scores"),
              net.constant(b + "bias", {1, kHeads, p, p}, bias), b + "biased");
  const std::string context =
      net.matmul(net.softmax_axis(scores, b + "softmax", 4), v, b + "context");
  const std::string merged =
      net.reshape(net.transpose(context, b + "merge", {0, 1, 3, 2, 4}), b + "rows", {n, g, p, kC});
  const std::string x = net.add(net.dense(merged, b + "proj", kC), windows, b + "residual");
  const std::string hidden = net.dense(net.layer_norm(x, b + "mlp_norm", 1e-5), b + "fc1", 2 * kC);
  return net.add(net.dense(net.relu(hidden, b + "act"), b + "fc2", kC), x, b + "mlp_residual");
}

}  // namespace

// Swin's windowed attention (issue 36 item 1): multi-head attention over each of 4 windows of
// 16 tokens at once, heads as views [4, 2, 16, 16] of the windows' token rows (a batch of 4
// sequences: HeadMatMul::batch). Block 1 adds the relative-position bias [1, 2, 16, 16] to
// every window's scores (one sequence's rows read again per window: Op::constant_row_period);
// block 2 is swin_v2's cosine attention: q and k normalised per head (an RMSNormalization over
// each head's channels: Op::row_length), the scores scaled per head by a constant [2, 1, 1] (one
// stored row for every row), the bias added and then, through a view [1, 4, 2, 16, 16], the
// shift mask [1, 4, 1, 16, 16] (0, or -100 between tokens of different regions in windows 2
// and 3), which fold-constant-adds makes one [4, 2, 16, 16] constant.
ir::Graph build_tiny_swin(const ZooOptions& options) {
  const std::int64_t n = options.batch, windows = 4, s = 16, d = 32, heads = 2, hd = 16;
  NetBuilder net("tiny_swin", options);
  const std::string x = net.input("input", 16, 8, 8);
  const std::string c = net.conv(x, "embed", conv_spec(d, 1));
  const std::string map = net.transpose(c, "to_nhwc", {0, 2, 3, 1});  // [1, 8, 8, 32]
  const std::string split = net.reshape(map, "window_split", {n, 2, 4, 2, 4, d});
  const std::string moved = net.transpose(split, "window_order", {0, 1, 3, 2, 4, 5});
  std::string tokens = net.reshape(moved, "windows", {n * windows, s, d});
  std::vector<float> bias(static_cast<size_t>(heads * s * s));
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.5f * std::sin(0.37f * static_cast<float>(i));
  std::vector<float> mask(static_cast<size_t>(windows * s * s), 0.0f);
  for (std::int64_t w = 2; w < windows; ++w)
    for (std::int64_t q = 0; q < s; ++q)
      for (std::int64_t k = 0; k < s; ++k)
        if ((q % 4 >= 2) != (k % 4 >= 2)) mask[static_cast<size_t>((w * s + q) * s + k)] = -100;
  for (int block = 1; block <= 2; ++block) {
    const std::string b = "block" + std::to_string(block) + ".";
    const std::string qkv = net.dense(tokens, b + "qkv", 3 * d);
    const std::string packed =
        net.transpose(net.reshape(qkv, b + "qkv_heads", {n * windows, s, 3, heads, hd}),
                      b + "qkv_parts", {2, 0, 3, 1, 4});
    const auto part = [&](std::int64_t i, const std::string& name) {
      return net.op(b + name, ir::OpKind::Gather, {packed},
                    {{"axis", std::int64_t{0}}, {"indices", std::vector<std::int64_t>{i}}});
    };
    std::string q = part(0, "q"), k = part(1, "k");  // [4, H, S, hd]
    const std::string v = part(2, "v");
    std::string scores;
    if (block == 1) {
      const std::string scale = net.constant(b + "scale", {1}, {0.25f});
      scores = net.matmul(net.op(b + "q_scaled", ir::OpKind::Mul, {q, scale}),
                          net.transpose(k, b + "k_t", {0, 1, 3, 2}), b + "scores");
    } else {
      q = net.rms_norm(q, b + "q_norm", 1e-6);
      k = net.rms_norm(k, b + "k_norm", 1e-6);
      scores = net.matmul(q, net.transpose(k, b + "k_t", {0, 1, 3, 2}), b + "cosine");
      scores = net.op(b + "scores", ir::OpKind::Mul,
                      {scores, net.constant(b + "logit_scale", {heads, 1, 1}, {3.0f, 5.0f})});
    }
    scores = net.add(scores, net.constant(b + "bias", {1, heads, s, s}, bias), b + "biased");
    if (block == 2) {
      const std::string viewed = net.reshape(scores, b + "per_image", {n, windows, heads, s, s});
      const std::string masked =
          net.add(viewed, net.constant(b + "mask", {1, windows, 1, s, s}, mask), b + "masked");
      scores = net.reshape(masked, b + "mask_back", {n * windows, heads, s, s});
    }
    const std::string context =
        net.matmul(net.softmax_axis(scores, b + "softmax", 3), v, b + "context");
    const std::string merged = net.reshape(net.transpose(context, b + "merge", {0, 2, 1, 3}),
                                           b + "rows", {n * windows, s, d});
    tokens = net.add(net.dense(merged, b + "proj", d), tokens, b + "residual");
  }
  const std::string grid = net.reshape(tokens, "window_grid", {n, 2, 2, 4, 4, d});
  const std::string back = net.transpose(grid, "map_order", {0, 1, 3, 2, 4, 5});
  return net.finish({net.dense(net.reshape(back, "merged", {n, 8 * 8, d}), "head", d)});
}

// An NCHW map [1, 32, 8, 8]: block attention over its 4 x 4 windows (4 windows of 16 pixels),
// then grid attention over the 4 x 4 grid of stride 2 (4 windows of 16 pixels, the windows as
// torchvision's partition swap makes them), then a 1x1 conv with a residual on the map.
ir::Graph build_tiny_maxvit(const ZooOptions& options) {
  NetBuilder net("tiny_maxvit", options);
  const std::int64_t n = options.batch;
  const std::string x = net.input("input", 16, 8, 8);
  const std::string map = net.conv(x, "embed", conv_spec(kC, 1));  // NCHW
  // Block: [1, C, 2, 4, 2, 4] -> [1, 2, 2, 4, 4, C] -> [1, 4, 16, C].
  const std::string blocks =
      net.reshape(net.transpose(net.reshape(map, "block_split", {n, kC, 2, 4, 2, 4}), "block_order",
                                {0, 2, 4, 3, 5, 1}),
                  "block_windows", {n, 4, 16, kC});
  const std::string blocked = window_block(net, "block.", blocks, n, 4, 16);
  const std::string block_map =
      net.reshape(net.transpose(net.reshape(blocked, "block_grid", {n, 2, 2, 4, 4, kC}),
                                "block_back", {0, 5, 1, 3, 2, 4}),
                  "block_map", {n, kC, 8, 8});
  // Grid: [1, C, 4, 2, 4, 2] -> [1, 4, 4, 2, 2, C] -> [1, 16, 4, C], swapped to [1, 4, 16, C].
  const std::string grids = net.transpose(
      net.reshape(net.transpose(net.reshape(block_map, "grid_split", {n, kC, 4, 2, 4, 2}),
                                "grid_order", {0, 2, 4, 3, 5, 1}),
                  "grid_windows", {n, 16, 4, kC}),
      "grid_swap", {0, 2, 1, 3});
  const std::string gridded = window_block(net, "grid.", grids, n, 4, 16);
  const std::string grid_map =
      net.reshape(net.transpose(net.reshape(net.transpose(gridded, "grid_unswap", {0, 2, 1, 3}),
                                            "grid_grid", {n, 4, 4, 2, 2, kC}),
                                "grid_back", {0, 5, 1, 3, 2, 4}),
                  "grid_map", {n, kC, 8, 8});
  return net.finish(
      {net.add(net.conv(grid_map, "mbconv", conv_spec(kC, 1)), grid_map, "mbconv_residual")});
}

}  // namespace tessel::zoo::detail
