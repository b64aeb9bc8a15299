// SplitRunner: one helper thread that runs half of a split loop beside the calling thread
// (the datapath's second thread for large convs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

namespace tessel::sim {

/// run(count, split, fn) calls fn(0, split) on the caller and fn(split, count) on the helper
/// thread, and returns when both are done. Between jobs the helper spins briefly (jobs come
/// every few microseconds during a simulation), then sleeps on a futex (std::atomic::wait).
/// Not reentrant: one caller thread.
class SplitRunner {
 public:
  SplitRunner();
  ~SplitRunner();
  SplitRunner(const SplitRunner&) = delete;
  SplitRunner& operator=(const SplitRunner&) = delete;

  void run(std::int64_t count, std::int64_t split,
           const std::function<void(std::int64_t, std::int64_t)>& fn);

 private:
  void loop();

  std::atomic<std::uint32_t> job_{0};   // generation of the posted job
  std::atomic<std::uint32_t> done_{0};  // generation of the last finished one
  std::atomic<bool> quit_{false};
  const std::function<void(std::int64_t, std::int64_t)>* fn_ = nullptr;
  std::int64_t begin_ = 0, end_ = 0;
  std::thread thread_;
};

}  // namespace tessel::sim
