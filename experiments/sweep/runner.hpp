// run_sweep: evaluates a spec's pending points on a thread pool and appends them to a JSONL file.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/sweep/evaluator.hpp"
#include "experiments/sweep/spec.hpp"
#include "support/cancel.hpp"
#include "support/result.hpp"

namespace tessel::sweep {

/// Shard `index` of `count` holds the points whose index % count == index (round robin, so
/// every shard gets a similar mix of models and policies).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
  bool contains(const SweepPoint& point) const { return point.index % count == index; }
};

/// Parses "I/N" (0 <= I < N).
Result<Shard> parse_shard(const std::string& text);

struct RunOptions {
  std::filesystem::path out;                ///< the JSONL results file (created, or resumed)
  unsigned jobs = 0;                        ///< worker threads; 0 = one per hardware thread
  std::optional<Shard> shard;               ///< evaluate only this shard's points
  const std::atomic<bool>* stop = nullptr;  ///< when set, start no new point; finish in-flight
  /// When set, every worker evaluates under it (support/cancel.hpp): once requested, the
  /// points in flight stop inside their schedule/compile/simulation, and a point that returns
  /// after the request is not recorded or counted (a rerun evaluates it). Request `stop` too.
  const CancelToken* cancel = nullptr;
  std::ostream* log = nullptr;  ///< progress and notices; null = silent
  bool terminal = false;        ///< progress as a redrawn bar (log is a TTY)
  std::chrono::milliseconds progress_interval = std::chrono::seconds(5);  ///< plain lines
  std::chrono::milliseconds sync_interval = std::chrono::seconds(1);      ///< fdatasync period
};

struct RunSummary {
  std::size_t selected = 0;      ///< points in the spec (or shard)
  std::size_t already_done = 0;  ///< skipped: their id was in the results file
  std::size_t ok = 0;
  std::size_t invalid = 0;
  std::size_t errors = 0;                  ///< not recorded; a rerun retries them
  std::vector<std::string> error_reasons;  ///< the first few, for the report
  std::size_t torn_bytes_dropped = 0;
  bool interrupted = false;  ///< stopped by `stop` before every point was evaluated
  double wall_seconds = 0;   ///< from the first point started to the last line synced
  /// Summed over threads: time inside PointEvaluator::evaluate. wall_seconds * jobs minus this
  /// is the runner's own share (queue, results line, append, progress, idle at the end).
  double evaluate_seconds = 0;
  unsigned jobs = 0;  ///< worker threads used
  std::size_t remaining() const { return selected - already_done - ok - invalid; }
};

/// Evaluates the points of `spec` (or of options.shard) whose id is not yet in options.out,
/// with options.jobs threads calling `evaluator` (which must then be thread-safe), appending
/// one line per ok/invalid point as it completes. Fails only when the results file cannot be
/// opened, recovered or written; point failures are counted in the summary.
Result<RunSummary> run_sweep(const SweepSpec& spec, PointEvaluator& evaluator,
                             const RunOptions& options);

/// The results line of one evaluated point (compact JSON, no newline): id, point, spec, model,
/// policy, mode, objective, axes, config_hash, status, figures or reason, tool_version.
std::string results_line(const SweepSpec& spec, const SweepPoint& point,
                         const Evaluation& evaluation);

}  // namespace tessel::sweep
