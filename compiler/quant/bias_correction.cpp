// Bias correction (docs/quantization.md, "Bias correction"): the mean output error of a Conv's
// or Gemm's rounded weights, E[x] . (s_w w_q - w), folded into its int32 bias. Only the bias
// integers change; every executor runs the same integer contract.
#include <algorithm>
#include <cmath>

#include "compiler/quant/realizer.hpp"

namespace tessel::quant::detail {

using ir::OpKind;

double corrected_power(const AxisMoments& m) {
  double variance = 0.0;
  for (std::size_t i = 0; i < m.mean.size(); ++i)
    variance += std::max(m.mean_square[i] - m.mean[i] * m.mean[i], 0.0);
  variance /= static_cast<double>(std::max<std::size_t>(m.mean.size(), 1));
  return variance * (1.0 + 1.0 / std::max(m.count, 1.0));
}

const AxisMoments* Realizer::correction_moments(const ir::Op& op) const {
  if (!moments || op.inputs.size() != 3) return nullptr;
  if (op.kind != OpKind::Conv && op.kind != OpKind::Gemm) return nullptr;
  if (op.kind == OpKind::Gemm && op.attrs.count("transA") && op.get_int("transA") != 0)
    return nullptr;
  const std::string& x = op.inputs[0];
  const auto it = moments->find(x);
  if (it == moments->end()) return nullptr;
  const AxisMoments& m = it->second.channel;  // a Conv's input channels, a Gemm's K (axis 1)
  const ir::Shape& shape = in.tensor(x).shape;
  if (m.empty() || shape.size() < 2 || m.mean.size() != static_cast<std::size_t>(shape[1]))
    return nullptr;
  if (op.kind == OpKind::Gemm && shape.size() != 2) return nullptr;
  // The estimate of E[x_k] from `count` values errs by var / count: correct only where the
  // mean's power exceeds twice that (averaged over the channels).
  double mean_power = 0.0, variance = 0.0;
  for (std::size_t i = 0; i < m.mean.size(); ++i) {
    mean_power += m.mean[i] * m.mean[i];
    variance += std::max(m.mean_square[i] - m.mean[i] * m.mean[i], 0.0);
  }
  if (!(mean_power > 2.0 * variance / std::max(m.count, 1.0))) return nullptr;
  return &m;
}

namespace {

// Per kernel tap along one spatial axis, the share of the `out` output positions whose input
// index o * stride + k * dilation - pad_begin lies in [0, in).
std::vector<double> tap_shares(std::int64_t in, std::int64_t out, std::int64_t kernel,
                               std::int64_t stride, std::int64_t dilation, std::int64_t pad) {
  std::vector<double> shares(static_cast<std::size_t>(kernel), 0.0);
  for (std::int64_t k = 0; k < kernel; ++k) {
    std::int64_t inside = 0;
    for (std::int64_t o = 0; o < out; ++o) {
      const std::int64_t i = o * stride + k * dilation - pad;
      inside += i >= 0 && i < in ? 1 : 0;
    }
    shares[static_cast<std::size_t>(k)] =
        static_cast<double>(inside) / static_cast<double>(std::max<std::int64_t>(out, 1));
  }
  return shares;
}

}  // namespace

std::vector<double> Realizer::bias_shift(const ir::Op& op, const ir::Tensor& w,
                                         const ir::Tensor& w_q, const AxisMoments& m,
                                         double alpha) const {
  const std::vector<float>& scales = w_q.quant->scales;
  const auto error = [&](std::size_t i, std::size_t c) {
    return static_cast<double>(scales[c]) * w_q.int_values[i] -
           static_cast<double>(w.f32_values[i]);
  };
  std::vector<double> shift;
  if (op.kind == OpKind::Gemm) {
    const bool trans_b = op.get_int("transB") != 0;  // [N, K], else [K, N]
    const auto n = static_cast<std::size_t>(w.shape[trans_b ? 0 : 1]);
    const auto k = static_cast<std::size_t>(w.shape[trans_b ? 1 : 0]);
    shift.assign(n, 0.0);
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t j = 0; j < k; ++j)
        shift[c] += error(trans_b ? c * k + j : j * n + c, c) * m.mean[j];
  } else {  // Conv: OIHW weights, groups of input channels
    const ir::Shape& x = in.tensor(op.inputs[0]).shape;
    const ir::Shape& y = in.tensor(op.outputs[0]).shape;
    const auto kernel = op.get_ints("kernel"), stride = op.get_ints("stride"),
               pad = op.get_ints("pad"), dilation = op.get_ints("dilation");
    const std::vector<double> rows =
        tap_shares(x[2], y[2], kernel[0], stride[0], dilation[0], pad[0]);
    const std::vector<double> cols =
        tap_shares(x[3], y[3], kernel[1], stride[1], dilation[1], pad[1]);
    const auto out_channels = static_cast<std::size_t>(w.shape[0]);
    const auto per_group = static_cast<std::size_t>(w.shape[1]);
    const auto groups = static_cast<std::size_t>(op.get_int("group"));
    const std::size_t per_out_group = out_channels / groups;
    shift.assign(out_channels, 0.0);
    for (std::size_t c = 0, i = 0; c < out_channels; ++c)
      for (std::size_t j = 0; j < per_group; ++j) {
        const double mean = m.mean[c / per_out_group * per_group + j];
        for (const double row : rows)
          for (const double col : cols) shift[c] += error(i++, c) * mean * row * col;
      }
  }
  for (double& s : shift) s *= alpha;
  return shift;
}

}  // namespace tessel::quant::detail
