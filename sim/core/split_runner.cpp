// SplitRunner: the helper's wait-run-signal loop and the caller's post-run-wait.
#include "sim/core/split_runner.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessel::sim {
namespace {

/// Busy-waits up to ~0.1 ms (about 2000 pauses) for `flag` to leave `old`, then sleeps on it.
void wait_while_equal(const std::atomic<std::uint32_t>& flag, std::uint32_t old) {
  for (int spin = 0; spin < 200; ++spin) {
    if (flag.load(std::memory_order_acquire) != old) return;
#if defined(__x86_64__)
    _mm_pause();
#endif
  }
  while (flag.load(std::memory_order_acquire) == old) flag.wait(old, std::memory_order_acquire);
}

}  // namespace

SplitRunner::SplitRunner() : thread_([this] { loop(); }) {}

SplitRunner::~SplitRunner() {
  quit_.store(true, std::memory_order_relaxed);
  job_.fetch_add(1, std::memory_order_release);
  job_.notify_one();
  thread_.join();
}

void SplitRunner::loop() {
  std::uint32_t seen = 0;
  for (;;) {
    wait_while_equal(job_, seen);
    seen = job_.load(std::memory_order_acquire);
    if (quit_.load(std::memory_order_relaxed)) return;
    (*fn_)(begin_, end_);
    done_.store(seen, std::memory_order_release);
    done_.notify_one();
  }
}

void SplitRunner::run(std::int64_t count, std::int64_t split,
                      const std::function<void(std::int64_t, std::int64_t)>& fn) {
  fn_ = &fn;
  begin_ = split;
  end_ = count;
  const std::uint32_t previous = done_.load(std::memory_order_relaxed);
  const std::uint32_t job = job_.fetch_add(1, std::memory_order_release) + 1;
  job_.notify_one();
  fn(0, split);
  std::uint32_t done = previous;
  while (done != job) {
    wait_while_equal(done_, done);
    done = done_.load(std::memory_order_acquire);
  }
}

}  // namespace tessel::sim
