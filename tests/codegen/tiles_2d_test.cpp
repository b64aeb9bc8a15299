// 2D tiles (MapSpaceFeatures::column_tiles_every_row, docs/scheduler.md "2D tiles"): tiles of
// several rows and several columns compile and run bit exact, with the DRAM bytes and the
// allocation the scheduler predicted (expect_end_to_end's checks), and the map space has them
// only with the feature on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen.hpp"
#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/plan.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

// 16 x 30 x 30 -> conv 3x3 (16) -> ReLU -> conv 3x3 / 2 (16) -> ReLU: halos in both
// directions, one of them strided.
ir::Graph chain_net() {
  zoo::NetBuilder net("chain30", {});
  std::string x = net.input("input", 16, 30, 30);
  x = net.relu(net.conv(x, "conv1", zoo::conv_spec(16, 3, 1, 1)), "relu1");
  x = net.relu(net.conv(x, "conv2", zoo::conv_spec(16, 3, 2, 1)), "relu2");
  return net.finish({x});
}

TEST(Tiles2d, the_map_space_has_row_and_column_tiles_only_with_the_feature) {
  auto scheduled = sched::schedule_graph(chain_net(), load_hw_config(config_path("edge-small")),
                                         "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(scheduled.ok()) << scheduled.reason();
  const sched::Net& net = scheduled.value().net;
  std::vector<int> ops;
  for (int i = 0; i < net.size(); ++i)
    if (net.op(i).kind != sched::OpKind::Input) ops.push_back(i);
  for (bool on : {false, true}) {
    sched::PlanOptions options;
    options.column_tiles_every_row = on;
    int both = 0;
    for (const sched::Mapping& m : sched::enumerate_mappings(net, ops, options))
      both += m.row_tiles > 1 && m.row_tiles < 15 && m.col_tiles > 1 ? 1 : 0;
    if (on) {
      EXPECT_GT(both, 0);
    } else {
      EXPECT_EQ(both, 0);  // columns split only with one-row tiles (15 rows out)
    }
  }
}

TEST(Tiles2d, row_and_column_tiles_are_bit_exact_with_the_predicted_bytes) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  const sched::Machine machine = sched::machine_from_config(config);
  // The whole net as one group in tiles of 3 x 2 and 5 x 4 (output rows x columns), each halo
  // mode the map space allows with columns split (recompute), single and double buffered.
  for (const sched::Mapping& mapping :
       {sched::Mapping{3, 2, 1, sched::HaloMode::Recompute, true, false},
        sched::Mapping{5, 4, 1, sched::HaloMode::Recompute, true, true}}) {
    SCOPED_TRACE(std::to_string(mapping.row_tiles) + " x " + std::to_string(mapping.col_tiles));
    sched::ScheduledNet scheduled;
    expect_end_to_end(
        chain_net(), config, "optimal", nullptr, &scheduled, {}, [&](sched::ScheduledNet& s) {
          std::vector<int> ops;
          for (const auto& g : s.schedule.groups) ops.insert(ops.end(), g.ops.begin(), g.ops.end());
          auto group = sched::evaluate_mapping(s.net, machine, ops, mapping, sched::PlanOptions{});
          ASSERT_TRUE(group.ok()) << group.reason();
          s.schedule.groups = {group.value()};
          sched::finalize_schedule(s.net, machine, s.schedule);
        });
    ASSERT_EQ(scheduled.schedule.groups.size(), 1U);
    EXPECT_EQ(scheduled.schedule.groups[0].row_tiles, mapping.row_tiles);
    EXPECT_EQ(scheduled.schedule.groups[0].col_tiles, mapping.col_tiles);
  }
}

}  // namespace
}  // namespace tessel::codegen
