// Binary encode/decode of instructions and the checks that need no hardware config.
#include "isa/instruction.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

namespace tessel::isa {
namespace {

constexpr int kLanes = kInstructionBits / 64;
using Lanes = std::array<std::uint64_t, kLanes>;

static_assert(std::variant_size_v<Instruction> == std::size(generated::kOpcodeSpecs),
              "Instruction's alternatives follow the opcode table");

Lanes to_lanes(const Word& word) {
  Lanes lanes{};
  if constexpr (std::endian::native == std::endian::little) {
    static_assert(sizeof(Lanes) == sizeof(Word));
    std::memcpy(lanes.data(), word.data(), sizeof lanes);  // byte k of lane j is word[8j + k]
  } else {
    for (int i = 0; i < kInstructionBytes; ++i)
      lanes[static_cast<std::size_t>(i / 8)] |= std::uint64_t{word[static_cast<std::size_t>(i)]}
                                                << (8 * (i % 8));
  }
  return lanes;
}

Word to_word(const Lanes& lanes) {
  Word word{};
  for (int i = 0; i < kInstructionBytes; ++i)
    word[static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>(lanes[static_cast<std::size_t>(i / 8)] >> (8 * (i % 8)));
  return word;
}

constexpr std::uint64_t mask_of(int width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

[[gnu::always_inline]] constexpr std::uint64_t extract(const Lanes& lanes, int lsb, int width) {
  const auto lane = static_cast<std::size_t>(lsb / 64);
  const int offset = lsb % 64;
  std::uint64_t bits = lanes[lane] >> offset;
  if (offset + width > 64) bits |= lanes[lane + 1] << (64 - offset);
  return bits & mask_of(width);
}

constexpr void deposit(Lanes& lanes, int lsb, int width, std::uint64_t bits) {
  bits &= mask_of(width);
  const auto lane = static_cast<std::size_t>(lsb / 64);
  const int offset = lsb % 64;
  lanes[lane] |= bits << offset;
  if (offset + width > 64) lanes[lane + 1] |= bits >> (64 - offset);
}

/// Bits owned by some field of each opcode (opcode and token flags included), in table order.
constexpr auto kUsedBits = [] {
  std::array<Lanes, std::size(generated::kOpcodeSpecs)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    deposit(out[i], generated::kOpcodeField[0].lsb, generated::kOpcodeField[0].width, ~0ULL);
    const OpcodeSpec& spec = generated::kOpcodeSpecs[i];
    for (int f = 0; f < spec.field_count; ++f)
      deposit(out[i], spec.fields_begin[f].lsb, spec.fields_begin[f].width, ~0ULL);
  }
  return out;
}();

template <std::size_t... I>
Instruction default_of(std::size_t index, std::index_sequence<I...>) {
  Instruction out;
  ((index == I ? (out.template emplace<I>(), 0) : 0), ...);
  return out;
}

std::string range_error(const FieldSpec& field, std::int64_t value);

/// Alternative I of Instruction with every field read from `lanes` (sign-extended where
/// signed) and checked against its legal range; the first field out of range fails as
/// make_instruction() words it. One instance per opcode, so each field's position, width and
/// range are constants: decode runs once per simulated instruction.
template <std::size_t I>
Result<Instruction> decode_fields(const Lanes& lanes) {
  Instruction out(std::in_place_index<I>);
  const FieldSpec* bad = nullptr;
  std::int64_t bad_value = 0;
  // Inlined field by field, so that each field's position, width and range fold to constants.
  for_each_field(
      std::get<I>(out), [&](const FieldSpec& field, auto& member) __attribute__((always_inline)) {
        const std::uint64_t bits = extract(lanes, field.lsb, field.width);
        std::int64_t value = static_cast<std::int64_t>(bits);
        if (field.type == FieldType::kSigned && (bits >> (field.width - 1)) != 0)
          value -= std::int64_t{1} << field.width;
        if (value < field.min_value || value > field.max_value) {
          if (bad == nullptr) {
            bad = &field;
            bad_value = value;
          }
          return;
        }
        member = static_cast<std::remove_reference_t<decltype(member)>>(value);
      });
  if (bad != nullptr) return fail(range_error(*bad, bad_value));
  return out;
}

template <std::size_t... I>
constexpr auto field_decoders(std::index_sequence<I...>) {
  return std::array<Result<Instruction> (*)(const Lanes&), sizeof...(I)>{&decode_fields<I>...};
}

/// decode_fields<I>, indexed by the opcode's position in the table.
constexpr auto kFieldDecoders =
    field_decoders(std::make_index_sequence<std::size(generated::kOpcodeSpecs)>{});

std::string range_error(const FieldSpec& field, std::int64_t value) {
  return "field '" + std::string(field.name) + "' = " + format_value(field, value) +
         " out of range [" + format_value(field, field.min_value) + ", " +
         format_value(field, field.max_value) + "]";
}

std::string field_error(std::string_view name, std::int64_t value, const std::string& why) {
  return "field '" + std::string(name) + "' = " + std::to_string(value) + ": " + why;
}

/// Inclusive range of values an element type holds.
std::pair<std::int64_t, std::int64_t> elem_range(Elem elem) {
  switch (elem) {
    case Elem::kI8:
      return {-128, 127};
    case Elem::kI16:
      return {-32768, 32767};
    case Elem::kI32:
      break;
  }
  return {-2147483648LL, 2147483647LL};
}

/// Rows (or columns) of the stored input a window op reads: the padded extent minus the pads.
std::int64_t stored_extent(std::int64_t out, std::int64_t stride, std::int64_t kernel,
                           std::int64_t dilation, std::int64_t pad_before, std::int64_t pad_after) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - pad_before - pad_after;
}

Status check_tokens(const Instruction& instruction) {
  const Engine engine = engine_of(instruction);
  bool pop_prev = false, pop_next = false, push_prev = false, push_next = false;
  std::visit(
      [&](const auto& x) {
        pop_prev = x.pop_prev;
        pop_next = x.pop_next;
        push_prev = x.push_prev;
        push_next = x.push_next;
      },
      instruction);
  if (engine == Engine::kLoad) {
    if (pop_prev) return fail(field_error("pop_prev", 1, "the load engine has no previous engine"));
    if (push_prev)
      return fail(field_error("push_prev", 1, "the load engine has no previous engine"));
  }
  if (engine == Engine::kStore) {
    if (pop_next) return fail(field_error("pop_next", 1, "the store engine has no next engine"));
    if (push_next) return fail(field_error("push_next", 1, "the store engine has no next engine"));
  }
  return {};
}

Status check_window(std::string_view axis_pad, std::int64_t out, std::int64_t stride,
                    std::int64_t kernel, std::int64_t dilation, std::int64_t pad_before,
                    std::int64_t pad_after) {
  const std::int64_t stored = stored_extent(out, stride, kernel, dilation, pad_before, pad_after);
  if (stored < 1)
    return fail(field_error(axis_pad, pad_after,
                            "the padding leaves " + std::to_string(stored) +
                                " stored input rows/columns (at least 1 needed)"));
  return {};
}

Status check_rules(const Instruction& instruction) {
  if (auto status = check_tokens(instruction); !status) return status;
  return std::visit(
      [](const auto& x) -> Status {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Load>) {
          const auto [lo, hi] = elem_range(x.elem);
          if (x.pad_value < lo || x.pad_value > hi)
            return fail(field_error(
                "pad_value", x.pad_value,
                "does not fit elem " + std::string(kElemNames[static_cast<int>(x.elem)])));
        } else if constexpr (std::is_same_v<T, Conv>) {
          if (x.depthwise && x.ic_blocks != 1)
            return fail(field_error("ic_blocks", x.ic_blocks, "must be 1 when depthwise = 1"));
          // The input shift leaves at least 2 bits of the input (docs/quantization.md): at most
          // 6 for int8, 14 for int16.
          if (x.elem == Elem::kI8 && x.in_shift > 6)
            return fail(field_error("in_shift", x.in_shift,
                                    "must be at most 6 when elem = i8 (2 bits of the input "
                                    "left)"));
          if (auto s = check_window("pad_bottom", x.out_h, x.stride_h, x.kh, x.dil_h, x.pad_top,
                                    x.pad_bottom);
              !s)
            return s;
          if (auto s = check_window("pad_right", x.out_w, x.stride_w, x.kw, x.dil_w, x.pad_left,
                                    x.pad_right);
              !s)
            return s;
        } else if constexpr (std::is_same_v<T, Reduce>) {
          // An int16 row's squares leave int32 from two elements on (2 * 32768^2 = 2^31); an
          // int8 row's stay inside for every c_size (65535 * 128^2 < 2^30).
          if (x.mode == ReduceMode::kSumsq && x.elem != Elem::kI8)
            return fail(field_error("elem", static_cast<std::int64_t>(x.elem),
                                    "must be i8 when mode = sumsq (int16 squares overflow int32)"));
        } else if constexpr (std::is_same_v<T, Matmul>) {
          // The golden executor's operand shift leaves at least 2 bits of each operand
          // (intops::matmul_operand_shift): at most 6 for int8, 14 for int16.
          if (x.elem == Elem::kI8 && x.operand_shift > 6)
            return fail(field_error("operand_shift", x.operand_shift,
                                    "must be at most 6 when elem = i8 (2 bits of each operand "
                                    "left)"));
        } else if constexpr (std::is_same_v<T, Softmax>) {
          // A mask offset without the causal mask would be silently ignored: a bad mask.
          if (!x.causal && x.mask_offset != 0)
            return fail(field_error("mask_offset", x.mask_offset, "must be 0 unless causal = 1"));
        } else if constexpr (std::is_same_v<T, Vcfg>) {
          if (x.lo > x.hi)
            return fail(field_error("hi", x.hi, "below lo = " + std::to_string(x.lo)));
        } else if constexpr (std::is_same_v<T, Pool>) {
          const std::pair<std::string_view, std::pair<std::uint32_t, std::uint32_t>> pads[] = {
              {"pad_top", {x.pad_top, x.kh}},
              {"pad_bottom", {x.pad_bottom, x.kh}},
              {"pad_left", {x.pad_left, x.kw}},
              {"pad_right", {x.pad_right, x.kw}}};
          for (const auto& [name, pad_kernel] : pads)
            if (pad_kernel.first >= pad_kernel.second)
              return fail(field_error(
                  name, pad_kernel.first,
                  "must be smaller than the window (" + std::to_string(pad_kernel.second) + ")"));
          if (auto s =
                  check_window("pad_bottom", x.out_h, x.stride_h, x.kh, 1, x.pad_top, x.pad_bottom);
              !s)
            return s;
          if (auto s =
                  check_window("pad_right", x.out_w, x.stride_w, x.kw, 1, x.pad_left, x.pad_right);
              !s)
            return s;
        }
        return {};
      },
      instruction);
}

}  // namespace

std::span<const OpcodeSpec> opcode_specs() {
  return generated::kOpcodeSpecs;
}

const OpcodeSpec* find_opcode(std::uint8_t code) {
  for (const auto& spec : generated::kOpcodeSpecs)
    if (spec.code == code) return &spec;
  return nullptr;
}

const OpcodeSpec* find_opcode(std::string_view mnemonic_text) {
  for (const auto& spec : generated::kOpcodeSpecs)
    if (spec.name == mnemonic_text) return &spec;
  return nullptr;
}

const OpcodeSpec& spec_of(const Instruction& instruction) {
  return generated::kOpcodeSpecs[instruction.index()];
}

Opcode opcode_of(const Instruction& instruction) {
  return static_cast<Opcode>(spec_of(instruction).code);
}

std::string_view mnemonic(const Instruction& instruction) {
  return spec_of(instruction).name;
}

Engine engine_of(const Instruction& instruction) {
  if (const auto* nop = std::get_if<Nop>(&instruction)) return nop->engine;
  return static_cast<Engine>(spec_of(instruction).engine);
}

std::vector<std::int64_t> field_values(const Instruction& instruction) {
  std::vector<std::int64_t> values;
  std::visit(
      [&](const auto& x) {
        for_each_field(x, [&](const FieldSpec&, const auto& member) {
          values.push_back(static_cast<std::int64_t>(member));
        });
      },
      instruction);
  return values;
}

Result<Instruction> make_instruction(const OpcodeSpec& spec, std::span<const std::int64_t> values) {
  const auto index = static_cast<std::size_t>(&spec - generated::kOpcodeSpecs);
  if (index >= std::size(generated::kOpcodeSpecs) ||
      values.size() != static_cast<std::size_t>(spec.field_count))
    return fail("internal: " + std::string(spec.name) + " takes " +
                std::to_string(spec.field_count) + " field values, got " +
                std::to_string(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const FieldSpec& field = spec.fields()[i];
    if (values[i] < field.min_value || values[i] > field.max_value)
      return fail(range_error(field, values[i]));
  }
  Instruction out =
      default_of(index, std::make_index_sequence<std::size(generated::kOpcodeSpecs)>{});
  std::visit(
      [&](auto& x) {
        std::size_t i = 0;
        for_each_field(x, [&](const FieldSpec&, auto& member) {
          member = static_cast<std::remove_reference_t<decltype(member)>>(values[i++]);
        });
      },
      out);
  return out;
}

Status check(const Instruction& instruction) {
  Status status;
  std::visit(
      [&](const auto& x) {
        for_each_field(x, [&](const FieldSpec& field, const auto& member) {
          const auto value = static_cast<std::int64_t>(member);
          if (status && (value < field.min_value || value > field.max_value))
            status = fail(range_error(field, value));
        });
      },
      instruction);
  if (!status) return status;
  return check_rules(instruction);
}

Result<Word> encode(const Instruction& instruction) {
  if (auto status = check(instruction); !status) return status.failure();
  Lanes lanes{};
  const auto& opcode = generated::kOpcodeField[0];
  deposit(lanes, opcode.lsb, opcode.width, spec_of(instruction).code);
  std::visit(
      [&](const auto& x) {
        for_each_field(x, [&](const FieldSpec& field, const auto& member) {
          deposit(lanes, field.lsb, field.width,
                  static_cast<std::uint64_t>(static_cast<std::int64_t>(member)));
        });
      },
      instruction);
  return to_word(lanes);
}

Result<Instruction> decode(const Word& word) {
  const Lanes lanes = to_lanes(word);
  const auto& opcode_field = generated::kOpcodeField[0];
  const auto code = extract(lanes, opcode_field.lsb, opcode_field.width);
  const OpcodeSpec* spec = find_opcode(static_cast<std::uint8_t>(code));
  if (spec == nullptr) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%02llx", static_cast<unsigned long long>(code));
    return fail(std::string("unknown opcode ") + text);
  }
  const auto index = static_cast<std::size_t>(spec - generated::kOpcodeSpecs);
  const Lanes& used = kUsedBits[index];
  for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
    // A whole lane at once; the lowest set reserved bit is the one reported.
    if (const std::uint64_t reserved = lanes[lane] & ~used[lane]; reserved != 0) {
      const int bit = static_cast<int>(lane) * 64 + std::countr_zero(reserved);
      return fail("reserved bit " + std::to_string(bit) + " is set (" + std::string(spec->name) +
                  " does not use it)");
    }
  }
  auto made = kFieldDecoders[index](lanes);
  if (!made) return made;
  if (auto status = check_rules(made.value()); !status) return status.failure();
  return made;
}

std::string format_value(const FieldSpec& field, std::int64_t value) {
  if (field.type == FieldType::kEnum) {
    const auto name = field.enum_name(value);
    if (!name.empty()) return std::string(name);
    return std::to_string(value);
  }
  const bool is_address = field.name.size() > 5 && field.name.ends_with("_addr");
  if (is_address && value >= 0) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
  }
  return std::to_string(value);
}

}  // namespace tessel::isa
