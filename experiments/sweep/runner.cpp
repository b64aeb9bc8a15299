// The local sweep runner: a pool of threads pulling pending points, one appended line per point.
#include "experiments/sweep/runner.hpp"

#include <charconv>
#include <mutex>
#include <thread>

#include "experiments/sweep/progress.hpp"
#include "experiments/sweep/results_file.hpp"
#include "support/json_text.hpp"
#include "support/version.hpp"

namespace tessel::sweep {

Result<Shard> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  const auto number = [](std::string_view digits, std::size_t& value) {
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  };
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), shard.index) ||
      !number(std::string_view(text).substr(slash + 1), shard.count) || shard.count == 0 ||
      shard.index >= shard.count) {
    return fail("bad shard '" + text + "': expected I/N with 0 <= I < N");
  }
  return shard;
}

std::string results_line(const SweepSpec& spec, const SweepPoint& point,
                         const Evaluation& evaluation) {
  nlohmann::ordered_json line;
  line["id"] = point.id;
  line["point"] = point.index;
  line["spec"] = spec.name;
  line["model"] = point.model;
  line["policy"] = point.policy;
  line["mode"] = spec.mode;
  line["objective"] = point.objective;
  line["tiles_2d"] = spec.tiles_2d;
  line["axes"] = point.config->axes;
  line["config_hash"] = point.config->config_hash;
  line["status"] = to_string(evaluation.status);
  if (evaluation.status == Evaluation::Status::ok) {
    line["figures"] = evaluation.figures;
  } else {
    line["reason"] = evaluation.reason;
  }
  line["tool_version"] = version();
  return tessel::json_text(line, -1);
}

Result<RunSummary> run_sweep(const SweepSpec& spec, PointEvaluator& evaluator,
                             const RunOptions& options) {
  auto opened = ResultsFile::open(options.out);
  if (!opened.ok()) return opened.failure();
  ResultsFile& file = opened.value();

  RunSummary summary;
  summary.torn_bytes_dropped = file.torn_bytes_dropped();
  if (options.log && summary.torn_bytes_dropped > 0) {
    *options.log << "sweep: " << options.out.string() << ": dropped a torn last line ("
                 << summary.torn_bytes_dropped << " bytes) left by an interrupted run\n";
  }
  std::vector<const SweepPoint*> pending;
  for (const SweepPoint& point : spec.points) {
    if (options.shard && !options.shard->contains(point)) continue;
    ++summary.selected;
    if (file.completed_ids().count(point.id)) {
      ++summary.already_done;
    } else {
      pending.push_back(&point);
    }
  }
  if (options.log && summary.already_done > 0) {
    *options.log << "sweep: resuming: " << summary.already_done << " of " << summary.selected
                 << " points already in " << options.out.string() << '\n';
  }

  unsigned jobs = options.jobs ? options.jobs : std::max(1U, std::thread::hardware_concurrency());
  jobs =
      static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(pending.size(), 1)));

  std::mutex mutex;  // guards counts, progress, the first write error and the sync clock
  ProgressCounts counts;
  std::optional<ProgressReporter> progress;
  if (options.log)
    progress.emplace(*options.log, options.terminal, pending.size(), options.progress_interval);
  std::optional<Failure> write_failure;
  auto last_sync = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> evaluate_ns{0};
  const auto started = std::chrono::steady_clock::now();

  const auto stopping = [&] {
    return (options.stop && options.stop->load()) ||
           (options.cancel && options.cancel->requested()) || write_failure.has_value();
  };
  const auto work = [&] {
    std::optional<CancelScope> scope;
    if (options.cancel) scope.emplace(*options.cancel);
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (stopping()) return;
      }
      const std::size_t i = next.fetch_add(1);
      if (i >= pending.size()) return;
      const SweepPoint& point = *pending[i];
      const auto evaluate_start = std::chrono::steady_clock::now();
      const Evaluation evaluation = evaluate_point(evaluator, point);
      evaluate_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - evaluate_start)
                         .count();
      // Cancelled in flight: whatever it returned is partial (or a "cancelled" failure).
      if (options.cancel && options.cancel->requested()) return;
      Status written;
      if (evaluation.status != Evaluation::Status::error) {
        written = file.append(results_line(spec, point, evaluation));
      }
      std::lock_guard lock(mutex);
      if (!written.ok()) {
        if (!write_failure) write_failure = written.failure();
        return;
      }
      ++counts.done;
      switch (evaluation.status) {
        case Evaluation::Status::ok:
          ++counts.ok;
          break;
        case Evaluation::Status::invalid:
          ++counts.invalid;
          break;
        case Evaluation::Status::error:
          ++counts.errors;
          if (summary.error_reasons.size() < 5) {
            summary.error_reasons.push_back("point " + std::to_string(point.index) + ": " +
                                            evaluation.reason);
          }
          break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now - last_sync >= options.sync_interval) {
        last_sync = now;
        if (Status synced = file.sync(); !synced.ok() && !write_failure)
          write_failure = synced.failure();
      }
      if (progress) progress->update(counts);
    }
  };

  std::vector<std::thread> workers;
  for (unsigned j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (auto& worker : workers) worker.join();

  if (Status synced = file.sync(); !synced.ok() && !write_failure) write_failure = synced.failure();
  if (progress) progress->finish(counts);
  if (write_failure) return *write_failure;
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.evaluate_seconds = static_cast<double>(evaluate_ns.load()) / 1e9;
  summary.jobs = jobs;
  summary.ok = counts.ok;
  summary.invalid = counts.invalid;
  summary.errors = counts.errors;
  summary.interrupted = counts.done < pending.size();
  return summary;
}

}  // namespace tessel::sweep
