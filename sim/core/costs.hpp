// Per-instruction costs of docs/timing.md: closed-form cycles for compute instructions and the
// DRAM request list of a DMA instruction.
#pragma once

#include <cstdint>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/dram/dram_model.hpp"

namespace tessel::sim {

/// The vector pipeline latency P_v of docs/timing.md.
inline constexpr std::uint64_t kVectorPipelineCycles = 4;

/// Bytes of one element of `elem` (1, 2, 4).
std::uint64_t element_bytes(isa::Elem elem);

/// cost = f - s of a non-DMA instruction (nop, vcfg, finish, conv, requant, add, copy, pool).
/// For load/store, whose cost depends on the DRAM's state, returns 0.
std::uint64_t fixed_cost_cycles(const isa::Instruction& instruction, const HwConfig& config);

/// MAC slots a conv uses (timing.md: P * passes * R * C dense, P * passes * C depthwise);
/// 0 for every other instruction.
std::uint64_t mac_count(const isa::Instruction& instruction, const HwConfig& config);

/// The maximal contiguous byte runs of a load or store, in walk order (y, then x), each one
/// DRAM request (issue cycle, direction and kind filled in). Empty for other instructions.
std::vector<DramRequest> dma_requests(const isa::Instruction& instruction,
                                      std::uint64_t issue_cycle);
/// The same runs into `out` (cleared first), so that a caller can reuse one buffer.
void dma_requests(const isa::Instruction& instruction, std::uint64_t issue_cycle,
                  std::vector<DramRequest>& out);

/// The traffic kind of a load/store's `kind` field (activations, weights, outputs).
TrafficKind traffic_kind(isa::Traffic kind);

}  // namespace tessel::sim

namespace tessel::sim {

/// Bytes one instruction reads from and writes to one scratchpad.
struct SramTraffic {
  std::uint32_t sp = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// The SRAM bytes an instruction moves (docs/sim.md "Counters"): DMA its box (padding
/// included for loads); conv its input vectors once per pass, each weight block once, its
/// bias once, its accumulators once (read too when init=acc); vector ops each operand element
/// once (pool: every window position, padding included; requant: its parameter table).
std::vector<SramTraffic> sram_traffic(const isa::Instruction& instruction, const HwConfig& config);
/// The same into `out` (cleared first), so that a caller can reuse one buffer.
void sram_traffic(const isa::Instruction& instruction, const HwConfig& config,
                  std::vector<SramTraffic>& out);

}  // namespace tessel::sim
