// The .tasm text form: assembler (text -> Program) and disassembler (Program -> text).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "isa/program.hpp"
#include "isa/target.hpp"

namespace tessel::isa {

/// What the assembler may consult besides the text.
struct AssembleOptions {
  /// When set, scratchpad fields accept the target's names (`sp=inp`) and every instruction is
  /// validated against it (addresses and extents in range, kinds the scratchpad may hold).
  const TargetInfo* target = nullptr;
};

/// Input boundary: assembles .tasm text (syntax in docs/isa.md). Throws InputError carrying
/// every problem found, each located `file:line:column` with a message naming the field, e.g.
/// "field 'sram_addr' = 0x30000 beyond scratchpad 'act' (192 KiB)".
Program assemble(std::string_view text, const std::string& file,
                 const AssembleOptions& options = {});

/// Reads and assembles a .tasm file.
Program assemble_file(const std::string& path, const AssembleOptions& options = {});

/// One instruction as a .tasm line (no newline): the mnemonic and every field, in table order.
/// With `scratchpad_names`, scratchpad ids that have a name are written as names.
std::string format_instruction(const Instruction& instruction,
                               const std::vector<std::string>& scratchpad_names = {});

/// The whole program, one line per instruction, preceded by a comment line;
/// assemble(disassemble(p)) == p.
std::string disassemble(const Program& program,
                        const std::vector<std::string>& scratchpad_names = {});

}  // namespace tessel::isa
