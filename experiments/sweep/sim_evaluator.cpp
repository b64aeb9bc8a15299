// Sim mode: schedule + codegen on the runner's threads, SystemC simulations on one thread.
#include "experiments/sweep/sim_evaluator.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#include "codegen/codegen.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "experiments/sweep/analytic_evaluator.hpp"
#include "experiments/sweep/config_override.hpp"
#include "experiments/sweep/zoo_options.hpp"
#include "isa/instruction.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/policy.hpp"
#include "sim/simulator.hpp"
#include "support/diagnostic.hpp"
#include "support/int_ops.hpp"
#include "support/json_text.hpp"

namespace tessel::sweep {
namespace {

using Clock = std::chrono::steady_clock;

/// Runs submitted jobs one at a time on one thread that lives as long as this object: every
/// SystemC context of the sweep is created and destroyed on the same OS thread.
class SerialThread {
 public:
  SerialThread() : thread_([this] { loop(); }) {}
  ~SerialThread() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  SerialThread(const SerialThread&) = delete;
  SerialThread& operator=(const SerialThread&) = delete;

  /// Runs `job` on the serial thread and waits for it (jobs from several callers queue up).
  template <typename T>
  T run(std::function<T()> job) {
    std::packaged_task<T()> task(std::move(job));
    std::future<T> result = task.get_future();
    {
      std::lock_guard lock(mutex_);
      jobs_.emplace_back([&task] { task(); });
    }
    wake_.notify_one();
    return result.get();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool closing_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

/// A model quantized one way, with its network input(s) and (functional runs) golden outputs.
struct QuantizedNet {
  ir::Graph prepared;  ///< BN-folded float graph: what the scheduler schedules
  ir::Graph quantized;
  std::map<std::string, std::vector<std::int32_t>> inputs;  ///< "input.q" -> NCHW ints
  /// Integer IR tensor -> its golden value, NCHW, kept in its own type (int8: a quarter of
  /// int32; 12-layer GPT-2 decode at batch 32 held 20 GB as int32) and widened to compare.
  std::map<std::string, cpu::TensorData> golden;
};

class SimEvaluator final : public PointEvaluator {
 public:
  SimEvaluator(std::map<std::string, ir::Graph> graphs, sched::MapSpaceFeatures features,
               bool functional)
      : graphs_(std::move(graphs)),
        traits_(traits_of(graphs_)),
        features_(features),
        functional_(functional) {}

  Evaluation evaluate(const SweepPoint& point) override {
    const HwConfig& hw = *point.config->hw;
    auto start = Clock::now();
    auto net = quantized_net(point.model, point.policy, point.config->quantization, hw);
    if (!net.ok()) return Evaluation::invalid("quantization: " + net.reason());
    const QuantizedNet& q = *net.value();
    phase_ns_[kPrepare] += nanoseconds_since(start);

    const auto objective = sched::parse_objective(point.objective);
    if (!objective.ok()) return Evaluation::invalid("objective: " + objective.reason());
    start = Clock::now();
    auto scheduled =
        sched::schedule_graph(q.prepared, hw, point.policy, objective.value(), features_);
    phase_ns_[kSchedule] += nanoseconds_since(start);
    if (!scheduled.ok()) return Evaluation::invalid(scheduled.reason());

    start = Clock::now();
    auto compiled = codegen::compile(q.quantized, scheduled.value(), hw, q.inputs);
    if (!compiled.ok()) return Evaluation::invalid("codegen: " + compiled.reason());
    const codegen::CompiledProgram& code = compiled.value();
    std::vector<isa::Word> words;
    words.reserve(code.program.instructions.size());
    for (const isa::Instruction& instruction : code.program.instructions) {
      auto word = isa::encode(instruction);
      if (!word.ok())
        return Evaluation::error("codegen emitted an unencodable instruction: " + word.reason());
      words.push_back(word.value());
    }
    phase_ns_[kCompile] += nanoseconds_since(start);

    start = Clock::now();
    sim::DramImage image;
    if (functional_) {
      image = sim::DramImage::from_bytes(code.dram);
    } else {
      image.size_bytes = code.dram.size();  // timing only: the contents are not read
    }
    sim::SimOptions options;
    options.timing_only = !functional_;
    auto simulated = simulator_.run<Result<sim::SimResult>>(
        [&] { return sim::simulate(hw, words, std::move(image), options); });
    phase_ns_[kSimulate] += nanoseconds_since(start);
    if (!simulated.ok()) return Evaluation::error("simulator setup: " + simulated.reason());
    const sim::SimReport& report = simulated.value().report;
    if (!report.ok()) return Evaluation::invalid("simulation fault: " + report.fault->str());

    nlohmann::ordered_json figures =
        schedule_figures(scheduled.value().schedule, scheduled.value().net, hw);
    add_sim_figures(figures, report, code, hw);
    if (functional_) {
      auto exact = outputs_match(q, scheduled.value().net, code, simulated.value().dram, hw);
      if (!exact.ok()) return Evaluation::error(exact.reason());
      figures["bit_exact"] = exact.value();
    }
    ++points_;
    return Evaluation::ok(std::move(figures));
  }

  std::string timing_report() const override {
    const std::int64_t points = points_.load();
    if (points == 0) return {};
    const auto ms = [&](int phase) { return static_cast<double>(phase_ns_[phase]) / 1e6 / points; };
    char text[256];
    std::snprintf(text, sizeof text,
                  "sim (%s), per simulated point: model lookup %.2f ms, schedule %.2f ms, "
                  "codegen %.2f ms, simulation (queued + run) %.2f ms",
                  functional_ ? "functional" : "timing only", ms(kPrepare), ms(kSchedule),
                  ms(kCompile), ms(kSimulate));
    return text;
  }

 private:
  enum Phase { kPrepare, kSchedule, kCompile, kSimulate, kPhases };

  static void add_sim_figures(nlohmann::ordered_json& figures, const sim::SimReport& report,
                              const codegen::CompiledProgram& code, const HwConfig& hw) {
    const auto read = [&](sim::TrafficKind kind) {
      return report.dram.read_bytes_by_kind[static_cast<std::size_t>(kind)];
    };
    const auto written = [&](sim::TrafficKind kind) {
      return report.dram.write_bytes_by_kind[static_cast<std::size_t>(kind)];
    };
    figures["sim_cycles"] = report.cycles;
    figures["sim_latency_ms"] = static_cast<double>(report.cycles) / (hw.clock_mhz * 1e3);
    figures["sim_over_predicted_cycles"] =
        figures["cycles"].get<double>() > 0
            ? static_cast<double>(report.cycles) / figures["cycles"].get<double>()
            : 0.0;
    figures["sim_dram_bytes"] = {{"read", report.dram.read_bytes()},
                                 {"write", report.dram.write_bytes()},
                                 {"total", report.dram.total_bytes()},
                                 {"weights_read", read(sim::TrafficKind::kWeights)},
                                 {"activations_read", read(sim::TrafficKind::kActivations)},
                                 {"activations_written", written(sim::TrafficKind::kActivations) +
                                                             written(sim::TrafficKind::kOutputs)},
                                 {"instructions_read", read(sim::TrafficKind::kInstructions)}};
    // Requant tables are real weight-class traffic the scheduler's byte model leaves out
    // (docs/next-steps.md 2): sim weights_read = predicted weights_read + this.
    figures["requant_table_bytes"] = code.traffic.requant_table_read;
    figures["sim_instructions"] = report.instructions_executed;
    figures["sim_mac_utilisation"] = report.mac_utilisation;
  }

  /// Every network output in the simulated DRAM equals the golden executor's tensor (read back
  /// as tools/run/pipeline.cpp's read_outputs does).
  static Result<bool> outputs_match(const QuantizedNet& q, const sched::Net& net,
                                    const codegen::CompiledProgram& code,
                                    const std::vector<std::uint8_t>& dram, const HwConfig& hw) {
    bool all_equal = true;
    int outputs = 0;
    for (const auto& [sched_name, ir_name] : code.io_tensors) {
      const auto view = code.views.find(sched_name);
      const std::string source = view == code.views.end() ? sched_name : view->second;
      const codegen::DramRegion* region = code.layout.find(source);
      if (region == nullptr) return fail("no DRAM region for network tensor " + source);
      if (region->kind == codegen::RegionKind::Input) continue;
      sched::Shape3 shape;
      bool channels_last = false;
      for (const auto& tensor : net.tensors)
        if (tensor.name == source) {
          shape = tensor.shape;
          channels_last = tensor.ir_channels_last;
        }
      const auto golden = q.golden.find(ir_name);
      if (golden == q.golden.end()) return fail("the golden run has no tensor " + ir_name);
      // In the graph's order, as the golden tensor: NCHW from NHWC for 4-D, token tensors
      // ([1, S, d]) as stored (read_nhwc read those transposed: never equal).
      const std::size_t rank = q.quantized.tensor(ir_name).shape.size();
      all_equal = all_equal &&
                  codegen::read_tensor(dram, region->offset, shape, rank, hw.matrix.input_bits / 8,
                                       channels_last) == golden->second.to_i32();
      ++outputs;
    }
    if (outputs == 0) return fail("the program has no network output to check");
    return all_equal;
  }

  /// The model as `policy` compiles it (passes::graph_for_policy: layerwise unfolds BatchNorm,
  /// the others fold it; optimal then pools before Concats, passes::pools_before_concat),
  /// quantized per `quantization` (bits default: the config's
  /// matrix.input_bits), built on first use and shared read-only afterwards.
  Result<std::shared_ptr<const QuantizedNet>> quantized_net(const std::string& model,
                                                            const std::string& policy,
                                                            const nlohmann::json& quantization,
                                                            const HwConfig& hw) {
    nlohmann::json section = quantization.is_object() ? quantization : nlohmann::json::object();
    if (!section.contains("bits")) section["bits"] = hw.matrix.input_bits;
    const passes::BatchNormLowering lowering = passes::batchnorm_lowering_for_policy(policy);
    // Without a BatchNormalization the two lowerings give one graph: one net serves both.
    const ModelTraits& traits = traits_.at(model);
    const bool pools = passes::pools_before_concat_for_policy(policy) && traits.pooled_concat;
    const std::string key = model + '\n' + tessel::json_text(section, -1) + '\n' +
                            (!traits.batchnorm                                  ? "bn:none"
                             : lowering == passes::BatchNormLowering::Depthwise ? "bn:depthwise"
                                                                                : "bn:folded") +
                            (pools ? ",pools-before-concat" : "");
    std::lock_guard lock(nets_mutex_);  // building is rare; other threads wait for it
    if (auto found = nets_.find(key); found != nets_.end()) return found->second;
    // Points run model by model (spec.cpp), so a net of another model that no evaluation holds
    // is not needed again: drop it before building. Kept, every model's golden intermediates
    // stayed for the whole sweep (experiments/transformers/decode.sh's 12-layer GPT-2 decode at
    // batch 1, 8 and 32 grew one process past 22 GB and was killed). A model met again later is
    // rebuilt, identically (seeded).
    for (auto it = nets_.begin(); it != nets_.end();) {
      const bool other_model = it->first.compare(0, model.size() + 1, model + '\n') != 0;
      it = other_model && it->second.use_count() == 1 ? nets_.erase(it) : std::next(it);
    }
    auto built = build_net(graphs_.at(model), lowering, pools, section);
    if (!built.ok()) return built.failure();
    auto shared = std::shared_ptr<const QuantizedNet>(std::move(built).value());
    nets_.emplace(key, shared);
    return shared;
  }

  Result<std::unique_ptr<QuantizedNet>> build_net(const ir::Graph& graph,
                                                  passes::BatchNormLowering lowering, bool pools,
                                                  const nlohmann::json& section) const {
    auto out = std::make_unique<QuantizedNet>();
    quant::QuantConfig config;
    try {
      config = quant::parse_quant_config(tessel::json_text(section, -1),
                                         "quantization");  // JSON is YAML
    } catch (const InputError& e) {
      return fail(e.what());
    }
    auto prepared = passes::graph_for_lowering(graph, lowering);
    if (!prepared.ok()) return prepared.failure();
    out->prepared = std::move(prepared).value();
    auto quantized =
        cpu::quantize_model(out->prepared, config, cpu::synthetic_samples(out->prepared, config));
    if (!quantized.ok()) return quantized.failure();
    out->quantized = std::move(quantized.value().graph);
    if (pools)
      if (Status s = passes::pools_before_concat(out->prepared, out->quantized); !s)
        return fail("pools-before-concat: " + s.reason());
    const ir::Graph& qgraph = out->quantized;
    // The default input (seed 0), quantized as the graph's Quantize op does (as `tessel
    // compile` writes it); a functional run takes it, and the outputs, from the golden run.
    for (ir::OpId id : qgraph.inputs()) {
      const std::string& name = qgraph.op(id).outputs[0];
      auto codes = cpu::input_codes(qgraph, name, cpu::default_graph_input(qgraph, name));
      if (!codes.ok()) return codes.failure();
      out->inputs.insert(std::move(codes).value());
    }
    if (functional_) {
      std::map<std::string, cpu::TensorData> feeds;
      for (ir::OpId id : qgraph.inputs()) {
        const std::string& name = qgraph.op(id).outputs[0];
        feeds.emplace(name, cpu::default_graph_input(qgraph, name));
      }
      cpu::Executor executor(qgraph);
      cpu::RunOptions run;
      run.keep_intermediates = true;
      auto golden = executor.run(feeds, run);
      if (!golden.ok()) return fail("golden executor: " + golden.reason());
      for (auto& [name, tensor] : golden.value()) {
        if (tensor.dtype() != ir::DType::f32) out->golden.emplace(name, std::move(tensor));
      }
      for (auto& [qname, ints] : out->inputs) {
        const auto same = out->golden.find(qname);
        if (same == out->golden.end() || same->second.to_i32() != ints)
          return fail("the golden run quantized input " + qname + " differently");
      }
    }
    return out;
  }

  // What a model's nets depend on besides the policy, found once per model, not per point:
  // whether it has a BatchNormalization (else both lowerings give one graph) and a Concat that
  // pools-before-concat rewrites.
  struct ModelTraits {
    bool batchnorm = false, pooled_concat = false;
  };
  static std::map<std::string, ModelTraits> traits_of(
      const std::map<std::string, ir::Graph>& graphs) {
    std::map<std::string, ModelTraits> out;
    for (const auto& [model, graph] : graphs) {
      ModelTraits& t = out[model];
      for (ir::OpId id = 0; id < graph.num_ops(); ++id)
        t.batchnorm = t.batchnorm || graph.op(id).kind == ir::OpKind::BatchNormalization;
      t.pooled_concat = passes::pools_before_concat_applies(graph);
    }
    return out;
  }

  const std::map<std::string, ir::Graph> graphs_;
  const std::map<std::string, ModelTraits> traits_;
  const sched::MapSpaceFeatures features_;
  const bool functional_;
  std::mutex nets_mutex_;
  std::map<std::string, std::shared_ptr<const QuantizedNet>> nets_;
  std::atomic<std::int64_t> phase_ns_[kPhases] = {};
  std::atomic<std::int64_t> points_{0};
  SerialThread simulator_;  // last: joined first, before the models it may still read
};

}  // namespace

Result<std::unique_ptr<PointEvaluator>> make_sim_evaluator(const SweepSpec& spec) {
  auto functional = validate_scheduled_spec(spec, "sim", "functional", false);
  if (!functional.ok()) return fail(functional.reason());
  std::map<std::string, ir::Graph> graphs;
  for (const std::string& model : spec.models) {
    try {
      const ModelSource& source = spec.model_sources.at(model);
      // With the zoo's seeded weights.
      graphs.emplace(model, zoo::load_model(source.source, zoo_load_options(source)));
    } catch (const InputError& e) {
      return fail("models: " + std::string(e.what()));
    }
  }
  return std::unique_ptr<PointEvaluator>(
      std::make_unique<SimEvaluator>(std::move(graphs), features_of(spec), functional.value()));
}

}  // namespace tessel::sweep
