// The evaluators by mode, and the subprocess wrapper for evaluators that are not thread-safe.
#include "experiments/sweep/evaluator.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>

#include "experiments/sweep/synthetic_evaluator.hpp"
#ifdef TESSEL_SWEEP_HAVE_SCHEDULER
#include "experiments/sweep/analytic_evaluator.hpp"
#endif
#ifdef TESSEL_SWEEP_HAVE_SIM
#include "experiments/sweep/sim_evaluator.hpp"
#endif

extern char** environ;

namespace tessel::sweep {
namespace {

/// Stands in for a mode whose pipeline is not part of this build: every point is invalid with
/// the same reason, so a sweep still completes and says exactly what is missing.
class UnavailableEvaluator final : public PointEvaluator {
 public:
  explicit UnavailableEvaluator(std::string reason) : reason_(std::move(reason)) {}
  Evaluation evaluate(const SweepPoint&) override { return Evaluation::invalid(reason_); }

 private:
  std::string reason_;
};

}  // namespace

const char* to_string(Evaluation::Status status) {
  switch (status) {
    case Evaluation::Status::ok:
      return "ok";
    case Evaluation::Status::invalid:
      return "invalid";
    case Evaluation::Status::error:
      return "error";
  }
  return "error";
}

Evaluation evaluate_point(PointEvaluator& evaluator, const SweepPoint& point) {
  if (!point.config->hw) return Evaluation::invalid(point.config->hw_invalid_reason);
  return evaluator.evaluate(point);
}

Result<std::unique_ptr<PointEvaluator>> make_evaluator(const SweepSpec& spec) {
  if (spec.mode == "synthetic") return make_synthetic_evaluator(spec);
  if (spec.mode == "analytic") {
#ifdef TESSEL_SWEEP_HAVE_SCHEDULER
    return make_analytic_evaluator(spec);
#else
    return std::unique_ptr<PointEvaluator>(std::make_unique<UnavailableEvaluator>(
        "analytic mode needs the scheduler (not built yet)"));
#endif
  }
  if (spec.mode == "sim") {
#ifdef TESSEL_SWEEP_HAVE_SIM
    return make_sim_evaluator(spec);
#else
    return std::unique_ptr<PointEvaluator>(std::make_unique<UnavailableEvaluator>(
        "sim mode needs the compile pipeline and the simulator (not built)"));
#endif
  }
  return fail("no evaluator for mode '" + spec.mode + "'");
}

nlohmann::ordered_json evaluation_to_json(const Evaluation& evaluation) {
  nlohmann::ordered_json reply = {{"status", to_string(evaluation.status)}};
  if (evaluation.status == Evaluation::Status::ok) {
    reply["figures"] = evaluation.figures;
  } else {
    reply["reason"] = evaluation.reason;
  }
  return reply;
}

Evaluation evaluation_from_json(const std::string& text) {
  const auto reply = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object() || !reply.contains("status") || !reply["status"].is_string()) {
    return Evaluation::error("worker reply is not an evaluation: '" + text.substr(0, 200) + "'");
  }
  const std::string status = reply["status"];
  if (status == "ok" && reply.contains("figures")) return Evaluation::ok(reply["figures"]);
  const std::string reason = reply.value("reason", std::string("(no reason given)"));
  if (status == "invalid") return Evaluation::invalid(reason);
  return Evaluation::error(reason);
}

SubprocessEvaluator::SubprocessEvaluator(std::filesystem::path tessel_executable,
                                         const SweepSpec& spec, const std::atomic<bool>* stop)
    : tessel_(std::move(tessel_executable)), spec_file_(spec.file), stop_(stop) {}

Evaluation SubprocessEvaluator::evaluate(const SweepPoint& point) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return Evaluation::error(std::string("pipe: ") + std::strerror(errno));

  std::vector<std::string> args = {tessel_.string(),    "sweep",   "point",
                                   spec_file_.string(), "--index", std::to_string(point.index)};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // own group: a terminal Ctrl-C spares the child

  pid_t child = 0;
  const int spawned =
      posix_spawn(&child, tessel_.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return Evaluation::error("cannot start " + tessel_.string() + ": " + std::strerror(spawned));
  }

  std::string reply;
  char buffer[4096];
  bool stopped = false;
  auto stop_requested_at = std::chrono::steady_clock::time_point::max();
  for (;;) {
    // Wake every 100 ms to see whether the sweep was asked to stop.
    pollfd watched{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&watched, 1, 100);
    if (stop_ && stop_->load()) {
      const auto now = std::chrono::steady_clock::now();
      if (!stopped) {
        stopped = true;
        stop_requested_at = now;
        kill(-child, SIGTERM);  // the worker's own process group
      } else if (now - stop_requested_at > std::chrono::seconds(2)) {
        kill(-child, SIGKILL);
      }
    }
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    const ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
    if (got > 0) {
      reply.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int wait_status = 0;
  while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (stopped)
    return Evaluation::error("stopped before point " + std::to_string(point.index) +
                             " finished (not recorded; a resumed sweep runs it again)");
  if (WIFSIGNALED(wait_status)) {
    return Evaluation::error("worker for point " + std::to_string(point.index) +
                             " died of signal " + std::to_string(WTERMSIG(wait_status)));
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    return Evaluation::error("worker for point " + std::to_string(point.index) + " exited with " +
                             std::to_string(WEXITSTATUS(wait_status)));
  }
  while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r')) reply.pop_back();
  return evaluation_from_json(reply);
}

}  // namespace tessel::sweep
