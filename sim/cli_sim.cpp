// `tessel sim PROGRAM`: run a program (.bin, .tasm or a compile-output folder) on a config.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "configs/hw_config.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"

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
};

constexpr std::uint64_t kDefaultDramBytes = 64ull << 20;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw_input_error({path, 0, 0}, "", "cannot open for writing");
  out << text;
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
  if (report.energy) std::printf("energy        %.1f pJ\n", report.energy->total_pj());
  if (report.fault) std::printf("fault         %s\n", report.fault->str().c_str());
}

int run(const SimArgs& args) {
  std::string program = args.program, dram = args.dram, hw = args.hw;
  if (std::filesystem::is_directory(program)) {
    const RunFolder folder = read_run_folder(program);
    program = folder.program;
    if (dram.empty()) dram = folder.dram;
    if (hw.empty()) hw = folder.hw;
  }
  if (hw.empty())
    throw_input_error({args.program, 0, 0}, "--hw",
                      "no hardware config: pass --hw FILE (or put hw.yaml in the folder)");
  const HwConfig config = load_hw_config(hw);
  const std::vector<isa::Word> words = read_program_words(program, &config);

  DramImage image;
  if (!dram.empty()) {
    image = read_dram_image(dram, !args.timing_only, args.dram_size);
  } else {
    image.size_bytes = args.dram_size ? args.dram_size : kDefaultDramBytes;
    if (!args.timing_only) image.bytes.assign(image.size_bytes, 0);
  }

  SimOptions options;
  options.timing_only = args.timing_only;
  options.trace_path = args.trace;
  options.trace_max_events = args.trace_max_events;
  auto result = simulate(config, words, std::move(image), options);
  if (!result.ok()) throw_input_error({program, 0, 0}, "", result.reason());
  const SimReport& report = result.value().report;

  print_summary(report, config);
  if (report.fault) std::cerr << program << ": fault: " << report.fault->str() << '\n';
  if (!args.json.empty()) write_text(args.json, report_json(report, config));
  if (!args.dram_out.empty() && !args.timing_only) {
    const auto& bytes = result.value().dram;
    write_text(args.dram_out, std::string(bytes.begin(), bytes.end()));
  }
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
  command.add_option("--trace", args->trace, "Write a Chrome trace-event JSON timeline");
  command.add_option("--trace-max-events", args->trace_max_events,
                     "Instruction slices recorded in the trace before it stops (default 1000000)");
  command.add_option("--json", args->json, "Write the report as JSON");
  command.add_option("--dram-out", args->dram_out, "Write the final DRAM contents (full mode)");
  return [args] { return run(*args); };
}

const cli::Registration kSim{{"sim", "Run an ISA program on the cycle-level simulator", setup}};

}  // namespace
}  // namespace tessel::sim
