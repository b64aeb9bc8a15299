// DatapathWorker: the functional datapath on a thread of its own, behind the timing model.
#pragma once

#include <array>
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
/// The caller's thread, ahead of the worker and mostly waiting for room, also packs dense
/// convs' weights: it follows which scratchpad bytes are copies of which DRAM bytes
/// (CopyTracker, from the instructions alone), packs a conv's weights straight from the DRAM
/// image when they are such a copy (no store can write those DRAM bytes before the worker
/// has run the conv: the caller has queued none), keeps the last kPackedEntries packings by
/// DRAM address, and hands the packing to the worker with the conv (Datapath::execute's
/// `prepacked`). Not with AMX (the worker packs its tiles).
///
/// The queue holds kSlots instructions. A full queue makes execute() wait until half of it is
/// free, an empty one makes the thread wait for the next instruction: each spins briefly, then
/// sleeps on a futex (std::atomic::wait), and the other side wakes it only when it sleeps.
/// Not reentrant: one caller thread.
class DatapathWorker {
 public:
  static constexpr std::uint64_t kSlots = 1024;
  static constexpr std::size_t kPackedEntries = 32;

  /// A Datapath(config, dram, false, datapath_threads) on the worker thread. `dram` is the
  /// worker's until take_scratchpads() (or the destructor) returns.
  DatapathWorker(const HwConfig& config, std::vector<std::uint8_t>& dram, int datapath_threads);
  /// Finishes the queue.
  ~DatapathWorker();
  DatapathWorker(const DatapathWorker&) = delete;
  DatapathWorker& operator=(const DatapathWorker&) = delete;

  /// Queues `instruction` (Datapath::execute's precondition holds for it).
  void execute(const isa::Instruction& instruction);
  /// Waits until every queued instruction ran; rethrows what an instruction threw on the worker
  /// (the later ones did not run).
  void finish();
  /// finish(), then hands the scratchpads over.
  std::vector<ScratchpadBytes> take_scratchpads();
  /// How many queued convs came with their weights packed ahead (tests).
  std::uint64_t prepacked_convs() const { return prepacked_convs_; }
  /// The datapath, for its counters once take_scratchpads has returned (tests).
  const Datapath& datapath() const { return datapath_; }

 private:
  void loop();
  /// The packing of dense conv `x`'s weights when they are a copy of DRAM bytes (from the
  /// cache or packed now), else null.
  std::shared_ptr<const DenseWeights> packed_weights(const isa::Conv& x);
  /// Waits until at most `limit` queued instructions have not run.
  void wait_until_queued_at_most(std::uint64_t limit);

  struct Slot {
    isa::Instruction instruction;
    std::shared_ptr<const DenseWeights> prepacked;
  };
  /// A packing by the caller, of the weights at DRAM address `source` for a conv of geometry
  /// `key` (taps, input blocks, output blocks).
  struct Packed {
    std::uint64_t source = 0;
    std::array<std::uint32_t, 3> key{};
    std::shared_ptr<const DenseWeights> weights;
    std::uint64_t last_use = 0;
  };

  Datapath datapath_;
  std::vector<std::uint8_t>& dram_;
  int matrix_rows_ = 0;
  int matrix_cols_ = 0;
  int weight_bytes_ = 1;
  bool prepack_ = false;  // no AMX
  CopyTracker copies_;    // the caller's, at the queue's end
  std::vector<Packed> packed_;
  std::uint64_t uses_ = 0;
  std::uint64_t prepacked_convs_ = 0;
  std::vector<Slot> slots_;
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
