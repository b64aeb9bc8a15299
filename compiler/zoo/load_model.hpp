// load_model: what every `--model` option accepts (zoo name, .onnx, .tir or .json IR file).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/ir/graph.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::zoo {

/// Options for load_model; each applies to the sources that have it.
struct LoadOptions {
  ZooOptions zoo;  ///< zoo models: batch, seed, with_weights
  /// .onnx: fixed shapes of graph inputs by name (`--input-shape`), see frontend/onnx_import.hpp.
  std::map<std::string, ir::Shape, std::less<>> input_shapes;
};

/// Resolves `name_or_path`:
/// - a path ending in `.onnx` -> frontend::import_onnx (throws InputError when the ONNX
///   frontend was not built: "ONNX import not built (compiler/frontend missing)");
/// - `.tir` -> ir::read_text_file; `.json` -> ir::from_json of the file;
/// - otherwise a zoo model name (unknown names throw InputError with a suggestion).
/// The result is validated (InputError listing the problems otherwise).
ir::Graph load_model(const std::string& name_or_path, const LoadOptions& options = {});

/// True when this build can import ONNX files.
bool onnx_import_available();

}  // namespace tessel::zoo
