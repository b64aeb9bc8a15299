// `tessel sim PROGRAM`: run a program (.bin, .tasm or a compile folder) on a config; a compile
// folder also gets output.npy (dequantized network output, after its host ops if any) and
// report.json (per-group rows, host transfer bytes).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/int_ops.hpp"
#include "support/json_text.hpp"
#include "support/npy.hpp"

namespace tessel::sim {
namespace {

struct SimArgs {
  std::string program;
  std::string dram;
  std::string hw;
  std::string trace;
  std::string json;
  std::string dram_out;
  std::uint64_t dram_size = 0;
  std::uint64_t trace_max_events = 1'000'000;
  bool timing_only = false;
  bool timings = false;  ///< print host_seconds per phase
  int threads = 2;       ///< host threads (SimOptions::threads)
  std::string input;     ///< compile folders: a float32 .npy network input
  std::string out;       ///< compile folders: where output.npy and report.json go
};

constexpr std::uint64_t kDefaultDramBytes = 64ull << 20;

/// Every file a run reads; no output may be one of them (support/files.hpp).
std::vector<std::string> g_inputs;

void write_text(const std::string& path, const std::string& text) {
  files::write_file(path, text, g_inputs);
}

void print_summary(const SimReport& report, const HwConfig& config) {
  std::printf("status        %s (%s)\n", report.status(),
              report.timing_only ? "timing-only" : "full");
  std::printf("config        %s (%s)\n", config.name.c_str(), report.config_hash.c_str());
  std::printf("cycles        %llu\n", static_cast<unsigned long long>(report.cycles));
  std::printf("instructions  %llu dispatched, %llu executed\n",
              static_cast<unsigned long long>(report.instructions_dispatched),
              static_cast<unsigned long long>(report.instructions_executed));
  std::printf("dram bytes    read %llu, write %llu, total %llu\n",
              static_cast<unsigned long long>(report.dram.read_bytes()),
              static_cast<unsigned long long>(report.dram.write_bytes()),
              static_cast<unsigned long long>(report.dram.total_bytes()));
  for (std::size_t k = 0; k < kTrafficKindCount; ++k)
    std::printf("  %-12s read %llu, write %llu\n", traffic_kind_name(static_cast<TrafficKind>(k)),
                static_cast<unsigned long long>(report.dram.read_bytes_by_kind[k]),
                static_cast<unsigned long long>(report.dram.write_bytes_by_kind[k]));
  std::printf("engine        busy    wait-dram  wait-token  idle    queue-full\n");
  for (std::size_t e = 0; e < kEngineCount; ++e) {
    const EngineStats& s = report.engines[e];
    std::printf("  %-10s  %-7llu %-10llu %-11llu %-7llu %llu\n", engine_name(e),
                static_cast<unsigned long long>(s.busy_cycles),
                static_cast<unsigned long long>(s.waiting_on_dram_cycles),
                static_cast<unsigned long long>(s.waiting_on_token_cycles),
                static_cast<unsigned long long>(s.idle_cycles),
                static_cast<unsigned long long>(s.queue_full_cycles));
  }
  std::printf("macs          %llu (utilisation %.4f)\n",
              static_cast<unsigned long long>(report.macs), report.mac_utilisation);
  if (report.energy) {
    const EnergyEstimate& e = *report.energy;
    std::printf(
        "energy        %.1f pJ (mac %.1f, sram %.1f, vector %.1f, dram %.1f, leakage %.1f)\n",
        e.total_pj(), e.mac_pj, e.sram_pj, e.vector_pj, e.dram_pj, e.leakage_pj);
    std::printf("edp           %.4g pJ*s, area %.4f mm^2\n", e.edp_pj_s(), e.area_mm2);
  }
  if (report.fault) std::printf("fault         %s\n", report.fault->str().c_str());
}

nlohmann::json read_json(const std::string& path) {
  const std::string text = files::read_file(path, files::kMaxProgramBytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error({path, 0, 0}, "", std::string("not valid JSON: ") + e.what());
  }
}

/// The network input/output entries of a compile folder's compile.json ("io").
struct IoEntry {
  std::string name;
  bool is_input = false;
  std::uint64_t offset = 0;
  std::vector<std::int64_t> shape;  // NCHW (or N x K)
  double scale = 1;
  std::int32_t zero_point = 0;
  bool token_ids = false;  // int32 ids, 4 bytes each, as given (an Embedding's input)
};

std::vector<IoEntry> io_entries(const nlohmann::json& compile, const std::string& path) {
  std::vector<IoEntry> entries;
  if (!compile.contains("io")) return entries;
  try {
    for (const auto& j : compile.at("io")) {
      IoEntry e;
      e.name = j.at("name").get<std::string>();
      e.is_input = j.at("kind").get<std::string>() == "input";
      e.offset = j.at("offset").get<std::uint64_t>();
      e.shape = j.at("shape").get<std::vector<std::int64_t>>();
      e.scale = j.at("scale").get<double>();
      e.zero_point = j.at("zero_point").get<std::int32_t>();
      e.token_ids = j.value("token_ids", false);
      entries.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_input_error({path, 0, 0}, "io", e.what());
  }
  return entries;
}

/// NCHW (or N x K) index order of a tensor stored NHWC: element i of the NCHW order lives at
/// NHWC element nhwc_index(i). Shapes other than 4-D are stored as N x C x 1 x 1.
std::int64_t nhwc_index(const std::vector<std::int64_t>& shape, std::int64_t i) {
  if (shape.size() != 4) return i;
  const std::int64_t c = shape[1], h = shape[2], w = shape[3];
  const std::int64_t x = i % w, y = i / w % h, ch = i / (w * h) % c, n = i / (w * h * c);
  return ((n * h + y) * w + x) * c + ch;
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)) return -1;
    n *= d;
  }
  return n;
}

/// A tensor region of compile.json ("io", "host.inputs") must lie inside the DRAM image.
void check_region(const std::string& compile_path, const std::string& key,
                  const std::vector<std::int64_t>& shape, std::uint64_t offset, int element_bytes,
                  std::uint64_t image_bytes) {
  const std::int64_t count = element_count(shape);
  // count <= image_bytes first, so that count * element_bytes (1 or 2) cannot wrap.
  if (count < 0 || static_cast<std::uint64_t>(count) > image_bytes || offset > image_bytes ||
      static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(element_bytes) >
          image_bytes - offset)
    throw_input_error({compile_path, 0, 0}, key,
                      "the tensor at offset " + std::to_string(offset) + " does not fit in the " +
                          std::to_string(image_bytes) + "-byte DRAM image");
}

/// Quantizes `path` (float32, the input's shape) into the DRAM image at the input's region; token
/// ids (int32) are written as they are, 4 bytes each.
void write_input(const std::string& path, const IoEntry& input, int element_bytes,
                 std::vector<std::uint8_t>& image) {
  const NpyArray array = read_npy(path);
  if (input.token_ids) {
    if (array.dtype != NpyDtype::i32)
      throw_input_error({path, 0, 0}, "header.descr",
                        "the network input '" + input.name + "' is token ids: int32, got " +
                            std::string(npy_dtype_name(array.dtype)));
    if (element_count(array.shape) != element_count(input.shape))
      throw_input_error({path, 0, 0}, "header.shape",
                        "the network input '" + input.name + "' holds " +
                            std::to_string(element_count(input.shape)) + " ids");
    const std::vector<std::int32_t> ids = array.values<std::int32_t>();
    for (std::size_t i = 0; i < ids.size(); ++i)
      for (int b = 0; b < 4; ++b)
        image[input.offset + 4 * i + static_cast<std::uint64_t>(b)] =
            static_cast<std::uint8_t>((static_cast<std::uint32_t>(ids[i]) >> (8 * b)) & 0xff);
    return;
  }
  if (array.dtype != NpyDtype::f32)
    throw_input_error(
        {path, 0, 0}, "header.descr",
        "the network input must be float32, got " + std::string(npy_dtype_name(array.dtype)));
  if (array.shape != input.shape) {
    std::string want;
    for (std::int64_t d : input.shape) want += (want.empty() ? "" : "x") + std::to_string(d);
    throw_input_error({path, 0, 0}, "header.shape",
                      "the network input '" + input.name + "' is " + want);
  }
  check_finite(array, path);
  const std::vector<float> values = array.values<float>();
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(values.size()); ++i) {
    const std::int32_t q =
        intops::quantize_value(values[static_cast<std::size_t>(i)], static_cast<float>(input.scale),
                               element_bytes * 8) +
        input.zero_point;
    const std::uint64_t at =
        input.offset + static_cast<std::uint64_t>(nhwc_index(input.shape, i) * element_bytes);
    for (int b = 0; b < element_bytes; ++b)
      image[at + static_cast<std::uint64_t>(b)] =
          static_cast<std::uint8_t>((static_cast<std::uint32_t>(q) >> (8 * b)) & 0xff);
  }
}

/// Dequantized float32 NCHW values of an output, exactly as the graph's Dequantize computes.
std::vector<float> read_output(const IoEntry& output, int element_bytes,
                               const std::vector<std::uint8_t>& dram) {
  std::vector<float> values(static_cast<std::size_t>(element_count(output.shape)));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(values.size()); ++i) {
    const std::uint64_t at =
        output.offset + static_cast<std::uint64_t>(nhwc_index(output.shape, i) * element_bytes);
    std::int32_t q = 0;
    if (element_bytes == 1) {
      q = static_cast<std::int8_t>(dram[at]);
    } else {
      q = static_cast<std::int16_t>(static_cast<std::uint16_t>(dram[at] | (dram[at + 1] << 8)));
    }
    values[static_cast<std::size_t>(i)] =
        static_cast<float>((q - output.zero_point) * output.scale);
  }
  return values;
}

/// Host ops (compile.json "host", docs/codegen.md "Host ops"): writes each boundary tensor
/// the program stored as host-<name>.npy (integers, NCHW or N x K) into `out`, then runs
/// `tessel host` on them when that command is linked in (codegen/ registers it).
/// Returns whether the host ops ran.
bool run_host_ops(const nlohmann::json& host, const std::string& compile_path,
                  const std::string& folder, const std::filesystem::path& out, int element_bytes,
                  const std::vector<std::uint8_t>& dram) {
  try {
    for (const auto& j : host.at("inputs")) {
      IoEntry e;
      e.name = j.at("name").get<std::string>();
      e.offset = j.at("offset").get<std::uint64_t>();
      e.shape = j.at("shape").get<std::vector<std::int64_t>>();
      check_region(compile_path, "host.inputs." + e.name, e.shape, e.offset, element_bytes,
                   dram.size());
      std::vector<std::int32_t> q(static_cast<std::size_t>(element_count(e.shape)));
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(q.size()); ++i) {
        const std::uint64_t at =
            e.offset + static_cast<std::uint64_t>(nhwc_index(e.shape, i) * element_bytes);
        q[static_cast<std::size_t>(i)] =
            element_bytes == 1 ? static_cast<std::int8_t>(dram[at])
                               : static_cast<std::int16_t>(
                                     static_cast<std::uint16_t>(dram[at] | (dram[at + 1] << 8)));
      }
      const std::string file = (out / ("host-" + e.name + ".npy")).string();
      if (element_bytes == 1) {
        const std::vector<std::int8_t> v(q.begin(), q.end());
        write_npy(file, NpyArray::from_i8(e.shape, v), g_inputs);
      } else {
        const std::vector<std::int16_t> v(q.begin(), q.end());
        write_npy(file, NpyArray::from_i16(e.shape, v), g_inputs);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw_input_error({compile_path, 0, 0}, "host.inputs", e.what());
  }
  const auto commands = cli::registered_commands();
  if (std::none_of(commands.begin(), commands.end(),
                   [](const cli::Command& c) { return c.path == "host"; })) {
    std::printf("host          not run: this binary has no `tessel host` (codegen/)\n");
    return false;
  }
  return cli::run_args({"host", folder, "--out", out.string()}) == 0;
}

/// Host wall seconds of `tessel sim`'s phases, in order (bench/e2e/README.md): `load`
/// (config, program, compile.json, DRAM image read into memory), `input` (the --input tensor
/// quantized into the image), `simulate` (simulate(): from the program and image being in
/// memory to FINISH, SystemC set-up and tear-down included; what onnxruntime's session.run is
/// compared with), `write` (summary, output.npy, host ops; report.json's own writing is not in
/// it). Process start-up (dynamic loader, static initialisers) precedes `load` and is in none.
/// The CPU seconds of each phase (all threads of the process; a loaded machine stretches wall
/// time, not this) go to report.json as host_cpu_seconds.
class PhaseClock {
 public:
  void lap(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    const double cpu = cpu_seconds();
    seconds_.emplace_back(phase, std::chrono::duration<double>(now - last_).count());
    cpu_seconds_.emplace_back(phase, cpu - last_cpu_);
    last_ = now;
    last_cpu_ = cpu;
  }
  nlohmann::json json() const { return to_json(seconds_); }
  nlohmann::json cpu_json() const { return to_json(cpu_seconds_); }
  void print() const {
    std::printf("host seconds ");
    for (const auto& [phase, s] : seconds_) std::printf(" %s %.4f", phase.c_str(), s);
    std::printf("\nhost CPU s   ");
    for (const auto& [phase, s] : cpu_seconds_) std::printf(" %s %.4f", phase.c_str(), s);
    std::printf("\n");
  }

 private:
  static double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  static nlohmann::json to_json(const std::vector<std::pair<std::string, double>>& phases) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [phase, s] : phases) j[phase] = s;
    return j;
  }

  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double last_cpu_ = cpu_seconds();
  std::vector<std::pair<std::string, double>> seconds_, cpu_seconds_;
};

/// Per-group rows of a compile folder's run: cycles (end of the group's last instruction minus
/// the previous group's), DMA bytes, MAC utilisation, beside the scheduler's prediction.
nlohmann::json group_rows(const nlohmann::json& compile, const SimReport& report,
                          const HwConfig& config) {
  std::vector<std::uint64_t> finish(report.instructions_executed + 1, 0);
  for (const auto& c : report.instruction_cycles) {
    if (c.index >= finish.size()) finish.resize(c.index + 1, 0);
    finish[c.index] = c.finish_cycle;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t previous_end = 0;
  const double macs_per_cycle = static_cast<double>(config.matrix.rows * config.matrix.cols);
  for (const auto& g : compile.value("groups", nlohmann::json::array())) {
    const auto first = g.value("first_instruction", std::uint64_t{0});
    const auto end = g.value("end_instruction", std::uint64_t{0});
    std::uint64_t group_end = previous_end;
    for (std::uint64_t i = first; i < end && i < finish.size(); ++i)
      group_end = std::max(group_end, finish[i]);
    const std::uint64_t cycles = group_end - previous_end;
    previous_end = group_end;
    const double macs = g.value("macs", 0.0);
    nlohmann::json row;
    row["ops"] = g.value("ops", nlohmann::json::array());
    row["tiles"] = g.value("tiles", 0);
    row["cycles"] = cycles;
    row["predicted_cycles"] = g.value("predicted_cycles", 0);
    row["dram_bytes"] = g.value("dram_bytes", nlohmann::json::object());
    row["macs"] = macs;
    row["mac_utilisation"] = cycles > 0 ? macs / (static_cast<double>(cycles) * macs_per_cycle) : 0;
    rows.push_back(row);
  }
  return rows;
}

int run(const SimArgs& args) {
  PhaseClock clock;
  std::string program = args.program, dram = args.dram, hw = args.hw;
  const bool folder_run = std::filesystem::is_directory(program);
  nlohmann::json compile;
  std::string compile_path;
  if (folder_run) {
    const RunFolder folder = read_run_folder(program);
    program = folder.program;
    if (dram.empty()) dram = folder.dram;
    if (hw.empty()) hw = folder.hw;
    compile_path = (std::filesystem::path(args.program) / "compile.json").string();
    if (std::filesystem::exists(compile_path)) compile = read_json(compile_path);
  }
  if (!args.input.empty() && compile.is_null())
    throw_input_error({args.program, 0, 0}, "--input",
                      "--input needs a compile folder (with compile.json)");
  if (hw.empty())
    throw_input_error({args.program, 0, 0}, "--hw",
                      "no hardware config: pass --hw FILE (or put hw.yaml in the folder)");
  // No output may be an input; checked before anything is read or written.
  g_inputs = {program, dram, hw, args.input, compile_path};
  for (const std::string* output : {&args.json, &args.dram_out, &args.trace})
    files::require_output_distinct(*output, g_inputs);
  if (!compile.is_null()) {
    const std::filesystem::path out = args.out.empty() ? args.program : args.out;
    for (const char* name : {"report.json", "output.npy"})
      files::require_output_distinct((out / name).string(), g_inputs);
  }
  const HwConfig config = load_hw_config(hw);
  const std::vector<isa::Word> words = read_program_words(program, &config);

  DramImage image;
  if (args.dram_size > files::kMaxArrayBytes)
    throw_input_error({"--dram-size", 0, 0}, "",
                      std::to_string(args.dram_size) + " bytes is over the limit of " +
                          std::to_string(files::kMaxArrayBytes) + " bytes for a DRAM image");
  if (!dram.empty()) {
    image = read_dram_image(dram, !args.timing_only, args.dram_size);
  } else {
    image.size_bytes = args.dram_size ? args.dram_size : kDefaultDramBytes;
    if (!args.timing_only) image.bytes.assign(image.size_bytes, 0);
  }

  int element_bytes = 1;
  if (!compile.is_null()) {
    const nlohmann::json field = compile.value("element_bytes", nlohmann::json(1));
    if (!field.is_number_integer() || (field.get<int>() != 1 && field.get<int>() != 2))
      throw_input_error({compile_path, 0, 0}, "element_bytes",
                        "expected 1 or 2, got " + json_text(field, -1));
    element_bytes = field.get<int>();
  }
  const std::vector<IoEntry> io =
      compile.is_null() ? std::vector<IoEntry>{} : io_entries(compile, compile_path);
  clock.lap("load");
  if (!args.input.empty() && !args.timing_only) {
    const auto input =
        std::find_if(io.begin(), io.end(), [](const IoEntry& e) { return e.is_input; });
    if (input == io.end())
      throw_input_error({compile_path, 0, 0}, "io", "no network input is listed");
    check_region(compile_path, "io." + input->name, input->shape, input->offset,
                 input->token_ids ? 4 : element_bytes, image.bytes.size());
    write_input(args.input, *input, element_bytes, image.bytes);
  }
  clock.lap("input");

  SimOptions options;
  options.timing_only = args.timing_only;
  options.record_instruction_cycles = !compile.is_null();
  options.keep_scratchpads = false;  // read by nothing here
  options.threads = args.threads;
  options.trace_path = args.trace;
  options.trace_max_events = args.trace_max_events;
  auto result = simulate(config, words, std::move(image), options);
  if (!result.ok()) throw_input_error({program, 0, 0}, "", result.reason());
  clock.lap("simulate");
  const SimReport& report = result.value().report;

  print_summary(report, config);
  if (report.fault) std::cerr << program << ": fault: " << report.fault->str() << '\n';
  if (!args.json.empty()) write_text(args.json, report_json(report, config));
  if (!args.dram_out.empty() && !args.timing_only) {
    const auto& bytes = result.value().dram;
    write_text(args.dram_out, std::string(bytes.begin(), bytes.end()));
  }
  if (!compile.is_null()) {
    // A compile folder: output.npy (full mode) and report.json with per-group rows.
    const std::filesystem::path out = args.out.empty() ? args.program : args.out;
    files::make_directory(out.string());
    if (!args.timing_only && report.ok()) {
      int outputs = 0;
      for (const IoEntry& e : io) {
        if (e.is_input) continue;
        check_region(compile_path, "io." + e.name, e.shape, e.offset, element_bytes,
                     result.value().dram.size());
        const auto values = read_output(e, element_bytes, result.value().dram);
        const std::string file = outputs++ == 0 ? "output.npy" : "output-" + e.name + ".npy";
        write_npy((out / file).string(), NpyArray::from_f32(e.shape, values), g_inputs);
        std::printf("output        %%%s -> %s\n", e.name.c_str(), (out / file).string().c_str());
      }
    }
    bool host_ran = false;
    if (compile.contains("host") && !args.timing_only && report.ok())
      host_ran = run_host_ops(compile.at("host"), compile_path, args.program, out, element_bytes,
                              result.value().dram);
    nlohmann::json j = nlohmann::json::parse(report_json(report, config));
    for (const char* key : {"model", "config", "policy", "objective"})
      if (compile.contains(key)) j["compile"][key] = compile[key];
    j["compulsory_bytes"] = compile.value("compulsory_bytes", 0);
    j["roofline_cycles"] = compile.value("roofline_cycles", 0);
    // max(roofline, barrier bound) (scheduler/bound.hpp); older compile folders lack it.
    j["lower_bound_cycles"] =
        compile.value("lower_bound_cycles", compile.value("roofline_cycles", 0));
    j["predicted_cycles"] = compile.value("predicted_cycles", 0);
    j["x_roofline"] =
        static_cast<double>(report.cycles) / std::max(1.0, compile.value("roofline_cycles", 0.0));
    j["groups"] = group_rows(compile, report, config);
    clock.lap("write");
    j["host_seconds"] = clock.json();
    j["host_cpu_seconds"] = clock.cpu_json();
    // Host threads of `simulate` (SimOptions::threads; a timing-only run has one).
    j["host_threads"] = args.timing_only ? 1 : args.threads;
    if (compile.contains("host")) {
      // The boundary's bytes: what the host reads from DRAM after the program.
      const nlohmann::json& host = compile.at("host");
      j["host"] = {{"ops", host.value("ops", nlohmann::json::array())},
                   {"outputs", host.value("outputs", nlohmann::json::array())},
                   {"transfer_bytes", host.value("transfer_bytes", nlohmann::json::object())},
                   {"ran", host_ran}};
    }
    write_text((out / "report.json").string(), tessel::json_text(j, 2) + "\n");
    std::printf("report        %s\n", (out / "report.json").string().c_str());
  } else {
    clock.lap("write");
  }
  if (args.timings) clock.print();
  return report.ok() ? 0 : 2;
}

cli::Runner setup(CLI::App& command) {
  auto args = std::make_shared<SimArgs>();
  command
      .add_option("program", args->program,
                  "Program: .bin, .tasm, or a compile-output folder (program.bin, dram.bin, "
                  "hw.yaml)")
      ->required();
  command.add_option("--dram", args->dram, "DRAM image: raw bytes loaded at address 0");
  command.add_option("--dram-size", args->dram_size,
                     "DRAM bytes (zero-extends the image; default: the image's size, or 64 MiB "
                     "without one)");
  command.add_option("--hw", args->hw, "Hardware config YAML");
  command.add_flag("--timing-only", args->timing_only,
                   "Model time only: no data is read or computed (same cycles and bytes)");
  command.add_flag("--timings", args->timings,
                   "Print the host wall seconds of each phase (load, input, simulate, write); a "
                   "compile folder's report.json has them as host_seconds");
  command
      .add_option("--threads", args->threads,
                  "Host threads in full mode: 1, 2 (default: the datapath on a thread of its "
                  "own, beside the timing model) or 3 (and a helper that shares large convs, "
                  "loads, stores and vector ops with it); the same results")
      ->check(CLI::Range(1, 3));
  command.add_option("--trace", args->trace, "Write a Chrome trace-event JSON timeline");
  command.add_option("--trace-max-events", args->trace_max_events,
                     "Instruction slices recorded in the trace before it stops (default 1000000)");
  command.add_option("--json", args->json, "Write the report as JSON");
  command.add_option("--dram-out", args->dram_out, "Write the final DRAM contents (full mode)");
  command.add_option("--input", args->input,
                     "Compile folders: float32 .npy network input, quantized into the DRAM "
                     "image (default: the seeded input `tessel compile` wrote)");
  command.add_option("--out", args->out,
                     "Compile folders: folder for output.npy and report.json (default: the "
                     "compile folder)");
  return [args] { return run(*args); };
}

const cli::Registration kSim{{"sim", "Run an ISA program on the cycle-level simulator", setup}};

}  // namespace
}  // namespace tessel::sim
