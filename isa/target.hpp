// Validation of instructions against a hardware target: scratchpad bounds, kinds, matrix shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/instruction.hpp"

namespace tessel::isa {

/// What a scratchpad may hold (mirrors configs' DataKind; isa does not depend on configs).
enum class SramKind : std::uint8_t { kActivations, kWeights, kAccumulators, kOutputs };

/// "activations", "weights", "accumulators", "outputs".
std::string_view to_string(SramKind kind);

/// One scratchpad as the ISA sees it; ids are positions in TargetInfo::scratchpads.
struct ScratchpadInfo {
  std::string name;
  std::int64_t size_bytes = 0;
  std::vector<SramKind> holds;

  bool may_hold(SramKind kind) const;
};

/// The parts of a hardware config that instructions are checked against
/// (isa/hw_target.hpp builds one from a HwConfig).
struct TargetInfo {
  std::vector<ScratchpadInfo> scratchpads;
  int matrix_rows = 0;               ///< R: input channels per block
  int matrix_cols = 0;               ///< C: output channels per block
  int input_bits = 8;                ///< conv input element width
  int weight_bits = 8;               ///< conv weight element width
  bool lookup_table = false;         ///< the vector unit runs `lut` (vector.lookup_table)
  bool row_reduce = false;           ///< the vector unit runs `reduce` (vector.row_reduce)
  bool broadcast_multiply = false;   ///< the vector unit runs `mul` (vector.broadcast_multiply)
  bool activation_operands = false;  ///< the matrix unit runs `matmul` (matrix.activation_operands)
  bool row_normalise = false;  ///< the vector unit runs `softmax`, `norm` (vector.row_normalise)
  std::int64_t dram_burst_bytes = 0;  ///< B: a gather's table rows start on bursts (0: unchecked)
};

/// One SRAM operand of an instruction: the bytes [begin, end) of scratchpad `sp` it touches.
struct SramAccess {
  std::string_view sp_field;    ///< e.g. "in_sp"
  std::string_view addr_field;  ///< e.g. "in_addr"
  std::uint32_t sp = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;  ///< exclusive; the last byte of the operand's box is end - 1
  bool is_write = false;
  std::vector<SramKind> kinds;  ///< the scratchpad must hold one of these
};

/// Every SRAM operand of `instruction` (conv weight and accumulator extents need R and C).
/// Extents assume check(instruction) passed.
std::vector<SramAccess> sram_accesses(const Instruction& instruction, int matrix_rows,
                                      int matrix_cols, int weight_bits);

/// A problem with one field, for located diagnostics.
struct FieldProblem {
  std::string field;
  std::string message;  ///< complete: "field 'sram_addr' = 0x30000 beyond scratchpad ..."
};

/// Checks `instruction` (which passed check()) against `target`: scratchpad ids exist, every
/// operand's bytes lie inside its scratchpad, the scratchpad may hold the operand's kind,
/// conv's and matmul's elem match the matrix input width, `lut`, `reduce`, `mul`, `matmul`,
/// `softmax` and `norm` have their unit. The first
/// problem, or nullopt.
std::optional<FieldProblem> validate(const Instruction& instruction, const TargetInfo& target);

/// "192 KiB", "2 MiB" or "1000 bytes".
std::string format_size(std::int64_t bytes);

}  // namespace tessel::isa
