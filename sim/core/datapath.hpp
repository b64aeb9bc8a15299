// Datapath: the functional (bit-exact) effect of each instruction on scratchpads and DRAM,
// per docs/isa.md and docs/quantization.md. Knows nothing of time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"

namespace tessel::sim {

/// The vector unit's registers, set by `vcfg` (power-on: all 0).
struct VectorRegisters {
  std::int64_t mult_a = 0;
  std::int64_t mult_b = 0;
  int shift = 0;
  std::int32_t zero_point = 0;
  std::int32_t lo = 0;
  std::int32_t hi = 0;
};

/// Scratchpad and DRAM contents and the instruction semantics over them.
/// Precondition of execute(): the instruction passed isa::check and every byte it touches is
/// inside its scratchpads and DRAM (the simulator checks bounds before executing).
class Datapath {
 public:
  /// Zeroed scratchpads of the config's sizes over `dram` (not owned; must outlive this).
  Datapath(const HwConfig& config, std::vector<std::uint8_t>& dram);

  /// Applies `instruction`'s effect (nop, finish: none).
  void execute(const isa::Instruction& instruction);

  std::span<std::uint8_t> scratchpad(std::size_t id) { return scratchpads_[id]; }
  /// Hands the scratchpad contents over (the Datapath is not used afterwards).
  std::vector<std::vector<std::uint8_t>> take_scratchpads() { return std::move(scratchpads_); }
  const VectorRegisters& registers() const { return registers_; }

 private:
  void execute_load(const isa::Load& x);
  void execute_store(const isa::Store& x);
  void execute_conv(const isa::Conv& x);
  void execute_requant(const isa::Requant& x);
  void execute_add(const isa::Add& x);
  void execute_pool(const isa::Pool& x);
  void execute_copy(const isa::Copy& x);

  std::vector<std::vector<std::uint8_t>> scratchpads_;
  std::vector<std::uint8_t>& dram_;
  VectorRegisters registers_;
  int matrix_rows_ = 0;
  int matrix_cols_ = 0;
  int weight_bytes_ = 1;
};

/// Reads a little-endian signed element of `bytes` bytes (1, 2, 4) at `p`.
std::int32_t read_element(const std::uint8_t* p, std::uint64_t bytes);

/// Writes the low `bytes` bytes of `value`, little-endian, at `p`.
void write_element(std::uint8_t* p, std::uint64_t bytes, std::int32_t value);

}  // namespace tessel::sim
