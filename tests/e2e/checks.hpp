// Shared end-to-end checks: one policy's run against the golden executor, the ISA target and
// the scheduler's byte and cycle predictions.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "isa/hw_target.hpp"
#include "tools/run/pipeline.hpp"

namespace tessel::e2e {

inline std::string config_path(const std::string& name) {
  return std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml";
}

/// Simulated cycles over the scheduler's predicted cycles.
inline double cycle_ratio(const pipeline::PolicyResult& r) {
  return static_cast<double>(r.report.cycles) /
         static_cast<double>(std::max<std::int64_t>(r.scheduled.schedule.cycles, 1));
}

/// The checks of issue 8's "done when", minus the cycle tolerance (reported, see the callers):
/// bit-exact outputs, every instruction valid on the config, DMA bytes = the prediction.
inline void expect_consistent(const pipeline::PolicyResult& r, const HwConfig& config) {
  ASSERT_TRUE(r.bit_exact.has_value()) << "run in full mode";
  EXPECT_TRUE(*r.bit_exact) << r.mismatch;
  EXPECT_FALSE(r.outputs.empty());
  // A program computing nothing would leave zeros: demand real values.
  for (const auto& [name, values] : r.outputs) {
    std::size_t nonzero = 0;
    for (float v : values) nonzero += v != 0.0f;
    EXPECT_GT(nonzero, values.size() / 4) << name;
  }
  const isa::TargetInfo target = isa::target_from_config(config);
  int invalid = 0;
  for (std::size_t i = 0; i < r.compiled.program.instructions.size() && invalid < 3; ++i) {
    const auto problem = isa::validate(r.compiled.program.instructions[i], target);
    if (problem) {
      ++invalid;
      ADD_FAILURE() << "instruction " << i << ": " << problem->message;
    }
  }
  // Bytes: simulated DMA traffic = what codegen requested = the scheduler's prediction, class
  // by class (weights, requant tables, activations read, activations written).
  const auto& predicted = r.scheduled.schedule.traffic;
  const auto& code = r.compiled.traffic;
  EXPECT_EQ(r.sim_weights_read(), code.weights_read + code.requant_table_read);
  EXPECT_EQ(r.sim_activations_read(), code.activations_read);
  EXPECT_EQ(r.sim_activations_written(), code.activations_written);
  EXPECT_EQ(code.weights_read, predicted.weights_read);
  EXPECT_EQ(code.requant_table_read, predicted.requant_tables_read);
  EXPECT_EQ(code.activations_read, predicted.activations_read);
  EXPECT_EQ(code.activations_written, predicted.activations_written);
  // Instruction fetch: the pipeline fills the schedule's in from the program (issue 35 item 6).
  EXPECT_EQ(r.sim_instructions_read(), r.scheduled.schedule.instruction_fetch_bytes.value_or(-1));
  std::printf("%s: cycles simulated %llu, predicted %lld (x%.3f); %.2f s sim\n", r.policy.c_str(),
              static_cast<unsigned long long>(r.report.cycles),
              static_cast<long long>(r.scheduled.schedule.cycles), cycle_ratio(r),
              r.simulate_seconds);
}

}  // namespace tessel::e2e
