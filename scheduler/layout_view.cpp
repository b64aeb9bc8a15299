// Layout views: which Transposes and Reshapes of an activation move no byte in the
// accelerator's pixel-major, channels-innermost layout.
#include "scheduler/layout_view.hpp"

#include <string>

namespace tessel::sched {

namespace {

int64_t product(const ir::Shape& shape, size_t first, size_t last) {
  int64_t p = 1;
  for (size_t i = first; i < last; ++i) p *= shape[i];
  return p;
}

}  // namespace

int64_t default_channel_axis(size_t rank) {
  if (rank == 4) return 1;
  return rank == 0 ? 0 : static_cast<int64_t>(rank) - 1;
}

Result<Shape3> layout_shape(const ir::Shape& shape, int64_t channel_axis) {
  const auto rank = static_cast<int64_t>(shape.size());
  if (channel_axis < 0 || channel_axis >= rank)
    return fail("channel axis " + std::to_string(channel_axis) + " of a tensor " +
                ir::shape_string(shape));
  std::vector<int64_t> pixels;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == channel_axis) continue;
    if (i == 0 && rank >= 3) {
      if (shape[0] != 1)
        return fail("tensor " + ir::shape_string(shape) + ": batch " + std::to_string(shape[0]) +
                    " is not 1");
      continue;
    }
    pixels.push_back(shape[static_cast<size_t>(i)]);
  }
  if (pixels.size() > 2)
    return fail("tensor " + ir::shape_string(shape) + " with channels at axis " +
                std::to_string(channel_axis) + " has more than two pixel axes");
  const int64_t c = shape[static_cast<size_t>(channel_axis)];
  if (pixels.empty()) return Shape3{c, 1, 1};
  if (pixels.size() == 1) return Shape3{c, pixels[0], 1};
  return Shape3{c, pixels[0], pixels[1]};
}

Result<Shape3> activation_shape(const ir::Shape& shape, std::optional<int64_t> channel_axis) {
  if (shape.empty()) return fail("the tensor has no shape");
  // A 2-D [N, K] tensor (a Gemm's rows: a classifier's one, or a transformer's tokens) is K
  // channels of N pixels; a 3-D [1, S, d] token tensor d channels of S
  // (docs/scheduler-transformers.md "Transformers"): row-major in DRAM either way, as NHWC is. [B,
  // S, d] tokens (channels last) are B * S rows in DRAM, sequence after sequence: per-token ops
  // (Linears, norms, adds) need no more; ops that mix tokens see the sequences through row slices
  // (a batched decode step, docs/scheduler-transformers.md "Decode"), and the head views refuse B
  // > 1.
  if (shape.size() == 3 && channel_axis.value_or(2) == 2)
    return Shape3{shape[2], shape[0] * shape[1], 1};
  if (shape.size() >= 2 && shape.size() <= 4)
    return layout_shape(shape, channel_axis.value_or(default_channel_axis(shape.size())));
  if (shape[0] != 1)
    return fail("tensor " + ir::shape_string(shape) + ": batch " + std::to_string(shape[0]) +
                " is not 1");
  return Shape3{product(shape, 1, shape.size()), 1, 1};
}

bool broadcasts_per_channel(const ir::Shape& constant, const ir::Shape& x, int64_t channel_axis) {
  const auto k = static_cast<size_t>(channel_axis);
  if (constant.size() > x.size() || k >= x.size() || constant.size() + k < x.size()) return false;
  for (size_t i = 0; i < constant.size(); ++i) {
    const size_t axis = x.size() - constant.size() + i;
    if (constant[i] != (axis == k ? x[k] : 1)) return false;
  }
  return true;
}

std::optional<int64_t> transpose_channel_axis(const ir::Shape& in, int64_t channel_axis,
                                              const std::vector<int64_t>& perm) {
  if (perm.size() != in.size()) return std::nullopt;
  int64_t last_pixel = -1;  // the input axis of the last pixel axis met in the output's order
  std::optional<int64_t> out_axis;
  for (size_t j = 0; j < perm.size(); ++j) {
    const int64_t axis = perm[j];
    if (axis < 0 || axis >= static_cast<int64_t>(in.size())) return std::nullopt;
    if (axis == channel_axis) {
      out_axis = static_cast<int64_t>(j);
      continue;
    }
    if (in[static_cast<size_t>(axis)] == 1) continue;  // an axis of one moves nothing
    if (axis < last_pixel) return std::nullopt;
    last_pixel = axis;
  }
  return out_axis;
}

std::optional<int64_t> reshape_channel_axis(const ir::Shape& in, int64_t channel_axis,
                                            const ir::Shape& out) {
  if (channel_axis < 0 || channel_axis >= static_cast<int64_t>(in.size())) return std::nullopt;
  const auto k = static_cast<size_t>(channel_axis);
  const int64_t before = product(in, 0, k), channels = in[k];
  if (product(in, 0, in.size()) != product(out, 0, out.size())) return std::nullopt;
  for (size_t j = 0; j < out.size(); ++j) {
    const int64_t p = product(out, 0, j);
    if (p > before) break;
    if (p == before && out[j] == channels) return static_cast<int64_t>(j);
  }
  return std::nullopt;
}

}  // namespace tessel::sched
