// Weight sweeps on the zoo's ResNets under the latency objective (the zoo matrix and `tessel run`
// use the bytes objective): bit exact, bytes equal the schedule. Label `slow`.
#include <gtest/gtest.h>

#include <string>

#include "compiler/zoo/zoo.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/policy.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

TEST(WeightSweepSlow, resnets_optimal_latency_with_sweeps_are_bit_exact_with_exact_bytes) {
  for (const char* model : {"resnet18", "resnet50"}) {
    SCOPED_TRACE(model);
    auto built = zoo::build_model(model);
    ASSERT_TRUE(built.ok()) << built.reason();
    const HwConfig config = load_hw_config(config_path("npc19-deepfusion"));
    int sweeps = 0;
    // Re-plan the (folded) net with the latency objective; the checker must accept it.
    auto latency = [&](sched::ScheduledNet& s) {
      const sched::Machine machine = sched::machine_from_config(config);
      auto replanned = sched::run_policy(s.net, machine, "optimal", sched::Objective::Latency);
      ASSERT_TRUE(replanned.ok()) << replanned.reason();
      replanned.value().config = s.schedule.config;
      s.schedule = replanned.value();
      const Status checked = sched::check_schedule(s.net, machine, s.schedule);
      ASSERT_TRUE(checked.ok()) << checked.reason();
      for (const auto& g : s.schedule.groups) sweeps += g.weight_sweep ? 1 : 0;
    };
    expect_end_to_end(built.value(), config, "optimal", nullptr, nullptr, {}, latency);
    EXPECT_GE(sweeps, 1);  // the latency schedules of both ResNets contain sweeps
  }
}

}  // namespace
}  // namespace tessel::codegen
