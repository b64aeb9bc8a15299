// Generators of the XDC, Vivado TCL and Yosys scripts, $readmemh images and file-list parsing.
#include "hw/fpga/scripts.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "support/strings.hpp"

namespace tessel::fpga {
namespace {

std::string fixed3(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

std::string xdc_text(const FpgaTarget& target, std::string_view clock_port,
                     std::string_view double_rate_port) {
  std::ostringstream out;
  out << "# " << target.clock_mhz << " MHz from the config's " << target.clock_key << " on "
      << target.part << "\n";
  out << "create_clock -period " << fixed3(target.clock_period_ns()) << " -name " << clock_port
      << " [get_ports " << clock_port << "]\n";
  if (!double_rate_port.empty()) {
    out << "# " << 2 * target.clock_mhz << " MHz: the scratchpads' block RAMs (" << double_rate_port
        << ", rising with " << clock_port << ")\n";
    out << "create_clock -period " << fixed3(target.clock_period_ns() / 2) << " -name "
        << double_rate_port << " [get_ports " << double_rate_port << "]\n";
  }
  return out.str();
}

std::string vivado_tcl(const SynthesisInputs& inputs, const FpgaTarget& target) {
  std::ostringstream out;
  out << "# Vivado non-project flow: " << inputs.title << "\n"
      << "# Run: vivado -mode batch -source vivado.tcl  (from any folder)\n"
      << "set here [file dirname [file normalize [info script]]]\n"
      << "cd $here\n"
      << "file mkdir vivado\n"
      << "read_verilog -sv {";
  for (const auto& source : inputs.sources) out << "\n  " << source;
  out << "\n}\n";
  if (!inputs.mem_files.empty()) {
    out << "read_mem {";
    for (const auto& mem : inputs.mem_files) out << " " << mem;
    out << " }\n";
  }
  out << "read_xdc " << inputs.xdc_file << "\n"
      << "synth_design -top " << inputs.top << " -part " << target.part;
  if (!inputs.include_dirs.empty()) {
    out << " -include_dirs {";
    for (const auto& dir : inputs.include_dirs) out << " " << dir;
    out << " }";
  }
  out << "\n"
      << "# No pin locations: the ports are board-specific. Keep the unconstrained-I/O DRCs as\n"
      << "# warnings so that the bitstream is written for resource and timing figures.\n"
      << "set_property SEVERITY {Warning} [get_drc_checks NSTD-1]\n"
      << "set_property SEVERITY {Warning} [get_drc_checks UCIO-1]\n"
      << "opt_design\n"
      << "place_design\n"
      << "route_design\n"
      << "report_utilization -file vivado/utilization.rpt\n"
      << "report_timing_summary -file vivado/timing_summary.rpt\n"
      << "write_bitstream -force vivado/" << inputs.top << ".bit\n";
  return out.str();
}

std::string yosys_script(const SynthesisInputs& inputs, const FpgaTarget& target,
                         const YosysOutputs& outputs) {
  std::ostringstream out;
  out << "# Yosys synthesis: " << inputs.title << "\n"
      << "# Run from this folder: yosys -l yosys.log -s synth.ys\n";
  std::string includes;
  for (const auto& dir : inputs.include_dirs) includes += " -I" + dir;
  for (const auto& source : inputs.yosys_sources.empty() ? inputs.sources : inputs.yosys_sources) {
    out << "read_verilog -sv" << includes << " " << source << "\n";
  }
  // flatten before stat: Yosys 0.23's `stat -json` writes its hierarchy text into the JSON
  // when the design has two or more levels of submodules (black boxes stay cells).
  out << "synth_xilinx -family " << target.yosys_family << " -top " << inputs.top << "\n"
      << "tee -q -o " << outputs.stat_hier_text << " stat\n"
      << "flatten\n"
      << "tee -q -o " << outputs.stat_json << " stat -json\n"
      << "write_json " << outputs.netlist_json << "\n"
      << "write_edif " << outputs.netlist_edif << "\n";
  return out.str();
}

Result<std::string> mem_image(std::span<const std::uint8_t> bytes, int word_bytes,
                              std::size_t depth_words) {
  if (word_bytes <= 0)
    return fail("mem image: word width must be positive, got " + std::to_string(word_bytes) +
                " bytes");
  const auto width = static_cast<std::size_t>(word_bytes);
  const std::size_t data_words = (bytes.size() + width - 1) / width;
  if (depth_words != 0 && data_words > depth_words) {
    return fail("mem image: " + std::to_string(bytes.size()) + " bytes need " +
                std::to_string(data_words) + " words of " + std::to_string(word_bytes) +
                " bytes, more than the memory's " + std::to_string(depth_words));
  }
  const std::size_t words = std::max(data_words, depth_words);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  text.reserve(words * (2 * width + 1));
  for (std::size_t w = 0; w < words; ++w) {
    for (std::size_t k = width; k-- > 0;) {
      const std::size_t index = w * width + k;
      const std::uint8_t byte = index < bytes.size() ? bytes[index] : 0;
      text.push_back(kHex[byte >> 4]);
      text.push_back(kHex[byte & 15]);
    }
    text.push_back('\n');
  }
  return text;
}

Result<FileList> parse_file_list(std::string_view text, const std::string& file_label,
                                 const std::string& base_dir,
                                 const std::map<std::string, std::string>& variables) {
  FileList list;
  std::istringstream lines{std::string(text)};
  std::string raw;
  int line_number = 0;
  auto resolve = [&](const std::string& path) {
    const std::filesystem::path p(path);
    return p.is_absolute() ? path
                           : (std::filesystem::path(base_dir) / p).lexically_normal().string();
  };
  while (std::getline(lines, raw)) {
    ++line_number;
    const std::string where = file_label + ":" + std::to_string(line_number) + ": ";
    std::string line = raw;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (const auto slashes = line.find("//"); slashes != std::string::npos) line.erase(slashes);
    line = std::string(trim(line));
    if (line.empty()) continue;
    // ${NAME} substitution.
    std::string expanded;
    for (std::size_t i = 0; i < line.size();) {
      if (line.compare(i, 2, "${") == 0) {
        const auto close = line.find('}', i);
        if (close == std::string::npos) return fail(where + "unterminated '${' in '" + line + "'");
        const std::string name = line.substr(i + 2, close - i - 2);
        const auto found = variables.find(name);
        if (found == variables.end()) {
          return fail(where + "unknown variable '${" + name + "}'");
        }
        expanded += found->second;
        i = close + 1;
      } else {
        expanded += line[i++];
      }
    }
    if (expanded.rfind("+incdir+", 0) == 0) {
      list.include_dirs.push_back(resolve(expanded.substr(8)));
      continue;
    }
    if (expanded[0] == '-' || expanded[0] == '+') {
      return fail(where + "unsupported option '" + expanded +
                  "' (a file list here holds paths and +incdir+ only)");
    }
    list.sources.push_back(resolve(expanded));
  }
  if (list.sources.empty()) return fail(file_label + ": no source files listed");
  return list;
}

}  // namespace tessel::fpga
