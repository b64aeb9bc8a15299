// Predicted energy of a schedule from its counted MACs, DRAM bytes and cycles.
#include "scheduler/energy.hpp"

namespace tessel::sched {

ScheduleEnergy predict_energy(const Schedule& schedule, const HwConfig& config) {
  const EnergyTable table = energy_table(config);
  ScheduleEnergy out;
  ActionCounts all;
  for (const auto& g : schedule.groups) {
    ActionCounts counts;
    counts.macs = static_cast<std::uint64_t>(g.macs);
    counts.dram_bytes = static_cast<std::uint64_t>(g.traffic.total());
    counts.cycles = static_cast<std::uint64_t>(g.cycles);
    out.groups.push_back(energy_of(table, counts, config.clock_mhz));
    all.macs += counts.macs;
    all.dram_bytes += counts.dram_bytes;
  }
  // The schedule's own totals (its cycles include what no single group owns).
  all.cycles = static_cast<std::uint64_t>(schedule.cycles);
  out.total = energy_of(table, all, config.clock_mhz);
  return out;
}

void add_predicted_energy(nlohmann::ordered_json& j, const ScheduleEnergy& energy) {
  const EnergyBreakdown& e = energy.total;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& g : energy.groups) groups.push_back(g.total_pj());
  j["predicted_energy_pj"] = {{"mac", e.mac_pj},         {"dram", e.dram_pj},
                              {"leakage", e.leakage_pj}, {"total", e.total_pj()},
                              {"by_group", groups},      {"not_counted", {"sram", "vector"}}};
  j["predicted_edp_pj_s"] = e.edp_pj_s();
  j["area_mm2"] = e.area_mm2;
}

}  // namespace tessel::sched
