// Element types, shapes and payload digests of IR tensors.
#include "compiler/ir/tensor.hpp"

#include <cstring>

namespace tessel::ir {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::i8:
      return "i8";
    case DType::u8:
      return "u8";
    case DType::i16:
      return "i16";
    case DType::i32:
      return "i32";
  }
  return "?";
}

Result<DType> parse_dtype(std::string_view text) {
  for (DType dtype : {DType::f32, DType::i8, DType::u8, DType::i16, DType::i32}) {
    if (to_string(dtype) == text) return dtype;
  }
  return fail("unknown dtype '" + std::string(text) + "' (expected f32, i8, u8, i16 or i32)");
}

std::int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 4;
    case DType::i8:
      return 1;
    case DType::u8:
      return 1;
    case DType::i16:
      return 2;
    case DType::i32:
      return 4;
  }
  return 0;
}

bool is_integer(DType dtype) {
  return dtype != DType::f32;
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t Tensor::bytes() const {
  return has_shape() ? element_count(shape) * dtype_bytes(dtype) : 0;
}

std::optional<std::uint64_t> Tensor::digest() const {
  if (!has_data()) return elided_digest;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  auto mix = [&hash](const unsigned char* bytes, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      hash ^= bytes[i];
      hash *= 0x100000001b3ULL;
    }
  };
  for (float value : f32_values) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const unsigned char le[4] = {
        static_cast<unsigned char>(bits), static_cast<unsigned char>(bits >> 8),
        static_cast<unsigned char>(bits >> 16), static_cast<unsigned char>(bits >> 24)};
    mix(le, 4);
  }
  for (std::int32_t value : int_values) {
    const auto bits = static_cast<std::uint32_t>(value);
    const unsigned char le[4] = {
        static_cast<unsigned char>(bits), static_cast<unsigned char>(bits >> 8),
        static_cast<unsigned char>(bits >> 16), static_cast<unsigned char>(bits >> 24)};
    mix(le, 4);
  }
  return hash;
}

std::string type_string(const Tensor& tensor) {
  return std::string(to_string(tensor.dtype)) +
         (tensor.has_shape() ? shape_string(tensor.shape) : "[?]");
}

}  // namespace tessel::ir
