// Cross-group weight prefetch lowered: bit exact, bytes equal, the simulator overlaps it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/policy.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

// Replaces the schedule by two one-tile resident groups, [conv1] and [conv2, add], the second
// prefetched (or not) during the first; the checker must accept it.
std::function<void(sched::ScheduledNet&)> two_groups(const HwConfig& config, bool prefetch) {
  return [&config, prefetch](sched::ScheduledNet& s) {
    const sched::Machine machine = sched::machine_from_config(config);
    const std::vector<int> ops = sched::schedulable_ops(s.net);
    // conv1 (relu1 folded), conv2, add (its relu folded); BN folded
    ASSERT_EQ(ops.size(), 3u);
    const std::vector<int> first_ops(ops.begin(), ops.begin() + 1);
    const std::vector<int> second_ops(ops.begin() + 1, ops.end());
    auto first = sched::evaluate_mapping(s.net, machine, first_ops, {}, {});
    auto second = sched::evaluate_mapping(s.net, machine, second_ops, {}, {});
    ASSERT_TRUE(first.ok() && second.ok());
    if (prefetch) {
      second = sched::plan_prefetched(s.net, machine, first.value(), second.value(), {});
      ASSERT_TRUE(second.ok()) << second.reason();
    }
    s.schedule.groups = {first.value(), second.value()};
    sched::finalize_schedule(s.net, machine, s.schedule);
    const Status checked = sched::check_schedule(s.net, machine, s.schedule);
    ASSERT_TRUE(checked.ok()) << checked.reason();
  };
}

// tiny_residual in two groups: with the second group's weights prefetched the program is bit
// exact, moves the same bytes, and runs faster in the simulator, by no more than the prologue
// the scheduler hid.
TEST(PrefetchCodegen, tiny_residual_two_groups_prefetched_is_bit_exact_and_faster) {
  auto built = zoo::build_model("tiny_residual");
  ASSERT_TRUE(built.ok()) << built.reason();
  for (const char* name : {"edge-small", "npc19-deepfusion"}) {
    SCOPED_TRACE(name);
    const HwConfig config = load_hw_config(config_path(name));
    sched::ScheduledNet serial, prefetched;
    CompiledProgram serial_code, prefetched_code;
    std::uint64_t serial_cycles = 0, prefetched_cycles = 0;
    expect_end_to_end(built.value(), config, "optimal", &serial_code, &serial, {},
                      two_groups(config, false), &serial_cycles);
    expect_end_to_end(built.value(), config, "optimal", &prefetched_code, &prefetched, {},
                      two_groups(config, true), &prefetched_cycles);
    ASSERT_EQ(prefetched.schedule.groups.size(), 2u);
    const sched::GroupSchedule& g = prefetched.schedule.groups[1];
    EXPECT_TRUE(g.prefetched);
    // The same instructions, the second group's weight loads moved into the first's range.
    EXPECT_EQ(prefetched_code.program.instructions.size(), serial_code.program.instructions.size());
    ASSERT_EQ(prefetched_code.groups.size(), 2u);
    EXPECT_EQ(prefetched_code.groups[0].prefetch_instructions, 3);  // weights, bias, table
    EXPECT_EQ(prefetched_code.groups[0].end_instruction, serial_code.groups[0].end_instruction + 3);
    EXPECT_EQ(prefetched_code.groups[1].first_instruction,
              prefetched_code.groups[0].end_instruction);
    // Predicted: the hidden prologue; simulated: at least that much faster (the model counts
    // the weights, bias and table as one DMA, paying the DRAM latency once: the simulator pays
    // it three times, so the serial prologue it hides is longer).
    const int64_t hidden = g.prologue_weight_cycles - g.prefetch_wait_cycles;
    EXPECT_GT(hidden, 0);
    EXPECT_EQ(prefetched.schedule.cycles + hidden, serial.schedule.cycles);
    EXPECT_GE(serial_cycles, prefetched_cycles + static_cast<std::uint64_t>(hidden));
    std::printf("prefetch on %s: predicted -%lld cycles, simulated -%llu\n", name,
                static_cast<long long>(hidden),
                static_cast<unsigned long long>(serial_cycles - prefetched_cycles));
  }
}

// `optimal` with prefetch on: whatever it picks compiles, runs bit exact and moves the bytes it
// predicted.
TEST(PrefetchCodegen, optimal_with_prefetch_is_bit_exact_on_tiny_nets) {
  sched::MapSpaceFeatures features;
  features.prefetch = true;
  for (const char* model : {"tiny_residual", "tiny_conv", "tiny_inception"}) {
    auto built = zoo::build_model(model);
    ASSERT_TRUE(built.ok()) << built.reason();
    for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
      SCOPED_TRACE(std::string(model) + " on " + name);
      expect_end_to_end(built.value(), load_hw_config(config_path(name)), "optimal", nullptr,
                        nullptr, features);
    }
  }
}

}  // namespace
}  // namespace tessel::codegen
