// The energy and area model (configs/energy_model.hpp, docs/energy.md): the SRAM fit against
// numpy, per-action figures and areas by hand from Horowitz's 45 nm table, node scaling, the
// pre-model keys as overrides, the section's round trip and its content hash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "configs/energy_config.hpp"
#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"

namespace tessel::energy_model_test {
namespace {

// A 2 x 2 int8 array, 2 lanes, one 1 KiB scratchpad in 2 banks of 512 B.
const std::string kTiny = R"(name: tiny
clock_mhz: 100
matrix: {rows: 2, cols: 2, input_bits: 8, weight_bits: 8, accumulator_bits: 32}
vector: {lanes: 2}
scratchpads:
  - {name: buf, size: 1KiB, banks: 2, port_width_bytes: 4,
     holds: [activations, weights, accumulators, outputs]}
dram: {bandwidth: 200MB/s, latency_ns: 25, burst_bytes: 16, max_outstanding_requests: 2}
queues: {instruction_queue_depth: 4, token_fifo_depth: 2}
)";

HwConfig tiny(const std::vector<KeyOverride>& overrides = {}) {
  auto parsed = parse_hw_config(kTiny, "tiny.yaml", overrides);
  EXPECT_TRUE(parsed.ok()) << parsed.reason();
  return parsed.value();
}

HwConfig shipped(const std::string& name, const std::vector<KeyOverride>& overrides = {}) {
  return load_hw_config(hw_config_dir() + "/" + name + ".yaml", overrides);
}

TEST(EnergyModel, sram_fit_matches_numpy_polyfit_of_horowitz_points) {
  // numpy.polyfit(log([8, 32, 1024]), log([10, 20, 100]), 1): slope 0.47260432229036353,
  // exp(intercept) 3.8024910689444225 (capacities in KiB, energies in pJ per 64-bit access).
  const auto [a, b] = sram_fit_coefficients();
  EXPECT_NEAR(a, 3.8024910689444225, 1e-12);
  EXPECT_NEAR(b, 0.47260432229036353, 1e-12);
  // The fit passes within 2.2% of every published point (10.16, 19.56, 100.63 pJ).
  EXPECT_NEAR(sram_64bit_access_pj_45nm(8 * 1024), 10.159502322696492, 1e-9);
  EXPECT_NEAR(sram_64bit_access_pj_45nm(32 * 1024), 19.56178980993794, 1e-9);
  EXPECT_NEAR(sram_64bit_access_pj_45nm(1024 * 1024), 100.6349820762156, 1e-9);
  // Below 1 KiB the curve is clamped: a 512 B array costs what 1 KiB does (a).
  EXPECT_DOUBLE_EQ(sram_64bit_access_pj_45nm(512), a);
}

TEST(EnergyModel, tiny_config_figures_by_hand_at_45nm_ddr3) {
  const EnergyTable t = energy_table(tiny());
  EXPECT_EQ(t.technology, "45nm");
  EXPECT_EQ(t.dram_technology, "ddr3");
  EXPECT_NEAR(t.mac_pj, 0.3, 1e-15);      // 8x8 multiply 0.2 + 32-bit add 0.1
  EXPECT_NEAR(t.requant_pj, 3.3, 1e-15);  // 32x32 multiply 3.1 + two 32-bit adds
  EXPECT_NEAR(t.add_pj, 1.8, 1e-15);      // two 8x32 multiplies (4 x 0.2) + two adds
  EXPECT_NEAR(t.pool_pj, 0.1, 1e-15);     // one 32-bit add or compare
  EXPECT_NEAR(t.lut_pj_per_byte, 3.8024910689444225 / 8, 1e-12);  // a 1 KiB array's byte
  EXPECT_NEAR(t.reduce_pj, 0.1, 1e-15);                           // one 32-bit add or compare
  EXPECT_NEAR(t.square_pj, 0.2, 1e-15);                           // one 8 x 8 multiply
  // ISA v3 (docs/energy.md gives the steps): mul 0.2 + 8 x 0.2 + 2 x 0.1; softmax 4.7 of
  // adds and multiplies + 4 table bytes; its row 32 steps x 0.2; norm 7.5; its row
  // 2 x 3.1 + 0.1 + 63 x 0.2.
  EXPECT_NEAR(t.mul_pj, 2.0, 1e-12);
  EXPECT_NEAR(t.softmax_pj, 4.7 + 4 * 3.8024910689444225 / 8, 1e-12);
  EXPECT_NEAR(t.softmax_row_pj, 6.4, 1e-12);
  EXPECT_NEAR(t.norm_pj, 7.5, 1e-12);
  EXPECT_NEAR(t.norm_row_pj, 18.9, 1e-12);
  EXPECT_DOUBLE_EQ(t.dram_pj_per_byte, 162.5);  // 1.3 nJ per 64 bits
  EXPECT_DOUBLE_EQ(t.leakage_mw_per_mm2, 1.0);
  ASSERT_EQ(t.scratchpads.size(), 1u);
  // 512 B banks, clamped to 1 KiB: a / 8 per byte, read and write alike.
  EXPECT_NEAR(t.scratchpads[0].read_pj_per_byte, 3.8024910689444225 / 8, 1e-12);
  EXPECT_EQ(t.scratchpads[0].write_pj_per_byte, t.scratchpads[0].read_pj_per_byte);
  // Areas: 1024 B x 8 bits x 0.346 um^2 / 0.5 = 5668.864 um^2; 4 MACs x (282 + 137) um^2 =
  // 1676 um^2; 2 lanes x (3495 + 2 x 137) um^2 = 7538 um^2.
  EXPECT_NEAR(t.scratchpads[0].area_mm2, 0.005668864, 1e-12);
  EXPECT_NEAR(t.matrix_area_mm2, 0.001676, 1e-12);
  EXPECT_NEAR(t.vector_area_mm2, 0.007538, 1e-12);
  EXPECT_NEAR(t.area_mm2(), 0.014882864, 1e-12);
}

// docs/energy.md "Vector operands at 16 bits": with 16-bit activations the multipliers that
// take an activation grow with the product of their operand widths (0.2 pJ per 8 x 8, 3.1 for
// 32 x 32); adds, compares, table bytes and the int32 requant do not change.
TEST(EnergyModel, vector_figures_at_16_bit_operands_by_hand) {
  const EnergyTable t =
      energy_table(tiny({{"matrix.input_bits", "16"}, {"matrix.weight_bits", "16"}}));
  EXPECT_NEAR(t.mac_pj, 0.9, 1e-15);      // 16 x 16 multiply 4 x 0.2 + 32-bit add 0.1
  EXPECT_NEAR(t.requant_pj, 3.3, 1e-15);  // int32 x M: the same 32 x 32 multiply
  EXPECT_NEAR(t.add_pj, 3.4, 1e-15);      // two 16 x 32 multiplies (8 x 0.2 each) + two adds
  EXPECT_NEAR(t.pool_pj, 0.1, 1e-15);
  EXPECT_NEAR(t.lut_pj_per_byte, 3.8024910689444225 / 8, 1e-12);  // i16 entries: 2 bytes each
  EXPECT_NEAR(t.reduce_pj, 0.1, 1e-15);
  EXPECT_NEAR(t.square_pj, 0.2, 1e-15);  // sumsq is i8 only
  // mul: 16 x 16 (0.8) + its 32-bit product x the 32-bit M (3.1) + 2 adds (0.2).
  EXPECT_NEAR(t.mul_pj, 4.1, 1e-12);
  // softmax: the activation only enters the max compare and m - x (adds): unchanged.
  EXPECT_NEAR(t.softmax_pj, 4.7 + 4 * 3.8024910689444225 / 8, 1e-12);
  EXPECT_NEAR(t.softmax_row_pj, 6.4, 1e-12);
  // norm: 7.5 with x^2 16 x 16 (0.8 for 0.2) and N x (16 x 16: 0.8 for 0.4) = 8.5; its row
  // N S2 as two 32 x 32 multiplies (S2 has 44 bits), S1^2 one: 3 x 3.1 + 0.1 + 63 x 0.2 = 22.0.
  EXPECT_NEAR(t.norm_pj, 8.5, 1e-12);
  EXPECT_NEAR(t.norm_row_pj, 22.0, 1e-12);
  // The 8-bit table of the same config: every figure as tiny_config_figures_by_hand.
  const EnergyTable t8 = energy_table(tiny());
  EXPECT_EQ(t8.add_pj, 2 * 4 * 0.2 + 2 * 0.1);
  EXPECT_EQ(t8.mul_pj, 0.2 + 8 * 0.2 + 2 * 0.1);

  // One 16-bit vector op of each kind by hand: 10 mul elements, 6 add elements, a norm of 2
  // rows of 8 elements; nothing else.
  ActionCounts counts;
  counts.mul_elements = 10;
  counts.add_elements = 6;
  counts.norm_elements = 16;
  counts.norm_rows = 2;
  const EnergyBreakdown e = energy_of(t, counts, 100);
  EXPECT_NEAR(e.vector_pj, 10 * 4.1 + 6 * 3.4 + 16 * 8.5 + 2 * 22.0, 1e-9);  // 241.4 pJ
  EXPECT_NEAR(e.total_pj(), 241.4, 1e-9);
}

TEST(EnergyModel, energy_of_counts_by_hand) {
  const EnergyTable t = energy_table(tiny());
  ActionCounts counts;
  counts.macs = 100;
  counts.sram_read_bytes = {10};
  counts.sram_write_bytes = {20};
  counts.requant_elements = 5;
  counts.add_elements = 3;
  counts.pool_window_elements = 9;
  counts.lut_bytes = 16;
  counts.reduce_elements = 7;
  counts.square_elements = 2;
  counts.dram_bytes = 4;
  counts.cycles = 1000;  // 10 us at 100 MHz
  const EnergyBreakdown e = energy_of(t, counts, 100);
  const double sram_per_byte = 3.8024910689444225 / 8;
  EXPECT_NEAR(e.mac_pj, 30, 1e-12);
  EXPECT_NEAR(e.sram_pj, 30 * sram_per_byte, 1e-12);
  ASSERT_EQ(e.sram_pj_by_scratchpad.size(), 1u);
  EXPECT_EQ(e.sram_pj_by_scratchpad[0], e.sram_pj);
  // requant, add, pool; lut: 16 B at E64(1 KiB) / 8 each (2 x a); reduce 7 adds, 2 squares.
  const double lut = 16 * 3.8024910689444225 / 8;
  EXPECT_NEAR(e.vector_pj, 5 * 3.3 + 3 * 1.8 + 9 * 0.1 + lut + 7 * 0.1 + 2 * 0.2, 1e-12);
  EXPECT_NEAR(e.dram_pj, 650, 1e-12);
  EXPECT_NEAR(e.runtime_s, 1e-5, 1e-20);
  // 1 mW/mm^2 x 0.014882864 mm^2 x 1e-5 s = 1.4882864e-10 J = 148.82864 pJ.
  EXPECT_NEAR(e.leakage_pj, 148.82864, 1e-9);
  const double total = 30 + 30 * sram_per_byte + 22.8 + lut + 1.1 + 650 + 148.82864;
  EXPECT_NEAR(e.total_pj(), total, 1e-9);
  EXPECT_NEAR(e.edp_pj_s(), total * 1e-5, 1e-15);
}

TEST(EnergyModel, nodes_scale_energy_by_feature_and_vdd_squared_and_area_by_feature_squared) {
  const HwConfig c = tiny({{"energy.technology", "7nm"}});
  const EnergyTable t = energy_table(c);
  const double energy_scale = (7.0 / 45) * (0.7 / 0.9) * (0.7 / 0.9);  // 0.0941015...
  const double area_scale = (7.0 / 45) * (7.0 / 45);                   // 0.0241975...
  EXPECT_NEAR(t.mac_pj, 0.3 * energy_scale, 1e-15);
  EXPECT_NEAR(t.square_pj, 0.2 * energy_scale, 1e-15);
  EXPECT_NEAR(t.mul_pj, 2.0 * energy_scale, 1e-12);
  EXPECT_NEAR(t.norm_row_pj, 18.9 * energy_scale, 1e-12);
  EXPECT_NEAR(t.lut_pj_per_byte, 3.8024910689444225 / 8 * energy_scale, 1e-12);
  EXPECT_NEAR(t.scratchpads[0].read_pj_per_byte, 3.8024910689444225 / 8 * energy_scale, 1e-12);
  EXPECT_NEAR(t.area_mm2(), 0.014882864 * area_scale, 1e-12);
  EXPECT_DOUBLE_EQ(t.dram_pj_per_byte, 162.5);  // DRAM is off chip: not scaled
}

TEST(EnergyModel, precision_and_dram_kind_change_the_figures) {
  const EnergyTable t = energy_table(tiny({{"matrix.input_bits", "16"},
                                           {"matrix.weight_bits", "16"},
                                           {"energy.dram_technology", "hbm2"}}));
  EXPECT_NEAR(t.mac_pj, 0.2 * 4 + 0.1, 1e-15);      // a 16x16 multiply is 4x an 8x8
  EXPECT_NEAR(t.dram_pj_per_byte, 3.9 * 8, 1e-12);  // 3.9 pJ/bit
  EXPECT_NEAR(t.matrix_area_mm2, 4 * (282 * 4 + 137) * 1e-6, 1e-15);
  const EnergyTable lp = energy_table(tiny({{"energy.dram_energy", "4pJ/bit"}}));
  EXPECT_DOUBLE_EQ(lp.dram_pj_per_byte, 32);
}

TEST(EnergyModel, sram_energy_grows_with_bank_capacity) {
  // 64 KiB in one bank against the same 64 KiB in 8 banks of 8 KiB: the fit at 64 and 8 KiB.
  const auto one =
      energy_table(tiny({{"scratchpads[0].size", "64KiB"}, {"scratchpads[0].banks", "1"}}));
  const auto eight =
      energy_table(tiny({{"scratchpads[0].size", "64KiB"}, {"scratchpads[0].banks", "8"}}));
  EXPECT_NEAR(one.scratchpads[0].read_pj_per_byte, sram_64bit_access_pj_45nm(65536) / 8, 1e-12);
  EXPECT_NEAR(eight.scratchpads[0].read_pj_per_byte, 10.159502322696492 / 8, 1e-9);
  EXPECT_GT(one.scratchpads[0].read_pj_per_byte, eight.scratchpads[0].read_pj_per_byte);
  EXPECT_EQ(one.scratchpads[0].area_mm2, eight.scratchpads[0].area_mm2);
}

TEST(EnergyModel, pre_model_keys_override_every_scratchpad_and_the_dram) {
  const EnergyTable t = energy_table(shipped("vta-pynq"));
  EXPECT_EQ(t.mac_pj, 0.3);
  EXPECT_EQ(t.dram_pj_per_byte, 162.5);
  EXPECT_EQ(t.dram_technology, "explicit");
  ASSERT_EQ(t.scratchpads.size(), 4u);
  for (const auto& sp : t.scratchpads) {
    EXPECT_EQ(sp.read_pj_per_byte, 1.25) << sp.name;
    EXPECT_EQ(sp.write_pj_per_byte, 1.25) << sp.name;
  }
}

TEST(EnergyModel, sections_round_trip_and_pre_model_hashes_are_unchanged) {
  const HwConfig c = tiny({{"energy",
                            "{technology: 16nm, dram_technology: lpddr4, "
                            "vector_op_pj: 2.5, leakage_mw_per_mm2: 0.5}"}});
  auto again = parse_hw_config(to_yaml(c), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.reason() << "\n" << to_yaml(c);
  EXPECT_EQ(again.value(), c);
  EXPECT_EQ(energy_table(c).requant_pj, 2.5);
  EXPECT_EQ(energy_table(c).add_pj, 2.5);
  // The content hashes `tessel config show --json` printed for the shipped configs before the
  // model (main at e519a0b): the four explicit keys hash as they did.
  EXPECT_EQ(content_hash(shipped("vta-pynq")), "aedefda6221e783d");
  // edge-small and cloud-large cover their DRAM round trip since session 34 (32 and 4096
  // outstanding requests, docs/config.md "Sustained DRAM rate"): with their old values they hash
  // as before, so the canonical form did not change.
  auto with_slots = [](const std::string& name, const std::string& slots) {
    return shipped(name, {{"dram.max_outstanding_requests", slots}});
  };
  EXPECT_EQ(content_hash(with_slots("edge-small", "4")), "053c4fdcccb7ec3d");
  EXPECT_EQ(content_hash(shipped("edge-small")), "bbb6768e7238a5f2");
  // cloud-large gained vector.lookup_table and vector.row_reduce, then
  // vector.broadcast_multiply, then matrix.activation_operands and vector.row_normalise (issue
  // 34): other hardware, another hash (2ed317f32abad31c, d0c2f9a6abf13f16, e1bfbdf1c13f7450,
  // then ebfaffc7a6ad5c91 with the first of the two, 473c7e9a3ad244e3 with the second; the
  // FNV-1a of its canonical JSON by hand, in Python, which reproduces the earlier ones too).
  EXPECT_EQ(content_hash(with_slots("cloud-large", "256")), "3c8cd535fe99cfc0");
  EXPECT_EQ(content_hash(shipped("cloud-large")), "f7dec9812c98ee1e");
}

TEST(EnergyModel, derived_figures_json_carries_the_table_and_area) {
  const auto json = nlohmann::json::parse(derived_figures_json(tiny()));
  EXPECT_EQ(json["energy"]["technology"], "45nm");
  EXPECT_EQ(json["energy"]["dram_pj_per_byte"], 162.5);
  EXPECT_NEAR(json["area_mm2"]["total"].get<double>(), 0.014882864, 1e-12);  // as above
  EXPECT_NEAR(json["energy"]["scratchpads"]["buf"]["area_mm2"].get<double>(), 0.005668864, 1e-12);
}

TEST(EnergyModel, energy_per_data_unit_parses_bits_and_bytes) {
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("4pJ/bit").value(), 32);
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("32 pJ/B").value(), 32);
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("1.3nJ/byte").value(), 1300);
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("500fJ/b").value(), 4);
  EXPECT_EQ(parse_energy_per_byte("4pJ").reason(),
            "unknown unit in '4pJ' (expected <number><fJ|pJ|nJ>/<bit|B>, e.g. 4pJ/bit or "
            "32pJ/B)");
  EXPECT_EQ(parse_energy_per_byte("-1pJ/bit").reason(), "must be at least 0, got '-1pJ/bit'");
  EXPECT_EQ(parse_energy_per_byte("pJ/bit").reason(),
            "'pJ/bit' is not an energy per data unit such as 4pJ/bit or 32pJ/B");
  // Not finite or past double's range: refused, never a NaN or infinite figure.
  for (const char* text : {"nanpJ/bit", "nan pJ/bit", "infpJ/B", "1e400pJ/bit"})
    EXPECT_EQ(
        parse_energy_per_byte(text).reason(),
        "'" + std::string(text) + "' is not an energy per data unit such as 4pJ/bit or 32pJ/B")
        << text;
  // Units are case-sensitive (pj is not pJ) and take no space around the slash.
  EXPECT_FALSE(parse_energy_per_byte("4pj/bit").ok());
  EXPECT_FALSE(parse_energy_per_byte("4pJ / bit").ok());
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("0pJ/bit").value(), 0);
}

}  // namespace
}  // namespace tessel::energy_model_test
