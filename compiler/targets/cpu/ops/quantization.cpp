// The quantization kinds' channels-last kernels: Requantize (int32 accumulators -> 8/16 bits,
// per tensor or per channel, channels innermost where the accumulator is NHWC or a MatMul's
// [.., C]), Quantize (float -> integer codes) and Dequantize, in the layout of their input.
#include <cmath>

#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/ops/channels_last.hpp"

namespace tessel::cpu {
namespace {

using ir::DType;
using ir::OpKind;

/// Per-channel requantization on an axis that is neither innermost nor NHWC's channels: the
/// plain loop.
void requantize_strided(const TensorData& acc, std::size_t axis,
                        const std::vector<intops::Requant>& raw, std::int32_t zp, TensorData& y) {
  const auto& s = acc.shape();
  std::int64_t inner = 1;
  for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const std::int64_t C = s[axis];
  const std::int32_t* a = acc.data<std::int32_t>();
  with_int(y, [&](auto* out) {
    for (std::int64_t i = 0; i < acc.size(); ++i) {
      auto p = raw[static_cast<std::size_t>((i / inner) % C)];
      p.zero_point = zp;
      out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(intops::requantize(a[i], p));
    }
  });
}

Result<bool> requantize(ChannelsLastArgs& args) {
  const ir::Op& op = args.op;
  const auto& acc_t = args.graph.tensor(op.inputs[0]);
  // Channels on axis 1 (Conv, Gemm) or, for a MatMul by a constant, the last axis.
  const auto axis =
      static_cast<std::size_t>(acc_t.quant && acc_t.quant->per_channel() ? acc_t.quant->axis : 1);
  const bool spatial = acc_t.shape.size() == 4 && axis == 1;
  const TensorData& acc =
      spatial ? args.values.channels_last(op.inputs[0]) : args.values.nchw(op.inputs[0]);
  args.y = args.allocate();
  args.y_nhwc = spatial;
  const auto raw = quant::requantize_params(acc_t, args.graph.tensor(args.out_name));
  const auto& out_q = *args.graph.tensor(args.out_name).quant;
  const std::int32_t zp = out_q.zero_points.empty() ? 0 : out_q.zero_points[0];
  const auto& s = acc.shape();
  const bool last_axis = axis + 1 == s.size();  // [.., C]: a MatMul by weights
  if (!(spatial || last_axis || raw.size() == 1)) {
    requantize_strided(acc, axis, raw, zp, args.y);
    return true;
  }
  // Channels innermost: NHWC, [.., C], or one per-tensor lane for any shape.
  const std::int64_t channels = raw.size() == 1 ? 1 : spatial ? s[1] : s[axis];
  auto& params = args.cache.requants[args.id];
  if (params.multiplier.empty()) {
    params = nhwc::channel_requant(raw, channels);
    params.zero_point = zp;
  }
  with_int(args.y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const std::int32_t* a = acc.data<std::int32_t>();
    if constexpr (std::is_same_v<T, std::int32_t>) {  // no vector kernel for int32 out
      for (std::int64_t i = 0; i < acc.size(); ++i) {
        auto p = raw[raw.size() == 1 ? 0 : static_cast<std::size_t>(i % channels)];
        p.zero_point = zp;
        out[i] = intops::requantize(a[i], p);
      }
    } else {
      parallel_slices(acc.size() / channels, 1024, [&](std::int64_t p0, std::int64_t p1) {
        return nhwc::requantize(a + p0 * channels, nullptr, out + p0 * channels, p1 - p0, channels,
                                params);
      });
    }
  });
  return true;
}

Result<bool> quantize(ChannelsLastArgs& args) {
  const auto [xp, x_nhwc] = args.values.as_is(args.op.inputs[0]);
  const TensorData& x = *xp;
  args.y = args.allocate();
  args.y_nhwc = x_nhwc;
  TensorData& y = args.y;
  const auto& q = *args.graph.tensor(args.out_name).quant;
  const int bits = quant::dtype_bits(y.dtype());
  const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
  const std::int32_t lo = y.dtype() == DType::u8 ? 0 : intops::qmin(bits);
  const std::int32_t hi = y.dtype() == DType::u8 ? 255 : intops::qmax(bits);
  const float* xv = x.data<float>();
  if (y.dtype() == DType::i8) {
    nhwc::quantize(xv, y.data<std::int8_t>(), x.size(), double{q.scales[0]}, zp, lo, hi);
    return true;
  }
  with_int(y, [&](auto* out) {
    for (std::int64_t i = 0; i < x.size(); ++i) {
      const double r = std::isnan(xv[i]) ? 0.0 : std::round(double{xv[i]} / q.scales[0]);
      const double v = std::clamp(r + zp, static_cast<double>(lo), static_cast<double>(hi));
      out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(v);
    }
  });
  return true;
}

Result<bool> dequantize(ChannelsLastArgs& args) {
  const auto [xp, x_nhwc] = args.values.as_is(args.op.inputs[0]);
  const TensorData& x = *xp;
  args.y = args.allocate();
  args.y_nhwc = x_nhwc;
  const auto& q = *args.graph.tensor(args.op.inputs[0]).quant;
  const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
  float* out = args.y.data<float>();
  for (std::int64_t i = 0; i < x.size(); ++i)
    out[i] = static_cast<float>((x.at(i) - zp) * static_cast<double>(q.scales[0]));
  return true;
}

}  // namespace

std::vector<KernelEntry> quantization_kernels() {
  return {{OpKind::Requantize, nullptr, requantize},
          {OpKind::Quantize, nullptr, quantize},
          {OpKind::Dequantize, nullptr, dequantize}};
}

}  // namespace tessel::cpu
