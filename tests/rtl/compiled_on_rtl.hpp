// A compiled network program (tools/run's pipeline: quantize, schedule, codegen, simulate and
// compare with the golden executor) run on the RTL against the simulator: per fusion group
// cycles, every instruction's dispatch, start and finish, DRAM bytes and counters, and the
// final DRAM image. Shared by the transformer tests of tests/rtl.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "sim/simulator.hpp"
#include "tests/rtl/report_checks.hpp"
#include "tools/run/pipeline.hpp"

namespace tessel::hw {

/// True when this binary has an RTL model built for `config` (TESSEL_RTL_CONFIGS).
inline bool rtl_model_built_for(const HwConfig& config) {
  for (const auto& model : rtl_models())
    if (model.config_hash == content_hash(config)) return true;
  return false;
}

/// Per fusion group cycles by `tessel sim`'s report.json rule (hw/harness/cli_rtl.cpp's
/// group_cycles): the finish of the group's last instruction minus the previous group's.
inline std::vector<std::uint64_t> group_cycles(const codegen::CompiledProgram& compiled,
                                               const sim::SimReport& report) {
  std::vector<std::uint64_t> finish;
  for (const auto& c : report.instruction_cycles) {
    if (c.index >= finish.size()) finish.resize(c.index + 1, 0);
    finish[c.index] = c.finish_cycle;
  }
  std::vector<std::uint64_t> rows;
  std::uint64_t previous_end = 0;
  for (const auto& g : compiled.groups) {
    std::uint64_t end = previous_end;
    for (auto i = static_cast<std::uint64_t>(g.first_instruction);
         i < static_cast<std::uint64_t>(g.end_instruction) && i < finish.size(); ++i)
      end = std::max(end, finish[i]);
    rows.push_back(end - previous_end);
    previous_end = end;
  }
  return rows;
}

/// Runs `r` (a full-mode pipeline::run_policy result on `config`) on the simulator and on the
/// RTL, both recording every instruction's cycles, and checks that they agree on everything;
/// `r` itself must be bit exact with the golden executor. Prints the figures under `label`.
inline void expect_rtl_equals_simulator(const pipeline::PolicyResult& r, const HwConfig& config,
                                        const std::string& label) {
  ASSERT_TRUE(r.bit_exact.has_value() && *r.bit_exact) << label << ": " << r.mismatch;
  sim::SimOptions sim_options;
  sim_options.record_instruction_cycles = true;
  auto simulated =
      sim::simulate(config, r.words, sim::DramImage::from_bytes(r.compiled.dram), sim_options);
  ASSERT_TRUE(simulated.ok()) << simulated.reason();
  ASSERT_TRUE(simulated.value().report.ok()) << simulated.value().report.fault->str();
  RtlOptions options;
  options.record_instruction_cycles = true;
  auto rtl = run_rtl(config, r.words, sim::DramImage::from_bytes(r.compiled.dram), options);
  ASSERT_TRUE(rtl.ok()) << rtl.reason();
  const sim::SimReport& a = rtl.value().report;
  const sim::SimReport& b = simulated.value().report;
  ASSERT_TRUE(a.ok()) << a.fault->str();
  EXPECT_EQ(b.cycles, r.report.cycles) << "the recording run differs from the pipeline's";
  EXPECT_EQ(rtl.value().late_cycles, 0u);
  EXPECT_EQ(rtl.value().sram_collisions, 0u);
  expect_same_report(a, b);
  const auto rtl_groups = group_cycles(r.compiled, a);
  const auto sim_groups = group_cycles(r.compiled, b);
  EXPECT_EQ(rtl_groups, sim_groups) << "per-group cycles differ";
  EXPECT_EQ(rtl_groups.size(), r.compiled.groups.size());
  EXPECT_TRUE(rtl.value().dram == simulated.value().dram) << "final DRAM images differ";
  std::printf("%s: %zu groups, %zu instructions, %llu cycles (sim %llu), %.1f kHz\n", label.c_str(),
              rtl_groups.size(), r.words.size(), static_cast<unsigned long long>(a.cycles),
              static_cast<unsigned long long>(b.cycles),
              rtl.value().wall_seconds > 0 ? static_cast<double>(rtl.value().simulated_cycles) /
                                                 rtl.value().wall_seconds / 1e3
                                           : 0.0);
}

}  // namespace tessel::hw
