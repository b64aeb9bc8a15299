// Classifying Yosys `stat -json` cell counts and the resources.json round trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hw/fpga/resources.hpp"

namespace tessel::fpga {
namespace {

// The shape of Yosys 0.23's `stat -json` (abridged: the per-module entry and wire counts).
constexpr const char* kStat = R"json({
   "creator": "Yosys 0.23 (git sha1 7ce5011c24b)",
   "invocation": "stat -json ",
   "modules": { "\\top": { "num_cells": 3, "num_cells_by_type": { "LUT2": 1 } } },
   "design": {
      "num_cells": 118,
      "num_cells_by_type": {
         "BUFG": 1, "CARRY4": 11, "DSP48E1": 2, "FDRE": 40, "FDSE": 1, "IBUF": 18, "INV": 2,
         "LUT2": 16, "LUT6": 3, "MUXF7": 2, "OBUF": 3, "RAM64M": 2, "SRLC32E": 1,
         "RAMB18E1": 3, "RAMB36E1": 2, "LDCE": 1, "GND": 1, "VCC": 1
      }
   }
})json";

TEST(FpgaResources, cells_are_grouped_as_vivado_reports_them) {
  auto parsed = counts_from_yosys_stat(kStat, "stat.json");
  ASSERT_TRUE(parsed.ok()) << parsed.reason();
  const ResourceCounts& c = parsed.value().first;
  EXPECT_EQ(parsed.value().second, "Yosys 0.23 (git sha1 7ce5011c24b)");
  EXPECT_EQ(c.lut, 16 + 3 + 2);           // LUT2 + LUT6 + INV
  EXPECT_EQ(c.lut_as_memory, 2 * 4 + 1);  // RAM64M is 4 LUTs, SRLC32E 1
  EXPECT_EQ(c.ff, 41);
  EXPECT_EQ(c.latch, 1);
  EXPECT_EQ(c.bram18, 3);
  EXPECT_EQ(c.bram36, 2);
  EXPECT_DOUBLE_EQ(c.bram36_equivalent(), 3.5);
  EXPECT_EQ(c.dsp, 2);
  EXPECT_EQ(c.carry, 11);
  EXPECT_EQ(c.muxf, 2);
  EXPECT_EQ(c.io, 21);
  EXPECT_EQ(c.clock_buffers, 1);
  EXPECT_EQ(c.unclassified, (std::map<std::string, std::int64_t>{{"GND", 1}, {"VCC", 1}}));
  EXPECT_EQ(c.cells_by_type.size(), 18u);
}

TEST(FpgaResources, single_module_stat_without_design_entry_is_read) {
  auto parsed = counts_from_yosys_stat(
      R"({"creator": "Yosys 0.23", "modules": {"\\t": {"num_cells_by_type": {"FDRE": 7}}}})",
      "s.json");
  ASSERT_TRUE(parsed.ok()) << parsed.reason();
  EXPECT_EQ(parsed.value().first.ff, 7);
}

TEST(FpgaResources, malformed_stat_names_the_file) {
  EXPECT_EQ(counts_from_yosys_stat(R"({"modules": {}})", "s.json").reason(),
            "s.json: no design.num_cells_by_type (not the output of Yosys `stat -json`?)");
  EXPECT_EQ(counts_from_yosys_stat(R"({"design": {"num_cells_by_type": {"FDRE": -1}}})", "s.json")
                .reason(),
            "s.json: num_cells_by_type.FDRE is not a count");
  EXPECT_EQ(counts_from_yosys_stat("nope", "s.json").reason().rfind("s.json: not JSON (", 0), 0u);
}

FpgaResources sample() {
  FpgaResources r;
  r.config_name = "edge-small";
  r.config_hash = "0123456789abcdef";
  r.part = "xc7a100tcsg324-1";
  r.yosys_family = "xc7";
  r.top = "tessel_fpga_top";
  r.clock_mhz = 400;
  r.tool = "Yosys 0.23 (git sha1 7ce5011c24b)";
  r.tessel_version = "v0.1.0";
  r.synth_seconds = 12.5;
  r.counts = counts_from_yosys_stat(kStat, "stat.json").value().first;
  r.fmax_reason = std::string(kNoFmaxReason);
  return r;
}

/// sample() with a black-boxed scratchpad of 128 KiB in 8 banks x 8 B (edge-small's): 32 RAMB36E1.
FpgaResources sample_with_scratchpads() {
  FpgaResources r = sample();
  ScratchpadConfig unified;
  unified.name = "unified";
  unified.size_bytes = 128 * 1024;
  unified.banks = 8;
  unified.port_width_bytes = 8;
  ScratchpadBramMap map;
  map.scratchpads.push_back(map_scratchpad(unified));
  map.bram36 = 32;
  r.black_boxes = {"tessel_sram"};
  r.scratchpad_bram = map;
  return r;
}

TEST(FpgaResources, json_round_trips_through_read_resources) {
  for (const FpgaResources& r : {sample(), sample_with_scratchpads()}) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tessel_fpga_resources_" + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << to_json(r);
    auto back = read_resources(path.string());
    std::filesystem::remove(path);
    ASSERT_TRUE(back.ok()) << back.reason();
    EXPECT_EQ(back.value(), r);
  }
}

TEST(FpgaResources, json_layout_is_fixed) {
  const std::string json = to_json(sample());
  EXPECT_EQ(json.rfind("{\n  \"schema\": \"tessel.fpga.resources/2\",\n  \"config\": {\n"
                       "    \"name\": \"edge-small\",\n    \"hash\": \"0123456789abcdef\"\n  },\n",
                       0),
            0u)
      << json;
  EXPECT_NE(json.find("\"resources\": {\n    \"lut\": 21,\n    \"lut_as_memory\": 9,\n"
                      "    \"ff\": 41,\n"),
            std::string::npos);
  EXPECT_NE(json.find("\"bram36_equivalent\": 3.5,"), std::string::npos);
  EXPECT_NE(json.find("\"black_boxes\": [],\n  \"scratchpad_bram\": null,\n"
                      "  \"bram36_equivalent_total\": 3.5,\n  \"fmax_mhz\": null,"),
            std::string::npos)
      << json;
}

TEST(FpgaResources, analytic_scratchpad_bram_is_separate_from_the_synthesised_counts) {
  const FpgaResources r = sample_with_scratchpads();
  EXPECT_DOUBLE_EQ(r.counts.bram36_equivalent(), 3.5);  // Yosys's: 2 RAMB36E1 + 3 RAMB18E1
  EXPECT_DOUBLE_EQ(r.bram36_equivalent_total(), 35.5);  // + 32 analytic
  const std::string json = to_json(r);
  EXPECT_NE(
      json.find("\"black_boxes\": [\n    \"tessel_sram\"\n  ],\n"
                "  \"scratchpad_bram\": {\n"
                "    \"method\": \"analytic: not synthesised (hw/fpga/bram_map.hpp)\",\n"
                "    \"port_assumption\": \"each bank of a scratchpad is one simple dual-port"),
      std::string::npos)
      << json;
  EXPECT_NE(json.find("    \"bram18\": 0,\n    \"bram36\": 32,\n    \"bram36_equivalent\": 32.0,\n"
                      "    \"scratchpads\": [\n      {\n        \"name\": \"unified\",\n"
                      "        \"size_bytes\": 131072,\n        \"banks\": 8,\n"
                      "        \"port_width_bytes\": 8,\n        \"bank_depth_words\": 2048,\n"
                      "        \"bank_width_bits\": 64,\n        \"primitive\": \"RAMB36E1\",\n"
                      "        \"shape\": \"512x72\",\n        \"primitives_per_bank\": 4,\n"
                      "        \"bram18\": 0,\n        \"bram36\": 32,\n"
                      "        \"bram36_equivalent\": 32.0,\n        \"bit_efficiency\": 1.0\n"
                      "      }\n    ]\n  },\n  \"bram36_equivalent_total\": 35.5,\n"),
            std::string::npos)
      << json;
  // The synthesised block RAM stays Yosys's alone.
  EXPECT_NE(json.find("\"bram36\": 2,\n    \"bram36_equivalent\": 3.5,"), std::string::npos);
}

TEST(FpgaResources, read_rejects_other_schemas_and_missing_counts_by_key) {
  EXPECT_EQ(parse_resources(R"({"schema": "x"})", "r.json").reason(),
            "r.json: schema: expected \"tessel.fpga.resources/2\"");
  std::string json = to_json(sample());
  json.replace(json.find("\"dsp\": 2"), 8, "\"dsp\": -2");
  EXPECT_EQ(parse_resources(json, "r.json").reason(),
            "r.json: resources.dsp: missing or not a valid value");
  EXPECT_EQ(read_resources("/nonexistent/r.json").reason(), "/nonexistent/r.json: cannot read");
  std::string shape = to_json(sample_with_scratchpads());
  shape.replace(shape.find("\"512x72\""), 8, "\"512x64\"");
  EXPECT_EQ(parse_resources(shape, "r.json").reason(),
            "r.json: scratchpad_bram.scratchpads[0].shape: missing or not a valid value");
}

}  // namespace
}  // namespace tessel::fpga
