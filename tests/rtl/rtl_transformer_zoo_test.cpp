// Issue 36 item 4 (label zoo, minutes): one BERT-base layer at sequence 128 (`bert_base`,
// layers 1) compiled by the pipeline (optimal and layerwise) for edge-small with the transformer
// units (tests/rtl/edge-small-tfm.yaml: the shipped edge-small declares none of them, docs/fpga.md
// says why) runs on the Verilator model exactly as on the simulator: every group's cycles, every
// instruction's dispatch, start and finish, DRAM bytes and counters, the final DRAM image; the
// simulator's outputs equal the golden executor's. The RTL model of that config is built only
// when TESSEL_RTL_CONFIGS names it (hw/harness/README.md); without it the case is skipped after
// the pipeline's own bit-exact run.
#include <gtest/gtest.h>

#include <string>

#include "compiler/zoo/zoo.hpp"
#include "tests/rtl/compiled_on_rtl.hpp"

namespace tessel::hw {
namespace {

class RtlTransformerZoo : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlTransformerZoo, one_bert_layer_on_edge_small_with_the_units_equals_the_simulator) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/tests/rtl/edge-small-tfm.yaml");
  zoo::ZooOptions options;
  options.layers = 1;
  options.sequence = 128;
  auto graph = zoo::build_model("bert_base", options);
  ASSERT_TRUE(graph.ok()) << graph.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  const std::string policy = GetParam();
  auto model = pipeline::prepare_model_for_policy(graph.value(), qconfig, 0, policy);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, policy);
  ASSERT_TRUE(r.ok()) << r.reason();
  ASSERT_TRUE(r.value().bit_exact.has_value() && *r.value().bit_exact) << r.value().mismatch;
  std::printf("bert_base (1 layer, seq 128) on edge-small-tfm, %s: simulated %llu cycles\n",
              policy.c_str(), static_cast<unsigned long long>(r.value().report.cycles));
  if (!rtl_model_built_for(config))
    GTEST_SKIP() << "no RTL model built for edge-small-tfm (add it to TESSEL_RTL_CONFIGS)";
  expect_rtl_equals_simulator(r.value(), config, "bert_base layer on edge-small-tfm, " + policy);
}

// optimal: 10 groups; layerwise: one group per op (every group boundary of the layer).
INSTANTIATE_TEST_SUITE_P(Bert, RtlTransformerZoo, ::testing::Values("optimal", "layerwise"),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace tessel::hw
