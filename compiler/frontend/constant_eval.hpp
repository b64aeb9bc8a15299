// Constant values at import: decoded ONNX tensors and the evaluator that folds constant nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::frontend::detail {

using Ints = std::vector<std::int64_t>;

/// A constant tensor: float data (FLOAT, DOUBLE, FLOAT16 payloads, held as float) or integer
/// data (INT64, INT32, INT16, INT8, UINT8, BOOL payloads, held as int64). `dims` may be empty:
/// a rank-0 scalar, which the evaluator handles as ONNX does (a scalar reaching the IR becomes
/// shape [1]). `data_type` is the ONNX TensorProto data type the values stand for.
struct ConstantData {
  int data_type = onnx::TensorProto_DataType_FLOAT;
  Ints dims;
  std::vector<float> floats;  ///< float-typed payloads
  Ints ints;                  ///< integer and bool payloads

  bool is_float() const;
  std::int64_t count() const;  ///< the product of dims (1 for a scalar)
  /// Element i as a double (either payload).
  double at(std::int64_t i) const;

  static ConstantData of_ints(Ints dims, Ints values,
                              int data_type = onnx::TensorProto_DataType_INT64);
  static ConstantData of_floats(Ints dims, std::vector<float> values);
};

/// Decodes an initializer or a Constant node's tensor. Failure: a payload that disagrees with
/// its dims, external data, or an element type outside the list above (the reason names it).
Result<ConstantData> decode_tensor(const onnx::TensorProto& tensor);

/// "FLOAT", "INT64", ...: the ONNX name of a TensorProto data type.
std::string data_type_name(int data_type);

/// Bytes of one raw_data element of a type decode_tensor reads (decode_tensor.cpp); 0 for any
/// other type. The external-data reader sizes a tensor's file bytes by it.
std::int64_t raw_element_bytes(int data_type);

/// "[2,3,4]": dims as the evaluator's and the decoder's messages write them.
std::string dims_string(const Ints& dims);

/// Whether `op_type` (default domain) is one the evaluator folds when every input is constant.
bool can_evaluate(std::string_view op_type);

/// Evaluates `node` of the model's `opset` on constant `inputs` (one per node input; an
/// omitted optional input is an entry with `present` false). Returns one ConstantData per node
/// output. Failure: an attribute, type or shape the evaluator does not handle (the reason says
/// which; the caller adds the node's location).
struct ConstantInput {
  bool present = false;
  ConstantData data;
};
Result<std::vector<ConstantData>> evaluate(const onnx::NodeProto& node, std::int64_t opset,
                                           const std::vector<ConstantInput>& inputs);

/// ONNX Shape's value for a tensor of `dims` (opset 15's start/end attributes applied).
Result<ConstantData> shape_value(const Ints& dims, const onnx::NodeProto& node);

/// NumPy broadcasting of two shapes; failure names both.
Result<Ints> broadcast(const Ints& a, const Ints& b);

}  // namespace tessel::frontend::detail
