// The actions a group's schedule performs, counted from its tiles the way code generation emits
// them (docs/energy.md, "Counted, not guessed"): the simulator's counts, predicted.
#pragma once

#include "configs/energy_model.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/schedule.hpp"

namespace tessel::sched {

/// The counts of one group (cycles left 0): the matrix unit's MAC slots (padded to the array as
/// the simulator counts them), SRAM bytes read and written per scratchpad (config order, sized
/// `scratchpads`), the vector unit's element operations (requant, add incl. copies and ReLU,
/// pool window positions) and its DRAM bytes (the schedule's traffic; instruction fetch is not
/// the schedule's). Tiles as codegen walks them: channel parts outermost, halo rows copied in
/// cache mode, kept inputs and slices loaded once, weights padded to whole input-channel blocks.
/// Whether count_group_actions counts an op of this kind as the instructions codegen emits for
/// it (every kind since the transformer kinds were added: matmul, norm, rowsoftmax). A kind
/// added to OpKind must be listed here (the switch has no default), so that the prediction
/// names it (ScheduleEnergy::unmodelled_kinds) until it is counted.
bool counts_kind(OpKind kind);

ActionCounts count_group_actions(const Net& net, const Machine& machine, const GroupSchedule& group,
                                 size_t scratchpads);

}  // namespace tessel::sched
