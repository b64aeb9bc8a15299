// Layout views: Transposes and Reshapes that move no byte in the accelerator's activation layout
// (pixel-major, channels innermost), whatever the IR's axis order (docs/scheduler.md "Layout
// views").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/tensor.hpp"
#include "scheduler/net.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// The IR axis that holds an activation's channels when nothing says otherwise: 1 of a 4-D
/// NCHW tensor, the last of a 2-D [N, K] or 3-D [1, S, d] token tensor (and of any other rank).
int64_t default_channel_axis(size_t rank);

/// The C x H x W that an IR `shape` whose channels sit at `channel_axis` is stored as: C the
/// channel axis, the pixels every other axis in order (a leading batch of 1 left out from rank
/// 3 up), at most two of them. Fails naming the shape when the batch is not 1 or three pixel
/// axes remain.
Result<Shape3> layout_shape(const ir::Shape& shape, int64_t channel_axis);

/// The C x H x W of an activation of IR `shape`: `layout_shape` at `channel_axis` (by default
/// the rank's) for ranks 2 to 4, except a 3-D token tensor [B, S, d] with its channels last,
/// which is B * S rows of d channels (a batch of decode steps); any other rank is its elements
/// as channels of one pixel (a classifier's vector). Fails for a tensor without a shape or with
/// a batch other than 1.
Result<Shape3> activation_shape(const ir::Shape& shape, std::optional<int64_t> channel_axis);

/// Whether a constant of `constant` shape, broadcast (right-aligned, as ONNX does) against an
/// activation `x` with channels at `channel_axis`, holds one value per channel: every axis 1
/// but the channel axis, which it covers whole.
bool broadcasts_per_channel(const ir::Shape& constant, const ir::Shape& x, int64_t channel_axis);

/// The channel axis of `perm` applied to `in` (channels at `channel_axis`) when the permutation
/// moves no byte: every other axis longer than 1 keeps its order (the pixels stay row-major;
/// only where the channels sit in the IR shape changes). nullopt when it reorders pixels.
std::optional<int64_t> transpose_channel_axis(const ir::Shape& in, int64_t channel_axis,
                                              const std::vector<int64_t>& perm);

/// The channel axis of a Reshape of `in` (channels at `channel_axis`) to `out` when it moves
/// no byte: the channel axis stays one axis of the same extent, and the axes before it (and
/// so those after it) hold as many elements as before; only pixel axes merge or split.
/// nullopt otherwise.
std::optional<int64_t> reshape_channel_axis(const ir::Shape& in, int64_t channel_axis,
                                            const ir::Shape& out);

}  // namespace tessel::sched
