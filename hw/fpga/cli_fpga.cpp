// `tessel fpga --hw H --out DIR [--set K=V] [--part P] [--no-synth] [--timeout-s N]`: FPGA flow.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>

#include "configs/hw_config.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/tessel_design.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"

namespace tessel::fpga {
namespace {

struct FpgaCliOptions {
  std::string hw;
  std::string out;
  std::string part;
  bool no_synth = false;
  double timeout_s = 600;
  std::string yosys = "yosys";
  std::vector<std::string> sets;
};

/// The per-unit rows (resources.json "units"), one line each, the note at the end.
void print_units(const std::vector<UnitCost>& units) {
  if (units.empty()) return;
  std::cout << "  per unit (synthesised: the hierarchical netlist, a module with its submodules):\n"
            << "    " << std::left << std::setw(20) << "unit" << std::right << std::setw(5)
            << "inst" << std::setw(9) << "LUT" << std::setw(9) << "LUTRAM" << std::setw(9) << "FF"
            << std::setw(9) << "BRAM36e" << std::setw(6) << "DSP" << std::setw(8) << "CARRY4"
            << "\n";
  for (const UnitCost& u : units) {
    const ResourceCounts& c = u.counts;
    std::cout << "    " << std::left << std::setw(20) << u.name << std::right << std::setw(5)
              << u.instances << std::setw(9) << c.lut << std::setw(9) << c.lut_as_memory
              << std::setw(9) << c.ff << std::setw(9) << std::setprecision(1)
              << c.bram36_equivalent() << std::setw(6) << c.dsp << std::setw(8) << c.carry << "  "
              << u.note << "\n";
  }
}

void print_summary(const FlowResult& result, const std::string& out) {
  std::cout << "tessel fpga: " << result.files.size() << " files in " << out << " for "
            << result.target.part << " (" << to_string(result.target.part_source) << ") at "
            << result.target.clock_mhz << " MHz\n";
  if (!result.resources) {
    std::cout << "synthesis skipped (--no-synth): run `yosys -s synth.ys` or "
                 "`vivado -mode batch -source vivado.tcl` in "
              << out << "\n";
    return;
  }
  const FpgaResources& r = *result.resources;
  const ResourceCounts& c = r.counts;
  std::cout << r.tool << ", " << std::fixed << std::setprecision(1) << r.synth_seconds << " s\n"
            << "  LUT " << c.lut << "  LUT-as-memory " << c.lut_as_memory << "  FF " << c.ff
            << "  BRAM18 " << c.bram18 << "  BRAM36 " << c.bram36 << "  DSP48E1 " << c.dsp
            << "  CARRY4 " << c.carry << "  (synthesised)\n";
  for (const std::string& box : r.black_boxes) {
    std::cout << "  black box (not synthesised): " << box << "\n";
  }
  if (r.scratchpad_bram) {
    for (const ScratchpadBram& s : r.scratchpad_bram->scratchpads) {
      std::cout << "  scratchpad " << s.name << ": " << s.banks << " x " << s.bank_depth_words
                << " x " << s.bank_width_bits << " bit -> " << s.primitives_per_bank * s.banks
                << " " << s.shape.primitive << " " << s.shape.name() << " (analytic)\n";
    }
    std::cout << "  BRAM36-equivalent: " << c.bram36_equivalent() << " synthesised + "
              << r.scratchpad_bram->bram36_equivalent()
              << " analytic = " << r.bram36_equivalent_total() << "\n";
  }
  print_units(r.units);
  std::cout << "  Fmax: none from Yosys (see fmax_reason in resources.json)\n"
            << "  " << out << "/resources.json\n";
}

cli::Runner setup(CLI::App& command) {
  auto options = std::make_shared<FpgaCliOptions>();
  command.add_option("--hw", options->hw, "Hardware config YAML")->required();
  command.add_option("--out", options->out, "Output folder (created)")->required();
  command.add_option("-s,--set", options->sets,
                     "Override a config key before validation: KEY.PATH=VALUE");
  command.add_option("--part", options->part,
                     "7-series part; default: the config's fpga.part, else xc7a100tcsg324-1");
  command.add_flag("--no-synth", options->no_synth, "Write the inputs only; do not run Yosys");
  command.add_option("--timeout-s", options->timeout_s, "Kill Yosys after this many seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command.add_option("--yosys", options->yosys, "The Yosys executable")->capture_default_str();
  return [options] {
    std::vector<KeyOverride> overrides;
    for (const auto& assignment : options->sets) {
      auto parsed = parse_key_override(assignment);
      if (!parsed) throw_input_error({"--set", 0, 0}, "", parsed.reason());
      overrides.push_back(std::move(parsed.value()));
    }
    const HwConfig config = load_hw_config(options->hw, overrides);
    auto test = make_test_program(config);
    if (!test) throw_input_error({options->hw, 0, 0}, "", test.reason());
    auto design = tessel_fpga_design(config, test.value(), source_root());
    if (!design) throw_input_error({options->hw, 0, 0}, "", design.reason());
    FlowOptions flow;
    if (!options->part.empty()) flow.part = options->part;
    flow.synthesize = !options->no_synth;
    flow.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options->timeout_s * 1000));
    flow.yosys = options->yosys;
    auto result = run_flow(config, design.value(), test.value(), flow, options->out);
    if (!result) {
      std::cerr << "tessel fpga: error: " << result.reason() << "\n";
      return 1;
    }
    print_summary(result.value(), options->out);
    return 0;
  };
}

const cli::Registration kFpga{
    {"fpga", "Write FPGA flow inputs (RTL, .mem images, XDC, Vivado TCL) and synthesise with Yosys",
     setup}};

}  // namespace
}  // namespace tessel::fpga
