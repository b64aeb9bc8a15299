// Every microbenchmark of tests/isa/programs/ runs to exactly its hand-computed cycles, DRAM
// bytes, start cycles and results, in full and timing-only mode alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "configs/hw_config.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/diagnostic.hpp"

namespace tessel::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPrograms = fs::path(TESSEL_SOURCE_DIR) / "tests/isa/programs";
constexpr std::uint64_t kDramBytes = 1 << 20;

std::uint64_t number(const json& value) {
  return value.is_string() ? std::stoull(value.get<std::string>(), nullptr, 0)
                           : value.get<std::uint64_t>();
}

std::uint64_t elem_bytes(const std::string& elem) {
  return elem == "i8" ? 1 : elem == "i16" ? 2 : 4;
}

/// The values of a {"values": [...]} or {"ramp": {count, start, step}} entry.
std::vector<std::int64_t> values_of(const json& entry) {
  std::vector<std::int64_t> out;
  if (entry.contains("values")) return entry["values"].get<std::vector<std::int64_t>>();
  const json& ramp = entry["ramp"];
  for (std::int64_t i = 0; i < ramp["count"].get<std::int64_t>(); ++i)
    out.push_back(ramp["start"].get<std::int64_t>() + i * ramp["step"].get<std::int64_t>());
  return out;
}

void poke(std::vector<std::uint8_t>& memory, std::uint64_t address, std::uint64_t bytes,
          std::int64_t value) {
  for (std::uint64_t i = 0; i < bytes; ++i)
    memory.at(address + i) =
        static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i));
}

template <class Bytes>  // DRAM's std::vector or a scratchpad's sim::ScratchpadBytes
std::int64_t peek(const Bytes& memory, std::uint64_t address, std::uint64_t bytes) {
  std::uint64_t u = 0;
  for (std::uint64_t i = 0; i < bytes; ++i) u |= std::uint64_t{memory.at(address + i)} << (8 * i);
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  return static_cast<std::int64_t>((u ^ sign) - sign);  // sign-extend
}

/// `value` truncated to `bytes` bytes and sign-extended (a ramp past 127 wraps in i8).
std::int64_t wrap(std::int64_t value, std::uint64_t bytes) {
  const std::uint64_t mask = bytes >= 8 ? ~0ull : (std::uint64_t{1} << (8 * bytes)) - 1;
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  return static_cast<std::int64_t>(((static_cast<std::uint64_t>(value) & mask) ^ sign) - sign);
}

/// Checks memory against expectation entries; `where` names it in failures.
template <class Bytes>
void expect_memory(const Bytes& memory, const json& entries, const std::string& where) {
  for (const json& entry : entries) {
    const std::uint64_t e = elem_bytes(entry["elem"]);
    const auto values = values_of(entry);
    const std::uint64_t base = number(entry["addr"]);
    for (std::size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(peek(memory, base + i * e, e), wrap(values[i], e))
          << where << " element " << i << " at 0x" << std::hex << base + i * e;
  }
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

class ProgramSuite : public ::testing::TestWithParam<std::string> {};

TEST(ProgramSuiteCatalogue, has_every_program_of_issue_5) {
  const auto names = program_names();
  for (const char* required :
       {"dma_load_one_burst", "dma_padded_load", "dma_store", "matrix_tile", "requant", "pooling",
        "token_pingpong", "double_buffer_conv", "deadlock"})
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
}

TEST_P(ProgramSuite, matches_hand_computed_cycles_bytes_and_results) {
  const std::string name = GetParam();
  std::ifstream in(kPrograms / (name + ".expect.json"));
  const json spec = json::parse(in);
  const json& want = spec["expect"];
  const HwConfig config = load_hw_config((kPrograms / spec["config"].get<std::string>()).string());
  const auto words = read_program_words((kPrograms / (name + ".tasm")).string(), &config);

  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (const json& entry : spec["dram_init"]) {
    const std::uint64_t e = elem_bytes(entry["elem"]);
    const auto values = values_of(entry);
    for (std::size_t i = 0; i < values.size(); ++i)
      poke(dram, number(entry["addr"]) + i * e, e, values[i]);
  }

  SimReport reports[2];
  for (const bool timing_only : {false, true}) {
    SimOptions options;
    options.timing_only = timing_only;
    options.record_instruction_cycles = true;
    DramImage image;
    image.size_bytes = kDramBytes;
    if (!timing_only) image.bytes = dram;
    auto result = simulate(config, words, std::move(image), options);
    ASSERT_TRUE(result.ok()) << result.reason();
    const SimReport& report = result.value().report;
    const std::string mode = timing_only ? "timing-only" : "full";
    SCOPED_TRACE(name + " (" + mode + ")");

    EXPECT_EQ(report.status(), want["status"].get<std::string>())
        << (report.fault ? report.fault->str() : "");
    if (want["status"] == "fault") {
      ASSERT_TRUE(report.fault);
      EXPECT_EQ(report.fault->kind, want["fault"].get<std::string>());
      EXPECT_EQ(report.fault->cycle, want["fault_cycle"].get<std::uint64_t>());
      if (want.contains("blocked")) {
        ASSERT_EQ(report.fault->blocked.size(), want["blocked"].size()) << report.fault->str();
        for (std::size_t i = 0; i < want["blocked"].size(); ++i) {
          EXPECT_EQ(report.fault->blocked[i].engine, want["blocked"][i]["engine"]);
          EXPECT_EQ(report.fault->blocked[i].instruction_index,
                    want["blocked"][i]["instruction"].get<std::uint64_t>());
          EXPECT_EQ(report.fault->blocked[i].waits_on, want["blocked"][i]["waits_on"]);
        }
      }
    } else {
      EXPECT_EQ(report.cycles, want["cycles"].get<std::uint64_t>());
    }
    const auto instruction_bytes =
        report.dram.read_bytes_by_kind[static_cast<std::size_t>(TrafficKind::kInstructions)];
    EXPECT_EQ(report.dram.read_bytes() - instruction_bytes,
              want["dram_read_bytes"].get<std::uint64_t>());
    EXPECT_EQ(report.dram.write_bytes(), want["dram_write_bytes"].get<std::uint64_t>());
    if (want.contains("instruction_bytes")) {
      EXPECT_EQ(instruction_bytes, want["instruction_bytes"].get<std::uint64_t>());
    }
    if (want.contains("macs")) {
      EXPECT_EQ(report.macs, want["macs"].get<std::uint64_t>());
    }
    if (want.contains("dram_bytes_by_kind")) {
      for (const auto& [kind, bytes] : want["dram_bytes_by_kind"].items()) {
        const TrafficKind k = kind == "weights"   ? TrafficKind::kWeights
                              : kind == "outputs" ? TrafficKind::kOutputs
                                                  : TrafficKind::kActivations;
        EXPECT_EQ(report.dram.read_bytes_by_kind[static_cast<std::size_t>(k)],
                  bytes["read"].get<std::uint64_t>())
            << kind;
        EXPECT_EQ(report.dram.write_bytes_by_kind[static_cast<std::size_t>(k)],
                  bytes["write"].get<std::uint64_t>())
            << kind;
      }
    }
    if (want.contains("starts")) {
      std::vector<std::uint64_t> starts(report.instruction_cycles.size());
      for (const auto& c : report.instruction_cycles) starts.at(c.index) = c.start_cycle;
      EXPECT_EQ(starts, want["starts"].get<std::vector<std::uint64_t>>());
    }
    if (!timing_only) {
      if (want.contains("dram")) expect_memory(result.value().dram, want["dram"], "DRAM");
      if (want.contains("sram")) {
        for (const json& entry : want["sram"]) {
          const auto* sp = config.find_scratchpad(entry["sp"].get<std::string>());
          ASSERT_NE(sp, nullptr);
          const auto id = static_cast<std::size_t>(sp - config.scratchpads.data());
          expect_memory(result.value().scratchpads.at(id), json::array({entry}),
                        "scratchpad " + sp->name);
        }
      }
    }
    reports[timing_only ? 1 : 0] = report;
  }
  // The accelerator's lead over the SystemC kernel changes nothing: a kernel activation per
  // active cycle (quantum 1) gives the same report and the same cycles, instruction by
  // instruction, as the default quantum.
  {
    SimOptions options;
    options.timing_only = true;
    options.record_instruction_cycles = true;
    options.sync_quantum_cycles = 1;
    DramImage image;
    image.size_bytes = kDramBytes;
    auto lockstep = simulate(config, words, std::move(image), options);
    ASSERT_TRUE(lockstep.ok()) << lockstep.reason();
    const SimReport& report = lockstep.value().report;
    EXPECT_EQ(report_json(report, config), report_json(reports[1], config));
    ASSERT_EQ(report.instruction_cycles.size(), reports[1].instruction_cycles.size());
    for (std::size_t i = 0; i < report.instruction_cycles.size(); ++i) {
      const InstructionCycles& a = report.instruction_cycles[i];
      const InstructionCycles& b = reports[1].instruction_cycles[i];
      EXPECT_EQ(std::tie(a.index, a.dispatch_cycle, a.start_cycle, a.finish_cycle),
                std::tie(b.index, b.dispatch_cycle, b.start_cycle, b.finish_cycle))
          << "instruction " << a.index;
    }
  }
  // Timing-only and full agree on everything they both measure.
  EXPECT_EQ(reports[0].cycles, reports[1].cycles);
  EXPECT_EQ(reports[0].dram.read_bytes_by_kind, reports[1].dram.read_bytes_by_kind);
  EXPECT_EQ(reports[0].dram.write_bytes_by_kind, reports[1].dram.write_bytes_by_kind);
  EXPECT_EQ(reports[0].macs, reports[1].macs);
}

INSTANTIATE_TEST_SUITE_P(Microbenchmarks, ProgramSuite, ::testing::ValuesIn(program_names()),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace tessel::sim
