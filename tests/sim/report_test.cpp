// The report's derived numbers on docs/timing.md's worked example: cycles, bytes, engine
// accounting, SRAM bytes, energy, JSON and the capped trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "sim/core/costs.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"

namespace tessel::sim {
namespace {

const std::string kDir = std::string(TESSEL_SOURCE_DIR) + "/tests/sim/";

SimResult run_worked_example(const SimOptions& options) {
  const HwConfig config = load_hw_config(kDir + "micro.yaml");
  const auto words = read_program_words(kDir + "worked_example.tasm", &config);
  DramImage image;
  image.size_bytes = 1 << 16;
  if (!options.timing_only) image.bytes.assign(image.size_bytes, 1);
  auto result = simulate(config, words, std::move(image), options);
  EXPECT_TRUE(result.ok()) << result.reason();
  return std::move(result).value();
}

TEST(SimReport, worked_example_of_timing_md_takes_46_cycles) {
  const SimReport report = run_worked_example({}).report;
  ASSERT_TRUE(report.ok()) << report.fault->str();
  EXPECT_EQ(report.cycles, 46u);
  EXPECT_EQ(report.dram.read_bytes_by_kind[static_cast<int>(TrafficKind::kActivations)], 64u);
  EXPECT_EQ(report.dram.write_bytes_by_kind[static_cast<int>(TrafficKind::kOutputs)], 64u);
  EXPECT_EQ(report.dram.read_bytes_by_kind[static_cast<int>(TrafficKind::kInstructions)], 128u);
  EXPECT_EQ(report.macs, 64u);  // P = 4, one pass, 4 x 4 array
  EXPECT_DOUBLE_EQ(report.mac_utilisation, 64.0 / (46 * 16));
}

TEST(SimReport, engine_states_partition_the_run) {
  const SimReport report = run_worked_example({}).report;
  // load: 1 idle (decode), 14 running: bus 4 busy + 10 waiting on DRAM, then 31 idle.
  EXPECT_EQ(report.engines[0].busy_cycles, 4u);
  EXPECT_EQ(report.engines[0].waiting_on_dram_cycles, 10u);
  EXPECT_EQ(report.engines[0].idle_cycles, 32u);
  // compute: conv waits on the load token over [2, 15), finish on the store token [31, 45).
  EXPECT_EQ(report.engines[1].busy_cycles, 16u + 1u);
  EXPECT_EQ(report.engines[1].waiting_on_token_cycles, 13u + 14u);
  EXPECT_EQ(report.engines[2].waiting_on_token_cycles, 28u);  // store: [3, 31)
  for (const auto& engine : report.engines)
    EXPECT_EQ(engine.busy_cycles + engine.waiting_on_dram_cycles + engine.waiting_on_token_cycles +
                  engine.idle_cycles,
              report.cycles);
}

TEST(SimReport, sram_bytes_and_energy_follow_the_documented_counts) {
  const SimReport report = run_worked_example({}).report;
  ASSERT_EQ(report.scratchpads.size(), 1u);
  // reads: conv input 16 + weights 16, store 64; writes: load 64, conv accumulators 64.
  EXPECT_EQ(report.scratchpads[0].read_bytes, 96u);
  EXPECT_EQ(report.scratchpads[0].write_bytes, 128u);
  ASSERT_TRUE(report.energy);
  EXPECT_DOUBLE_EQ(report.energy->mac_pj, 64.0);
  EXPECT_DOUBLE_EQ(report.energy->sram_pj, 96 * 0.5 + 128 * 0.25);
  EXPECT_DOUBLE_EQ(report.energy->dram_pj, (64 + 64 + 128) * 10.0);
}

TEST(SimReport, energy_by_component_of_one_conv_by_hand) {
  // micro.yaml with the model's own figures (45 nm, LPDDR4) instead of its explicit ones.
  std::ifstream in(kDir + "micro.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("energy:")) + "energy: {dram_technology: lpddr4}\n";
  const auto config = parse_hw_config(text, "micro-model.yaml");
  ASSERT_TRUE(config.ok()) << config.reason();
  const auto words = read_program_words(kDir + "worked_example.tasm", &config.value());
  DramImage image;
  image.size_bytes = 1 << 16;
  SimOptions options;
  options.timing_only = true;
  auto result = simulate(config.value(), words, std::move(image), options);
  ASSERT_TRUE(result.ok()) << result.reason();
  const SimReport& report = result.value().report;
  ASSERT_TRUE(report.energy);
  const EnergyEstimate& e = *report.energy;
  // MAC: 64 slots (4 pixels x one 4 x 4 pass) x (8x8 multiply 0.2 + 32-bit add 0.1) pJ.
  EXPECT_NEAR(e.mac_pj, 64 * 0.3, 1e-12);
  // SRAM: 96 B read + 128 B written (the counts above) in 16 KiB banks (64 KiB / 4):
  // E64(16 KiB) = 3.8024910689 x 16^0.4726043223 = 14.0974483 pJ per 64-bit access, an eighth
  // of it per byte = 1.76218104 pJ/B; 224 B -> 394.728553 pJ.
  EXPECT_NEAR(e.sram_pj, 224 * 14.097448315569917 / 8, 1e-9);
  // No requant, add or pool in this program.
  EXPECT_EQ(e.vector_pj, 0);
  // DRAM: 64 + 64 + 128 (instructions) B at LPDDR4's 4 pJ/bit = 32 pJ/B.
  EXPECT_NEAR(e.dram_pj, 256 * 32.0, 1e-9);
  // Area: 64 KiB x 5.536 um^2/B = 0.362807296 mm^2; 16 MACs x 419 um^2 = 0.006704 mm^2; 4 lanes x
  // 3769 um^2 = 0.015076 mm^2; total 0.384587296 mm^2. Leakage: 1 mW/mm^2 x that x 46 ns
  // (46 cycles at 1 GHz) = 1.7691015616e-11 J = 17.691015616 pJ.
  EXPECT_NEAR(e.area_mm2, 0.384587296, 1e-12);
  EXPECT_NEAR(e.leakage_pj, 17.691015616, 1e-9);
  EXPECT_NEAR(e.total_pj(), 19.2 + 394.728553 + 8192 + 17.691015616, 1e-5);
  EXPECT_NEAR(e.edp_pj_s(), e.total_pj() * 46e-9, 1e-15);
}

TEST(SimReport, vector_ops_count_requant_add_and_pool_elements) {
  isa::Requant requant;
  requant.y_size = 2;
  requant.x_size = 3;
  requant.c_size = 4;
  EXPECT_EQ(vector_ops(requant).requant_elements, 24u);  // one per element of the box
  isa::Add add;
  add.y_size = 1;
  add.x_size = 5;
  add.c_size = 8;
  EXPECT_EQ(vector_ops(add).add_elements, 40u);
  isa::Pool pool;
  pool.out_h = 2;
  pool.out_w = 2;
  pool.c_size = 16;
  pool.kh = 3;
  pool.kw = 3;
  EXPECT_EQ(vector_ops(pool).pool_window_elements, 576u);  // 64 outputs x 9 window positions
  EXPECT_EQ(vector_ops(isa::Copy{}).requant_elements + vector_ops(isa::Copy{}).add_elements +
                vector_ops(isa::Copy{}).pool_window_elements,
            0u);
  isa::Lut lut;
  lut.y_size = 2;
  lut.x_size = 3;
  lut.c_size = 5;
  lut.dst_elem = isa::Elem::kI16;
  EXPECT_EQ(vector_ops(lut).lut_bytes, 60u);  // 30 lookups of a 2-byte entry
  isa::Reduce reduce;
  reduce.y_size = 2;
  reduce.x_size = 2;
  reduce.c_size = 7;
  EXPECT_EQ(vector_ops(reduce).reduce_elements, 28u);  // max: one compare per source element
  EXPECT_EQ(vector_ops(reduce).square_elements, 0u);
  reduce.mode = isa::ReduceMode::kSumsq;
  EXPECT_EQ(vector_ops(reduce).reduce_elements, 28u);
  EXPECT_EQ(vector_ops(reduce).square_elements, 28u);  // and a square before each add
  isa::Mul mul;
  mul.y_size = 2;
  mul.x_size = 3;
  mul.c_size = 7;
  mul.b_per_pixel = true;  // b's one element a pixel: still one product per element
  EXPECT_EQ(vector_ops(mul).mul_elements, 42u);
  isa::Softmax softmax;
  softmax.y_size = 2;
  softmax.x_size = 3;
  softmax.c_size = 9;
  EXPECT_EQ(vector_ops(softmax).softmax_elements, 54u);
  EXPECT_EQ(vector_ops(softmax).softmax_rows, 6u);  // one row a pixel
  isa::Norm norm;
  norm.y_size = 1;
  norm.x_size = 4;
  norm.c_size = 10;
  EXPECT_EQ(vector_ops(norm).norm_elements, 40u);
  EXPECT_EQ(vector_ops(norm).norm_rows, 4u);
  isa::Matmul matmul;
  matmul.m_size = 3;
  matmul.n_size = 5;
  matmul.k_size = 6;
  EXPECT_EQ(vector_ops(matmul), VectorOps{});  // the matrix unit's: MAC slots only
}

// The ISA v3 microbenchmarks (tests/isa/programs, whose comments give the boxes) run on micro
// (45 nm defaults): the vector unit's energy of their lut and reduce instructions by hand.
SimReport run_isa_program(const std::string& name) {
  const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/";
  const HwConfig config = load_hw_config(dir + "micro.yaml");
  const auto words = read_program_words(dir + name, &config);
  DramImage image;
  image.size_bytes = 1 << 16;
  SimOptions options;
  options.timing_only = true;
  auto result = simulate(config, words, std::move(image), options);
  EXPECT_TRUE(result.ok()) << result.reason();
  return std::move(result).value().report;
}

TEST(SimReport, lut_and_reduce_energy_by_hand) {
  // lut.tasm: 1 x 2 x 8 i8 lookups (16 B of entries) and 2 x 1 x 6 i16 ones (24 B): 40 B, each
  // byte an eighth of a 64-bit access to a 1 KiB array, E64(1 KiB) = a = 3.8024910689444225 pJ.
  const SimReport lut = run_isa_program("lut.tasm");
  ASSERT_TRUE(lut.ok()) << lut.fault->str();
  EXPECT_EQ(lut.vector_ops.lut_bytes, 40u);
  EXPECT_EQ(lut.vector_ops.reduce_elements, 0u);
  ASSERT_TRUE(lut.energy);
  EXPECT_NEAR(lut.energy->vector_pj, 40 * 3.8024910689444225 / 8, 1e-12);  // 19.0124553 pJ
  // reduce.tasm: max 1x2x6, sum 1x2x6, sumsq 2x1x6, max 1x2x4, sum 1x1x8, max 1x1x1 = 53
  // elements at one 32-bit add or compare (0.1 pJ) each, the 12 of the sum of squares also an
  // 8 x 8 multiply (0.2 pJ): 5.3 + 2.4 = 7.7 pJ.
  const SimReport reduce = run_isa_program("reduce.tasm");
  ASSERT_TRUE(reduce.ok()) << reduce.fault->str();
  EXPECT_EQ(reduce.vector_ops.reduce_elements, 53u);
  EXPECT_EQ(reduce.vector_ops.square_elements, 12u);
  EXPECT_EQ(reduce.vector_ops.lut_bytes, 0u);
  ASSERT_TRUE(reduce.energy);
  EXPECT_NEAR(reduce.energy->vector_pj, 7.7, 1e-12);
}

// Issue 37: the rest of ISA v3 on the same microbenchmarks. The per-action figures (45 nm,
// docs/energy.md), from Horowitz's 8 x 8 multiply 0.2 pJ (a multiplier's energy in proportion
// to the product of its operand widths), 32 x 32 multiply 3.1 pJ and 32-bit add 0.1 pJ:
//   mul element:     0.2 (a x b) + 8 x 0.2 (16-bit product x 32-bit M) + 2 x 0.1 = 2.0 pJ
//   softmax element: 0.1 + 0.1 (max, m - x) + 4 table bytes x a / 8 + 0.8 (16 x 16) + 0.1
//                    + 0.1 (sum) + 1.6 + 0.1 (x R) + 1.6 + 0.2 (x M, zero point)
//                    = 4.7 + 4 x 0.47531138... = 6.60124553... pJ
//   softmax row:     32 division steps x a 64-bit subtract (0.2) = 6.4 pJ
//   norm element:    0.1 (S1) + 0.2 + 0.2 (x^2, S2) + 0.4 + 0.1 (N x - S1) + 3.1 + 0.1 (x inv)
//                    + 3.1 + 0.1 + 0.1 (x G + B, rounding) = 7.5 pJ
//   norm row:        2 x 3.1 + 0.1 (D) + 63 steps x 0.2 (square root, reciprocal) = 18.9 pJ
TEST(SimReport, mul_softmax_norm_and_matmul_energy_by_hand) {
  const double lut_byte = 3.8024910689444225 / 8;
  // mul.tasm: 1x2x6 (b per pixel), 1x2x6 (per channel), 1x1x8 (per element): 32 elements.
  const SimReport mul = run_isa_program("mul.tasm");
  ASSERT_TRUE(mul.ok()) << mul.fault->str();
  EXPECT_EQ(mul.vector_ops.mul_elements, 32u);
  ASSERT_TRUE(mul.energy);
  EXPECT_NEAR(mul.energy->vector_pj, 32 * 2.0, 1e-9);
  // softmax.tasm: 1x3 rows of 5 (causal: masked columns are processed too), 1x1 of 6.
  const SimReport softmax = run_isa_program("softmax.tasm");
  ASSERT_TRUE(softmax.ok()) << softmax.fault->str();
  EXPECT_EQ(softmax.vector_ops.softmax_elements, 21u);
  EXPECT_EQ(softmax.vector_ops.softmax_rows, 4u);
  ASSERT_TRUE(softmax.energy);
  EXPECT_NEAR(softmax.energy->vector_pj, 21 * (4.7 + 4 * lut_byte) + 4 * 6.4, 1e-9);
  // norm.tasm: 1x2 rows of 6 (LayerNorm), 1x1 of 4 (RMSNorm).
  const SimReport norm = run_isa_program("norm.tasm");
  ASSERT_TRUE(norm.ok()) << norm.fault->str();
  EXPECT_EQ(norm.vector_ops.norm_elements, 16u);
  EXPECT_EQ(norm.vector_ops.norm_rows, 3u);
  ASSERT_TRUE(norm.energy);
  EXPECT_NEAR(norm.energy->vector_pj, 16 * 7.5 + 3 * 18.9, 1e-9);
  // matmul.tasm: the matrix unit's MAC slots, m x n blocks x k blocks x R x C on the 4 x 4
  // array: 3 x 2 x 2 + 2 x 1 x 1 + 2 x 1 x 1 + 1 x 1 x 1 = 17 passes of 16 slots, 0.3 pJ each
  // (int8 x int8 into int32: 0.2 + 0.1); no vector operation.
  const SimReport matmul = run_isa_program("matmul.tasm");
  ASSERT_TRUE(matmul.ok()) << matmul.fault->str();
  EXPECT_EQ(matmul.macs, 272u);
  ASSERT_TRUE(matmul.energy);
  EXPECT_NEAR(matmul.energy->mac_pj, 272 * 0.3, 1e-9);
  EXPECT_EQ(matmul.energy->vector_pj, 0.0);
}

TEST(SimReport, json_carries_status_bytes_engines_and_version) {
  const HwConfig config = load_hw_config(kDir + "micro.yaml");
  const auto doc = nlohmann::json::parse(report_json(run_worked_example({}).report, config));
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["cycles"], 46);
  EXPECT_EQ(doc["dram_bytes"]["total"], 256);
  EXPECT_EQ(doc["dram_bytes"]["by_kind"]["instructions"], 128);
  EXPECT_EQ(doc["engines"]["store"]["busy_cycles"], 4);
  EXPECT_EQ(doc["config"]["name"], "sim-micro");
  EXPECT_TRUE(doc.contains("tool_version"));
  EXPECT_TRUE(doc.contains("energy_pj"));
  EXPECT_EQ(doc["energy_pj"]["mac"], 64.0);  // micro.yaml's explicit 1 pJ/MAC
  EXPECT_EQ(doc["energy_pj"]["sram_by_scratchpad"]["unified"], 96 * 0.5 + 128 * 0.25);
  EXPECT_EQ(doc["energy_table"]["technology"], "45nm");
  EXPECT_TRUE(doc.contains("edp_pj_s"));
  EXPECT_TRUE(doc["area_mm2"].contains("total"));
}

TEST(SimReport, trace_has_one_slice_per_instruction_and_says_when_capped) {
  const auto path = (std::filesystem::temp_directory_path() / "tessel_sim_trace.json").string();
  SimOptions options;
  options.trace_path = path;
  options.trace_max_events = 3;
  run_worked_example(options);
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  int slices = 0, names = 0;
  for (const auto& event : trace["traceEvents"]) {
    slices += event["ph"] == "X";
    names += event["ph"] == "M";
  }
  EXPECT_EQ(slices, 3);
  EXPECT_EQ(names, 3);  // load, compute, store tracks
  EXPECT_EQ(trace["otherData"]["truncated"], true);
  EXPECT_EQ(trace["otherData"]["dropped_events"], 1);
  EXPECT_EQ(trace["traceEvents"][3]["ts"], 1);  // the load's slice: [1, 15)
  EXPECT_EQ(trace["traceEvents"][3]["dur"], 14);
}

TEST(SimReport, many_runs_in_one_process_each_get_a_fresh_systemc_context) {
  for (int i = 0; i < 200; ++i) {
    SimOptions options;
    options.timing_only = i % 2 == 1;
    ASSERT_EQ(run_worked_example(options).report.cycles, 46u) << "run " << i;
  }
}

}  // namespace
}  // namespace tessel::sim
