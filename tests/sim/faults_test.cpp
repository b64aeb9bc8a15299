// Purpose-built faulty programs each stop with their located fault, counters kept, exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "isa/program.hpp"
#include "sim/simulator.hpp"
#include "support/cli.hpp"

namespace tessel::sim {
namespace {

const std::string kMicro = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml";

isa::Word word_of(const isa::Instruction& instruction) {
  auto word = isa::encode(instruction);
  EXPECT_TRUE(word.ok()) << word.reason();
  return word.value();
}

SimReport run(const std::vector<isa::Word>& words, bool timing_only = false) {
  const HwConfig config = load_hw_config(kMicro);
  DramImage image;
  image.size_bytes = 1 << 20;
  if (!timing_only) image.bytes.assign(image.size_bytes, 0);
  SimOptions options;
  options.timing_only = timing_only;
  // The same run with the datapath helper thread (--threads 2) must fault the same way.
  SimOptions threaded = options;
  threaded.threads = 2;
  auto twin = simulate(config, words, image, threaded);
  auto result = simulate(config, words, std::move(image), options);
  EXPECT_TRUE(result.ok()) << result.reason();
  EXPECT_TRUE(twin.ok()) << twin.reason();
  const SimReport& a = result.value().report;
  const SimReport& b = twin.value().report;
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.instructions_executed, b.instructions_executed);
  EXPECT_EQ(a.fault.has_value(), b.fault.has_value());
  if (a.fault && b.fault) {
    EXPECT_EQ(a.fault->str(), b.fault->str()) << "with 2 threads";
  }
  return result.value().report;
}

isa::Load load(std::uint32_t sp, std::uint32_t sram_addr, std::uint64_t dram_addr,
               std::uint32_t c_size) {
  isa::Load x;
  x.sp = sp;
  x.sram_addr = sram_addr;
  x.dram_addr = dram_addr;
  x.c_size = c_size;
  return x;
}

TEST(SimFaults, sram_out_of_bounds_names_cycle_engine_instruction_and_scratchpad) {
  for (const bool timing_only : {false, true}) {
    const SimReport report =
        run({word_of(isa::Nop{}), word_of(load(0, 4090, 0x1000, 64)), word_of(isa::Finish{})},
            timing_only);
    ASSERT_TRUE(report.fault);
    EXPECT_EQ(report.fault->kind, "out_of_bounds");
    EXPECT_EQ(report.fault->cycle, 2u);  // nop: d=0 s=1 f=2; load: d=1, starts at 2
    EXPECT_EQ(report.fault->engine, "load");
    EXPECT_EQ(report.fault->instruction_index, 1);
    EXPECT_EQ(report.fault->message,
              "field 'sram_addr' = 0xffa: the operand's last byte 0x1039 is beyond scratchpad "
              "'act' (4 KiB)");
    EXPECT_EQ(report.fault->instruction_text.rfind("load ", 0), 0u);
    EXPECT_EQ(report.cycles, 2u);
    EXPECT_EQ(report.instructions_executed, 1u);  // counters up to the fault are kept
    EXPECT_EQ(report.engines[0].instructions, 1u);
  }
}

TEST(SimFaults, dram_out_of_bounds_names_the_byte_range) {
  const SimReport report = run({word_of(load(0, 0, (1 << 20) - 16, 64)), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->str().substr(0, 46), "cycle 1: load: instruction 0 (`load pop_prev=0");
  EXPECT_EQ(report.fault->kind, "out_of_bounds");
  EXPECT_EQ(report.fault->message,
            "DRAM bytes [0xffff0, 0x100030) beyond the DRAM image (1048576 bytes)");
}

TEST(SimFaults, undecodable_word_is_an_illegal_instruction_at_fetch) {
  isa::Word bad{};
  bad[0] = 0x2a;
  const SimReport report = run({word_of(isa::Nop{}), bad, word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->engine, "fetch");
  EXPECT_EQ(report.fault->cycle, 1u);
  EXPECT_EQ(report.fault->instruction_index, 1);
  EXPECT_EQ(report.fault->message, "unknown opcode 0x2a");
  EXPECT_EQ(report.instructions_dispatched, 1u);
}

TEST(SimFaults, kind_the_scratchpad_may_not_hold_is_illegal_on_this_config) {
  isa::Load x = load(0, 0, 0x1000, 16);
  x.kind = isa::Traffic::kWeights;  // 'act' holds activations and outputs only
  const SimReport report = run({word_of(x), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->message, "field 'sp' = act: the scratchpad may not hold weights");
}

TEST(SimFaults, pushes_into_a_full_fifo_nobody_pops_deadlock_as_overflow) {
  isa::Load pushing = load(0, 0, 0x1000, 16);
  pushing.push_next = true;  // token FIFO depth K = 2 and COMPUTE never pops
  const SimReport report =
      run({word_of(pushing), word_of(pushing), word_of(pushing), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "deadlock");
  ASSERT_EQ(report.fault->blocked.size(), 1u);
  EXPECT_EQ(report.fault->blocked[0].engine, "load");
  EXPECT_EQ(report.fault->blocked[0].instruction_index, 2u);
  EXPECT_EQ(report.fault->blocked[0].waits_on, "load->compute");
  EXPECT_NE(report.fault->message.find("holds 2 of 2 tokens that no one will pop (overflow)"),
            std::string::npos)
      << report.fault->message;
}

TEST(SimFaults, pop_of_a_token_nobody_pushes_deadlocks_as_underflow) {
  isa::Nop waiting;
  waiting.engine = isa::Engine::kStore;
  waiting.pop_prev = true;
  const SimReport report = run({word_of(waiting), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "deadlock");
  EXPECT_EQ(report.fault->cycle, 3u);  // the last finish: finish d=1, s=2, f=3
  EXPECT_NE(report.fault->message.find("compute->store, which is empty"), std::string::npos)
      << report.fault->message;
}

TEST(SimFaults, program_without_finish_is_a_fault) {
  const SimReport report = run({word_of(isa::Nop{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "no_finish");
  EXPECT_EQ(report.cycles, 2u);
}

TEST(SimCli, fault_exits_with_two_and_writes_status_fault) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tessel_sim_cli_test";
  fs::create_directories(dir);
  isa::Program program;
  program.instructions = {load(0, 4090, 0x1000, 64), isa::Finish{}};
  isa::write_binary_file(program, (dir / "bad.bin").string());
  const std::string json_path = (dir / "r.json").string();
  EXPECT_EQ(cli::run_args({"sim", (dir / "bad.bin").string(), "--hw", kMicro, "--json", json_path}),
            2);
  std::ifstream in(json_path);
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["status"], "fault");
  EXPECT_EQ(report["fault"]["kind"], "out_of_bounds");
  EXPECT_EQ(report["fault"]["instruction_index"], 0);
  // The load faults at cycle 1, before fetch dispatches the finish in that cycle.
  EXPECT_EQ(report["dram_bytes"]["by_kind"]["instructions"], 32);
  EXPECT_EQ(report["cycles"], 1);
}

}  // namespace
}  // namespace tessel::sim
