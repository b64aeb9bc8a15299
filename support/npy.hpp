// NumPy .npy files (format 1.0/2.0/3.0, little-endian, C order): float32, int8, int16, int32.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// The element types Tessel reads and writes (.npy descr '<f4', '|i1', '<i2', '<i4').
enum class NpyDtype { f32, i8, i16, i32 };

/// "float32", "int8", "int16", "int32".
std::string_view npy_dtype_name(NpyDtype dtype);
/// Bytes per element: 4, 1, 2, 4.
std::size_t npy_dtype_size(NpyDtype dtype);

/// A dense C-order array as stored in a .npy file. `bytes` holds element_count() elements of
/// `dtype`, little-endian (the host order on every machine Tessel targets).
struct NpyArray {
  NpyDtype dtype = NpyDtype::f32;
  std::vector<std::int64_t> shape;  ///< empty for a 0-d array (one element)
  std::vector<std::uint8_t> bytes;

  std::int64_t element_count() const;

  /// A copy of the elements as T; T must match dtype (float for f32, int8_t for i8, ...).
  template <class T>
  std::vector<T> values() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  /// Builds an array from typed values; shape's product must equal values.size().
  static NpyArray from_f32(std::vector<std::int64_t> shape, std::span<const float> values);
  static NpyArray from_i8(std::vector<std::int64_t> shape, std::span<const std::int8_t> values);
  static NpyArray from_i16(std::vector<std::int64_t> shape, std::span<const std::int16_t> values);
  static NpyArray from_i32(std::vector<std::int64_t> shape, std::span<const std::int32_t> values);
};

/// Reads a .npy file. Throws tessel::InputError naming the file and the header key
/// ("magic", "header", "header.descr", "header.fortran_order", "header.shape", "data") on: a
/// missing or unreadable file, a non-regular file, a file or shape over files::kMaxArrayBytes, a
/// bad magic string or version, a malformed header, an unsupported dtype (e.g. '<f8', '>f4'),
/// Fortran order, or a data section shorter or longer than the shape.
NpyArray read_npy(const std::string& path);

/// Parses .npy content already in memory; `name` is used in diagnostics.
NpyArray parse_npy(std::span<const std::uint8_t> content, const std::string& name);

/// Serialises to .npy format 1.0 (header padded to a multiple of 64 bytes, as NumPy does).
std::vector<std::uint8_t> serialize_npy(const NpyArray& array);

/// Writes a .npy file atomically (support/files.hpp): refuses a path that is one of `inputs`.
/// Throws tessel::InputError naming the file when it cannot be written.
void write_npy(const std::string& path, const NpyArray& array,
               const std::vector<std::string>& inputs = {});

/// Throws tessel::InputError naming `name` and the element ("data[0, 2, 1, 1]") at the first
/// NaN or infinity of a float32 array; integer arrays always pass. The one rule for network
/// inputs and calibration data (docs/hostile-input.md): non-finite values are refused.
void check_finite(const NpyArray& array, const std::string& name);

}  // namespace tessel
