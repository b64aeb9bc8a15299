// `tessel gpu` (the quantized network on the GPU: verified, timed, bytes) and `tessel compare`
// (the accelerator's best simulated schedule vs the GPU, side by side).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cuda/device.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/flow.hpp"
#include "compiler/targets/cuda/lower.hpp"
#include "compiler/zoo/load_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/policy.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"
#include "support/version.hpp"

namespace tessel::cuda {
namespace {

using nlohmann::json;

struct GpuOptions {
  std::string model;
  std::string quant_config;
  std::int64_t batch = 1;
  std::int64_t sequence = 0;  ///< transformer tokens (0: the model's default)
  std::string json_path;
  bool dry_run = false;
  bool emulate_only = false;
  bool no_verify = false;
  bool check_all = false;
  bool ncu = false;
  bool profile_once = false;
  int warmup = 3;
  int runs = 20;
  std::string gpu = "";  ///< peak table entry; "" = from the device (h100-sxm without one)
};

/// What `tessel gpu` measured, or why a figure is missing.
struct GpuFigures {
  GpuPlan plan;
  GpuPeaks peaks;
  std::string device;             ///< device name, or "" without one
  std::string unmeasured_reason;  ///< "" when measured
  std::vector<double> run_ms;
  std::vector<double> step_ms;
  std::optional<MeasuredBytes> measured_bytes;
  std::string measured_bytes_reason;
  std::string verification = "not run";  ///< "bit-exact", or the first mismatch
  bool mismatch = false;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

quant::QuantConfig quant_config(const std::string& path) {
  return path.empty() ? quant::QuantConfig{} : quant::load_quant_config(path);
}

GpuPlan plan_or_throw(const GpuOptions& o, ir::Graph* graph_out) {
  const std::string& model = o.model;
  auto graph = quantized_model(model, o.batch, quant_config(o.quant_config), o.sequence);
  if (!graph) throw_input_error({model, 0, 0}, "", graph.reason());
  auto plan = lower_to_gpu(graph.value());
  if (!plan) throw_input_error({model, 0, 0}, "", plan.reason());
  if (graph_out) *graph_out = std::move(graph.value());
  return std::move(plan.value());
}

/// Compares `got` (tensor -> value) with the golden executor's values of the same tensors.
std::string compare_with_golden(const ir::Graph& graph,
                                const std::map<std::string, cpu::TensorData>& inputs,
                                const std::map<std::string, cpu::TensorData>& got, bool* mismatch) {
  cpu::Executor golden(graph);
  cpu::RunOptions options;
  std::map<std::string, cpu::TensorData> expected;
  options.observer = [&](const std::string& name, const cpu::TensorData& v) -> Status {
    if (got.count(name)) expected.emplace(name, v);
    return {};
  };
  auto r = golden.run(inputs, options);
  if (!r) {
    *mismatch = true;
    return "golden executor failed: " + r.reason();
  }
  std::size_t compared = 0;
  for (const auto& [name, value] : got) {
    if (!expected.count(name)) continue;
    const auto want = expected.at(name).to_i32(), have = value.to_i32();
    for (std::size_t i = 0; i < want.size(); ++i)
      if (i >= have.size() || have[i] != want[i]) {
        *mismatch = true;
        return "MISMATCH in %" + name + " at element " + std::to_string(i) + ": " +
               std::to_string(i < have.size() ? have[i] : 0) + " vs golden " +
               std::to_string(want[i]);
      }
    ++compared;
  }
  *mismatch = false;
  return "bit-exact (" + std::to_string(compared) + " tensors, batch " +
         std::to_string(inputs.begin()->second.shape()[0]) + ")";
}

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "tessel" : p.string();
}

std::string find_ncu() {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (std::filesystem::exists(std::filesystem::path(dir) / "ncu"))
        return (std::filesystem::path(dir) / "ncu").string();
  }
  if (std::filesystem::exists("/usr/local/cuda/bin/ncu")) return "/usr/local/cuda/bin/ncu";
  return "";
}

/// Re-runs this command under Nsight Compute for one execution of the plan.
Result<MeasuredBytes> ncu_bytes(const GpuOptions& o) {
  const std::string ncu = find_ncu();
  if (ncu.empty()) return fail("ncu not found (PATH, /usr/local/cuda/bin)");
  std::string cmd = "'" + ncu +
                    "' --csv --print-units base --metrics "
                    "dram__bytes_read.sum,dram__bytes_write.sum '" +
                    self_exe() + "' gpu --profile-once --model '" + o.model + "' --batch " +
                    std::to_string(o.batch) + " --seq " + std::to_string(o.sequence);
  if (!o.quant_config.empty()) cmd += " --quant '" + o.quant_config + "'";
  cmd += " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return fail("could not start " + ncu);
  std::string out;
  std::array<char, 4096> chunk{};
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe.get()))
    out.append(chunk.data(), n);
  auto m = parse_ncu_csv(out);
  if (!m) return fail(m.reason() + " (ncu output: " + out.substr(0, 300) + ")");
  return m;
}

/// Plans, and (unless dry) runs and verifies on the device. `graph` receives the quantized graph.
GpuFigures measure(const GpuOptions& o) {
  GpuFigures f;
  ir::Graph graph;
  f.plan = plan_or_throw(o, &graph);
  f.peaks = gpu_peaks(o.gpu.empty() ? "h100-sxm" : o.gpu).value();
  const std::map<std::string, cpu::TensorData> inputs = default_inputs(f.plan);
  const cpu::TensorData& input = inputs.at(f.plan.input_tensor);
  if (o.emulate_only) {
    auto got = emulate(f.plan, inputs, o.check_all);
    if (!got) throw_input_error({o.model, 0, 0}, "", got.reason());
    f.verification = "emulator " + compare_with_golden(graph, inputs, got.value(), &f.mismatch);
    f.unmeasured_reason = "host emulation (--emulate): no timing";
    return f;
  }
  if (o.dry_run) {
    f.unmeasured_reason = "dry run";
    return f;
  }
  auto info = device::info();
  if (!info) {
    f.unmeasured_reason = info.reason();
    return f;
  }
  f.device = info.value().name;
  if (o.gpu.empty()) f.peaks = peaks_for_device(f.device);
  device::RunOptions ro;
  ro.warmup_runs = o.profile_once ? 0 : o.warmup;
  ro.timed_runs = o.profile_once ? 1 : o.runs;
  ro.per_step = !o.profile_once;
  ro.read_all = o.check_all;
  for (std::size_t k = 1; k < f.plan.inputs.size(); ++k)
    ro.more_inputs.push_back(input_values(inputs.at(f.plan.inputs[k].tensor)));
  auto raw = device::run(f.plan, input_values(input), ro);
  if (!raw) throw_input_error({o.model, 0, 0}, "", "GPU run failed: " + raw.reason());
  f.run_ms = raw.value().run_ms;
  f.step_ms = raw.value().step_ms;
  if (o.profile_once) return f;
  std::map<std::string, cpu::TensorData> got;
  for (const auto& out : f.plan.outputs)
    got.emplace(
        out.tensor,
        gather_output(f.plan, out,
                      raw.value().buffers[static_cast<std::size_t>(out.view.buffer)].data()));
  if (o.check_all)
    for (std::size_t i = 0; i < f.plan.buffers.size(); ++i) {
      const Buffer& b = f.plan.buffers[i];
      if (b.is_f32_input || b.internal || got.count(b.tensor)) continue;
      got.emplace(b.tensor, buffer_tensor(f.plan, static_cast<int>(i), {b.n, b.c, b.h, b.w},
                                          raw.value().buffers[i].data()));
    }
  if (!o.no_verify) f.verification = compare_with_golden(graph, inputs, got, &f.mismatch);
  if (o.ncu) {
    auto m = ncu_bytes(o);
    if (m)
      f.measured_bytes = m.value();
    else
      f.measured_bytes_reason = m.reason();
  } else {
    f.measured_bytes_reason = "not requested (--ncu)";
  }
  return f;
}

json figures_json(const GpuOptions& o, const GpuFigures& f) {
  const KernelBytes b = f.plan.bytes();
  json j;
  j["model"] = o.model;
  j["batch"] = o.batch;
  j["sequence"] = o.sequence;
  j["tool_version"] = std::string(version());
  j["device"] = f.device.empty() ? json(nullptr) : json(f.device);
  j["peaks"] = {{"name", f.peaks.name},
                {"int8_tensor_tops", f.peaks.int8_tensor_tops},
                {"dp4a_tops", f.peaks.dp4a_tops},
                {"dram_gbytes_per_s", f.peaks.dram_gbytes_per_s}};
  j["kernels"] = f.plan.steps.size();
  j["macs"] = f.plan.macs();
  j["dram_bytes_analytical"] = {{"activations_read", b.activations_read},
                                {"weights_read", b.weights_read},
                                {"activations_written", b.activations_written},
                                {"total", b.total()}};
  j["bytes_per_mac_analytical"] = static_cast<double>(b.total()) /
                                  static_cast<double>(std::max<std::int64_t>(1, f.plan.macs()));
  j["roofline_ms_int8_tensor"] =
      roofline_ms(f.plan.macs(), b.total(), f.peaks.int8_tensor_tops, f.peaks.dram_gbytes_per_s);
  j["roofline_ms_dp4a"] =
      roofline_ms(f.plan.macs(), b.total(), f.peaks.dp4a_tops, f.peaks.dram_gbytes_per_s);
  if (f.run_ms.empty()) {
    j["latency_ms"] = nullptr;
    j["unmeasured_reason"] = f.unmeasured_reason;
  } else {
    j["latency_ms"] = {{"median", median(f.run_ms)},
                       {"min", *std::min_element(f.run_ms.begin(), f.run_ms.end())},
                       {"max", *std::max_element(f.run_ms.begin(), f.run_ms.end())},
                       {"runs", f.run_ms.size()}};
  }
  if (f.measured_bytes)
    j["dram_bytes_measured"] = {{"read", f.measured_bytes->read},
                                {"written", f.measured_bytes->written},
                                {"total", f.measured_bytes->total()}};
  else
    j["dram_bytes_measured"] = nullptr;
  j["verification"] = f.verification;
  json steps = json::array();
  for (std::size_t i = 0; i < f.plan.steps.size(); ++i) {
    const Step& s = f.plan.steps[i];
    json row = {{"kind", step_kind_name(s)},
                {"ops", s.ops},
                {"grid", s.launch.grid},
                {"block", s.launch.block},
                {"shared_bytes", s.launch.shared_bytes},
                {"macs", s.macs},
                {"dram_bytes", s.bytes.total()}};
    if (i < f.step_ms.size()) row["ms"] = f.step_ms[i];
    steps.push_back(row);
  }
  j["steps"] = steps;
  return j;
}

void print_figures(const GpuOptions& o, const GpuFigures& f, bool plan_table) {
  if (plan_table) std::cout << describe(f.plan);
  const KernelBytes b = f.plan.bytes();
  const double roof_tc =
      roofline_ms(f.plan.macs(), b.total(), f.peaks.int8_tensor_tops, f.peaks.dram_gbytes_per_s);
  const double roof_dp4a =
      roofline_ms(f.plan.macs(), b.total(), f.peaks.dp4a_tops, f.peaks.dram_gbytes_per_s);
  std::cout << std::fixed << std::setprecision(3);
  std::cout << "\n"
            << o.model << " batch " << o.batch << " int8 on "
            << (f.device.empty() ? "(no device)" : f.device) << ", peaks " << f.peaks.name << "\n";
  std::cout << "kernels            " << f.plan.steps.size() << "\n";
  std::cout << "MACs               " << f.plan.macs() << "\n";
  std::cout << "DRAM bytes (model) " << b.total() << "  (" << std::setprecision(4)
            << static_cast<double>(b.total()) /
                   static_cast<double>(std::max<std::int64_t>(1, f.plan.macs()))
            << " B/MAC)\n"
            << std::setprecision(3);
  std::cout << "DRAM bytes (ncu)   "
            << (f.measured_bytes
                    ? std::to_string(f.measured_bytes->total())
                    : "n/a: " + (f.measured_bytes_reason.empty() ? f.unmeasured_reason
                                                                 : f.measured_bytes_reason))
            << "\n";
  std::cout << "roofline           " << roof_tc * 1e3 << " us (int8 tensor cores), "
            << roof_dp4a * 1e3 << " us (dp4a)\n";
  if (f.run_ms.empty()) {
    std::cout << "latency            n/a: " << f.unmeasured_reason << "\n";
  } else {
    const double med = median(f.run_ms);
    std::cout << "latency            " << med << " ms median of " << f.run_ms.size() << " (min "
              << *std::min_element(f.run_ms.begin(), f.run_ms.end()) << ", max "
              << *std::max_element(f.run_ms.begin(), f.run_ms.end()) << ")\n";
    std::cout << "achieved           " << 2.0 * static_cast<double>(f.plan.macs()) / (med * 1e9)
              << " TOPS; gap to roofline x" << med / roof_tc << " (tensor cores), x"
              << med / roof_dp4a << " (dp4a)\n";
  }
  std::cout << "verification       " << f.verification << "\n";
  if (!f.step_ms.empty()) {
    std::vector<std::size_t> order(f.step_ms.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t c) { return f.step_ms[a] > f.step_ms[c]; });
    std::cout << "slowest kernels:\n";
    for (std::size_t k = 0; k < std::min<std::size_t>(8, order.size()); ++k) {
      const Step& s = f.plan.steps[order[k]];
      std::cout << "  " << std::setw(4) << order[k] << " " << std::setw(12) << step_kind_name(s)
                << " " << std::setw(9) << f.step_ms[order[k]] << " ms  " << s.name << "\n";
    }
  }
}

void write_json(const std::string& path, const json& j) {
  if (path.empty()) return;
  if (path == "-") {
    std::cout << tessel::json_text(j, 2) << '\n';
    return;
  }
  files::write_file(path, tessel::json_text(j, 2) + '\n');
}

void add_common(CLI::App& command, GpuOptions& o) {
  cli::add_model_option(command, o.model);
  command.add_option("--quant", o.quant_config, "Quantization YAML (default: the defaults)");
  command.add_option("--batch", o.batch, "Batch size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--seq", o.sequence, "Tokens of a transformer zoo model (0: its default)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.add_option("--json", o.json_path, "Write the report as JSON ('-': stdout)");
  command.add_option("--gpu", o.gpu,
                     "Peak table entry: h100-sxm | h100-pcie | h200 "
                     "(default: from the device, h100-sxm without one)");
  command.add_option("--runs", o.runs, "Timed runs (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  command.add_option("--warmup", o.warmup, "Untimed runs first")->capture_default_str();
}

cli::Runner setup_gpu(CLI::App& command) {
  auto o = std::make_shared<GpuOptions>();
  add_common(command, *o);
  command.add_flag("--dry-run", o->dry_run,
                   "Print the launch plan and analytical bytes only (no GPU needed)");
  command.add_flag("--emulate", o->emulate_only,
                   "Run the plan on the host emulator and verify it (no GPU needed)");
  command.add_flag("--check-all", o->check_all,
                   "Verify every materialized tensor, not only the outputs");
  command.add_flag("--no-verify", o->no_verify, "Skip the golden-executor comparison");
  command.add_flag("--ncu", o->ncu, "Measure DRAM bytes with Nsight Compute (ncu)");
  command.add_flag("--profile-once", o->profile_once, "Internal: one untimed-warmup run for ncu")
      ->group("");
  return [o]() {
    if (o->runs < 20 && !o->profile_once)
      std::cerr << "note: --runs " << o->runs << " is below the 20 the report convention asks\n";
    GpuFigures f = measure(*o);
    if (o->profile_once) return f.run_ms.empty() ? 1 : 0;
    if (!o->dry_run && !o->emulate_only && f.run_ms.empty()) {
      std::cerr << "tessel gpu: " << f.unmeasured_reason
                << "\n(use --dry-run for the launch plan and analytical bytes, --emulate for a "
                   "host run of the plan)\n";
      return 1;
    }
    print_figures(*o, f, o->dry_run || o->emulate_only);
    write_json(o->json_path, figures_json(*o, f));
    return f.mismatch ? 1 : 0;
  };
}

// ---- compare --------------------------------------------------------------------------------

struct CompareOptions {
  GpuOptions gpu;
  std::string hw = "npc19-deepfusion";
  std::vector<std::string> policies;
};

/// The accelerator column: the fastest schedule over the policies, or the reason none ran
/// (`tried` lists every policy's cycles or error).
std::optional<sched::Schedule> best_schedule(const CompareOptions& o, const HwConfig& config,
                                             json& tried, std::string& why_none,
                                             double& energy_pj) {
  zoo::LoadOptions load;
  load.zoo.batch = o.gpu.batch;
  load.zoo.sequence = o.gpu.sequence;
  const ir::Graph graph = zoo::load_model(o.gpu.model, load);
  std::vector<std::string> names = o.policies;
  if (names.empty())
    for (const auto& p : sched::policies()) names.push_back(p.name);
  std::optional<sched::Schedule> best;
  for (const auto& name : names) {
    auto r = sched::schedule_graph(graph, config, name, sched::Objective::Latency);
    if (!r) {
      tried.push_back({{"policy", name}, {"error", r.reason()}});
      std::cerr << "policy " << name << ": " << r.reason() << "\n";
      if (why_none.empty()) why_none = r.reason();
      continue;
    }
    const auto& s = r.value().schedule;
    tried.push_back({{"policy", name}, {"cycles", s.cycles}, {"dram_bytes", s.traffic.total()}});
    if (!best || s.cycles < best->cycles) {
      best = s;
      energy_pj = sched::predict_energy(s, r.value().net, config).total.total_pj();
    }
  }
  return best;
}

/// `tessel compare`: both columns side by side; a column that could not be computed reads
/// "n/a: why" (exit 1 when the accelerator's did not, or on a GPU mismatch).
int run_compare(const CompareOptions& o) {
  const HwConfig config = load_hw_config(resolve_hw_config(o.hw));
  json tried = json::array();
  std::string no_schedule;
  double energy_pj = 0;
  const std::optional<sched::Schedule> best =
      best_schedule(o, config, tried, no_schedule, energy_pj);
  GpuFigures f = measure(o.gpu);
  const KernelBytes b = f.plan.bytes();
  const double gpu_roof =
      roofline_ms(f.plan.macs(), b.total(), f.peaks.int8_tensor_tops, f.peaks.dram_gbytes_per_s);
  // The reason without its detail ("no CUDA device", "built without CUDA"); the JSON keeps it.
  const std::string why = f.unmeasured_reason.substr(
      0, std::min(f.unmeasured_reason.find(':'), f.unmeasured_reason.find(" (")));
  const std::string na = "n/a: " + (why.empty() ? std::string("-") : why);
  const std::string acc_na = "n/a: no schedule";
  const auto num = [](double v, int precision) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
  };
  const double to_ms = 1.0 / (config.clock_mhz * 1e3);
  const double gpu_ms = f.run_ms.empty() ? 0 : median(f.run_ms);
  std::cout << o.gpu.model << " batch " << o.gpu.batch << ": accelerator " << config.name
            << " (simulated by the scheduler's cost model"
            << (best ? ", policy " + best->policy : ": " + no_schedule) << ") vs GPU "
            << (f.device.empty() ? f.peaks.name + " (no device)" : f.device) << "\n\n";
  std::cout << std::left << std::setw(28) << "" << std::setw(22) << "accelerator"
            << "GPU int8\n";
  const auto row = [&](const std::string& what, const std::string& a, const std::string& g) {
    std::cout << std::left << std::setw(28) << what << std::setw(22) << a << g << "\n";
  };
  const auto acc = [&](auto&& figure) { return best ? figure(*best) : acc_na; };
  row("MACs", acc([](const sched::Schedule& s) { return std::to_string(s.macs); }),
      std::to_string(f.plan.macs()));
  // Each GPU figure says where it comes from: measured on a device, or analytical (the
  // roofline of the plan's MACs and per-kernel bytes) when none ran.
  row("latency ms", acc([&](const sched::Schedule& s) { return num(s.cycles * to_ms, 3); }),
      f.run_ms.empty() ? num(gpu_roof, 3) + " (analytical: roofline; " + na + ")"
                       : num(gpu_ms, 3) + " (measured)");
  row("roofline ms",
      acc([&](const sched::Schedule& s) { return num(s.roofline_cycles * to_ms, 3); }),
      num(gpu_roof, 3) + " (int8 tensor cores)");
  row("gap to own roofline", acc([&](const sched::Schedule& s) {
        return "x" + num(static_cast<double>(s.cycles) /
                             static_cast<double>(std::max<std::int64_t>(1, s.roofline_cycles)),
                         2);
      }),
      f.run_ms.empty() ? na : "x" + num(gpu_ms / gpu_roof, 2));
  row("DRAM bytes (model)",
      acc([](const sched::Schedule& s) { return std::to_string(s.traffic.total()); }),
      std::to_string(b.total()) + " (analytical, per kernel)");
  row("DRAM bytes (measured)", "-",
      f.measured_bytes ? std::to_string(f.measured_bytes->total()) : na);
  row("bytes per MAC", acc([&](const sched::Schedule& s) {
        return num(static_cast<double>(s.traffic.total()) / static_cast<double>(s.macs), 4);
      }),
      num(static_cast<double>(b.total()) /
              static_cast<double>(std::max<std::int64_t>(1, f.plan.macs())),
          4));
  row("energy uJ", acc([&](const sched::Schedule&) { return num(energy_pj * 1e-6, 3); }),
      "n/a: no GPU energy model");
  row("compulsory bytes",
      acc([](const sched::Schedule& s) { return std::to_string(s.compulsory_bytes); }), "-");
  row("kernels / groups",
      acc([](const sched::Schedule& s) { return std::to_string(s.groups.size()); }),
      std::to_string(f.plan.steps.size()));
  row("verification", "-", f.verification);

  json j;
  j["model"] = o.gpu.model;
  j["batch"] = o.gpu.batch;
  j["sequence"] = o.gpu.sequence;
  j["tool_version"] = std::string(version());
  j["accelerator"] = {{"config", config.name},
                      {"source", "scheduler cost model (scheduler/driver.hpp), objective latency"},
                      {"policies", tried}};
  if (best) {
    j["accelerator"]["policy"] = best->policy;
    j["accelerator"]["cycles"] = best->cycles;
    j["accelerator"]["clock_mhz"] = config.clock_mhz;
    j["accelerator"]["latency_ms"] = best->cycles * to_ms;
    j["accelerator"]["roofline_ms"] = best->roofline_cycles * to_ms;
    j["accelerator"]["macs"] = best->macs;
    j["accelerator"]["dram_bytes"] = best->traffic.total();
    j["accelerator"]["compulsory_bytes"] = best->compulsory_bytes;
    j["accelerator"]["energy_pj"] = energy_pj;
  } else {
    j["accelerator"]["error"] = "no scheduler policy succeeded: " + no_schedule;
  }
  j["gpu"] = figures_json(o.gpu, f);
  j["gpu"]["latency_source"] = f.run_ms.empty() ? "analytical (roofline, no run)" : "measured";
  j["gpu"]["latency_ms_shown"] = f.run_ms.empty() ? gpu_roof : gpu_ms;
  write_json(o.gpu.json_path, j);
  return f.mismatch || !best ? 1 : 0;
}

cli::Runner setup_compare(CLI::App& command) {
  auto o = std::make_shared<CompareOptions>();
  add_common(command, o->gpu);
  cli::add_hw_option(command, o->hw, "Accelerator config");
  command.add_option("--policy", o->policies,
                     "Scheduler policies to try (default: all); the fastest is reported");
  return [o]() { return run_compare(*o); };
}

const cli::Registration kGpu{
    {"gpu", "Run the quantized model on the GPU: verify vs the golden executor, time, bytes",
     setup_gpu}};
const cli::Registration kCompare{
    {"compare", "Accelerator (best simulated schedule) vs GPU: latency, DRAM bytes, rooflines",
     setup_compare}};

}  // namespace
}  // namespace tessel::cuda
