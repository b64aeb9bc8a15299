// The SystemC model: a fetch unit, three engines with queues, four token FIFOs, DMA over the
// DramModel, and the arbitration that applies docs/timing.md's same-cycle rules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <systemc>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "isa/target.hpp"
#include "sim/core/costs.hpp"
#include "sim/core/datapath.hpp"
#include "sim/core/datapath_worker.hpp"
#include "sim/core/predecoder.hpp"
#include "sim/core/trace_writer.hpp"
#include "sim/dram/dram_model.hpp"
#include "sim/simulator.hpp"

namespace tessel::sim {

/// One dependency-token FIFO (docs/timing.md "Engines and tokens"), registered: a push
/// reserves a place at the pusher's start, its token becomes visible at the pusher's finish,
/// and room is judged on the occupancy at the start of the cycle (a pop at t frees its place
/// from t + 1).
struct TokenFifo {
  const char* name = "";
  std::uint64_t depth = 0;
  std::uint64_t visible = 0;    ///< tokens a pop may take now
  std::uint64_t occupancy = 0;  ///< reservations - pops, live
  std::uint64_t occupancy_at_cycle_start = 0;

  bool has_token() const { return visible > 0; }
  bool has_room() const { return occupancy_at_cycle_start < depth; }
};

/// An instruction in an engine's queue: its decoded record, decoded once at dispatch.
struct QueuedInstruction {
  std::uint64_t index = 0;           ///< position in the program
  std::uint64_t dispatch_cycle = 0;  ///< d_i
  DecodedInstruction decoded;

  const isa::Instruction& instruction() const { return decoded.instruction; }
};

/// A FIFO of at most `capacity` entries in one allocation made up front: an engine's
/// instruction queue. It keeps capacity + 2 slots:
/// - the entry pop_front() removed last stays intact until the next pop_front() (the engine
///   runs the instruction from its queue slot, without a copy);
/// - back_slot(), the slot the next push_back() commits, exists even when the queue is full,
///   and pops do not move it: fetch decodes an instruction straight into it and commits it
///   once there is room.
template <class T>
class FixedQueue {
 public:
  explicit FixedQueue(std::size_t capacity) : capacity_(capacity), slots_(capacity + 2) {}

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ >= capacity_; }
  std::size_t size() const { return size_; }
  const T& front() const { return slots_[head_]; }
  T& back_slot() {
    const std::size_t i = head_ + size_;
    return slots_[i < slots_.size() ? i : i - slots_.size()];
  }
  /// Commits back_slot() (not full()).
  void push_back() { ++size_; }
  void pop_front() {
    head_ = head_ + 1 == slots_.size() ? 0 : head_ + 1;
    --size_;
  }

 private:
  std::size_t capacity_;
  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

/// An engine: its instruction queue, the instruction it runs, and its counters. Its decisions
/// are made by the Accelerator's arbitration, in the timing model's order.
class Engine : public sc_core::sc_module {
 public:
  Engine(const sc_core::sc_module_name& name, std::size_t id, std::size_t queue_depth);

  struct Running {
    const QueuedInstruction* entry = nullptr;  ///< its queue slot (intact: FixedQueue)
    std::uint64_t start_cycle = 0;
    std::uint64_t finish_cycle = 0;
    std::uint64_t bus_cycles = 0;  ///< DMA: ceil(bursts * T), the busy part
    bool started_this_cycle = false;
  };

  const std::size_t id;
  const std::size_t queue_depth;
  FixedQueue<QueuedInstruction> queue;  ///< dispatched, not started
  std::optional<Running> running;
  EngineStats stats;
  std::uint64_t accounted_until = 0;  ///< cycles before this are in stats
  bool waiting_on_token = false;      ///< state since accounted_until (when not running)
};

/// The fetch/dispatch unit: reads the program in order, one instruction per cycle.
class FetchUnit : public sc_core::sc_module {
 public:
  FetchUnit(const sc_core::sc_module_name& name, std::span<const isa::Word> program);

  std::span<const isa::Word> program;
  std::uint64_t next_index = 0;           ///< next instruction to dispatch
  std::uint64_t earliest_cycle = 0;       ///< d_{i-1} + 1
  bool stopped = false;                   ///< dispatched finish
  std::optional<std::size_t> blocked_on;  ///< engine whose full queue holds fetch back
  std::uint64_t blocked_since = 0;
  bool wake_pending = false;  ///< a wake for the next cycle (after a dispatch or a pop)
  /// Whether instruction next_index is decoded, into the back slot of the queue of engine
  /// `next_engine` (kept there while that queue is full).
  bool next_decoded = false;
  std::size_t next_engine = 0;
};

/// Everything one run needs and produces.
struct RunContext {
  const HwConfig& config;
  isa::TargetInfo target;
  SimOptions options;
  DramModel dram;
  std::uint64_t dram_size_bytes = 0;
  std::vector<std::uint8_t> dram_bytes;  ///< full mode only
  std::optional<TraceWriter> trace;
  SimReport report;
  /// Full mode with SimOptions::keep_scratchpads, set by finalize().
  std::vector<ScratchpadBytes> final_scratchpads;
};

/// The top module. Its state changes only at active cycles: cycle 0, an engine's finish cycle,
/// and the cycle after a dispatch or a token pop (fetch's wake). Each active cycle runs in the
/// order of docs/timing.md: account stall cycles, finish instructions (results and tokens
/// become visible, in LOAD, COMPUTE, STORE order), start every instruction that can start
/// against the FIFOs' start-of-cycle occupancy (so one pass in LOAD, COMPUTE, STORE order,
/// which is also the order their DMA requests reach the DRAM model), then dispatch at most one
/// instruction into the queue room the starts freed. Between active cycles nothing can change,
/// so none is visited. (Giving each engine its own SystemC process would leave same-cycle
/// order to the kernel's unspecified process order; the DRAM request order, hence the cycle
/// counts, would depend on it.)
///
/// One SC_METHOD runs the active cycles in order, ahead of the SystemC kernel's time by less
/// than SimOptions::sync_quantum_cycles (temporal decoupling, as TLM-2.0's global quantum): it
/// returns to the kernel, with a timed trigger for the next active cycle, only when that cycle lies
/// a quantum or more past the kernel's time. Nothing else in the kernel observes the accelerator,
/// so the quantum changes no cycle; it spares a kernel event per active cycle.
class Accelerator : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Accelerator);
  Accelerator(const sc_core::sc_module_name& name, RunContext& context,
              std::span<const isa::Word> program);

  /// After sc_start() returns: classifies the end (ok, deadlock, no finish) and completes
  /// the report's counters.
  void finalize();

 private:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  void run();  // the SC_METHOD
  void cycle(std::uint64_t now);
  /// The first active cycle after the one just run, or kNever.
  std::uint64_t next_active_cycle() const;
  void account(std::uint64_t now);
  void finish_instruction(Engine& engine, std::uint64_t now);
  bool try_start(Engine& engine, std::uint64_t now);
  void time_started(Engine& engine, std::uint64_t now);
  void dispatch(std::uint64_t now);
  void raise_fault(std::string kind, std::uint64_t cycle, std::string engine, std::int64_t index,
                   std::string text, std::string message);
  TokenFifo* pop_fifo(std::size_t engine, bool prev);
  TokenFifo* push_fifo(std::size_t engine, bool prev);
  const TokenFifo* pop_fifo(std::size_t engine, bool prev) const;
  const TokenFifo* push_fifo(std::size_t engine, bool prev) const;
  std::string describe_block(const Engine& engine) const;
  std::string blocking_fifo(const Engine& engine) const;
  bool ended() const;

  RunContext& context_;
  Predecoder predecoder_;  // decodes each instruction as fetch dispatches it
  FetchUnit fetch_;
  std::vector<std::unique_ptr<Engine>> engines_;
  // load->compute, compute->load, compute->store, store->compute
  TokenFifo fifos_[4];
  std::unique_ptr<Datapath> datapath_;      // full mode, one thread
  std::unique_ptr<DatapathWorker> worker_;  // full mode, threads >= 2
  /// Full mode: the per-channel requantizes in the order the datapath runs them (start
  /// cycle, program index), for an `invalid_data` fault (Datapath::bad_table).
  struct PerChannelRequant {
    std::uint64_t start_cycle = 0;
    std::uint64_t index = 0;
  };
  std::vector<PerChannelRequant> per_channel_requants_;
  bool finish_done_ = false;
  bool faulted_ = false;
  std::uint32_t cancel_polls_ = 0;  // run()'s iterations: every 1024th polls cancel_requested()
  std::uint64_t max_finish_cycle_ = 0;
  std::uint64_t last_dispatch_cycle_ = 0;
  std::uint64_t next_cycle_ = 0;  // the next active cycle run() runs
};

}  // namespace tessel::sim
