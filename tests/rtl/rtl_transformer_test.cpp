// A transformer block on the RTL (issue 34 item 3, issue 36 item 4): the zoo's tiny_attention
// (one post-norm encoder layer: S 16, d 32, 2 heads, GELU MLP 64), compiled by the pipeline
// under every policy for micro (tests/isa/programs/micro.yaml: the smallest config with the
// matrix unit's activation operands, the lookup table and the row normaliser), runs on the
// Verilator model exactly as on the simulator: every group's cycles, every instruction's
// dispatch, start and finish, DRAM bytes and counters, and the final DRAM image; the simulator's
// outputs equal the golden executor's (the pipeline's bit-exact check), so the RTL's do too.
// Also on tests/rtl/micro-tree.yaml (the adder-tree MAC array) when its model is built.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "compiler/zoo/zoo.hpp"
#include "tests/rtl/compiled_on_rtl.hpp"

namespace tessel::hw {
namespace {

const char* const kPolicies[] = {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"};

/// tiny_attention compiled for `config_file` (relative to the source root) under every policy,
/// each program run on both and compared (expect_rtl_equals_simulator).
void expect_tiny_attention_equal_on(const std::string& config_file, const std::string& name) {
  const HwConfig config = load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/" + config_file);
  if (!rtl_model_built_for(config)) GTEST_SKIP() << "no RTL model built for " << name;
  auto graph = zoo::build_model("tiny_attention");
  ASSERT_TRUE(graph.ok()) << graph.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  for (const char* policy : kPolicies) {
    SCOPED_TRACE(policy);
    auto model = pipeline::prepare_model_for_policy(graph.value(), qconfig, 0, policy);
    ASSERT_TRUE(model.ok()) << model.reason();
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    // The block runs on the accelerator whole: both matmuls (Q K^T read transposed, scores x
    // V row-major), the softmax, both LayerNorms and the table lookups (the 1/sqrt(d) scale,
    // GELU) are instructions of the program, none a host op.
    std::map<std::string, int> count;
    int transposed = 0;
    for (const auto& instruction : r.value().compiled.program.instructions) {
      ++count[std::string(isa::mnemonic(instruction))];
      if (const auto* m = std::get_if<isa::Matmul>(&instruction)) transposed += m->transpose_b;
    }
    EXPECT_TRUE(r.value().compiled.host.ops.empty());
    // Per row block of the group holding the scores: one Q K^T per head (2), and scores x V.
    int64_t blocks = 0;
    for (const sched::GroupSchedule& g : r.value().scheduled.schedule.groups)
      for (int op : g.ops)
        if (r.value().scheduled.net.op(op).name == "layers.0.self_attn.scores")
          blocks = g.row_tiles;
    EXPECT_GE(blocks, 1);
    EXPECT_EQ(transposed, 2 * blocks);
    EXPECT_EQ(count["matmul"], 4 * blocks);
    EXPECT_EQ(count["norm"], 2);
    EXPECT_GE(count["softmax"], 1);
    EXPECT_GE(count["lut"], 2);
    expect_rtl_equals_simulator(r.value(), config, "tiny_attention on " + name + ", " + policy);
  }
}

// micro's MAC array is systolic (F + D = 8 >= R + C/2 + 1 = 7).
TEST(RtlTransformer, tiny_attention_on_micro_equals_the_simulator_under_every_policy) {
  expect_tiny_attention_equal_on("tests/isa/programs/micro.yaml", "micro");
}

// micro-tree (fill 2, drain 2) builds it as an adder tree per column: matmul's other form. Its
// RTL model is built only when TESSEL_RTL_CONFIGS names it; skipped otherwise.
TEST(RtlTransformer, tiny_attention_on_the_adder_tree_array_equals_the_simulator) {
  expect_tiny_attention_equal_on("tests/rtl/micro-tree.yaml", "micro-tree");
}

// The zoo's language models from token ids (tiny_lm's prefill and tiny_lm_decode's step: the
// Embedding's gathers, the position rows, the GPT-2 block, ln_f and the LM head by the token
// table) under every policy on micro: the RTL equals the simulator, and the program gathers one
// table row a token.
TEST(RtlTransformer, the_tiny_language_models_on_micro_equal_the_simulator) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml");
  if (!rtl_model_built_for(config)) GTEST_SKIP() << "no RTL model built for micro";
  for (const char* name : {"tiny_lm", "tiny_lm_decode"}) {
    auto graph = zoo::build_model(name);
    ASSERT_TRUE(graph.ok()) << graph.reason();
    quant::QuantConfig qconfig;
    qconfig.bits = config.matrix.input_bits;
    for (const char* policy : kPolicies) {
      SCOPED_TRACE(std::string(name) + ", " + policy);
      auto model = pipeline::prepare_model_for_policy(graph.value(), qconfig, 0, policy);
      ASSERT_TRUE(model.ok()) << model.reason();
      auto r = pipeline::run_policy(model.value(), config, policy);
      ASSERT_TRUE(r.ok()) << r.reason();
      std::int64_t gathered = 0;
      for (const auto& instruction : r.value().compiled.program.instructions)
        if (const auto* g = std::get_if<isa::Gather>(&instruction)) gathered += g->y_size;
      EXPECT_EQ(gathered, std::string(name) == "tiny_lm" ? 16 : 1);
      expect_rtl_equals_simulator(r.value(), config, std::string(name) + " on micro, " + policy);
    }
  }
}

}  // namespace
}  // namespace tessel::hw
