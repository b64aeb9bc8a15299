// Bindings of the pipeline: quantize, schedule, compile, simulate and the quantized infer.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "codegen/codegen.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/zoo/load_model.hpp"
#include "isa/assembler.hpp"
#include "python/src/bindings.hpp"
#include "python/src/cancellable.hpp"
#include "python/src/convert.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/policy.hpp"
#include "scheduler/schedule_json.hpp"
#include "sim/simulator.hpp"

namespace tessel::py_api {
namespace {

/// What one simulation produced (tessel.SimReport).
struct SimResult {
  sim::SimReport report;
  HwConfig config;
  std::optional<bool> bit_exact;
  std::string mismatch;
  std::map<std::string, std::vector<float>> outputs;
  std::map<std::string, ir::Shape> output_shapes;
};

// SystemC allows one simulation context per process at a time (sim/simulator.hpp).
std::mutex g_simulate_mutex;

// A model argument: a tessel.Graph, or a zoo name / model path loaded here.
std::shared_ptr<ir::Graph> graph_from(py::handle model, bool with_weights) {
  if (py::isinstance<ir::Graph>(model)) return model.cast<std::shared_ptr<ir::Graph>>();
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
    zoo::LoadOptions options;
    options.zoo.with_weights = with_weights;
    const auto name = py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>();
    return load_cancellable(name, options);
  }
  throw ArgumentError("model: expected a tessel.Graph, a zoo name or a model path, got " +
                      py::type::of(model).attr("__name__").cast<std::string>());
}

// The quantization config: a YAML path, a dict in that schema, or the defaults with the
// config's activation width (as `tessel compile` without --quant).
quant::QuantConfig quant_config_from(py::handle config, const std::optional<HwConfig>& hw) {
  if (config.is_none()) {
    quant::QuantConfig defaults;
    if (hw) defaults.bits = hw->matrix.input_bits;
    return defaults;
  }
  if (py::isinstance<py::dict>(config)) {
    auto values = py::reinterpret_borrow<py::dict>(config);
    quant::QuantConfig parsed =
        quant::parse_quant_config(yaml_text(to_yaml_node(values, "")), "<dict>");
    if (!values.contains("bits") && hw) parsed.bits = hw->matrix.input_bits;
    return parsed;
  }
  return quant::load_quant_config(
      py::str(py::module_::import("os").attr("fspath")(config)).cast<std::string>());
}

sched::Objective objective_from(const std::string& text) {
  auto objective = sched::parse_objective(text);
  if (!objective.ok()) throw ArgumentError("objective: " + objective.reason());
  return objective.value();
}

// `what`: the call the user made, for the note of a KeyboardInterrupt (compile quantizes too).
QuantizedModel quantize(py::handle model, py::handle hw, const std::string& policy,
                        py::handle config, std::uint64_t input_seed,
                        const char* what = "tessel.quantize") {
  std::optional<HwConfig> hw_config;
  if (!hw.is_none()) hw_config = config_from(hw);
  const quant::QuantConfig qconfig = quant_config_from(config, hw_config);
  const auto graph = graph_from(model, true);
  check_has_weights(*graph);
  auto prepared = run_cancellable(what, [&] {
    return pipeline::prepare_model_for_policy(*graph, qconfig, input_seed, policy);
  });
  auto value = value_or_raise(std::move(prepared), graph->name());
  return {std::make_shared<const pipeline::PreparedModel>(std::move(value)), policy, qconfig.bits};
}

Schedule schedule(py::handle model, py::handle hw, const std::string& policy,
                  const std::string& objective, const sched::MapSpaceFeatures& features) {
  const HwConfig config = config_from(hw);
  const sched::Objective goal = objective_from(objective);
  const auto graph = graph_from(model, false);  // the scheduler reads shapes only
  auto scheduled = run_cancellable("tessel.schedule", [&]() -> Result<sched::ScheduledNet> {
    // The graph the policy compiles, as `tessel schedule` schedules it.
    auto prepared = passes::graph_for_policy(*graph, policy);
    if (!prepared.ok()) return prepared.failure();
    auto r = sched::schedule_graph(prepared.value(), config, policy, goal, features);
    if (r.ok()) sched::add_predicted_fetch(r.value());  // as `tessel schedule` reports it
    return r;
  });
  return {std::make_shared<const sched::ScheduledNet>(value_or_raise(std::move(scheduled))),
          config};
}

// The same form a policy compiles (BatchNorm lowering, pools before concat).
bool same_form(const std::string& a, const std::string& b) {
  return passes::batchnorm_lowering_for_policy(a) == passes::batchnorm_lowering_for_policy(b) &&
         passes::pools_before_concat_for_policy(a) == passes::pools_before_concat_for_policy(b);
}

Program compile(py::handle model, py::handle hw, const std::string& policy,
                const std::string& objective, py::handle quant, std::uint64_t input_seed) {
  Program program;
  program.config = config_from(hw);
  program.objective = objective_from(objective);
  if (py::isinstance<QuantizedModel>(model)) {
    const auto& q = model.cast<const QuantizedModel&>();
    if (!same_form(q.policy, policy))
      throw ArgumentError("model: quantized for policy '" + q.policy + "', whose graph form '" +
                          policy + "' does not share; quantize(model, policy='" + policy +
                          "') first");
    program.model = q.model;
  } else {
    program.model =
        quantize(model, py::cast(program.config), policy, quant, input_seed, "tessel.compile")
            .model;
  }
  pipeline::RunOptions options;
  options.objective = program.objective;
  auto compiled = run_cancellable("tessel.compile", [&] {
    return pipeline::compile_policy(*program.model, program.config, policy, options);
  });
  program.result = std::make_shared<pipeline::PolicyResult>(value_or_raise(std::move(compiled)));
  return program;
}

SimResult simulate(const Program& program, bool timing_only, const std::string& trace) {
  pipeline::RunOptions options;
  options.timing_only = timing_only;
  options.trace_path = trace;
  options.objective = program.objective;
  SimResult out;
  out.config = program.config;
  // On Ctrl-C the simulator stops at its next poll and simulate_policy returns before it
  // changes the Program; a partial trace is removed (sim::simulate).
  const Status status = run_cancellable("tessel.simulate", [&]() -> Status {
    const std::lock_guard lock(g_simulate_mutex);
    pipeline::PolicyResult& r = *program.result;
    Status s = pipeline::simulate_policy(*program.model, program.config, r, options);
    out.report = r.report;
    out.bit_exact = r.bit_exact;
    out.mismatch = r.mismatch;
    out.outputs = std::move(r.outputs);
    r.outputs.clear();
    return s;
  });
  raise_if_failed(status);
  for (const auto& [name, values] : out.outputs)
    if (program.model->prepared.has_tensor(name))
      out.output_shapes[name] = program.model->prepared.tensor(name).shape;
  return out;
}

py::array float_array(const std::vector<float>& values, const ir::Shape& shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  if (dims.empty()) dims.push_back(static_cast<py::ssize_t>(values.size()));
  py::array_t<float> out(dims);
  std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(float));
  return out;
}

void bind_schedule_class(py::module_& m) {
  using S = Schedule;
  // The JSON of `tessel schedule --json`: the schedule and its predicted energy.
  auto json = [](const S& s) {
    auto j = sched::to_json(s.scheduled->schedule, s.scheduled->net, s.scheduled->machine);
    sched::add_predicted_energy(
        j, sched::predict_energy(s.scheduled->schedule, s.scheduled->net, s.config), s.config);
    return j;
  };
  py::class_<S>(m, "Schedule", "A checked schedule: fused groups, tiles, buffers, predicted cost.")
      .def_property_readonly(
          "model", [](const S& s) { return s.scheduled->schedule.model; }, "The model's name.")
      .def_property_readonly(
          "config", [](const S& s) { return s.scheduled->schedule.config; },
          "The name of the config it was made for.")
      .def_property_readonly(
          "policy", [](const S& s) { return s.scheduled->schedule.policy; },
          "The policy that made it (see policies()).")
      .def_property_readonly(
          "objective", [](const S& s) { return s.scheduled->schedule.objective; },
          "What the search minimised: 'bytes', 'latency' or 'energy'.")
      .def_property_readonly(
          "cycles", [](const S& s) { return s.scheduled->schedule.cycles; },
          "The cycles the scheduler predicts for the whole network.")
      .def_property_readonly(
          "roofline_cycles", [](const S& s) { return s.scheduled->schedule.roofline_cycles; },
          "max(compute, compulsory DRAM bytes / bandwidth) in cycles: the roofline bound.")
      .def_property_readonly(
          "lower_bound_cycles", [](const S& s) { return s.scheduled->schedule.lower_bound_cycles; },
          "A lower bound on any schedule's cycles (docs/scheduler.md, the bounds).")
      .def_property_readonly(
          "compulsory_bytes", [](const S& s) { return s.scheduled->schedule.compulsory_bytes; },
          "DRAM bytes no schedule avoids: weights, requant tables, inputs, outputs, once each.")
      .def_property_readonly(
          "macs", [](const S& s) { return s.scheduled->schedule.macs; },
          "Multiply-accumulates of the network.")
      .def_property_readonly(
          "search_seconds", [](const S& s) { return s.scheduled->schedule.search_seconds; },
          "Wall seconds the policy's search took.")
      .def_property_readonly(
          "dram_bytes", [json](const S& s) { return to_python(json(s)["dram_bytes"]); },
          "DRAM bytes by kind: read, write, total, weights, activations_in, activations_out.")
      .def_property_readonly(
          "bounds",
          [json](const S& s) {
            const auto j = json(s);
            py::dict out;
            for (const char* key : {"compulsory_bytes", "roofline_cycles", "lower_bound_cycles",
                                    "lower_bound_barrier", "lower_bound_tensor"})
              out[key] = to_python(j[key]);
            return out;
          },
          "The bounds the schedule states beside its figures (docs/scheduler.md).")
      .def_property_readonly(
          "groups", [json](const S& s) { return to_python(json(s)["groups"]); },
          "One dict per fused group (ops, tiling, halo, traffic, cycles, buffers).")
      .def(
          "to_json", [json](const S& s, int indent) { return json(s).dump(indent); },
          py::arg("indent") = 1, "The JSON of `tessel schedule --json` (same text).")
      .def(
          "to_dict", [json](const S& s) { return to_python(json(s)); }, "to_json() as a dict.")
      .def(
          "table", [](const S& s) { return sched::format_table(*s.scheduled); },
          "The table `tessel schedule` prints.")
      .def("__repr__", [](const S& s) {
        const auto& x = s.scheduled->schedule;
        return "<tessel.Schedule " + x.model + " on " + x.config + ", " + x.policy + ": " +
               std::to_string(x.groups.size()) + " groups, " + std::to_string(x.cycles) +
               " cycles>";
      });
}

void bind_program_classes(py::module_& m) {
  py::class_<QuantizedModel>(m, "QuantizedModel",
                             "A model quantized for one policy's graph form, with its golden "
                             "outputs on the default input.")
      .def_property_readonly(
          "name", [](const QuantizedModel& q) { return q.model->name; }, "The model's name.")
      .def_readonly("policy", &QuantizedModel::policy,
                    "The policy whose graph form it is in (compile() needs the same form).")
      .def_readonly("bits", &QuantizedModel::bits,
                    "The activation width it was realized at (8 or 16).")
      .def_property_readonly(
          "graph",
          [](const QuantizedModel& q) { return std::make_shared<ir::Graph>(q.model->quantized); },
          "The quantized graph (a copy).")
      .def_property_readonly(
          "float_graph",
          [](const QuantizedModel& q) { return std::make_shared<ir::Graph>(q.model->prepared); },
          "The float graph it was quantized from (BatchNorm lowered; a copy).")
      .def_property_readonly(
          "quantize_seconds", [](const QuantizedModel& q) { return q.model->quantize_seconds; },
          "Wall seconds of calibration and realization.")
      .def("__repr__", [](const QuantizedModel& q) {
        return "<tessel.QuantizedModel " + q.model->name + " for " + q.policy + ", int" +
               std::to_string(q.bits) + ">";
      });

  py::class_<Program>(m, "Program", "A compiled ISA program with its DRAM image.")
      .def_property_readonly(
          "schedule",
          [](const Program& p) {
            return Schedule{std::make_shared<const sched::ScheduledNet>(p.result->scheduled),
                            p.config};
          },
          "The schedule it was compiled from.")
      .def_property_readonly(
          "config", [](const Program& p) { return p.config; }, "The config it runs on.")
      .def_property_readonly(
          "policy", [](const Program& p) { return p.result->policy; }, "The policy it was made by.")
      .def_property_readonly(
          "instructions", [](const Program& p) { return p.result->words.size(); },
          "Number of ISA instructions.")
      .def_property_readonly(
          "dram_image_bytes", [](const Program& p) { return p.result->compiled.dram.size(); },
          "Size of its DRAM image (weights, tables, input, activation space) in bytes.")
      .def(
          "tasm",
          [](const Program& p) {
            std::vector<std::string> names;
            for (const auto& pad : p.config.scratchpads) names.push_back(pad.name);
            return isa::disassemble(p.result->compiled.program, names);
          },
          "The program as .tasm text (program.tasm of the compile folder).")
      .def(
          "compile_json",
          [](const Program& p) {
            return to_python(codegen::compile_json(p.result->compiled, p.result->scheduled));
          },
          "compile.json: the DRAM layout, instructions per group, bytes moved.")
      .def(
          "write",
          [](const Program& p, const std::string& folder) {
            raise_if_failed(codegen::write_compile_folder(p.result->compiled, p.result->scheduled,
                                                          p.config, folder));
          },
          py::arg("folder"), "Writes the compile folder `tessel sim DIR` reads.")
      .def("__repr__", [](const Program& p) {
        return "<tessel.Program " + p.model->name + " on " + p.config.name + ", " +
               p.result->policy + ": " + std::to_string(p.result->words.size()) + " instructions>";
      });

  py::class_<SimResult>(m, "SimReport", "What one simulation measured (docs/sim.md).")
      .def_property_readonly(
          "cycles", [](const SimResult& r) { return r.report.cycles; },
          "Simulated cycles of the whole program.")
      .def_property_readonly(
          "timing_only", [](const SimResult& r) { return r.report.timing_only; },
          "Whether it ran without data (simulate(timing_only=True)).")
      .def_property_readonly(
          "bit_exact", [](const SimResult& r) { return r.bit_exact; },
          "Full mode: every output equals the golden executor's; None in "
          "timing-only mode.")
      .def_readonly(
          "mismatch", &SimResult::mismatch,
          "Full mode: the first output element that differs from the golden one; '' when none.")
      .def_property_readonly(
          "macs", [](const SimResult& r) { return r.report.macs; },
          "Multiply-accumulates the matrix unit performed.")
      .def_property_readonly(
          "mac_utilisation", [](const SimResult& r) { return r.report.mac_utilisation; },
          "macs / (cycles x macs_per_cycle).")
      .def_property_readonly(
          "dram_bytes",
          [](const SimResult& r) {
            return to_python(nlohmann::json::parse(sim::report_json(r.report, r.config))["dram"]);
          },
          "The report's `dram` object: bytes read/written, by kind.")
      .def_property_readonly(
          "outputs",
          [](const SimResult& r) {
            py::dict out;
            for (const auto& [name, values] : r.outputs) {
              const auto shape = r.output_shapes.find(name);
              out[py::str(name)] =
                  float_array(values, shape == r.output_shapes.end() ? ir::Shape{} : shape->second);
            }
            return out;
          },
          "Full mode: the network outputs read back from DRAM, dequantized (float32).")
      .def(
          "to_json", [](const SimResult& r) { return sim::report_json(r.report, r.config); },
          "The JSON of `tessel sim --json` (same text).")
      .def(
          "to_dict",
          [](const SimResult& r) {
            return to_python(nlohmann::json::parse(sim::report_json(r.report, r.config)));
          },
          "to_json() as a dict.")
      .def("__repr__", [](const SimResult& r) {
        return "<tessel.SimReport " + std::to_string(r.report.cycles) + " cycles, " +
               std::to_string(r.report.dram.total_bytes()) + " DRAM bytes>";
      });
}

}  // namespace

void bind_pipeline(py::module_& m) {
  bind_schedule_class(m);
  bind_program_classes(m);
  m.def(
      "quantize",
      [](py::handle model, py::handle hw, const std::string& policy, py::handle config,
         std::uint64_t input_seed) { return quantize(model, hw, policy, config, input_seed); },
      py::arg("model"), py::arg("hw") = py::none(), py::kw_only(),
      py::arg("policy") = "fusion+reuse", py::arg("config") = py::none(),
      py::arg("input_seed") = 0);
  m.def(
      "schedule",
      [](py::handle model, py::handle hw, const std::string& policy, const std::string& objective,
         bool weight_sweep, bool prefetch, bool tiles_2d, bool s2d_stem, bool fold_activations) {
        sched::MapSpaceFeatures features;
        features.weight_sweep = weight_sweep;
        features.prefetch = prefetch;
        features.column_tiles_every_row = tiles_2d;
        features.space_to_depth_stem = s2d_stem;
        features.fold_activations = fold_activations;
        return schedule(model, hw, policy, objective, features);
      },
      py::arg("model"), py::arg("hw"), py::kw_only(), py::arg("policy") = "fusion+reuse",
      py::arg("objective") = "bytes", py::arg("weight_sweep") = true, py::arg("prefetch") = true,
      py::arg("tiles_2d") = true, py::arg("s2d_stem") = true, py::arg("fold_activations") = true);
  m.def("compile", &compile, py::arg("model"), py::arg("hw"), py::kw_only(),
        py::arg("policy") = "fusion+reuse", py::arg("objective") = "bytes",
        py::arg("quant") = py::none(), py::arg("input_seed") = 0);
  m.def("simulate", &simulate, py::arg("program"), py::kw_only(), py::arg("timing_only") = false,
        py::arg("trace") = "");
  m.def(
      "_infer_quantized",
      [](const QuantizedModel& q, py::handle x) { return run_executor(q.model->quantized, x); },
      py::arg("model"), py::arg("x"));
  m.def(
      "policies",
      [] {
        std::vector<std::string> names;
        for (const auto& p : sched::policies()) names.push_back(p.name);
        return names;
      },
      "The scheduling policies, from layerwise (no fusion) to optimal (docs/scheduler.md).");
}

}  // namespace tessel::py_api
