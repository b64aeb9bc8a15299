// Predecoder: the helper thread's loop and the fetch unit's wait for an entry.
#include "sim/core/predecoder.hpp"

#include <variant>

namespace tessel::sim {

Predecoder::Predecoder(std::span<const isa::Word> program, const HwConfig& config,
                       const isa::TargetInfo& target)
    : program_(program), config_(config), target_(target), table_(program.size()) {
  thread_ = std::thread([this] { run(); });
}

Predecoder::~Predecoder() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

void Predecoder::run() {
  for (std::size_t i = 0; i < program_.size(); ++i) {
    if (stop_.load(std::memory_order_relaxed)) return;
    DecodedInstruction& entry = table_[i];
    auto decoded = isa::decode(program_[i]);
    bool last = false;
    if (!decoded.ok()) {
      entry.decode_error = decoded.reason();
      last = true;
    } else {
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
        sram_traffic(entry.instruction, config_, entry.sram);
      }
      last = std::holds_alternative<isa::Finish>(entry.instruction);
    }
    ready_.store(i + 1, std::memory_order_release);
    if (last) return;
  }
}

const DecodedInstruction& Predecoder::get(std::size_t index) const {
  // The helper thread is almost always ahead; when it is not (a descheduled thread on a busy
  // machine), give the core away rather than spin.
  while (ready_.load(std::memory_order_acquire) <= index) std::this_thread::yield();
  return table_[index];
}

}  // namespace tessel::sim
