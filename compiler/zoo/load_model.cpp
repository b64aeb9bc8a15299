// load_model: dispatch on the spelling of --model to the zoo, the ONNX frontend or IR files.
#include "compiler/zoo/load_model.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "compiler/ir/json.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "support/diagnostic.hpp"

#ifdef TESSEL_HAVE_ONNX_FRONTEND
#include "compiler/frontend/onnx_import.hpp"
#endif

namespace tessel::zoo {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ir::Graph load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input_error({path, 0, 0}, "", "cannot open the file");
  nlohmann::json document;
  try {
    in >> document;
  } catch (const nlohmann::json::parse_error& e) {
    throw_input_error({path, 0, 0}, "", std::string("not JSON: ") + e.what());
  }
  return ir::from_json(document, path);
}

}  // namespace

bool onnx_import_available() {
#ifdef TESSEL_HAVE_ONNX_FRONTEND
  return true;
#else
  return false;
#endif
}

ir::Graph load_model(const std::string& name_or_path, const LoadOptions& options) {
  ir::Graph graph;
  const bool text_or_json = ends_with(name_or_path, ".tir") || ends_with(name_or_path, ".json");
  if (ends_with(name_or_path, ".onnx")) {
#ifdef TESSEL_HAVE_ONNX_FRONTEND
    frontend::OnnxImportOptions import_options;
    import_options.input_shapes = options.input_shapes;
    graph = frontend::import_onnx(name_or_path, import_options);
#else
    throw_input_error({name_or_path, 0, 0}, "",
                      "ONNX import not built (compiler/frontend missing from this build)");
#endif
  } else if (ends_with(name_or_path, ".tir")) {
    graph = ir::read_text_file(name_or_path);
  } else if (ends_with(name_or_path, ".json")) {
    graph = load_json_file(name_or_path);
  } else {
    auto built = build_model(name_or_path, options.zoo);
    if (!built) throw_input_error({}, "--model", built.reason());
    return std::move(built).value();  // builders validate
  }
  if (Status valid = ir::validate(graph); !valid) {
    throw_input_error({name_or_path, 0, 0}, "", "invalid graph: " + valid.reason());
  }
  // A text or JSON graph may leave results unshaped (`f32[?]`): infer them, and check every shape
  // the file declares against the inferred one (the executors read shapes from the graph; an
  // unshaped result ran as a single element once, a silent wrong answer).
  if (!text_or_json) return graph;  // the ONNX importer infers every shape as it converts
  std::map<std::string, ir::Shape> declared;
  for (const auto& [name, tensor] : graph.tensors())
    if (!tensor.constant && tensor.has_shape()) declared[name] = tensor.shape;
  if (Status inferred = ir::infer_all_shapes(graph); !inferred)
    throw_input_error({name_or_path, 0, 0}, "", "shape inference: " + inferred.reason());
  for (const auto& [name, shape] : declared)
    if (graph.tensor(name).shape != shape)
      throw_input_error({name_or_path, 0, 0}, "",
                        "%" + name + " is declared " + ir::shape_string(shape) + " but infers to " +
                            ir::shape_string(graph.tensor(name).shape));
  return graph;
}

}  // namespace tessel::zoo
