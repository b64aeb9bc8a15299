// Descriptions of opcodes and fields: the element types of the tables generated from
// isa_table.yaml.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace tessel::isa {

/// How a field's bits are read.
enum class FieldType : std::uint8_t {
  kUnsigned,  ///< plain binary
  kSigned,    ///< two's complement
  kFlag,      ///< one bit, 0 or 1
  kEnum,      ///< unsigned code naming one of `enum_names`
};

/// One field of one opcode: where it lives and which values are legal.
struct FieldSpec {
  std::string_view name;
  int lsb = 0;    ///< bit offset inside the instruction (bit k = byte k/8, bit k%8)
  int width = 0;  ///< bits
  FieldType type = FieldType::kUnsigned;
  std::int64_t min_value = 0;  ///< legal range, inclusive (already within the encodable range)
  std::int64_t max_value = 0;
  const std::string_view* enum_names = nullptr;  ///< kEnum: names of codes 0..enum_count-1
  int enum_count = 0;
  std::string_view doc;  ///< one line; units included

  /// The name of enum code `code`, or "" when out of the enum's range.
  std::string_view enum_name(std::int64_t code) const {
    return code >= 0 && code < enum_count ? enum_names[code] : std::string_view();
  }
};

/// The engine code of an opcode whose engine is chosen by its `engine` field (nop).
inline constexpr int kEngineFromField = -1;

/// One opcode: its code, mnemonic, engine and fields (the common token flags first).
struct OpcodeSpec {
  std::uint8_t code = 0;
  std::string_view name;
  int engine = 0;  ///< an Engine code, or kEngineFromField
  const FieldSpec* fields_begin = nullptr;
  int field_count = 0;
  std::string_view doc;

  std::span<const FieldSpec> fields() const {
    return {fields_begin, static_cast<std::size_t>(field_count)};
  }
};

}  // namespace tessel::isa
