// `tessel sweep`, `tessel sweep collect` and `tessel sweep point` (the per-point worker).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "experiments/sweep/evaluator.hpp"
#include "experiments/sweep/runner.hpp"
#include "experiments/sweep/slurm.hpp"
#include "experiments/sweep/spec.hpp"
#include "support/cli.hpp"
#include "support/json_text.hpp"

namespace tessel::sweep {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
// In-process points poll it (support/cancel.hpp): a lock-free atomic store, signal-safe.
CancelToken g_cancel;

extern "C" void request_stop(int) {
  g_stop.store(true);
  g_cancel.request();
}

/// First SIGINT/SIGTERM: stop taking points, exit 130 (points in worker processes are
/// stopped at once, in-process ones get StopDeadline's grace). A second SIGINT kills at once
/// (SA_RESETHAND); the results file stays consistent either way.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

/// An in-process point (analytic, sim) stops at its next poll of g_cancel (the scheduler's
/// group search, codegen's groups, the simulator's cycle loop), but a step that is not polled
/// can still run long. Once a stop is requested, the sweep gets `grace` to finish; past it the
/// process ends at once with exit code 130, without recording the points still running. That is
/// safe: every recorded line was appended by one write() (whole, or a torn tail the next open cuts
/// away), and the ids not recorded are evaluated again on resume.
class StopDeadline {
 public:
  explicit StopDeadline(std::chrono::milliseconds grace)
      : thread_([this, grace] { watch(grace); }) {}
  ~StopDeadline() {
    done_.store(true);
    thread_.join();
  }
  StopDeadline(const StopDeadline&) = delete;
  StopDeadline& operator=(const StopDeadline&) = delete;

 private:
  void watch(std::chrono::milliseconds grace) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kPoll = std::chrono::milliseconds(50);
    while (!done_.load() && !g_stop.load()) std::this_thread::sleep_for(kPoll);
    const auto deadline = Clock::now() + grace;
    while (!done_.load() && Clock::now() < deadline) std::this_thread::sleep_for(kPoll);
    if (done_.load()) return;
    std::fputs(
        "sweep: stopped; the points still running were not recorded (rerun the same "
        "command to resume)\n",
        stderr);
    std::_Exit(130);
  }

  std::atomic<bool> done_{false};
  std::thread thread_;
};

fs::path self_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path("tessel") : self;
}

struct SweepArgs {
  std::string spec;
  std::string out;
  unsigned jobs = 0;
  std::string shard;
  bool list = false;
  std::string backend = "local";
  std::size_t shards = 0;
  unsigned cpus_per_task = 1;
  std::vector<std::string> sbatch_options;
  bool dry_run = false;
};

int print_points(const SweepSpec& spec) {
  for (const SweepPoint& point : spec.points) {
    std::cout << point.index << ' ' << point.id << ' ' << point.model << ' ' << point.policy << ' '
              << tessel::json_text(point.config->axes, -1) << '\n';
  }
  std::cerr << spec.points.size() << " points\n";
  return 0;
}

int run_slurm(const SweepSpec& spec, const SweepArgs& args) {
  SlurmOptions options;
  options.dir = args.out;
  options.shards = args.shards;
  options.tessel = self_executable();
  options.cpus_per_task = args.cpus_per_task;
  options.sbatch_options = args.sbatch_options;
  options.dry_run = args.dry_run;
  if (options.shards == 0) {
    std::cerr << "error: --backend slurm needs --shards N\n";
    return 1;
  }
  auto report = submit_slurm(spec, options);
  if (!report.ok()) {
    std::cerr << "error: " << report.reason() << '\n';
    return 1;
  }
  if (report.value().submitted_shards.empty()) {
    std::cout << "all " << options.shards
              << " shards are complete; merge them with: tessel sweep collect " << args.out
              << " --out R.jsonl\n";
    return 0;
  }
  std::cout << "wrote " << report.value().script.string() << " ("
            << report.value().submitted_shards.size() << " of " << options.shards << " shards)\n";
  if (!report.value().job_id.empty())
    std::cout << "submitted job " << report.value().job_id << '\n';
  return 0;
}

int run_local(const SweepSpec& spec, const SweepArgs& args) {
  if (args.out.empty()) {
    std::cerr << "error: --out R.jsonl is required\n";
    return 1;
  }
  auto made = make_evaluator(spec);
  if (!made.ok()) {
    std::cerr << spec.file.string() << ": error: " << made.reason() << '\n';
    return 1;
  }
  std::unique_ptr<PointEvaluator> evaluator = std::move(made.value());
  if (!evaluator->thread_safe())
    evaluator = std::make_unique<SubprocessEvaluator>(self_executable(), spec, &g_stop);

  RunOptions options;
  options.out = args.out;
  options.jobs = args.jobs;
  if (!args.shard.empty()) {
    auto shard = parse_shard(args.shard);
    if (!shard.ok()) {
      std::cerr << "error: --shard: " << shard.reason() << '\n';
      return 1;
    }
    options.shard = shard.value();
  }
  options.stop = &g_stop;
  options.cancel = &g_cancel;
  options.log = &std::cerr;
  options.terminal = isatty(STDERR_FILENO) != 0;
  install_stop_handlers();

  auto summary = [&] {
    const StopDeadline deadline(std::chrono::seconds(2));
    return run_sweep(spec, *evaluator, options);
  }();
  if (!summary.ok()) {
    std::cerr << "error: " << summary.reason() << '\n';
    return 1;
  }
  const RunSummary& s = summary.value();
  std::cerr << "sweep: " << s.selected << " points: " << s.already_done << " already done, " << s.ok
            << " ok, " << s.invalid << " invalid";
  if (s.errors) std::cerr << ", " << s.errors << " failed (not recorded; a rerun retries them)";
  std::cerr << " -> " << args.out << '\n';
  const std::size_t evaluated = s.ok + s.invalid + s.errors;
  if (evaluated > 0 && s.wall_seconds > 0) {
    // Throughput and where it went: evaluator time vs the runner's own per-point cost.
    const double per_point_ms = s.evaluate_seconds * 1e3 / static_cast<double>(evaluated);
    const double runner_ms = std::max(0.0, s.wall_seconds * s.jobs - s.evaluate_seconds) * 1e3 /
                             static_cast<double>(evaluated);
    char line[256];
    std::snprintf(line, sizeof line,
                  "sweep: %zu points in %.2f s on %u threads = %.0f points/min; evaluation "
                  "%.2f ms/point per thread, runner %.3f ms/point per thread",
                  evaluated, s.wall_seconds, s.jobs, evaluated * 60.0 / s.wall_seconds,
                  per_point_ms, runner_ms);
    std::cerr << line << '\n';
    if (const std::string timing = evaluator->timing_report(); !timing.empty())
      std::cerr << "sweep: " << timing << '\n';
  }
  for (const std::string& reason : s.error_reasons) std::cerr << "  " << reason << '\n';
  // A stop request is an interruption even when every point was already taken: the points it
  // stopped in flight are errors that were not recorded.
  if (s.interrupted || g_stop.load()) {
    std::cerr << "sweep: interrupted; " << s.remaining()
              << " points left; rerun the same command to resume\n";
    return 130;
  }
  return s.errors ? 1 : 0;
}

cli::Runner setup_sweep(CLI::App& command) {
  auto args = std::make_shared<SweepArgs>();
  command.add_option("spec", args->spec, "Sweep spec (YAML)");
  command.add_option("--out,-o", args->out,
                     "Results file (JSONL; resumed if present), or the shard directory for slurm");
  command.add_option("-j,--jobs", args->jobs, "Parallel evaluations (default: all cores)");
  command.add_option("--shard", args->shard,
                     "Evaluate only shard I/N (points with index % N == I)");
  command.add_flag("--list", args->list,
                   "Print the enumerated points (index id model policy axes)");
  command.add_option("--backend", args->backend, "local (thread pool) or slurm (array job)")
      ->check(CLI::IsMember({"local", "slurm"}));
  command.add_option("--shards", args->shards, "slurm: number of array tasks (shards)");
  command.add_option("--cpus-per-task", args->cpus_per_task, "slurm: cores (and -j) per task");
  command.add_option("--sbatch-option", args->sbatch_options,
                     "slurm: extra #SBATCH option, e.g. --partition=debug (repeatable)");
  command.add_flag("--dry-run", args->dry_run, "slurm: write the array script, do not submit");
  return [args]() -> int {
    if (args->spec.empty()) {
      std::cerr << "error: a sweep spec is required: tessel sweep SPEC.yaml --out R.jsonl\n";
      return 1;
    }
    const SweepSpec spec = load_spec(args->spec);
    if (args->list) return print_points(spec);
    if (args->backend == "slurm") {
      if (args->out.empty()) {
        std::cerr << "error: --backend slurm needs --out DIR\n";
        return 1;
      }
      return run_slurm(spec, *args);
    }
    return run_local(spec, *args);
  };
}

cli::Runner setup_collect(CLI::App& command) {
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  command.add_option("dir", *dir, "Shard directory written by --backend slurm")->required();
  command.add_option("--out,-o", *out, "Merged results file (JSONL)")->required();
  return [dir, out]() -> int {
    auto report = collect_shards(*dir, *out);
    if (!report.ok()) {
      std::cerr << "error: " << report.reason() << '\n';
      return 1;
    }
    const CollectReport& r = report.value();
    std::cout << "merged " << r.merged << " of " << r.points << " points into " << *out << '\n';
    for (const ShardState& shard : r.incomplete) {
      std::cout << "shard " << shard.index << ": "
                << (shard.file_exists
                        ? std::to_string(shard.done) + " of " + std::to_string(shard.expected) +
                              " points (failed or still running)"
                        : "missing (0 of " + std::to_string(shard.expected) + " points)")
                << '\n';
    }
    if (!r.incomplete.empty()) {
      std::cout << r.incomplete.size()
                << " shards incomplete; rerun the same `tessel sweep --backend slurm` command to "
                   "resubmit only those\n";
      return 1;
    }
    return 0;
  };
}

cli::Runner setup_point(CLI::App& command) {
  auto spec_file = std::make_shared<std::string>();
  auto index = std::make_shared<std::size_t>(0);
  command.add_option("spec", *spec_file, "Sweep spec (YAML)")->required();
  command.add_option("--index", *index, "Point index (as in --list)")->required();
  return [spec_file, index]() -> int {
    const SweepSpec spec = load_spec(*spec_file);
    if (*index >= spec.points.size()) {
      std::cerr << "error: --index " << *index << " is out of range (" << spec.points.size()
                << " points)\n";
      return 1;
    }
    auto evaluator = make_evaluator(spec);
    if (!evaluator.ok()) {
      std::cerr << "error: " << evaluator.reason() << '\n';
      return 1;
    }
    std::cout << tessel::json_text(
                     evaluation_to_json(evaluate_point(*evaluator.value(), spec.points[*index])),
                     -1)
              << '\n';
    return 0;
  };
}

const cli::Registration kSweep{
    {"sweep", "Run a design-space sweep (resumable JSONL; local pool or Slurm array)",
     setup_sweep}};
const cli::Registration kCollect{
    {"sweep collect", "Merge the shards of a Slurm sweep; report missing or failed shards",
     setup_collect}};
const cli::Registration kPoint{
    {"sweep point", "Evaluate one point of a spec and print its JSON (the per-point worker)",
     setup_point}};

}  // namespace
}  // namespace tessel::sweep
