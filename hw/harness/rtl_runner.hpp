// Runs an ISA program on the Verilator model of hw/rtl and reports like the simulator.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/simulator.hpp"
#include "support/result.hpp"

namespace tessel::hw {

/// How to run the RTL.
struct RtlOptions {
  /// A run whose RTL shows no event (dispatch, start, finish, DRAM request) for this many
  /// cycles stops with fault kind "watchdog" (an RTL hang; a correct model never trips it).
  std::uint64_t watchdog_cycles = 50'000'000;
  /// FST waveform path; needs a model built with -DTESSEL_RTL_TRACE=ON (else a failure).
  std::string fst_path;
  /// Keep every executed instruction's dispatch/start/finish cycles in the report.
  bool record_instruction_cycles = false;
  /// Overall cycle cap: a run still going at this cycle stops with fault kind "cycle_cap".
  /// 0 (the default) derives it from the program: 2 * program_cycle_bound + 1,000,000, so a
  /// model that keeps making events (which the watchdog cannot see) still ends.
  std::uint64_t max_cycles = 0;
};

/// An upper bound on the cycles `program` can take on `config` when nothing overlaps: the sum
/// over instructions of a fetch (DRAM latency + the bursts one instruction can span), the
/// docs/timing.md compute cost,
/// and for a load or store each request's latency plus its bursts' bus time, each plus 4
/// cycles of hand-off. Saturating arithmetic. Undecodable words count as a fetch only (they
/// fault at dispatch).
std::uint64_t program_cycle_bound(const HwConfig& config, std::span<const isa::Word> program);

/// What an RTL run produced: the simulator's report (same schema, same counters) and the
/// final DRAM image, plus the RTL's own health figures.
struct RtlResult {
  sim::SimReport report;
  std::vector<std::uint8_t> dram;
  /// Cycles the RTL spent past an instruction's timed cost (compute: sequencer slower than
  /// the cost; DMA: data mover or request generator slower than the DRAM). 0 means every
  /// cycle count followed docs/timing.md.
  std::uint64_t late_cycles = 0;
  /// Cycles in which the load's and the compute's scratchpad writes hit one bank word of the
  /// block RAMs (hw/rtl/tessel_sram.sv): a write collision, whose result a true
  /// dual-port RAM leaves undefined. 0 means the run's data are the ones an FPGA keeps.
  std::uint64_t sram_collisions = 0;
  std::uint64_t simulated_cycles = 0;  ///< clock cycles evaluated (reset and tail included)
  double wall_seconds = 0;             ///< time spent in the eval loop
};

/// A Verilator model built into this binary.
struct RtlModelInfo {
  std::string name;         ///< the config's name, e.g. "edge-small"
  std::string config_path;  ///< the YAML it was generated from
  std::string config_hash;  ///< content_hash of that config
  int threads = 1;          ///< Verilator --threads
};

/// The models built into this binary (empty when Verilator was not found at configure time).
std::vector<RtlModelInfo> rtl_models();

/// Runs `program` on the model built for `config` (matched by content hash; with several, the
/// one with `threads` Verilator threads). Fails when no model matches (the message lists the
/// built ones), when the image is inconsistent, or when tracing is asked of a model without it.
/// Faults of the run are in result.report.fault, as in the simulator.
Result<RtlResult> run_rtl(const HwConfig& config, std::span<const isa::Word> program,
                          sim::DramImage dram, const RtlOptions& options = {}, int threads = 1);

}  // namespace tessel::hw
