// End to end: zoo net -> quantize -> schedule -> codegen -> SystemC simulator, checked bit for
// bit against the golden integer executor and byte for byte against the scheduler's traffic.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "compiler/zoo/zoo.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

struct Case {
  std::string model;
  std::string config;
  std::string policy;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " on " << c.config << ", " << c.policy;
}

class EndToEnd : public ::testing::TestWithParam<Case> {};

TEST_P(EndToEnd, simulator_output_is_bit_exact_and_bytes_match_the_schedule) {
  const Case& c = GetParam();
  auto built = zoo::build_model(c.model);
  ASSERT_TRUE(built.ok()) << built.reason();
  expect_end_to_end(built.value(), c.config, c.policy);
}

// Every policy on every pair of tiny net and shipped config that codegen supports today
// (docs/codegen.md lists what is missing for the others).
std::vector<Case> supported_cases() {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"tiny_conv", "vta-pynq"},         {"tiny_conv", "edge-small"},
      {"tiny_conv", "npc19-deepfusion"}, {"tiny_residual", "vta-pynq"},
      {"tiny_residual", "edge-small"},   {"tiny_depthwise", "vta-pynq"},
      {"tiny_depthwise", "edge-small"},  {"tiny_depthwise", "npc19-deepfusion"},
      {"tiny_conv", "cloud-large"},      {"tiny_residual", "cloud-large"},
      {"tiny_stem", "npc19-deepfusion"}, {"tiny_stem", "vta-pynq"},
      {"tiny_stem", "edge-small"},       {"tiny_stem", "cloud-large"}};
  std::vector<Case> cases;
  for (const auto& [model, config] : pairs)
    for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"})
      cases.push_back({model, config, policy});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(TinyNets, EndToEnd, ::testing::ValuesIn(supported_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.model + "_" +
                                              param_info.param.config + "_" +
                                              param_info.param.policy;
                           for (char& ch : name)
                             if (ch == '-' || ch == '+') ch = '_';
                           return name;
                         });

// What codegen cannot lower yet fails with a message naming the group and the op.
Result<CompiledProgram> compile_case(const Case& c, const HwConfig& config) {
  auto prepared = cpu::prepare_graph(zoo::build_model(c.model).value());
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto quantized = cpu::quantize_model(prepared.value(), qconfig,
                                       cpu::synthetic_samples(prepared.value(), qconfig));
  if (!quantized.ok()) return quantized.failure();
  auto scheduled =
      sched::schedule_graph(prepared.value(), config, c.policy, sched::Objective::Bytes);
  if (!scheduled.ok()) return scheduled.failure();
  const auto& shape = quantized.value().graph.tensor("input.q").shape;
  std::vector<std::int32_t> zeros(static_cast<size_t>(shape[1] * shape[2] * shape[3]), 0);
  return compile(quantized.value().graph, scheduled.value(), config, {{"input.q", zeros}});
}

Result<CompiledProgram> compile_case(const Case& c) {
  return compile_case(c, load_hw_config(config_path(c.config)));
}

TEST(HostOps, the_softmax_is_a_host_group_under_every_policy) {
  // The scheduler keeps a Softmax alone in its group (check_group), so the fusing policies,
  // which used to grow fc2's group over it (refused here), compile tiny_mlp with a host part.
  for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
    auto compiled = compile_case({"tiny_mlp", "vta-pynq", policy});
    EXPECT_TRUE(compiled.ok()) << policy << ": " << compiled.reason();
  }
}

TEST(CodegenLimits, weight_rows_beyond_the_dma_padding_are_reported) {
  // The load's pad_right field (8 bits, isa/isa_table.yaml) pads 125 zero weight rows of a
  // 3-channel conv on cloud-large's 128-row array (TinyNets above), not 509 on a 512-row one.
  HwConfig config = load_hw_config(config_path("cloud-large"));
  config.matrix.rows = 512;
  auto compiled = compile_case({"tiny_conv", "cloud-large", "layerwise"}, config);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.reason(),
            "group 0: conv 'conv': 509 zero weight rows to pad in one block (the DMA pads at "
            "most 255)");
}

TEST(CodegenHardwareView, a_schedule_compiles_for_the_hardware_it_was_made_for_only) {
  // The schedule carries its hardware view (ScheduledNet::machine, issue 35); code generation
  // lowers against it and refuses another config, or a schedule without one.
  ir::Graph prepared, graph;
  ASSERT_NO_FATAL_FAILURE(
      test::prepare_and_quantize(zoo::build_model("tiny_conv").value(), 8, prepared, graph));
  const HwConfig edge = load_hw_config(config_path("edge-small"));
  const HwConfig vta = load_hw_config(config_path("vta-pynq"));
  auto scheduled = sched::schedule_graph(prepared, edge, "layerwise", sched::Objective::Bytes);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();
  EXPECT_EQ(scheduled.value().machine.name, "edge-small");
  EXPECT_EQ(scheduled.value().machine.matrix_rows, 8);
  const auto& shape = graph.tensor("input.q").shape;
  const std::vector<std::int32_t> zeros(static_cast<size_t>(shape[1] * shape[2] * shape[3]), 0);
  EXPECT_TRUE(compile(graph, scheduled.value(), edge, {{"input.q", zeros}}).ok());
  auto other = compile(graph, scheduled.value(), vta, {{"input.q", zeros}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.reason(),
            "the schedule was made for hardware 'edge-small' (8x8, 8-bit), not config 'vta-pynq' "
            "(16x16, 8-bit)");
  HwConfig smaller = edge;  // the same name and matrix, a smaller scratchpad
  smaller.scratchpads[0].size_bytes = 64 * 1024;
  auto resized = compile(graph, scheduled.value(), smaller, {{"input.q", zeros}});
  ASSERT_FALSE(resized.ok());
  EXPECT_EQ(resized.reason(),
            "the schedule was made for other scratchpads than config 'edge-small' has (its "
            "scratchpad 'unified': 65536 bytes)");
  sched::ScheduledNet bare = scheduled.value();
  bare.machine = sched::Machine{};
  auto none = compile(graph, bare, edge, {{"input.q", zeros}});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.reason(),
            "the schedule carries no hardware view (sched::ScheduledNet::machine, which "
            "schedule_graph sets)");
}

}  // namespace
}  // namespace tessel::codegen
