// The transformer layer in the scheduler's view (issue 36, part 3; docs/scheduler-transformers.md
// "Transformers"): token tensors as C = d, H = S, W = 1, Linears as 1x1 convs, head splits as
// views, the activation MatMul per head, Norm and RowSoftmax, their refusals, cycles and input
// needs by hand, and every policy scheduling tiny_attention with the checker's approval.
#include <gtest/gtest.h>

#include <map>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched::transformer_ops_test {
namespace {

Machine transformer_machine(bool units = true) {
  Machine m = unified_machine(1024 * 1024);  // 16 x 16 array, V = 16, F = D = 16
  m.name = "test";
  m.lookup_table = m.row_normalise = m.activation_operands = units;
  return m;
}

ir::Graph tiny_attention() {
  auto graph = zoo::build_model("tiny_attention", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  return graph.value();
}

std::map<std::string, const Op*> by_name(const Net& net) {
  std::map<std::string, const Op*> ops;
  for (const Op& op : net.ops) ops[op.name] = &op;
  return ops;
}

const std::string kAttn = "layers.0.self_attn";

// Sequence 16, d 32, 2 heads of 16, MLP 64: 16 ops, no transpose or reshape among them. The
// fused in_proj and its q, k, v Slices are three projections (split-sliced-linear, which
// net_from_graph runs as the quantization preparation does).
TEST(TransformerOps, the_layer_is_linears_views_matmuls_and_row_ops) {
  auto net = net_from_graph(tiny_attention(), transformer_machine(), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Net& n = net.value();
  const auto ops = by_name(n);
  EXPECT_EQ(n.ops.size(), 16u);
  EXPECT_EQ(ops.count(kAttn + ".in_proj"), 0u);
  for (const char* part : {".q.linear", ".k.linear", ".v.linear"}) {
    const Op& linear = *ops.at(kAttn + part);
    EXPECT_EQ(linear.kind, OpKind::Conv) << part;  // a 1x1 conv over the 16 tokens
    EXPECT_EQ(n.tensor(linear.inputs[0]).shape, (Shape3{32, 16, 1}));
    EXPECT_EQ(n.tensor(linear.output).shape, (Shape3{32, 16, 1}));
    EXPECT_EQ(linear.weight_bytes, 32 * 32 + 32 * 4);
    EXPECT_EQ(linear.requant_table_bytes, 32 * 8);
    EXPECT_EQ(linear.macs, 16 * 32 * 32);
  }
  const Op& scale = *ops.at(kAttn + ".q_scaled");
  EXPECT_TRUE(scale.kind == OpKind::Eltwise && scale.lookup_table);
  EXPECT_EQ(scale.weight_bytes, 256);
  const Op& scores = *ops.at(kAttn + ".scores");
  ASSERT_EQ(scores.kind, OpKind::MatMul);
  EXPECT_EQ(n.tensor(scores.inputs[0]).name, kAttn + ".q_scaled");
  EXPECT_EQ(n.tensor(scores.inputs[1]).name, kAttn + ".k.linear");
  const HeadMatMul& s = scores.matmul;
  EXPECT_EQ(s.heads, 2);
  EXPECT_EQ(s.m_size, 16);
  EXPECT_EQ(s.k_size, 16);
  EXPECT_EQ(s.n_size, 16);
  EXPECT_TRUE(s.transpose_b);  // K read transposed in place
  EXPECT_EQ(s.a_head_stride, 16);
  EXPECT_EQ(s.b_head_stride, 16);
  EXPECT_EQ(n.tensor(scores.output).shape, (Shape3{32, 16, 1}));  // [S][H][S]
  EXPECT_EQ(scores.macs, 2 * 16 * 16 * 16);
  const Op& softmax = *ops.at(kAttn + ".softmax");
  EXPECT_EQ(softmax.kind, OpKind::RowSoftmax);
  EXPECT_EQ(softmax.row_length, 16);
  EXPECT_EQ(softmax.weight_bytes, 1024);
  const Op& context = *ops.at(kAttn + ".context");
  ASSERT_EQ(context.kind, OpKind::MatMul);
  EXPECT_FALSE(context.matmul.transpose_b);
  EXPECT_EQ(n.tensor(context.inputs[1]).name, kAttn + ".v.linear");
  // The merge is the context itself: out_proj reads it.
  EXPECT_EQ(ops.at(kAttn + ".out_proj")->inputs[0], context.output);
  const Op& norm = *ops.at("layers.0.norm1");
  EXPECT_EQ(norm.kind, OpKind::Norm);
  EXPECT_TRUE(norm.centre);
  EXPECT_EQ(norm.weight_bytes, 8 + 16 * 32);
  EXPECT_EQ(ops.at("layers.0.linear1")->kind, OpKind::Conv);
  EXPECT_TRUE(n.tensor(ops.at("layers.0.norm2")->output).network_output);
}

// Where the fused projection is read whole too (here: a graph output), it stays one 1x1 conv and
// q, k, v are Slice views of its channels (DRAM views at offsets 0, 32 and 64).
TEST(TransformerOps, slices_of_a_projection_read_whole_are_channel_views) {
  ir::Graph graph = tiny_attention();
  std::vector<std::string> outputs = graph.outputs();
  outputs.push_back(kAttn + ".in_proj.unflatten");
  ASSERT_TRUE(graph.set_outputs(outputs).ok());
  auto net = net_from_graph(graph, transformer_machine(), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Net& n = net.value();
  const auto ops = by_name(n);
  EXPECT_EQ(n.ops.size(), 18u);  // in_proj, its Reshape (an output), 3 Slices for 3 Linears
  const Op& in_proj = *ops.at(kAttn + ".in_proj");
  EXPECT_EQ(in_proj.kind, OpKind::Conv);
  EXPECT_EQ(n.tensor(in_proj.output).shape, (Shape3{96, 16, 1}));
  EXPECT_EQ(in_proj.weight_bytes, 32 * 96 + 96 * 4);
  EXPECT_EQ(in_proj.macs, 16 * 32 * 96);
  for (const auto& [name, offset] :
       std::map<std::string, int64_t>{{kAttn + ".q", 0}, {kAttn + ".k", 32}, {kAttn + ".v", 64}}) {
    const Op& slice = *ops.at(name);
    EXPECT_EQ(slice.kind, OpKind::Slice) << name;
    EXPECT_EQ(slice.channel_offset, offset) << name;
    EXPECT_EQ(n.tensor(slice.output).shape, (Shape3{32, 16, 1})) << name;
  }
}

TEST(TransformerOps, a_config_without_a_unit_is_refused_naming_the_op_and_the_unit) {
  Machine m = transformer_machine();
  m.row_normalise = false;
  auto no_norm = net_from_graph(tiny_attention(), m, NetForm::Folded);
  ASSERT_FALSE(no_norm.ok());
  EXPECT_NE(no_norm.reason().find("'" + kAttn + ".softmax' (Softmax)"), std::string::npos)
      << no_norm.reason();
  EXPECT_NE(no_norm.reason().find("vector.row_normalise: true"), std::string::npos);
  m = transformer_machine();
  m.activation_operands = false;
  auto no_matmul = net_from_graph(tiny_attention(), m, NetForm::Folded);
  ASSERT_FALSE(no_matmul.ok());
  EXPECT_NE(no_matmul.reason().find("'" + kAttn + ".scores' (MatMul)"), std::string::npos)
      << no_matmul.reason();
  EXPECT_NE(no_matmul.reason().find("matrix.activation_operands: true"), std::string::npos);
}

// By hand, R = C = V = 16, F = D = 16, P_v = 4 (docs/timing.md):
//   norm over 16 pixels of 32: 16 * (2 * 2 + 56) + 4 = 964;
//   softmax of 16 pixels x 2 heads of 16 keys: 512 / 16 + 32 * (3 * 1 + 31) + 4 = 1124;
//   scores: per head W 16 + 1 pass x max(16, 16) + 32 = 64, two heads 128, then one requant of
//   16 pixels x 32 channels, 16 * 2 + 4 = 36: 164.
TEST(TransformerOps, row_op_and_matmul_cycles_by_hand) {
  const Machine machine = transformer_machine();
  auto net = net_from_graph(tiny_attention(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const auto ops = by_name(net.value());
  const Box whole{{0, 32}, {0, 16}, {0, 1}};
  EXPECT_EQ(compute_cycles_of(net.value(), machine, *ops.at("layers.0.norm1"), whole, 1), 964);
  EXPECT_EQ(compute_cycles_of(net.value(), machine, *ops.at(kAttn + ".softmax"), whole, 1), 1124);
  EXPECT_EQ(compute_cycles_of(net.value(), machine, *ops.at(kAttn + ".scores"), whole, 16), 164);
  // A row block of queries [4, 8) needs those rows of Q (every channel) and all of K.
  const Op& scores = *ops.at(kAttn + ".scores");
  const Box rows{{0, 32}, {4, 8}, {0, 1}};
  EXPECT_EQ(deduce_input(net.value(), scores, 0, rows).box, (Box{{0, 32}, {4, 8}, {0, 1}}));
  EXPECT_EQ(deduce_input(net.value(), scores, 1, rows).box, (Box{{0, 32}, {0, 16}, {0, 1}}));
  // The norm's parameters are needed whole by any tile.
  EXPECT_EQ(weight_bytes_for(net.value(), *ops.at("layers.0.norm1"), Interval{0, 32}), 520);
}

// Over a batch of sequences (HeadMatMul::batch: Swin's and MaxViT's windows) a row block of
// queries needs the keys of its own sequences only: 4 sequences of 16 rows, scores per head
// against K^T, K made in the group by a token op.
TEST(TransformerOps, a_batch_of_sequences_needs_the_keys_of_its_rows_sequences) {
  for (const int64_t batch : {int64_t{4}, int64_t{1}}) {
    Net net;
    const int x = net.add_tensor("x", Shape3{32, 64, 1});
    Op project;
    project.name = "k_proj";
    project.kind = OpKind::Eltwise;
    project.inputs = {x};
    project.output = net.add_tensor("k", Shape3{32, 64, 1});
    const int k_proj = net.add_op(project);
    Op scores;
    scores.name = "scores";
    scores.kind = OpKind::MatMul;
    scores.inputs = {x, project.output};
    scores.output = net.add_tensor("scores", Shape3{batch == 1 ? 128 : 32, 64, 1});
    scores.matmul = HeadMatMul{2, 64 / batch, 16, 64 / batch, 0, 16, 0, 16, true, 1, batch};
    const int matmul = net.add_op(scores);
    net.finalize();
    const auto keys = [&](int64_t b, int64_t e) {
      return deduce_input(net, net.op(matmul), 1, Box{{0, 32}, {b, e}, {0, 1}}).box;
    };
    // The queries: their own rows, either way.
    EXPECT_EQ(deduce_input(net, net.op(matmul), 0, Box{{0, 32}, {20, 40}, {0, 1}}).box,
              (Box{{0, 32}, {20, 40}, {0, 1}}));
    if (batch == 1) {
      // One sequence: every key, K made once by the first row block (RunsOnce).
      EXPECT_EQ(keys(20, 40), (Box{{0, 32}, {0, 64}, {0, 1}}));
      EXPECT_EQ(attention_whole_ops(net, {k_proj, matmul}), (std::vector<char>{1, 0}));
      continue;
    }
    EXPECT_EQ(keys(0, 16), (Box{{0, 32}, {0, 16}, {0, 1}}));
    EXPECT_EQ(keys(20, 40), (Box{{0, 32}, {16, 48}, {0, 1}}));  // sequences 1 and 2
    EXPECT_EQ(keys(15, 17), (Box{{0, 32}, {0, 32}, {0, 1}}));
    EXPECT_EQ(keys(48, 64), (Box{{0, 32}, {48, 64}, {0, 1}}));
    // Read by sequences, as rows: K runs in every row block.
    EXPECT_EQ(attention_whole_ops(net, {k_proj, matmul}), (std::vector<char>{0, 0}));
  }
}

TEST(TransformerOps, every_policy_schedules_tiny_attention_and_the_checker_accepts_it) {
  const Machine machine = transformer_machine();
  for (NetForm form : {NetForm::Caffe, NetForm::Folded}) {
    auto net = net_from_graph(tiny_attention(), machine, form);
    ASSERT_TRUE(net.ok()) << net.reason();
    for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
      auto s = run_policy(net.value(), machine, policy, Objective::Bytes);
      ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
      const Status checked = check_schedule(net.value(), machine, s.value());
      EXPECT_TRUE(checked.ok()) << policy << ": " << checked.reason();
    }
  }
}

}  // namespace
}  // namespace tessel::sched::transformer_ops_test
