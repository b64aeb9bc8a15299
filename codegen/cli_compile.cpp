// `tessel compile`: model -> quantize -> schedule -> codegen; writes a compile folder for `tessel
// sim`.
#include <omp.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "codegen/codegen.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/program_size.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/int_ops.hpp"

namespace tessel::codegen {
namespace {

// Sets the OpenMP thread count of the parallel regions this thread starts, for its lifetime.
class OmpThreadsFor {
 public:
  explicit OmpThreadsFor(int threads) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~OmpThreadsFor() { omp_set_num_threads(saved_); }
  OmpThreadsFor(const OmpThreadsFor&) = delete;
  OmpThreadsFor& operator=(const OmpThreadsFor&) = delete;

 private:
  int saved_;
};

// CPU seconds (user + system) of the calling thread / of the whole process so far.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct CompileOptions {
  std::string model, hw = "npc19-deepfusion", policy = "layerwise", objective = "bytes", quant, out;
  std::string schedule;  ///< --schedule: a schedule JSON whose mappings are costed, not searched
  std::uint64_t input_seed = 0;
  bool timings = false, no_s2d_stem = false, no_fold_activations = false, tiles_2d = true;
};

// The network input: the seeded default tensor, quantized as the graph's Quantize op does.
Result<std::map<std::string, std::vector<std::int32_t>>> default_inputs(const ir::Graph& qgraph,
                                                                        std::uint64_t seed) {
  std::map<std::string, std::vector<std::int32_t>> inputs;
  for (ir::OpId id : qgraph.inputs()) {
    const std::string& name = qgraph.op(id).outputs[0];
    auto codes = cpu::input_codes(qgraph, name, cpu::default_graph_input(qgraph, name, seed));
    if (!codes.ok()) return codes.failure();
    inputs.insert(std::move(codes).value());
  }
  return inputs;
}

// What `tessel compile` prints: the program's size and the bytes its DMAs move beside the
// schedule's prediction.
void print_summary(const CompileOptions& o, const HwConfig& config, const CompiledProgram& c,
                   const sched::ScheduledNet& scheduled) {
  const auto& p = scheduled.schedule.traffic;
  // The fetch the schedule predicts without the program (what `tessel schedule` counts).
  const auto predicted_fetch =
      sched::predict_instruction_fetch_bytes(scheduled.net, scheduled.machine, scheduled.schedule);
  if (!predicted_fetch.ok() || predicted_fetch.value() != instruction_fetch_bytes(c))
    std::cerr << "warning: the schedule predicts "
              << (predicted_fetch.ok() ? std::to_string(predicted_fetch.value()) + " bytes"
                                       : "no size (" + predicted_fetch.reason() + ")")
              << " of instruction fetch; the program has " << instruction_fetch_bytes(c) << "\n";
  std::cout << o.model << " on " << config.name << ", policy " << o.policy << ": "
            << c.groups.size() << " groups, " << c.program.instructions.size()
            << " instructions, DRAM image " << c.layout.size_bytes() << " bytes\n"
            << "DMA bytes: weights " << c.traffic.weights_read << " (+ requant tables "
            << c.traffic.requant_table_read << "), activations in " << c.traffic.activations_read
            << ", out " << c.traffic.activations_written << ", instruction fetch "
            << instruction_fetch_bytes(c) << "\n"
            << "scheduler predicted: weights " << p.weights_read << ", activations in "
            << p.activations_read << ", out " << p.activations_written << ", instruction fetch "
            << (predicted_fetch.ok() ? predicted_fetch.value() : 0) << "\n"
            << "wrote " << o.out << "/{program.bin,program.tasm,dram.bin,schedule.json,"
            << "compile.json,hw.yaml}\n";
}

// --timings: wall seconds per stage, the schedule's thread, CPU seconds (to stderr).
void print_timings(const std::vector<std::pair<std::string, double>>& seconds,
                   std::chrono::steady_clock::time_point process_start, int threads,
                   double schedule_seconds, double schedule_cpu_seconds) {
  std::cerr << "seconds:";
  for (const auto& [stage, s] : seconds) std::cerr << ' ' << stage << ' ' << s;
  std::cerr
      << ", total "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count();
  if (threads > 1)
    std::cerr << " (the schedule took " << schedule_seconds << " on its own thread, beside "
              << "load and quantize on " << threads - 1 << ")";
  // CPU seconds: on an idle machine the main thread's is about the wall time's floor.
  std::cerr << "\nCPU seconds: main thread " << thread_cpu_seconds() << ", schedule "
            << schedule_cpu_seconds << ", process " << process_cpu_seconds() << '\n';
}

// `tessel compile` with its options parsed.
int run_compile(CompileOptions o) {
  // Wall seconds per stage, printed with --timings: where `tessel compile` spends its time.
  std::vector<std::pair<std::string, double>> seconds;
  const auto process_start = std::chrono::steady_clock::now();
  auto stage_start = process_start;
  auto lap = [&](const char* stage) {
    const auto now = std::chrono::steady_clock::now();
    seconds.emplace_back(stage, std::chrono::duration<double>(now - stage_start).count());
    stage_start = now;
  };
  // --schedule: the policy (the net's and graph's form) and objective are the schedule's.
  nlohmann::json mappings;
  if (!o.schedule.empty()) {
    try {
      mappings = nlohmann::json::parse(files::read_file(o.schedule, 256 * files::kMiB));
      o.policy = mappings.at("policy").get<std::string>();
      o.objective = mappings.at("objective").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      std::cerr << o.schedule << ": error: " << e.what() << '\n';
      return 1;
    }
  }
  const sched::Objective objective = sched::objective_option(o.objective);
  const std::string hw_path = resolve_hw_config(o.hw);
  files::require_output_distinct(o.out, {o.model, hw_path, o.quant, o.schedule});
  const HwConfig config = load_hw_config(hw_path);
  const std::string hw_text = files::read_file(hw_path, files::kMaxConfigBytes);  // -> hw.yaml
  // The schedule reads only the float graph's shapes, the quantizer its values: with two or
  // more threads (OMP_NUM_THREADS, default one per core) the schedule runs on a thread of its
  // own, the rest go to loading and quantizing; with one, one stage after the other. For a
  // zoo model the schedule thread starts at once, on the same model built without weights
  // (the scheduler reads no payload), and the weights are drawn on one thread meanwhile; a
  // model file is read once and scheduled once prepared. The outputs are the same either way
  // (the calibration's fp32 convs do not depend on the thread count; bench/e2e/README.md).
  const int threads = std::max(1, omp_get_max_threads());
  double schedule_seconds = 0, schedule_cpu_seconds = 0;
  const auto run_schedule = [&](const ir::Graph& float_graph) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    sched::MapSpaceFeatures features;
    features.space_to_depth_stem = !o.no_s2d_stem;
    features.fold_activations = !o.no_fold_activations;
    features.column_tiles_every_row = o.tiles_2d;
    auto result = mappings.is_null()
                      ? sched::schedule_graph(float_graph, config, o.policy, objective, features)
                      : sched::schedule_graph_from_mappings(float_graph, config, mappings);
    if (!result.ok() && !mappings.is_null())
      return Result<sched::ScheduledNet>(fail(o.schedule + ": " + result.reason()));
    schedule_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    schedule_cpu_seconds = thread_cpu_seconds() - cpu_start;
    return result;
  };
  std::future<Result<sched::ScheduledNet>> schedule_task;  // joined before anything it reads dies
  const bool early_schedule = threads > 1 && zoo::is_zoo_model(o.model);
  if (early_schedule)
    schedule_task = std::async(std::launch::async, [&]() -> Result<sched::ScheduledNet> {
      zoo::LoadOptions shapes_only;
      shapes_only.zoo.with_weights = false;
      auto shapes = passes::graph_for_policy(zoo::load_model(o.model, shapes_only), o.policy);
      if (!shapes.ok()) return shapes.failure();
      return run_schedule(shapes.value());
    });
  ir::Graph graph = [&] {
    const OmpThreadsFor load_threads(early_schedule ? threads - 1 : threads);
    return zoo::load_model(o.model);
  }();
  lap("load");
  // BatchNorm folded, or unfolded into depthwise convs for layerwise (docs/quantization.md).
  // The loaded graph is lowered in place, not copied (ResNet-50: 100 MB of weights).
  auto prepared = passes::graph_for_policy(std::move(graph), o.policy);
  if (!prepared.ok()) {
    std::cerr << "error: " << prepared.reason() << '\n';
    return 1;
  }
  const ir::Graph& float_graph = prepared.value();
  lap("prepare");
  quant::QuantConfig qconfig;
  if (!o.quant.empty()) {
    qconfig = quant::load_quant_config(o.quant);
  } else {
    qconfig.bits = config.matrix.input_bits;
  }
  if (threads > 1 && !early_schedule)
    schedule_task = std::async(std::launch::async, run_schedule, std::cref(float_graph));
  auto quantized = [&] {
    const OmpThreadsFor quantize_threads(threads > 1 ? threads - 1 : 1);
    return cpu::quantize_model(float_graph, qconfig, cpu::synthetic_samples(float_graph, qconfig));
  }();
  if (!quantized.ok()) {
    std::cerr << "error: " << quantized.reason() << '\n';
    return 1;
  }
  // optimal pools before the Concats the pools alone read: the quantized graph after
  // quantizing (the integers stay the same; passes/pools_before_concat.hpp), the float graph
  // on the scheduler's own copy (NetForm::FoldedPoolsBeforeConcat).
  if (passes::pools_before_concat_for_policy(o.policy)) {
    if (Status s = passes::run_passes(quantized.value().graph, "pools-before-concat"); !s) {
      std::cerr << "error: pools-before-concat: " << s.reason() << '\n';
      return 1;
    }
  }
  const ir::Graph& qgraph = quantized.value().graph;
  lap("quantize");
  auto scheduled = schedule_task.valid() ? schedule_task.get() : run_schedule(float_graph);
  if (!scheduled.ok()) {
    std::cerr << "error: " << scheduled.reason() << '\n';
    return 1;
  }
  lap(threads > 1 ? "schedule (wait)" : "schedule");
  auto inputs = default_inputs(qgraph, o.input_seed);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.reason() << '\n';
    return 1;
  }
  auto compiled = compile(qgraph, scheduled.value(), config, inputs.value());
  if (!compiled.ok()) {
    std::cerr << "error: " << compiled.reason() << '\n';
    return 1;
  }
  lap("codegen");
  // The schedule's DRAM and energy prediction count the program's fetch from here on.
  scheduled.value().schedule.instruction_fetch_bytes = instruction_fetch_bytes(compiled.value());
  if (auto s = write_compile_folder(compiled.value(), scheduled.value(), config, o.out, hw_text);
      !s.ok()) {
    std::cerr << "error: " << s.reason() << '\n';
    return 1;
  }
  lap("write");
  if (o.timings)
    print_timings(seconds, process_start, threads, schedule_seconds, schedule_cpu_seconds);
  print_summary(o, config, compiled.value(), scheduled.value());
  return 0;
}

cli::Runner setup_compile(CLI::App& command) {
  auto o = std::make_shared<CompileOptions>();
  cli::add_model_option(command, o->model);
  cli::add_hw_option(command, o->hw);
  command
      .add_option("-p,--policy", o->policy,
                  "layerwise | opfusion | fusion | fusion+reuse | optimal")
      ->capture_default_str();
  command
      .add_option("--objective", o->objective,
                  "What optimal (and opfusion) minimise: " + sched::objective_names() +
                      " (docs/scheduler.md, docs/energy.md)")
      ->capture_default_str();
  command.add_option("--quant", o->quant,
                     "Quantization YAML (default: every default, bits from the config's matrix)");
  command
      .add_option("--input-seed", o->input_seed,
                  "Seed of the default network input written into dram.bin")
      ->capture_default_str();
  command.add_option("-o,--out", o->out, "Output folder")->required();
  command.add_option("--schedule", o->schedule,
                     "Compile this schedule JSON's explicit mappings (written by tessel schedule "
                     "--json, a compile's schedule.json, or by hand), costed and checked, instead "
                     "of searching; its policy, objective and map space replace the options");
  command.add_flag("--timings", o->timings, "Print the seconds each stage took (to stderr)");
  command.add_flag("--2d-tiles,!--no-2d-tiles", o->tiles_2d,
                   "optimal, opfusion, layerwise: column tiles at every row-tile count (the "
                   "default; --no-2d-tiles: only once tiles are one row; docs/scheduler.md "
                   "\"2D tiles\")");
  command.add_flag("--no-s2d-stem", o->no_s2d_stem,
                   "Run the first stride-2 conv on the stored input, not its space-to-depth "
                   "view (docs/scheduler.md)");
  command.add_flag("--no-fold-activations", o->no_fold_activations,
                   "Run each ReLU/Clip as a vector pass of its own instead of in its producer's "
                   "output clamp (docs/scheduler.md \"Activation folding\")");
  return [o]() { return run_compile(*o); };
}

const cli::Registration kCompile{
    {"compile", "Quantize, schedule and lower a model to an ISA program and DRAM image",
     setup_compile}};

}  // namespace
}  // namespace tessel::codegen
