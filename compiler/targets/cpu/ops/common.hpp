// Helpers shared by the registered kernels: typed dispatch and broadcast iteration.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "compiler/ir/shape_rules.hpp"
#include "compiler/targets/cpu/ops/kernel.hpp"
#include "compiler/targets/cpu/workload_kernels.hpp"
#include "support/int_nonlinear.hpp"

namespace tessel::cpu::ops {

/// Calls f(p) with the value's typed element pointer (const for a const value).
template <class Value, class F>
void visit_elements(Value& t, F&& f) {
  switch (t.dtype()) {
    case ir::DType::i8:
      f(t.template data<std::int8_t>());
      break;
    case ir::DType::u8:
      f(t.template data<std::uint8_t>());
      break;
    case ir::DType::i16:
      f(t.template data<std::int16_t>());
      break;
    case ir::DType::i32:
      f(t.template data<std::int32_t>());
      break;
    case ir::DType::f32:
      f(t.template data<float>());
      break;
  }
}

/// Calls f(i, offsets) for every element i of `out` (row-major), where offsets[k] is the
/// element of operand k (shape in_shapes[k], broadcast to `out` as NumPy does) that i reads.
template <std::size_t N, class F>
void for_each_broadcast(const ir::Shape& out, const std::array<ir::Shape, N>& in_shapes, F&& f) {
  const std::size_t rank = out.size();
  std::array<std::vector<std::int64_t>, N> strides;
  for (std::size_t k = 0; k < N; ++k) strides[k] = ir::broadcast_strides(in_shapes[k], out);
  const std::int64_t total = ir::element_count(out);
  if (total == 0) return;
  std::vector<std::int64_t> index(rank, 0);
  std::array<std::int64_t, N> offsets{};
  const std::int64_t inner = rank ? out[rank - 1] : 1;
  for (std::int64_t i = 0; i < total; i += inner) {
    // The innermost axis in one run, the outer ones by an odometer.
    std::array<std::int64_t, N> base = offsets;
    for (std::int64_t j = 0; j < inner; ++j) {
      f(i + j, base);
      for (std::size_t k = 0; k < N; ++k) base[k] += rank ? strides[k][rank - 1] : 0;
    }
    for (std::size_t d = rank - 1; d-- > 0;) {
      ++index[d];
      for (std::size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
      if (index[d] < out[d]) break;
      for (std::size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * out[d];
      index[d] = 0;
    }
  }
}

/// One run of a broadcast: output elements [begin, begin + length), where operand k reads
/// offset[k] + j * step[k] for j < length (step 0: one value for the run, or 1).
template <std::size_t N>
struct BroadcastRun {
  std::int64_t begin = 0, length = 0;
  std::array<std::int64_t, N> offset{}, step{};
};

/// The broadcast of N row-major operands to `out` as runs along the innermost axis, after
/// coalescing the adjacent axes that every operand reads contiguously (or not at all), so a
/// same-shape operation is one run and a bias row broadcast over [rows, C] is `rows` runs of C.
template <std::size_t N>
std::vector<BroadcastRun<N>> broadcast_runs(const ir::Shape& out,
                                            const std::array<ir::Shape, N>& in_shapes) {
  std::array<std::vector<std::int64_t>, N> strides;
  for (std::size_t k = 0; k < N; ++k) strides[k] = ir::broadcast_strides(in_shapes[k], out);
  std::vector<std::int64_t> dims;  // innermost first
  std::array<std::vector<std::int64_t>, N> steps;
  for (std::size_t d = out.size(); d-- > 0;) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (std::size_t k = 0; k < N && merge; ++k)
      merge = strides[k][d] == steps[k].back() * dims.back();
    if (merge) {
      dims.back() *= out[d];
      continue;
    }
    dims.push_back(out[d]);
    for (std::size_t k = 0; k < N; ++k) steps[k].push_back(strides[k][d]);
  }
  std::vector<BroadcastRun<N>> runs;
  if (ir::element_count(out) == 0) return runs;
  if (dims.empty()) {  // a single element
    runs.push_back({0, 1, {}, {}});
    return runs;
  }
  BroadcastRun<N> run;
  run.length = dims[0];
  for (std::size_t k = 0; k < N; ++k) run.step[k] = steps[k][0];
  std::vector<std::int64_t> index(dims.size(), 0);
  for (std::int64_t i = 0; i < ir::element_count(out); i += run.length) {
    run.begin = i;
    runs.push_back(run);
    for (std::size_t d = 1; d < dims.size(); ++d) {  // the odometer over the outer axes
      ++index[d];
      for (std::size_t k = 0; k < N; ++k) run.offset[k] += steps[k][d];
      if (index[d] < dims[d]) break;
      for (std::size_t k = 0; k < N; ++k) run.offset[k] -= steps[k][d] * dims[d];
      index[d] = 0;
    }
  }
  return runs;
}

/// The product of dims [begin, end) of `shape`.
inline std::int64_t dims_product(const ir::Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t n = 1;
  for (std::size_t d = begin; d < end; ++d) n *= shape[d];
  return n;
}

/// `axis` in [0, rank) (negative counts from the end).
inline std::size_t normalised_axis(std::int64_t axis, std::size_t rank) {
  return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis);
}

/// A single-output kernel result.
inline Result<std::vector<TensorData>> one(TensorData y) {
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  return out;
}

/// Writes the int32 values `v` into the integer value `y` (each already in y's range).
inline void store_ints(const std::vector<std::int32_t>& v, TensorData& y) {
  visit_elements(y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  });
}

/// y = T[x] on integers (docs/quantization.md, "Unary functions"): the i32 table is input
/// `table_slot` (256 entries for an 8-bit x, 257 interpolated for a 16-bit x).
inline Result<std::vector<TensorData>> table_kernel(const KernelArgs& args,
                                                    std::size_t table_slot) {
  const TensorData& x = args.input(0);
  const TensorData& table = args.input(table_slot);
  const int entries = static_cast<int>(table.size());
  const bool eight = x.dtype() == ir::DType::i8;
  if (!(eight ? entries == 256 : x.dtype() == ir::DType::i16 && entries == 257) ||
      table.dtype() != ir::DType::i32 || !ir::is_integer(args.output_tensor().dtype))
    return fail(args.where() +
                ": expects an i8 input with a 256-entry i32 table or an i16 input "
                "with 257 entries, and an integer output");
  TensorData y = args.allocate();
  const std::int32_t* t = table.data<std::int32_t>();
  const int bits = static_cast<int>(ir::dtype_bytes(y.dtype())) * 8;
  const std::int32_t lo = intops::qmin(bits), hi = intops::qmax(bits);
  if (y.dtype() == ir::DType::i8 || y.dtype() == ir::DType::i16) {
    // The vectorised lookups (workload_kernels.hpp), in slices over the OpenMP threads.
    const std::int64_t n = x.size(), slices = n >= (1 << 16) ? 16 : 1;
    const auto go = [&](const auto* xv, auto* out) {
#pragma omp parallel for schedule(static) if (slices > 1)
      for (std::int64_t s = 0; s < slices; ++s) {
        const std::int64_t i0 = n * s / slices, i1 = n * (s + 1) / slices;
        if constexpr (std::is_same_v<decltype(xv), const std::int8_t*>)
          fast::table_lookup(xv + i0, t, out + i0, i1 - i0);
        else
          fast::table_lookup(xv + i0, t, out + i0, i1 - i0, lo, hi);
      }
    };
    const auto with_out = [&](const auto* xv) {
      if (y.dtype() == ir::DType::i8)
        go(xv, y.data<std::int8_t>());
      else
        go(xv, y.data<std::int16_t>());
    };
    if (eight)
      with_out(x.data<std::int8_t>());
    else
      with_out(x.data<std::int16_t>());
    return one(std::move(y));
  }
  const auto xv = x.to_i32();
  std::vector<std::int32_t> v(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i)
    v[i] = intops::table_lookup(t, entries, xv[i], lo, hi);
  store_ints(v, y);
  return one(std::move(y));
}

}  // namespace tessel::cpu::ops
