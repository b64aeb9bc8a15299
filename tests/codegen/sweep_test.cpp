// Weight sweeps lowered (docs/codegen.md, "Weight sweeps"): bit exact, bytes equal the schedule.
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

// Replaces the whole schedule by one weight-sweep group of every op, each conv in `slices`
// output-channel slices; the independent checker must accept it.
std::function<void(sched::ScheduledNet&)> one_sweep(const HwConfig& config, int64_t slices) {
  return [&config, slices](sched::ScheduledNet& s) {
    const sched::Machine machine = sched::machine_from_config(config);
    const std::vector<int> ops = sched::schedulable_ops(s.net);
    ASSERT_TRUE(sched::is_weight_sweep_group(s.net, ops));
    sched::Mapping m;
    m.weights_resident = false;
    m.double_buffered = true;
    m.weight_sweep = true;
    for (int op : ops) m.op_slices.push_back(s.net.op(op).kind == sched::OpKind::Conv ? slices : 0);
    auto g = sched::evaluate_mapping(s.net, machine, ops, m, sched::PlanOptions{});
    ASSERT_TRUE(g.ok()) << g.reason();
    s.schedule.groups = {g.value()};
    sched::finalize_schedule(s.net, machine, s.schedule);
    const Status checked = sched::check_schedule(s.net, machine, s.schedule);
    ASSERT_TRUE(checked.ok()) << checked.reason();
  };
}

// tiny_residual (conv-relu-conv + skip add + relu, 4 channels) as one sweep, each conv in 1, 2
// and 4 slices: the add writes over the network input's buffer in place.
TEST(WeightSweepCodegen, tiny_residual_one_sweep_is_bit_exact_with_exact_bytes) {
  auto built = zoo::build_model("tiny_residual");
  ASSERT_TRUE(built.ok()) << built.reason();
  for (const char* name : {"edge-small", "npc19-deepfusion", "vta-pynq"}) {
    const HwConfig config = load_hw_config(config_path(name));
    for (int64_t slices : {1, 2, 4}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(slices) + " slices");
      sched::ScheduledNet scheduled;
      expect_end_to_end(built.value(), config, "optimal", nullptr, &scheduled, {},
                        one_sweep(config, slices));
      ASSERT_EQ(scheduled.schedule.groups.size(), 1u);
      EXPECT_TRUE(scheduled.schedule.groups[0].weight_sweep);
    }
  }
}

// `optimal` with sweeps on: whatever it picks compiles, runs bit exact and moves the bytes it
// predicted.
TEST(WeightSweepCodegen, optimal_with_sweeps_is_bit_exact_on_tiny_nets) {
  sched::MapSpaceFeatures features;
  features.weight_sweep = true;
  for (const char* model : {"tiny_residual", "tiny_conv"}) {
    auto built = zoo::build_model(model);
    ASSERT_TRUE(built.ok()) << built.reason();
    for (const char* name : {"edge-small", "npc19-deepfusion"}) {
      SCOPED_TRACE(std::string(model) + " on " + name);
      expect_end_to_end(built.value(), load_hw_config(config_path(name)), "optimal", nullptr,
                        nullptr, features);
    }
  }
}

}  // namespace
}  // namespace tessel::codegen
