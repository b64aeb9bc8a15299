// The modern-CNN op kinds (issue 36): a unary function as a lookup-table Eltwise (ISA `lut`), a
// broadcast Mul (ISA `mul`), their refusal on a config without the unit, their input needs and
// their cycles and table bytes, all by hand.
#include <gtest/gtest.h>

#include <map>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/group_info.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched {
namespace {

Machine modern_machine(bool lookup_table = true, bool broadcast_multiply = true) {
  Machine m = unified_machine(256 * 1024);  // 16 x 16 array, V = 16
  m.name = "test";
  m.lookup_table = lookup_table;
  m.broadcast_multiply = broadcast_multiply;
  return m;
}

ir::Graph tiny_se() {
  auto graph = zoo::build_model("tiny_se", {.with_weights = false});
  EXPECT_TRUE(graph.ok()) << graph.reason();
  return graph.value();
}

std::map<std::string, const Op*> by_name(const Net& net) {
  std::map<std::string, const Op*> ops;
  for (const Op& op : net.ops) ops[op.name] = &op;
  return ops;
}

TEST(ModernOps, unary_functions_are_one_lookup_table_kind_and_the_se_scale_a_broadcast_mul) {
  auto net = net_from_graph(tiny_se(), modern_machine(), NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const auto ops = by_name(net.value());
  for (const char* name : {"expand_hswish", "dw_silu", "se.gate", "sigmoid"}) {
    ASSERT_EQ(ops.count(name), 1u) << name;
    EXPECT_EQ(ops.at(name)->kind, OpKind::Eltwise) << name;
    EXPECT_TRUE(ops.at(name)->lookup_table) << name;
    EXPECT_EQ(ops.at(name)->weight_bytes, 256) << name;  // 256 one-byte entries
  }
  EXPECT_EQ(ops.count("se.relu"), 0u);  // a Relu folds into its conv's clamp, as before
  ASSERT_EQ(ops.count("se.scale"), 1u);
  const Op& mul = *ops.at("se.scale");
  EXPECT_EQ(mul.kind, OpKind::Mul);
  ASSERT_EQ(mul.inputs.size(), 2u);
  // The full operand first (the graph lists the scale first), the per-channel scale second.
  EXPECT_EQ(net.value().tensor(mul.inputs[0]).shape, (Shape3{16, 8, 8}));
  EXPECT_EQ(net.value().tensor(mul.inputs[1]).shape, (Shape3{16, 1, 1}));
  EXPECT_EQ(net.value().tensor(mul.output).shape, (Shape3{16, 8, 8}));
}

TEST(ModernOps, a_config_without_the_unit_is_refused_naming_the_op_and_the_unit) {
  auto no_lut = net_from_graph(tiny_se(), modern_machine(false, true), NetForm::Folded);
  ASSERT_FALSE(no_lut.ok());
  EXPECT_NE(no_lut.reason().find("'expand_hswish' (HardSwish)"), std::string::npos)
      << no_lut.reason();
  EXPECT_NE(no_lut.reason().find("vector.lookup_table"), std::string::npos) << no_lut.reason();
  auto no_mul = net_from_graph(tiny_se(), modern_machine(true, false), NetForm::Folded);
  ASSERT_FALSE(no_mul.ok());
  EXPECT_NE(no_mul.reason().find("'se.scale' (Mul)"), std::string::npos) << no_mul.reason();
  EXPECT_NE(no_mul.reason().find("vector.broadcast_multiply"), std::string::npos)
      << no_mul.reason();
}

// A Concat is one copy per input (codegen's emit_concat), each a vector instruction over that
// input's channels. By hand, V = 16, P_v = 4, 8 x 8 pixels, inputs of 24 and 8 channels: 64 x
// ceil(24 / 16) + 4 = 132 and 64 x 1 + 4 = 68, 200 in all (priced as one pass of 32 channels
// before session 37: 136, DenseNet-121 then simulated 1.10x its prediction); channels [16, 32)
// are 8 of each input: 68 + 68.
// Token ids into an embedding table (ISA `gather`): the ids are a network input of 4 bytes a
// token (C = 4 int8 elements, H = 8 tokens), the Embedding's output one 16-element row a token;
// its DRAM weights are the 8 rows it gathers (8 x 16 = 128 bytes), never the 50-row table, and
// it computes nothing (its load phase fills its output).
TEST(ModernOps, an_embedding_reads_4_bytes_of_ids_and_gathers_one_row_a_token) {
  ir::Graph graph("ids");
  ASSERT_TRUE(graph.add_input("ids", {1, 8}, ir::DType::i32).ok());
  ir::Tensor table;
  table.name = "table";
  table.shape = {50, 16};
  table.constant = true;
  ASSERT_TRUE(graph.add_constant(std::move(table)).ok());
  ASSERT_TRUE(graph.add_op({"embed", ir::OpKind::Embedding, {"ids", "table"}, {"e"}, {}}).ok());
  ASSERT_TRUE(graph.set_outputs({"e"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(graph).ok());
  const Machine machine = modern_machine();
  auto net = net_from_graph(graph, machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Net& n = net.value();
  const Op* embed = nullptr;
  for (const Op& op : n.ops)
    if (op.kind == OpKind::Embedding) embed = &op;
  ASSERT_NE(embed, nullptr);
  ASSERT_EQ(embed->inputs.size(), 1u);
  const Shape3 ids = n.tensor(embed->inputs[0]).shape, rows = n.tensor(embed->output).shape;
  EXPECT_EQ(ids.c * ids.h * ids.w * n.activation_bytes, 32);  // 8 int32 ids
  EXPECT_EQ(ids.h, 8);
  EXPECT_EQ(rows.c, 16);
  EXPECT_EQ(rows.h, 8);
  EXPECT_EQ(embed->table_rows, 50);
  EXPECT_EQ(embed->gather_row_bytes, 16);
  EXPECT_EQ(embed->weight_bytes, 0);
  EXPECT_EQ(n.model_weight_bytes(), 128);
  EXPECT_EQ(n.io_bytes(), 32 + 128);  // the ids in, the rows out
  EXPECT_EQ(compute_cycles_of(n, machine, *embed, full_box(rows), 1, 0, false), 0);
}

TEST(ModernOps, a_concat_copies_each_input_over_its_own_channels_by_hand) {
  zoo::NetBuilder b("concat_copies", {.with_weights = false});
  const std::string x = b.input("input", 16, 8, 8);
  const std::string wide = b.relu(b.conv(x, "wide", zoo::conv_spec(24, 1)), "wide_relu");
  const std::string narrow = b.relu(b.conv(x, "narrow", zoo::conv_spec(8, 1)), "narrow_relu");
  auto graph = b.finish({b.concat({wide, narrow}, "join")});
  const Machine machine = modern_machine();
  auto net = net_from_graph(graph, machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Op& join = *by_name(net.value()).at("join");
  EXPECT_EQ(compute_cycles_of(net.value(), machine, join, Box{{0, 32}, {0, 8}, {0, 8}}, 1), 200);
  EXPECT_EQ(compute_cycles_of(net.value(), machine, join, Box{{16, 32}, {0, 8}, {0, 8}}, 1), 136);
  EXPECT_EQ(compute_cycles_of(net.value(), machine, join, Box{{0, 16}, {0, 8}, {0, 8}}, 1), 68);
}

// By hand, V = 16 lanes, P_v = 4: a lut over 8 x 8 pixels of 16 channels reads its table in
// 256 / 16 = 16 cycles, then 64 pixels x 1 chunk: 16 + 64 + 4 = 84; the Mul 64 + 4 = 68. The
// table is needed whole by any channel slice: 256 bytes for channels [4, 8) too.
TEST(ModernOps, lut_and_mul_cycles_and_table_bytes_by_hand) {
  const Machine machine = modern_machine();
  auto net = net_from_graph(tiny_se(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const auto ops = by_name(net.value());
  const Box whole{{0, 16}, {0, 8}, {0, 8}};
  EXPECT_EQ(compute_cycles_of(net.value(), machine, *ops.at("expand_hswish"), whole, 1), 84);
  EXPECT_EQ(compute_cycles_of(net.value(), machine, *ops.at("se.scale"), whole, 1), 68);
  EXPECT_EQ(weight_bytes_for(net.value(), *ops.at("dw_silu"), Interval{4, 8}), 256);
  EXPECT_EQ(weight_bytes_for(net.value(), *ops.at("dw_silu"), Interval{}), 0);
  // The Mul's input needs: the full operand at the output box, the scale at its one pixel.
  const Box tile{{4, 12}, {2, 5}, {0, 8}};
  const Op& mul = *ops.at("se.scale");
  EXPECT_EQ(deduce_input(net.value(), mul, 0, tile).box, tile);
  EXPECT_EQ(deduce_input(net.value(), mul, 1, tile).box, (Box{{4, 12}, {0, 1}, {0, 1}}));
}

TEST(ModernOps, every_policy_schedules_the_se_net_and_the_checker_accepts_it) {
  const Machine machine = modern_machine();
  auto net = net_from_graph(tiny_se(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    auto s = run_policy(net.value(), machine, policy, Objective::Bytes);
    ASSERT_TRUE(s.ok()) << policy << ": " << s.reason();
    const Status checked = check_schedule(net.value(), machine, s.value());
    EXPECT_TRUE(checked.ok()) << policy << ": " << checked.reason();
    // Layerwise loads each op's weights once: the four tables (4 x 256) beside the convs.
    if (std::string(policy) == "layerwise") {
      int64_t weights = 0;
      for (const Op& op : net.value().ops) weights += op.weight_bytes;
      EXPECT_EQ(s.value().traffic.weights_read, weights);
    }
  }
}

// An SE pool wider than the pool window (tiny_se_wide: 16 channels over 20 x 32) runs as
// depthwise convs of ones, one per sub-window: rows 10 + 10, columns 10 + 11 + 11
// (docs/codegen.md).
TEST(ModernOps, a_pool_wider_than_the_pool_window_is_priced_as_sub_window_convs_by_hand) {
  const Machine machine = modern_machine();  // 16 x 16, fill 16, drain 16, V = 16
  auto graph = zoo::build_model("tiny_se_wide", {.with_weights = false});
  ASSERT_TRUE(graph.ok()) << graph.reason();
  auto net = net_from_graph(graph.value(), machine, NetForm::Folded);
  ASSERT_TRUE(net.ok()) << net.reason();
  const Op& pool = *by_name(net.value()).at("se.pool");
  EXPECT_EQ(pool.kind, OpKind::GlobalPool);
  EXPECT_TRUE(pool.pool_by_conv);
  EXPECT_TRUE(has_matrix_work(pool));
  EXPECT_EQ(pool.weight_bytes, 16);  // one pixel of 16 ones, the DRAM bytes of every load
  EXPECT_EQ(weight_bytes_for(net.value(), pool, Interval{4, 8}), 16);
  EXPECT_EQ(weight_bytes_for(net.value(), pool, Interval{}), 0);
  // On chip: one depthwise block of the largest sub-window's 10 x 11 taps x 16 columns.
  EXPECT_EQ(onchip_weight_bytes(net.value(), machine, pool, Interval{0, 16}), 1760);
  // Six convs of one pixel, 1 + taps + 16 + 16 each: 6 x 33 + 2 x (100 + 110 + 110) = 838;
  // then the requant, 1 x ceil(16 / 16) + 4.
  const Box out{{0, 16}, {0, 1}, {0, 1}};
  EXPECT_EQ(compute_cycles_of(net.value(), machine, pool, out, 1), 838 + 5);
  // The narrow SE pool of tiny_se keeps the pool instruction.
  auto narrow = net_from_graph(tiny_se(), machine, NetForm::Folded);
  ASSERT_TRUE(narrow.ok()) << narrow.reason();
  EXPECT_FALSE(by_name(narrow.value()).at("se.pool")->pool_by_conv);
}

}  // namespace
}  // namespace tessel::sched
