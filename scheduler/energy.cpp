// Predicted energy of a schedule from the actions its groups count.
#include "scheduler/energy.hpp"

#include <algorithm>

#include "scheduler/energy_counts.hpp"
#include "scheduler/machine.hpp"

namespace tessel::sched {

namespace {

void add(ActionCounts& to, const ActionCounts& c) {
  to.macs += c.macs;
  to.sram_read_bytes.resize(std::max(to.sram_read_bytes.size(), c.sram_read_bytes.size()), 0);
  to.sram_write_bytes.resize(std::max(to.sram_write_bytes.size(), c.sram_write_bytes.size()), 0);
  for (size_t i = 0; i < c.sram_read_bytes.size(); ++i)
    to.sram_read_bytes[i] += c.sram_read_bytes[i];
  for (size_t i = 0; i < c.sram_write_bytes.size(); ++i)
    to.sram_write_bytes[i] += c.sram_write_bytes[i];
  static_cast<VectorCounts&>(to) += c;
  to.dram_bytes += c.dram_bytes;
}

}  // namespace

ScheduleEnergy predict_energy(const std::vector<GroupSchedule>& groups, int64_t cycles,
                              std::optional<int64_t> fetch_bytes, const Net& net,
                              const Machine& machine) {
  const EnergyTable& table = *machine.energy;
  const size_t scratchpads = table.scratchpads.size();
  ScheduleEnergy out;
  out.counts.sram_read_bytes.assign(scratchpads, 0);
  out.counts.sram_write_bytes.assign(scratchpads, 0);
  for (const auto& g : groups) {
    ActionCounts counts = count_group_actions(net, machine, g, scratchpads);
    counts.cycles = static_cast<std::uint64_t>(g.cycles);
    out.groups.push_back(energy_of(table, counts, machine.clock_mhz));
    add(out.counts, counts);
    out.group_counts.push_back(std::move(counts));
  }
  // The schedule's own totals: its cycles, and the program's instruction fetch, which no group
  // owns.
  out.counts.cycles = static_cast<std::uint64_t>(cycles);
  if (fetch_bytes) out.counts.dram_bytes += static_cast<std::uint64_t>(*fetch_bytes);
  out.instruction_fetch_bytes = fetch_bytes;
  out.total = energy_of(table, out.counts, machine.clock_mhz);
  for (const auto& g : groups) {
    for (int op : g.ops) {
      const OpKind kind = net.op(op).kind;
      if (counts_kind(kind)) continue;
      const std::string name = to_string(kind);
      if (std::find(out.unmodelled_kinds.begin(), out.unmodelled_kinds.end(), name) ==
          out.unmodelled_kinds.end())
        out.unmodelled_kinds.push_back(name);
    }
  }
  std::sort(out.unmodelled_kinds.begin(), out.unmodelled_kinds.end());
  return out;
}

ScheduleEnergy predict_energy(const Schedule& schedule, const Net& net, const HwConfig& config) {
  return predict_energy(schedule.groups, schedule.cycles, schedule.instruction_fetch_bytes, net,
                        machine_from_config(config));
}

void add_predicted_energy(nlohmann::ordered_json& j, const ScheduleEnergy& energy,
                          const HwConfig& config) {
  const EnergyBreakdown& e = energy.total;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& g : energy.groups) groups.push_back(g.total_pj());
  nlohmann::ordered_json by_sp = nlohmann::ordered_json::object();
  nlohmann::ordered_json reads = nlohmann::ordered_json::object();
  nlohmann::ordered_json writes = nlohmann::ordered_json::object();
  for (size_t i = 0; i < config.scratchpads.size(); ++i) {
    const std::string& name = config.scratchpads[i].name;
    by_sp[name] = i < e.sram_pj_by_scratchpad.size() ? e.sram_pj_by_scratchpad[i] : 0.0;
    reads[name] = i < energy.counts.sram_read_bytes.size() ? energy.counts.sram_read_bytes[i] : 0;
    writes[name] =
        i < energy.counts.sram_write_bytes.size() ? energy.counts.sram_write_bytes[i] : 0;
  }
  j["predicted_energy_pj"] = {
      {"mac", e.mac_pj},       {"sram", e.sram_pj}, {"sram_by_scratchpad", by_sp},
      {"vector", e.vector_pj}, {"dram", e.dram_pj}, {"leakage", e.leakage_pj},
      {"total", e.total_pj()}, {"by_group", groups}};
  if (!energy.unmodelled_kinds.empty())
    j["predicted_energy_unmodelled_kinds"] = energy.unmodelled_kinds;
  // Instruction fetch is the program's: known once code generation has made it (tessel run,
  // tessel compile), not to `tessel schedule` (docs/energy.md, "Instruction fetch").
  if (energy.instruction_fetch_bytes)
    j["predicted_energy_pj"]["instruction_fetch"] =
        static_cast<double>(*energy.instruction_fetch_bytes) *
        energy_table(config).dram_pj_per_byte;
  else
    j["predicted_energy_pj"]["not_counted"] = {
        "instruction fetch (DRAM): no program, and the schedule predicts none "
        "(sched::predict_instructions)"};
  const ActionCounts& c = energy.counts;
  j["predicted_counts"] = {
      {"mac_slots", c.macs}, {"sram_read_bytes", reads}, {"sram_write_bytes", writes}};
  // Every vector count, the ones no op of the schedule uses 0 (code generation emits no `reduce`
  // yet).
  c.for_each([&](const char* name, std::uint64_t n) { j["predicted_counts"][name] = n; });
  j["predicted_counts"]["dram_bytes"] = c.dram_bytes;
  j["predicted_counts"]["cycles"] = c.cycles;
  if (energy.instruction_fetch_bytes)
    j["predicted_counts"]["instruction_fetch_bytes"] = *energy.instruction_fetch_bytes;
  j["predicted_edp_pj_s"] = e.edp_pj_s();
  j["area_mm2"] = e.area_mm2;
}

}  // namespace tessel::sched
