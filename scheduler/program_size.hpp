// The size of the program code generation will emit for a schedule (issue 35 item 6): its
// instruction count, and so the DRAM bytes the accelerator reads to fetch it, from the
// schedule alone (docs/energy.md "Instruction fetch").
#pragma once

#include <cstdint>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// The instructions codegen::compile emits for `schedule` of `net` on `machine`: every group's
/// mapping walked through the one step enumeration (nest_steps of derive_mapping) with the
/// lowering's counts per step (weight DMAs as the lowering merges contiguous blocks, activation
/// loads, each op kind's instructions per tile or slice, halo copies, the token protocol's
/// nops and barriers, the final drain and `finish`). Exact where code generation succeeds; the
/// equality with the compiled program is tested (tests/codegen/e2e_check.hpp, the zoo matrix).
/// Fails naming the group and op for an op kind code generation does not lower.
Result<int64_t> predict_instructions(const Net& net, const Machine& machine,
                                     const Schedule& schedule);

/// predict_instructions x the instruction width (isa::kInstructionBytes): the DRAM bytes of
/// instruction fetch, what the simulator counts as its `instructions` traffic.
Result<int64_t> predict_instruction_fetch_bytes(const Net& net, const Machine& machine,
                                                const Schedule& schedule);

}  // namespace tessel::sched
