// `tessel fpga`: writes the FPGA flow inputs for a config into a folder and runs Yosys on them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "hw/fpga/bram_map.hpp"
#include "hw/fpga/part.hpp"
#include "hw/fpga/resources.hpp"
#include "hw/fpga/test_program.hpp"
#include "hw/fpga/tool_run.hpp"
#include "hw/fpga/unit_cost.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// One RTL source of the design, as it lands in `OUT/rtl/<name>`.
struct SourceFile {
  std::string name;       ///< file name in OUT/rtl/ (unique within the design)
  std::string copy_from;  ///< absolute path of a checked-in file to copy; empty: `text` is it
  std::string text;       ///< contents of a generated file (when copy_from is empty)
};

/// A synthesis-only file Yosys reads in place of one design source (e.g. a black box).
struct YosysStandIn {
  std::string replaces;  ///< the SourceFile::name it stands in for
  SourceFile file;       ///< written to OUT/rtl/<file.name>; not in filelist.f or vivado.tcl
};

/// The design to synthesise: sources in read order (packages first) and the top module.
struct FlowDesign {
  std::string top;
  std::vector<SourceFile> sources;
  std::vector<YosysStandIn> yosys_stand_ins;  ///< what Yosys reads instead of some sources
  /// Modules the Yosys netlist must keep as black-box cells (the flow checks each is there:
  /// a black box trimmed away would mean the logic around it was trimmed too).
  std::vector<std::string> black_boxes;
  /// The black-boxed scratchpads' block RAM, mapped analytically; copied to resources.json.
  std::optional<ScratchpadBramMap> analytic_scratchpads;
  std::vector<std::string> include_dirs;  ///< absolute; passed to both tools, not copied
  std::vector<SourceFile> data_files;     ///< extra $readmemh images written into OUT/<name>
  /// Units resources.json reports apart (each a module with its submodules; unit_cost.hpp).
  std::vector<FpgaUnit> units;
  std::string clock_port = "clk";
  /// A second clock port at twice the rate (the scratchpads' clk2x); empty: none.
  std::string double_rate_clock_port;
  int program_word_bytes = 32;  ///< width of program.mem words: one instruction
  int dram_word_bytes = 8;      ///< width of dram.mem / expected.mem words (the DRAM data port)
};

/// Files the design's `$readmemh` calls read, relative to OUT (the tools run there).
inline constexpr const char* kProgramMem = "program.mem";
inline constexpr const char* kDramMem = "dram.mem";
inline constexpr const char* kExpectedMem = "expected.mem";
/// The flow inputs' completion marker, written last (before Yosys runs): every input file
/// with its size and FNV-1a hash. A folder without it was interrupted (docs/fpga.md).
inline constexpr const char* kMarkerFile = "fpga.json";

/// How `tessel fpga` runs.
struct FlowOptions {
  std::optional<std::string> part;  ///< overrides the config's fpga.part (and the default)
  bool synthesize = true;           ///< false: write the inputs only (--no-synth)
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  ///< Yosys wall-clock bound
  std::string yosys = "yosys";  ///< the Yosys executable (looked up on PATH)
};

/// What a flow run wrote and found.
struct FlowResult {
  FpgaTarget target;
  std::vector<std::string> files;          ///< every file written, relative to OUT, in order
  std::optional<FpgaResources> resources;  ///< set when Yosys ran and succeeded
};

/// Writes into `out_dir` (created when missing):
///   rtl/<name> for every design source (copies, so OUT is self-contained), filelist.f (the
///   sources, OUT-relative, in read order), program.mem, dram.mem / dram.bin, expected.mem
///   (the test's output words, dram_word_bytes wide), hw.yaml (so `tessel sim OUT` runs the
///   same test), the design's data_files, tessel_fpga.xdc, vivado.tcl, synth.ys (reading the
///   yosys_stand_ins, also in rtl/, in place of the sources they replace), program.tasm /
///   program.bin, and fpga.json (the marker: every file above with its size and hash);
/// then, unless options.synthesize is false, runs Yosys on synth.ys within options.timeout and
/// writes yosys.log, netlist.json, netlist.edif, yosys_stat.json and resources.json.
/// Fails with a complete message: a bad part, a source that cannot be read, Yosys not found,
/// Yosys failing ("yosys failed (exit 1): hw/rtl/x.sv:12: ERROR: syntax error, ...; log:
/// OUT/yosys.log", the error's file named by its original path) or running past the timeout
/// ("yosys killed after 5 s (--timeout-s 5); log: OUT/yosys.log"), a stand-in that replaces no
/// source, or a black box missing from the netlist. Every file is written atomically (never
/// cut short). fpga.json (kMarkerFile), resources.json, program.bin and program.tasm are
/// removed first; the program is written after every other input and fpga.json after it, so
/// a failed or killed run never leaves figures of an earlier one, nor a folder that
/// `tessel sim OUT` runs with a program beside half-old inputs (it finds no program).
Result<FlowResult> run_flow(const HwConfig& config, const FlowDesign& design,
                            const TestProgram& test, const FlowOptions& options,
                            const std::string& out_dir);

}  // namespace tessel::fpga
