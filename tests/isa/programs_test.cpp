// The microbenchmark suite (tests/isa/programs): every program assembles and validates against
// its config, and its sidecar's DRAM byte counts follow from its instructions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "isa/timing.hpp"

namespace tessel::isa {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(TESSEL_SOURCE_DIR) / "tests" / "isa" / "programs";

std::vector<fs::path> sidecars() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kDir))
    if (entry.path().string().ends_with(".expect.json")) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(IsaPrograms, the_suite_has_every_required_program) {
  std::set<std::string> names;
  for (const auto& path : sidecars()) names.insert(path.filename().string());
  for (const char* name :
       {"dma_load_one_burst", "dma_padded_load", "dma_store", "matrix_tile", "requant", "pooling",
        "token_pingpong", "double_buffer_conv", "deadlock"})
    EXPECT_TRUE(names.count(std::string(name) + ".expect.json")) << name;
}

TEST(IsaPrograms, each_program_validates_and_its_dram_bytes_follow_from_its_instructions) {
  for (const auto& sidecar : sidecars()) {
    SCOPED_TRACE(sidecar.filename().string());
    std::ifstream in(sidecar);
    const auto expect = nlohmann::json::parse(in);
    const HwConfig config =
        load_hw_config((kDir / expect.at("config").get<std::string>()).string());
    const TargetInfo target = target_from_config(config);
    std::string tasm = sidecar.string();
    tasm.replace(tasm.size() - std::string(".expect.json").size(), std::string::npos, ".tasm");
    const Program program = assemble_file(tasm, {&target});

    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_kind;  // read, write
    std::uint64_t read = 0, write = 0, fetched = 0;
    for (const auto& instruction : program.instructions) {
      fetched += kInstructionBytes;
      if (const auto* load = std::get_if<Load>(&instruction)) {
        read += timing::dma_bytes(*load);
        by_kind[std::string(kTrafficNames[static_cast<int>(load->kind)])].first +=
            timing::dma_bytes(*load);
      } else if (const auto* gather = std::get_if<Gather>(&instruction)) {
        read += 4 * std::uint64_t{gather->y_size} + timing::dma_bytes(*gather);
        by_kind["activations"].first += 4 * std::uint64_t{gather->y_size};
        by_kind[std::string(kTrafficNames[static_cast<int>(gather->kind)])].first +=
            timing::dma_bytes(*gather);
      } else if (const auto* store = std::get_if<Store>(&instruction)) {
        write += timing::dma_bytes(*store);
        by_kind[std::string(kTrafficNames[static_cast<int>(store->kind)])].second +=
            timing::dma_bytes(*store);
      }
      if (std::holds_alternative<Finish>(instruction)) break;
    }
    const auto& want = expect.at("expect");
    if (want.at("status") == "fault") continue;  // a faulting run moves less than it asks for
    EXPECT_EQ(read, want.at("dram_read_bytes").get<std::uint64_t>());
    EXPECT_EQ(write, want.at("dram_write_bytes").get<std::uint64_t>());
    EXPECT_EQ(fetched, want.at("instruction_bytes").get<std::uint64_t>());
    if (want.contains("dram_bytes_by_kind"))
      for (const auto& [kind, rw] : want.at("dram_bytes_by_kind").items()) {
        EXPECT_EQ(by_kind[kind].first, rw.at("read").get<std::uint64_t>()) << kind;
        EXPECT_EQ(by_kind[kind].second, rw.at("write").get<std::uint64_t>()) << kind;
      }
  }
}

TEST(IsaPrograms, matrix_tile_cost_matches_its_hand_computation) {
  const HwConfig config = load_hw_config((kDir / "micro.yaml").string());
  const Program program = assemble_file((kDir / "matrix_tile.tasm").string());
  const auto& conv = std::get<Conv>(program.instructions[2]);
  EXPECT_EQ(timing::conv_cycles(conv, compute_params_from_config(config)), 16);
  EXPECT_EQ(config.dram_latency_cycles(), 10);
  EXPECT_DOUBLE_EQ(config.dram_bytes_per_cycle(), 16.0);
}

TEST(IsaHwTarget, vta_pynq_scratchpads_become_ids_in_file_order) {
  const HwConfig config =
      load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/vta-pynq.yaml");
  const TargetInfo target = target_from_config(config);
  ASSERT_EQ(target.scratchpads.size(), 4u);
  EXPECT_EQ(target.scratchpads[0].name, "inp");
  EXPECT_EQ(target.scratchpads[0].size_bytes, 32 * 1024);
  EXPECT_TRUE(target.scratchpads[3].may_hold(SramKind::kOutputs));
  EXPECT_EQ(target.matrix_rows, 16);
  EXPECT_EQ(scratchpad_names(config), (std::vector<std::string>{"inp", "wgt", "acc", "out"}));
  // VTA's split buffers: a conv may not read its input from 'out' (3); fused layers copy
  // out -> inp first.
  const Program program = assemble(
      "conv in_sp=3 w_sp=1 acc_sp=2 out_h=1 out_w=1 ic_blocks=1 oc_blocks=1 kh=1 kw=1 "
      "stride_h=1 stride_w=1 dil_h=1 dil_w=1\n",
      "p.tasm");
  ASSERT_EQ(program.instructions.size(), 1u);
  const auto problem = validate(program.instructions[0], target);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message, "field 'in_sp' = out: the scratchpad may not hold activations");
}

}  // namespace
}  // namespace tessel::isa
