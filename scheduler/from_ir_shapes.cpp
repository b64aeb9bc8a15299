// The geometry from_ir.cpp reads off the graph IR (from_ir_shapes.hpp).
#include "scheduler/from_ir_shapes.hpp"

#include <vector>

namespace tessel::sched {

Result<Shape3> shape3(const ir::Tensor& tensor, const std::string& op_name) {
  const auto& s = tensor.shape;
  if (s.empty()) return fail("op '" + op_name + "': tensor '" + tensor.name + "' has no shape");
  // A 2-D [N, K] tensor (a Gemm's rows: a classifier's one, or a transformer's tokens) is K
  // channels of N pixels; a 3-D [1, S, d] token tensor d channels of S (docs/scheduler.md
  // "Transformers"): row-major in DRAM either way, as NHWC is.
  if (s.size() == 2) return Shape3{s[1], s[0], 1};
  // [B, S, d] tokens are B * S rows in DRAM, sequence after sequence: per-token ops (Linears,
  // norms, adds) need no more; ops that mix tokens see the sequences through row slices (a
  // batched decode step, docs/scheduler.md "Decode"), and the head views refuse B > 1.
  if (s.size() == 3) return Shape3{s[2], s[0] * s[1], 1};
  if (s[0] != 1) return fail("op '" + op_name + "': batch " + std::to_string(s[0]) + " is not 1");
  if (s.size() == 4) return Shape3{s[1], s[2], s[3]};
  int64_t elements = 1;
  for (size_t i = 1; i < s.size(); ++i) elements *= s[i];
  return Shape3{elements, 1, 1};
}

// The space-to-depth rewrite of a stride-2 conv over an input of `in`
// (docs/scheduler.md, "Space-to-depth stem"), when it applies and takes fewer
// matrix steps per output pixel and column block (input-channel blocks x taps);
// nullopt otherwise. `out_h`/`out_w`: the conv's output size. Fills the
// rewritten window and the record of the original.
std::optional<std::pair<Window, SpaceToDepthConv>> space_to_depth_rewrite(
    const Window& w, int64_t groups, Shape3 in, int64_t out_h, int64_t out_w, int64_t rows) {
  if (groups != 1 || w.stride_h != 2 || w.stride_w != 2 || w.dilation_h != 1 || w.dilation_w != 1 ||
      in.h % 2 != 0 || in.w % 2 != 0 || rows < 1)
    return std::nullopt;
  SpaceToDepthConv s2d{in.c, w.kernel_h, w.kernel_w, w.pad_top % 2, w.pad_left % 2};
  Window out;
  // Original row 2 oy - pad_top + ky = 2 (oy - pad_top') + (ky + shift): s2d
  // row oy - pad_top' + (ky + shift) / 2, parity (ky + shift) % 2.
  out.kernel_h = (w.kernel_h - 1 + s2d.shift_h) / 2 + 1;
  out.kernel_w = (w.kernel_w - 1 + s2d.shift_w) / 2 + 1;
  out.pad_top = (w.pad_top + s2d.shift_h) / 2;
  out.pad_left = (w.pad_left + s2d.shift_w) / 2;
  // The last output reads s2d row out_h - 1 - pad_top' + kernel' - 1; beyond
  // in.h / 2 is padding (zero, as the original's rows beyond in.h).
  out.pad_bottom = out_h + out.kernel_h - 1 - out.pad_top - in.h / 2;
  out.pad_right = out_w + out.kernel_w - 1 - out.pad_left - in.w / 2;
  if (out.pad_bottom < 0 || out.pad_right < 0) return std::nullopt;
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t before = ceil_div(in.c, rows) * w.kernel_h * w.kernel_w;
  const int64_t after = ceil_div(4 * in.c, rows) * out.kernel_h * out.kernel_w;
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
