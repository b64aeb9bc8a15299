// (internal) The geometry the graph IR -> Net converter (from_ir.cpp and its parts) reads off
// the graph IR: a tensor's C x H x W view, the space-to-depth rewrite of a stem conv, a constant
// operand's broadcast strides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "compiler/ir/graph.hpp"
#include "scheduler/net.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// The space-to-depth rewrite of a stride-f conv (f >= 2 on both axes) of `w`, `groups` over an
/// input of `in`
/// (docs/scheduler.md, "Space-to-depth stem"), when it applies and takes fewer matrix steps
/// per output pixel and column block (input-channel blocks x taps); nullopt otherwise.
/// `out_h`/`out_w`: the conv's output size; `rows`: the matrix rows.
std::optional<std::pair<Window, SpaceToDepthConv>> space_to_depth_rewrite(
    const Window& w, int64_t groups, Shape3 in, int64_t out_h, int64_t out_w, int64_t rows);

/// The element strides (rows, columns) of a constant of shape `constant` broadcast against an
/// activation of IR shape `y` (channels its last axis, rows the one before; `head_pixels`:
/// columns the axis before that, the heads): a broadcast axis has stride 0. Fails with the
/// reason (completing "the constant 'c' ...") when it does not broadcast, varies along another
/// axis or is not whole along the channels.
Result<std::pair<int64_t, int64_t>> constant_strides(const ir::Shape& constant, const ir::Shape& y,
                                                     bool head_pixels);

}  // namespace tessel::sched
