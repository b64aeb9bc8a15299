// The geometry from_ir.cpp reads off the graph IR (from_ir_shapes.hpp).
#include "scheduler/from_ir_shapes.hpp"

#include <vector>

#include "support/int_ops.hpp"

namespace tessel::sched {

// The space-to-depth rewrite of a stride-f conv over an input of `in` (docs/scheduler.md,
// "Space-to-depth stem"), when it applies and takes fewer matrix steps per output pixel and
// column block (input-channel blocks x taps); nullopt otherwise. `out_h`/`out_w`: the conv's
// output size. Fills the rewritten window and the record of the original.
std::optional<std::pair<Window, SpaceToDepthConv>> space_to_depth_rewrite(
    const Window& w, int64_t groups, Shape3 in, int64_t out_h, int64_t out_w, int64_t rows) {
  const int64_t f = w.stride_h;
  if (groups != 1 || f < 2 || w.stride_w != f || w.dilation_h != 1 || w.dilation_w != 1 ||
      in.h % f != 0 || in.w % f != 0 || rows < 1)
    return std::nullopt;
  // Original row f oy - pad_top + ky = f (oy - pad_top') + (ky + shift) with shift =
  // -pad_top mod f and pad_top' = (pad_top + shift) / f: s2d row oy - pad_top' + (ky + shift) / f,
  // phase (ky + shift) % f.
  const int64_t shift_h = (f - w.pad_top % f) % f, shift_w = (f - w.pad_left % f) % f;
  SpaceToDepthConv s2d{in.c, w.kernel_h, w.kernel_w, shift_h, shift_w, f};
  Window out;
  out.kernel_h = (w.kernel_h - 1 + shift_h) / f + 1;
  out.kernel_w = (w.kernel_w - 1 + shift_w) / f + 1;
  out.pad_top = (w.pad_top + shift_h) / f;
  out.pad_left = (w.pad_left + shift_w) / f;
  // The last output reads s2d row out_h - 1 - pad_top' + kernel' - 1; beyond in.h / f is
  // padding (zero, as the original's rows beyond in.h).
  out.pad_bottom = out_h + out.kernel_h - 1 - out.pad_top - in.h / f;
  out.pad_right = out_w + out.kernel_w - 1 - out.pad_left - in.w / f;
  if (out.pad_bottom < 0 || out.pad_right < 0) return std::nullopt;
  const int64_t before = intops::ceil_div(in.c, rows) * w.kernel_h * w.kernel_w;
  const int64_t after = intops::ceil_div(f * f * in.c, rows) * out.kernel_h * out.kernel_w;
  if (after >= before) return std::nullopt;
  return std::make_pair(out, s2d);
}

Result<std::pair<int64_t, int64_t>> constant_strides(const ir::Shape& constant, const ir::Shape& y,
                                                     bool head_pixels) {
  const auto rank = static_cast<int64_t>(y.size());
  // Element strides of the constant along each axis of y (0: broadcast), right-aligned.
  std::vector<int64_t> stride(static_cast<size_t>(rank), 0);
  int64_t run = 1;
  for (int64_t a = rank - 1, ka = static_cast<int64_t>(constant.size()) - 1; ka >= 0; --a, --ka) {
    const int64_t dim = constant[static_cast<size_t>(ka)];
    if (a < 0 || (dim != 1 && dim != y[static_cast<size_t>(a)])) return fail("does not broadcast");
    if (dim != 1) stride[static_cast<size_t>(a)] = run;
    run *= dim;
  }
  const int64_t column_axis = head_pixels ? rank - 3 : -1;
  for (int64_t a = 0; a < rank; ++a) {
    const bool placed = a >= rank - 2 || a == column_axis;
    if (!placed && stride[static_cast<size_t>(a)] != 0)
      return fail("varies along axis " + std::to_string(a) +
                  ", which the accelerator path does not address");
  }
  if (stride[static_cast<size_t>(rank - 1)] != 1)
    return fail("is broadcast along the channels (only whole channels are supported)");
  return std::make_pair(stride[static_cast<size_t>(rank - 2)],
                        column_axis >= 0 ? stride[static_cast<size_t>(column_axis)] : 0);
}

}  // namespace tessel::sched
