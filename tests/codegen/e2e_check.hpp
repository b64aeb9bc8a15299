// Shared end-to-end check of tests/codegen: a float graph -> quantize -> schedule -> codegen ->
// SystemC simulator, bit for bit against the golden executor, byte for byte against the schedule.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "codegen/codegen.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "scheduler/program_size.hpp"
#include "sim/simulator.hpp"

namespace tessel::codegen::test {

inline std::string config_path(const std::string& name) {
  return std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml";
}

/// `model` prepared (BN folded) into `prepared` and quantized at `bits` on synthetic samples
/// into `quantized`: for tests that schedule and compile by hand.
inline void prepare_and_quantize(const ir::Graph& model, int bits, ir::Graph& prepared,
                                 ir::Graph& quantized) {
  auto p = cpu::prepare_graph(model);
  ASSERT_TRUE(p.ok()) << p.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = bits;
  auto q = cpu::quantize_model(p.value(), qconfig, cpu::synthetic_samples(p.value(), qconfig));
  ASSERT_TRUE(q.ok()) << q.reason();
  prepared = std::move(p.value());
  quantized = std::move(q.value().graph);
}

/// Quantizes `model` (BN folded, bits = the config's; then pools before Concats where `policy`
/// compiles so: passes::pools_before_concat), schedules it with `policy`, compiles and
/// simulates it on `config_name`, and checks: every instruction validates and the text form
/// reads back; the one network output equals the golden executor's bit for bit (and is not
/// mostly zero); the simulated DMA bytes by class equal the scheduler's prediction (+ the
/// requant tables its byte model leaves out).
///
/// `config` may be a shipped config with changed sizes (a small weight scratchpad, say); when
/// `compiled_out` / `scheduled_out` are given they receive the program and the schedule, for
/// tests that also check the instructions. `features` reaches the search; `adjust`, when given,
/// may rewrite the schedule before code generation (a test forcing a mapping);
/// `simulated_cycles_out`, when given, receives the simulated cycles.
inline void expect_end_to_end(const ir::Graph& model, const HwConfig& config,
                              const std::string& policy, CompiledProgram* compiled_out = nullptr,
                              sched::ScheduledNet* scheduled_out = nullptr,
                              const sched::MapSpaceFeatures& features = {},
                              const std::function<void(sched::ScheduledNet&)>& adjust = nullptr,
                              std::uint64_t* simulated_cycles_out = nullptr,
                              sched::Objective objective = sched::Objective::Bytes) {
  auto prepared = cpu::prepare_graph(model);
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto quantized = cpu::quantize_model(prepared.value(), qconfig,
                                       cpu::synthetic_samples(prepared.value(), qconfig));
  ASSERT_TRUE(quantized.ok()) << quantized.reason();
  if (passes::pools_before_concat_for_policy(policy)) {
    const Status rewritten = passes::pools_before_concat(prepared.value(), quantized.value().graph);
    ASSERT_TRUE(rewritten.ok()) << rewritten.reason();
  }
  const ir::Graph& qgraph = quantized.value().graph;

  auto scheduled = sched::schedule_graph(prepared.value(), config, policy, objective, features);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();
  if (adjust) adjust(scheduled.value());

  // Golden run on the default input; its quantized input goes into the DRAM image.
  const std::string input = qgraph.tensor(qgraph.op(qgraph.inputs()[0]).outputs[0]).name;
  cpu::Executor executor(qgraph);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto golden = executor.run({{input, cpu::default_input(qgraph.tensor(input).shape)}}, options);
  ASSERT_TRUE(golden.ok()) << golden.reason();
  const std::string input_q = input + ".q";
  ASSERT_TRUE(golden.value().count(input_q)) << [&] {
    std::string names;
    for (const auto& [name, unused] : golden.value()) names += name + " ";
    return names;
  }();

  auto compiled =
      compile(qgraph, scheduled.value(), config, {{input_q, golden.value().at(input_q).to_i32()}});
  ASSERT_TRUE(compiled.ok()) << compiled.reason();
  const CompiledProgram& program = compiled.value();
  // The program's size, predicted from the schedule alone (issue 35 item 6), is the program's.
  const auto predicted_fetch = sched::predict_instruction_fetch_bytes(
      scheduled.value().net, scheduled.value().machine, scheduled.value().schedule);
  ASSERT_TRUE(predicted_fetch.ok()) << predicted_fetch.reason();
  EXPECT_EQ(predicted_fetch.value(), instruction_fetch_bytes(program));

  // Every instruction passes the target validation, and the text form reads back identically.
  const isa::TargetInfo target = isa::target_from_config(config);
  for (size_t i = 0; i < program.program.instructions.size(); ++i) {
    const auto problem = isa::validate(program.program.instructions[i], target);
    EXPECT_FALSE(problem.has_value()) << "instruction " << i << ": " << problem->message;
  }
  const std::string text = isa::disassemble(program.program, isa::scratchpad_names(config));
  isa::AssembleOptions with_target;
  with_target.target = &target;
  EXPECT_EQ(isa::assemble(text, "program.tasm", with_target), program.program);

  std::vector<isa::Word> words;
  for (const auto& instruction : program.program.instructions) {
    auto word = isa::encode(instruction);
    ASSERT_TRUE(word.ok()) << word.reason();
    words.push_back(word.value());
  }
  auto result = sim::simulate(config, words, sim::DramImage::from_bytes(program.dram));
  ASSERT_TRUE(result.ok()) << result.reason();
  const sim::SimReport& report = result.value().report;
  ASSERT_TRUE(report.ok()) << report.fault->str();
  {
    // The datapath on its own thread behind the timing model (--threads 2): the same bytes,
    // scratchpads and cycles.
    sim::SimOptions two_threads;
    two_threads.threads = 2;
    auto twin = sim::simulate(config, words, sim::DramImage::from_bytes(program.dram), two_threads);
    ASSERT_TRUE(twin.ok()) << twin.reason();
    EXPECT_EQ(twin.value().report.cycles, report.cycles);
    EXPECT_TRUE(twin.value().dram == result.value().dram) << "DRAM differs with 2 threads";
    EXPECT_TRUE(twin.value().scratchpads == result.value().scratchpads)
        << "scratchpads differ with 2 threads";
  }

  // Bit exact: every network output equals the golden executor's tensor (a Reshape output is
  // read from the region of the tensor it views; NCHW order flattens the same way).
  int outputs_checked = 0;
  const sched::Net& net = scheduled.value().net;
  for (const auto& [sched_name, ir_name] : program.io_tensors) {
    const auto view = program.views.find(sched_name);
    const std::string source = view == program.views.end() ? sched_name : view->second;
    const DramRegion* region = program.layout.find(source);
    ASSERT_NE(region, nullptr) << source;
    if (region->kind == RegionKind::Input) continue;
    sched::Shape3 shape;
    for (const auto& tensor : net.tensors)
      if (tensor.name == source) shape = tensor.shape;
    const auto got = read_nhwc(result.value().dram, region->offset, shape.c, shape.h, shape.w,
                               config.matrix.input_bits / 8);
    const auto expected = golden.value().at(ir_name).to_i32();
    EXPECT_EQ(got, expected) << "output " << ir_name;
    // A zero output would match a program that computes nothing: demand real values.
    EXPECT_GT(std::count_if(expected.begin(), expected.end(), [](int v) { return v != 0; }),
              static_cast<std::ptrdiff_t>(expected.size() / 4))
        << ir_name;
    ++outputs_checked;
  }
  EXPECT_EQ(outputs_checked, 1);

  // Bytes: the simulator's DMA traffic is the scheduler's prediction, plus the requant tables
  // the scheduler's model leaves out (docs/codegen.md).
  const auto& traffic = scheduled.value().schedule.traffic;
  const auto& dram = report.dram;
  const auto kind = [](sim::TrafficKind k) { return static_cast<size_t>(k); };
  EXPECT_EQ(static_cast<int64_t>(dram.read_bytes_by_kind[kind(sim::TrafficKind::kWeights)]),
            traffic.weights_read + program.traffic.requant_table_read);
  EXPECT_EQ(static_cast<int64_t>(dram.read_bytes_by_kind[kind(sim::TrafficKind::kActivations)]),
            traffic.activations_read);
  EXPECT_EQ(static_cast<int64_t>(dram.write_bytes_by_kind[kind(sim::TrafficKind::kActivations)] +
                                 dram.write_bytes_by_kind[kind(sim::TrafficKind::kOutputs)]),
            traffic.activations_written);
  if (simulated_cycles_out != nullptr) *simulated_cycles_out = report.cycles;
  std::printf("cycles: simulated %llu, scheduler %lld\n",
              static_cast<unsigned long long>(report.cycles),
              static_cast<long long>(scheduled.value().schedule.cycles));
  EXPECT_EQ(program.traffic.weights_read, traffic.weights_read);
  EXPECT_EQ(program.traffic.activations_read, traffic.activations_read);
  EXPECT_EQ(program.traffic.activations_written, traffic.activations_written);
  if (compiled_out != nullptr) *compiled_out = program;
  if (scheduled_out != nullptr) *scheduled_out = scheduled.value();
}

/// The same on a shipped config by name (configs/hw/NAME.yaml).
inline void expect_end_to_end(const ir::Graph& model, const std::string& config_name,
                              const std::string& policy) {
  expect_end_to_end(model, load_hw_config(config_path(config_name)), policy);
}

}  // namespace tessel::codegen::test
