// Predecoder: one word to one DecodedInstruction, and the messages of the faulting ones.
#include "sim/core/predecoder.hpp"

#include <algorithm>
#include <cstring>
#include <variant>

#include "sim/simulator.hpp"

namespace tessel::sim {

Predecoder::Predecoder(const HwConfig& config, const isa::TargetInfo& target)
    : config_(config), target_(target), cache_(kCacheEntries) {
  for (const auto& field : isa::find_opcode(static_cast<std::uint8_t>(isa::Opcode::kNop))->fields())
    if (field.name == "engine") nop_engine_ = &field;
}

std::size_t Predecoder::engine_of(const isa::Word& word) const {
  static_assert(
      isa::generated::kOpcodeField[0].lsb == 0 && isa::generated::kOpcodeField[0].width == 8,
      "the opcode is byte 0");
  const isa::OpcodeSpec* spec = isa::find_opcode(word[0]);
  if (spec == nullptr) return 0;
  if (spec->engine != isa::kEngineFromField) return static_cast<std::size_t>(spec->engine);
  if (nop_engine_ == nullptr) return 0;
  std::uint64_t bits = 0;
  for (int b = 0; b < nop_engine_->width; ++b) {
    const int bit = nop_engine_->lsb + b;
    bits |= std::uint64_t{(word[static_cast<std::size_t>(bit / 8)] >> (bit % 8)) & 1u} << b;
  }
  return bits < kEngineCount ? static_cast<std::size_t>(bits) : 0;
}

void Predecoder::decode(const isa::Word& word, DecodedInstruction& out) {
  // FNV-style multiply-xor over the word's 8-byte lanes.
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < word.size(); i += 8) {
    std::uint64_t lane = 0;
    std::memcpy(&lane, word.data() + i, std::min<std::size_t>(8, word.size() - i));
    hash = (hash ^ lane) * 0x100000001b3ull;
  }
  CacheEntry& entry = cache_[(hash ^ (hash >> 32)) & (kCacheEntries - 1)];
  if (entry.valid && entry.word == word) {
    out = entry.decoded;
    ++cache_hits_;
    return;
  }
  decode_uncached(word, out);
  entry.valid = true;
  entry.word = word;
  entry.decoded = out;
}

void Predecoder::decode_uncached(const isa::Word& word, DecodedInstruction& out) const {
  auto decoded = isa::decode(word);
  if (!decoded.ok()) {
    out = DecodedInstruction{};  // nothing of an earlier record is left (the cache copies it)
    out.status = DecodedInstruction::Status::kUndecodable;
    return;
  }
  out.instruction = std::move(decoded).value();
  const isa::Instruction& instruction = out.instruction;
  out.engine = static_cast<std::uint8_t>(isa::engine_of(instruction));
  std::visit(
      [&](const auto& x) {
        out.pop_prev = x.pop_prev;
        out.pop_next = x.pop_next;
        out.push_prev = x.push_prev;
        out.push_next = x.push_next;
      },
      instruction);
  out.is_finish = std::holds_alternative<isa::Finish>(instruction);
  out.fixed_cost_cycles = 0;
  out.macs = 0;
  out.vector = {};
  out.sram_count = 0;
  out.dma = {};
  if (isa::validate(instruction, target_)) {
    out.status = DecodedInstruction::Status::kIllegal;
    for (const auto& access : isa::sram_accesses(instruction, target_.matrix_rows,
                                                 target_.matrix_cols, target_.weight_bits))
      if (access.sp < target_.scratchpads.size() &&
          access.end > target_.scratchpads[access.sp].size_bytes)
        out.status = DecodedInstruction::Status::kOutOfBounds;
    return;
  }
  out.status = DecodedInstruction::Status::kOk;
  out.fixed_cost_cycles = fixed_cost_cycles(instruction, config_);
  out.macs = mac_count(instruction, config_);
  out.vector = vector_ops(instruction);
  out.dma = dma_walk(instruction);
  const std::size_t count = sram_traffic(instruction, config_, out.sram);
  if (count > out.sram.size()) {
    // sram_traffic() gained an operand: say so where it cannot go unseen.
    out.status = DecodedInstruction::Status::kIllegal;
  }
  out.sram_count = static_cast<std::uint8_t>(std::min(count, out.sram.size()));
}

std::string Predecoder::fault_message(const isa::Word& word,
                                      const DecodedInstruction& decoded) const {
  auto instruction = isa::decode(word);
  if (!instruction.ok()) return instruction.reason();
  if (auto problem = isa::validate(instruction.value(), target_)) return problem->message;
  if (decoded.status != DecodedInstruction::Status::kOk)
    return "simulator bug: more SRAM operands than Predecoder holds";
  return "";
}

}  // namespace tessel::sim
