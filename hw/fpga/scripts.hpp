// Text of the flow's generated files: XDC, Vivado TCL, Yosys script, $readmemh images, file lists.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hw/fpga/part.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// The clock constraint: `create_clock -period <ns, 3 decimals> -name <port> [get_ports <port>]`
/// preceded by a comment naming the clock in MHz and the config key it came from.
/// 400 MHz gives "-period 2.500", 150 MHz "-period 6.667". With `double_rate_port`, a second
/// clock of half the period on that port (the scratchpads' clk2x; both rise at time 0, so the
/// tools time the paths between them as one synchronous pair).
std::string xdc_text(const FpgaTarget& target, std::string_view clock_port = "clk",
                     std::string_view double_rate_port = "");

/// What the Vivado and Yosys scripts read; every path is relative to the output folder, which
/// both scripts make their working directory.
struct SynthesisInputs {
  std::vector<std::string> sources;  ///< SystemVerilog files in read order (packages first)
  /// What Yosys reads instead of `sources` when not empty (the same list with synthesis-only
  /// stand-ins, e.g. a black box, in place of some files); Vivado always reads `sources`.
  std::vector<std::string> yosys_sources;
  std::vector<std::string> include_dirs;  ///< `include search folders (absolute)
  std::vector<std::string> mem_files;     ///< $readmemh images the sources name
  std::string xdc_file;                   ///< the clock constraint
  std::string top;                        ///< top module, e.g. "tessel_fpga_top"
  std::string title;                      ///< first comment line, e.g. "edge-small (hash ...)"
};

/// A Vivado non-project batch script (`vivado -mode batch -source vivado.tcl`): read_verilog -sv,
/// read_mem, read_xdc, synth_design -top -part, opt_design, place_design, route_design,
/// report_utilization, report_timing_summary, write_bitstream, all into `vivado/`. The design's
/// ports carry no pin locations (board-specific), so the unconstrained-I/O DRCs NSTD-1 and
/// UCIO-1 are lowered to warnings, as is usual for such resource/timing runs.
std::string vivado_tcl(const SynthesisInputs& inputs, const FpgaTarget& target);

/// Files the Yosys script writes (relative to the output folder).
struct YosysOutputs {
  std::string netlist_json = "netlist.json";
  std::string netlist_edif = "netlist.edif";
  std::string stat_json = "yosys_stat.json";
  std::string stat_hier_text = "yosys_stat_hier.txt";  ///< `stat` before flatten: per module
};

/// A Yosys script: read_verilog -sv of every source (`yosys_sources` when not empty), `synth_xilinx
/// -family <family> -top <top>`, `tee -q -o <stat_hier_text> stat` (each module's own cells, the
/// per-unit breakdown's input), `flatten` (as Vivado does by default), `tee -q -o <stat> stat
/// -json`, write_json, write_edif.
std::string yosys_script(const SynthesisInputs& inputs, const FpgaTarget& target,
                         const YosysOutputs& outputs);

/// A `$readmemh` image of `bytes`: one `word_bytes`-wide word per line, `2 * word_bytes`
/// lower-case hex digits, the word's bytes little-endian (byte 0 of the word is its least
/// significant byte), zero-padded to `depth_words` lines (when larger than the data).
/// Fails when word_bytes is not positive or the data needs more than depth_words words.
Result<std::string> mem_image(std::span<const std::uint8_t> bytes, int word_bytes,
                              std::size_t depth_words = 0);

/// A parsed `.f` file list: source paths in order and `+incdir+` folders.
struct FileList {
  std::vector<std::string> sources;
  std::vector<std::string> include_dirs;
};

/// Parses a file list: one path per line, blank lines and `#` or `//` comments ignored,
/// `+incdir+DIR` accepted, `${NAME}` replaced from `variables`, relative paths resolved
/// against `base_dir`. Fails, naming `file_label:LINE`, on an unknown `${NAME}`, any other
/// option (a line starting with '-' or '+'), or an empty list.
Result<FileList> parse_file_list(std::string_view text, const std::string& file_label,
                                 const std::string& base_dir,
                                 const std::map<std::string, std::string>& variables);

}  // namespace tessel::fpga
