// Builds the ISA's TargetInfo from a HwConfig (the only place isa meets configs).
#pragma once

#include "configs/hw_config.hpp"
#include "isa/target.hpp"
#include "isa/timing.hpp"

namespace tessel::isa {

/// Scratchpads (ids in file order, sizes, kinds) and matrix shape of `config`.
TargetInfo target_from_config(const HwConfig& config);

/// The numbers docs/timing.md's compute formulas use.
timing::ComputeParams compute_params_from_config(const HwConfig& config);

/// The scratchpad names in id order (for the disassembler).
std::vector<std::string> scratchpad_names(const HwConfig& config);

}  // namespace tessel::isa
