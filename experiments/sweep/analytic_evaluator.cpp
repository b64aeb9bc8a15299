// Analytic mode: schedule_graph per point, models built once and shared across threads.
#include "experiments/sweep/analytic_evaluator.hpp"

#include <map>

#include "compiler/zoo/load_model.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/policy.hpp"
#include "support/diagnostic.hpp"

namespace tessel::sweep {
namespace {

class AnalyticEvaluator final : public PointEvaluator {
 public:
  AnalyticEvaluator(std::map<std::string, ir::Graph> graphs, sched::Objective objective)
      : graphs_(std::move(graphs)), objective_(objective) {}

  Evaluation evaluate(const SweepPoint& point) override {
    const HwConfig& hw = *point.config->hw;
    auto scheduled = sched::schedule_graph(graphs_.at(point.model), hw, point.policy, objective_);
    if (!scheduled.ok()) return Evaluation::invalid(scheduled.reason());
    const sched::Schedule& s = scheduled.value().schedule;
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
    figures["macs"] = s.macs;
    figures["cycles"] = s.cycles;
    figures["roofline_cycles"] = s.roofline_cycles;
    figures["latency_ms"] = static_cast<double>(s.cycles) / cycles_per_ms;
    figures["roofline_latency_ms"] = static_cast<double>(s.roofline_cycles) / cycles_per_ms;
    figures["onchip_bytes"] = onchip_bytes;
    figures["onchip_capacity_bytes"] = hw.total_onchip_bytes();
    figures["dram_bandwidth_gbps"] = hw.dram.bandwidth_bytes_per_second / 1e9;
    figures["groups"] = s.groups.size();
    return Evaluation::ok(std::move(figures));
  }

 private:
  const std::map<std::string, ir::Graph> graphs_;
  const sched::Objective objective_;
};

}  // namespace

Result<std::unique_ptr<PointEvaluator>> make_analytic_evaluator(const SweepSpec& spec) {
  auto objective = sched::parse_objective(spec.objective);
  if (!objective.ok()) return fail("objective: " + objective.reason());
  for (const std::string& policy : spec.policies) {
    auto found = sched::find_policy(policy);
    if (!found.ok()) return fail("policies: " + found.reason());
  }
  std::map<std::string, ir::Graph> graphs;
  for (const std::string& model : spec.models) {
    zoo::LoadOptions load;
    load.zoo.with_weights = false;  // scheduling needs shapes only
    try {
      graphs.emplace(model, zoo::load_model(model, load));
    } catch (const InputError& e) {
      return fail("models: " + std::string(e.what()));
    }
  }
  return std::unique_ptr<PointEvaluator>(
      std::make_unique<AnalyticEvaluator>(std::move(graphs), objective.value()));
}

}  // namespace tessel::sweep
