// Predecoder: the helper thread's loop and the fetch unit's wait for an entry.
#include "sim/core/predecoder.hpp"

#include <algorithm>
#include <variant>

namespace tessel::sim {

Predecoder::Predecoder(std::span<const isa::Word> program, const HwConfig& config,
                       const isa::TargetInfo& target, bool thread)
    : program_(program), config_(config), target_(target) {
  if (thread) {
    thread_ = std::thread([this] { run(); });
  } else {
    table_ = std::make_unique<DecodedInstruction[]>(program_.size());
  }
}

Predecoder::~Predecoder() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void Predecoder::run() {
  // Built here, not in the constructor: its pages are touched beside the simulation's thread.
  // Entries become visible to get() through ready_ (release/acquire), table_ with the first.
  table_ = std::make_unique<DecodedInstruction[]>(program_.size());
  for (std::size_t i = 0; i < program_.size(); ++i) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const bool last = decode_one(i);
    ready_.store(i + 1, std::memory_order_release);
    if (last) return;
  }
}

bool Predecoder::decode_one(std::size_t i) {
  DecodedInstruction& entry = table_[i];
  auto decoded = isa::decode(program_[i]);
  if (!decoded.ok()) {
    entry.decode_error = decoded.reason();
    return true;
  }
  entry.decoded = true;
  entry.instruction = std::move(decoded).value();
  if (auto problem = isa::validate(entry.instruction, target_)) {
    entry.invalid = true;
    entry.invalid_message = problem->message;
    for (const auto& access : isa::sram_accesses(entry.instruction, target_.matrix_rows,
                                                 target_.matrix_cols, target_.weight_bits))
      if (access.sp < target_.scratchpads.size() &&
          access.end > target_.scratchpads[access.sp].size_bytes)
        entry.out_of_bounds = true;
  } else {
    entry.fixed_cost_cycles = fixed_cost_cycles(entry.instruction, config_);
    entry.macs = mac_count(entry.instruction, config_);
    sram_traffic(entry.instruction, config_, traffic_);
    if (traffic_.size() > entry.sram.size()) {
      // sram_traffic() gained an operand: say so where it cannot go unseen.
      entry.invalid = true;
      entry.invalid_message = "simulator bug: more SRAM operands than Predecoder holds";
    }
    entry.sram_count = static_cast<std::uint8_t>(std::min(traffic_.size(), entry.sram.size()));
    std::copy_n(traffic_.begin(), entry.sram_count, entry.sram.begin());
  }
  return std::holds_alternative<isa::Finish>(entry.instruction);
}

const DecodedInstruction& Predecoder::get(std::size_t index) {
  if (!thread_.joinable()) {
    // No helper: decode on demand (fetch asks in order, each entry once).
    for (std::size_t i = ready_.load(std::memory_order_relaxed); i <= index; ++i) {
      decode_one(i);
      ready_.store(i + 1, std::memory_order_relaxed);
    }
    return table_[index];
  }
  // The helper thread is almost always ahead; when it is not (a descheduled thread on a busy
  // machine), give the core away rather than spin.
  while (ready_.load(std::memory_order_acquire) <= index) std::this_thread::yield();
  return table_[index];
}

}  // namespace tessel::sim
