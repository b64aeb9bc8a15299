// SplitRunner: one helper thread that shares a split loop with the calling thread, chunk by
// chunk from the two ends (the datapath's second thread for its large instructions).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace tessel::sim {

/// One spin-wait step (x86 `pause`; nothing elsewhere): for loops that poll another thread.
void cpu_relax();

/// Whether the caller's next job runs with the helper: the measuring cycle of SplitRunner, apart
/// from the threads and the clock (its tests drive it with made-up window times).
///
/// Two threads do not always pay: a helper without a core of its own (a loaded machine) takes
/// few chunks, and jobs of a few microseconds whose data the other core wrote run ~1.4-1.6x
/// slower per element there (each cache line crosses between the cores; bench/e2e/README.md
/// "Session 7: two threads with AMX"). So the caller measures: a window of kWindowJobs jobs
/// with the helper, then one on the caller alone, each timed from its first job's start to
/// its last job's end (the work between the jobs included, where the other core's writes are
/// read back); the next kDecidedJobs jobs run with the helper only if its window took a chunk
/// in at least kMinHelpedJobs jobs and was the faster (while they run alone, the helper sleeps);
/// then it measures again. Each decision against the helper doubles the decided jobs (up to
/// kMaxDecidedJobs), one for it sets them back to kDecidedJobs.
class HelperPolicy {
 public:
  using Duration = std::chrono::steady_clock::duration;
  static constexpr int kWindowJobs = 32;
  static constexpr int kMinHelpedJobs = 8;
  static constexpr int kDecidedJobs = 256;
  static constexpr int kMaxDecidedJobs = 8 * kDecidedJobs;

  /// Whether the next job runs with the helper.
  bool helped() const {
    return phase_ == Phase::kProbeHelped || (phase_ == Phase::kDecided && use_helper_);
  }
  /// Whether the next job starts a window (the caller notes the time).
  bool window_starts() const { return window_jobs_ == 0; }
  /// Whether an idle helper should sleep at once: the decided jobs run without it.
  bool parked() const { return phase_ == Phase::kDecided && !use_helper_; }
  /// The length of the current or next decided run of jobs.
  int decided_jobs() const { return decided_jobs_; }

  /// Records a finished job (whether the helper ran a chunk of it); true when it ends a window,
  /// whose time the caller then passes to end_window.
  bool end_job(bool helper_took_chunk);
  /// The time of the window that end_job said ended: from its first job's start to now.
  void end_window(Duration took);

 private:
  enum class Phase { kProbeHelped, kProbeAlone, kDecided };
  Phase phase_ = Phase::kProbeHelped;
  bool use_helper_ = true;           // in Phase::kDecided
  int decided_jobs_ = kDecidedJobs;  // the length of the current Phase::kDecided
  int window_jobs_ = 0, window_helped_ = 0;
  Duration helped_window_{};
};

/// run(count, split, fn) calls fn(begin, end) over disjoint ranges that together cover
/// [0, count), each exactly once, and returns when every call has returned. The work goes in
/// chunks of ceil(split / kChunksPerShare) elements (`split` = the caller's share of an even
/// split, count / 2 say): the caller claims chunks from the front, the helper thread from the
/// back, until they meet. A helper that is late (woken from sleep, or without a core on a
/// loaded machine) takes fewer chunks or none, so two threads are never much slower than one:
/// the caller waits only for a chunk the helper has started, never for the helper to wake.
/// count < 2^24.
///
/// Between jobs the helper spins (pause, then sched_yield: jobs come every few tens of
/// microseconds during a simulation) for up to kSpinMicroseconds, then sleeps on a futex
/// (std::atomic::wait); waking it costs one system call and a context switch, tens of
/// microseconds on a virtual machine.
///
/// Two threads do not always pay, so the caller decides job by job with a HelperPolicy, timing
/// its windows on the steady clock. Not reentrant: one caller thread.
class SplitRunner {
 public:
  /// Chunks per share: 2 * kChunksPerShare chunks in all for an even split.
  static constexpr std::int64_t kChunksPerShare = 2;
  /// How long an idle helper spins before it sleeps.
  static constexpr std::int64_t kSpinMicroseconds = 2000;

  SplitRunner();
  ~SplitRunner();
  SplitRunner(const SplitRunner&) = delete;
  SplitRunner& operator=(const SplitRunner&) = delete;

  void run(std::int64_t count, std::int64_t split,
           const std::function<void(std::int64_t, std::int64_t)>& fn);

  /// Jobs run so far (posted to the helper or run on the caller alone), and how many of them
  /// the helper ran a chunk of (tests, benchmarks).
  std::uint64_t jobs() const { return jobs_; }
  std::uint64_t helped_jobs() const { return helped_jobs_; }

 private:
  void loop();
  /// Claims the next chunk from the front (caller) or the back (helper) of the remaining
  /// range; false when none is left.
  bool claim(bool from_front, std::int64_t& begin, std::int64_t& end);
  /// Posts the job to the helper, claims chunks from the front, waits for the helper's last
  /// chunk; whether the helper ran one.
  bool run_helped(std::int64_t count, std::int64_t split,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

  std::atomic<std::uint32_t> job_{0};  // generation of the posted job (the helper sleeps on it)
  std::atomic<bool> quit_{false};
  /// Set while the decided jobs run on the caller alone: the idle helper sleeps at once instead
  /// of spinning (the next posted job wakes it).
  std::atomic<bool> parked_{false};
  /// The current job's unclaimed range [front, back) (bits 0-23, 24-47), whether the helper is
  /// running a chunk of it (bit 48) and the job's generation (bits 49-63, against ABA).
  std::atomic<std::uint64_t> state_{0};
  std::atomic<const std::function<void(std::int64_t, std::int64_t)>*> fn_{nullptr};
  std::atomic<std::int64_t> chunk_{1};
  std::uint64_t jobs_ = 0, helped_jobs_ = 0;  // counted by the caller
  HelperPolicy policy_;
  std::chrono::steady_clock::time_point window_start_{};
  std::thread thread_;
};

}  // namespace tessel::sim
