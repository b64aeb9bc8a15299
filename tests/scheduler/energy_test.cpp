// The schedule's predicted energy (scheduler/energy.hpp) of one conv, counted by hand from its
// tiles (docs/energy.md, "Counted, not guessed").
#include <gtest/gtest.h>

#include <string>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/energy_objective.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {
namespace {

const std::string kMicro = std::string(TESSEL_SOURCE_DIR) + "/tests/sim/micro.yaml";

TEST(ScheduleEnergy, one_conv_by_component_from_its_counts) {
  // micro.yaml: a 4 x 4 array, one 64 KiB unified scratchpad, explicit figures: 1 pJ/MAC,
  // SRAM 0.5 pJ/B read and 0.25 pJ/B written, DRAM 10 pJ/B; the vector unit's requant is the
  // model's 3.1 + 2 x 0.1 = 3.3 pJ.
  const HwConfig config = load_hw_config(kMicro);
  const Machine machine = machine_from_config(config);
  // A 3x3 conv (pad 1, bias) of an 8-channel 4 x 4 map to 6 channels: 2 input-channel blocks,
  // 2 output-channel blocks (6 of 8 columns used).
  NetBuilder b("one_conv");
  const int x = b.input("x", {8, 4, 4});
  b.conv("conv", x, 6, 3, 1, 1, 1, 1, true);
  const Net net = b.build();
  auto schedule = run_policy(net, machine, "layerwise", Objective::Bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.reason();
  ASSERT_EQ(schedule.value().groups.size(), 1u);
  const GroupSchedule& g = schedule.value().groups[0];
  // The geometry the counts below assume: one tile, one output row per conv instruction
  // (ceil(R / width) = 1), so 4 conv + 4 requant instructions of 4 pixels.
  ASSERT_EQ(g.tiles(), 1);
  ASSERT_EQ(g.rows_per_step[0], 1);

  const ScheduleEnergy e = predict_energy(schedule.value(), net, config);
  const ActionCounts& c = e.counts;
  // MAC slots: per instruction 4 pixels x passes (2 oc blocks x 2 ic blocks x 9 taps = 36) x
  // 16 = 2304; 4 instructions: 9216 (the net's 6,912 useful MACs, padded to 8 columns).
  EXPECT_EQ(c.macs, 9216u);
  // SRAM reads: per step, inputs 4 px x 36 passes x 4 B = 576, weight blocks 36 x 16 = 576, bias
  // 2 blocks x 4 columns x 4 B = 32, requant: accumulators 4 px x 6 ch x 4 B = 96 and the table
  // 6 x 8 = 48: 1,328 per step, 5,312 for four; the store reads the 96 B output: 5,408.
  ASSERT_EQ(c.sram_read_bytes.size(), 1u);
  EXPECT_EQ(c.sram_read_bytes[0], 5408u);
  // SRAM writes: the input load 128 B, the weights 9 x 6 x 8 = 432 B (no padded rows: 8 = 2 x
  // 4), bias 24 and table 48; per step the accumulators 4 px x 8 columns x 4 B = 128 and 24
  // output bytes (x 4: 608): 1,240.
  EXPECT_EQ(c.sram_write_bytes[0], 1240u);
  EXPECT_EQ(c.requant_elements, 96u);  // every output element once
  EXPECT_EQ(c.add_elements, 0u);
  EXPECT_EQ(c.pool_window_elements, 0u);
  // DRAM: input 128 + weights 432 + bias 24 + table 48 + output 96.
  EXPECT_EQ(c.dram_bytes, 728u);

  const EnergyBreakdown& t = e.total;
  EXPECT_DOUBLE_EQ(t.mac_pj, 9216.0);
  EXPECT_DOUBLE_EQ(t.sram_pj, 5408 * 0.5 + 1240 * 0.25);  // 3,014 pJ
  EXPECT_NEAR(t.vector_pj, 96 * 3.3, 1e-9);               // 316.8 pJ
  EXPECT_DOUBLE_EQ(t.dram_pj, 7280.0);
  // Leakage: 1 mW/mm^2 x area (docs/energy.md's 0.384587296 mm^2 for micro) x the schedule's
  // cycles at 1 GHz.
  EXPECT_NEAR(t.area_mm2, 0.384587296, 1e-12);
  EXPECT_NEAR(t.leakage_pj, 0.384587296 * static_cast<double>(schedule.value().cycles), 1e-9);
  EXPECT_NEAR(t.total_pj(), 9216 + 3014 + 316.8 + 7280 + t.leakage_pj, 1e-6);
  ASSERT_EQ(e.groups.size(), 1u);
  EXPECT_NEAR(e.groups[0].total_pj(), t.total_pj(), 1e-6);
}

}  // namespace
}  // namespace tessel::sched

namespace tessel::sched {
namespace {

// A chain that must be tiled on micro.yaml's 64 KiB: the energy objectives have choices.
Net chain() {
  NetBuilder b("chain");
  int x = b.input("x", {16, 32, 32});
  x = b.conv("c1", x, 32, 3, 1, 1, 1, 1, true);
  x = b.conv("c2", x, 32, 3, 1, 1, 1, 1, true);
  x = b.pool("p", x, OpKind::MaxPool, 2, 2);
  x = b.conv("c3", x, 64, 3, 1, 1, 1, 1, true);
  b.conv("c4", x, 64, 1, 1, 0, 1, 1, true);
  return b.build();
}

struct Figures {
  double energy_pj = 0;
  double edp_pj_s = 0;
};

Figures figures_of(const Net& net, const HwConfig& config, const std::string& policy,
                   Objective objective) {
  auto s = run_policy(net, machine_from_config(config), policy, objective);
  EXPECT_TRUE(s.ok()) << s.reason();
  if (!s.ok()) return {};
  EXPECT_EQ(s.value().objective, objective_name(objective));
  const EnergyBreakdown e = predict_energy(s.value(), net, config).total;
  return {e.total_pj(), e.edp_pj_s()};
}

TEST(EnergyObjective, energy_and_edp_are_no_worse_than_bytes_or_latency) {
  const HwConfig config = load_hw_config(kMicro);
  const Net net = chain();
  for (const std::string policy : {"optimal", "opfusion"}) {
    const Figures bytes = figures_of(net, config, policy, Objective::Bytes);
    const Figures latency = figures_of(net, config, policy, Objective::Latency);
    const Figures energy = figures_of(net, config, policy, Objective::Energy);
    const Figures edp = figures_of(net, config, policy, Objective::Edp);
    // The policies end by comparing their candidates, these schedules among them, on the
    // total as predict_energy computes it (least_score): no slack.
    EXPECT_LE(energy.energy_pj, bytes.energy_pj) << policy;
    EXPECT_LE(energy.energy_pj, latency.energy_pj) << policy;
    EXPECT_LE(edp.edp_pj_s, energy.edp_pj_s) << policy;
    EXPECT_LE(edp.edp_pj_s, bytes.edp_pj_s) << policy;
    EXPECT_LE(edp.edp_pj_s, latency.edp_pj_s) << policy;
  }
}

TEST(EnergyObjective, other_policies_and_names_are_refused) {
  const HwConfig config = load_hw_config(kMicro);
  auto s = run_policy(chain(), machine_from_config(config), "fusion", Objective::Energy);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.reason().find("optimal and opfusion"), std::string::npos) << s.reason();
  // A machine without a config has no energy table.
  auto bare = run_policy(chain(), unified_machine(1 << 16), "optimal", Objective::Edp);
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.reason().find("energy table"), std::string::npos) << bare.reason();
  auto parsed = parse_objective("enrgy");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.reason().find("energy, edp"), std::string::npos) << parsed.reason();
  EXPECT_EQ(parse_objective("edp").value(), Objective::Edp);
  // One list names them all (the CLIs' --objective help prints it), and each parses back.
  EXPECT_EQ(objective_names(), "bytes | latency | energy | edp");
  for (Objective objective : objectives())
    EXPECT_EQ(parse_objective(objective_name(objective)).value(), objective);
}

}  // namespace
}  // namespace tessel::sched

namespace tessel::sched {
namespace {

// Issue 37, item 5 (docs/energy.md, "Validation"): the layer of the Timeloop/Accelergy
// simple_weight_stationary reference output (3 -> 32 channels, 3x3, stride 2, 112 x 112 outputs
// from 225 x 225 input positions, 16-bit) on that design with its own per-action figures
// (experiments/energy/validation/sws.yaml). The reference's published DRAM energy is
// 110,592 + 19,440,128 + 51,380,224 = 70,930,944 pJ: 864 weight, 151,875 input and 401,408
// output words at 128 pJ each.
TEST(ScheduleEnergy, timeloop_weight_stationary_layer_dram_matches_the_published_figure) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/experiments/energy/validation/sws.yaml");
  NetBuilder b("timeloop_sws_layer", 2, 2);
  const int x = b.input("x", {3, 225, 225});
  b.conv("conv", x, 32, 3, 2);
  const Net net = b.build();
  auto schedule = run_policy(net, machine_from_config(config), "layerwise", Objective::Bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.reason();
  const ScheduleEnergy e = predict_energy(schedule.value(), net, config);
  // The same words as Timeloop's DRAM level, 2 B each, and the 32 x 8 B requant tables.
  EXPECT_EQ(e.counts.dram_bytes, 2u * (864 + 151875 + 401408) + 32 * 8);
  EXPECT_NEAR(e.total.dram_pj / 70930944.0, 1.0, 3e-4);  // 70,947,200 pJ: x1.00023
  // MAC slots: 12,544 pixels x 18 passes (2 output blocks x 9 taps, one input block) x 256:
  // 16/3 of the reference's 10,838,016 computes (3 input channels on 16 rows).
  EXPECT_EQ(e.counts.macs, 12544u * 18 * 256);
  EXPECT_EQ(e.counts.macs * 3, 10838016u * 16);
  EXPECT_NEAR(e.total.mac_pj, 57802752 * 0.315, 1e-3);
}

// The same layer on the simple_output_stationary design (experiments/energy/validation/sos.yaml:
// `glb` holds activations and weights, `spad` the accumulators and outputs, as the reference's
// per-PE scratchpads hold its partial sums). By hand, layerwise, one conv and one requant per
// output row (112 steps of 112 pixels): the array reduces the 9 taps and the one input block of
// each sum, so each int32 sum (2 column blocks x 16 per pixel) is written once and read once by
// requant, and each int16 output written once by requant and read once by the store. The
// reference's pe_spad instead takes a read-modify-write per MAC (10,838,016 updates): the
// validation's 0.11x (docs/energy.md) is this count, not the per-action figure.
TEST(ScheduleEnergy, timeloop_output_stationary_layer_counts_by_hand) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/experiments/energy/validation/sos.yaml");
  NetBuilder b("timeloop_sws_layer", 2, 2);
  const int x = b.input("x", {3, 225, 225});
  b.conv("conv", x, 32, 3, 2);
  const Net net = b.build();
  auto schedule = run_policy(net, machine_from_config(config), "layerwise", Objective::Bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.reason();
  const ScheduleEnergy e = predict_energy(schedule.value(), net, config);
  ASSERT_EQ(e.counts.sram_read_bytes.size(), 2u);  // glb, spad
  const uint64_t pixels = 112 * 112;
  const uint64_t spad = pixels * 2 * 16 * 4 + pixels * 32 * 2;  // accumulators + outputs
  EXPECT_EQ(spad, 2408448u);
  EXPECT_EQ(e.counts.sram_write_bytes[1], spad);
  EXPECT_EQ(e.counts.sram_read_bytes[1], spad);
  // glb reads: per pixel and pass (2 output blocks x 9 taps) one 16-row input vector of 2 B
  // elements (13 rows of it channel padding); per step the 18 padded 16 x 16 weight blocks and
  // the 32 x 8 B requant table; and the halo: the schedule's 18 row tiles (6 output rows each)
  // keep, at each of the 17 boundaries, the one input row two neighbouring stride-2 windows
  // share, a 225-pixel row of 3 channels (1,350 B) copied by a one-operand add (its source read
  // twice, written once).
  ASSERT_EQ(schedule.value().groups.size(), 1u);
  EXPECT_EQ(schedule.value().groups[0].row_tiles, 18);
  const uint64_t inputs = pixels * 18 * 16 * 2;
  const uint64_t weights = 112 * (18 * 256 * 2 + 32 * 8);
  const uint64_t halo = 17 * 225 * 3 * 2;
  EXPECT_EQ(inputs, 7225344u);
  EXPECT_EQ(weights, 1060864u);
  EXPECT_EQ(e.counts.sram_read_bytes[0], inputs + weights + 2 * halo);
  // glb writes: the input's DMA (151,875 words), the halo copies, the padded weights once.
  EXPECT_EQ(e.counts.sram_write_bytes[0], 151875u * 2 + halo + (18 * 256 * 2 + 32 * 8));
  // DRAM: the compulsory words once, as on the weight-stationary design.
  EXPECT_EQ(e.counts.dram_bytes, 2u * (864 + 151875 + 401408) + 32 * 8);
}

}  // namespace
}  // namespace tessel::sched

namespace tessel::sched {
namespace {

// A tiny attention tail on micro.yaml (4 x 4 array, one 64 KiB scratchpad, 1 pJ/MAC, SRAM 0.5 /
// 0.25 pJ/B, DRAM 10 pJ/B): x, 4 tokens of 8 channels (C 8, H 4, W 1), -> LayerNorm -> a
// softmax in rows of 4 (2 heads) -> P x V per head (P the softmax's output, V x's heads: m 4,
// k 4 tokens, n 4). Layerwise, every op alone, one tile each; counted by hand as the simulator
// counts the instructions codegen emits (sim/core/costs.cpp: norm, softmax, matmul, requant).
TEST(ScheduleEnergy, norm_softmax_and_matmul_by_hand_from_their_counts) {
  const HwConfig config = load_hw_config(kMicro);
  const Machine machine = machine_from_config(config);
  Net net;
  net.name = "attention_tail";
  const int x = net.add_tensor("x", {8, 4, 1});
  Op input;
  input.name = "x";
  input.kind = OpKind::Input;
  input.output = x;
  net.add_op(input);
  Op norm;
  norm.name = "norm";
  norm.kind = OpKind::Norm;
  norm.inputs = {x};
  norm.output = net.add_tensor("y", {8, 4, 1});
  norm.weight_bytes = 8 + 16 * 8;  // E, then G, r, B per channel: 136 B
  norm.vector_elements = 32;
  net.add_op(norm);
  Op softmax;
  softmax.name = "softmax";
  softmax.kind = OpKind::RowSoftmax;
  softmax.inputs = {norm.output};
  softmax.output = net.add_tensor("p", {8, 4, 1});
  softmax.row_length = 4;
  softmax.weight_bytes = 1024;  // the two exp tables
  softmax.vector_elements = 32;
  net.add_op(softmax);
  Op matmul;
  matmul.name = "pv";
  matmul.kind = OpKind::MatMul;
  matmul.inputs = {softmax.output, x};
  matmul.output = net.add_tensor("o", {8, 4, 1});
  matmul.matmul = HeadMatMul{2, 4, 4, 4, 0, 4, 0, 4, false};
  matmul.macs = 2 * 4 * 4 * 4;
  net.add_op(matmul);
  net.finalize();

  auto schedule = run_policy(net, machine, "layerwise", Objective::Bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.reason();
  ASSERT_EQ(schedule.value().groups.size(), 3u);
  for (const auto& g : schedule.value().groups) ASSERT_EQ(g.tiles(), 1);
  const ScheduleEnergy e = predict_energy(schedule.value(), net, config);
  EXPECT_TRUE(e.unmodelled_kinds.empty());
  ASSERT_EQ(e.group_counts.size(), 3u);

  // Norm: load x (32 B) and the parameters (136 B); per row (4) the parameters read (544 B),
  // the row read twice (64 B) and written (32 B); the store reads the 32 output bytes.
  const ActionCounts& n = e.group_counts[0];
  EXPECT_EQ(n.sram_read_bytes[0], 544u + 64u + 32u);
  EXPECT_EQ(n.sram_write_bytes[0], 32u + 136u + 32u);
  EXPECT_EQ(n.norm_rows, 4u);
  EXPECT_EQ(n.norm_elements, 32u);
  EXPECT_EQ(n.macs, 0u);
  EXPECT_EQ(n.dram_bytes, 32u + 136u + 32u);

  // Softmax: load y (32 B) and the tables (1,024 B); the tables read once (1,024 B), every row
  // three times (96 B), written once (32 B); the store reads 32 B. 4 pixels x 2 rows.
  const ActionCounts& s = e.group_counts[1];
  EXPECT_EQ(s.sram_read_bytes[0], 1024u + 96u + 32u);
  EXPECT_EQ(s.sram_write_bytes[0], 32u + 1024u + 32u);
  EXPECT_EQ(s.softmax_rows, 8u);
  EXPECT_EQ(s.softmax_elements, 32u);
  EXPECT_EQ(s.dram_bytes, 32u + 1024u + 32u);

  // MatMul: load p's rows (32 B) and all of x (32 B); per head one matmul of 4 rows: MAC slots
  // 4 x 1 column block x 1 reduction block x 16 = 64, a read 4 x 1 x 4 = 16 B, b 4 x 4 = 16 B,
  // accumulators written 4 x 4 x 4 = 64 B; then one requant of both heads: 128 accumulator
  // bytes read, 32 output bytes written, 32 elements; the store reads 32 B.
  const ActionCounts& m = e.group_counts[2];
  EXPECT_EQ(m.macs, 128u);
  EXPECT_EQ(m.sram_read_bytes[0], 2 * (16u + 16u) + 128u + 32u);
  EXPECT_EQ(m.sram_write_bytes[0], 64u + 2 * 64u + 32u);
  EXPECT_EQ(m.requant_elements, 32u);
  EXPECT_EQ(m.add_elements, 0u);
  EXPECT_EQ(m.dram_bytes, 64u + 32u);

  // Energy: MAC 128 x 1 pJ; vector: the norm 32 x 7.5 + 4 x 18.9, the softmax 32 x 6.60 + 8 x
  // 6.4, the requant 32 x 3.3 (docs/energy.md's figures at 45 nm; the softmax element's 6.60 is
  // 4.70 pJ of arithmetic and four bytes of its 1 KiB exp table at E64(1 KiB) / 8 each).
  const double softmax_element = 4.70 + 4 * 3.80249 / 8;
  EXPECT_NEAR(energy_table(config).softmax_pj, softmax_element, 1e-5);
  const EnergyBreakdown& t = e.total;
  EXPECT_DOUBLE_EQ(t.mac_pj, 128.0);
  EXPECT_NEAR(t.vector_pj, 32 * 7.5 + 4 * 18.9 + 32 * softmax_element + 8 * 6.4 + 32 * 3.3, 1e-3);
  EXPECT_DOUBLE_EQ(t.sram_pj, (640 + 1152 + 224) * 0.5 + (200 + 1088 + 224) * 0.25);
  EXPECT_DOUBLE_EQ(t.dram_pj, (200 + 1088 + 96) * 10.0);
}

}  // namespace
}  // namespace tessel::sched
