// Instruction emitter with dependency-token bookkeeping: every pop has an earlier push.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "isa/program.hpp"
#include "support/result.hpp"

namespace tessel::codegen {

/// The four token FIFOs of docs/isa.md, named by direction.
enum class Fifo : std::uint8_t { LoadToCompute, ComputeToLoad, ComputeToStore, StoreToCompute };
const char* to_string(Fifo fifo);

/// Appends instructions to a Program and tracks, in program order, how many tokens each FIFO
/// holds. The invariant it enforces, 0 <= tokens <= fifo_depth on every FIFO after every
/// instruction, is sufficient for a deadlock-free program on the decoupled machine: each pop
/// is matched by a push earlier in fetch order (which the pushing engine reaches first), and
/// no push can wait forever for room, because the pops that make room come earlier in fetch
/// order too. finish() additionally demands that every FIFO is empty at the end.
class Emitter {
 public:
  explicit Emitter(int token_fifo_depth);

  /// Appends `instruction` after checking it (isa::check) and applying its token flags. Fails
  /// naming the instruction index and FIFO on underflow ("instruction 7 (conv): pops
  /// load->compute, which is empty") or overflow.
  Status emit(isa::Instruction instruction);
  /// Inserts `instruction` at `index` (<= size()), after checking it. It must carry no token
  /// flag, so the token counts of every later instruction stay as they were (a cross-group
  /// weight prefetch placed after the previous group's last load). Fails naming the index.
  Status insert(std::size_t index, isa::Instruction instruction);
  /// Appends `finish`; fails when a FIFO still holds tokens (unbalanced program).
  Status finish();

  /// Tokens currently in `fifo`, counted in program order.
  int tokens(Fifo fifo) const { return tokens_[static_cast<std::size_t>(fifo)]; }
  const isa::Program& program() const { return program_; }
  isa::Program take_program() { return std::move(program_); }
  std::size_t size() const { return program_.instructions.size(); }

 private:
  int depth_;
  std::array<int, 4> tokens_{};
  isa::Program program_;
};

}  // namespace tessel::codegen
