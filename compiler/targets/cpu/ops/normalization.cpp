// Normalisation kernels: LayerNormalization, RMSNormalization and the masked Softmax.
// Float: double sums per row, as the reference implementations do. Integers: the row functions
// of support/int_nonlinear.hpp (docs/quantization.md), parameters from compiler/quant.
#include <omp.h>

#include <cmath>
#include <limits>

#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/ops/common.hpp"

namespace tessel::cpu {
namespace {

using ir::DType;
using ir::OpKind;

/// LayerNormalization (centre = true) and RMSNormalization (centre = false) over the dims from
/// `axis` on: y = (x - mean) / sqrt(var + eps) * scale + bias, or x / sqrt(mean(x^2) + eps) *
/// scale.
/// The integer form: support/int_nonlinear.hpp's norm_row on every row, with the parameters of
/// quant::norm_params (E, G_k, r_k, B_k).
Result<std::vector<TensorData>> int_normalize(const KernelArgs& args) {
  auto p = quant::norm_params(args.graph, args.op);
  if (!p) return p.failure();
  const auto& params = p.value();
  const ir::DType t = args.input(0).dtype();
  if (args.output_tensor().dtype == t) {  // the vectorised rows (workload_kernels.hpp)
    const auto n = static_cast<std::size_t>(params.n);
    std::vector<std::int64_t> lanes(4 * n);
    for (std::size_t k = 0; k < n; ++k) {
      const auto& a = params.affine[k];
      lanes[k] = a.multiplier;
      lanes[n + k] = a.bias;
      lanes[2 * n + k] = a.shift;
      lanes[3 * n + k] = a.shift > 0 ? std::int64_t{1} << (a.shift - 1) : 0;
    }
    const fast::NormLanes affine{lanes.data(), lanes.data() + n, lanes.data() + 2 * n,
                                 lanes.data() + 3 * n};
    TensorData y = args.allocate();
    const std::int64_t rows = y.size() / params.n;
    const auto go = [&](const auto* x, auto* out) {
#pragma omp parallel for schedule(static) if (y.size() >= (1 << 16))
      for (std::int64_t r = 0; r < rows; ++r)
        fast::norm_rows(x + r * params.n, out + r * params.n, 1, params.n, params.centre,
                        params.epsilon_term, affine, params.lo, params.hi);
    };
    if (t == DType::i8)
      go(args.input(0).data<std::int8_t>(), y.data<std::int8_t>());
    else
      go(args.input(0).data<std::int16_t>(), y.data<std::int16_t>());
    return ops::one(std::move(y));
  }
  const auto xv = args.input(0).to_i32();
  std::vector<std::int32_t> out(xv.size());
  for (std::size_t r = 0; r < xv.size(); r += static_cast<std::size_t>(params.n))
    intops::norm_row(xv.data() + r, params.n, params.centre, params.epsilon_term,
                     params.affine.data(), params.lo, params.hi, out.data() + r);
  TensorData y = args.allocate();
  ops::store_ints(out, y);
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> normalize(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  if (x.dtype() == DType::i8 || x.dtype() == DType::i16) return int_normalize(args);
  if (x.dtype() != DType::f32)
    return fail(args.where() + ": " + std::string(ir::to_string(x.dtype())) + " input");
  const bool centre = args.op.kind == OpKind::LayerNormalization;
  const auto& xs = x.shape();
  const std::size_t axis = ops::normalised_axis(args.op.get_int("axis"), xs.size());
  const std::int64_t n = ops::dims_product(xs, axis, xs.size()), rows = x.size() / n;
  const double eps = args.op.get_float("epsilon");
  const float* scale = args.input(1).data<float>();
  const float* bias = args.inputs.size() > 2 ? args.input(2).data<float>() : nullptr;
  TensorData y = args.allocate();
  const float* xv = x.data<float>();
  float* out = y.data<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = xv + r * n;
    double mean = 0.0;
    if (centre) {
      for (std::int64_t k = 0; k < n; ++k) mean += row[k];
      mean /= static_cast<double>(n);
    }
    double square = 0.0;
    for (std::int64_t k = 0; k < n; ++k) square += (row[k] - mean) * (row[k] - mean);
    const double inv = 1.0 / std::sqrt(square / static_cast<double>(n) + eps);
    for (std::int64_t k = 0; k < n; ++k)
      out[r * n + k] =
          static_cast<float>((row[k] - mean) * inv * scale[k] + (bias ? bias[k] : 0.0));
  }
  return ops::one(std::move(y));
}

/// Softmax along `axis`; with a mask input, positions where the mask is 0 are left out of the
/// maximum and the sum, and their result is 0 (a row masked whole is all 0).
/// The mask of a Softmax broadcast to x's shape (1 = kept; every position without a mask).
std::vector<float> softmax_keep(const KernelArgs& args) {
  const auto& xs = args.input(0).shape();
  std::vector<float> keep(static_cast<std::size_t>(args.input(0).size()), 1.0f);
  if (args.inputs.size() > 1) {
    const auto mask = args.input(1).to_f32();
    ops::for_each_broadcast<1>(
        xs, {args.input(1).shape()}, [&](std::int64_t i, const std::array<std::int64_t, 1>& at) {
          keep[static_cast<std::size_t>(i)] = mask[static_cast<std::size_t>(at[0])];
        });
  }
  return keep;
}

/// The integer softmax of contiguous rows (the last axis) in the vectorised row kernel of
/// workload_kernels.hpp, rows split over the OpenMP threads; the mask as one flag per element.
TensorData fast_int_softmax(const KernelArgs& args, std::int64_t rows, std::int64_t len,
                            const intops::SoftmaxParams& params) {
  const TensorData& x = args.input(0);
  std::vector<std::uint8_t> keep;
  if (args.inputs.size() > 1) {
    const auto mask = args.input(1).to_f32();
    keep.resize(static_cast<std::size_t>(x.size()));
    for (const auto& run : ops::broadcast_runs<1>(x.shape(), {args.input(1).shape()}))
      for (std::int64_t j = 0; j < run.length; ++j)
        keep[static_cast<std::size_t>(run.begin + j)] =
            mask[static_cast<std::size_t>(run.offset[0] + j * run.step[0])] != 0.0f ? 1 : 0;
  }
  TensorData y = args.allocate();
  const std::uint8_t* k = keep.empty() ? nullptr : keep.data();
  const auto go = [&](const auto* xv, auto* out) {
#pragma omp parallel if (x.size() >= (1 << 16))
    {
      std::vector<std::int64_t> scratch(static_cast<std::size_t>(len));
      const std::int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
      const std::int64_t r0 = rows * id / threads, r1 = rows * (id + 1) / threads;
      fast::softmax_rows(xv + r0 * len, k ? k + r0 * len : nullptr, out + r0 * len, r1 - r0, len,
                         params, scratch.data());
    }
  };
  if (x.dtype() == DType::i8)
    go(x.data<std::int8_t>(), y.data<std::int8_t>());
  else
    go(x.data<std::int16_t>(), y.data<std::int16_t>());
  return y;
}

/// The integer softmax: each row (strided along `axis`) gathered and passed to
/// support/int_nonlinear.hpp's softmax_row with quant::softmax_params.
Result<std::vector<TensorData>> int_softmax(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  const auto& xs = x.shape();
  const std::size_t axis = ops::normalised_axis(args.op.get_int("axis"), xs.size());
  const std::int64_t len = xs[axis], inner = ops::dims_product(xs, axis + 1, xs.size());
  const std::int64_t outer = x.size() / (len * inner);
  if (len > (std::int64_t{1} << 16)) return fail(args.where() + ": rows longer than 65536");
  const auto params = quant::softmax_params(args.input_tensor(0), args.output_tensor());
  if (inner == 1 && args.output_tensor().dtype == x.dtype())
    return ops::one(fast_int_softmax(args, outer, len, params));
  const auto xv = x.to_i32();
  const auto keep = softmax_keep(args);
  std::vector<std::int32_t> out(xv.size()), row(static_cast<std::size_t>(len)),
      result(static_cast<std::size_t>(len));
  std::vector<std::uint8_t> kept(static_cast<std::size_t>(len));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      const std::int64_t base = o * len * inner + in;
      for (std::int64_t k = 0; k < len; ++k) {
        const auto at = static_cast<std::size_t>(base + k * inner);
        row[static_cast<std::size_t>(k)] = xv[at];
        kept[static_cast<std::size_t>(k)] = keep[at] != 0.0f ? 1 : 0;
      }
      intops::softmax_row(row.data(), kept.data(), len, params, result.data());
      for (std::int64_t k = 0; k < len; ++k)
        out[static_cast<std::size_t>(base + k * inner)] = result[static_cast<std::size_t>(k)];
    }
  TensorData y = args.allocate();
  ops::store_ints(out, y);
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> masked_softmax(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  if (x.dtype() == DType::i8 || x.dtype() == DType::i16) return int_softmax(args);
  if (x.dtype() != DType::f32)
    return fail(args.where() + ": " + std::string(ir::to_string(x.dtype())) + " input");
  const auto& xs = x.shape();
  const std::size_t axis = ops::normalised_axis(args.op.get_int("axis"), xs.size());
  const std::int64_t len = xs[axis], inner = ops::dims_product(xs, axis + 1, xs.size());
  const std::int64_t outer = x.size() / (len * inner);
  const auto keep = softmax_keep(args);
  TensorData y = args.allocate();
  const float* xv = x.data<float>();
  float* out = y.data<float>();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      const std::int64_t base = o * len * inner + in;
      const auto kept = [&](std::int64_t k) {
        return keep[static_cast<std::size_t>(base + k * inner)] != 0.0f;
      };
      float m = -std::numeric_limits<float>::infinity();
      for (std::int64_t k = 0; k < len; ++k)
        if (kept(k)) m = std::max(m, xv[base + k * inner]);
      double sum = 0.0;
      for (std::int64_t k = 0; k < len; ++k)
        if (kept(k)) sum += std::exp(double{xv[base + k * inner]} - m);
      for (std::int64_t k = 0; k < len; ++k)
        out[base + k * inner] =
            kept(k) ? static_cast<float>(std::exp(double{xv[base + k * inner]} - m) / sum) : 0.0f;
    }
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> normalization_kernels() {
  return {{OpKind::LayerNormalization, normalize},
          {OpKind::RMSNormalization, normalize},
          {OpKind::Softmax, masked_softmax}};
}

}  // namespace tessel::cpu
