// The per-unit breakdown (hw/fpga/unit_cost.hpp) on Yosys `stat` text of a small hierarchy.
#include <gtest/gtest.h>

#include "configs/hw_config.hpp"
#include "hw/fpga/resources.hpp"
#include "hw/fpga/tessel_design.hpp"
#include "hw/fpga/unit_cost.hpp"

namespace tessel::fpga::unit_cost_test {
namespace {

// Yosys 0.23's `stat` after `synth_xilinx -family xc7 -top top` of
//   module leaf #(W=4): q <= a + b (registered);  module mid: two leaf #(W=8) in a chain;
//   module top: two mid and one leaf (W=4).
// Its own "design hierarchy" totals (the oracle below): BUFG 1, CARRY4 9, FDRE 36, IBUF 9,
// LUT2 36, OBUF 12.
constexpr std::string_view kStat = R"(
3. Printing statistics.

=== $paramod\leaf\W=s32'00000000000000000000000000001000 ===

   Number of wires:                  7
   Number of wire bits:             49
   Number of public wires:           4
   Number of public wire bits:      25
   Number of memories:               0
   Number of memory bits:            0
   Number of processes:              0
   Number of cells:                 18
     CARRY4                          2
     FDRE                            8
     LUT2                            8

=== leaf ===

   Number of wires:                  7
   Number of wire bits:             25
   Number of cells:                  9
     CARRY4                          1
     FDRE                            4
     LUT2                            4

=== mid ===

   Number of wires:                  4
   Number of cells:                  2
     $paramod\leaf\W=s32'00000000000000000000000000001000      2

=== top ===

   Number of wires:                 10
   Number of processes:              0
   Number of cells:                 25
     BUFG                            1
     IBUF                            9
     OBUF                           12
     leaf                            1
     mid                             2

=== design hierarchy ===

   top                               1
     leaf                            1
     mid                             2
       $paramod\leaf\W=s32'00000000000000000000000000001000      2

   Number of cells:                103
     BUFG                            1
     CARRY4                          9
)";

const std::map<std::string, std::int64_t> kYosysTotals = {{"BUFG", 1}, {"CARRY4", 9}, {"FDRE", 36},
                                                          {"IBUF", 9}, {"LUT2", 36},  {"OBUF", 12}};

TEST(FpgaUnitCost, module_base_name_strips_the_parameters) {
  EXPECT_EQ(module_base_name("tessel_dma"), "tessel_dma");
  EXPECT_EQ(module_base_name("$paramod\\tessel_dma\\IS_STORE=1'1"), "tessel_dma");
  EXPECT_EQ(module_base_name("$paramod$3f2a9c\\tessel_matrix"), "tessel_matrix");
}

TEST(FpgaUnitCost, parses_each_module_and_flattens_to_yosys_own_totals) {
  auto modules = parse_yosys_stat_text(kStat, "s.txt");
  ASSERT_TRUE(modules.ok()) << modules.reason();
  ASSERT_EQ(modules.value().size(), 4u);
  EXPECT_EQ(modules.value().at("mid"),
            (std::map<std::string, std::int64_t>{
                {"$paramod\\leaf\\W=s32'00000000000000000000000000001000", 2}}));
  auto top = hierarchical_cells(modules.value(), "top");
  ASSERT_TRUE(top.ok()) << top.reason();
  EXPECT_EQ(top.value(), kYosysTotals);
}

TEST(FpgaUnitCost, a_unit_is_every_instance_of_its_module_and_other_the_rest) {
  auto modules = parse_yosys_stat_text(kStat, "s.txt");
  ASSERT_TRUE(modules.ok());
  const ResourceCounts whole = classify_cells(kYosysTotals);
  auto rows = unit_costs(modules.value(), "top", {{"adders", "leaf", "n"}}, whole);
  ASSERT_TRUE(rows.ok()) << rows.reason();
  ASSERT_EQ(rows.value().size(), 2u);
  const UnitCost& adders = rows.value()[0];
  // leaf once (1 CARRY4, 4 FDRE, 4 LUT2) and leaf #(8) twice in each of two mids (2, 8, 8).
  EXPECT_EQ(adders.instances, 1 + 2 * 2);
  EXPECT_EQ(adders.counts.carry, 1 + 4 * 2);
  EXPECT_EQ(adders.counts.ff, 4 + 4 * 8);
  EXPECT_EQ(adders.counts.lut, 4 + 4 * 8);
  EXPECT_EQ(adders.counts.io, 0);
  EXPECT_EQ(adders.note, "n");
  const UnitCost& other = rows.value()[1];
  EXPECT_EQ(other.name, "other");
  EXPECT_EQ(other.counts.io, 9 + 12);
  EXPECT_EQ(other.counts.clock_buffers, 1);
  EXPECT_EQ(other.counts.lut + other.counts.ff + other.counts.carry, 0);
  // Two units: mid's rows hold the paramod leaf; the plain leaf is the other one.
  auto two = unit_costs(modules.value(), "top", {{"mids", "mid", ""}}, whole);
  ASSERT_TRUE(two.ok()) << two.reason();
  EXPECT_EQ(two.value()[0].instances, 2);
  EXPECT_EQ(two.value()[0].counts.ff, 4 * 8);
  EXPECT_EQ(two.value()[1].counts.ff, 4);
}

TEST(FpgaUnitCost, a_unit_not_built_is_a_row_of_zeros) {
  auto modules = parse_yosys_stat_text(kStat, "s.txt");
  ASSERT_TRUE(modules.ok());
  auto rows = unit_costs(modules.value(), "top", {{"normaliser", "tessel_rownorm", ""}},
                         classify_cells(kYosysTotals));
  ASSERT_TRUE(rows.ok()) << rows.reason();
  EXPECT_EQ(rows.value()[0].instances, 0);
  EXPECT_EQ(rows.value()[0].counts, ResourceCounts{});
  EXPECT_EQ(rows.value()[1].counts.ff, 36);
}

TEST(FpgaUnitCost, bad_input_fails_with_a_located_reason) {
  auto bad = parse_yosys_stat_text("=== m ===\n   Number of cells: 1\n     FDRE x\n", "s.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "s.txt:3: not a cell count line: 'FDRE x'");
  auto empty = parse_yosys_stat_text("nothing here\n", "s.txt");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.reason(), "s.txt: no module section (not Yosys `stat` text?)");

  auto modules = parse_yosys_stat_text(kStat, "s.txt");
  ASSERT_TRUE(modules.ok());
  const ResourceCounts whole = classify_cells(kYosysTotals);
  auto nested =
      unit_costs(modules.value(), "top", {{"mids", "mid", ""}, {"adders", "leaf", ""}}, whole);
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.reason(),
            "unit 'mids' (mid) instantiates unit 'adders' (leaf): its cells would count twice");
  // Two levels down: top's unit instantiates mid, which instantiates the paramod leaf.
  auto deep =
      unit_costs(modules.value(), "top", {{"all", "top", ""}, {"adders", "leaf", ""}}, whole);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.reason(),
            "unit 'all' (top) instantiates unit 'adders' (leaf): its cells would count twice");
  ResourceCounts smaller = whole;
  smaller.ff = 35;
  auto more = unit_costs(modules.value(), "top", {{"adders", "leaf", ""}}, smaller);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.reason(), "the units hold more ff than the whole design (35)");
  auto no_top = unit_costs(modules.value(), "tessel_fpga_top", {}, whole);
  ASSERT_FALSE(no_top.ok());
  EXPECT_EQ(no_top.reason(), "the top module 'tessel_fpga_top' is not in the netlist");
}

TEST(FpgaUnitCost, units_round_trip_through_resources_json) {
  FpgaResources r;
  r.config_name = "c";
  r.units = {
      {"matrix array", "tessel_matrix", 1, classify_cells({{"LUT6", 7}, {"DSP48E1", 2}}), "note"},
      {"other", "", 1, classify_cells({{"FDRE", 3}}), "rest"}};
  r.units[0].counts.cells_by_type.clear();  // rows carry the grouped counts only
  r.units[1].counts.cells_by_type.clear();
  auto back = parse_resources(to_json(r), "r.json");
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), r);
  EXPECT_EQ(back.value().units[0].counts.lut, 7);
  EXPECT_EQ(back.value().units[0].counts.dsp, 2);
}

const std::string kSource = TESSEL_SOURCE_DIR;

TEST(FpgaUnitCost, tessel_units_name_the_opt_in_units_each_config_has) {
  const auto plain = tessel_units(load_hw_config(kSource + "/configs/hw/edge-small.yaml"));
  const auto tfm = tessel_units(load_hw_config(kSource + "/tests/rtl/edge-small-tfm.yaml"));
  ASSERT_EQ(plain.size(), 6u);
  ASSERT_EQ(tfm.size(), 6u);
  EXPECT_EQ(plain[0].module, "tessel_matrix");
  EXPECT_EQ(plain[0].note, "no activation-operand path (matrix.activation_operands false)");
  EXPECT_NE(tfm[0].note.find("includes the activation-operand path"), std::string::npos);
  EXPECT_NE(tfm[0].note.find("+6,076 LUT, +371 FF, +15 DSP48E1"), std::string::npos);
  EXPECT_EQ(plain[1].note, "no lookup table (vector.lookup_table false)");
  EXPECT_NE(tfm[1].note.find("+23,250 LUT, +4,130 FF"), std::string::npos);
  EXPECT_EQ(plain[2].note, "not built (vector.row_normalise false)");
  EXPECT_EQ(tfm[2].note, "softmax and norm (vector.row_normalise)");
}

}  // namespace
}  // namespace tessel::fpga::unit_cost_test
