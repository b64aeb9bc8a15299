// The simulator's public entry: run one ISA program on one hardware config, get a report.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "isa/target.hpp"
#include "sim/core/costs.hpp"
#include "sim/core/zeroed_bytes.hpp"
#include "sim/dram/dram_model.hpp"
#include "support/result.hpp"

namespace tessel::sim {

/// How to run.
struct SimOptions {
  /// Skip all data movement and arithmetic: same cycles, bytes, counters and faults, no
  /// results (the DRAM image's contents are not needed, only its size).
  bool timing_only = false;
  /// Chrome trace-event JSON output path; empty for none.
  std::string trace_path;
  /// Instruction slices recorded in the trace before it stops recording (and says so).
  std::uint64_t trace_max_events = 1'000'000;
  /// Keep every executed instruction's dispatch/start/finish cycles in the report (tests).
  bool record_instruction_cycles = false;
  /// Full mode: hand the scratchpads' final bytes back in SimResult::scratchpads (tests). With
  /// 2 or more threads the weight loads whose copies were deferred (Datapath::
  /// defer_weight_loads) are then copied at the end, ~7 MB for a BERT-base layer; false (what
  /// `tessel sim` passes, which reads no scratchpad) leaves SimResult::scratchpads empty.
  bool keep_scratchpads = true;
  /// Host threads (full mode): 1 runs everything on the calling thread; 2 runs the datapath
  /// on a thread of its own, behind the timing model (DatapathWorker: the instructions in the
  /// order they finish, as one thread runs them); 3 adds a helper to that thread that shares
  /// large instructions (dense convs' output pixels; loads, stores, requants, adds, pools and
  /// copies of >= 4096 elements whose outputs lie apart from their operands) chunk by chunk
  /// (SplitRunner; it pays only with a core to spare). The same results in every case.
  int threads = 1;
  /// How many cycles the accelerator may run ahead of the SystemC kernel's time before it
  /// returns to the kernel (temporal decoupling; sim/core/accelerator.hpp). Any value >= 1
  /// gives the same results; 1 wakes the kernel for every active cycle.
  std::uint64_t sync_quantum_cycles = std::uint64_t{1} << 20;
};

/// When one instruction ran (docs/timing.md's d_i, s_i, f_i).
struct InstructionCycles {
  std::uint64_t index = 0;
  std::uint64_t dispatch_cycle = 0;
  std::uint64_t start_cycle = 0;
  std::uint64_t finish_cycle = 0;
};

/// An engine stuck at a deadlock: its head instruction and what it waits on.
struct BlockedEngine {
  std::string engine;
  std::uint64_t instruction_index = 0;
  std::string waits_on;  ///< a FIFO name, e.g. "compute->load"
};

/// The DRAM the program sees: addresses [0, size_bytes). In full mode `bytes` holds the
/// initial contents (size_bytes long); in timing-only mode it may be empty.
struct DramImage {
  std::uint64_t size_bytes = 0;
  std::vector<std::uint8_t> bytes;

  /// An image holding `contents` (size_bytes = contents.size()).
  static DramImage from_bytes(std::vector<std::uint8_t> contents);
};

/// The three engines, in the fixed order the timing model resolves same-cycle events.
inline constexpr std::size_t kEngineCount = 3;

/// Cycle accounting of one engine. Over the run, busy + waiting_on_dram + waiting_on_token +
/// idle = cycles. queue_full counts the cycles the fetch unit was held back because this
/// engine's queue was full (it overlaps the engine's own states).
struct EngineStats {
  std::uint64_t instructions = 0;  ///< instructions started
  std::uint64_t busy_cycles = 0;   ///< running (DMA: the bus time of its bursts, ceil(N*T))
  std::uint64_t waiting_on_dram_cycles =
      0;  ///< DMA running beyond its bus time (latency, contention)
  std::uint64_t waiting_on_token_cycles =
      0;                                ///< head instruction ready but a token or room missing
  std::uint64_t idle_cycles = 0;        ///< nothing to start (empty queue or decoding)
  std::uint64_t queue_full_cycles = 0;  ///< fetch stalled on this engine's full queue
};

/// Bytes each scratchpad served.
struct ScratchpadStats {
  std::string name;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// Energy by component (configs/energy_model.hpp), in picojoules.
using EnergyEstimate = EnergyBreakdown;

/// Why a run stopped early. `kind` is one of: "illegal_instruction" (undecodable, or not
/// executable on this config), "out_of_bounds" (SRAM or DRAM), "deadlock" (no instruction can
/// ever start; the message names each blocked engine's head and the token FIFO it waits on:
/// empty = underflow, full = overflow), "no_finish" (the program ended without `finish`),
/// "invalid_data" (full mode: a per-channel requantize table entry outside docs/isa.md's
/// ranges, at the requantize's start; found by the datapath, which may run behind the timing
/// model, so the counters are those of the whole run).
struct SimFault {
  std::string kind;
  std::uint64_t cycle = 0;
  std::string engine;                   ///< "fetch", "load", "compute", "store"
  std::int64_t instruction_index = -1;  ///< -1 when no single instruction is at fault
  std::string instruction_text;         ///< the .tasm text of that instruction
  std::string message;                  ///< what was violated; multi-line for deadlocks
  std::vector<BlockedEngine> blocked;   ///< deadlock: every blocked engine, in engine order

  /// "cycle 42: compute: instruction 7 (`conv ...`): <message>".
  std::string str() const;
};

/// Everything a run measured. Counters are kept up to a fault.
struct SimReport {
  bool timing_only = false;
  std::optional<SimFault> fault;  ///< empty when the run ended with finish
  std::uint64_t cycles = 0;       ///< max finish cycle over executed instructions
  std::uint64_t instructions_dispatched = 0;
  std::uint64_t instructions_executed = 0;
  DramCounters dram;  ///< includes 32 instruction bytes per dispatched instruction
  std::array<EngineStats, kEngineCount> engines;
  std::vector<ScratchpadStats> scratchpads;  ///< in config order
  std::uint64_t macs = 0;                    ///< MAC slots used (timing.md's count)
  VectorOps vector_ops;                      ///< the vector unit's element operations
  double mac_utilisation = 0;                ///< macs / (cycles * rows * cols)
  std::optional<EnergyEstimate> energy;      ///< counts x energy_table(config), always set
  std::string config_name;
  std::string config_hash;
  /// With SimOptions::record_instruction_cycles: executed instructions, in finish order.
  std::vector<InstructionCycles> instruction_cycles;

  bool ok() const { return !fault.has_value(); }
  /// "ok" or "fault".
  const char* status() const { return ok() ? "ok" : "fault"; }
};

/// What a run produced: the report and, in full mode, the final DRAM and scratchpad contents.
struct SimResult {
  SimReport report;
  std::vector<std::uint8_t> dram;
  std::vector<ScratchpadBytes> scratchpads;  ///< in config order (SimOptions::keep_scratchpads)
};

/// Runs `program` (encoded instructions, dispatched in order until `finish`) on `config`.
/// A simulated fault is not a failure: it is in result.report.fault. The call fails only when
/// the run cannot be set up (an unwritable trace path, a full-mode image whose bytes do not
/// match its size, DRAM parameters out of range).
/// Each call builds and tears down its own SystemC context (sim/core/systemc_session.hpp), so
/// calls may follow each other in one process; they must not overlap (not thread-safe).
Result<SimResult> simulate(const HwConfig& config, std::span<const isa::Word> program,
                           DramImage dram, const SimOptions& options = {});

/// The report's counts as the energy model's actions (SRAM bytes in config order; DRAM bytes
/// include instruction fetch; cycles for leakage).
ActionCounts action_counts(const SimReport& report);

/// action_counts(report) x energy_table(config) (docs/energy.md).
EnergyEstimate estimate_energy(const HwConfig& config, const SimReport& report);

/// The report as JSON text (schema in docs/sim.md), pretty-printed.
std::string report_json(const SimReport& report, const HwConfig& config);

/// The name of engine `index` ("load", "compute", "store").
const char* engine_name(std::size_t index);

/// What the ISA checks instructions against, from a config (scratchpads in file order).
isa::TargetInfo target_info(const HwConfig& config);

/// The DramParams of a config: bandwidth rounded to whole bytes/s, clock to whole Hz,
/// latency = config.dram_latency_cycles().
DramParams dram_params(const HwConfig& config);

}  // namespace tessel::sim
