// Per-element and per-row definitions of the GPU kernels of the modern-workload ops (data
// movement, broadcast Add/Sub/Mul/Where, unary tables, MatMul of two activations, integer
// softmax, layer/RMS norm, reductions), host- and device-callable: the CUDA kernels in
// runtime.cu are thread-index wrappers around them and the host emulator loops over them.
//
// Every operand is a `Strided` view in *logical* coordinates (the graph's axis order) onto a
// buffer in any layout (NHWC with padded channels, or row-major rows), so one definition serves
// every layout, transpose, slice and broadcast: a transposed or broadcast operand is the same
// buffer with permuted or zero strides. The arithmetic is support/int_ops.hpp's and
// support/int_nonlinear.hpp's own constexpr functions (device code calls them through nvcc's
// --expt-relaxed-constexpr); only the row loops of softmax and norm are restated over strided
// rows, step for step as intops::softmax_row and intops::norm_row (docs/quantization.md).
#pragma once

#include <cstdint>

#include "compiler/targets/cuda/epilogue.cuh"
#include "support/int_nonlinear.hpp"
#include "support/int_ops.hpp"

namespace tessel::cuda {

/// Highest logical rank of a workload operand (Llama's grouped-query Expand is rank 5).
inline constexpr int kMaxRank = 6;

/// A logical view: element (i_0, .., i_{rank-1}) at offset + sum(i_d * strides[d]) elements of
/// `data` (stride 0: broadcast along that axis).
struct Strided {
  void* data = nullptr;
  std::int32_t type = kI8;
  std::int32_t rank = 0;
  std::int64_t dims[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
  std::int64_t offset = 0;
};

TESSEL_HD std::int64_t strided_elements(const Strided& v) {
  std::int64_t n = 1;
  for (int d = 0; d < v.rank; ++d) n *= v.dims[d];
  return n;
}

/// The element offset of row-major index `linear` of `dims` in view `v` (whose strides are
/// taken axis by axis against `dims`, which must have v.rank entries).
TESSEL_HD std::int64_t strided_at(const Strided& v, const std::int64_t* dims, std::int64_t linear) {
  std::int64_t at = v.offset;
  for (int d = v.rank - 1; d >= 0; --d) {
    at += linear % dims[d] * v.strides[d];
    linear /= dims[d];
  }
  return at;
}

TESSEL_HD std::int32_t load_linear(const Strided& v, std::int64_t linear) {
  return load_int(v.data, v.type, strided_at(v, v.dims, linear));
}

TESSEL_HD void store_linear(const Strided& v, std::int64_t linear, std::int32_t value) {
  store_int(v.data, v.type, strided_at(v, v.dims, linear), value);
}

/// What a workload kernel computes (WorkArgs::op).
enum WorkOp : std::int32_t {
  kMove = 0,  ///< y = x: transpose/slice/expand/concat/split/gather/trilu as strides (+ table)
  kReshape,   ///< y = x read in x's own row-major order (Reshape that is not a view)
  kAdd,       ///< intops::add_requantize(a, b, add)
  kSub,       ///< intops::sub_requantize(a, b, add)
  kMul,       ///< intops::mul_requantize(a, b, requant)
  kWhere,     ///< c != 0 ? a : b (third = c)
  kTable,     ///< intops::table_lookup(table, entries, x, lo, hi)
  kMatMul,    ///< sum_k rha(a[.., m, k], u) * rha(b[.., k, n], u), then the epilogue
  kSoftmax,   ///< integer softmax along the last axis of x (third = keep mask or absent)
  kNorm,      ///< layer/RMS norm over the last axis of x
  kReduceMax,
  kReduceSum,  ///< sum, then intops::requantize(requant) (ReduceMean: requant carries 1/n)
  kResize,     ///< ir::resize_taps: rha(sum over the cell's corners of prod(w) * x, shift)
};

/// The arguments of one workload kernel. `y` has the output's logical dims; x, second and third
/// are read with y's dims (broadcast operands have stride 0) unless the op says otherwise.
struct WorkArgs {
  std::int32_t op = kMove;
  Strided x, second, third, y;
  // kMove: gather along `gather_axis` through the int64 `table` (-1: none); trilu: keep
  // j - i <= k (lower) or >= k (upper) on the last two axes, zero elsewhere.
  std::int32_t gather_axis = -1;
  std::int32_t trilu = 0, trilu_upper = 0;
  std::int64_t trilu_k = 0;
  // kMove as Pad: output index i_d reads x at i_d - pad_begin[d] (x.dims are the input's);
  // outside x, `pad_value` (the quantized constant).
  std::int32_t pad = 0, pad_value = 0;
  std::int64_t pad_begin[kMaxRank] = {};
  // kAdd/kSub; kMul/kReduceSum
  intops::AddRequant add;
  intops::Requant requant;
  // kTable: int32 table; kSoftmax: intops::SoftmaxParams; kNorm: intops::NormAffine[n];
  // kMove with gather: int64 indices
  const void* table = nullptr;
  std::int32_t entries = 0, lo = 0, hi = 0;
  // kMatMul: x = a with dims [batch.., M, K], second = b with dims [batch.., K, N] (both
  // broadcast to y's batch dims); operand shift u of a, second_shift of b (both u for two
  // activations; the input shift and 0 for a constant weight matrix: docs/quantization.md);
  // the epilogue (requantize) on channel n.
  std::int32_t operand_shift = 0;
  std::int32_t second_shift = 0;
  Epilogue epilogue;
  // kNorm
  std::int32_t centre = 1;
  std::int64_t epsilon_term = 0;
  // kReduce*: x has dims [kept.., reduced..]; `reduced` = product of the reduced dims.
  std::int64_t reduced = 1;
  // kResize: `table` holds, axis after axis, y.dims[d] taps of four int64 (lo, hi, w_lo,
  // w_hi: compiler/ir/resize_taps.hpp); x keeps the input's own dims.
  std::int32_t resize_shift = 0;
};

/// Threads of a workload kernel: one per output element, or one per row (softmax, norm).
TESSEL_HD std::int64_t work_threads(const WorkArgs& a) {
  const std::int64_t n = strided_elements(a.y);
  if (a.op == kSoftmax || a.op == kNorm) return n / a.y.dims[a.y.rank - 1];
  return n;
}

/// x's offset of the element matching output element `linear` for kMove (gather: the axis
/// index goes through the table).
TESSEL_HD std::int64_t move_source(const WorkArgs& a, std::int64_t linear) {
  std::int64_t at = a.x.offset;
  for (int d = a.y.rank - 1; d >= 0; --d) {
    std::int64_t i = linear % a.y.dims[d];
    linear /= a.y.dims[d];
    if (d == a.gather_axis) i = static_cast<const std::int64_t*>(a.table)[i];
    at += i * a.x.strides[d];
  }
  return at;
}

/// Pad: x's element for output element `linear`, or the pad value outside x.
TESSEL_HD std::int32_t pad_element(const WorkArgs& a, std::int64_t linear) {
  std::int64_t at = a.x.offset;
  for (int d = a.y.rank - 1; d >= 0; --d) {
    const std::int64_t i = linear % a.y.dims[d] - a.pad_begin[d];
    linear /= a.y.dims[d];
    if (i < 0 || i >= a.x.dims[d]) return a.pad_value;
    at += i * a.x.strides[d];
  }
  return load_int(a.x.data, a.x.type, at);
}

/// Resize: output element `linear` from the taps at `a.table` (one definition with the golden
/// kernel's, compiler/ir/resize_taps.hpp); nearest is the one-corner case.
TESSEL_HD std::int32_t resize_element(const WorkArgs& a, std::int64_t linear) {
  const auto* taps = static_cast<const std::int64_t*>(a.table);
  std::int64_t index[kMaxRank] = {};
  for (int d = a.y.rank - 1; d >= 0; --d) {
    index[d] = linear % a.y.dims[d];
    linear /= a.y.dims[d];
  }
  const std::int64_t* tap[kMaxRank] = {};
  std::int64_t first = 0;  // the axis's first tap
  for (int d = 0; d < a.y.rank; ++d) {
    tap[d] = taps + 4 * (first + index[d]);
    first += a.y.dims[d];
  }
  std::int64_t sum = 0;
  for (std::int32_t corner = 0; corner < (1 << a.y.rank); ++corner) {
    std::int64_t weight = 1, at = a.x.offset;
    for (int d = 0; d < a.y.rank && weight != 0; ++d) {
      const int high = (corner >> d) & 1;
      weight *= tap[d][2 + high];
      at += tap[d][high] * a.x.strides[d];
    }
    if (weight != 0) sum += weight * load_int(a.x.data, a.x.type, at);
  }
  return static_cast<std::int32_t>(intops::round_half_away(sum, a.resize_shift));
}

/// Output element `linear` (row-major over y's dims) of every element-wise op.
TESSEL_HD std::int32_t work_element(const WorkArgs& a, std::int64_t linear) {
  switch (a.op) {
    case kMove: {
      if (a.pad) return pad_element(a, linear);
      if (a.trilu) {
        const std::int64_t cols = a.y.dims[a.y.rank - 1], rows = a.y.dims[a.y.rank - 2];
        const std::int64_t j = linear % cols, i = linear / cols % rows;
        const bool keep = a.trilu_upper ? j - i >= a.trilu_k : j - i <= a.trilu_k;
        if (!keep) return 0;
      }
      return load_int(a.x.data, a.x.type, move_source(a, linear));
    }
    case kReshape:
      return load_linear(a.x, linear);
    case kAdd:
      return intops::add_requantize(
          load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, linear)),
          load_int(a.second.data, a.second.type, strided_at(a.second, a.y.dims, linear)), a.add);
    case kSub:
      return intops::sub_requantize(
          load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, linear)),
          load_int(a.second.data, a.second.type, strided_at(a.second, a.y.dims, linear)), a.add);
    case kMul:
      return intops::mul_requantize(
          load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, linear)),
          load_int(a.second.data, a.second.type, strided_at(a.second, a.y.dims, linear)),
          a.requant);
    case kWhere: {
      const bool c = load_int(a.third.data, a.third.type, strided_at(a.third, a.y.dims, linear));
      const Strided& v = c ? a.x : a.second;
      return load_int(v.data, v.type, strided_at(v, a.y.dims, linear));
    }
    case kTable:
      return intops::table_lookup(static_cast<const std::int32_t*>(a.table), a.entries,
                                  load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, linear)),
                                  a.lo, a.hi);
    case kMatMul: {
      // a.x: [batch.., M, K]; a.second: [batch.., K, N]; y: [batch.., M, N].
      const int r = a.y.rank;
      const std::int64_t n = linear % a.y.dims[r - 1],
                         m = linear / a.y.dims[r - 1] % a.y.dims[r - 2];
      std::int64_t batch = linear / (a.y.dims[r - 1] * a.y.dims[r - 2]);
      std::int64_t a_at = a.x.offset + m * a.x.strides[r - 2];
      std::int64_t b_at = a.second.offset + n * a.second.strides[r - 1];
      for (int d = r - 3; d >= 0; --d) {
        const std::int64_t i = batch % a.y.dims[d];
        batch /= a.y.dims[d];
        a_at += i * a.x.strides[d];
        b_at += i * a.second.strides[d];
      }
      std::int64_t sum = 0;
      const std::int64_t k_len = a.x.dims[r - 1];
      for (std::int64_t k = 0; k < k_len; ++k) {
        const std::int64_t av = intops::round_half_away(
            load_int(a.x.data, a.x.type, a_at + k * a.x.strides[r - 1]), a.operand_shift);
        const std::int64_t bv = intops::round_half_away(
            load_int(a.second.data, a.second.type, b_at + k * a.second.strides[r - 2]),
            a.second_shift);
        sum += av * bv;
      }
      // int32 wrap as the GPU adder; the golden executor rejects a sum outside int32.
      const auto acc =
          static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum)));
      return apply_epilogue(a.epilogue, acc, n, 0);
    }
    case kReduceMax:
    case kReduceSum: {
      std::int64_t sum = 0;
      std::int32_t best = a.x.type == kI8 ? -128 : a.x.type == kI16 ? -32768 : (-2147483647 - 1);
      for (std::int64_t j = 0; j < a.reduced; ++j) {
        const std::int32_t v = load_linear(a.x, linear * a.reduced + j);
        sum += v;
        best = v > best ? v : best;
      }
      if (a.op == kReduceMax) return best;
      return intops::requantize(static_cast<std::int32_t>(sum), a.requant);
    }
    case kResize:
      return resize_element(a, linear);
    default:
      return 0;
  }
}

/// Computes and stores output element `linear` (row-major over y's dims).
TESSEL_HD void work_store(const WorkArgs& a, std::int64_t linear) {
  store_linear(a.y, linear, work_element(a, linear));
}

/// Integer softmax of row `row` of x along its last axis (intops::softmax_row over a strided
/// row, with the mask `third` when present), written to y.
TESSEL_HD void softmax_strided_row(const WorkArgs& a, std::int64_t row) {
  const auto& p = *static_cast<const intops::SoftmaxParams*>(a.table);
  const std::int64_t len = a.y.dims[a.y.rank - 1];
  const auto kept = [&](std::int64_t j) {
    return a.third.data == nullptr ||
           load_int(a.third.data, a.third.type, strided_at(a.third, a.y.dims, row * len + j)) != 0;
  };
  const auto x_at = [&](std::int64_t j) {
    return load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, row * len + j));
  };
  bool any = false;
  std::int32_t m = 0;
  for (std::int64_t j = 0; j < len; ++j)
    if (kept(j)) {
      const std::int32_t v = x_at(j);
      m = any ? (v > m ? v : m) : v;
      any = true;
    }
  std::int64_t sum = 0;
  for (std::int64_t j = 0; j < len; ++j)
    if (any && kept(j)) sum += intops::softmax_exp(p, x_at(j) - m);
  const std::int64_t reciprocal = any ? (std::int64_t{1} << 45) / sum : 0;
  for (std::int64_t j = 0; j < len; ++j) {
    std::int32_t v = 0;
    if (any && kept(j)) {
      const std::int64_t e = intops::softmax_exp(p, x_at(j) - m);
      v = intops::requantize(static_cast<std::int32_t>(intops::round_half_away(e * reciprocal, 15)),
                             p.output);
    }
    store_linear(a.y, row * len + j, v);
  }
}

/// Layer (centre) or RMS norm of row `row` of x over its last axis (intops::norm_row over a
/// strided row; the affine map intops::NormAffine[len] at `table`), written to y.
TESSEL_HD void norm_strided_row(const WorkArgs& a, std::int64_t row) {
  const auto* affine = static_cast<const intops::NormAffine*>(a.table);
  const std::int64_t n = a.y.dims[a.y.rank - 1];
  const auto x_at = [&](std::int64_t k) {
    return load_int(a.x.data, a.x.type, strided_at(a.x, a.y.dims, row * n + k));
  };
  std::int64_t s1 = 0, s2 = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t v = x_at(k);
    s1 += v;
    s2 += v * v;
  }
  const intops::NormScale scale = intops::norm_scale(n, s1, s2, a.centre, a.epsilon_term);
  const std::int64_t inv = scale.inv;
  const int g = scale.g;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t c = a.centre ? n * x_at(k) - s1 : n * x_at(k);
    const std::int64_t t = intops::round_half_away(c * inv, 38 - g);
    const intops::NormAffine& f = affine[k];
    store_linear(
        a.y, row * n + k,
        intops::clamp(intops::round_half_away(t * f.multiplier + f.bias, f.shift), a.lo, a.hi));
  }
}

/// Runs thread `index` of a workload kernel (an element, or a row for softmax and norm).
TESSEL_HD void work_thread(const WorkArgs& a, std::int64_t index) {
  if (a.op == kSoftmax)
    softmax_strided_row(a, index);
  else if (a.op == kNorm)
    norm_strided_row(a, index);
  else
    work_store(a, index);
}

}  // namespace tessel::cuda
