// ONNX -> graph IR: the public entry points (file reading, protobuf parsing, --input-shape).
// The importer itself is importer.{hpp,cpp} and the convert_*.cpp files.
#include "compiler/frontend/onnx_import.hpp"

#include <onnx/onnx_pb.h>

#include <climits>
#include <filesystem>
#include <memory>

#include "compiler/frontend/importer.hpp"
#include "compiler/frontend/protobuf_wire.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel::frontend {
namespace {

using detail::in_quotes;

/// Parses `bytes` as an onnx.ModelProto; InputError (byte offset when known) otherwise.
std::unique_ptr<onnx::ModelProto> parse_model(std::string_view bytes,
                                              const std::string& source_name) {
  const SourceLocation location{source_name, 0, 0};
  if (bytes.empty()) {
    throw_input_error(location, "", "empty file (0 bytes); not an ONNX model");
  }
  const std::string size = std::to_string(bytes.size()) + " bytes";
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw_input_error(location, "", "file of " + size + " exceeds protobuf's 2 GiB message limit");
  }
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    if (auto fault = find_wire_fault(bytes)) {
      throw_input_error(location, "byte offset " + std::to_string(fault->offset),
                        "failed to parse ModelProto (" + size + "): " + fault->what);
    }
    throw_input_error(location, "",
                      "failed to parse ModelProto (" + size +
                          "): the framing is sound but protobuf rejected a field's content "
                          "(e.g. invalid UTF-8 in a string)");
  }
  // Random bytes can parse as a message of unknown fields; an ONNX model names its IR version.
  if (model->ir_version() <= 0 && !model->has_graph()) {
    throw_input_error(location, "",
                      "parsed " + size +
                          " as protobuf but found no ir_version and no graph; "
                          "not an ONNX model");
  }
  return model;
}

ir::Graph import_model(const onnx::ModelProto& model, const std::string& source_name,
                       const OnnxImportOptions& options) {
  std::string graph_name = std::filesystem::path(source_name).stem().string();
  if (graph_name.empty()) graph_name = model.graph().name();
  return detail::Importer(source_name, options).run(model, graph_name);
}

}  // namespace

ir::Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  std::unique_ptr<onnx::ModelProto> model;
  {
    // The file's bytes go before the IR's copies of the weights arrive (VGG-19: 575 MB).
    // Regular files only, at most protobuf's 2 GiB (a FIFO or /dev/zero is refused unread).
    const std::string bytes = files::read_file(path, kMaxModelBytes);
    model = parse_model(bytes, path);
  }
  return import_model(*model, path, options);
}

ir::Graph import_onnx_bytes(std::string_view bytes, const std::string& source_name,
                            const OnnxImportOptions& options) {
  return import_model(*parse_model(bytes, source_name), source_name, options);
}

Result<std::pair<std::string, ir::Shape>> parse_input_shape(std::string_view spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return fail("--input-shape " + in_quotes(spec) +
                ": expected NAME:D0xD1x... (e.g. input:1x3x224x224)");
  }
  std::string name(spec.substr(0, colon));
  std::string_view dims = spec.substr(colon + 1);
  ir::Shape shape;
  while (true) {
    const auto x = dims.find('x');
    const std::string_view part = dims.substr(0, x);
    std::int64_t value = 0;
    bool ok = !part.empty() && part.size() <= 18;
    for (char c : part) {
      if (c < '0' || c > '9') ok = false;
    }
    if (ok) value = std::stoll(std::string(part));
    if (!ok || value <= 0) {
      return fail("--input-shape " + in_quotes(spec) + ": dimension " + in_quotes(part) +
                  " is not a positive integer");
    }
    shape.push_back(value);
    if (x == std::string_view::npos) break;
    dims.remove_prefix(x + 1);
  }
  return std::make_pair(std::move(name), std::move(shape));
}

}  // namespace tessel::frontend
