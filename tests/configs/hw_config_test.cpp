// HwConfig: shipped configs' derived figures by hand, defaults, overrides, round trips, hashing.
#include "configs/hw_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace tessel {
namespace {

HwConfig shipped(const std::string& name, const std::vector<KeyOverride>& overrides = {}) {
  return load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml",
                        overrides);
}

// A small valid config; tests edit it by override or by string replacement.
const std::string kTiny = R"(name: tiny
description: a 2x2 array for hand-computed figures
clock_mhz: 100
matrix:
  rows: 2
  cols: 2
  input_bits: 8
  weight_bits: 8
  accumulator_bits: 32
vector:
  lanes: 2
scratchpads:
  - name: buf
    size: 1KiB
    banks: 2
    port_width_bytes: 4
    holds: [outputs, weights, activations, accumulators]
dram:
  bandwidth: 200MB/s
  latency_ns: 25
  burst_bytes: 16
  max_outstanding_requests: 2
queues:
  instruction_queue_depth: 4
  token_fifo_depth: 2
)";

HwConfig tiny(const std::vector<KeyOverride>& overrides = {}) {
  auto parsed = parse_hw_config(kTiny, "tiny.yaml", overrides);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.reason());
  return parsed.ok() ? parsed.value() : HwConfig{};
}

std::vector<std::string> diagnostics_of(const std::string& text,
                                        const std::vector<KeyOverride>& overrides = {}) {
  std::vector<std::string> lines;
  for (const auto& d : check_hw_config_text(text, "tiny.yaml", overrides).diagnostics) {
    lines.push_back(d.str());
  }
  return lines;
}

TEST(HwConfig, tiny_config_derived_figures_by_hand) {
  const HwConfig c = tiny();
  EXPECT_EQ(c.macs_per_cycle(), 4);                 // 2 x 2
  EXPECT_DOUBLE_EQ(c.peak_gops(), 0.8);             // 2 x 4 MACs x 100e6 Hz = 0.8e9 op/s
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 2.0);  // 200e6 B/s / 100e6 Hz
  EXPECT_DOUBLE_EQ(c.machine_balance_macs_per_dram_byte(), 2.0);  // 4 / 2
  EXPECT_EQ(c.dram_latency_cycles(), 3);  // ceil(25 ns x 0.1 cycles/ns) = ceil(2.5)
  EXPECT_EQ(c.total_onchip_bytes(), 1024);
  EXPECT_EQ(c.matrix.weight_tile_bytes(), 4);       // 2 x 2 x 1 B
  EXPECT_EQ(c.matrix.activation_tile_bytes(), 2);   // 2 x 1 B
  EXPECT_EQ(c.matrix.accumulator_tile_bytes(), 8);  // 2 x 4 B
  EXPECT_EQ(c.matrix.output_tile_bytes(), 2);       // 2 x 1 B
}

// Sustained DRAM rate, by hand: min(b, O * B / (L + ceil(B / b))).
TEST(HwConfig, sustained_dram_rate_is_the_bus_or_the_slots_per_round_trip) {
  // b = 2, B = 16 (8 cycles on the bus), L = 3: two slots carry 32 B per 11 cycles > 2.
  EXPECT_DOUBLE_EQ(tiny().dram_sustained_bytes_per_cycle(), 2.0);
  // One slot: 16 B per 3 + 8 cycles.
  EXPECT_DOUBLE_EQ(tiny({{"dram.max_outstanding_requests", "1"}}).dram_sustained_bytes_per_cycle(),
                   16.0 / 11.0);
  // cloud-large: 1.2 TB/s at 940 MHz is 1276.6 B a cycle, a 64 B burst 0.05 cycles on the bus,
  // L = ceil(150 x 0.94) = 141: 4096 slots carry 4096 x 64 B per 142 cycles (1,846 B a cycle),
  // more than the bus; with 256 (the shipped value before session 34) 256 x 64 / 142, 9% of it.
  const HwConfig cloud = shipped("cloud-large");
  EXPECT_EQ(cloud.dram.max_outstanding_requests, 4096);
  EXPECT_DOUBLE_EQ(cloud.dram_sustained_bytes_per_cycle(), cloud.dram_bytes_per_cycle());
  const HwConfig cloud256 = shipped("cloud-large", {{"dram.max_outstanding_requests", "256"}});
  EXPECT_DOUBLE_EQ(cloud256.dram_sustained_bytes_per_cycle(), 256.0 * 64.0 / 142.0);
  // edge-small: 16 B a cycle, a 32 B burst 2 cycles, L = 48: 32 slots carry 32 x 32 B per 50
  // cycles (20.48 B), more than the bus; 4 slots (before session 34) 4 x 32 B per 50 cycles.
  const HwConfig edge = shipped("edge-small");
  EXPECT_DOUBLE_EQ(edge.dram_sustained_bytes_per_cycle(), 16.0);
  const HwConfig edge4 = shipped("edge-small", {{"dram.max_outstanding_requests", "4"}});
  EXPECT_DOUBLE_EQ(edge4.dram_sustained_bytes_per_cycle(), 4.0 * 32.0 / 50.0);
  // npc19-deepfusion: 3.84 B a cycle, 8 slots of 64 B cover the 39-cycle latency: the bus.
  const HwConfig npc19 = shipped("npc19-deepfusion");
  EXPECT_DOUBLE_EQ(npc19.dram_sustained_bytes_per_cycle(), npc19.dram_bytes_per_cycle());
}

TEST(HwConfig, omitted_fill_and_drain_default_to_rows_and_cols) {
  const HwConfig c = tiny({{"matrix.rows", "4"}, {"matrix.cols", "3"}});
  EXPECT_EQ(c.matrix.fill_cycles, 4);
  EXPECT_EQ(c.matrix.drain_cycles, 3);
}

TEST(HwConfig, holds_are_stored_in_canonical_order) {
  const HwConfig c = tiny();
  const std::vector<DataKind> expected(kAllDataKinds.begin(), kAllDataKinds.end());
  EXPECT_EQ(c.scratchpads[0].holds, expected);
  EXPECT_TRUE(c.scratchpads[0].may_hold(DataKind::kWeights));
}

TEST(HwConfig, npc19_deepfusion_matches_the_paper) {
  const HwConfig c = shipped("npc19-deepfusion");
  EXPECT_EQ(c.macs_per_cycle(), 256);
  EXPECT_DOUBLE_EQ(c.peak_gops(), 200.0);            // 2 x 256 x 390.625 MHz, the paper's 200 GOP/s
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 3.84);  // 1.5e9 / 390.625e6
  EXPECT_NEAR(c.machine_balance_macs_per_dram_byte(), 200.0 / 3, 1e-12);  // 256 / 3.84
  EXPECT_EQ(c.total_onchip_bytes(), 786432);                              // 768 KiB
  EXPECT_EQ(c.dram_latency_cycles(), 40);                                 // ceil(100 x 0.390625)
  EXPECT_EQ(c.dram.bandwidth_bytes_per_second, 1.5e9);
  EXPECT_EQ(c.matrix.input_bits, 16);
  EXPECT_EQ(c.matrix.weight_tile_bytes(), 512);      // 16 x 16 x 2 B
  EXPECT_EQ(c.matrix.accumulator_tile_bytes(), 64);  // 16 x 4 B
  for (DataKind kind : kAllDataKinds) EXPECT_EQ(c.scratchpad_for(kind).name, "unified");
  EXPECT_FALSE(c.energy.has_value());
  EXPECT_FALSE(c.fpga.has_value());
}

TEST(HwConfig, vta_pynq_has_vta_default_buffers) {
  const HwConfig c = shipped("vta-pynq");
  EXPECT_EQ(c.macs_per_cycle(), 256);
  EXPECT_DOUBLE_EQ(c.peak_gops(), 51.2);            // 2 x 256 x 100 MHz
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 8.0);  // 800e6 / 100e6
  EXPECT_DOUBLE_EQ(c.machine_balance_macs_per_dram_byte(), 32.0);
  EXPECT_EQ(c.total_onchip_bytes(), 458752);  // 32 + 256 + 128 + 32 KiB
  EXPECT_EQ(c.dram_latency_cycles(), 30);
  EXPECT_EQ(c.scratchpad_for(DataKind::kActivations).name, "inp");
  EXPECT_EQ(c.scratchpad_for(DataKind::kWeights).name, "wgt");
  EXPECT_EQ(c.scratchpad_for(DataKind::kAccumulators).name, "acc");
  EXPECT_EQ(c.scratchpad_for(DataKind::kOutputs).name, "out");
  EXPECT_EQ(c.find_scratchpad("wgt")->size_bytes, 262144);
  EXPECT_EQ(c.find_scratchpad("acc")->size_bytes, 131072);
  EXPECT_EQ(c.find_scratchpad("nope"), nullptr);
  ASSERT_TRUE(c.energy.has_value());
  EXPECT_EQ(c.energy->dram_pj_per_byte, 162.5);
  ASSERT_TRUE(c.fpga.has_value());
  EXPECT_EQ(c.fpga->part, "xc7z020clg400-1");
  EXPECT_EQ(c.queues.instruction_queue_depth, 8);
}

TEST(HwConfig, edge_small_figures_by_hand) {
  const HwConfig c = shipped("edge-small");
  EXPECT_EQ(c.macs_per_cycle(), 64);
  EXPECT_DOUBLE_EQ(c.peak_gops(), 51.2);             // 2 x 64 x 400 MHz
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 16.0);  // 6.4e9 / 400e6
  EXPECT_DOUBLE_EQ(c.machine_balance_macs_per_dram_byte(), 4.0);
  EXPECT_EQ(c.total_onchip_bytes(), 131072);
  EXPECT_EQ(c.dram_latency_cycles(), 48);  // 120 ns x 0.4
}

TEST(HwConfig, cloud_large_figures_by_hand) {
  const HwConfig c = shipped("cloud-large");
  EXPECT_EQ(c.macs_per_cycle(), 16384);
  EXPECT_DOUBLE_EQ(c.peak_gops(), 30801.92);                    // 2 x 16384 x 940 MHz
  EXPECT_NEAR(c.dram_bytes_per_cycle(), 1.2e12 / 940e6, 1e-9);  // 1276.5957...
  EXPECT_NEAR(c.machine_balance_macs_per_dram_byte(), 12.834133333333, 1e-9);
  EXPECT_EQ(c.total_onchip_bytes(), 25165824);  // 24 MiB
  EXPECT_EQ(c.dram_latency_cycles(), 141);      // 150 ns x 0.94
  EXPECT_EQ(c.scratchpad_for(DataKind::kOutputs).name, "activations");
  EXPECT_EQ(c.scratchpads_holding(DataKind::kWeights), std::vector<std::size_t>{1});
}

TEST(HwConfig, every_shipped_config_round_trips_through_canonical_yaml) {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TESSEL_SOURCE_DIR) + "/configs/hw")) {
    const HwConfig original = load_hw_config(entry.path().string());
    auto again = parse_hw_config(to_yaml(original), "canonical.yaml");
    ASSERT_TRUE(again.ok()) << entry.path() << "\n" << again.reason() << "\n" << to_yaml(original);
    EXPECT_EQ(again.value(), original) << entry.path();
    EXPECT_EQ(content_hash(again.value()), content_hash(original));
  }
}

TEST(HwConfig, a_description_that_is_not_utf8_keeps_replacement_characters_and_round_trips) {
  // Found by fuzz_config: bytes 0xFF in the description came back different from to_yaml.
  std::string text = to_yaml(tiny());
  const std::string key = "description: ";
  const std::size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, text.find('\n', at) - at, key + "caf\xE9 \xFF\xFFx");
  auto loaded = parse_hw_config(text, "latin1.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.reason();
  EXPECT_EQ(loaded.value().description, "caf\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBDx");
  auto again = parse_hw_config(to_yaml(loaded.value()), "canonical.yaml");
  ASSERT_TRUE(again.ok()) << again.reason();
  EXPECT_EQ(again.value(), loaded.value());
}

TEST(HwConfig, canonical_json_names_units_in_keys) {
  const std::string json = to_canonical_json(tiny());
  EXPECT_NE(json.find("\"size_bytes\": 1024"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bandwidth_bytes_per_second\": 200000000.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"holds\": [\n        \"activations\",\n        \"weights\""),
            std::string::npos)
      << json;
}

TEST(HwConfigHash, is_sixteen_hex_digits_and_pinned_for_the_tiny_config) {
  const std::string hash = content_hash(tiny());
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  // Pinned: a change means the canonical form changed and every cached sweep point with it.
  EXPECT_EQ(hash, content_hash(tiny()));
  EXPECT_EQ(hash, "3b5dcb29afe4d0c6");
}

TEST(HwConfigHash, ignores_labels_spelling_and_key_order_but_not_hardware) {
  const std::string base = content_hash(tiny());
  EXPECT_EQ(content_hash(tiny({{"name", "other"}, {"description", "renamed"}})), base);
  EXPECT_EQ(content_hash(tiny({{"scratchpads[0].size", "1024"},
                               {"dram.bandwidth", "0.2GB/s"},
                               {"scratchpads[0].holds",
                                "[weights, activations, outputs, "
                                "accumulators]"}})),
            base);
  EXPECT_NE(content_hash(tiny({{"matrix.rows", "4"}})), base);
  EXPECT_NE(content_hash(tiny({{"dram.bandwidth", "201MB/s"}})), base);
  EXPECT_NE(content_hash(tiny({{"scratchpads[0].banks", "4"}})), base);
}

TEST(HwConfigOverride, sets_values_by_key_path_before_validation) {
  const HwConfig c = tiny({{"matrix.rows", "4"},
                           {"dram.bandwidth", "2GB/s"},
                           {"scratchpads[0].size", "1MiB"},
                           {"fpga", "{part: xc7z020clg400-1, clock_mhz: 150}"}});
  EXPECT_EQ(c.matrix.rows, 4);
  EXPECT_EQ(c.dram.bandwidth_bytes_per_second, 2e9);
  EXPECT_EQ(c.scratchpads[0].size_bytes, 1048576);
  ASSERT_TRUE(c.fpga.has_value());
  EXPECT_EQ(c.fpga->clock_mhz, 150);
}

TEST(HwConfigOverride, creates_missing_maps_on_the_path) {
  const HwConfig c = tiny({{"energy.mac_pj", "0.5"},
                           {"energy.sram_read_pj_per_byte", "1"},
                           {"energy.sram_write_pj_per_byte", "2"},
                           {"energy.dram_pj_per_byte", "100"}});
  ASSERT_TRUE(c.energy.has_value());
  EnergyConfig expected;
  expected.mac_pj = 0.5;
  expected.sram_read_pj_per_byte = 1;
  expected.sram_write_pj_per_byte = 2;
  expected.dram_pj_per_byte = 100;
  EXPECT_EQ(*c.energy, expected);
}

TEST(HwConfigOverride, problems_in_overridden_values_name_the_override) {
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.rows", "0"}}),
            std::vector<std::string>{"override matrix.rows=0: error: matrix.rows: must be "
                                     "between 1 and 4096, got 0"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.rwos", "3"}}),
            std::vector<std::string>{
                "override matrix.rwos=3: error: matrix.rwos: unknown key; did you mean 'rows'?"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"scratchpads[3].size", "1KiB"}}),
            std::vector<std::string>{"override scratchpads[3].size=1KiB: error: "
                                     "scratchpads[3].size: cannot set 'scratchpads[3].size': "
                                     "'scratchpads' has no element 3"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"name.first", "x"}}),
            std::vector<std::string>{"override name.first=x: error: name.first: cannot set "
                                     "'name.first': 'name' is not a mapping"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"scratchpads[x].size", "1"}}),
            std::vector<std::string>{"override scratchpads[x].size=1: error: "
                                     "scratchpads[x].size: malformed key path "
                                     "'scratchpads[x].size' (expected e.g. scratchpads[0].size)"});
}

TEST(HwConfigOverride, command_line_assignments_split_at_the_first_equals) {
  auto parsed = parse_key_override("dram.bandwidth=2GB/s");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value().key_path, "dram.bandwidth");
  EXPECT_EQ(parsed.value().value_yaml, "2GB/s");
  auto bad = parse_key_override("matrix.rows");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "override 'matrix.rows' is not of the form key.path=value");
}

TEST(HwConfigLoader, cross_field_problems_are_all_reported_together) {
  std::string text = kTiny;
  text.replace(text.find("holds: [outputs, weights, activations, accumulators]"),
               std::string("holds: [outputs, weights, activations, accumulators]").size(),
               "holds: [outputs]");
  EXPECT_EQ(diagnostics_of(text),
            (std::vector<std::string>{
                "tiny.yaml:13:3: error: scratchpads: no scratchpad may hold activations",
                "tiny.yaml:13:3: error: scratchpads: no scratchpad may hold weights",
                "tiny.yaml:13:3: error: scratchpads: no scratchpad may hold accumulators"}));
}

TEST(HwConfigLoader, activation_operands_is_true_or_false_default_absent_and_hashed_when_true) {
  const HwConfig plain = tiny({});
  EXPECT_FALSE(plain.matrix.activation_operands);
  const HwConfig with = tiny({{"matrix.activation_operands", "true"}});
  EXPECT_TRUE(with.matrix.activation_operands);
  EXPECT_NE(content_hash(with), content_hash(plain));
  EXPECT_EQ(content_hash(tiny({{"matrix.activation_operands", "false"}})), content_hash(plain));
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.activation_operands", "yes"}}),
            std::vector<std::string>{"override matrix.activation_operands=yes: error: "
                                     "matrix.activation_operands: expected true or false, got "
                                     "'yes'"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.activation_operand", "true"}}),
            std::vector<std::string>{"override matrix.activation_operand=true: error: "
                                     "matrix.activation_operand: unknown key; did you mean "
                                     "'activation_operands'?"});
  auto again = parse_hw_config(to_yaml(with), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.reason();
  EXPECT_EQ(again.value(), with);
}

TEST(HwConfigLoader, weight_load_rows_defaults_to_one_is_bounded_by_the_array_and_round_trips) {
  const HwConfig plain = tiny({});
  EXPECT_EQ(plain.matrix.weight_load_rows, 1);
  const HwConfig wide = tiny({{"matrix.weight_load_rows", "2"}});
  EXPECT_EQ(wide.matrix.weight_load_rows, 2);
  EXPECT_NE(content_hash(wide), content_hash(plain));
  // Written only when it is not 1: a config without the key keeps its hash.
  EXPECT_EQ(content_hash(tiny({{"matrix.weight_load_rows", "1"}})), content_hash(plain));
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.weight_load_rows", "3"}}),
            std::vector<std::string>{"override matrix.weight_load_rows=3: error: "
                                     "matrix.weight_load_rows: 3 rows a cycle is more than the "
                                     "array's 2 (a block loads in one cycle at 2)"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"matrix.weight_load_rows", "0"}}).size(), 1u);
  auto again = parse_hw_config(to_yaml(wide), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.reason();
  EXPECT_EQ(again.value(), wide);
}

TEST(HwConfigLoader, vector_units_are_true_or_false_default_absent_and_hash_only_when_present) {
  const HwConfig plain = tiny({});
  EXPECT_FALSE(plain.vector.lookup_table);
  EXPECT_FALSE(plain.vector.row_reduce);
  EXPECT_FALSE(plain.vector.broadcast_multiply);
  const HwConfig with = tiny({{"vector.lookup_table", "true"},
                              {"vector.row_reduce", "false"},
                              {"vector.broadcast_multiply", "true"}});
  EXPECT_TRUE(with.vector.lookup_table);
  EXPECT_FALSE(with.vector.row_reduce);
  EXPECT_TRUE(with.vector.broadcast_multiply);
  EXPECT_NE(content_hash(tiny({{"vector.broadcast_multiply", "true"}})), content_hash(plain));
  EXPECT_EQ(content_hash(tiny({{"vector.broadcast_multiply", "false"}})), content_hash(plain));
  EXPECT_EQ(
      diagnostics_of(kTiny, {{"vector.broadcast_multiply", "on"}}),
      std::vector<std::string>{"override vector.broadcast_multiply=on: error: "
                               "vector.broadcast_multiply: expected true or false, got 'on'"});
  EXPECT_NE(content_hash(with), content_hash(plain));
  EXPECT_EQ(content_hash(tiny({{"vector.row_reduce", "false"}})), content_hash(plain));
  // The row normaliser (softmax, norm): the same rules.
  EXPECT_FALSE(plain.vector.row_normalise);
  EXPECT_TRUE(tiny({{"vector.row_normalise", "true"}}).vector.row_normalise);
  EXPECT_NE(content_hash(tiny({{"vector.row_normalise", "true"}})), content_hash(plain));
  EXPECT_EQ(content_hash(tiny({{"vector.row_normalise", "false"}})), content_hash(plain));
  EXPECT_EQ(diagnostics_of(kTiny, {{"vector.row_normalise", "yes"}}),
            std::vector<std::string>{"override vector.row_normalise=yes: error: "
                                     "vector.row_normalise: expected true or false, got 'yes'"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"vector.lookup_table", "yes"}}),
            std::vector<std::string>{"override vector.lookup_table=yes: error: "
                                     "vector.lookup_table: expected true or false, got 'yes'"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"vector.row_reduce", "1"}}),
            std::vector<std::string>{"override vector.row_reduce=1: error: "
                                     "vector.row_reduce: expected true or false, got '1'"});
  EXPECT_EQ(diagnostics_of(kTiny, {{"vector.lookup_tabel", "true"}}),
            std::vector<std::string>{"override vector.lookup_tabel=true: error: "
                                     "vector.lookup_tabel: unknown key; did you mean "
                                     "'lookup_table'?"});
  auto again = parse_hw_config(to_yaml(with), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.reason();
  EXPECT_EQ(again.value(), with);
}

TEST(HwConfigLoader, parse_failure_message_is_every_diagnostic_line) {
  auto parsed = parse_hw_config(kTiny, "tiny.yaml", {{"clock_mhz", "0"}, {"vector.lanes", "0"}});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.reason(),
            "override clock_mhz=0: error: clock_mhz: must be greater than 0, got 0\n"
            "override vector.lanes=0: error: vector.lanes: must be between 1 and 4096, got 0");
}

TEST(HwConfigLoader, load_throws_input_error_naming_the_file) {
  try {
    load_hw_config("does/not/exist.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].str(),
              "does/not/exist.yaml: error: cannot open: No such file or directory");
  }
}

TEST(HwConfigLoader, default_config_path_points_at_the_shipped_npc19_file) {
  EXPECT_EQ(default_hw_config_path(),
            std::string(TESSEL_SOURCE_DIR) + "/configs/hw/npc19-deepfusion.yaml");
  EXPECT_EQ(load_hw_config(default_hw_config_path()).name, "npc19-deepfusion");
}

TEST(DataKind, spelling_round_trips) {
  for (DataKind kind : kAllDataKinds) EXPECT_EQ(data_kind_from_string(to_string(kind)), kind);
  EXPECT_EQ(data_kind_from_string("weight"), std::nullopt);
}

}  // namespace
}  // namespace tessel
