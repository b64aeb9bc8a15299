// The Verilator model of hw/rtl against the SystemC simulator: every ISA microbenchmark runs
// to the same cycles (the hand-computed ones), the same per-instruction dispatch/start/finish
// cycles, the same DRAM bytes, counters and final DRAM contents.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "isa/assembler.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"

namespace tessel::hw {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPrograms = fs::path(TESSEL_SOURCE_DIR) / "tests/isa/programs";
constexpr std::uint64_t kDramBytes = 1 << 20;

std::uint64_t number(const json& value) {
  return value.is_string() ? std::stoull(value.get<std::string>(), nullptr, 0)
                           : value.get<std::uint64_t>();
}

std::vector<std::uint8_t> initial_dram(const json& spec) {
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (const json& entry : spec["dram_init"]) {
    const std::string elem = entry["elem"];
    const std::uint64_t e = elem == "i8" ? 1 : elem == "i16" ? 2 : 4;
    std::vector<std::int64_t> values;
    if (entry.contains("values")) {
      values = entry["values"].get<std::vector<std::int64_t>>();
    } else {
      const json& ramp = entry["ramp"];
      for (std::int64_t i = 0; i < ramp["count"].get<std::int64_t>(); ++i)
        values.push_back(ramp["start"].get<std::int64_t>() + i * ramp["step"].get<std::int64_t>());
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      for (std::uint64_t b = 0; b < e; ++b)
        dram.at(number(entry["addr"]) + i * e + b) =
            static_cast<std::uint8_t>(static_cast<std::uint64_t>(values[i]) >> (8 * b));
  }
  return dram;
}

std::vector<std::string> program_names() {
  std::vector<std::string> names;
  if (!fs::exists(kPrograms)) return names;
  for (const auto& file : fs::directory_iterator(kPrograms)) {
    const std::string name = file.path().filename().string();
    const std::string suffix = ".expect.json";
    if (name.size() > suffix.size() && name.ends_with(suffix))
      names.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Everything the two reports must agree on.
void expect_same_report(const sim::SimReport& rtl, const sim::SimReport& sim) {
  EXPECT_EQ(rtl.status(), std::string(sim.status()))
      << (rtl.fault ? rtl.fault->str() : "") << " / " << (sim.fault ? sim.fault->str() : "");
  if (rtl.fault && sim.fault) {
    EXPECT_EQ(rtl.fault->kind, sim.fault->kind);
    EXPECT_EQ(rtl.fault->cycle, sim.fault->cycle);
  }
  EXPECT_EQ(rtl.cycles, sim.cycles);
  EXPECT_EQ(rtl.instructions_dispatched, sim.instructions_dispatched);
  EXPECT_EQ(rtl.instructions_executed, sim.instructions_executed);
  EXPECT_EQ(rtl.dram.read_bytes_by_kind, sim.dram.read_bytes_by_kind);
  EXPECT_EQ(rtl.dram.write_bytes_by_kind, sim.dram.write_bytes_by_kind);
  EXPECT_EQ(rtl.dram.requests, sim.dram.requests);
  EXPECT_EQ(rtl.dram.bursts, sim.dram.bursts);
  EXPECT_EQ(rtl.macs, sim.macs);
  // After a deadlock the simulator's idle/waiting counters run to its last active cycle, which
  // may lie past `cycles` (its own invariant busy + waiting + idle = cycles does not hold
  // there); the RTL's stop at `cycles`. Compare engine states on complete runs only.
  for (std::size_t e = 0; e < sim::kEngineCount && !(sim.fault && sim.fault->kind == "deadlock");
       ++e) {
    SCOPED_TRACE(sim::engine_name(e));
    EXPECT_EQ(rtl.engines[e].instructions, sim.engines[e].instructions);
    EXPECT_EQ(rtl.engines[e].busy_cycles, sim.engines[e].busy_cycles);
    EXPECT_EQ(rtl.engines[e].waiting_on_dram_cycles, sim.engines[e].waiting_on_dram_cycles);
    EXPECT_EQ(rtl.engines[e].waiting_on_token_cycles, sim.engines[e].waiting_on_token_cycles);
    EXPECT_EQ(rtl.engines[e].idle_cycles, sim.engines[e].idle_cycles);
    EXPECT_EQ(rtl.engines[e].queue_full_cycles, sim.engines[e].queue_full_cycles);
  }
  ASSERT_EQ(rtl.scratchpads.size(), sim.scratchpads.size());
  for (std::size_t k = 0; k < sim.scratchpads.size(); ++k) {
    EXPECT_EQ(rtl.scratchpads[k].read_bytes, sim.scratchpads[k].read_bytes);
    EXPECT_EQ(rtl.scratchpads[k].write_bytes, sim.scratchpads[k].write_bytes);
  }
  auto by_index = [](const std::vector<sim::InstructionCycles>& cycles) {
    std::vector<std::array<std::uint64_t, 3>> out;
    for (const auto& c : cycles) {
      if (out.size() <= c.index) out.resize(c.index + 1);
      out[c.index] = {c.dispatch_cycle, c.start_cycle, c.finish_cycle};
    }
    return out;
  };
  EXPECT_EQ(by_index(rtl.instruction_cycles), by_index(sim.instruction_cycles))
      << "per-instruction {dispatch, start, finish} cycles differ";
}

class RtlMicrobenchmark : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlMicrobenchmark, equals_the_simulator_cycle_for_cycle_and_byte_for_byte) {
  const std::string name = GetParam();
  std::ifstream in(kPrograms / (name + ".expect.json"));
  const json spec = json::parse(in);
  const json& want = spec["expect"];
  const HwConfig config = load_hw_config((kPrograms / spec["config"].get<std::string>()).string());
  const auto words = sim::read_program_words((kPrograms / (name + ".tasm")).string(), &config);
  const auto dram = initial_dram(spec);

  sim::SimOptions sim_options;
  sim_options.record_instruction_cycles = true;
  auto simulated = sim::simulate(config, words, sim::DramImage::from_bytes(dram), sim_options);
  ASSERT_TRUE(simulated.ok()) << simulated.reason();

  RtlOptions options;
  options.record_instruction_cycles = true;
  options.watchdog_cycles = 100'000;
  auto rtl = run_rtl(config, words, sim::DramImage::from_bytes(dram), options);
  ASSERT_TRUE(rtl.ok()) << rtl.reason();
  const sim::SimReport& report = rtl.value().report;

  EXPECT_EQ(rtl.value().late_cycles, 0u);
  expect_same_report(report, simulated.value().report);
  if (want["status"] == "ok")
    EXPECT_EQ(report.cycles, want["cycles"].get<std::uint64_t>());
  else
    EXPECT_EQ(report.fault ? report.fault->cycle : 0, want["fault_cycle"].get<std::uint64_t>());
  EXPECT_TRUE(rtl.value().dram == simulated.value().dram) << "final DRAM contents differ";
}

INSTANTIATE_TEST_SUITE_P(Microbenchmarks, RtlMicrobenchmark, ::testing::ValuesIn(program_names()),
                         [](const auto& test_info) { return test_info.param; });

// The DMA data mover moves strided scratchpad pixels and padding a group of pixels per cycle,
// so it keeps up with the DRAM (tiny_conv's weight load on edge-small was 18 cycles late when
// it moved one pixel per cycle). On micro (DW = 64, L = 10, T = 4):
//   0 load   d 0 s 1   4 rows x 3 pixels x 4 B, DRAM dense (one 48 B request, one burst, bus
//                      [11, 15)), SRAM pixels 8 B apart + 5 pixels of right padding (7): f 15
//                      (one pixel per cycle would take 32 mover cycles: f 34)
//   1 nop    d 1 s 15  f 16
//   2 store  d 2 s 16  the 12 data pixels back to DRAM dense at 0x2000: bus [26, 30), f 30
//   3 store  d 3 s 30  the padded 4 x 8 box dense at 0x3000: 128 B, 2 bursts, bus [40, 48), f 48
//   4 finish d 4 s 48  f 49
TEST(RtlDma, strided_pixels_and_padding_move_in_groups_within_the_dram_time) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x1000 y_size=4 x_size=3 "
      "c_size=4 "
      "dram_stride_y=12 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 pad_right=5 "
      "pad_value=7 push_next=1\n"
      "nop engine=compute pop_prev=1 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=4 x_size=3 "
      "c_size=4 dram_stride_y=12 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 pop_prev=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x3000 y_size=4 x_size=8 "
      "c_size=4 dram_stride_y=32 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 "
      "push_prev=1\n"
      "finish pop_next=1\n";
  const isa::Program program = isa::assemble(text, "dma_groups.tasm");
  std::vector<isa::Word> words;
  for (const auto& instruction : program.instructions)
    words.push_back(isa::encode(instruction).value());
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (std::size_t i = 0; i < 48; ++i) dram[0x1000 + i] = static_cast<std::uint8_t>(i);

  sim::SimOptions sim_options;
  sim_options.record_instruction_cycles = true;
  auto simulated = sim::simulate(config, words, sim::DramImage::from_bytes(dram), sim_options);
  ASSERT_TRUE(simulated.ok()) << simulated.reason();
  RtlOptions options;
  options.record_instruction_cycles = true;
  options.watchdog_cycles = 100'000;
  auto rtl = run_rtl(config, words, sim::DramImage::from_bytes(dram), options);
  ASSERT_TRUE(rtl.ok()) << rtl.reason();

  EXPECT_EQ(rtl.value().late_cycles, 0u);
  EXPECT_EQ(rtl.value().report.cycles, 49u);
  expect_same_report(rtl.value().report, simulated.value().report);
  const auto& out = rtl.value().dram;
  for (std::size_t i = 0; i < 48; ++i) EXPECT_EQ(out[0x2000 + i], i) << "dense copy byte " << i;
  for (std::size_t y = 0; y < 4; ++y)
    for (std::size_t x = 0; x < 8; ++x)
      for (std::size_t c = 0; c < 4; ++c)
        EXPECT_EQ(out[0x3000 + 32 * y + 4 * x + c], x < 3 ? 12 * y + 4 * x + c : 7u)
            << "padded box y " << y << " x " << x << " c " << c;
  EXPECT_TRUE(out == simulated.value().dram) << "final DRAM contents differ";
}

TEST(RtlModels, micro_and_edge_small_are_built) {
  std::vector<std::string> names;
  for (const auto& model : rtl_models()) names.push_back(model.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "micro"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "edge-small"), names.end());
}

TEST(RtlModels, a_config_without_a_model_is_refused_by_name) {
  HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  config.matrix.fill_cycles = 5;  // another content hash
  auto result = run_rtl(config, {}, sim::DramImage::from_bytes({}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason().rfind("no RTL model was built for config 'micro' (content hash ", 0),
            0u)
      << result.reason();
}

}  // namespace
}  // namespace tessel::hw
