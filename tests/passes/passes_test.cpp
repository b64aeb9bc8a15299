// Passes, text in / text out: parse a small graph, run one pass, compare the exact dump.
#include "compiler/passes/pass.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "compiler/ir/text.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/zoo/zoo.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/schedule_json.hpp"
#include "tests/support/sanitized.hpp"

namespace tessel::passes {
namespace {

/// Parses `input`, runs `pipeline`, checks validity and returns the dump (or the failure).
std::string run(const std::string& pipeline, const std::string& input) {
  ir::Graph graph = ir::parse_text(input, "test.tir");
  if (Status status = run_passes(graph, pipeline); !status) return "error: " + status.reason();
  if (Status valid = ir::validate(graph); !valid) return "invalid: " + valid.reason();
  return ir::to_text(graph);
}

TEST(FoldBatchnorm, folds_scale_and_shift_into_weight_and_new_bias) {
  // s = gamma / sqrt(var + eps) = [4/sqrt(4), 1/sqrt(1)] = [2, 1]
  // w' = w * s = [2, 2];  b' = (0 - mean) * s + beta = [-1*2 + 0.5, 1*1 + 0] = [-1.5, 1]
  EXPECT_EQ(run("fold-batchnorm", R"(graph g {
  input %x : f32[1,1,2,2]
  const %bn.b : f32[2] = [0.5, 0]
  const %bn.g : f32[2] = [4, 1]
  const %bn.m : f32[2] = [1, -1]
  const %bn.v : f32[2] = [3, 0]
  const %w : f32[2,1,1,1] = [1, 2]
  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,2,2,2]
  %bn = BatchNormalization(%conv, %bn.g, %bn.b, %bn.m, %bn.v) {epsilon=1} : f32[1,2,2,2]
  %y = Relu(%bn) : f32[1,2,2,2]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,1,2,2]
  const %conv.bias_folded : f32[2] = [-1.5, 1]
  const %conv.weight_folded : f32[2,1,1,1] = [2, 2]
  %conv = Conv(%x, %conv.weight_folded, %conv.bias_folded) {kernel=1x1} : f32[1,2,2,2]
  %y = Relu(%conv) : f32[1,2,2,2]
  output %y
}
)");
}

TEST(FoldBatchnorm, existing_bias_is_shifted_too) {
  // s = [1]; b' = (b - mean) * s + beta = (3 - 1) * 1 + 0.25 = 2.25
  EXPECT_EQ(run("fold-batchnorm", R"(graph g {
  input %x : f32[1,1,1,1]
  const %b : f32[1] = [3]
  const %beta : f32[1] = [0.25]
  const %gamma : f32[1] = [1]
  const %mean : f32[1] = [1]
  const %var : f32[1] = [1]
  const %w : f32[1,1,1,1] = [0.5]
  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[1,1,1,1]
  %bn = BatchNormalization(%conv, %gamma, %beta, %mean, %var) {epsilon=0} : f32[1,1,1,1]
  output %bn
}
)"),
            R"(graph g {
  input %x : f32[1,1,1,1]
  const %conv.bias_folded : f32[1] = [2.25]
  const %conv.weight_folded : f32[1,1,1,1] = [0.5]
  %conv = Conv(%x, %conv.weight_folded, %conv.bias_folded) {kernel=1x1} : f32[1,1,1,1]
  output %conv
}
)");
}

TEST(FoldBatchnorm, keeps_batchnorm_when_the_conv_result_has_other_readers) {
  const std::string input = R"(graph g {
  input %x : f32[1,1,1,1]
  const %beta : f32[1] = [0]
  const %gamma : f32[1] = [1]
  const %mean : f32[1] = [0]
  const %var : f32[1] = [1]
  const %w : f32[1,1,1,1] = [1]
  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,1,1,1]
  %bn = BatchNormalization(%conv, %gamma, %beta, %mean, %var) : f32[1,1,1,1]
  %y = Add(%bn, %conv) : f32[1,1,1,1]
  output %y
}
)";
  EXPECT_EQ(run("fold-batchnorm", input), input);
}

TEST(FoldBatchnorm, fails_naming_the_constant_without_payload) {
  EXPECT_EQ(run("fold-batchnorm", R"(graph g {
  input %x : f32[1,1,1,1]
  const %beta : f32[1] = [0]
  const %gamma : f32[1] = [1]
  const %mean : f32[1] = [0]
  const %var : f32[1] = [1]
  const %w : f32[1,1,1,1] #00000000000000ff
  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,1,1,1]
  %bn = BatchNormalization(%conv, %gamma, %beta, %mean, %var) : f32[1,1,1,1]
  output %bn
}
)"),
            "error: fold-batchnorm: %bn (BatchNormalization): constant %w has no f32 payload "
            "(elided in text, or integer-only) while the others do");
}

TEST(FoldBatchnorm, folds_every_batchnorm_of_resnet18_structurally) {
  zoo::ZooOptions options;
  options.with_weights = false;
  auto built = zoo::build_model("resnet18", options);
  ASSERT_TRUE(built.ok());
  ir::Graph graph = std::move(built).value();
  const std::int64_t before = ir::parameter_count(graph);
  ASSERT_TRUE(run_passes(graph, "fold-batchnorm").ok());
  ASSERT_TRUE(ir::validate(graph).ok());
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    EXPECT_NE(graph.op(id).kind, ir::OpKind::BatchNormalization);
  }
  // Each of the 20 BNs trades gamma+beta (2C) for a conv bias (C): 4800 channels in total.
  EXPECT_EQ(before - ir::parameter_count(graph), 4800);
}

TEST(Dce, removes_ops_and_constants_that_reach_no_output) {
  EXPECT_EQ(run("dce", R"(graph g {
  input %x : f32[1,1,2,2]
  const %unused : f32[1] = [1]
  %a = Relu(%x) : f32[1,1,2,2]
  %dead = Relu(%x) : f32[1,1,2,2]
  %dead2 = Add(%dead, %a) : f32[1,1,2,2]
  output %a
}
)"),
            R"(graph g {
  input %x : f32[1,1,2,2]
  %a = Relu(%x) : f32[1,1,2,2]
  output %a
}
)");
}

TEST(Cse, merges_duplicates_and_collapses_chains) {
  EXPECT_EQ(run("cse", R"(graph g {
  input %x : f32[1,1,4,4]
  %a = Relu(%x) : f32[1,1,4,4]
  %b = Relu(%x) : f32[1,1,4,4]
  %a2 = Relu(%a) : f32[1,1,4,4]
  %b2 = Relu(%b) : f32[1,1,4,4]
  %c = Add(%a2, %b2) : f32[1,1,4,4]
  %d = MaxPool(%c) {kernel=2x2} : f32[1,1,3,3]
  %e = MaxPool(%c) {kernel=2x2, stride=2x2} : f32[1,1,2,2]
  output %d, %e
}
)"),
            R"(graph g {
  input %x : f32[1,1,4,4]
  %a = Relu(%x) : f32[1,1,4,4]
  %a2 = Relu(%a) : f32[1,1,4,4]
  %c = Add(%a2, %a2) : f32[1,1,4,4]
  %d = MaxPool(%c) {kernel=2x2} : f32[1,1,3,3]
  %e = MaxPool(%c) {kernel=2x2, stride=2x2} : f32[1,1,2,2]
  output %d, %e
}
)");
}

TEST(ConstantFolding, evaluates_chains_of_constant_ops) {
  // relu([1, -2]) = [1, 0]; clip to [0, 0.5] = [0.5, 0]
  EXPECT_EQ(run("constant-folding", R"(graph g {
  input %x : f32[1,2,1,1]
  const %k : f32[1,2,1,1] = [1, -2]
  %r = Relu(%k) : f32[1,2,1,1]
  %s = Clip(%r) {min=0, max=0.5} : f32[1,2,1,1]
  %y = Add(%x, %s) : f32[1,2,1,1]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,2,1,1]
  const %s : f32[1,2,1,1] = [0.5, 0]
  %y = Add(%x, %s) : f32[1,2,1,1]
  output %y
}
)");
}

TEST(ConstantFolding, concat_and_pad_move_values_to_the_right_places) {
  // concat([[1,2]], [[3]]) on axis 1 -> [1,2,3]; pad 1 before, 0 after on axis 1 with 9
  EXPECT_EQ(run("constant-folding", R"(graph g {
  input %x : f32[1,4]
  const %a : f32[1,2] = [1, 2]
  const %b : f32[1,1] = [3]
  %c = Concat(%a, %b) {axis=1} : f32[1,3]
  %p = Pad(%c) {pads=0,1,0,0, value=9} : f32[1,4]
  %y = Add(%x, %p) : f32[1,4]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,4]
  const %p : f32[1,4] = [9, 1, 2, 3]
  %y = Add(%x, %p) : f32[1,4]
  output %y
}
)");
}

TEST(CombineParallelConv, merges_same_geometry_convs_into_conv_plus_split) {
  EXPECT_EQ(run("combine-parallel-conv", R"(graph g {
  input %x : f32[1,2,4,4]
  const %w1 : f32[1,2,1,1] = [1, 2]
  const %w2 : f32[2,2,1,1] = [3, 4, 5, 6]
  const %w3 : f32[1,2,1,1] = [7, 8]
  %a = Conv(%x, %w1) {kernel=1x1} : f32[1,1,4,4]
  %b = Conv(%x, %w2) {kernel=1x1} : f32[1,2,4,4]
  %c = Conv(%x, %w3) {kernel=1x1, stride=2x2} : f32[1,1,2,2]
  %y = Concat(%a, %b) {axis=1} : f32[1,3,4,4]
  output %y, %c
}
)"),
            R"(graph g {
  input %x : f32[1,2,4,4]
  const %a.combined.weight : f32[3,2,1,1] = [1, 2, 3, 4, 5, 6]
  const %w3 : f32[1,2,1,1] = [7, 8]
  %c = Conv(%x, %w3) {kernel=1x1, stride=2x2} : f32[1,1,2,2]
  %a.combined = Conv(%x, %a.combined.weight) {kernel=1x1} : f32[1,3,4,4]
  %a, %b = Split(%a.combined) {axis=1, split=1,2} : f32[1,1,4,4], f32[1,2,4,4] @a.split
  %y = Concat(%a, %b) {axis=1} : f32[1,3,4,4]
  output %y, %c
}
)");
}

TEST(CombineParallelConv, googlenet_inception_1x1_branches_merge) {
  zoo::ZooOptions options;
  options.with_weights = false;
  auto built = zoo::build_model("googlenet", options);
  ASSERT_TRUE(built.ok());
  ir::Graph graph = std::move(built).value();
  const std::int64_t params = ir::parameter_count(graph);
  ASSERT_TRUE(run_passes(graph, "combine-parallel-conv,shape-inference").ok());
  ASSERT_TRUE(ir::validate(graph).ok()) << ir::validate(graph).reason();
  int convs = 0, splits = 0;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    convs += graph.op(id).kind == ir::OpKind::Conv;
    splits += graph.op(id).kind == ir::OpKind::Split;
  }
  // Nine inception blocks each merge three 1x1 convs on the block input into one.
  EXPECT_EQ(convs, 57 - 9 * 2);
  EXPECT_EQ(splits, 9);
  EXPECT_EQ(ir::parameter_count(graph), params);
  EXPECT_EQ(graph.tensor("inception3a").shape, (ir::Shape{1, 256, 28, 28}));
}

// Each branch's pool comes right after the branch (a is made before b, and b's pool before c's
// conv), the Concat right after the last pool, under the name and with the result of before.
TEST(PoolsBeforeConcat, pools_each_branch_right_after_it_and_concatenates_the_pooled) {
  EXPECT_EQ(run("pools-before-concat", R"(graph g {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %b = Clip(%x) {min=0, max=6} : f32[1,2,4,4]
  %c = Relu(%b) : f32[1,2,4,4]
  %cat = Concat(%a, %b, %x) {axis=1} : f32[1,6,4,4]
  %p = MaxPool(%cat) {kernel=2x2, stride=2x2} : f32[1,6,2,2]
  %y = Relu(%p) : f32[1,6,2,2]
  output %y, %c
}
)"),
            R"(graph g {
  input %x : f32[1,2,4,4]
  %p.2 = MaxPool(%x) {kernel=2x2, stride=2x2} : f32[1,2,2,2]
  %a = Relu(%x) : f32[1,2,4,4]
  %p.0 = MaxPool(%a) {kernel=2x2, stride=2x2} : f32[1,2,2,2]
  %b = Clip(%x) {min=0, max=6} : f32[1,2,4,4]
  %p.1 = MaxPool(%b) {kernel=2x2, stride=2x2} : f32[1,2,2,2]
  %p = Concat(%p.0, %p.1, %p.2) {axis=1} : f32[1,6,2,2] @cat
  %c = Relu(%b) : f32[1,2,4,4]
  %y = Relu(%p) : f32[1,6,2,2]
  output %y, %c
}
)");
}

// Left alone: a Concat read by more than the pool, a Concat that is a graph output, an average
// pool (its output has a scale of its own), a Concat along the height.
TEST(PoolsBeforeConcat, leaves_concats_with_other_readers_outputs_averages_and_other_axes) {
  const std::string shared = R"(graph g {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %cat = Concat(%a, %x) {axis=1} : f32[1,4,4,4]
  %p = MaxPool(%cat) {kernel=2x2, stride=2x2} : f32[1,4,2,2]
  %q = Relu(%cat) : f32[1,4,4,4]
  output %p, %q
}
)";
  const std::string output = R"(graph g {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %cat = Concat(%a, %x) {axis=1} : f32[1,4,4,4]
  %p = MaxPool(%cat) {kernel=2x2, stride=2x2} : f32[1,4,2,2]
  output %p, %cat
}
)";
  const std::string average = R"(graph g {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %cat = Concat(%a, %x) {axis=1} : f32[1,4,4,4]
  %p = AveragePool(%cat) {kernel=2x2, stride=2x2} : f32[1,4,2,2]
  output %p
}
)";
  const std::string rows = R"(graph g {
  input %x : f32[1,2,4,4]
  %a = Relu(%x) : f32[1,2,4,4]
  %cat = Concat(%a, %x) {axis=2} : f32[1,2,8,4]
  %p = MaxPool(%cat) {kernel=2x2, stride=2x2} : f32[1,2,4,2]
  output %p
}
)";
  for (const std::string* text : {&shared, &output, &average, &rows}) {
    EXPECT_EQ(run("pools-before-concat", *text), *text);
    EXPECT_FALSE(pools_before_concat_applies(ir::parse_text(*text, "test.tir")));
  }
}

TEST(SplitBatchnorm, becomes_normalise_then_scale) {
  EXPECT_EQ(run("split-batchnorm", R"(graph g {
  input %x : f32[1,2,1,1]
  const %b : f32[2] = [0, 1]
  const %g : f32[2] = [1, 2]
  const %m : f32[2] = [0, 0]
  const %v : f32[2] = [1, 1]
  %bn = BatchNormalization(%x, %g, %b, %m, %v) : f32[1,2,1,1]
  %y = Relu(%bn) : f32[1,2,1,1]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,2,1,1]
  const %b : f32[2] = [0, 1]
  const %bn.unit_weight : f32[2] = [1, 1]
  const %bn.zero_bias : f32[2] = [0, 0]
  const %g : f32[2] = [1, 2]
  const %m : f32[2] = [0, 0]
  const %v : f32[2] = [1, 1]
  %bn = BatchNormalization(%x, %bn.unit_weight, %bn.zero_bias, %m, %v) : f32[1,2,1,1]
  %bn.scale = Scale(%bn, %g, %b) : f32[1,2,1,1]
  %y = Relu(%bn.scale) : f32[1,2,1,1]
  output %y
}
)");
}

TEST(BatchnormToDepthwise, becomes_normalise_then_scale_as_two_depthwise_1x1_convs) {
  // inv_std = 1 / sqrt(var + eps) = [1/sqrt(4), 1/sqrt(1)] = [0.5, 1]
  // BatchNorm layer: w = inv_std = [0.5, 1], b = -mean * inv_std = [-1*0.5, 1*1] = [-0.5, 1]
  // Scale layer:     w = gamma = [4, 1],     b = beta = [0.5, 0]
  // The Scale layer keeps the name %bn and its reader; gamma/beta/mean/var go unused and leave.
  EXPECT_EQ(run("batchnorm-to-depthwise", R"(graph g {
  input %x : f32[1,2,1,1]
  const %bn.b : f32[2] = [0.5, 0]
  const %bn.g : f32[2] = [4, 1]
  const %bn.m : f32[2] = [1, -1]
  const %bn.v : f32[2] = [3, 0]
  %bn = BatchNormalization(%x, %bn.g, %bn.b, %bn.m, %bn.v) {epsilon=1} : f32[1,2,1,1]
  %y = Relu(%bn) : f32[1,2,1,1]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,2,1,1]
  const %bn.norm_bias : f32[2] = [-0.5, 1]
  const %bn.norm_weight : f32[2,1,1,1] = [0.5, 1]
  const %bn.scale_bias : f32[2] = [0.5, 0]
  const %bn.scale_weight : f32[2,1,1,1] = [4, 1]
  %bn.norm = Conv(%x, %bn.norm_weight, %bn.norm_bias) {kernel=1x1, group=2} : f32[1,2,1,1]
  %bn = Conv(%bn.norm, %bn.scale_weight, %bn.scale_bias) {kernel=1x1, group=2} : f32[1,2,1,1]
  %y = Relu(%bn) : f32[1,2,1,1]
  output %y
}
)");
}

TEST(BatchnormToDepthwise, a_batchnorm_that_is_a_graph_output_keeps_its_name) {
  // eps = 0: inv_std = 1 / sqrt(0.25) = 2, b = -mean * 2 = -3
  EXPECT_EQ(run("batchnorm-to-depthwise", R"(graph g {
  input %x : f32[1,1,2,2]
  const %w : f32[1,1,1,1] = [1]
  const %beta : f32[1] = [-1]
  const %gamma : f32[1] = [2]
  const %mean : f32[1] = [1.5]
  const %var : f32[1] = [0.25]
  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,1,2,2]
  %bn = BatchNormalization(%conv, %gamma, %beta, %mean, %var) {epsilon=0} : f32[1,1,2,2]
  output %bn
}
)"),
            R"(graph g {
  input %x : f32[1,1,2,2]
  const %bn.norm_bias : f32[1] = [-3]
  const %bn.norm_weight : f32[1,1,1,1] = [2]
  const %bn.scale_bias : f32[1] = [-1]
  const %bn.scale_weight : f32[1,1,1,1] = [2]
  const %w : f32[1,1,1,1] = [1]
  %conv = Conv(%x, %w) {kernel=1x1} : f32[1,1,2,2]
  %bn.norm = Conv(%conv, %bn.norm_weight, %bn.norm_bias) {kernel=1x1} : f32[1,1,2,2]
  %bn = Conv(%bn.norm, %bn.scale_weight, %bn.scale_bias) {kernel=1x1} : f32[1,1,2,2]
  output %bn
}
)");
}

TEST(BatchnormToDepthwise, fails_naming_the_op_for_a_non_nchw_input) {
  EXPECT_EQ(run("batchnorm-to-depthwise", R"(graph g {
  input %x : f32[1,2]
  const %b : f32[2] = [0, 0]
  const %g : f32[2] = [1, 1]
  const %m : f32[2] = [0, 0]
  const %v : f32[2] = [1, 1]
  %bn = BatchNormalization(%x, %g, %b, %m, %v) : f32[1,2]
  output %bn
}
)"),
            "error: batchnorm-to-depthwise: %bn (BatchNormalization): input %x has rank 2; a "
            "depthwise Conv needs an NCHW tensor");
}

TEST(BatchnormToDepthwise, fails_naming_the_constant_without_payload) {
  EXPECT_EQ(run("batchnorm-to-depthwise", R"(graph g {
  input %x : f32[1,1,1,1]
  const %b : f32[1] = [0]
  const %g : f32[1] = [1]
  const %m : f32[1] #00000000000000ff
  const %v : f32[1] = [1]
  %bn = BatchNormalization(%x, %g, %b, %m, %v) : f32[1,1,1,1]
  output %bn
}
)"),
            "error: batchnorm-to-depthwise: %bn (BatchNormalization): constant %m has no f32 "
            "payload (elided in text, or integer-only) while the others do");
}

TEST(BatchnormToDepthwise, unfolds_every_batchnorm_of_resnet18_into_two_depthwise_convs) {
  zoo::ZooOptions options;
  options.with_weights = false;
  auto built = zoo::build_model("resnet18", options);
  ASSERT_TRUE(built.ok());
  ir::Graph graph = std::move(built).value();
  const std::int64_t params = ir::parameter_count(graph);
  ASSERT_TRUE(run_passes(graph, "batchnorm-to-depthwise").ok());
  ASSERT_TRUE(ir::validate(graph).ok());
  int dense = 0, depthwise = 0;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    const ir::Op& op = graph.op(id);
    EXPECT_NE(op.kind, ir::OpKind::BatchNormalization) << op.name;
    if (op.kind != ir::OpKind::Conv) continue;
    (op.get_int("group") > 1 ? depthwise : dense) += 1;
  }
  // 20 convs, 20 BNs, each BN two depthwise layers. parameter_count leaves out BN statistics
  // (mean, var), which become the BatchNorm layers' weight and bias: +2C per BN, 4800 channels.
  EXPECT_EQ(dense, 20);
  EXPECT_EQ(depthwise, 40);
  EXPECT_EQ(ir::parameter_count(graph) - params, 2 * 4800);
}

TEST(GraphForPolicy, layerwise_unfolds_and_every_other_policy_folds_as_the_scheduler_forms_say) {
  zoo::ZooOptions options;
  options.with_weights = false;
  auto built = zoo::build_model("resnet18", options);
  ASSERT_TRUE(built.ok());
  ASSERT_FALSE(sched::policies().empty());
  for (const sched::Policy& policy : sched::policies()) {
    const bool caffe = policy.form == sched::NetForm::Caffe;
    EXPECT_EQ(batchnorm_lowering_for_policy(policy.name),
              caffe ? BatchNormLowering::Depthwise : BatchNormLowering::Folded)
        << policy.name;
    EXPECT_EQ(pools_before_concat_for_policy(policy.name),
              policy.form == sched::NetForm::FoldedPoolsBeforeConcat)
        << policy.name;
    auto graph = graph_for_policy(built.value(), policy.name);
    ASSERT_TRUE(graph.ok()) << graph.reason();
    int convs = 0;
    for (ir::OpId id = 0; id < graph.value().num_ops(); ++id) {
      EXPECT_NE(graph.value().op(id).kind, ir::OpKind::BatchNormalization) << policy.name;
      convs += graph.value().op(id).kind == ir::OpKind::Conv;
    }
    EXPECT_EQ(convs, caffe ? 60 : 20) << policy.name;
  }
}

TEST(GraphForPolicy, a_failing_lowering_names_the_pass_and_the_op) {
  ir::Graph graph = ir::parse_text(R"(graph g {
  input %x : f32[1,1,1,1]
  const %b : f32[1] = [0]
  const %g : f32[1] = [1]
  const %m : f32[1] #00000000000000ff
  const %v : f32[1] = [1]
  %bn = BatchNormalization(%x, %g, %b, %m, %v) : f32[1,1,1,1]
  output %bn
}
)",
                                   "test.tir");
  auto lowered = graph_for_policy(graph, "layerwise");
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.reason(),
            "batchnorm-to-depthwise: %bn (BatchNormalization): constant %m has no f32 payload "
            "(elided in text, or integer-only) while the others do");
}

TEST(ShapeInferencePass, fills_unknown_shapes_and_names_the_failing_op) {
  EXPECT_EQ(run("shape-inference", R"(graph g {
  input %x : f32[1,3,8,8]
  %p = MaxPool(%x) {kernel=2x2, stride=2x2} : f32[?]
  %f = Flatten(%p) : f32[?]
  output %f
}
)"),
            R"(graph g {
  input %x : f32[1,3,8,8]
  %p = MaxPool(%x) {kernel=2x2, stride=2x2} : f32[1,3,4,4]
  %f = Flatten(%p) : f32[1,48]
  output %f
}
)");
  EXPECT_EQ(run("shape-inference", R"(graph g {
  input %x : f32[1,3,8,8]
  input %z : f32[1,3,4,4]
  %y = Concat(%x, %z) {axis=1} : f32[?]
  output %y
}
)"),
            "error: shape-inference: %y (Concat): input %z [1,3,4,4] does not match %x [1,3,8,8] "
            "off axis 1");
}

TEST(Pipeline, unknown_pass_is_reported_with_a_suggestion) {
  auto pipeline = parse_pipeline("cse,fold-batchnrm");
  ASSERT_FALSE(pipeline.ok());
  EXPECT_EQ(pipeline.reason(), "unknown pass 'fold-batchnrm'; did you mean 'fold-batchnorm'?");
  auto ok = parse_pipeline("fold-batchnorm,dce");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().size(), 2u);
}

// The scheduler pools before Concats on its own copy of a graph that still has them (what
// `tessel compile` and `tessel schedule` give it); a caller that rewrote the graph first (the
// pipelines, after quantizing) gets the same schedule of GoogLeNet. It changed from the folded
// one: maxpool3 and maxpool4 became per-branch pools.
TEST(PoolsBeforeConcat, the_scheduler_rewrites_as_the_pass_does) {
  // Two optimal GoogLeNet schedules: ~26 CPU-s under ASan, whose leg the scheduler's own tests
  // cover; the default preset runs it.
  if (testing::kSanitized) GTEST_SKIP() << "a full-size schedule; the default preset runs it";
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  zoo::ZooOptions shapes_only;
  shapes_only.with_weights = false;
  auto folded = graph_for_policy(zoo::build_model("googlenet", shapes_only).value(), "optimal");
  ASSERT_TRUE(folded.ok()) << folded.reason();
  ir::Graph rewritten = folded.value();
  ASSERT_TRUE(run_passes(rewritten, "pools-before-concat").ok());
  auto a = sched::schedule_graph(folded.value(), config, "optimal", sched::Objective::Bytes);
  auto b = sched::schedule_graph(rewritten, config, "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(a.ok()) << a.reason();
  ASSERT_TRUE(b.ok()) << b.reason();
  a.value().schedule.search_seconds = b.value().schedule.search_seconds = 0;
  EXPECT_EQ(sched::to_json(a.value().schedule, a.value().net).dump(),
            sched::to_json(b.value().schedule, b.value().net).dump());
  int parts = 0;
  for (const sched::Op& op : a.value().net.ops) parts += op.name.rfind("maxpool4.", 0) == 0;
  EXPECT_EQ(parts, 4);
}

}  // namespace
}  // namespace tessel::passes

namespace tessel::passes {
namespace {

// graph_for_policy(Graph&&) lowers the graph it is given; fold-batchnorm then moves the payload
// of weights only the folded Conv reads. The result must equal the copying overload's, and a
// weight two Convs share must keep its payload (it is copied, not moved).
TEST(GraphForPolicy, lowering_in_place_equals_lowering_a_copy) {
  const ir::Graph shared = ir::parse_text(R"(graph g {
  input %x : f32[1,1,2,2]
  const %w : f32[1,1,1,1] = [2]
  const %g : f32[1] = [3]
  const %b : f32[1] = [1]
  const %m : f32[1] = [0.5]
  const %v : f32[1] = [4]
  %c1 = Conv(%x, %w) {kernel=1x1} : f32[1,1,2,2]
  %n1 = BatchNormalization(%c1, %g, %b, %m, %v) : f32[1,1,2,2]
  %c2 = Conv(%x, %w) {kernel=1x1} : f32[1,1,2,2]
  %n2 = BatchNormalization(%c2, %g, %b, %m, %v) : f32[1,1,2,2]
  %y = Add(%n1, %n2) : f32[1,1,2,2]
  output %y
}
)",
                                          "shared.tir");
  auto resnet = zoo::build_model("tiny_residual");
  ASSERT_TRUE(resnet.ok());
  for (const ir::Graph* graph : {&shared, static_cast<const ir::Graph*>(&resnet.value())})
    for (const char* policy : {"optimal", "layerwise"}) {
      auto copied = graph_for_policy(*graph, policy);
      auto moved = graph_for_policy(ir::Graph(*graph), policy);
      ASSERT_TRUE(copied.ok()) << copied.reason();
      ASSERT_TRUE(moved.ok()) << moved.reason();
      EXPECT_TRUE(copied.value() == moved.value()) << graph->name() << ' ' << policy;
    }
  // Both folds of the shared weight: 2 * 3 / sqrt(4 + 1e-5).
  auto folded = graph_for_policy(ir::Graph(shared), "optimal");
  ASSERT_TRUE(folded.ok()) << folded.reason();
  int folded_weights = 0;
  for (const auto& [name, tensor] : folded.value().tensors())
    if (name.find("weight_folded") != std::string::npos) {
      ++folded_weights;
      ASSERT_EQ(tensor.f32_values.size(), 1u) << name;
      EXPECT_FLOAT_EQ(tensor.f32_values[0], static_cast<float>(2 * 3 / std::sqrt(4 + 1e-5)));
    }
  EXPECT_EQ(folded_weights, 2);
}

// `tessel compile` with two threads schedules a zoo model built without weights while the
// weights are drawn: the scheduler must read shapes only, so both give the same schedule.
TEST(GraphForPolicy, the_schedule_of_a_model_without_weights_equals_the_one_with) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  zoo::ZooOptions shapes_only;
  shapes_only.with_weights = false;
  for (const char* model : {"resnet18", "tiny_inception"})
    for (const char* policy : {"optimal", "layerwise"}) {
      auto with = graph_for_policy(zoo::build_model(model).value(), policy);
      auto without = graph_for_policy(zoo::build_model(model, shapes_only).value(), policy);
      ASSERT_TRUE(with.ok() && without.ok());
      auto a = sched::schedule_graph(with.value(), config, policy, sched::Objective::Bytes);
      auto b = sched::schedule_graph(without.value(), config, policy, sched::Objective::Bytes);
      ASSERT_TRUE(a.ok()) << a.reason();
      ASSERT_TRUE(b.ok()) << b.reason();
      a.value().schedule.search_seconds = b.value().schedule.search_seconds = 0;
      EXPECT_EQ(sched::to_json(a.value().schedule, a.value().net).dump(),
                sched::to_json(b.value().schedule, b.value().net).dump())
          << model << ' ' << policy;
    }
}

}  // namespace
}  // namespace tessel::passes
