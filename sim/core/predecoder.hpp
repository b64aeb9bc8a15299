// Predecoder: decodes and validates one program word at dispatch into the compact record the
// timing model reads (token flags, fixed cost, MACs, SRAM traffic, the DMA walk).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "isa/target.hpp"
#include "sim/core/costs.hpp"
#include "sim/dram/dram_model.hpp"

namespace tessel::sim {

/// One program word, decoded, with everything the simulator needs of it that is a pure
/// function of the word and the config (so computing it at dispatch cannot change a cycle or a
/// byte). Holds no strings: a fault re-derives its message from the word (Predecoder).
struct DecodedInstruction {
  /// Why the instruction may not run: kOk, or the fault it raises (at fetch for kUndecodable,
  /// at its start for kIllegal and kOutOfBounds).
  enum class Status : std::uint8_t { kOk, kUndecodable, kIllegal, kOutOfBounds };

  Status status = Status::kOk;
  std::uint8_t engine = 0;  ///< isa::Engine code of the queue that runs it
  bool pop_prev = false, pop_next = false, push_prev = false, push_next = false;
  bool is_finish = false;
  std::uint8_t sram_count = 0;          ///< entries of `sram` in use
  std::uint64_t fixed_cost_cycles = 0;  ///< f - s of a non-DMA instruction (docs/timing.md)
  std::uint64_t macs = 0;
  VectorOps vector;  ///< vector_ops() of the instruction
  DmaWalk dma;       ///< load/store: its DRAM requests (dma.rows == 0 for every other instruction)
  /// sram_traffic() of the instruction: at most 4 entries (a conv's input, weights, bias,
  /// accumulators), held in place to spare an allocation per instruction.
  std::array<SramTraffic, 4> sram{};
  isa::Instruction instruction;  ///< when decoded (the datapath's and the trace's input)

  bool ok() const { return status == Status::kOk; }
  std::span<const SramTraffic> sram_traffic() const { return {sram.data(), sram_count}; }
};

/// Decodes program words one at a time, in dispatch order: fetch decodes the instruction it
/// dispatches straight into the engine queue's entry. isa::decode and isa::validate allocate
/// nothing unless they fail. The record is a pure function of the word (and the config), and a
/// program repeats most of its words (the tiles of a fused group run the same instructions on
/// the same addresses, or alternate between two buffers: ResNet-50's 27,553 words on npc19 are
/// 3,614 distinct), so the last record of each of kCacheEntries slots (direct mapped by a hash
/// of the word) is copied instead of decoding the word again.
class Predecoder {
 public:
  Predecoder(const HwConfig& config, const isa::TargetInfo& target);

  /// Fills `out` from `word`: from the cache when its slot holds the same word, else by
  /// decode_uncached (the slot then holds this word's record).
  void decode(const isa::Word& word, DecodedInstruction& out);

  /// Fills `out` from `word`, decoding it (what the cache holds; tests compare the two).
  void decode_uncached(const isa::Word& word, DecodedInstruction& out) const;

  /// Decodes answered from the cache so far.
  std::uint64_t cache_hits() const { return cache_hits_; }

  /// The engine (isa::Engine code) whose queue runs `word`'s instruction if the word decodes:
  /// its opcode's engine, or a nop's `engine` field. 0 for a word that cannot decode.
  std::size_t engine_of(const isa::Word& word) const;

  /// The messages of a faulting record, re-derived from its word: isa::decode's reason for
  /// kUndecodable, isa::validate's message for kIllegal and kOutOfBounds.
  std::string fault_message(const isa::Word& word, const DecodedInstruction& decoded) const;

 private:
  const HwConfig& config_;
  const isa::TargetInfo& target_;
  const isa::FieldSpec* nop_engine_ = nullptr;        // the nop's `engine` field
  static constexpr std::size_t kCacheEntries = 1024;  // a power of 2
  struct CacheEntry {
    bool valid = false;
    isa::Word word{};
    DecodedInstruction decoded;
  };
  std::vector<CacheEntry> cache_;  // kCacheEntries
  std::uint64_t cache_hits_ = 0;
};

}  // namespace tessel::sim
