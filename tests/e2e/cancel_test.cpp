// support/cancel.hpp: under a requested CancelToken each polled stage (calibration, the
// executor, the passes, the quantized graph's realization, the scheduler, codegen, the
// simulator) returns cancelled() and changes nothing; outside the scope the same calls succeed;
// a token requested from another thread stops a run between its steps. (The Python module's Ctrl-C:
// tests/python/test_interrupt.py.)
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "codegen/codegen.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/driver.hpp"
#include "support/cancel.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e {
namespace {

namespace fs = std::filesystem;

TEST(Cancel, a_requested_token_stops_every_polled_stage_and_changes_nothing) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  const ir::Graph graph = zoo::build_model("tiny_residual").value();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(graph, qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  const pipeline::PreparedModel& m = model.value();
  auto compiled = pipeline::compile_policy(m, config, "optimal");
  ASSERT_TRUE(compiled.ok()) << compiled.reason();
  pipeline::PolicyResult& r = compiled.value();
  ASSERT_TRUE(pipeline::simulate_policy(m, config, r).ok());
  const std::uint64_t cycles = r.report.cycles;
  ASSERT_GT(cycles, 0U);

  const fs::path trace = fs::path(::testing::TempDir()) / "tessel_cancel_trace.json";
  fs::remove(trace);
  pipeline::RunOptions traced;
  traced.trace_path = trace.string();
  std::map<std::string, cpu::TensorData> inputs;
  for (const ir::OpId id : m.prepared.inputs()) {
    const std::string& name = m.prepared.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(m.prepared.tensor(name).shape, 0));
  }

  CancelToken token;
  token.request();
  {
    const CancelScope scope(token);
    auto prepared = pipeline::prepare_model(graph, qconfig);
    ASSERT_FALSE(prepared.ok());
    EXPECT_EQ(prepared.reason(), "cancelled");
    cpu::Executor executor(m.prepared);
    auto outputs = executor.run(inputs);
    ASSERT_FALSE(outputs.ok());
    EXPECT_EQ(outputs.reason(), "cancelled");
    for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"}) {
      SCOPED_TRACE(policy);
      auto scheduled = sched::schedule_graph(m.prepared, config, policy, sched::Objective::Latency);
      ASSERT_FALSE(scheduled.ok());
      EXPECT_EQ(scheduled.reason(), "cancelled");
    }
    auto again = pipeline::compile_policy(m, config, "optimal");
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.reason(), "optimal: cancelled");
    const Status simulated = pipeline::simulate_policy(m, config, r, traced);
    ASSERT_FALSE(simulated.ok());
    EXPECT_EQ(simulated.reason(), "optimal: simulator: cancelled");
    EXPECT_FALSE(fs::exists(trace)) << "a cancelled simulation leaves no partial trace";
    EXPECT_EQ(r.report.cycles, cycles) << "the cancelled simulation changed the result";
  }
  // Outside the scope the token no longer applies: the same calls run to the end.
  EXPECT_FALSE(cancel_requested());
  ASSERT_TRUE(pipeline::simulate_policy(m, config, r, traced).ok());
  EXPECT_EQ(r.report.cycles, cycles);
  EXPECT_TRUE(fs::exists(trace));
  fs::remove(trace);
  CancelToken idle;
  const CancelScope scope(idle);
  auto scheduled = sched::schedule_graph(m.prepared, config, "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();
  EXPECT_EQ(scheduled.value().schedule.cycles, r.scheduled.schedule.cycles);
}

TEST(Cancel, the_steps_inside_quantize_and_compile_are_polled_too) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  const ir::Graph graph = zoo::build_model("tiny_residual").value();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(graph, qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  const pipeline::PreparedModel& m = model.value();
  auto quantized =
      cpu::quantize_model(m.prepared, qconfig, cpu::synthetic_samples(m.prepared, qconfig));
  ASSERT_TRUE(quantized.ok()) << quantized.reason();
  auto scheduled = sched::schedule_graph(m.prepared, config, "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();

  CancelToken token;
  token.request();
  const CancelScope scope(token);
  ir::Graph passed = graph;
  const Status passes = passes::run_passes(passed, "fold-batchnorm");
  ASSERT_FALSE(passes.ok());
  EXPECT_EQ(passes.reason(), "cancelled");
  auto realized = quant::realize(m.prepared, quantized.value().plan, quantized.value().thresholds);
  ASSERT_FALSE(realized.ok());
  EXPECT_EQ(realized.reason(), "quantizing 'tiny_residual': cancelled");
  auto compiled = codegen::compile(m.quantized, scheduled.value(), config, m.input_values);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.reason(), "cancelled");
}

TEST(Cancel, a_token_requested_from_another_thread_stops_the_executor_at_its_next_op) {
  const ir::Graph graph = cpu::prepare_graph(zoo::build_model("tiny_residual").value()).value();
  ASSERT_GT(graph.num_ops(), 3U);
  std::map<std::string, cpu::TensorData> inputs;
  for (const ir::OpId id : graph.inputs()) {
    const std::string& name = graph.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(graph.tensor(name).shape, 0));
  }
  CancelToken token;
  int observed = 0;
  cpu::RunOptions options;
  options.observer = [&](const std::string&, const cpu::TensorData&) -> Status {
    if (++observed == 1) std::thread([&token] { token.request(); }).join();
    return {};
  };
  const CancelScope scope(token);
  cpu::Executor executor(graph);
  auto outputs = executor.run(inputs, options);
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.reason(), "cancelled");
  EXPECT_EQ(observed, 1) << "the executor ran ops after the request";
}

}  // namespace
}  // namespace tessel::e2e
