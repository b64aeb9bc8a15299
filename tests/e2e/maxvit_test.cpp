// MaxViT's block and grid attention on the accelerator (issue 36 item 1): the partitions of an
// NCHW map into windows of tokens [1, G, P, C] with the channels moved last on the way, heads as
// 5-D views [1, G, H, P, hd] of the windows' token rows (G sequences: HeadMatMul::batch), and
// the departitions back to the NCHW map a conv reads. Each partition is one gather; the window
// departition and the grid partition after it compose into one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/machine.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e {
namespace {

constexpr std::int64_t kC = 32, kHeads = 2, kHd = 16;

// Attention over [1, G, P, C] windows of tokens (torchvision's RelativePositionalMultiHeadAttention
// and MLP, one head dimension of 16), with its two residual Adds.
std::string window_block(zoo::NetBuilder& net, const std::string& b, const std::string& windows,
                         std::int64_t g, std::int64_t p) {
  const std::string qkv = net.dense(net.layer_norm(windows, b + "norm", 1e-5), b + "qkv", 3 * kC);
  const auto head = [&](std::int64_t i, const std::string& name) {  // [1, G, H, P, hd]
    const std::string part = net.slice(qkv, b + name, 3, i * kC, (i + 1) * kC);
    return net.transpose(net.reshape(part, b + name + "_heads", {1, g, p, kHeads, kHd}),
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
      net.reshape(net.transpose(context, b + "merge", {0, 1, 3, 2, 4}), b + "rows", {1, g, p, kC});
  const std::string x = net.add(net.dense(merged, b + "proj", kC), windows, b + "residual");
  const std::string hidden = net.dense(net.layer_norm(x, b + "mlp_norm", 1e-5), b + "fc1", 2 * kC);
  return net.add(net.dense(net.relu(hidden, b + "act"), b + "fc2", kC), x, b + "mlp_residual");
}

// An NCHW map [1, 32, 8, 8]: block attention over its 4 x 4 windows (4 windows of 16 pixels),
// then grid attention over the 4 x 4 grid of stride 2 (4 windows of 16 pixels, the windows as
// torchvision's partition swap makes them), then a 1x1 conv with a residual on the map.
ir::Graph maxvit_layer() {
  zoo::NetBuilder net("maxvit_layer", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string map = net.conv(x, "embed", zoo::conv_spec(kC, 1));  // NCHW
  // Block: [1, C, 2, 4, 2, 4] -> [1, 2, 2, 4, 4, C] -> [1, 4, 16, C].
  const std::string blocks =
      net.reshape(net.transpose(net.reshape(map, "block_split", {1, kC, 2, 4, 2, 4}), "block_order",
                                {0, 2, 4, 3, 5, 1}),
                  "block_windows", {1, 4, 16, kC});
  const std::string blocked = window_block(net, "block.", blocks, 4, 16);
  const std::string block_map =
      net.reshape(net.transpose(net.reshape(blocked, "block_grid", {1, 2, 2, 4, 4, kC}),
                                "block_back", {0, 5, 1, 3, 2, 4}),
                  "block_map", {1, kC, 8, 8});
  // Grid: [1, C, 4, 2, 4, 2] -> [1, 4, 4, 2, 2, C] -> [1, 16, 4, C], swapped to [1, 4, 16, C].
  const std::string grids = net.transpose(
      net.reshape(net.transpose(net.reshape(block_map, "grid_split", {1, kC, 4, 2, 4, 2}),
                                "grid_order", {0, 2, 4, 3, 5, 1}),
                  "grid_windows", {1, 16, 4, kC}),
      "grid_swap", {0, 2, 1, 3});
  const std::string gridded = window_block(net, "grid.", grids, 4, 16);
  const std::string grid_map =
      net.reshape(net.transpose(net.reshape(net.transpose(gridded, "grid_unswap", {0, 2, 1, 3}),
                                            "grid_grid", {1, 4, 4, 2, 2, kC}),
                                "grid_back", {0, 5, 1, 3, 2, 4}),
                  "grid_map", {1, kC, 8, 8});
  return net.finish(
      {net.add(net.conv(grid_map, "mbconv", zoo::conv_spec(kC, 1)), grid_map, "mbconv_residual")});
}

TEST(MaxVit, block_and_grid_attention_over_an_nchw_map_run_bit_exact) {
  const ir::Graph graph = maxvit_layer();
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  // edge-small has no row normaliser (the LayerNorms): refused by name.
  for_every_policy(graph, cloud, [&](const char* policy, const pipeline::PolicyResult& r) {
    expect_energy_matches(std::string("maxvit_layer ") + policy, r, cloud,
                          CountMatch::ExactWithoutLeakage);
    int gathers = 0, batched = 0, periodic = 0;
    for (const sched::Op& op : r.scheduled.net.ops) {
      gathers += !op.pixel_source.empty();
      batched += op.kind == sched::OpKind::MatMul && op.matmul.batch == 4;
      periodic += op.constant_heads == kHeads && op.constant_row_period == 16;
    }
    // The block partition; the block departition with the grid partition and its swap; the
    // grid departition.
    EXPECT_EQ(gathers, 3);
    EXPECT_EQ(batched, 4);   // scores and context of both attentions
    EXPECT_EQ(periodic, 2);  // each bias, read again per window
    EXPECT_GT(cycle_ratio(r), 0.95);
    EXPECT_LT(cycle_ratio(r), 1.05);
  });
  auto refused = sched::schedule_graph(graph, load_hw_config(config_path("edge-small")),
                                       "layerwise", sched::Objective::Bytes);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.reason().find("'block.norm' (LayerNormalization) needs a row normaliser"),
            std::string::npos)
      << refused.reason();
}

// The windows' net tensors: the partition's gather stores the windows as 64 token rows (head
// views read rows), the departition's an NCHW map on its 8 x 8 grid (the conv reads the grid).
TEST(MaxVit, windows_are_token_rows_and_the_departitioned_map_keeps_its_grid) {
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  auto net = sched::net_from_graph(maxvit_layer(), sched::machine_from_config(cloud),
                                   sched::NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  std::vector<sched::Shape3> gathered;
  for (const sched::Op& op : net.value().ops)
    if (!op.pixel_source.empty()) gathered.push_back(net.value().tensor(op.output).shape);
  ASSERT_EQ(gathered.size(), 3u);
  EXPECT_EQ(gathered[0], (sched::Shape3{kC, 64, 1}));
  EXPECT_EQ(gathered[1], (sched::Shape3{kC, 64, 1}));
  EXPECT_EQ(gathered[2], (sched::Shape3{kC, 8, 8}));
}

}  // namespace
}  // namespace tessel::e2e
