// The CNN kinds that only move values or apply a per-channel affine map: Concat, Split, Pad,
// Flatten, Reshape (any dtype), BatchNormalization and Scale (float), and the plain float
// Softmax (the masked and integer forms are in normalization.cpp).
#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/ops/common.hpp"
#include "support/int_ops.hpp"

namespace tessel::cpu {
namespace {

using ir::DType;
using ir::OpKind;

/// Outer count, the axis extent and the inner element count of `shape` around `axis`.
struct AxisSplit {
  std::int64_t outer, inner;
  std::size_t axis;
};
AxisSplit split_at(const ir::Shape& shape, std::int64_t axis) {
  const std::size_t a = ops::normalised_axis(axis, shape.size());
  return {ops::dims_product(shape, 0, a), ops::dims_product(shape, a + 1, shape.size()), a};
}

Result<std::vector<TensorData>> concat(const KernelArgs& args) {
  TensorData y = args.allocate();
  const auto s = split_at(y.shape(), args.op.get_int("axis"));
  const auto elem = static_cast<std::size_t>(ir::dtype_bytes(y.dtype()));
  auto* dst = static_cast<std::uint8_t*>(y.raw());
  const std::size_t out_row = static_cast<std::size_t>(y.shape()[s.axis] * s.inner) * elem;
  std::size_t offset = 0;
  for (const TensorData* x : args.inputs) {
    const std::size_t row = static_cast<std::size_t>(x->shape()[s.axis] * s.inner) * elem;
    const auto* src = static_cast<const std::uint8_t*>(x->raw());
    for (std::int64_t o = 0; o < s.outer; ++o)
      std::memcpy(dst + static_cast<std::size_t>(o) * out_row + offset,
                  src + static_cast<std::size_t>(o) * row, row);
    offset += row;
  }
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> split(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  const auto s = split_at(x.shape(), args.op.get_int("axis"));
  const auto elem = static_cast<std::size_t>(ir::dtype_bytes(x.dtype()));
  const std::size_t in_row = static_cast<std::size_t>(x.shape()[s.axis] * s.inner) * elem;
  std::vector<TensorData> parts;
  std::size_t offset = 0;
  for (std::size_t k = 0; k < args.op.outputs.size(); ++k) {
    TensorData part = args.allocate(k);
    const std::size_t row = static_cast<std::size_t>(part.shape()[s.axis] * s.inner) * elem;
    for (std::int64_t o = 0; o < s.outer; ++o)
      std::memcpy(
          static_cast<std::uint8_t*>(part.raw()) + static_cast<std::size_t>(o) * row,
          static_cast<const std::uint8_t*>(x.raw()) + static_cast<std::size_t>(o) * in_row + offset,
          row);
    offset += row;
    parts.push_back(std::move(part));
  }
  return parts;
}

Result<std::vector<TensorData>> reshape(const KernelArgs& args) {
  TensorData y = args.input(0);
  y.reshape(args.output_tensor().shape);
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> pad(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  TensorData y = args.allocate();
  const auto& pads = args.op.get_ints("pads");
  const auto& xs = x.shape();
  const auto& ys = y.shape();
  const std::size_t rank = xs.size();
  double value = args.op.get_float("value");
  if (x.dtype() != DType::f32) {
    const auto& q = *args.input_tensor(0).quant;
    value = intops::quantize_value(static_cast<float>(value), q.scales[0],
                                   quant::dtype_bits(x.dtype()));
  }
  ops::visit_elements(y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T* xv = x.data<T>();
    std::fill(out, out + y.size(), static_cast<T>(value));
    std::vector<std::int64_t> idx(rank, 0);
    for (std::int64_t i = 0; i < x.size(); ++i) {
      std::int64_t rem = i, oi = 0;
      for (std::size_t d = rank; d-- > 0;) {
        idx[d] = rem % xs[d];
        rem /= xs[d];
      }
      for (std::size_t d = 0; d < rank; ++d) oi = oi * ys[d] + idx[d] + pads[d];
      out[oi] = xv[i];
    }
  });
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> channel_affine(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  if (x.dtype() != DType::f32) return fail(args.where() + ": float only");
  TensorData y = args.allocate();
  const std::int64_t C = x.shape()[1], inner = ops::dims_product(x.shape(), 2, x.shape().size());
  std::vector<double> mul(static_cast<std::size_t>(C)), add(static_cast<std::size_t>(C), 0.0);
  if (args.op.kind == OpKind::BatchNormalization) {
    const float* gamma = args.input(1).data<float>();
    const float* beta = args.input(2).data<float>();
    const float* mean = args.input(3).data<float>();
    const float* var = args.input(4).data<float>();
    const double eps = args.op.get_float("epsilon");
    for (std::int64_t c = 0; c < C; ++c) {
      mul[c] = gamma[c] / std::sqrt(double{var[c]} + eps);
      add[c] = beta[c] - mean[c] * mul[c];
    }
  } else {
    const float* scale = args.input(1).data<float>();
    for (std::int64_t c = 0; c < C; ++c) mul[c] = scale[c];
    if (args.inputs.size() > 2) {
      const float* bias = args.input(2).data<float>();
      for (std::int64_t c = 0; c < C; ++c) add[c] = bias[c];
    }
  }
  const float* xv = x.data<float>();
  float* out = y.data<float>();
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<std::size_t>((i / inner) % C);
    out[i] = static_cast<float>(xv[i] * mul[c] + add[c]);
  }
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> layout_kernels() {
  return {{OpKind::Concat, concat},
          {OpKind::Split, split},
          {OpKind::Flatten, reshape},
          {OpKind::Reshape, reshape},
          {OpKind::Pad, pad},
          {OpKind::BatchNormalization, channel_affine},
          {OpKind::Scale, channel_affine}};
}

}  // namespace tessel::cpu
