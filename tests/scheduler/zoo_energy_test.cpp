// Issue 37 on the zoo (label `zoo`, outside the default preset; ~10 CPU-minutes): on every zoo
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
#include "tests/support/unit_refusal.hpp"

namespace tessel::sched {
namespace {

TEST(ZooEnergyObjective, optimal_energy_and_edp_are_never_worse_than_bytes_or_latency) {
  int cells = 0, refusals = 0;
  for (const zoo::ModelInfo& info : zoo::models()) {
    if (info.tiny || !info.accelerated) continue;
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // the scheduler reads shapes only
    const ir::Graph graph = zoo::load_model(info.name, load);
    for (const char* name : {"npc19-deepfusion", "vta-pynq", "edge-small", "cloud-large"}) {
      const HwConfig config =
          load_hw_config(std::string(TESSEL_SOURCE_DIR) + "/configs/hw/" + name + ".yaml");
      EnergyBreakdown e[4];
      if (auto s = schedule_graph(graph, config, "layerwise", Objective::Bytes, {});
          !s.ok() && test_support::missing_unit(s.reason(), config)) {
        ++refusals;  // a unit the model needs is missing, and the refusal names it
        continue;
      }
      for (size_t i = 0; i < objectives().size(); ++i) {
        auto s = schedule_graph(graph, config, "optimal", objectives()[i], {});
        ASSERT_TRUE(s.ok()) << info.name << " " << name << ": " << s.reason();
        e[i] = predict_energy(s.value().schedule, s.value().net, config).total;
      }
      const std::string where = info.name + " on " + name;
      EXPECT_LE(e[2].total_pj(), e[0].total_pj()) << where;  // energy vs bytes
      EXPECT_LE(e[2].total_pj(), e[1].total_pj()) << where;  // energy vs latency
      EXPECT_LE(e[3].edp_pj_s(), e[0].edp_pj_s()) << where;
      EXPECT_LE(e[3].edp_pj_s(), e[1].edp_pj_s()) << where;
      EXPECT_LE(e[3].edp_pj_s(), e[2].edp_pj_s()) << where;
      ++cells;
    }
  }
  // Six classic CNNs, ResNeXt-50 and RegNet-X 1.6GF x four configs; MobileNet-v3,
  // EfficientNet-B0, ConvNeXt-Tiny and llama_block on cloud-large only: the other three configs
  // lack the lookup table (or, for llama_block, the row normaliser) and refuse them naming the
  // unit.
  EXPECT_EQ(cells, 8 * 4 + 4);
  EXPECT_EQ(refusals, 4 * 3);
}

}  // namespace
}  // namespace tessel::sched
