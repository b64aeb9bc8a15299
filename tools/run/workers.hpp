// Forked worker processes: run independent tasks of one process in parallel children, since a
// SystemC simulation (sim/) is one per process at a time and not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tessel::pipeline {

/// What one task's child process gave back.
struct WorkerOutcome {
  bool ok = false;
  std::string reply;  ///< the task's return value when ok
  std::string error;  ///< why not ok: the exception's message, an exit status or a signal
};

/// Runs `task(i)` for every i < `count` in forked child processes, at most `jobs` at a time, and
/// returns their outcomes in task order. Each child starts as a copy of the caller (so it sees
/// everything prepared before the call), runs one task, sends its returned text back through a
/// pipe and exits; nothing it changes reaches the caller. A task that throws, or a child that
/// dies (a signal) or exits without finishing, gives `ok = false` and says so in `error`.
///
/// Constraints: POSIX only. A child must not use what does not survive fork() in the caller's
/// state, notably OpenMP (libgomp's thread pool is not re-created in a child). stdout and stderr
/// are flushed before each fork; children write to them unbuffered-by-line as usual.
std::vector<WorkerOutcome> run_in_workers(std::size_t count, std::size_t jobs,
                                          const std::function<std::string(std::size_t)>& task);

/// The number of online processors (at least 1): the default of `--jobs`.
std::size_t available_cores();

}  // namespace tessel::pipeline
