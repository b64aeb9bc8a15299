// PointEvaluator: evaluates one design point to figures, or says why the point is invalid.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/sweep/spec.hpp"
#include "support/result.hpp"

namespace tessel::sweep {

/// The outcome of evaluating one point.
///  - ok: `figures` holds the measured numbers (see docs/sweep.md for the names);
///  - invalid: the design point cannot work (buffer too small for one tile, config rejected by
///    the validator, mode not available); recorded in the results with `reason`;
///  - error: the evaluation itself failed (a crashed worker); not recorded, so a rerun retries it.
struct Evaluation {
  enum class Status { ok, invalid, error };
  Status status = Status::error;
  nlohmann::ordered_json figures;
  std::string reason;

  static Evaluation ok(nlohmann::ordered_json figures) {
    return {Status::ok, std::move(figures), {}};
  }
  static Evaluation invalid(std::string reason) { return {Status::invalid, {}, std::move(reason)}; }
  static Evaluation error(std::string reason) { return {Status::error, {}, std::move(reason)}; }
};

/// "ok", "invalid" or "error".
const char* to_string(Evaluation::Status status);

/// Evaluates design points of one spec. The runner calls `evaluate` from several threads at once
/// when `thread_safe()`; otherwise it runs the evaluator behind a SubprocessEvaluator, one
/// `tessel sweep point` process per point.
class PointEvaluator {
 public:
  virtual ~PointEvaluator() = default;
  virtual Evaluation evaluate(const SweepPoint& point) = 0;
  virtual bool thread_safe() const { return true; }
  /// Where this evaluator's time went so far, one line (e.g. per-phase ms per point), or
  /// empty. Printed at the end of a sweep to attribute throughput.
  virtual std::string timing_report() const { return {}; }
};

/// Nanoseconds of the steady clock since `start`: the evaluators' per-phase timings.
inline std::int64_t nanoseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

/// Evaluates `point` with `evaluator`, except for a point whose hw config the validator
/// rejected: that one is invalid with the validator's reason, and the evaluator is not called.
Evaluation evaluate_point(PointEvaluator& evaluator, const SweepPoint& point);

/// The in-process evaluator for `spec.mode`: analytic (scheduler cost model), sim (compile +
/// cycle simulation) or synthetic (a deterministic test fixture, see README). Fails when the
/// mode's options in the spec are wrong.
Result<std::unique_ptr<PointEvaluator>> make_evaluator(const SweepSpec& spec);

/// Evaluates each point in a fresh `TESSEL sweep point SPEC --index I` process (for evaluators
/// that are not thread-safe, such as the SystemC simulator). The child runs in its own process
/// group, so a terminal's Ctrl-C reaches only the runner, which lets in-flight points finish.
/// A child that crashes or prints no valid reply is an `error` evaluation.
class SubprocessEvaluator final : public PointEvaluator {
 public:
  /// `stop` (optional): once it reads true, a running worker's process group gets SIGTERM
  /// (SIGKILL 2 s later) and the point ends as an error, which is not recorded, so a resumed
  /// sweep runs it again: SIGTERM/SIGINT stop a sweep within about a second, not after the
  /// points in flight.
  SubprocessEvaluator(std::filesystem::path tessel_executable, const SweepSpec& spec,
                      const std::atomic<bool>* stop = nullptr);
  Evaluation evaluate(const SweepPoint& point) override;

 private:
  std::filesystem::path tessel_;
  std::filesystem::path spec_file_;
  const std::atomic<bool>* stop_ = nullptr;
};

/// The reply a `tessel sweep point` child prints (one JSON object) and its parser.
nlohmann::ordered_json evaluation_to_json(const Evaluation& evaluation);
Evaluation evaluation_from_json(const std::string& text);

}  // namespace tessel::sweep
