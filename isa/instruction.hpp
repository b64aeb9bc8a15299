// Instructions of the Tessel ISA: typed structs, binary encode/decode and the context-free checks.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa_generated.hpp"  // generated from isa/isa_table.yaml
#include "isa/spec.hpp"
#include "support/result.hpp"

namespace tessel::isa {

/// One encoded instruction: kInstructionBytes bytes, bit k in byte k/8 at bit k%8.
using Word = std::array<std::uint8_t, kInstructionBytes>;

/// `softmax`'s table operand: exp_high[0..255] then exp_low[0..255], unsigned 16-bit entries
/// (docs/isa.md, "softmax").
inline constexpr std::int64_t kSoftmaxTableEntries = 512;
inline constexpr std::int64_t kSoftmaxTableBytes = 2 * kSoftmaxTableEntries;

/// `norm`'s parameter operand: the int64 epsilon term E, then per channel k the int32 G_k, the
/// int32 r_k and the int64 B_k (docs/isa.md, "norm").
inline constexpr std::int64_t kNormParamHeaderBytes = 8;
inline constexpr std::int64_t kNormParamChannelBytes = 16;
constexpr std::int64_t norm_param_bytes(std::int64_t channels) {
  return kNormParamHeaderBytes + kNormParamChannelBytes * channels;
}

/// Every opcode, in table order (the order of Instruction's alternatives).
std::span<const OpcodeSpec> opcode_specs();

/// The opcode with this code or mnemonic; nullptr when there is none.
const OpcodeSpec* find_opcode(std::uint8_t code);
const OpcodeSpec* find_opcode(std::string_view mnemonic);

/// The table entry of the instruction's opcode.
const OpcodeSpec& spec_of(const Instruction& instruction);
Opcode opcode_of(const Instruction& instruction);
std::string_view mnemonic(const Instruction& instruction);

/// The engine whose queue executes the instruction (nop: its `engine` field).
Engine engine_of(const Instruction& instruction);

/// The field values in table order (spec_of(x).fields()), as integers; enums and flags as codes.
std::vector<std::int64_t> field_values(const Instruction& instruction);

/// An instruction of opcode `spec` with its fields set from `values` (table order). Fails when a
/// value is outside its field's legal range ("field 'x_size' = 0 out of range [1, 4095]").
Result<Instruction> make_instruction(const OpcodeSpec& spec, std::span<const std::int64_t> values);

/// Every rule that needs no hardware config: each field within its legal range, token flags that
/// the engine has (load has no previous engine, store no next one), and the cross-field rules of
/// docs/isa.md (pad_value fits elem, a conv/pool input keeps at least one stored row and column,
/// pool padding smaller than the window, depthwise convs have ic_blocks = 1, lo <= hi, softmax's
/// mask_offset is 0 unless causal).
/// The message names the field: "field 'pop_prev' = 1: the load engine has no previous engine".
Status check(const Instruction& instruction);

/// The binary form; fails when check() fails.
Result<Word> encode(const Instruction& instruction);

/// The instruction a word holds. Fails with a message naming the problem: an unknown opcode
/// ("unknown opcode 0x2a"), a set reserved bit ("reserved bit 13 is set"), or a field check()
/// rejects.
Result<Instruction> decode(const Word& word);

/// Formats a field value as the assembler writes it: enum names, hex for addresses, decimal
/// otherwise.
std::string format_value(const FieldSpec& field, std::int64_t value);

}  // namespace tessel::isa
