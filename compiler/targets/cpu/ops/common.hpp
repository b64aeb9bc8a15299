// Helpers shared by the registered kernels: typed dispatch and broadcast iteration.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "compiler/ir/shape_rules.hpp"
#include "compiler/targets/cpu/ops/kernel.hpp"
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
  const auto xv = x.to_i32();
  const std::int32_t* t = table.data<std::int32_t>();
  const int bits = static_cast<int>(ir::dtype_bytes(y.dtype())) * 8;
  const std::int32_t lo = intops::qmin(bits), hi = intops::qmax(bits);
  std::vector<std::int32_t> v(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i)
    v[i] = intops::table_lookup(t, entries, xv[i], lo, hi);
  store_ints(v, y);
  return one(std::move(y));
}

}  // namespace tessel::cpu::ops
