// Decoding ONNX tensors (initializers, Constant nodes' values) into ConstantData: raw
// little-endian payloads or the typed lists, with their element types and sizes.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "compiler/frontend/constant_eval.hpp"

namespace tessel::frontend::detail {
namespace {

// ONNX stores raw_data little-endian; the decoder copies it as is.
static_assert(std::endian::native == std::endian::little, "big-endian hosts need byte swaps");

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1U, exponent = (h >> 10) & 0x1FU, mantissa = h & 0x3FFU;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400U), static_cast<int>(exponent) - 25);
  }
  return sign ? -value : value;
}

}  // namespace

std::string data_type_name(int data_type) {
  if (onnx::TensorProto_DataType_IsValid(data_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(data_type));
  }
  return "type " + std::to_string(data_type);
}

std::int64_t raw_element_bytes(int data_type) {
  switch (data_type) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_INT32:
      return 4;
    case onnx::TensorProto_DataType_DOUBLE:
    case onnx::TensorProto_DataType_INT64:
      return 8;
    case onnx::TensorProto_DataType_FLOAT16:
    case onnx::TensorProto_DataType_INT16:
      return 2;
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL:
      return 1;
    default:
      return 0;
  }
}

Result<ConstantData> decode_tensor(const onnx::TensorProto& tensor) {
  ConstantData data;
  data.data_type = tensor.data_type();
  if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    return fail(
        "stores its data in an external file, which Tessel reads only for a model "
        "imported from a file (the data's folder)");
  }
  std::int64_t count = 1;
  for (std::int64_t d : tensor.dims()) {
    if (d < 0) return fail("has a negative dimension " + std::to_string(d));
    data.dims.push_back(d);
    count = d == 0 ? 0 : (count > std::numeric_limits<std::int64_t>::max() / d ? -1 : count * d);
    if (count < 0) return fail("has too many elements");
  }
  const std::string& raw = tensor.raw_data();
  const bool has_raw = tensor.has_raw_data();
  auto count_error = [&](std::size_t got) {
    return fail("holds " + std::to_string(got) + " values but its dims " + dims_string(data.dims) +
                " need " + std::to_string(count));
  };
  // Raw payloads of `width` bytes per element, widened by `convert`.
  auto from_raw = [&](std::size_t width, auto convert) -> Status {
    if (raw.size() % width != 0) {
      return fail("raw_data has " + std::to_string(raw.size()) +
                  " bytes, not a multiple of the element size " + std::to_string(width));
    }
    if (static_cast<std::int64_t>(raw.size() / width) != count)
      return count_error(raw.size() / width);
    for (std::size_t i = 0; i < raw.size(); i += width) convert(raw.data() + i);
    return {};
  };
  auto from_list = [&](const auto& list, auto& target) -> Status {
    if (static_cast<std::int64_t>(list.size()) != count)
      return count_error(static_cast<std::size_t>(list.size()));
    for (auto v : list)
      target.push_back(static_cast<std::remove_reference_t<decltype(target[0])>>(v));
    return {};
  };
  Status status;
  switch (tensor.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (has_raw) {
        // Little-endian binary32, as on every host Tessel builds for: one copy.
        if (raw.size() % 4 != 0) {
          return fail("raw_data has " + std::to_string(raw.size()) +
                      " bytes, not a multiple of the element size 4");
        }
        if (static_cast<std::int64_t>(raw.size() / 4) != count) return count_error(raw.size() / 4);
        data.floats.resize(raw.size() / 4);
        std::memcpy(data.floats.data(), raw.data(), raw.size());
      } else {
        status = from_list(tensor.float_data(), data.floats);
      }
      break;
    case onnx::TensorProto_DataType_DOUBLE:
      status = has_raw ? from_raw(8,
                                  [&](const char* p) {
                                    double v;
                                    std::memcpy(&v, p, 8);
                                    data.floats.push_back(static_cast<float>(v));
                                  })
                       : from_list(tensor.double_data(), data.floats);
      break;
    case onnx::TensorProto_DataType_FLOAT16:
      status = has_raw ? from_raw(2,
                                  [&](const char* p) {
                                    std::uint16_t v;
                                    std::memcpy(&v, p, 2);
                                    data.floats.push_back(half_to_float(v));
                                  })
                       : Status(fail("FLOAT16 values outside raw_data are not read"));
      break;
    case onnx::TensorProto_DataType_INT64:
      status = has_raw ? from_raw(8,
                                  [&](const char* p) {
                                    std::int64_t v;
                                    std::memcpy(&v, p, 8);
                                    data.ints.push_back(v);
                                  })
                       : from_list(tensor.int64_data(), data.ints);
      break;
    case onnx::TensorProto_DataType_INT32:
      status = has_raw ? from_raw(4,
                                  [&](const char* p) {
                                    std::int32_t v;
                                    std::memcpy(&v, p, 4);
                                    data.ints.push_back(v);
                                  })
                       : from_list(tensor.int32_data(), data.ints);
      break;
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL: {
      const bool is_signed = tensor.data_type() == onnx::TensorProto_DataType_INT8;
      status = has_raw ? from_raw(1,
                                  [&](const char* p) {
                                    data.ints.push_back(
                                        is_signed ? std::int64_t{static_cast<std::int8_t>(*p)}
                                                  : std::int64_t{static_cast<std::uint8_t>(*p)});
                                  })
                       : from_list(tensor.int32_data(), data.ints);
      break;
    }
    case onnx::TensorProto_DataType_INT16:
      status = has_raw ? from_raw(2,
                                  [&](const char* p) {
                                    std::int16_t v;
                                    std::memcpy(&v, p, 2);
                                    data.ints.push_back(v);
                                  })
                       : from_list(tensor.int32_data(), data.ints);
      break;
    default:
      return fail("has element type " + data_type_name(tensor.data_type()) +
                  "; Tessel reads FLOAT, DOUBLE, FLOAT16, INT64, INT32, INT16, INT8, UINT8 and "
                  "BOOL constants");
  }
  if (!status) return status.failure();
  return data;
}

}  // namespace tessel::frontend::detail
