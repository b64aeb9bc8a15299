// Bounded tool runs and the whole flow on a tiny design with the real Yosys (a few seconds).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/tool_run.hpp"

namespace tessel::fpga {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kSource = TESSEL_SOURCE_DIR;
const std::string kData = kSource + "/tests/fpga/data/";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool have_yosys() {
  return std::system("yosys -V >/dev/null 2>&1") == 0;
}

class FpgaFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_fpga_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FpgaFlow, tool_run_reports_exit_status_and_output) {
  auto run = run_tool({"sh", "-c", "echo hello; exit 3"}, dir_.string(), (dir_ / "out").string(),
                      milliseconds(10000));
  ASSERT_TRUE(run.ok()) << run.reason();
  EXPECT_EQ(run.value().outcome, ToolRun::Outcome::kFailed);
  EXPECT_EQ(run.value().exit_code, 3);
  EXPECT_EQ(read(dir_ / "out"), "hello\n");
}

TEST_F(FpgaFlow, tool_run_kills_the_whole_process_group_at_the_timeout) {
  // The shell starts a child that would outlive it; both must be gone when run_tool returns.
  const auto start = std::chrono::steady_clock::now();
  auto run = run_tool({"sh", "-c", "sleep 30 & echo $! > child.pid; wait"}, dir_.string(),
                      (dir_ / "out").string(), milliseconds(300));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(run.ok()) << run.reason();
  EXPECT_EQ(run.value().outcome, ToolRun::Outcome::kTimedOut);
  EXPECT_EQ(run.value().exit_code, -1);
  EXPECT_LT(seconds, 5.0);
  std::string child = read(dir_ / "child.pid");
  while (!child.empty() && child.back() == '\n') child.pop_back();
  ASSERT_FALSE(child.empty());
  // kill -0 fails once the sleeping child is gone (reaped by init after its parent died).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = std::system(("kill -0 " + child + " 2>/dev/null").c_str()) != 0;
    if (!gone) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(gone) << "process " << child << " outlived the timeout";
}

TEST_F(FpgaFlow, tool_that_cannot_start_is_a_failure) {
  EXPECT_EQ(
      run_tool({"tessel-no-such-tool"}, dir_.string(), (dir_ / "out").string(), milliseconds(1000))
          .reason(),
      "tessel-no-such-tool: cannot run: No such file or directory");
}

TEST(FpgaLog, first_error_line_is_the_located_yosys_error) {
  EXPECT_EQ(first_error_line("1. Executing\nrtl/x.sv:4: ERROR: syntax error, unexpected ';'\n"
                             "ERROR: second\n"),
            "rtl/x.sv:4: ERROR: syntax error, unexpected ';'");
  EXPECT_EQ(first_error_line("all fine\n"), "");
}

FlowDesign smoke_design() {
  FlowDesign design;
  design.top = "smoke_top";
  design.sources = {{"smoke_top.sv", kData + "smoke_top.sv", ""}};
  design.data_files = {{"smoke_rom.mem", kData + "smoke_rom.mem", ""}};
  return design;
}

const std::string kEdge = kSource + "/configs/hw/edge-small.yaml";

TEST_F(FpgaFlow, no_synth_writes_every_input_and_no_yosys_output) {
  const HwConfig config = load_hw_config(kEdge);
  FlowOptions options;
  options.synthesize = false;
  auto result =
      run_flow(config, smoke_design(), make_test_program(config).value(), options, dir_.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  EXPECT_EQ(result.value().files,
            (std::vector<std::string>{"rtl/smoke_top.sv", "filelist.f", "program.mem", "dram.mem",
                                      "dram.bin", "expected.mem", "hw.yaml", "smoke_rom.mem",
                                      "tessel_fpga.xdc", "vivado.tcl", "synth.ys", "program.tasm",
                                      "program.bin", "fpga.json"}));
  EXPECT_FALSE(result.value().resources.has_value());
  EXPECT_FALSE(fs::exists(dir_ / "resources.json"));
  EXPECT_EQ(read(dir_ / "filelist.f"), "rtl/smoke_top.sv\n");
  EXPECT_EQ(read(dir_ / "rtl/smoke_top.sv"), read(kData + "smoke_top.sv"));
  EXPECT_NE(read(dir_ / "tessel_fpga.xdc").find("create_clock -period 2.500 -name clk"),
            std::string::npos);
  // 5 instructions of 32 bytes: 5 lines of 64 hex digits; the DRAM image 0x300 B = 96 words.
  const std::string program = read(dir_ / "program.mem");
  EXPECT_EQ(program.size(), 5u * 65u);
  EXPECT_EQ(read(dir_ / "dram.mem").size(), 96u * 17u);
  // expected.mem: 32 int32 outputs = 16 words of 8 bytes; word 0 holds outputs 0 and 1.
  const std::string expected = read(dir_ / "expected.mem");
  EXPECT_EQ(expected.size(), 16u * 17u);
  EXPECT_EQ(expected.substr(8, 8), "00000026");  // output[0] = 38 in the low half
  EXPECT_EQ(read(dir_ / "hw.yaml"), to_yaml(config));
}

/// FNV-1a 64-bit, written out here as the oracle of the marker's hashes.
std::string fnv1a64(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ULL;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

TEST_F(FpgaFlow, the_marker_lists_every_input_with_its_size_and_hash) {
  const HwConfig config = load_hw_config(kEdge);
  FlowOptions options;
  options.synthesize = false;
  auto result =
      run_flow(config, smoke_design(), make_test_program(config).value(), options, dir_.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  const auto marker = nlohmann::json::parse(read(dir_ / "fpga.json"));
  EXPECT_EQ(marker["tool"], "tessel fpga");
  EXPECT_EQ(marker["config"], config.name);
  const auto& listed = marker["files"];
  ASSERT_EQ(listed.size(), result.value().files.size() - 1);  // all but the marker itself
  for (const std::string& name : result.value().files) {
    if (name == "fpga.json") continue;
    const std::string bytes = read(dir_ / name);
    ASSERT_TRUE(listed.contains(name)) << name;
    EXPECT_EQ(listed[name]["bytes"], bytes.size()) << name;
    EXPECT_EQ(listed[name]["fnv1a64"], fnv1a64(bytes)) << name;
  }
}

TEST_F(FpgaFlow, a_run_that_stops_early_leaves_no_marker_and_no_program) {
  const HwConfig config = load_hw_config(kEdge);
  FlowOptions options;
  options.synthesize = false;
  const TestProgram test = make_test_program(config).value();
  ASSERT_TRUE(run_flow(config, smoke_design(), test, options, dir_.string()).ok());
  ASSERT_TRUE(fs::exists(dir_ / "fpga.json"));
  ASSERT_TRUE(fs::exists(dir_ / "program.bin"));
  std::ofstream(dir_ / "resources.json") << "{}\n";  // figures of an earlier synthesis
  // The second run fails after its first files (a data file that cannot be read), as a kill
  // would stop it: the folder must not look complete, nor hold a program beside new inputs.
  FlowDesign broken = smoke_design();
  broken.data_files = {{"smoke_rom.mem", kData + "no_such_rom.mem", ""}};
  EXPECT_EQ(run_flow(config, broken, test, options, dir_.string()).reason(),
            kData + "no_such_rom.mem: cannot read");
  EXPECT_TRUE(fs::exists(dir_ / "dram.bin"));  // written before the failure
  for (const char* gone : {"fpga.json", "resources.json", "program.bin", "program.tasm"}) {
    EXPECT_FALSE(fs::exists(dir_ / gone)) << gone;
  }
  // No temporaries are left beside the outputs.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST_F(FpgaFlow, yosys_maps_the_smoke_design_to_the_hand_counted_primitives) {
  if (!have_yosys()) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config = load_hw_config(kEdge);
  auto result =
      run_flow(config, smoke_design(), make_test_program(config).value(), {}, dir_.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  ASSERT_TRUE(result.value().resources.has_value());
  const ResourceCounts& c = result.value().resources->counts;
  EXPECT_EQ(c.ff, 32 + 9);    // count and addr; rom_q sits in the BRAM, prod in the DSP
  EXPECT_EQ(c.carry, 8 + 3);  // a 32-bit and a 9-bit incrementer, 4 bits per CARRY4
  EXPECT_EQ(c.bram18, 1);     // 512 x 32 bits = one RAMB18E1 in 512x36 mode
  EXPECT_EQ(c.bram36, 0);
  EXPECT_EQ(c.dsp, 1);            // the 8x8 multiply
  EXPECT_EQ(c.io, 2 + 16 + 32);   // clk, rst, a, b in; q out
  EXPECT_EQ(c.lut, 16 + 16 + 2);  // 3-input XOR on q[15:0], 2-input on q[31:16], 2 INV
  auto back = read_resources((dir_ / "resources.json").string());
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), *result.value().resources);
  EXPECT_EQ(back.value().tool.rfind("Yosys ", 0), 0u);
  EXPECT_FALSE(back.value().fmax_mhz.has_value());
  EXPECT_TRUE(fs::exists(dir_ / "netlist.edif"));
  EXPECT_TRUE(fs::exists(dir_ / "netlist.json"));
}

TEST_F(FpgaFlow, yosys_error_is_reported_at_the_original_source_line) {
  if (!have_yosys()) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config = load_hw_config(kEdge);
  FlowDesign design;
  design.top = "broken";
  design.sources = {{"broken.sv", kData + "broken.sv", ""}};
  auto result = run_flow(config, design, make_test_program(config).value(), {}, dir_.string());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason(), "yosys failed (exit 1): " + kData +
                                 "broken.sv:4: ERROR: syntax error, unexpected ';'; log: " +
                                 (dir_ / "yosys.log").string());
  EXPECT_FALSE(fs::exists(dir_ / "resources.json"));
}

TEST_F(FpgaFlow, timeout_kills_yosys_and_leaves_no_resources) {
  if (!have_yosys()) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config = load_hw_config(kEdge);
  std::ofstream(dir_ / "resources.json") << "stale";
  FlowOptions options;
  options.timeout = milliseconds(200);
  auto result =
      run_flow(config, smoke_design(), make_test_program(config).value(), options, dir_.string());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason(),
            "yosys killed after 0.2 s (--timeout-s 0.2); log: " + (dir_ / "yosys.log").string());
  EXPECT_FALSE(fs::exists(dir_ / "resources.json"));
}

FlowDesign black_box_design() {
  FlowDesign design;
  design.top = "bb_top";
  design.sources = {{"bb_leaf.sv", kData + "bb_leaf.sv", ""},
                    {"bb_top.sv", kData + "bb_top.sv", ""}};
  design.yosys_stand_ins = {
      {"bb_leaf.sv", {"bb_leaf_blackbox.sv", kData + "bb_leaf_blackbox.sv", ""}}};
  design.black_boxes = {"bb_leaf"};
  ScratchpadConfig pad;
  pad.name = "p";
  pad.size_bytes = 2048;
  pad.banks = 1;
  pad.port_width_bytes = 2;
  ScratchpadBramMap map;
  map.scratchpads = {map_scratchpad(pad)};  // 1024 x 16 bits: one RAMB18E1
  map.bram18 = 1;
  design.analytic_scratchpads = map;
  return design;
}

TEST_F(FpgaFlow, yosys_reads_the_black_box_stand_in_and_vivado_the_real_source) {
  if (!have_yosys()) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config = load_hw_config(kEdge);
  auto result =
      run_flow(config, black_box_design(), make_test_program(config).value(), {}, dir_.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  EXPECT_EQ(read(dir_ / "filelist.f"), "rtl/bb_leaf.sv\nrtl/bb_top.sv\n");
  EXPECT_EQ(read(dir_ / "rtl/bb_leaf_blackbox.sv"), read(kData + "bb_leaf_blackbox.sv"));
  const std::string ys = read(dir_ / "synth.ys");
  EXPECT_NE(ys.find("read_verilog -sv rtl/bb_leaf_blackbox.sv\nread_verilog -sv rtl/bb_top.sv\n"),
            std::string::npos)
      << ys;
  EXPECT_EQ(ys.find("rtl/bb_leaf.sv"), std::string::npos);
  const std::string tcl = read(dir_ / "vivado.tcl");
  EXPECT_NE(tcl.find("  rtl/bb_leaf.sv\n  rtl/bb_top.sv\n"), std::string::npos) << tcl;
  EXPECT_EQ(tcl.find("blackbox"), std::string::npos);
  const FpgaResources& r = *result.value().resources;
  // The multiply is in the black box: no DSP; q's 16 FFs; 1 + 16 inputs, 16 outputs.
  EXPECT_EQ(r.counts.dsp, 0);
  EXPECT_EQ(r.counts.ff, 16);
  EXPECT_EQ(r.counts.io, 33);
  EXPECT_EQ(r.counts.cells_by_type.at("bb_leaf"), 1);
  EXPECT_TRUE(r.counts.unclassified.empty());
  EXPECT_EQ(r.black_boxes, std::vector<std::string>{"bb_leaf"});
  ASSERT_TRUE(r.scratchpad_bram.has_value());
  EXPECT_DOUBLE_EQ(r.bram36_equivalent_total(), 0.5);  // no synthesised BRAM + one RAMB18E1
  auto back = read_resources((dir_ / "resources.json").string());
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), r);
}

TEST_F(FpgaFlow, units_are_measured_on_the_hierarchical_netlist) {
  if (!have_yosys()) GTEST_SKIP() << "yosys not found on PATH";
  const HwConfig config = load_hw_config(kEdge);
  FlowDesign design;
  design.top = "bb_top";
  design.sources = {{"bb_leaf.sv", kData + "bb_leaf.sv", ""},
                    {"bb_top.sv", kData + "bb_top.sv", ""}};
  design.units = {{"multiplier", "bb_leaf", "the 8 x 8 multiply"}};
  auto result = run_flow(config, design, make_test_program(config).value(), {}, dir_.string());
  ASSERT_TRUE(result.ok()) << result.reason();
  const FpgaResources& r = *result.value().resources;
  EXPECT_NE(read(dir_ / "synth.ys").find("tee -q -o yosys_stat_hier.txt stat\nflatten\n"),
            std::string::npos);
  ASSERT_EQ(r.units.size(), 2u);
  // bb_leaf is one DSP48E1 and nothing else; bb_top's own cells are q's 16 FFs, 1 + 16 inputs,
  // 16 outputs and the clock buffer.
  const UnitCost& leaf = r.units[0];
  EXPECT_EQ(leaf.name, "multiplier");
  EXPECT_EQ(leaf.instances, 1);
  EXPECT_EQ(leaf.counts.dsp, 1);
  EXPECT_EQ(leaf.counts.ff + leaf.counts.lut + leaf.counts.io, 0);
  const UnitCost& other = r.units[1];
  EXPECT_EQ(other.name, "other");
  EXPECT_EQ(other.counts.dsp, 0);
  EXPECT_EQ(other.counts.ff, 16);
  EXPECT_EQ(other.counts.io, 33);
  EXPECT_EQ(r.counts.dsp, 1);
  auto back = read_resources((dir_ / "resources.json").string());
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), r);
}

TEST_F(FpgaFlow, a_black_box_missing_from_the_netlist_fails) {
  // A stand-in "yosys" whose netlist has q's flip-flops but no bb_leaf cell, as when the logic
  // around a black box is trimmed away.
  const fs::path fake = dir_ / "fake_yosys.sh";
  std::ofstream(fake) << "#!/bin/sh\necho '{\"creator\": \"fake\", \"design\": "
                         "{\"num_cells_by_type\": {\"FDRE\": 16}}}' > yosys_stat.json\n";
  fs::permissions(fake, fs::perms::owner_all);
  const HwConfig config = load_hw_config(kEdge);
  FlowOptions options;
  options.yosys = fake.string();
  auto result = run_flow(config, black_box_design(), make_test_program(config).value(), options,
                         (dir_ / "out").string());
  EXPECT_EQ(result.reason(),
            "yosys: the black box 'bb_leaf' is not in the mapped netlist (yosys_stat.json): the "
            "logic around it was trimmed");
  EXPECT_FALSE(fs::exists(dir_ / "out/resources.json"));
}

TEST_F(FpgaFlow, a_stand_in_for_no_source_fails) {
  const HwConfig config = load_hw_config(kEdge);
  FlowDesign design = black_box_design();
  design.yosys_stand_ins[0].replaces = "bb_lief.sv";
  FlowOptions options;
  options.synthesize = false;
  EXPECT_EQ(
      run_flow(config, design, make_test_program(config).value(), options, dir_.string()).reason(),
      "Yosys stand-in 'bb_leaf_blackbox.sv' replaces 'bb_lief.sv', which is not a design "
      "source");
}

TEST_F(FpgaFlow, bad_part_fails_before_writing_anything) {
  const HwConfig config = load_hw_config(kEdge);
  FlowOptions options;
  options.part = "xc7a100t";
  auto result = run_flow(config, smoke_design(), make_test_program(config).value(), options,
                         (dir_ / "out").string());
  EXPECT_EQ(result.reason(),
            "--part: part 'xc7a100t': no speed grade (Vivado needs the full name, e.g. "
            "xc7a100t-1)");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace tessel::fpga
