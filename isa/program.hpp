// Program: a sequence of instructions, and its binary file format (.bin).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/instruction.hpp"

namespace tessel::isa {

/// An ISA program: instructions in program order (fetch order).
struct Program {
  std::vector<Instruction> instructions;

  bool operator==(const Program&) const = default;
};

/// `.bin` header: magic "TISA", version, bytes per instruction, count, reserved (docs/isa.md).
inline constexpr std::uint32_t kBinaryMagic = 0x41534954;  // "TISA" little-endian
inline constexpr std::size_t kBinaryHeaderBytes = 16;

/// The .bin bytes of a program; fails naming the first instruction that does not encode
/// ("instruction 3: field 'x_size' = 0 out of range [1, 4095]").
Result<std::vector<std::uint8_t>> to_binary(const Program& program);

/// Input boundary: parses .bin bytes, throwing InputError with every problem found (bad
/// header, bad size, and each instruction the decoder rejects, keyed "instruction N").
/// `file` names the input in diagnostics.
Program from_binary(std::span<const std::uint8_t> bytes, const std::string& file);

/// Reads a .bin file (InputError when unreadable, not a regular file, over
/// files::kMaxProgramBytes, or invalid).
Program read_binary_file(const std::string& path);

/// Writes a .bin file atomically (support/files.hpp); InputError naming the path when it cannot
/// be written, is one of `inputs`, or the program does not encode.
void write_binary_file(const Program& program, const std::string& path,
                       const std::vector<std::string>& inputs = {});

}  // namespace tessel::isa
