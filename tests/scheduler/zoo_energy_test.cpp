// Issue 37 on the zoo (label `zoo`, outside the default preset; ~5 CPU-minutes): on every zoo
// model x shipped config, `optimal`'s energy schedule is never worse in predicted energy than its
// bytes and latency schedules, and its edp schedule never worse in E x T than those three,
// compared exactly as `tessel schedule` reports them (docs/energy.md, "Optimising energy").
#include <gtest/gtest.h>

#include <string>

#include "compiler/zoo/load_model.hpp"
#include "compiler/zoo/zoo.hpp"
#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"

namespace tessel::sched {
namespace {

TEST(ZooEnergyObjective, optimal_energy_and_edp_are_never_worse_than_bytes_or_latency) {
  int cells = 0;
  for (const zoo::ModelInfo& info : zoo::models()) {
    if (info.tiny || !info.accelerated) continue;
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // the scheduler reads shapes only
    const ir::Graph graph = zoo::load_model(info.name, load);
    for (const char* name : {"npc19-deepfusion", "vta-pynq", "edge-small", "cloud-large"}) {
      const HwConfig config =
          load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml");
      EnergyBreakdown e[4];
      bool refused = false;
      for (size_t i = 0; i < objectives().size(); ++i) {
        auto s = schedule_graph(graph, config, "optimal", objectives()[i], {});
        if (!s.ok() &&
            s.reason().find("config '" + config.name + "' has none") != std::string::npos) {
          refused = true;  // a unit the model needs is missing (MobileNet-v3 on edge-small)
          break;
        }
        ASSERT_TRUE(s.ok()) << info.name << " " << name << ": " << s.reason();
        e[i] = predict_energy(s.value().schedule, s.value().net, config).total;
      }
      if (refused) continue;
      const std::string where = info.name + " on " + name;
      EXPECT_LE(e[2].total_pj(), e[0].total_pj()) << where;  // energy vs bytes
      EXPECT_LE(e[2].total_pj(), e[1].total_pj()) << where;  // energy vs latency
      EXPECT_LE(e[3].edp_pj_s(), e[0].edp_pj_s()) << where;
      EXPECT_LE(e[3].edp_pj_s(), e[1].edp_pj_s()) << where;
      EXPECT_LE(e[3].edp_pj_s(), e[2].edp_pj_s()) << where;
      ++cells;
    }
  }
  // Six classic models x four configs, ResNeXt-50 on all four, MobileNet-v3, EfficientNet and
  // ConvNeXt on cloud-large only (the others lack the lookup table).
  EXPECT_EQ(cells, 31);
}

}  // namespace
}  // namespace tessel::sched
