// Per-instruction costs of docs/timing.md: closed-form cycles for compute instructions and the
// DRAM request list of a DMA instruction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "configs/energy_model.hpp"
#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/dram/dram_model.hpp"

namespace tessel::sim {

/// The vector pipeline latency P_v of docs/timing.md.
inline constexpr std::uint64_t kVectorPipelineCycles = 4;

/// Bytes of one element of `elem` (1, 2, 4).
std::uint64_t element_bytes(isa::Elem elem);

/// cost = f - s of a non-DMA instruction (nop, vcfg, finish, conv, requant, add, copy, pool).
/// For load/store, whose cost depends on the DRAM's state, returns 0; for a gather, the cycles
/// of its mover (isa::timing::gather_mover_cycles), below which it cannot finish.
std::uint64_t fixed_cost_cycles(const isa::Instruction& instruction, const HwConfig& config);

/// MAC slots a conv uses (timing.md: P * passes * R * C dense, P * passes * C depthwise);
/// 0 for every other instruction.
std::uint64_t mac_count(const isa::Instruction& instruction, const HwConfig& config);

/// The vector unit's operations of one instruction (docs/energy.md): requant one per element
/// of its box, add one per element, pool one per window position of every output (padding
/// included, as its SRAM reads), lut the bytes of the table entries it looks up (one entry of
/// dst_elem per element), reduce one add or compare per source element and, for a sum of
/// squares, one 8 x 8 multiply per element too, mul one per element, softmax and norm one per
/// element of their rows and one per row; 0 for every other instruction (a copy only moves;
/// conv and matmul are the matrix unit's MACs).
using VectorOps = VectorCounts;
VectorOps vector_ops(const isa::Instruction& instruction);

/// The DRAM side of a load or store: `rows` rows of `pixels` runs of `run_bytes` each, in walk
/// order (y, then x). Strides are non-negative, so the walk's last run ends highest.
/// A gather's: its ids' run first (`head_bytes` at `head_address`, activations), then its rows
/// at the table's row stride, each its own request (`merge` false), the table's extent up to
/// `table_end` (docs/timing.md "gather").
struct DmaWalk {
  std::uint64_t address = 0;             ///< DRAM byte address of element (0,0,0)
  std::uint64_t row_stride_bytes = 0;    ///< dram_stride_y * element bytes
  std::uint64_t pixel_stride_bytes = 0;  ///< dram_stride_x * element bytes
  std::uint64_t run_bytes = 0;           ///< c_size * element bytes (> 0)
  std::uint32_t rows = 0;                ///< y_size; 0 when the instruction is no DMA
  std::uint32_t pixels = 0;              ///< x_size
  DramDirection direction = DramDirection::kRead;
  TrafficKind kind = TrafficKind::kActivations;
  bool merge = true;               ///< runs that continue the previous one join it
  std::uint64_t head_address = 0;  ///< a gather's ids
  std::uint64_t head_bytes = 0;    ///< 0: no head request
  std::uint64_t table_end = 0;     ///< a gather: one past its table's last row

  /// One past the highest DRAM byte the walk touches (rows > 0): an O(1) bounds check.
  std::uint64_t end_address() const {
    return std::max({address + (std::uint64_t{rows} - 1) * row_stride_bytes +
                         (std::uint64_t{pixels} - 1) * pixel_stride_bytes + run_bytes,
                     head_address + head_bytes, table_end});
  }

  /// Calls f(const DramRequest&) for each maximal contiguous byte run, in walk order: the
  /// requests dma_requests() lists, without a list.
  template <class F>
  void for_each_request(std::uint64_t issue_cycle, F&& f) const {
    if (head_bytes > 0)
      f(static_cast<const DramRequest&>(DramRequest{head_address, head_bytes, direction,
                                                    TrafficKind::kActivations, issue_cycle}));
    DramRequest run{0, 0, direction, kind, issue_cycle};
    bool pending = false;
    // Appends [a, a + bytes), merged into the pending run when it continues it.
    auto append = [&](std::uint64_t a, std::uint64_t bytes) {
      if (merge && pending && run.address + run.bytes == a) {
        run.bytes += bytes;
        return;
      }
      if (pending) f(static_cast<const DramRequest&>(run));
      run.address = a;
      run.bytes = bytes;
      pending = true;
    };
    // A row whose pixels abut (x stride = one pixel's run) is one contiguous range: the
    // pixel-by-pixel walk would merge it into exactly that.
    const bool rows_contiguous = merge && run_bytes > 0 && pixel_stride_bytes == run_bytes;
    for (std::uint64_t y = 0; y < rows; ++y) {
      const std::uint64_t row = address + y * row_stride_bytes;
      if (rows_contiguous) {
        if (pixels > 0) append(row, std::uint64_t{pixels} * run_bytes);
        continue;
      }
      for (std::uint64_t x = 0; x < pixels; ++x) append(row + x * pixel_stride_bytes, run_bytes);
    }
    if (pending) f(static_cast<const DramRequest&>(run));
  }
};

/// The DMA walk of a load or store; rows = 0 for every other instruction.
DmaWalk dma_walk(const isa::Instruction& instruction);

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
/// The same into a fixed array, without an allocation: returns how many entries the
/// instruction has (only the first out.size() are written).
std::size_t sram_traffic(const isa::Instruction& instruction, const HwConfig& config,
                         std::span<SramTraffic> out);

}  // namespace tessel::sim
