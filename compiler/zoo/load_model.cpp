// load_model: dispatch on the spelling of --model to the zoo, the ONNX frontend or IR files.
#include "compiler/zoo/load_model.hpp"

#include <fstream>
#include <sstream>

#include "compiler/ir/json.hpp"
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
  return graph;
}

}  // namespace tessel::zoo
