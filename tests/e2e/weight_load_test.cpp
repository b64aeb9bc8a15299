// matrix.weight_load_rows (docs/timing.md "conv"): a design whose array loads Kw rows of a held
// block a cycle. One decode step (tiny_decode on cloud-large, every Linear and both attention
// MatMuls a GEMV bound by the block load) runs bit exact with the bytes as scheduled under
// every policy; the simulated compute engine is busy exactly the sum of the timing contract's
// costs of the program's instructions with W = ceil(128 / Kw), and the same program shape
// with Kw = 16 costs fewer compute cycles than with one row a cycle.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compiler/zoo/zoo.hpp"
#include "isa/hw_target.hpp"
#include "isa/timing.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e::weight_load_test {
namespace {

// The compute engine's instructions' costs by the contract.
std::uint64_t contract_compute_cycles(const isa::Program& program, const HwConfig& config) {
  const isa::timing::ComputeParams params = isa::compute_params_from_config(config);
  std::uint64_t cycles = 0;
  for (const auto& instruction : program.instructions)
    if (isa::engine_of(instruction) == isa::Engine::kCompute)
      cycles += static_cast<std::uint64_t>(isa::timing::compute_cycles(instruction, params));
  return cycles;
}

TEST(WeightLoadRows, a_decode_step_on_a_wider_load_path_is_exact_and_loads_blocks_in_w_cycles) {
  const HwConfig narrow = load_hw_config(config_path("cloud-large"));
  HwConfig wide = narrow;
  wide.matrix.weight_load_rows = 16;
  for_every_policy(zoo::build_model("tiny_decode").value(), wide,
                   [&](const char*, const pipeline::PolicyResult& r) {
                     const isa::Program& program = r.compiled.program;
                     const std::uint64_t busy = r.report.engines[1].busy_cycles;  // "compute"
                     EXPECT_EQ(busy, contract_compute_cycles(program, wide));
                     // The same instructions with one row a cycle: every matrix instruction's W is
                     // 128, not 8.
                     std::uint64_t matrix_instructions = 0;
                     for (const auto& instruction : program.instructions)
                       matrix_instructions += std::holds_alternative<isa::Conv>(instruction) ||
                                              std::holds_alternative<isa::Matmul>(instruction);
                     EXPECT_GT(matrix_instructions, 0u);
                     EXPECT_GE(contract_compute_cycles(program, narrow),
                               busy + matrix_instructions * 2 * (128 - 8));
                   });
}

}  // namespace
}  // namespace tessel::e2e::weight_load_test
