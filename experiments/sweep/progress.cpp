// Progress bar (terminal) and periodic plain lines (logs, Slurm) with rate and ETA.
#include "experiments/sweep/progress.hpp"

#include <cmath>
#include <cstdio>

namespace tessel::sweep {
namespace {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long total = std::lround(seconds);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", total / 60, total % 60);
  }
  return text;
}

}  // namespace

ProgressReporter::ProgressReporter(std::ostream& out, bool terminal, std::size_t total,
                                   std::chrono::milliseconds plain_interval)
    : out_(out),
      terminal_(terminal),
      total_(total),
      plain_interval_(plain_interval),
      start_(std::chrono::steady_clock::now()),
      last_render_(start_) {}

std::string ProgressReporter::status_text(const ProgressCounts& counts, std::size_t total,
                                          double elapsed_seconds) {
  const double rate = elapsed_seconds > 0 ? static_cast<double>(counts.done) / elapsed_seconds : 0;
  const double percent =
      total ? 100.0 * static_cast<double>(counts.done) / static_cast<double>(total) : 100.0;
  const double eta = rate > 0 ? static_cast<double>(total - counts.done) / rate : -1;
  char text[160];
  std::snprintf(text, sizeof text, "%zu/%zu (%.0f%%) %.1f pt/s ETA %s [ok %zu, invalid %zu%s]",
                counts.done, total, percent, rate, format_duration(eta).c_str(), counts.ok,
                counts.invalid,
                counts.errors ? (", errors " + std::to_string(counts.errors)).c_str() : "");
  return text;
}

void ProgressReporter::update(const ProgressCounts& counts) {
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(100) : plain_interval_;
  if (now - last_render_ < interval) return;
  render(counts, false);
}

void ProgressReporter::finish(const ProgressCounts& counts) {
  render(counts, true);
}

void ProgressReporter::render(const ProgressCounts& counts, bool final_line) {
  last_render_ = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(last_render_ - start_).count();
  const std::string status = status_text(counts, total_, elapsed);
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * counts.done / total_) : kWidth;
    out_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
         << std::string(static_cast<std::size_t>(kWidth - filled), '.') << "] " << status
         << "\x1b[K";
    if (final_line) out_ << '\n';
  } else {
    out_ << "sweep: " << status << '\n';
  }
  out_.flush();
}

}  // namespace tessel::sweep
