// The end-to-end pipeline (pipeline.hpp): quantize once, then schedule, compile, simulate, check.
#include "tools/run/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "isa/instruction.hpp"
#include "support/cancel.hpp"
#include "support/int_ops.hpp"

namespace tessel::pipeline {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::int64_t by_kind(const sim::SimReport& report, sim::TrafficKind kind, bool write) {
  const auto k = static_cast<std::size_t>(kind);
  return static_cast<std::int64_t>(write ? report.dram.write_bytes_by_kind[k]
                                         : report.dram.read_bytes_by_kind[k]);
}

/// Names the first DRAM tensor (in layout order) whose simulated contents differ from the
/// golden executor's, re-running it with every intermediate kept: where to look.
std::string first_wrong_tensor(const PreparedModel& model, const PolicyResult& r,
                               const std::vector<std::uint8_t>& dram, const HwConfig& config) {
  const ir::Graph& q = model.quantized;
  std::map<std::string, cpu::TensorData> inputs;
  for (ir::OpId id : q.inputs()) {
    const std::string& name = q.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(q.tensor(name).shape, 0));
  }
  cpu::Executor executor(q);
  cpu::RunOptions keep;
  keep.keep_intermediates = true;
  auto golden = executor.run(inputs, keep);
  if (!golden.ok()) return "";
  for (const codegen::DramRegion& region : r.compiled.layout.regions()) {
    if (region.kind != codegen::RegionKind::Activations &&
        region.kind != codegen::RegionKind::Output)
      continue;
    std::string ir_name = region.name;
    if (!q.has_tensor(ir_name) || q.tensor(ir_name).dtype == ir::DType::f32) ir_name += ".q";
    auto it = golden.value().find(ir_name);
    if (it == golden.value().end()) continue;
    sched::Shape3 shape;
    bool channels_last = false;
    for (const auto& tensor : r.scheduled.net.tensors)
      if (tensor.name == region.name) {
        shape = tensor.shape;
        channels_last = tensor.ir_channels_last;
      }
    const auto got =
        codegen::read_tensor(dram, region.offset, shape, q.tensor(ir_name).shape.size(),
                             config.matrix.input_bits / 8, channels_last);
    if (got != it->second.to_i32()) {
      std::size_t groups = 0;
      for (const auto& g : r.scheduled.schedule.groups) {
        ++groups;
        if (std::find(g.outputs.begin(), g.outputs.end(), [&] {
              for (std::size_t t = 0; t < r.scheduled.net.tensors.size(); ++t)
                if (r.scheduled.net.tensors[t].name == region.name) return static_cast<int>(t);
              return -1;
            }()) != g.outputs.end())
          break;
      }
      return "; first wrong tensor in DRAM: '" + region.name + "' (stored by group " +
             std::to_string(groups - 1) + ")";
    }
  }
  return "";
}

}  // namespace

std::int64_t PolicyResult::sim_weights_read() const {
  return by_kind(report, sim::TrafficKind::kWeights, false);
}
std::int64_t PolicyResult::sim_activations_read() const {
  return by_kind(report, sim::TrafficKind::kActivations, false);
}
std::int64_t PolicyResult::sim_activations_written() const {
  return by_kind(report, sim::TrafficKind::kActivations, true) +
         by_kind(report, sim::TrafficKind::kOutputs, true);
}

std::int64_t PolicyResult::sim_instructions_read() const {
  return by_kind(report, sim::TrafficKind::kInstructions, false);
}

Result<PreparedModel> prepare_model(const ir::Graph& graph, const quant::QuantConfig& qconfig,
                                    std::uint64_t input_seed, bool pools_before_concat) {
  PreparedModel model;
  model.name = graph.name();
  auto start = std::chrono::steady_clock::now();
  auto prepared = cpu::prepare_graph(graph);
  if (!prepared.ok()) return prepared.failure();
  model.prepared = std::move(prepared.value());
  auto quantized =
      cpu::quantize_model(model.prepared, qconfig, cpu::synthetic_samples(model.prepared, qconfig));
  if (cancel_requested()) return cancelled();  // calibration stopped early (support/cancel.hpp)
  if (!quantized.ok()) return quantized.failure();
  model.quantized = std::move(quantized.value().graph);
  if (pools_before_concat)
    if (Status s = passes::pools_before_concat(model.prepared, model.quantized); !s)
      return fail("pools-before-concat: " + s.reason());
  model.quantize_seconds = seconds_since(start);

  start = std::chrono::steady_clock::now();
  const ir::Graph& q = model.quantized;
  std::map<std::string, cpu::TensorData> inputs;
  for (ir::OpId id : q.inputs()) {
    const std::string& name = q.op(id).outputs[0];
    cpu::TensorData x = cpu::default_graph_input(q, name, input_seed);
    auto codes = cpu::input_codes(q, name, x);
    if (!codes.ok()) return codes.failure();
    model.input_values.insert(std::move(codes).value());
    inputs.emplace(name, std::move(x));
  }
  cpu::Executor executor(q);
  auto golden = executor.run(inputs);
  if (!golden.ok()) return fail("golden executor: " + golden.reason());
  model.golden = std::move(golden.value());
  model.golden_seconds = seconds_since(start);
  return model;
}

Result<std::map<std::string, std::vector<float>>> read_outputs(
    const ir::Graph& quantized, const codegen::CompiledProgram& compiled, const sched::Net& net,
    const std::vector<std::uint8_t>& dram, int element_bytes) {
  std::map<std::string, std::vector<float>> outputs;
  for (const auto& [sched_name, ir_name] : compiled.io_tensors) {
    const auto view = compiled.views.find(sched_name);
    const std::string source = view == compiled.views.end() ? sched_name : view->second;
    const codegen::DramRegion* region = compiled.layout.find(source);
    if (region == nullptr) return fail("no DRAM region for '" + source + "'");
    if (region->kind != codegen::RegionKind::Output && view == compiled.views.end()) continue;
    if (region->kind == codegen::RegionKind::Input) continue;
    sched::Shape3 shape;
    bool channels_last = false;
    for (const auto& tensor : net.tensors)
      if (tensor.name == source) {
        shape = tensor.shape;
        channels_last = tensor.ir_channels_last;
      }
    const ir::Tensor& t = quantized.tensor(ir_name);
    const auto ints = codegen::read_tensor(dram, region->offset, shape, t.shape.size(),
                                           element_bytes, channels_last);
    if (!t.quant || t.quant->scales.empty())
      return fail("output '" + ir_name + "' has no quantization scale");
    const double scale = static_cast<double>(t.quant->scales[0]);
    const std::int32_t zp = t.quant->zero_points.empty() ? 0 : t.quant->zero_points[0];
    std::vector<float> values(ints.size());
    for (std::size_t i = 0; i < ints.size(); ++i)
      values[i] = static_cast<float>((ints[i] - zp) * scale);
    outputs[sched_name] = std::move(values);
  }
  return outputs;
}

Result<PolicyResult> compile_policy(const PreparedModel& model, const HwConfig& config,
                                    const std::string& policy, const RunOptions& options) {
  PolicyResult r;
  r.policy = policy;
  // The scheduler would pool before the Concats on its own copy, and the program would then
  // name ops the quantized graph lacks: say what to do instead.
  if (passes::pools_before_concat_for_policy(policy) &&
      passes::pools_before_concat_applies(model.prepared))
    return fail(policy +
                ": the model is not in the policy's form (a MaxPool still reads a "
                "Concat alone); prepare it with prepare_model(..., true)");
  auto start = std::chrono::steady_clock::now();
  auto scheduled = sched::schedule_graph(model.prepared, config, policy, options.objective);
  if (!scheduled.ok()) return fail(policy + ": " + scheduled.reason());
  r.scheduled = std::move(scheduled.value());
  r.schedule_seconds = seconds_since(start);
  if (cancel_requested()) return cancelled();  // before codegen, which is not polled

  start = std::chrono::steady_clock::now();
  auto compiled = codegen::compile(model.quantized, r.scheduled, config, model.input_values);
  if (!compiled.ok()) return fail(policy + ": " + compiled.reason());
  r.compiled = std::move(compiled.value());
  // The schedule's prediction counts the program's instruction fetch from here on.
  r.scheduled.schedule.instruction_fetch_bytes = codegen::instruction_fetch_bytes(r.compiled);
  r.words.reserve(r.compiled.program.instructions.size());
  for (const auto& instruction : r.compiled.program.instructions) {
    auto word = isa::encode(instruction);
    if (!word.ok()) return fail(policy + ": " + word.reason());
    r.words.push_back(word.value());
  }
  r.compile_seconds = seconds_since(start);
  return r;
}

Status simulate_policy(const PreparedModel& model, const HwConfig& config, PolicyResult& r,
                       const RunOptions& options) {
  const std::string& policy = r.policy;
  const auto start = std::chrono::steady_clock::now();
  sim::SimOptions sim_options;
  sim_options.timing_only = options.timing_only;
  sim_options.trace_path = options.trace_path;
  sim::DramImage image;
  if (options.timing_only) {
    image.size_bytes = r.compiled.dram.size();
  } else {
    image = sim::DramImage::from_bytes(r.compiled.dram);
  }
  auto simulated = sim::simulate(config, r.words, std::move(image), sim_options);
  if (!simulated.ok()) return fail(policy + ": simulator: " + simulated.reason());
  r.report = std::move(simulated.value().report);
  r.simulate_seconds = seconds_since(start);
  r.outputs.clear();
  r.bit_exact.reset();
  r.mismatch.clear();
  if (!r.report.ok()) return fail(policy + ": simulator fault: " + r.report.fault->str());
  if (options.timing_only) return {};

  auto outputs = read_outputs(model.quantized, r.compiled, r.scheduled.net, simulated.value().dram,
                              config.matrix.input_bits / 8);
  if (!outputs.ok()) return fail(policy + ": " + outputs.reason());
  r.outputs = std::move(outputs.value());
  r.bit_exact = !r.outputs.empty();
  for (const auto& [name, values] : r.outputs) {
    auto it = model.golden.find(name);
    if (it == model.golden.end()) {
      r.bit_exact = false;
      r.mismatch = "the golden executor has no output '" + name + "'";
      break;
    }
    const std::vector<float> expected = it->second.to_f32();
    if (expected.size() != values.size() ||
        std::memcmp(expected.data(), values.data(), values.size() * sizeof(float)) != 0) {
      r.bit_exact = false;
      for (std::size_t i = 0; i < std::min(expected.size(), values.size()); ++i)
        if (std::memcmp(&expected[i], &values[i], sizeof(float)) != 0) {
          r.mismatch = "output '" + name + "' element " + std::to_string(i) + ": simulator " +
                       std::to_string(values[i]) + ", golden " + std::to_string(expected[i]);
          break;
        }
      if (r.mismatch.empty()) r.mismatch = "output '" + name + "': sizes differ";
      break;
    }
  }
  if (!*r.bit_exact && options.diagnose_mismatch)
    r.mismatch += first_wrong_tensor(model, r, simulated.value().dram, config);
  return {};
}

Result<PolicyResult> run_policy(const PreparedModel& model, const HwConfig& config,
                                const std::string& policy, const RunOptions& options) {
  auto r = compile_policy(model, config, policy, options);
  if (!r.ok()) return r.failure();
  if (Status s = simulate_policy(model, config, r.value(), options); !s) return s.failure();
  return r;
}

Result<PreparedModel> prepare_model_for_policy(const ir::Graph& graph,
                                               const quant::QuantConfig& qconfig,
                                               std::uint64_t input_seed,
                                               const std::string& policy) {
  const bool depthwise =
      passes::batchnorm_lowering_for_policy(policy) == passes::BatchNormLowering::Depthwise;
  const bool pools =
      passes::pools_before_concat_for_policy(policy) && passes::pools_before_concat_applies(graph);
  if (!depthwise && !pools) return prepare_model(graph, qconfig, input_seed);
  auto lowered = passes::graph_for_policy(graph, policy);
  if (!lowered.ok()) return lowered.failure();
  return prepare_model(lowered.value(), qconfig, input_seed, pools);
}

}  // namespace tessel::pipeline
