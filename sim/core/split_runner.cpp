// SplitRunner: the helper's wait-claim-run loop and the caller's post-claim-wait.
#include "sim/core/split_runner.hpp"

#include <sched.h>

#include <algorithm>
#include <cassert>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessel::sim {

void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

namespace {

constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << 24) - 1;
constexpr std::uint64_t kBusy = std::uint64_t{1} << 48;
constexpr int kGenerationShift = 49;

std::int64_t front_of(std::uint64_t state) {
  return static_cast<std::int64_t>(state & kIndexMask);
}
std::int64_t back_of(std::uint64_t state) {
  return static_cast<std::int64_t>((state >> 24) & kIndexMask);
}
std::uint64_t with_range(std::uint64_t state, std::int64_t front, std::int64_t back) {
  return (state & ~((kIndexMask << 24) | kIndexMask)) | static_cast<std::uint64_t>(front) |
         (static_cast<std::uint64_t>(back) << 24);
}

}  // namespace

SplitRunner::SplitRunner() : thread_([this] { loop(); }) {}

SplitRunner::~SplitRunner() {
  quit_.store(true, std::memory_order_relaxed);
  job_.fetch_add(1, std::memory_order_release);
  job_.notify_one();
  thread_.join();
}

bool SplitRunner::claim(bool from_front, std::int64_t& begin, std::int64_t& end) {
  std::uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    const std::int64_t front = front_of(state), back = back_of(state);
    if (front >= back) return false;
    // chunk_ was stored before the state this CAS compares against (the generation bits rule
    // out a later job's equal range).
    const std::int64_t size = std::min(chunk_.load(std::memory_order_relaxed), back - front);
    const std::uint64_t next = from_front ? with_range(state, front + size, back)
                                          : with_range(state, front, back - size) | kBusy;
    if (state_.compare_exchange_weak(state, next, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      begin = from_front ? front : back - size;
      end = from_front ? front + size : back;
      return true;
    }
  }
}

void SplitRunner::loop() {
  std::uint32_t seen = 0;
  for (;;) {
    // Spin (pause, then sched_yield so that a loaded core goes to whoever needs it) for up to
    // kSpinMicroseconds, then sleep on the futex.
    for (int spin = 0; spin < 64 && job_.load(std::memory_order_acquire) == seen; ++spin)
      cpu_relax();
    const auto start = std::chrono::steady_clock::now();
    while (job_.load(std::memory_order_acquire) == seen) {
      sched_yield();
      if (parked_.load(std::memory_order_relaxed) ||
          std::chrono::steady_clock::now() - start > std::chrono::microseconds(kSpinMicroseconds)) {
        job_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = job_.load(std::memory_order_acquire);
    if (quit_.load(std::memory_order_relaxed)) return;
    std::int64_t begin = 0, end = 0;
    // A successful claim sets the busy bit, which holds the caller in run() (so fn_ stays
    // valid) until the chunk is done.
    while (claim(false, begin, end)) {
      (*fn_.load(std::memory_order_relaxed))(begin, end);
      state_.fetch_and(~kBusy, std::memory_order_release);
    }
  }
}

bool HelperPolicy::end_job(bool helper_took_chunk) {
  ++window_jobs_;
  window_helped_ += helper_took_chunk ? 1 : 0;
  return window_jobs_ >= (phase_ == Phase::kDecided ? decided_jobs_ : kWindowJobs);
}

void HelperPolicy::end_window(Duration took) {
  switch (phase_) {
    case Phase::kProbeHelped:
      helped_window_ = took;
      use_helper_ = window_helped_ >= kMinHelpedJobs;  // else the helper had no core
      phase_ = Phase::kProbeAlone;
      break;
    case Phase::kProbeAlone:
      use_helper_ = use_helper_ && helped_window_ < took;
      // Each decision against the helper doubles the jobs until the next measurement (up to
      // kMaxDecidedJobs; one for it resets them): the helped window costs its jobs' extra time
      // in every cycle.
      decided_jobs_ = use_helper_ ? kDecidedJobs : std::min(2 * decided_jobs_, kMaxDecidedJobs);
      phase_ = Phase::kDecided;
      break;
    case Phase::kDecided:
      phase_ = Phase::kProbeHelped;
      break;
  }
  window_jobs_ = window_helped_ = 0;
}

void SplitRunner::run(std::int64_t count, std::int64_t split,
                      const std::function<void(std::int64_t, std::int64_t)>& fn) {
  assert(count >= 0 && static_cast<std::uint64_t>(count) <= kIndexMask);
  if (count <= 0) return;
  ++jobs_;
  using Clock = std::chrono::steady_clock;
  if (policy_.window_starts()) window_start_ = Clock::now();
  bool helper_took_chunk = false;
  if (policy_.helped()) {
    helper_took_chunk = run_helped(count, split, fn);
    helped_jobs_ += helper_took_chunk ? 1 : 0;
  } else {
    fn(0, count);
  }
  if (!policy_.end_job(helper_took_chunk)) return;
  policy_.end_window(Clock::now() - window_start_);
  parked_.store(policy_.parked(), std::memory_order_relaxed);
}

bool SplitRunner::run_helped(std::int64_t count, std::int64_t split,
                             const std::function<void(std::int64_t, std::int64_t)>& fn) {
  fn_.store(&fn, std::memory_order_relaxed);
  chunk_.store(std::max<std::int64_t>(1, (split + kChunksPerShare - 1) / kChunksPerShare),
               std::memory_order_relaxed);
  const std::uint64_t generation = jobs_ & ((std::uint64_t{1} << (64 - kGenerationShift)) - 1);
  state_.store((generation << kGenerationShift) | with_range(0, 0, count),
               std::memory_order_release);
  job_.fetch_add(1, std::memory_order_release);
  job_.notify_one();
  std::int64_t begin = 0, end = 0;
  while (claim(true, begin, end)) fn(begin, end);
  // Nothing is left to claim; wait for a chunk the helper is still running.
  std::uint64_t state = state_.load(std::memory_order_acquire);
  for (int spin = 0; state & kBusy; ++spin) {
    cpu_relax();
    if (spin >= 256) sched_yield();
    state = state_.load(std::memory_order_acquire);
  }
  // The helper took a chunk iff the back moved.
  return back_of(state) < count;
}

}  // namespace tessel::sim
