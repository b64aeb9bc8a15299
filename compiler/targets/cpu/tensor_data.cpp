// TensorData storage and conversions.
#include "compiler/targets/cpu/tensor_data.hpp"

#include <algorithm>

namespace tessel::cpu {

TensorData::TensorData(ir::DType dtype, ir::Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), size_(ir::element_count(shape_)) {
  storage_.assign((static_cast<std::size_t>(size_ * ir::dtype_bytes(dtype_)) + 7) / 8, 0);
}

void TensorData::reshape(ir::Shape shape) {
  if (ir::element_count(shape) != size_)
    throw std::logic_error("TensorData::reshape: element count changes");
  shape_ = std::move(shape);
}

double TensorData::at(std::int64_t i) const {
  switch (dtype_) {
    case ir::DType::f32:
      return data<float>()[i];
    case ir::DType::i8:
      return data<std::int8_t>()[i];
    case ir::DType::u8:
      return data<std::uint8_t>()[i];
    case ir::DType::i16:
      return data<std::int16_t>()[i];
    case ir::DType::i32:
      return data<std::int32_t>()[i];
  }
  return 0.0;
}

namespace {
template <class T, class U>
std::vector<U> widen(const T* p, std::int64_t n) {
  return std::vector<U>(p, p + n);
}
}  // namespace

std::vector<std::int32_t> TensorData::to_i32() const {
  switch (dtype_) {
    case ir::DType::i8:
      return widen<std::int8_t, std::int32_t>(data<std::int8_t>(), size_);
    case ir::DType::u8:
      return widen<std::uint8_t, std::int32_t>(data<std::uint8_t>(), size_);
    case ir::DType::i16:
      return widen<std::int16_t, std::int32_t>(data<std::int16_t>(), size_);
    case ir::DType::i32:
      return widen<std::int32_t, std::int32_t>(data<std::int32_t>(), size_);
    case ir::DType::f32:
      break;
  }
  throw std::logic_error("TensorData::to_i32 on a float tensor");
}

std::vector<float> TensorData::to_f32() const {
  std::vector<float> out(static_cast<std::size_t>(size_));
  if (dtype_ == ir::DType::f32) {
    std::copy(data<float>(), data<float>() + size_, out.begin());
  } else {
    for (std::int64_t i = 0; i < size_; ++i)
      out[static_cast<std::size_t>(i)] = static_cast<float>(at(i));
  }
  return out;
}

TensorData TensorData::from_f32(ir::Shape shape, std::span<const float> values) {
  TensorData t(ir::DType::f32, std::move(shape));
  if (static_cast<std::int64_t>(values.size()) != t.size())
    throw std::logic_error("TensorData::from_f32: value count does not match the shape");
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

TensorData TensorData::from_ints(ir::DType dtype, ir::Shape shape,
                                 std::span<const std::int32_t> values) {
  TensorData t(dtype, std::move(shape));
  if (static_cast<std::int64_t>(values.size()) != t.size())
    throw std::logic_error("TensorData::from_ints: value count does not match the shape");
  for (std::int64_t i = 0; i < t.size(); ++i) {
    const auto v = values[static_cast<std::size_t>(i)];
    switch (dtype) {
      case ir::DType::i8:
        t.data<std::int8_t>()[i] = static_cast<std::int8_t>(v);
        break;
      case ir::DType::u8:
        t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v);
        break;
      case ir::DType::i16:
        t.data<std::int16_t>()[i] = static_cast<std::int16_t>(v);
        break;
      case ir::DType::i32:
        t.data<std::int32_t>()[i] = v;
        break;
      case ir::DType::f32:
        t.data<float>()[i] = static_cast<float>(v);
        break;
    }
  }
  return t;
}

TensorData TensorData::from_constant(const ir::Tensor& tensor) {
  if (!tensor.int_values.empty() && ir::is_integer(tensor.dtype))
    return from_ints(tensor.dtype, tensor.shape, tensor.int_values);
  return from_f32(tensor.shape, tensor.f32_values);
}

NpyArray TensorData::to_npy() const {
  const std::vector<std::int64_t> shape(shape_.begin(), shape_.end());
  switch (dtype_) {
    case ir::DType::f32:
      return NpyArray::from_f32(
          shape, std::span<const float>(data<float>(), static_cast<std::size_t>(size_)));
    case ir::DType::i8:
      return NpyArray::from_i8(shape, std::span<const std::int8_t>(
                                          data<std::int8_t>(), static_cast<std::size_t>(size_)));
    case ir::DType::i16:
      return NpyArray::from_i16(shape, std::span<const std::int16_t>(
                                           data<std::int16_t>(), static_cast<std::size_t>(size_)));
    case ir::DType::i32:
      return NpyArray::from_i32(shape, std::span<const std::int32_t>(
                                           data<std::int32_t>(), static_cast<std::size_t>(size_)));
    case ir::DType::u8: {
      std::vector<std::int16_t> wide(data<std::uint8_t>(), data<std::uint8_t>() + size_);
      return NpyArray::from_i16(shape, wide);
    }
  }
  return {};
}

TensorData TensorData::from_npy(const NpyArray& array) {
  ir::DType dtype = ir::DType::f32;
  switch (array.dtype) {
    case NpyDtype::f32:
      dtype = ir::DType::f32;
      break;
    case NpyDtype::i8:
      dtype = ir::DType::i8;
      break;
    case NpyDtype::i16:
      dtype = ir::DType::i16;
      break;
    case NpyDtype::i32:
      dtype = ir::DType::i32;
      break;
  }
  TensorData t(dtype, ir::Shape(array.shape.begin(), array.shape.end()));
  std::memcpy(t.raw(), array.bytes.data(), std::min(t.bytes(), array.bytes.size()));
  return t;
}

}  // namespace tessel::cpu
