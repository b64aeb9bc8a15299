// Data movement kernels (any dtype; integers keep their scale): Transpose, Slice, Gather,
// Expand, Trilu, Resize (nearest for any dtype; linear for float, and for integer codes with
// 8-bit fixed-point weights).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/ir/resize_taps.hpp"
#include "compiler/targets/cpu/ops/common.hpp"

namespace tessel::cpu {
namespace {

using ir::OpKind;

/// y[i] = x[source(i)] for every output element, bytewise (any dtype).
template <class Source>
TensorData gather_elements(const KernelArgs& args, const TensorData& x, Source&& source) {
  TensorData y = args.allocate();
  const std::size_t elem = static_cast<std::size_t>(ir::dtype_bytes(x.dtype()));
  const auto* src = static_cast<const std::uint8_t*>(x.raw());
  auto* dst = static_cast<std::uint8_t*>(y.raw());
  const auto& ys = y.shape();
  std::vector<std::int64_t> index(ys.size(), 0);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    std::memcpy(dst + static_cast<std::size_t>(i) * elem,
                src + static_cast<std::size_t>(source(index)) * elem, elem);
    for (std::size_t d = ys.size(); d-- > 0;) {
      if (++index[d] < ys[d]) break;
      index[d] = 0;
    }
  }
  return y;
}

std::vector<std::int64_t> row_major_strides(const ir::Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// y[i] = x[offset(i)] where the output's innermost axis reads x with stride `inner_step` and
/// the outer axes with `steps` (one per output axis): row by row, typed copies (any dtype).
template <class T>
void strided_copy(const T* x, T* y, const ir::Shape& ys, const std::vector<std::int64_t>& steps) {
  const std::size_t rank = ys.size();
  const std::int64_t inner = ys[rank - 1], inner_step = steps[rank - 1];
  const std::int64_t total = ir::element_count(ys);
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < total; i += inner) {
    if (inner_step == 1)
      std::copy_n(x + at, inner, y + i);
    else
      for (std::int64_t j = 0; j < inner; ++j) y[i + j] = x[at + j * inner_step];
    for (std::size_t d = rank - 1; d-- > 0;) {  // the odometer over the outer axes
      at += steps[d];
      if (++index[d] < ys[d]) break;
      at -= steps[d] * ys[d];
      index[d] = 0;
    }
  }
}

Result<std::vector<TensorData>> transpose(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  const auto& perm = args.op.get_ints("perm");
  const auto stride = row_major_strides(x.shape());
  TensorData y = args.allocate();
  if (y.size() == 0) return ops::one(std::move(y));
  if (y.shape().empty()) {
    std::memcpy(y.raw(), x.raw(), x.bytes());
    return ops::one(std::move(y));
  }
  std::vector<std::int64_t> steps(perm.size());
  for (std::size_t d = 0; d < perm.size(); ++d)
    steps[d] = stride[static_cast<std::size_t>(perm[d])];
  switch (ir::dtype_bytes(x.dtype())) {
    case 1:
      strided_copy(static_cast<const std::uint8_t*>(x.raw()), static_cast<std::uint8_t*>(y.raw()),
                   y.shape(), steps);
      break;
    case 2:
      strided_copy(static_cast<const std::uint16_t*>(x.raw()), static_cast<std::uint16_t*>(y.raw()),
                   y.shape(), steps);
      break;
    default:
      strided_copy(static_cast<const std::uint32_t*>(x.raw()), static_cast<std::uint32_t*>(y.raw()),
                   y.shape(), steps);
      break;
  }
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> slice(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  auto axes = ir::slice_axes(args.op, x.shape());
  if (!axes) return axes.failure();
  const auto stride = row_major_strides(x.shape());
  return ops::one(gather_elements(args, x, [&](const std::vector<std::int64_t>& idx) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < idx.size(); ++d)
      at += (axes.value()[d].start + idx[d] * axes.value()[d].step) * stride[d];
    return at;
  }));
}

Result<std::vector<TensorData>> gather(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  const auto& xs = x.shape();
  const std::size_t axis = ops::normalised_axis(args.op.get_int("axis"), xs.size());
  const auto& indices = args.op.get_ints("indices");
  const std::size_t index_rank = args.op.get_ints("indices_shape").size();
  const ir::Shape ishape = args.op.get_ints("indices_shape");
  const auto istride = row_major_strides(ishape);
  const auto stride = row_major_strides(xs);
  const bool scalar_full = xs.size() == 1 && index_rank == 0;  // [n] -> [1]
  return ops::one(gather_elements(args, x, [&](const std::vector<std::int64_t>& idx) {
    if (scalar_full) return indices[0];
    // Output axes: x's before `axis`, the indices' axes, x's after `axis`.
    std::int64_t at = 0, flat = 0;
    for (std::size_t d = 0; d < axis; ++d) at += idx[d] * stride[d];
    for (std::size_t d = 0; d < index_rank; ++d) flat += idx[axis + d] * istride[d];
    at += indices[static_cast<std::size_t>(flat)] * stride[axis];
    for (std::size_t d = axis + 1; d < xs.size(); ++d) at += idx[d - 1 + index_rank] * stride[d];
    return at;
  }));
}

// Rows of the table by token id, any dtype (a row copy): an id in [-V, 0) counts from the end,
// one outside [-V, V) is an error that names the op, the position and the id (never a read past
// the table).
Result<std::vector<TensorData>> embedding(const KernelArgs& args) {
  const TensorData& ids = args.input(0);
  const TensorData& table = args.input(1);
  if (ids.dtype() != ir::DType::i32)
    return fail(args.where() + ": ids are " + std::string(ir::to_string(ids.dtype())) +
                "; token ids are i32");
  const std::int64_t rows = table.shape()[0];
  const std::size_t row_bytes = table.bytes() / static_cast<std::size_t>(rows);
  TensorData y = args.allocate();
  if (y.dtype() != table.dtype() || y.bytes() != row_bytes * static_cast<std::size_t>(ids.size()))
    return fail(args.where() + ": output %" + args.op.outputs[0] + " " +
                std::string(ir::to_string(y.dtype())) + ir::shape_string(y.shape()) +
                " does not hold one row of the table " + std::string(ir::to_string(table.dtype())) +
                ir::shape_string(table.shape()) + " per id of " + ir::shape_string(ids.shape()));
  const std::int32_t* id = ids.data<std::int32_t>();
  const auto* from = static_cast<const unsigned char*>(table.raw());
  auto* to = static_cast<unsigned char*>(y.raw());
  for (std::int64_t i = 0; i < ids.size(); ++i) {
    if (id[i] < -rows || id[i] >= rows)  // ONNX Gather: a negative id counts from the end
      return fail(args.where() + ": token id " + std::to_string(id[i]) + " at position " +
                  std::to_string(i) + " of %" + args.op.inputs[0] + " is outside [-" +
                  std::to_string(rows) + ", " + std::to_string(rows) + ") (the table's rows)");
    const std::int64_t row = id[i] < 0 ? id[i] + rows : id[i];
    std::memcpy(to + static_cast<std::size_t>(i) * row_bytes,
                from + static_cast<std::size_t>(row) * row_bytes, row_bytes);
  }
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> expand(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  TensorData y = args.allocate();
  const auto strides = ir::broadcast_strides(x.shape(), y.shape());
  return ops::one(gather_elements(args, x, [&](const std::vector<std::int64_t>& idx) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) at += idx[d] * strides[d];
    return at;
  }));
}

Result<std::vector<TensorData>> trilu(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  TensorData y = x;  // same dtype and shape; zero what the triangle leaves out
  const auto& s = y.shape();
  const std::int64_t rows = s[s.size() - 2], cols = s.back(), k = args.op.get_int("k");
  const bool upper = args.op.get_int("upper") != 0;
  const std::size_t elem = static_cast<std::size_t>(ir::dtype_bytes(y.dtype()));
  auto* p = static_cast<std::uint8_t*>(y.raw());
  for (std::int64_t m = 0; m < y.size() / (rows * cols); ++m)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          std::memset(p + static_cast<std::size_t>((m * rows + i) * cols + j) * elem, 0, elem);
      }
  return ops::one(std::move(y));
}

/// Resize of integer codes through the shared taps (compiler/ir/resize_taps.hpp,
/// docs/quantization.md "Data movement"): y = rha(sum over the cell's corners of prod(w) * x,
/// shift); nearest is the one-corner case (w = 1, shift 0).
Result<std::vector<TensorData>> int_resize(const KernelArgs& args, const ir::ResizeTaps& taps) {
  const TensorData& x = args.input(0);
  const auto stride = row_major_strides(x.shape());
  const auto xv = x.to_i32();
  TensorData y = args.allocate();
  const auto& ys = y.shape();
  std::vector<std::int32_t> out(static_cast<std::size_t>(y.size()));
  std::vector<std::int64_t> idx(ys.size(), 0);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    std::vector<std::pair<std::int64_t, std::int64_t>> terms = {{0, 1}};  // (offset, weight)
    for (std::size_t d = 0; d < ys.size(); ++d) {
      const ir::ResizeTap& tap = taps.axes[d][static_cast<std::size_t>(idx[d])];
      std::vector<std::pair<std::int64_t, std::int64_t>> next;
      for (const auto& [at, weight] : terms) {
        next.push_back({at + tap.lo * stride[d], weight * tap.w_lo});
        if (tap.w_hi > 0) next.push_back({at + tap.hi * stride[d], weight * tap.w_hi});
      }
      terms = std::move(next);
    }
    std::int64_t sum = 0;
    for (const auto& [at, weight] : terms) sum += weight * xv[static_cast<std::size_t>(at)];
    out[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(intops::round_half_away(sum, taps.shift));
    for (std::size_t d = ys.size(); d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
  ops::store_ints(out, y);
  return ops::one(std::move(y));
}

Result<std::vector<TensorData>> resize(const KernelArgs& args) {
  const TensorData& x = args.input(0);
  const auto& xs = x.shape();
  const ir::Shape ys = args.op.get_ints("sizes");
  auto taps = ir::resize_taps(args.op, xs, ys);
  if (!taps) return taps.failure();
  const std::string& coord = args.op.get_string("coordinate_transformation_mode");
  const auto stride = row_major_strides(xs);
  if (!taps.value().linear) {  // any dtype: a bytewise gather of the nearest element
    return ops::one(gather_elements(args, x, [&](const std::vector<std::int64_t>& idx) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < idx.size(); ++d)
        at += taps.value().axes[d][static_cast<std::size_t>(idx[d])].lo * stride[d];
      return at;
    }));
  }
  if (ir::is_integer(x.dtype())) return int_resize(args, taps.value());
  // Linear: separable interpolation over every axis whose size changes.
  TensorData y = args.allocate();
  const float* xv = x.data<float>();
  float* out = y.data<float>();
  std::vector<std::int64_t> idx(ys.size(), 0);
  for (std::int64_t i = 0; i < y.size(); ++i) {
    // Corners of the interpolation cell: 2^(changed axes) terms.
    std::vector<std::pair<std::int64_t, double>> terms = {{0, 1.0}};
    for (std::size_t d = 0; d < ys.size(); ++d) {
      double c = ir::resize_source_coordinate(coord, idx[d], xs[d], ys[d]);
      c = std::clamp(c, 0.0, static_cast<double>(xs[d] - 1));
      const auto lo = static_cast<std::int64_t>(std::floor(c));
      const std::int64_t hi = std::min(lo + 1, xs[d] - 1);
      const double t = c - static_cast<double>(lo);
      std::vector<std::pair<std::int64_t, double>> next;
      for (const auto& [at, w] : terms) {
        next.push_back({at + lo * stride[d], w * (1.0 - t)});
        if (t > 0.0) next.push_back({at + hi * stride[d], w * t});
      }
      terms = std::move(next);
    }
    double v = 0.0;
    for (const auto& [at, w] : terms) v += w * xv[at];
    out[i] = static_cast<float>(v);
    for (std::size_t d = ys.size(); d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
  return ops::one(std::move(y));
}

}  // namespace

std::vector<KernelEntry> movement_kernels() {
  return {{OpKind::Transpose, transpose}, {OpKind::Slice, slice}, {OpKind::Gather, gather},
          {OpKind::Expand, expand},       {OpKind::Trilu, trilu}, {OpKind::Resize, resize},
          {OpKind::Embedding, embedding}};
}

}  // namespace tessel::cpu
