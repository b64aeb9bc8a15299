// DatapathWorker: a single-producer, single-consumer queue of instructions and its thread.
#include "sim/core/datapath_worker.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessel::sim {
namespace {

void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// Checks before sleeping: the worker waits for instructions that come every few microseconds
// (the timing model's share of one); the caller, ahead with a full queue, sleeps soon.
constexpr int kWorkerSpins = 4000;
constexpr int kCallerSpins = 200;

}  // namespace

DatapathWorker::DatapathWorker(const HwConfig& config, std::vector<std::uint8_t>& dram,
                               int datapath_threads)
    : datapath_(config, dram, false, datapath_threads),
      slots_(kSlots),
      thread_([this] { loop(); }) {}

DatapathWorker::~DatapathWorker() {
  wait_until_queued_at_most(0);
  quit_.store(true, std::memory_order_seq_cst);
  work_signal_.fetch_add(1, std::memory_order_seq_cst);
  work_signal_.notify_one();
  thread_.join();
}

void DatapathWorker::execute(const isa::Instruction& instruction) {
  const std::uint64_t queued = queued_.load(std::memory_order_relaxed);
  if (queued - done_.load(std::memory_order_acquire) == kSlots)
    wait_until_queued_at_most(kSlots / 2);
  slots_[queued % kSlots] = instruction;
  queued_.store(queued + 1, std::memory_order_seq_cst);
  // Seen asleep (seq_cst on both sides: either it saw the new count before sleeping or this
  // sees it asleep): wake it.
  if (worker_asleep_.load(std::memory_order_seq_cst)) {
    work_signal_.fetch_add(1, std::memory_order_seq_cst);
    work_signal_.notify_one();
  }
}

std::vector<std::vector<std::uint8_t>> DatapathWorker::take_scratchpads() {
  wait_until_queued_at_most(0);
  if (error_) std::rethrow_exception(error_);
  return datapath_.take_scratchpads();
}

void DatapathWorker::wait_until_queued_at_most(std::uint64_t limit) {
  const std::uint64_t queued = queued_.load(std::memory_order_relaxed);
  for (int spin = 0;; ++spin) {
    if (queued - done_.load(std::memory_order_acquire) <= limit) return;
    if (spin < kCallerSpins) {
      cpu_relax();
      continue;
    }
    const std::uint64_t signal = room_signal_.load(std::memory_order_seq_cst);
    caller_wake_limit_.store(limit, std::memory_order_seq_cst);
    caller_asleep_.store(true, std::memory_order_seq_cst);
    if (queued - done_.load(std::memory_order_seq_cst) > limit)
      room_signal_.wait(signal, std::memory_order_seq_cst);
    caller_asleep_.store(false, std::memory_order_seq_cst);
  }
}

void DatapathWorker::loop() {
  std::uint64_t done = 0;
  for (int spin = 0;;) {
    const std::uint64_t queued = queued_.load(std::memory_order_acquire);
    if (done == queued) {
      if (quit_.load(std::memory_order_acquire)) return;
      if (spin++ < kWorkerSpins) {
        cpu_relax();
        continue;
      }
      const std::uint64_t signal = work_signal_.load(std::memory_order_seq_cst);
      worker_asleep_.store(true, std::memory_order_seq_cst);
      if (queued_.load(std::memory_order_seq_cst) == done && !quit_.load(std::memory_order_seq_cst))
        work_signal_.wait(signal, std::memory_order_seq_cst);
      worker_asleep_.store(false, std::memory_order_seq_cst);
      continue;
    }
    spin = 0;
    for (; done < queued; ++done) {
      // After a failure the rest only count as run: the caller rethrows it.
      if (!error_) {
        try {
          datapath_.execute(slots_[done % kSlots]);
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      done_.store(done + 1, std::memory_order_seq_cst);
      if (caller_asleep_.load(std::memory_order_seq_cst) &&
          queued_.load(std::memory_order_relaxed) - (done + 1) <=
              caller_wake_limit_.load(std::memory_order_seq_cst)) {
        // (The caller clears the flag when it wakes: until then each step signals again.)
        room_signal_.fetch_add(1, std::memory_order_seq_cst);
        room_signal_.notify_one();
      }
    }
  }
}

}  // namespace tessel::sim
