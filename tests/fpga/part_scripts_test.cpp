// Part validation and resolution, the XDC period, the Vivado/Yosys scripts, .mem images, file
// lists.
#include <gtest/gtest.h>

#include "configs/hw_config.hpp"
#include "hw/fpga/part.hpp"
#include "hw/fpga/scripts.hpp"

namespace tessel::fpga {
namespace {

const std::string kConfigs = std::string(TESSEL_SOURCE_DIR) + "/configs/hw/";

TEST(FpgaPart, accepts_seven_series_parts_in_vivado_spelling) {
  for (const char* part : {"xc7a100tcsg324-1", "xc7z020clg400-1", "xc7k325tffg900-2",
                           "xc7s50csga324-1il", "xc7a35ticsg324-1l", "xc7vx485tffg1761-2"}) {
    EXPECT_TRUE(check_part(part).ok()) << part << ": " << check_part(part).reason();
  }
}

TEST(FpgaPart, rejects_non_seven_series_and_incomplete_names_with_the_rule) {
  EXPECT_EQ(
      check_part("xcvu9p-flga2104-2-i").reason(),
      "part 'xcvu9p-flga2104-2-i': not a 7-series part (expected xc7a/xc7k/xc7v/xc7z/xc7s..., "
      "e.g. xc7a100tcsg324-1); the Yosys step is synth_xilinx -family xc7");
  EXPECT_EQ(check_part("xc7q100t-1").reason(),
            "part 'xc7q100t-1': unknown 7-series family letter after 'xc7' (expected a, k, v, z "
            "or s)");
  EXPECT_EQ(check_part("xc7a100t").reason(),
            "part 'xc7a100t': no speed grade (Vivado needs the full name, e.g. xc7a100t-1)");
  EXPECT_EQ(check_part("xc7vxT-1").reason(),
            "part 'xc7vxT-1': no device size after 'xc7vx' (e.g. xc7a100t)");
  EXPECT_EQ(check_part("xc7aT-1").reason(),
            "part 'xc7aT-1': no device size after 'xc7a' (e.g. xc7a100t)");
  EXPECT_EQ(check_part("xc7a100tCSG324-1").reason(),
            "part 'xc7a100tCSG324-1': character 'C' (Vivado part names are lower-case letters, "
            "digits and one '-')");
}

TEST(FpgaPart, config_fpga_key_wins_over_default_and_command_line_over_both) {
  const HwConfig vta = load_hw_config(kConfigs + "vta-pynq.yaml");
  auto from_config = resolve_target(vta, std::nullopt);
  ASSERT_TRUE(from_config.ok()) << from_config.reason();
  EXPECT_EQ(from_config.value().part, "xc7z020clg400-1");
  EXPECT_EQ(from_config.value().part_source, TargetSource::kConfig);
  EXPECT_EQ(from_config.value().clock_mhz, 100);
  EXPECT_EQ(from_config.value().clock_key, "fpga.clock_mhz");

  const HwConfig edge = load_hw_config(kConfigs + "edge-small.yaml");
  auto by_default = resolve_target(edge, std::nullopt);
  ASSERT_TRUE(by_default.ok());
  EXPECT_EQ(by_default.value().part, "xc7a100tcsg324-1");
  EXPECT_EQ(by_default.value().part_source, TargetSource::kDefault);
  EXPECT_EQ(by_default.value().clock_mhz, 400);
  EXPECT_EQ(by_default.value().clock_key, "clock_mhz");

  auto overridden = resolve_target(vta, std::string("xc7a35ticsg324-1l"));
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(overridden.value().part, "xc7a35ticsg324-1l");
  EXPECT_EQ(overridden.value().part_source, TargetSource::kCommandLine);
}

TEST(FpgaPart, bad_part_names_its_origin) {
  const HwConfig edge = load_hw_config(kConfigs + "edge-small.yaml");
  EXPECT_EQ(resolve_target(edge, std::string("xc7a100t")).reason(),
            "--part: part 'xc7a100t': no speed grade (Vivado needs the full name, e.g. "
            "xc7a100t-1)");
  const HwConfig bad = load_hw_config(kConfigs + "edge-small.yaml",
                                      {{"fpga", "{part: xczu9eg-ffvb1156-2-e, clock_mhz: 300}"}});
  EXPECT_EQ(resolve_target(bad, std::nullopt).reason(),
            "edge-small: fpga.part: part 'xczu9eg-ffvb1156-2-e': not a 7-series part (expected "
            "xc7a/xc7k/xc7v/xc7z/xc7s..., e.g. xc7a100tcsg324-1); the Yosys step is synth_xilinx "
            "-family xc7");
}

FpgaTarget target_at(double clock_mhz) {
  FpgaTarget target;
  target.part = "xc7a100tcsg324-1";
  target.yosys_family = "xc7";
  target.clock_mhz = clock_mhz;
  target.clock_key = "clock_mhz";
  return target;
}

TEST(FpgaXdc, period_is_one_over_the_clock_in_ns_with_three_decimals) {
  EXPECT_EQ(xdc_text(target_at(400)),
            "# 400 MHz from the config's clock_mhz on xc7a100tcsg324-1\n"
            "create_clock -period 2.500 -name clk [get_ports clk]\n");
  EXPECT_NE(xdc_text(target_at(100)).find("-period 10.000 "), std::string::npos);
  EXPECT_NE(xdc_text(target_at(150)).find("-period 6.667 "), std::string::npos);
  EXPECT_NE(
      xdc_text(target_at(333), "sys_clk").find("-period 3.003 -name sys_clk [get_ports sys_clk]"),
      std::string::npos);
  // The scratchpads' double-rate clock: half the period, on its own port.
  EXPECT_EQ(xdc_text(target_at(150), "clk", "clk2x"),
            "# 150 MHz from the config's clock_mhz on xc7a100tcsg324-1\n"
            "create_clock -period 6.667 -name clk [get_ports clk]\n"
            "# 300 MHz: the scratchpads' block RAMs (clk2x, rising with clk)\n"
            "create_clock -period 3.333 -name clk2x [get_ports clk2x]\n");
}

SynthesisInputs two_file_design() {
  SynthesisInputs inputs;
  inputs.sources = {"rtl/pkg.sv", "rtl/top.sv"};
  inputs.mem_files = {"program.mem", "dram.mem"};
  inputs.xdc_file = "tessel_fpga.xdc";
  inputs.top = "top";
  inputs.title = "t";
  return inputs;
}

TEST(FpgaVivado, non_project_script_reads_synthesises_implements_and_writes_the_bitstream) {
  EXPECT_EQ(vivado_tcl(two_file_design(), target_at(400)),
            "# Vivado non-project flow: t\n"
            "# Run: vivado -mode batch -source vivado.tcl  (from any folder)\n"
            "set here [file dirname [file normalize [info script]]]\n"
            "cd $here\n"
            "file mkdir vivado\n"
            "read_verilog -sv {\n  rtl/pkg.sv\n  rtl/top.sv\n}\n"
            "read_mem { program.mem dram.mem }\n"
            "read_xdc tessel_fpga.xdc\n"
            "synth_design -top top -part xc7a100tcsg324-1\n"
            "# No pin locations: the ports are board-specific. Keep the unconstrained-I/O DRCs as\n"
            "# warnings so that the bitstream is written for resource and timing figures.\n"
            "set_property SEVERITY {Warning} [get_drc_checks NSTD-1]\n"
            "set_property SEVERITY {Warning} [get_drc_checks UCIO-1]\n"
            "opt_design\n"
            "place_design\n"
            "route_design\n"
            "report_utilization -file vivado/utilization.rpt\n"
            "report_timing_summary -file vivado/timing_summary.rpt\n"
            "write_bitstream -force vivado/top.bit\n");
}

TEST(FpgaYosys, script_reads_every_source_then_synth_xilinx_stat_and_netlists) {
  SynthesisInputs inputs = two_file_design();
  inputs.include_dirs = {"/inc"};
  EXPECT_EQ(yosys_script(inputs, target_at(400), {}),
            "# Yosys synthesis: t\n"
            "# Run from this folder: yosys -l yosys.log -s synth.ys\n"
            "read_verilog -sv -I/inc rtl/pkg.sv\n"
            "read_verilog -sv -I/inc rtl/top.sv\n"
            "synth_xilinx -family xc7 -top top\n"
            "tee -q -o yosys_stat_hier.txt stat\n"
            "flatten\n"
            "tee -q -o yosys_stat.json stat -json\n"
            "write_json netlist.json\n"
            "write_edif netlist.edif\n");
}

TEST(FpgaMem, words_are_little_endian_hex_lines_zero_padded_to_depth) {
  const std::vector<std::uint8_t> bytes = {0x01, 0x02, 0x03, 0x04, 0x05, 0xab};
  EXPECT_EQ(mem_image(bytes, 4).value(), "04030201\n0000ab05\n");
  EXPECT_EQ(mem_image(bytes, 2, 4).value(), "0201\n0403\nab05\n0000\n");
  EXPECT_EQ(mem_image(bytes, 1, 6).value(), "01\n02\n03\n04\n05\nab\n");
  EXPECT_EQ(mem_image(bytes, 2, 2).reason(),
            "mem image: 6 bytes need 3 words of 2 bytes, more than the memory's 2");
  EXPECT_EQ(mem_image(bytes, 0).reason(), "mem image: word width must be positive, got 0 bytes");
}

TEST(FpgaFileList, paths_resolve_against_the_base_with_variables_and_comments) {
  auto list = parse_file_list(
      "# packages first\n${CFG_PKG}\nhw/rtl/generated/tessel_isa_pkg.sv  // the ISA\n\n"
      "+incdir+hw/rtl/include\n/abs/top.sv\n",
      "filelist.f", "/repo", {{"CFG_PKG", "/out/rtl/tessel_cfg_pkg.sv"}});
  ASSERT_TRUE(list.ok()) << list.reason();
  EXPECT_EQ(list.value().sources,
            (std::vector<std::string>{"/out/rtl/tessel_cfg_pkg.sv",
                                      "/repo/hw/rtl/generated/tessel_isa_pkg.sv", "/abs/top.sv"}));
  EXPECT_EQ(list.value().include_dirs, std::vector<std::string>{"/repo/hw/rtl/include"});
}

TEST(FpgaFileList, unknown_variable_option_and_empty_list_are_located) {
  EXPECT_EQ(parse_file_list("a.sv\n${NOPE}/b.sv\n", "hw/rtl/filelist.f", "/r", {}).reason(),
            "hw/rtl/filelist.f:2: unknown variable '${NOPE}'");
  EXPECT_EQ(parse_file_list("-y lib\n", "f.f", "/r", {}).reason(),
            "f.f:1: unsupported option '-y lib' (a file list here holds paths and +incdir+ only)");
  EXPECT_EQ(parse_file_list("# nothing\n", "f.f", "/r", {}).reason(),
            "f.f: no source files listed");
}

}  // namespace
}  // namespace tessel::fpga
