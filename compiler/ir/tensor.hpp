// Tensor values of the graph IR: element types, shapes, quantization parameters, constant data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::ir {

/// Element type of a tensor.
enum class DType : std::uint8_t {
  f32,  ///< IEEE binary32; every float graph and every float constant
  i8,   ///< signed 8-bit quantized activations and weights
  u8,   ///< unsigned 8-bit quantized activations (ONNX QLinear style)
  i16,  ///< signed 16-bit quantized activations and weights (`--bits 16`)
  i32,  ///< accumulators and quantized biases
};

/// "f32", "i8", ...; the spelling used by the text form and JSON.
std::string_view to_string(DType dtype);
/// Inverse of to_string; failure names the unknown spelling.
Result<DType> parse_dtype(std::string_view text);
/// Bytes per element: 4, 1, 1, 2, 4.
std::int64_t dtype_bytes(DType dtype);
/// True for the integer types (all but f32).
bool is_integer(DType dtype);

/// Dimensions, outermost first; activations are NCHW, conv weights OIHW, Gemm weights [N,K]
/// (transB=1, as torchvision exports). An empty shape means "not inferred yet"; the IR has no
/// rank-0 tensors.
using Shape = std::vector<std::int64_t>;

/// Product of the dimensions (1 for an empty shape is never used: callers check known shapes).
std::int64_t element_count(const Shape& shape);
/// "[1,64,56,56]".
std::string shape_string(const Shape& shape);

/// Affine quantization: real = scale * (q - zero_point).
/// Per-tensor: one scale and one zero point, `axis` = -1.
/// Per-channel (weights): one scale per index of dimension `axis` (0 = output channel for
/// OIHW conv weights); `zero_points` has the same length (all zero for symmetric weights).
struct QuantParams {
  std::vector<float> scales;
  std::vector<std::int32_t> zero_points;
  int axis = -1;

  bool per_channel() const { return axis >= 0; }
  static QuantParams per_tensor(float scale, std::int32_t zero_point) {
    return {{scale}, {zero_point}, -1};
  }
  friend bool operator==(const QuantParams&, const QuantParams&) = default;
};

/// A named value: a graph input, an op result or a constant (initializer).
/// Constants carry their payload: `f32_values` for float data and `int_values` for the typed
/// integer storage of quantized constants (values lie in the range of `dtype`). A quantized
/// weight may carry both (the float original and its integer realisation).
/// A constant whose payload was left out of a text or JSON form keeps only its digest.
struct Tensor {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::optional<QuantParams> quant;
  bool constant = false;
  std::vector<float> f32_values;
  std::vector<std::int32_t> int_values;
  std::optional<std::uint64_t> elided_digest;  ///< payload digest when the payload is absent

  bool has_shape() const { return !shape.empty(); }
  /// True when the constant's payload is present (either storage).
  bool has_data() const { return !f32_values.empty() || !int_values.empty(); }
  /// Bytes the tensor occupies at its dtype (0 when the shape is unknown).
  std::int64_t bytes() const;
  /// 64-bit FNV-1a digest of the payload (f32 bytes, then int values as little-endian i32),
  /// or the elided digest; nullopt for a constant without either.
  std::optional<std::uint64_t> digest() const;

  friend bool operator==(const Tensor&, const Tensor&) = default;
};

/// "f32[1,3,224,224]".
std::string type_string(const Tensor& tensor);

}  // namespace tessel::ir
