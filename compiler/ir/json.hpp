// The JSON form of a graph (nlohmann::json): complete, including constant payloads in base64.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/ir/graph.hpp"

namespace tessel::ir {

/// Options of the JSON form.
struct JsonOptions {
  /// When false, constants carry `"digest"` instead of `"data_f32"`/`"data_int"` (a compact
  /// structural form; it reads back as payload-less constants).
  bool include_data = true;
};

/// {"format": "tessel-ir", "version": 1, "name", "tensors": [...], "ops": [...], "outputs"}.
/// Tensors: {"name","dtype","shape","constant"?, "quant"?: {"scales","zero_points","axis"},
/// "data_f32"?: base64 of little-endian binary32, "data_int"?: base64 of little-endian int32,
/// "digest"?: 16 hex digits}. Ops in id order: {"name","kind","inputs","outputs","attrs"};
/// attribute values are JSON numbers, arrays or strings, read back with the type the op's
/// schema declares (so 1 and 1.0 cannot be confused).
nlohmann::json to_json(const Graph& graph, const JsonOptions& options = {});

/// Inverse of to_json; malformed documents throw InputError naming the JSON key path
/// (e.g. `ops[3].attrs.kernel`).
Graph from_json(const nlohmann::json& document, const std::string& source_name = "<json>");

}  // namespace tessel::ir
