// Progress reporting for a sweep: a redrawn bar with rate and ETA on a terminal, plain lines else.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace tessel::sweep {

/// Counts of a running sweep, for progress lines.
struct ProgressCounts {
  std::size_t done = 0;  ///< points evaluated in this run (ok + invalid + errors)
  std::size_t ok = 0;
  std::size_t invalid = 0;
  std::size_t errors = 0;
};

/// Renders progress. Not thread-safe: the runner calls it under its own lock.
class ProgressReporter {
 public:
  /// `terminal`: redraw one bar line in place ('\r') at most every 100 ms; otherwise print a
  /// plain line at most every `plain_interval`. `total` is the number of points to evaluate.
  ProgressReporter(std::ostream& out, bool terminal, std::size_t total,
                   std::chrono::milliseconds plain_interval = std::chrono::seconds(5));

  void update(const ProgressCounts& counts);
  /// Prints the final line (always, even when throttled) and ends a terminal bar with '\n'.
  void finish(const ProgressCounts& counts);

  /// "12/80 (15%) 3.2 pt/s ETA 0:21 [ok 11, invalid 1]" — the text both styles share.
  static std::string status_text(const ProgressCounts& counts, std::size_t total,
                                 double elapsed_seconds);

 private:
  void render(const ProgressCounts& counts, bool final_line);

  std::ostream& out_;
  bool terminal_;
  std::size_t total_;
  std::chrono::milliseconds plain_interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_render_;
};

}  // namespace tessel::sweep
