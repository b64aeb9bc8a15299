// Weight sweeps lowered (docs/codegen.md, "Weight sweeps"): bit exact, bytes equal the schedule.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

// Replaces the whole schedule by one weight-sweep group of every op, each conv in `slices`
// output-channel slices; with `concat_view`, every op but the Concats, which stay DRAM views
// (alias_concat: the branches store into their channel slices). The independent checker must
// accept it.
std::function<void(sched::ScheduledNet&)> one_sweep(const HwConfig& config, int64_t slices,
                                                    bool concat_view = false) {
  return [&config, slices, concat_view](sched::ScheduledNet& s) {
    const sched::Machine machine = sched::machine_from_config(config);
    std::vector<int> ops, concats;
    for (int op : sched::schedulable_ops(s.net))
      (concat_view && s.net.op(op).kind == sched::OpKind::Concat ? concats : ops).push_back(op);
    ASSERT_TRUE(sched::is_weight_sweep_group(s.net, ops));
    sched::Mapping m;
    m.weights_resident = false;
    m.double_buffered = true;
    m.weight_sweep = true;
    for (int op : ops) m.op_slices.push_back(s.net.op(op).kind == sched::OpKind::Conv ? slices : 0);
    auto g = sched::evaluate_mapping(s.net, machine, ops, m, sched::PlanOptions{});
    ASSERT_TRUE(g.ok()) << g.reason();
    s.schedule.groups = {g.value()};
    for (int concat : concats) {
      auto view = sched::plan_group(s.net, machine, {concat}, sched::PlanOptions{});
      ASSERT_TRUE(view.ok()) << view.reason();
      ASSERT_TRUE(view.value().dram_view);
      s.schedule.groups.push_back(view.value());
    }
    sched::finalize_schedule(s.net, machine, s.schedule);
    const Status checked = sched::check_schedule(s.net, machine, s.schedule);
    ASSERT_TRUE(checked.ok()) << checked.reason();
  };
}

// tiny_residual (conv-relu-conv + skip add + relu, 4 channels) as one sweep, each conv in 1, 2
// and 4 slices: the add writes over the network input's buffer in place.
TEST(WeightSweepCodegen, tiny_residual_one_sweep_is_bit_exact_with_exact_bytes) {
  auto built = zoo::build_model("tiny_residual");
  ASSERT_TRUE(built.ok()) << built.reason();
  for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
    const HwConfig config = load_hw_config(config_path(name));
    for (int64_t slices : {1, 2, 4}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(slices) + " slices");
      sched::ScheduledNet scheduled;
      expect_end_to_end(built.value(), config, "optimal", nullptr, &scheduled, {},
                        one_sweep(config, slices));
      ASSERT_EQ(scheduled.schedule.groups.size(), 1u);
      EXPECT_TRUE(scheduled.schedule.groups[0].weight_sweep);
    }
  }
}

// Pools in a sweep (docs/scheduler.md, "Weight sweeps"): tiny_inception's branch 3 (3x3/1 max
// pool, pad 1, over the network input, then a 1x1 conv) and tiny_stem's 3x3/2 max pool between
// its convs run whole at the end of the phase before them: bit exact, bytes as predicted.
TEST(WeightSweepCodegen, pools_in_a_sweep_are_bit_exact_with_exact_bytes) {
  for (const char* model : {"tiny_inception", "tiny_stem"}) {
    auto built = zoo::build_model(model);
    ASSERT_TRUE(built.ok()) << built.reason();
    for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
      const HwConfig config = load_hw_config(config_path(name));
      for (int64_t slices : {1, 2}) {
        SCOPED_TRACE(std::string(model) + " on " + name + ", " + std::to_string(slices) +
                     " slices");
        sched::ScheduledNet scheduled;
        expect_end_to_end(built.value(), config, "optimal", nullptr, &scheduled, {},
                          one_sweep(config, slices, true));
        ASSERT_FALSE(scheduled.schedule.groups.empty());
        EXPECT_TRUE(scheduled.schedule.groups[0].weight_sweep);
      }
    }
  }
}

// Two inception blocks in a row (8x8x8 -> 12 channels -> 12 channels), the first one's Concat
// read by the second's branches: in one sweep the Concat is a block run whole (a vector copy
// of each branch into its channels), its output never leaves the chip.
ir::Graph two_inceptions() {
  zoo::NetBuilder net("two_inceptions", zoo::ZooOptions{});
  std::string x = net.input("input", 8, 8, 8);
  for (const char* name : {"a", "b"}) {
    const std::string p = name;
    const std::string b1 =
        net.relu(net.conv(x, p + ".branch1.conv", zoo::conv_spec(4, 1)), p + ".branch1.relu");
    std::string b2 =
        net.relu(net.conv(x, p + ".branch2.0.conv", zoo::conv_spec(4, 1)), p + ".branch2.0.relu");
    b2 = net.relu(net.conv(b2, p + ".branch2.1.conv", zoo::conv_spec(4, 3, 1, 1)),
                  p + ".branch2.1.relu");
    std::string b3 = net.max_pool(x, p + ".branch3.pool", 3, 1, 1);
    b3 = net.relu(net.conv(b3, p + ".branch3.conv", zoo::conv_spec(4, 1)), p + ".branch3.relu");
    x = net.concat({b1, b2, b3}, p + ".concat");
  }
  return net.finish({x});
}

// Concats in a sweep: tiny_inception with its Concat inside (stored whole at the end) and two
// inception blocks chained through the first one's Concat, each as one sweep of every op, and
// `optimal` on the chain: bit exact, bytes as predicted.
TEST(WeightSweepCodegen, concats_in_a_sweep_are_bit_exact_with_exact_bytes) {
  auto tiny = zoo::build_model("tiny_inception");
  ASSERT_TRUE(tiny.ok()) << tiny.reason();
  const ir::Graph chain = two_inceptions();
  for (const ir::Graph* model : {static_cast<const ir::Graph*>(&tiny.value()), &chain}) {
    for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
      const HwConfig config = load_hw_config(config_path(name));
      for (int64_t slices : {1, 2}) {
        SCOPED_TRACE(model->name() + " on " + name + ", " + std::to_string(slices) + " slices");
        sched::ScheduledNet scheduled;
        expect_end_to_end(*model, config, "optimal", nullptr, &scheduled, {},
                          one_sweep(config, slices));
        ASSERT_EQ(scheduled.schedule.groups.size(), 1u);
        EXPECT_TRUE(scheduled.schedule.groups[0].weight_sweep);
        EXPECT_EQ(scheduled.schedule.groups[0].traffic.activations_written,
                  8 * 8 * 12 * config.matrix.input_bits / 8);  // the last Concat only
      }
    }
    SCOPED_TRACE(model->name() + ": optimal");
    expect_end_to_end(*model, load_hw_config(config_path("npc19-deepfusion")), "optimal");
  }
}

// An inception block whose Concat only a 2x2/2 max pool reads, then a 1x1 conv (GoogLeNet's
// inception4e -> maxpool4 -> inception5a). `optimal` compiles it after pools-before-concat
// (docs/scheduler.md, "Pools before Concat"): each branch is pooled right after it is made.
ir::Graph inception_then_pool() {
  zoo::NetBuilder net("inception_then_pool", zoo::ZooOptions{});
  const std::string x = net.input("input", 8, 8, 8);
  const std::string b1 =
      net.relu(net.conv(x, "branch1.conv", zoo::conv_spec(4, 1)), "branch1.relu");
  std::string b2 = net.relu(net.conv(x, "branch2.0.conv", zoo::conv_spec(4, 1)), "branch2.0.relu");
  b2 = net.relu(net.conv(b2, "branch2.1.conv", zoo::conv_spec(4, 3, 1, 1)), "branch2.1.relu");
  std::string b3 = net.max_pool(x, "branch3.pool", 3, 1, 1);
  b3 = net.relu(net.conv(b3, "branch3.conv", zoo::conv_spec(4, 1)), "branch3.relu");
  const std::string pooled = net.max_pool(net.concat({b1, b2, b3}, "concat"), "pool", 2, 2);
  return net.finish({net.relu(net.conv(pooled, "out.conv", zoo::conv_spec(8, 1)), "out.relu")});
}

// The block as one sweep of every op (the branch pools run whole at the end of their branch's
// phase, the Concat of the pooled branches is a copy), each conv in 1 and 2 slices, and
// `optimal`'s own choice: bit exact, bytes as predicted; only the 4x4x8 result leaves the chip.
TEST(WeightSweepCodegen, pools_before_a_concat_are_bit_exact_in_a_sweep) {
  const ir::Graph model = inception_then_pool();
  for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
    const HwConfig config = load_hw_config(config_path(name));
    for (int64_t slices : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(slices) + " slices");
      sched::ScheduledNet scheduled;
      expect_end_to_end(model, config, "optimal", nullptr, &scheduled, {},
                        one_sweep(config, slices));
      const sched::Net& net = scheduled.net;
      const std::vector<int> order = sched::schedulable_ops(net);
      // An op, or the op its activation folded into (docs/scheduler.md "Activation folding").
      auto position = [&](const std::string& op) {
        for (size_t i = 0; i < order.size(); ++i)
          if (net.op(order[i]).name == op || net.op(order[i]).activation == op)
            return static_cast<int>(i);
        ADD_FAILURE() << "no op '" << op << "'";
        return -1;
      };
      EXPECT_EQ(position("pool.0"), position("branch1.relu") + 1);
      EXPECT_EQ(position("pool.1"), position("branch2.1.relu") + 1);
      EXPECT_EQ(position("pool.2"), position("branch3.relu") + 1);
      EXPECT_EQ(net.op(order[position("pool.2") + 1]).kind, sched::OpKind::Concat);
      ASSERT_EQ(scheduled.schedule.groups.size(), 1u);
      EXPECT_TRUE(scheduled.schedule.groups[0].weight_sweep);
      EXPECT_EQ(scheduled.schedule.groups[0].traffic.activations_written,
                4 * 4 * 8 * config.matrix.input_bits / 8);
    }
    SCOPED_TRACE(std::string(name) + ": optimal");
    expect_end_to_end(model, config, "optimal");
  }
}

// The finest sweep slicing (sched::finest_sweep_slices): ceil(C / 16) near-equal slices on a
// 16-column array, not a power of two. A 48-channel 3x3 conv (3 x 16) then a 40-channel 1x1
// conv (3 slices of 13, 13, 14; each Relu folds into its conv), each as the sweep's only slicing:
// the checker accepts it, the program runs bit exact and moves the bytes the schedule predicts; a
// power-of-two count above C / 16 (4 for 48 channels) is still refused by name.
TEST(WeightSweepCodegen, finest_slicing_three_slices_is_bit_exact) {
  zoo::NetBuilder builder("finest_slices", zoo::ZooOptions{});
  std::string x = builder.input("input", 6, 6, 8);
  x = builder.relu(builder.conv(x, "a", zoo::conv_spec(48, 3, 1, 1)), "a.relu");
  x = builder.relu(builder.conv(x, "b", zoo::conv_spec(40, 1)), "b.relu");
  const ir::Graph model = builder.finish({x});
  const HwConfig config = load_hw_config(config_path("npc19-deepfusion"));
  sched::ScheduledNet scheduled;
  expect_end_to_end(model, config, "optimal", nullptr, &scheduled, {}, one_sweep(config, 3));
  ASSERT_EQ(scheduled.schedule.groups.size(), 1u);
  EXPECT_EQ(scheduled.schedule.groups[0].op_slices, (std::vector<int64_t>{3, 3}));
  const sched::Machine machine = sched::machine_from_config(config);
  for (int op : sched::schedulable_ops(scheduled.net)) {
    if (scheduled.net.op(op).kind == sched::OpKind::Conv) {
      EXPECT_EQ(sched::finest_sweep_slices(scheduled.net, machine, scheduled.net.op(op)), 3);
    }
  }
  sched::Mapping four;
  four.weights_resident = false;
  four.double_buffered = true;
  four.weight_sweep = true;
  four.op_slices = {4, 3};  // the Relus fold into the convs
  const std::vector<int> ops = sched::schedulable_ops(scheduled.net);
  sched::Mapping three = four;
  three.op_slices = {3, 3};
  EXPECT_TRUE(sched::check_mapping(scheduled.net, machine, ops, three).ok());
  const Status refused = sched::check_mapping(scheduled.net, machine, ops, four);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.reason().find("4 slices of 'a' (a power of two up to 3, or 3: one per "
                                  "matrix column block)"),
            std::string::npos)
      << refused.reason();
}

// `optimal` with sweeps on: whatever it picks compiles, runs bit exact and moves the bytes it
// predicted.
TEST(WeightSweepCodegen, optimal_with_sweeps_is_bit_exact_on_tiny_nets) {
  sched::MapSpaceFeatures features;
  features.weight_sweep = true;
  for (const char* model : {"tiny_residual", "tiny_conv", "tiny_inception"}) {
    auto built = zoo::build_model(model);
    ASSERT_TRUE(built.ok()) << built.reason();
    for (const char* name : {"edge-small", "npc19-deepfusion"}) {
      SCOPED_TRACE(std::string(model) + " on " + name);
      expect_end_to_end(built.value(), load_hw_config(config_path(name)), "optimal", nullptr,
                        nullptr, features);
    }
  }
}

// One weight placement (place_conv) for tilings and sweeps: a conv's own buffer too small for
// the packed form moves above the schedule's peak; a sweep's pair serves every conv of the
// sweep and stays where the schedule put it, so each slice must fit both copies. tiny_residual
// as one sweep on edge-small (8x8, 8-bit), one slice per conv: conv1 (4 -> 4, 3x3, BN folded
// into a bias) packs one 8x8 block per kernel position (9 x 64 = 576 bytes), one block's bias
// vector (8 x 4 = 32) and the 4 channels' (M, r) table (4 x 8 = 32): 640 bytes.
TEST(WeightSweepCodegen, a_sweep_pair_too_small_for_a_packed_slice_is_refused) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  ir::Graph prepared, graph;
  ASSERT_NO_FATAL_FAILURE(
      test::prepare_and_quantize(zoo::build_model("tiny_residual").value(), 8, prepared, graph));
  auto scheduled = sched::schedule_graph(prepared, config, "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();
  one_sweep(config, 1)(scheduled.value());
  const auto& shape = graph.tensor("input.q").shape;
  const std::vector<std::int32_t> zeros(static_cast<size_t>(shape[1] * shape[2] * shape[3]), 0);
  ASSERT_TRUE(compile(graph, scheduled.value(), config, {{"input.q", zeros}}).ok());
  for (auto& b : scheduled.value().schedule.groups[0].buffers)
    if (b.name == "w:sweep#1") b.size_bytes = 632;
  auto refused = compile(graph, scheduled.value(), config, {{"input.q", zeros}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.reason(),
            "group 0 (weight sweep): op 'conv1': a slice of 4 channels needs 640 bytes; "
            "'w:sweep#1' has 632");
}

}  // namespace
}  // namespace tessel::codegen
