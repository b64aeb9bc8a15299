// `tessel rtl PROGRAM`: run a program (.bin, .tasm or a compile-output folder) on the Verilator
// model of hw/rtl; prints and writes the simulator's report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"

namespace tessel::hw {
namespace {

struct RtlArgs {
  std::string program;
  std::string dram;
  std::string hw;
  std::string json;
  std::string fst;
  std::string dram_out;
  std::uint64_t dram_size = 0;
  std::uint64_t watchdog = 50'000'000;
  std::uint64_t max_cycles = 0;  ///< 0: derived from the program, refused past kMaxRtlCycles
  int threads = 1;
  bool list = false;
};

constexpr std::uint64_t kDefaultDramBytes = 64ull << 20;
/// Programs whose cycle bound passes this are refused unless --max-cycles is given: the RTL
/// model runs at roughly 0.1 to 1 MHz, so 10^9 cycles is already 15 minutes or more.
constexpr std::uint64_t kMaxRtlCycles = 1'000'000'000;

/// Per-group cycles of a compile folder's run, by the simulator's rule (`tessel sim`'s
/// report.json): a group's cycles are the finish of its last instruction minus the previous
/// group's. `compile` is the folder's compile.json; rows carry the group's ops and instruction
/// range so a cross-check can pair them with the simulator's rows.
nlohmann::json group_cycles(const nlohmann::json& compile, const sim::SimReport& report) {
  std::vector<std::uint64_t> finish;
  for (const auto& c : report.instruction_cycles) {
    if (c.index >= finish.size()) finish.resize(c.index + 1, 0);
    finish[c.index] = c.finish_cycle;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t previous_end = 0;
  for (const auto& g : compile.value("groups", nlohmann::json::array())) {
    const auto first = g.value("first_instruction", std::uint64_t{0});
    const auto end = g.value("end_instruction", std::uint64_t{0});
    std::uint64_t group_end = previous_end;
    for (std::uint64_t i = first; i < end && i < finish.size(); ++i)
      group_end = std::max(group_end, finish[i]);
    nlohmann::json row;
    row["ops"] = g.value("ops", nlohmann::json::array());
    row["first_instruction"] = first;
    row["end_instruction"] = end;
    row["cycles"] = group_end - previous_end;
    rows.push_back(row);
    previous_end = group_end;
  }
  return rows;
}

/// Every file the run reads; no output may be one of them.
std::vector<std::string> g_inputs;

void write_text(const std::string& path, const std::string& text) {
  files::write_file(path, text, g_inputs);
}

int run(const RtlArgs& args) {
  if (args.list) {
    for (const auto& model : rtl_models())
      std::printf("%-12s threads %d  hash %s  %s\n", model.name.c_str(), model.threads,
                  model.config_hash.c_str(), model.config_path.c_str());
    return 0;
  }
  if (args.program.empty())
    throw_input_error({"tessel rtl", 0, 0}, "program", "a program or folder is required");
  std::string program = args.program, dram = args.dram, hw = args.hw;
  nlohmann::json compile;
  if (std::filesystem::is_directory(program)) {
    const sim::RunFolder folder = sim::read_run_folder(program);
    program = folder.program;
    if (dram.empty()) dram = folder.dram;
    if (hw.empty()) hw = folder.hw;
    const auto compile_path = std::filesystem::path(args.program) / "compile.json";
    if (std::filesystem::exists(compile_path)) {
      compile = nlohmann::json::parse(
          files::read_file(compile_path.string(), files::kMaxProgramBytes), nullptr, false);
      if (compile.is_discarded())
        throw_input_error({compile_path.string(), 0, 0}, "", "not valid JSON");
    }
  }
  g_inputs = {program, dram, hw, args.program};
  for (const std::string* output : {&args.json, &args.dram_out, &args.fst})
    files::require_output_distinct(*output, g_inputs);
  if (hw.empty())
    throw_input_error({args.program, 0, 0}, "--hw",
                      "no hardware config: pass --hw FILE (or put hw.yaml in the folder)");
  const HwConfig config = load_hw_config(hw);
  const std::vector<isa::Word> words = sim::read_program_words(program, &config);
  const std::uint64_t bound = program_cycle_bound(config, words);
  if (args.max_cycles == 0 && bound > kMaxRtlCycles)
    throw_input_error({program, 0, 0}, "",
                      "the program may take up to " + std::to_string(bound) +
                          " cycles (its bound without overlap), more than the RTL model runs in "
                          "reasonable time (" +
                          std::to_string(kMaxRtlCycles) +
                          "); use `tessel sim`, or pass --max-cycles to run it anyway");
  sim::DramImage image;
  if (args.dram_size > files::kMaxArrayBytes)
    throw_input_error({"--dram-size", 0, 0}, "",
                      std::to_string(args.dram_size) + " bytes is over the limit of " +
                          std::to_string(files::kMaxArrayBytes) + " bytes for a DRAM image");
  if (!dram.empty()) {
    image = sim::read_dram_image(dram, true, args.dram_size);
  } else {
    image.size_bytes = args.dram_size ? args.dram_size : kDefaultDramBytes;
    image.bytes.assign(image.size_bytes, 0);
  }
  RtlOptions options;
  options.fst_path = args.fst;
  options.watchdog_cycles = args.watchdog;
  options.max_cycles = args.max_cycles;
  options.record_instruction_cycles = !compile.is_null();
  auto result = run_rtl(config, words, std::move(image), options, args.threads);
  if (!result.ok()) throw_input_error({program, 0, 0}, "", result.reason());
  const sim::SimReport& report = result.value().report;
  std::printf("status        %s (rtl, %d thread%s)\n", report.status(), args.threads,
              args.threads == 1 ? "" : "s");
  std::printf("config        %s (%s)\n", config.name.c_str(), report.config_hash.c_str());
  std::printf("cycles        %llu\n", static_cast<unsigned long long>(report.cycles));
  std::printf("instructions  %llu dispatched, %llu executed\n",
              static_cast<unsigned long long>(report.instructions_dispatched),
              static_cast<unsigned long long>(report.instructions_executed));
  std::printf("dram bytes    read %llu, write %llu\n",
              static_cast<unsigned long long>(report.dram.read_bytes()),
              static_cast<unsigned long long>(report.dram.write_bytes()));
  std::printf("late cycles   %llu (0: every cost followed docs/timing.md)\n",
              static_cast<unsigned long long>(result.value().late_cycles));
  std::printf("collisions    %llu (0: no cycle wrote one scratchpad word from both ports)\n",
              static_cast<unsigned long long>(result.value().sram_collisions));
  const double seconds = result.value().wall_seconds;
  std::printf(
      "speed         %llu clock cycles in %.3f s = %.1f kHz\n",
      static_cast<unsigned long long>(result.value().simulated_cycles), seconds,
      seconds > 0 ? static_cast<double>(result.value().simulated_cycles) / seconds / 1e3 : 0.0);
  if (report.fault) std::cerr << program << ": fault: " << report.fault->str() << '\n';
  if (!args.json.empty()) {
    if (compile.is_null()) {
      write_text(args.json, sim::report_json(report, config));
    } else {  // a compile folder: the report plus per-group cycles
      nlohmann::json j = nlohmann::json::parse(sim::report_json(report, config));
      j["groups"] = group_cycles(compile, report);
      j["late_cycles"] = result.value().late_cycles;
      j["sram_collisions"] = result.value().sram_collisions;
      nlohmann::json timeline = nlohmann::json::array();  // [index, dispatch, start, finish]
      for (const auto& c : report.instruction_cycles)
        timeline.push_back({c.index, c.dispatch_cycle, c.start_cycle, c.finish_cycle});
      j["instruction_cycles"] = timeline;
      write_text(args.json, tessel::json_text(j, 2) + "\n");
    }
  }
  if (!args.dram_out.empty()) {
    const auto& bytes = result.value().dram;
    write_text(args.dram_out, std::string(bytes.begin(), bytes.end()));
  }
  return report.ok() ? 0 : 2;
}

cli::Runner setup(CLI::App& command) {
  auto args = std::make_shared<RtlArgs>();
  command.add_option("program", args->program,
                     "Program: .bin, .tasm, or a compile-output folder (program.bin, dram.bin, "
                     "hw.yaml)");
  command.add_option("--dram", args->dram, "DRAM image: raw bytes loaded at address 0");
  command.add_option("--dram-size", args->dram_size,
                     "DRAM bytes (zero-extends the image; default: its size, or 64 MiB)");
  command.add_option("--hw", args->hw, "Hardware config YAML (an RTL model must be built for it)");
  command.add_option("--json", args->json, "Write the report as JSON (the simulator's schema)");
  command.add_option("--fst", args->fst,
                     "Write an FST waveform (models built with TESSEL_RTL_TRACE)");
  command.add_option("--dram-out", args->dram_out, "Write the final DRAM contents");
  command.add_option("--threads", args->threads, "Verilator threads of the model (1 or 2)");
  command.add_option("--watchdog", args->watchdog,
                     "Cycles without any RTL event before the run is declared hung");
  command.add_option("--max-cycles", args->max_cycles,
                     "Overall cycle cap (fault cycle_cap past it); default: twice the program's "
                     "cycle bound, and programs bounded above 10^9 cycles are refused");
  command.add_flag("--list", args->list, "List the RTL models built into this binary");
  return [args] { return run(*args); };
}

const cli::Registration kRtl{
    {"rtl", "Run an ISA program on the Verilator model of the RTL (hw/rtl)", setup}};

}  // namespace
}  // namespace tessel::hw
