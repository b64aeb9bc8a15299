// Predecoder: decodes and validates a program's instructions on a helper thread, ahead of the
// fetch unit, with the per-instruction figures that depend only on the instruction and config.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "isa/target.hpp"
#include "sim/core/costs.hpp"

namespace tessel::sim {

/// One program word, decoded, with what the simulator needs of it that is a pure function of
/// the instruction and the config (so computing it early cannot change a cycle or a byte).
struct DecodedInstruction {
  bool decoded = false;  ///< false: an undecodable word (`decode_error` says why)
  std::string decode_error;
  isa::Instruction instruction;  ///< when decoded
  /// isa::validate's verdict against the config: empty when the instruction may run.
  std::string invalid_message;
  bool invalid = false;
  bool out_of_bounds = false;  ///< invalid because an operand leaves its scratchpad
  std::uint64_t fixed_cost_cycles = 0;
  std::uint64_t macs = 0;
  /// sram_traffic() of the instruction: at most 4 entries (a conv's input, weights, bias,
  /// accumulators), held in place to spare an allocation per instruction.
  std::array<SramTraffic, 4> sram{};
  std::uint8_t sram_count = 0;

  std::span<const SramTraffic> sram_traffic() const { return {sram.data(), sram_count}; }
};

/// Decodes `program` in order on its own thread into a table the simulation reads entry by
/// entry (get(i) waits until entry i is ready). It stops after `finish` or an undecodable word
/// (fetch never reads past either) and when destroyed. One thread beside the simulation's.
class Predecoder {
 public:
  /// With `thread` false there is no helper: get() decodes up to the entry it is asked for
  /// on the calling thread (the same entries, computed on demand).
  Predecoder(std::span<const isa::Word> program, const HwConfig& config,
             const isa::TargetInfo& target, bool thread = true);
  ~Predecoder();
  Predecoder(const Predecoder&) = delete;
  Predecoder& operator=(const Predecoder&) = delete;

  /// Entry `index` (< program size), once the helper thread has written it.
  const DecodedInstruction& get(std::size_t index);

 private:
  void run();
  /// Writes entry `index`; returns whether decoding stops after it (finish, undecodable).
  bool decode_one(std::size_t index);

  std::span<const isa::Word> program_;
  const HwConfig& config_;
  const isa::TargetInfo& target_;
  std::unique_ptr<DecodedInstruction[]> table_;  // allocated by the helper thread
  std::vector<SramTraffic> traffic_;             // the helper thread's sram_traffic buffer
  std::atomic<std::size_t> ready_{0};            // entries [0, ready_) are written
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tessel::sim
