// Analytic mode: the scheduler per point on a Net built once per (model, form, element widths).
#include "experiments/sweep/analytic_evaluator.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>

#include "compiler/zoo/load_model.hpp"
#include "experiments/sweep/config_override.hpp"
#include "experiments/sweep/zoo_options.hpp"
#include "hw/fpga/bram_map.hpp"
#include "scheduler/bytes_bound.hpp"
#include "scheduler/checker.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/energy.hpp"
#include "scheduler/from_ir.hpp"
#include "scheduler/policy.hpp"
#include "support/diagnostic.hpp"

namespace tessel::sweep {

nlohmann::ordered_json schedule_figures(const sched::Schedule& s, const sched::Net& net,
                                        const HwConfig& hw) {
  std::int64_t onchip_bytes = 0;  // the largest on-chip footprint of any group
  for (const sched::GroupSchedule& group : s.groups) {
    std::int64_t group_bytes = 0;
    for (const std::int64_t peak : group.peak_bytes) group_bytes += peak;
    onchip_bytes = std::max(onchip_bytes, group_bytes);
  }
  const double cycles_per_ms = hw.clock_mhz * 1e3;
  nlohmann::ordered_json figures;
  figures["dram_bytes"] = {{"read", s.traffic.read()},
                           {"write", s.traffic.write()},
                           {"total", s.traffic.total()},
                           {"weights_read", s.traffic.weights_read},
                           {"activations_read", s.traffic.activations_read},
                           {"activations_written", s.traffic.activations_written}};
  figures["compulsory_bytes"] = s.compulsory_bytes;
  // No schedule of this net moves fewer bytes at this capacity (docs/scheduler.md, "Lower
  // bounds: DRAM bytes per capacity"); the ski-slope plot draws it.
  figures["bound_bytes"] = sched::bytes_lower_bound(net, sched::machine_from_config(hw)).bytes;
  figures["macs"] = s.macs;
  figures["cycles"] = s.cycles;
  figures["roofline_cycles"] = s.roofline_cycles;
  figures["lower_bound_cycles"] = s.lower_bound_cycles;
  figures["latency_ms"] = static_cast<double>(s.cycles) / cycles_per_ms;
  figures["roofline_latency_ms"] = static_cast<double>(s.roofline_cycles) / cycles_per_ms;
  figures["onchip_bytes"] = onchip_bytes;
  figures["onchip_capacity_bytes"] = hw.total_onchip_bytes();
  figures["dram_bandwidth_gbps"] = hw.dram.bandwidth_bytes_per_second / 1e9;
  // What a long stream of bursts moves under the DRAM model: below the bandwidth when the
  // point's outstanding requests do not cover the round trip (docs/config.md, "Sustained DRAM
  // rate"); a bandwidth sweep is flat above it.
  figures["dram_sustained_gbps"] = hw.dram_sustained_bytes_per_cycle() * hw.clock_mhz / 1e3;
  figures["groups"] = s.groups.size();
  // An area axis: the block-RAM tiles of the RTL's scratchpads on a 7-series FPGA (hw/fpga
  // rtl_bram(): two copies of the banks; the count Yosys gives for edge-small), null where the
  // RTL cannot be built for the config.
  auto bram = fpga::rtl_bram(hw);
  figures["fpga_brams"] = bram.ok() ? nlohmann::ordered_json(bram.value().bram36) : nullptr;
  // Energy, EDP and area (docs/energy.md): the schedule's prediction from its counted actions
  // (the simulator's counts agree within 1% on the zoo matrix); `tessel plot` takes any of them
  // on an axis and draws energy_pj by component (--kind energy-breakdown).
  const sched::ScheduleEnergy energy = sched::predict_energy(s, net, hw);
  const EnergyBreakdown& e = energy.total;
  figures["energy_pj"] = {{"mac", e.mac_pj},   {"sram", e.sram_pj},       {"vector", e.vector_pj},
                          {"dram", e.dram_pj}, {"leakage", e.leakage_pj}, {"total", e.total_pj()}};
  figures["energy_uj"] = e.total_pj() * 1e-6;
  figures["edp_pj_s"] = e.edp_pj_s();
  figures["area_mm2"] = e.area_mm2;
  return figures;
}

namespace {

using Clock = std::chrono::steady_clock;

class AnalyticEvaluator final : public PointEvaluator {
 public:
  AnalyticEvaluator(std::map<std::string, ir::Graph> graphs, sched::MapSpaceFeatures features,
                    bool check)
      : graphs_(std::move(graphs)), features_(features), check_(check) {}

  Evaluation evaluate(const SweepPoint& point) override {
    const HwConfig& hw = *point.config->hw;
    auto start = Clock::now();
    const sched::Machine machine = sched::machine_from_config(hw);
    auto policy = sched::find_policy(point.policy);
    if (!policy.ok()) return Evaluation::invalid(policy.reason());
    auto net = this->net(point.model, machine, policy.value()->form);
    if (!net.ok()) return Evaluation::invalid(net.reason());
    phase_ns_[kNet] += nanoseconds_since(start);

    // The spec checked the point's objective (validate_scheduled_spec).
    const auto objective = sched::parse_objective(point.objective);
    if (!objective.ok()) return Evaluation::invalid("objective: " + objective.reason());
    start = Clock::now();
    auto schedule =
        sched::run_policy(*net.value(), machine, point.policy, objective.value(), features_);
    phase_ns_[kPolicy] += nanoseconds_since(start);
    if (!schedule.ok()) return Evaluation::invalid(schedule.reason());

    if (check_) {
      start = Clock::now();
      const Status checked = sched::check_schedule(*net.value(), machine, schedule.value());
      phase_ns_[kCheck] += nanoseconds_since(start);
      // As schedule_graph does: a schedule the independent checker rejects is not a result.
      if (!checked.ok()) {
        return Evaluation::invalid("schedule failed the allocation checker: " + checked.reason());
      }
    }
    start = Clock::now();
    Evaluation result = Evaluation::ok(schedule_figures(schedule.value(), *net.value(), hw));
    phase_ns_[kFigures] += nanoseconds_since(start);
    ++points_;
    return result;
  }

  std::string timing_report() const override {
    const std::int64_t points = points_.load();
    if (points == 0) return {};
    const auto ms = [&](int phase) { return static_cast<double>(phase_ns_[phase]) / 1e6 / points; };
    char text[256];
    std::snprintf(text, sizeof text,
                  "analytic, per scheduled point: net lookup %.3f ms, policy (search + cost "
                  "model) %.2f ms, checker %.2f ms, figures %.3f ms",
                  ms(kNet), ms(kPolicy), ms(kCheck), ms(kFigures));
    return text;
  }

 private:
  enum Phase { kNet, kPolicy, kCheck, kFigures, kPhases };

  /// The policy's form of `model` for the machine's element widths, built on first use and
  /// shared read-only by every thread afterwards (Net depends on nothing else of the machine).
  Result<std::shared_ptr<const sched::Net>> net(const std::string& model,
                                                const sched::Machine& machine,
                                                sched::NetForm form) {
    const auto key = std::make_tuple(model, static_cast<int>(form), machine.activation_bytes,
                                     machine.weight_bytes);
    std::lock_guard lock(nets_mutex_);
    auto found = nets_.find(key);
    if (found == nets_.end()) {
      auto built = sched::net_from_graph(graphs_.at(model), machine, form, features_);
      if (!built.ok()) return built.failure();
      found =
          nets_.emplace(key, std::make_shared<const sched::Net>(std::move(built).value())).first;
    }
    return found->second;
  }

  const std::map<std::string, ir::Graph> graphs_;
  const sched::MapSpaceFeatures features_;
  const bool check_;
  std::mutex nets_mutex_;
  std::map<std::tuple<std::string, int, std::int64_t, std::int64_t>,
           std::shared_ptr<const sched::Net>>
      nets_;
  std::atomic<std::int64_t> phase_ns_[kPhases] = {};
  std::atomic<std::int64_t> points_{0};
};

}  // namespace

sched::MapSpaceFeatures features_of(const SweepSpec& spec) {
  sched::MapSpaceFeatures features;
  features.column_tiles_every_row = spec.tiles_2d;
  return features;
}

Result<bool> validate_scheduled_spec(const SweepSpec& spec, const std::string& mode,
                                     const std::string& flag, bool fallback) {
  for (const std::string& name : spec.objectives) {
    auto objective = sched::parse_objective(name);
    if (!objective.ok()) return fail("objectives: " + objective.reason());
  }
  for (const std::string& policy : spec.policies) {
    auto found = sched::find_policy(policy);
    if (!found.ok()) return fail("policies: " + found.reason());
  }
  bool value = fallback;
  if (spec.options && !spec.options.IsNull()) {
    if (!spec.options.IsMap()) return fail(mode + ": expected a mapping of options");
    for (const auto& entry : spec.options) {
      const std::string key = entry.first.as<std::string>();
      const nlohmann::json option = scalar_json(entry.second);
      if (key != flag || !option.is_boolean())
        return fail(mode + "." + key + ": unknown option or bad value (" + flag + ": true|false)");
      value = option.get<bool>();
    }
  }
  return value;
}

Result<std::unique_ptr<PointEvaluator>> make_analytic_evaluator(const SweepSpec& spec) {
  auto check = validate_scheduled_spec(spec, "analytic", "check", true);
  if (!check.ok()) return fail(check.reason());
  std::map<std::string, ir::Graph> graphs;
  for (const std::string& model : spec.models) {
    zoo::LoadOptions load = zoo_load_options(spec.model_sources.at(model));
    load.zoo.with_weights = false;  // scheduling needs shapes only
    try {
      graphs.emplace(model, zoo::load_model(spec.model_sources.at(model).source, load));
    } catch (const InputError& e) {
      return fail("models: " + std::string(e.what()));
    }
  }
  return std::unique_ptr<PointEvaluator>(
      std::make_unique<AnalyticEvaluator>(std::move(graphs), features_of(spec), check.value()));
}

}  // namespace tessel::sweep
