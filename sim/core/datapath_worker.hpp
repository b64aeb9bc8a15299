// DatapathWorker: the functional datapath on a thread of its own, behind the timing model.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/core/datapath.hpp"

namespace tessel::sim {

/// Runs a Datapath on a second thread: execute() queues a copy of the instruction and returns,
/// and the thread executes the queue in order. The results are those of calling
/// Datapath::execute in the same order on one thread: the timing model that calls execute()
/// reads no data (the cycles of a `--timing-only` run are the full run's), so the two threads
/// share nothing but the queue. A simulation's datapath work is ~90% of it (ResNet-50 on
/// npc19-deepfusion): the timing model's 10% then runs beside it.
///
/// The queue holds kSlots instructions. A full queue makes execute() wait until half of it is
/// free, an empty one makes the thread wait for the next instruction: each spins briefly, then
/// sleeps on a futex (std::atomic::wait), and the other side wakes it only when it sleeps.
/// Not reentrant: one caller thread.
class DatapathWorker {
 public:
  static constexpr std::uint64_t kSlots = 1024;

  /// A Datapath(config, dram, false, datapath_threads) on the worker thread. `dram` is the
  /// worker's until take_scratchpads() (or the destructor) returns.
  DatapathWorker(const HwConfig& config, std::vector<std::uint8_t>& dram, int datapath_threads);
  /// Finishes the queue.
  ~DatapathWorker();
  DatapathWorker(const DatapathWorker&) = delete;
  DatapathWorker& operator=(const DatapathWorker&) = delete;

  /// Queues `instruction` (Datapath::execute's precondition holds for it).
  void execute(const isa::Instruction& instruction);
  /// Waits until every queued instruction ran, then hands the scratchpads over; rethrows what
  /// an instruction threw on the worker (the later ones did not run).
  std::vector<std::vector<std::uint8_t>> take_scratchpads();

 private:
  void loop();
  /// Waits until at most `limit` queued instructions have not run.
  void wait_until_queued_at_most(std::uint64_t limit);

  Datapath datapath_;
  std::vector<isa::Instruction> slots_;
  // Written by the caller: instructions queued; read by the worker.
  alignas(64) std::atomic<std::uint64_t> queued_{0};
  std::atomic<bool> worker_asleep_{false};
  std::atomic<std::uint64_t> work_signal_{0};
  std::atomic<bool> quit_{false};
  // Written by the worker: instructions run.
  alignas(64) std::atomic<std::uint64_t> done_{0};
  std::atomic<bool> caller_asleep_{false};
  std::atomic<std::uint64_t> caller_wake_limit_{0};
  std::atomic<std::uint64_t> room_signal_{0};
  std::exception_ptr error_;  // the worker's; read after done_ caught up
  std::thread thread_;        // last: started when everything above exists
};

}  // namespace tessel::sim
