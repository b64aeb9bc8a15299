// Activation folding lowered (docs/scheduler.md "Activation folding"): a ReLU or ReLU6 folded
// into its producer's requantize or add clamp gives the golden executor's integers bit for bit
// (the executor runs the activation as an op of its own), with no vector pass of its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "support/int_ops.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen::activation_fold_test {
namespace {

using test::config_path;
using test::expect_end_to_end;

// The clamps a program applies: the vcfg in force at each requant, each add with a second
// operand (mult_b != 0) and each one-operand clamp (an add with mult_a = 1, mult_b = 0: a
// ReLU or Clip run as a vector pass, docs/codegen.md).
struct Clamps {
  std::vector<isa::Vcfg> requant, add;
  std::set<std::pair<std::int32_t, std::int32_t>> unary;  // their [lo, hi]
};

Clamps clamps_of(const isa::Program& program) {
  Clamps out;
  isa::Vcfg cfg;
  for (const isa::Instruction& instruction : program.instructions) {
    if (const auto* v = std::get_if<isa::Vcfg>(&instruction)) cfg = *v;
    if (std::holds_alternative<isa::Requant>(instruction)) out.requant.push_back(cfg);
    if (std::holds_alternative<isa::Add>(instruction)) {
      if (cfg.mult_b != 0) out.add.push_back(cfg);
      if (cfg.mult_a == 1 && cfg.mult_b == 0 && cfg.shift == 0) out.unary.insert({cfg.lo, cfg.hi});
    }
  }
  return out;
}

struct Case {
  std::string model;
  std::string config;
  int folded;  // activations the net folds
};

TEST(ActivationFolding, folded_programs_are_bit_exact_and_clamp_in_the_producer) {
  const std::vector<Case> cases = {
      {"tiny_conv", "npc19-deepfusion", 1},       // conv -> ReLU (int16)
      {"tiny_residual", "edge-small", 2},         // conv -> BN -> ReLU; add -> ReLU (int8)
      {"tiny_depthwise", "edge-small", 1},        // depthwise -> BN -> ReLU6 (a Clip)
      {"tiny_depthwise", "npc19-deepfusion", 1},  // the same in int16
  };
  for (const Case& c : cases) {
    for (const char* policy : {"opfusion", "optimal"}) {
      SCOPED_TRACE(c.model + " on " + c.config + ", " + policy);
      auto built = zoo::build_model(c.model);
      ASSERT_TRUE(built.ok()) << built.reason();
      const HwConfig config = load_hw_config(config_path(c.config));
      const int bits = config.matrix.input_bits;
      sched::MapSpaceFeatures off;
      off.fold_activations = false;
      CompiledProgram folded_code, unfolded_code;
      sched::ScheduledNet folded, unfolded;
      std::uint64_t folded_cycles = 0, unfolded_cycles = 0;
      // Both bit exact against the golden executor, bytes as scheduled (the helper checks).
      expect_end_to_end(built.value(), config, policy, &folded_code, &folded, {}, nullptr,
                        &folded_cycles);
      expect_end_to_end(built.value(), config, policy, &unfolded_code, &unfolded, off, nullptr,
                        &unfolded_cycles);
      EXPECT_EQ(folded.net.size(), unfolded.net.size() - c.folded);
      EXPECT_TRUE(folded.schedule.features.fold_activations);
      EXPECT_FALSE(unfolded.schedule.features.fold_activations);

      const Clamps with = clamps_of(folded_code.program);
      const Clamps without = clamps_of(unfolded_code.program);
      // Unfolded, every activation is a one-operand clamp pass and every requantize and add
      // clamps to the whole type; folded, no such pass is left, and the producers' clamps are
      // exactly those passes' ranges ([0, qmax] for a ReLU, [0, round(6 / s)] capped at qmax
      // for a ReLU6).
      EXPECT_FALSE(without.unary.empty());
      EXPECT_TRUE(with.unary.empty());
      for (const auto* list : {&without.requant, &without.add})
        for (const isa::Vcfg& v : *list) {
          EXPECT_EQ(v.lo, intops::qmin(bits));
          EXPECT_EQ(v.hi, intops::qmax(bits));
        }
      std::set<std::pair<std::int32_t, std::int32_t>> folded_ranges;
      for (const auto* list : {&with.requant, &with.add})
        for (const isa::Vcfg& v : *list)
          if (v.lo != intops::qmin(bits) || v.hi != intops::qmax(bits))
            folded_ranges.insert({v.lo, v.hi});
      EXPECT_EQ(folded_ranges, without.unary);
      // Fewer instructions (each pass was a vcfg and an add per tile) and fewer cycles, in
      // the simulator as in the schedule.
      EXPECT_LT(folded_code.program.instructions.size(), unfolded_code.program.instructions.size());
      EXPECT_LT(folded_cycles, unfolded_cycles);
      EXPECT_LT(folded.schedule.cycles, unfolded.schedule.cycles);
    }
  }
}

}  // namespace
}  // namespace tessel::codegen::activation_fold_test
