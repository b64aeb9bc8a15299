// Concat end to end: a lone Concat is a DRAM view (its producers store into its channel slices,
// its readers load through the view), a Concat fused into a group is an on-chip copy; every
// policy on hand-built nets is bit exact and moves exactly the scheduler's bytes.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "codegen/codegen.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/driver.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen::concat_test {
namespace {

using test::config_path;
using test::expect_end_to_end;

zoo::ConvSpec relu_conv(std::int64_t out_channels, std::int64_t kernel) {
  return zoo::conv_spec(out_channels, kernel, 1, kernel / 2);
}

/// Two concats, one inside the other, with odd channel counts (5 + 3, then + 8): a slice of a
/// slice lands at channel offset 0 + 5 of a 16-channel region, 8-bit runs of 5 and 3 bytes.
ir::Graph nested_concat() {
  zoo::NetBuilder net("nested_concat", {});
  const std::string x = net.input("input", 8, 8, 8);
  const std::string a = net.relu(net.conv(x, "a.conv", relu_conv(5, 1)), "a.relu");
  const std::string b = net.relu(net.conv(x, "b.conv", relu_conv(3, 3)), "b.relu");
  const std::string inner = net.concat({a, b}, "inner");
  const std::string p = net.max_pool(x, "c.pool", 3, 1, 1);
  const std::string c = net.relu(net.conv(p, "c.conv", relu_conv(8, 1)), "c.relu");
  const std::string outer = net.concat({inner, c}, "outer");
  return net.finish({net.relu(net.conv(outer, "head.conv", relu_conv(8, 3)), "head.relu")});
}

/// A concat input read by another op too (`a` feeds the concat and `e`), and the concat output
/// read by a conv whose result meets `e` in a residual add.
ir::Graph shared_concat_input() {
  zoo::NetBuilder net("shared_concat_input", {});
  const std::string x = net.input("input", 8, 8, 8);
  const std::string a = net.relu(net.conv(x, "a.conv", relu_conv(8, 1)), "a.relu");
  const std::string b = net.relu(net.conv(x, "b.conv", relu_conv(8, 3)), "b.relu");
  const std::string cat = net.concat({a, b}, "cat");
  const std::string d = net.relu(net.conv(cat, "d.conv", relu_conv(8, 3)), "d.relu");
  const std::string e = net.relu(net.conv(a, "e.conv", relu_conv(8, 1)), "e.relu");
  return net.finish({net.relu(net.add(d, e, "add"), "out")});
}

struct Case {
  std::string net, config, policy;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.net << " on " << c.config << ", " << c.policy;
}

ir::Graph build(const std::string& name) {
  if (name == "nested_concat") return nested_concat();
  if (name == "shared_concat_input") return shared_concat_input();
  return zoo::build_model(name).value();
}

class ConcatNets : public ::testing::TestWithParam<Case> {};

TEST_P(ConcatNets, concat_views_and_copies_are_bit_exact_and_move_the_predicted_bytes) {
  const Case& c = GetParam();
  expect_end_to_end(build(c.net), c.config, c.policy);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* net : {"tiny_inception", "nested_concat", "shared_concat_input"})
    for (const char* config : {"vta-pynq", "edge-small", "npc19-deepfusion"})
      for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"})
        out.push_back({net, config, policy});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Nets, ConcatNets, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.net + "_" + param_info.param.config +
                                              "_" + param_info.param.policy;
                           for (char& ch : name)
                             if (ch == '-' || ch == '+') ch = '_';
                           return name;
                         });

// The scheduler predicts no bytes for a lone (aliased) Concat: its inputs must be stored into
// its slices. Where that cannot be (a network input, a tensor in two slices) the scheduler does
// not alias it (docs/scheduler.md "Byte accounting"): the Concat runs as an on-chip copy.
Result<CompiledProgram> compile_net(const ir::Graph& model, const std::string& policy) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  auto prepared = cpu::prepare_graph(model);
  if (!prepared.ok()) return prepared.failure();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto quantized = cpu::quantize_model(prepared.value(), qconfig,
                                       cpu::synthetic_samples(prepared.value(), qconfig));
  if (!quantized.ok()) return quantized.failure();
  auto scheduled = sched::schedule_graph(prepared.value(), config, policy, sched::Objective::Bytes);
  if (!scheduled.ok()) return scheduled.failure();
  const auto& shape = quantized.value().graph.tensor("input.q").shape;
  std::vector<std::int32_t> zeros(static_cast<size_t>(shape[1] * shape[2] * shape[3]), 0);
  return compile(quantized.value().graph, scheduled.value(), config, {{"input.q", zeros}});
}

TEST(ConcatLimits, a_concat_of_a_network_input_is_no_view_and_compiles) {
  zoo::NetBuilder net("input_concat", {});
  const std::string x = net.input("input", 8, 4, 4);
  const std::string a = net.relu(net.conv(x, "a.conv", relu_conv(8, 1)), "a.relu");
  const ir::Graph graph = net.finish({net.concat({x, a}, "cat")});
  // Until the bytes bound found it (issue 39), opfusion aliased the Concat, predicted no bytes
  // for the input's slice, and codegen refused the schedule.
  auto compiled = compile_net(graph, "opfusion");
  EXPECT_TRUE(compiled.ok()) << compiled.reason();
  EXPECT_TRUE(compile_net(graph, "layerwise").ok());
}

TEST(ConcatLimits, a_tensor_twice_in_one_concat_is_no_view_and_compiles) {
  zoo::NetBuilder net("twice_concat", {});
  const std::string x = net.input("input", 8, 4, 4);
  const std::string a = net.relu(net.conv(x, "a.conv", relu_conv(8, 1)), "a.relu");
  const ir::Graph graph = net.finish({net.concat({a, a}, "cat")});
  auto compiled = compile_net(graph, "opfusion");
  EXPECT_TRUE(compiled.ok()) << compiled.reason();
}

}  // namespace
}  // namespace tessel::codegen::concat_test
