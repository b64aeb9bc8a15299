#include "compiler/ir/resize_taps.hpp"

#include <algorithm>
#include <cmath>

namespace tessel::ir {

double resize_source_coordinate(const std::string& mode, std::int64_t o, std::int64_t in,
                                std::int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  if (mode == "asymmetric") return static_cast<double>(o) / scale;
  if (mode == "align_corners")
    return out == 1 ? 0.0 : static_cast<double>(o) * static_cast<double>(in - 1) / (out - 1);
  if (mode == "pytorch_half_pixel" && out == 1) return 0.0;
  return (static_cast<double>(o) + 0.5) / scale - 0.5;  // half_pixel
}

namespace {

/// The nearest input index of coordinate c under ONNX's nearest_mode.
std::int64_t nearest_index(const std::string& rounding, double c, std::int64_t in) {
  double v = 0.0;
  if (rounding == "floor")
    v = std::floor(c);
  else if (rounding == "ceil")
    v = std::ceil(c);
  else if (rounding == "round_prefer_ceil")
    v = std::floor(c + 0.5);
  else
    v = std::ceil(c - 0.5);  // round_prefer_floor
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(v), 0, in - 1);
}

}  // namespace

Result<ResizeTaps> resize_taps(const Op& op, const Shape& in, const Shape& out) {
  const std::string& coord = op.get_string("coordinate_transformation_mode");
  if (coord != "half_pixel" && coord != "asymmetric" && coord != "align_corners" &&
      coord != "pytorch_half_pixel")
    return fail("op '" + op.name + "' (Resize): coordinate_transformation_mode '" + coord +
                "' is not supported");
  if (in.size() != out.size())
    return fail("op '" + op.name + "' (Resize): input rank " + std::to_string(in.size()) +
                " and output rank " + std::to_string(out.size()) + " differ");
  ResizeTaps taps;
  taps.linear = op.get_string("mode") != "nearest";
  const std::string& rounding = op.get_string("nearest_mode");
  taps.axes.resize(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    auto& axis = taps.axes[d];
    axis.resize(static_cast<std::size_t>(out[d]));
    const bool changed = in[d] != out[d];
    if (taps.linear && changed) taps.shift += 8;
    for (std::int64_t o = 0; o < out[d]; ++o) {
      ResizeTap& tap = axis[static_cast<std::size_t>(o)];
      tap.lo = tap.hi = o;
      if (!changed) continue;  // the coordinate is o exactly, in every mode
      const double c = resize_source_coordinate(coord, o, in[d], out[d]);
      if (!taps.linear) {
        tap.lo = tap.hi = nearest_index(rounding, c, in[d]);
        continue;
      }
      const double clamped = std::clamp(c, 0.0, static_cast<double>(in[d] - 1));
      tap.lo = static_cast<std::int64_t>(std::floor(clamped));
      tap.hi = std::min(tap.lo + 1, in[d] - 1);
      const auto w =
          static_cast<std::int64_t>(std::round(256.0 * (clamped - static_cast<double>(tap.lo))));
      tap.w_lo = 256 - w;
      tap.w_hi = w;
    }
  }
  return taps;
}

}  // namespace tessel::ir
