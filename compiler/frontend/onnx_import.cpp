// ONNX -> graph IR: the public entry points (file reading, protobuf parsing, --input-shape).
// The importer itself is importer.{hpp,cpp} and the convert_*.cpp files.
#include "compiler/frontend/onnx_import.hpp"

#include <onnx/onnx_pb.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <memory>

#include "compiler/frontend/constant_eval.hpp"
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

/// Reads a tensor's external data (ONNX's `location`, `offset`, `length`) into its raw_data.
/// The location must be a relative path that stays inside the model's folder; the bytes must
/// be exactly the tensor's. Exports over protobuf's 2 GB keep their weights this way.
void read_external(onnx::TensorProto& tensor, const std::filesystem::path& folder,
                   const std::string& source, const std::string& what) {
  const SourceLocation at{source, 0, 0};
  std::string location;
  std::int64_t offset = 0, length = -1;
  for (const auto& entry : tensor.external_data()) {
    const auto number = [&](const std::string& text) {
      std::int64_t v = 0;
      for (char c : text) {
        if (c < '0' || c > '9' || v > (std::int64_t{1} << 50))
          throw_input_error(at, what,
                            "external data " + in_quotes(entry.key()) + " " + in_quotes(text) +
                                " is not a byte count");
        v = v * 10 + (c - '0');
      }
      return v;
    };
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = number(entry.value());
    if (entry.key() == "length") length = number(entry.value());
  }
  const std::filesystem::path relative(location);
  bool inside = !location.empty() && relative.is_relative();
  for (const auto& part : relative) inside = inside && part != "..";
  if (!inside)
    throw_input_error(at, what,
                      "external data location " + in_quotes(location) +
                          " must be a relative path inside the model's folder");
  std::int64_t count = 1;
  for (std::int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > (std::int64_t{1} << 40) / d))
      throw_input_error(at, what, "has dims too large for external data");
    count *= d;
  }
  const std::int64_t bytes = count * detail::raw_element_bytes(tensor.data_type());
  if (detail::raw_element_bytes(tensor.data_type()) == 0)
    throw_input_error(
        at, what,
        "external data of element type " + std::to_string(tensor.data_type()) + " is not read");
  if (length >= 0 && length != bytes)
    throw_input_error(at, what,
                      "external data length " + std::to_string(length) + " is not the " +
                          std::to_string(bytes) + " bytes its dims and type take");
  const std::filesystem::path file = folder / relative;
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    throw_input_error(at, what,
                      "external data file " + in_quotes(file.string()) + " is not a regular file");
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(file, error));
  if (error || size < offset + bytes)
    throw_input_error(at, what,
                      "external data file " + in_quotes(file.string()) + " holds " +
                          std::to_string(error ? 0 : size) + " bytes, the tensor needs " +
                          std::to_string(bytes) + " from offset " + std::to_string(offset));
  std::string data(static_cast<std::size_t>(bytes), '\0');
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  if (!in.read(data.data(), static_cast<std::streamsize>(bytes)))
    throw_input_error(at, what,
                      "reading external data file " + in_quotes(file.string()) + " failed");
  tensor.set_raw_data(std::move(data));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
}

/// Every initializer and Constant tensor of `model` stored externally, read in (import_onnx:
/// the folder of the model file).
void resolve_external_data(onnx::ModelProto& model, const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  auto* graph = model.mutable_graph();
  for (int i = 0; i < graph->initializer_size(); ++i) {
    onnx::TensorProto& t = *graph->mutable_initializer(i);
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
      read_external(t, folder, path,
                    "initializer " + std::to_string(i) + " " + in_quotes(t.name()));
  }
  for (int n = 0; n < graph->node_size(); ++n)
    for (auto& attr : *graph->mutable_node(n)->mutable_attribute())
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        read_external(*attr.mutable_t(), folder, path,
                      "node " + std::to_string(n) + " attribute " + in_quotes(attr.name()));
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
  if (model->has_graph()) resolve_external_data(*model, path);
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
