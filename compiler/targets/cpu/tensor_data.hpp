// TensorData: a dense NCHW tensor value at run time (f32, i8, u8, i16 or i32 elements).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "compiler/ir/tensor.hpp"
#include "support/npy.hpp"
#include "support/result.hpp"

namespace tessel::cpu {

/// Element type of a DType (float, int8_t, uint8_t, int16_t, int32_t).
template <ir::DType D>
struct ElementOf;
template <>
struct ElementOf<ir::DType::f32> {
  using type = float;
};
template <>
struct ElementOf<ir::DType::i8> {
  using type = std::int8_t;
};
template <>
struct ElementOf<ir::DType::u8> {
  using type = std::uint8_t;
};
template <>
struct ElementOf<ir::DType::i16> {
  using type = std::int16_t;
};
template <>
struct ElementOf<ir::DType::i32> {
  using type = std::int32_t;
};

/// A value: dtype, shape and element storage (64-byte aligned, zero-initialised).
class TensorData {
 public:
  TensorData() = default;
  TensorData(ir::DType dtype, ir::Shape shape);

  ir::DType dtype() const { return dtype_; }
  const ir::Shape& shape() const { return shape_; }
  std::int64_t size() const { return size_; }
  /// Reinterprets the shape (same element count) — Flatten/Reshape.
  void reshape(ir::Shape shape);

  /// Typed element access; T must be the dtype's element type (checked).
  template <class T>
  T* data() {
    check<T>();
    return reinterpret_cast<T*>(storage_.data());
  }
  template <class T>
  const T* data() const {
    check<T>();
    return reinterpret_cast<const T*>(storage_.data());
  }
  void* raw() { return storage_.data(); }
  const void* raw() const { return storage_.data(); }
  std::size_t bytes() const { return static_cast<std::size_t>(size_ * ir::dtype_bytes(dtype_)); }

  /// Element i as a double (for any dtype).
  double at(std::int64_t i) const;
  /// Elements widened to int32 (integer dtypes only).
  std::vector<std::int32_t> to_i32() const;
  /// Elements as float: f32 as is, integers converted by value (no scale).
  std::vector<float> to_f32() const;

  /// A constant's payload (f32_values or int_values) at its dtype.
  static TensorData from_constant(const ir::Tensor& tensor);
  /// From float values / int32 values with a shape (tests).
  static TensorData from_f32(ir::Shape shape, std::span<const float> values);
  static TensorData from_ints(ir::DType dtype, ir::Shape shape,
                              std::span<const std::int32_t> values);

  /// .npy conversion: i8/i16/i32/f32 map one to one (u8 widens to i16).
  NpyArray to_npy() const;
  /// From .npy; the dtype maps back one to one.
  static TensorData from_npy(const NpyArray& array);

 private:
  template <class T>
  void check() const {
    if (sizeof(T) != static_cast<std::size_t>(ir::dtype_bytes(dtype_)))
      throw std::logic_error("TensorData: element type does not match the dtype");
  }

  ir::DType dtype_ = ir::DType::f32;
  ir::Shape shape_;
  std::int64_t size_ = 0;
  std::vector<std::uint64_t> storage_;  // 8-byte units: aligned for every element type
};

}  // namespace tessel::cpu
