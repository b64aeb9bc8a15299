// Deterministic fake figures derived from the point id; the sweep machinery's test fixture.
#include "experiments/sweep/synthetic_evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>

#include "experiments/sweep/config_override.hpp"
#include "support/cancel.hpp"

namespace tessel::sweep {
namespace {

class SyntheticEvaluator final : public PointEvaluator {
 public:
  SyntheticEvaluator(int delay_ms, std::int64_t invalid_every, bool thread_safe)
      : delay_ms_(delay_ms), invalid_every_(invalid_every), thread_safe_(thread_safe) {}

  bool thread_safe() const override { return thread_safe_; }

  Evaluation evaluate(const SweepPoint& point) override {
    // The delay stands in for a long computation: it polls the cancel token every 10 ms, as
    // the scheduler and the simulator do (support/cancel.hpp), so a stopped sweep ends soon.
    for (int slept = 0; slept < delay_ms_; slept += 10) {
      if (cancel_requested()) return Evaluation::error(kCancelledReason);
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10, delay_ms_ - slept)));
    }
    if (invalid_every_ > 0 && (point.index + 1) % static_cast<std::size_t>(invalid_every_) == 0) {
      return Evaluation::invalid("synthetic: every " + std::to_string(invalid_every_) +
                                 "th point is invalid by construction");
    }
    // Made-up but well-shaped: traffic above the compulsory bound falls as the buffer grows
    // (a "ski slope" per policy), latency follows a roofline of the real config's figures.
    const HwConfig& hw = *point.config->hw;
    const std::uint64_t model_hash = std::stoull(stable_hash_hex(point.model), nullptr, 16);
    const std::uint64_t policy_hash = std::stoull(stable_hash_hex(point.policy), nullptr, 16);
    const double macs = 1e9 * static_cast<double>(1 + model_hash % 4);
    const double compulsory = 2e7 * static_cast<double>(1 + model_hash % 3);
    const double working_set = std::ldexp(1.0, 18 + static_cast<int>(policy_hash % 6));
    const double onchip = static_cast<double>(hw.total_onchip_bytes());
    const double extra = compulsory * static_cast<double>(2 + policy_hash % 5) * working_set /
                         (working_set + onchip);
    const auto total = static_cast<std::uint64_t>(compulsory + extra);
    const auto read = static_cast<std::uint64_t>(0.9 * compulsory + 0.6 * extra);
    const double compute_cycles = macs / static_cast<double>(hw.macs_per_cycle());
    const double bytes_per_cycle = hw.dram_bytes_per_cycle();
    const auto roofline =
        static_cast<std::uint64_t>(std::max(compute_cycles, compulsory / bytes_per_cycle));
    const auto cycles = static_cast<std::uint64_t>(
        1.1 * std::max(compute_cycles, static_cast<double>(total) / bytes_per_cycle));
    nlohmann::ordered_json figures;
    figures["dram_bytes"] = {{"read", read}, {"write", total - read}, {"total", total}};
    figures["compulsory_bytes"] = static_cast<std::uint64_t>(compulsory);
    figures["macs"] = static_cast<std::uint64_t>(macs);
    figures["cycles"] = cycles;
    figures["roofline_cycles"] = roofline;
    figures["latency_ms"] = static_cast<double>(cycles) / (hw.clock_mhz * 1e3);
    figures["onchip_bytes"] =
        std::min(hw.total_onchip_bytes(), static_cast<std::int64_t>(2 * working_set));
    figures["onchip_capacity_bytes"] = hw.total_onchip_bytes();
    figures["dram_bandwidth_gbps"] = hw.dram.bandwidth_bytes_per_second / 1e9;
    return Evaluation::ok(std::move(figures));
  }

 private:
  int delay_ms_;
  std::int64_t invalid_every_;
  bool thread_safe_;
};

}  // namespace

Result<std::unique_ptr<PointEvaluator>> make_synthetic_evaluator(const SweepSpec& spec) {
  int delay_ms = 0;
  std::int64_t invalid_every = 0;
  bool thread_safe = true;
  if (spec.options && !spec.options.IsNull()) {
    if (!spec.options.IsMap()) return fail("synthetic: expected a mapping of options");
    for (const auto& entry : spec.options) {
      const std::string key = entry.first.as<std::string>();
      const nlohmann::json value = scalar_json(entry.second);
      if (key == "delay_ms" && value.is_number_integer() && value.get<int>() >= 0) {
        delay_ms = value.get<int>();
      } else if (key == "invalid_every" && value.is_number_integer() && value.get<int>() >= 0) {
        invalid_every = value.get<std::int64_t>();
      } else if (key == "thread_safe" && value.is_boolean()) {
        thread_safe = value.get<bool>();
      } else {
        return fail("synthetic." + key +
                    ": unknown option or bad value (delay_ms: N >= 0, invalid_every: K >= 0, "
                    "thread_safe: true|false)");
      }
    }
  }
  return std::unique_ptr<PointEvaluator>(
      std::make_unique<SyntheticEvaluator>(delay_ms, invalid_every, thread_safe));
}

}  // namespace tessel::sweep
