// Conversions the bindings share (convert.hpp).
#include "python/src/convert.hpp"

#include <pybind11/stl.h>

#include "configs/hw_config.hpp"
#include "support/diagnostic.hpp"

namespace tessel::py_api {

void raise_if_failed(const Status& status, const std::string& what) {
  if (!status.ok()) throw Error(what.empty() ? status.reason() : what + ": " + status.reason());
}

py::object to_python(const nlohmann::json& json) {
  return py::module_::import("json").attr("loads")(json.dump());
}

py::object to_python(const nlohmann::ordered_json& json) {
  return py::module_::import("json").attr("loads")(json.dump());
}

YAML::Node to_yaml_node(py::handle value, const std::string& key_path) {
  const std::string where = key_path.empty() ? "the value" : "'" + key_path + "'";
  if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) return YAML::Node(value.cast<long long>());
  if (py::isinstance<py::float_>(value)) {
    // repr() is Python's shortest round-trip spelling (1e9 -> "1000000000.0").
    return YAML::Node(py::repr(value).cast<std::string>());
  }
  if (py::isinstance<py::str>(value)) return YAML::Node(value.cast<std::string>());
  // A numpy scalar (a DataFrame cell: numpy.int64, numpy.bool_) as the Python value it holds.
  if (py::hasattr(value, "dtype") && py::hasattr(value, "item") && py::hasattr(value, "ndim") &&
      value.attr("ndim").cast<int>() == 0)
    return to_yaml_node(value.attr("item")(), key_path);
  if (py::isinstance<HwConfig>(value)) return YAML::Load(to_yaml(value.cast<const HwConfig&>()));
  if (py::hasattr(value, "__fspath__"))
    return YAML::Node(py::str(value.attr("__fspath__")()).cast<std::string>());
  if (py::isinstance<py::dict>(value)) {
    YAML::Node map(YAML::NodeType::Map);
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!py::isinstance<py::str>(key))
        throw ArgumentError(where + ": keys must be strings, not " +
                            py::repr(key).cast<std::string>());
      const auto name = key.cast<std::string>();
      map[name] = to_yaml_node(item, key_path.empty() ? name : key_path + "." + name);
    }
    return map;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node sequence(YAML::NodeType::Sequence);
    std::size_t index = 0;
    for (py::handle item : value)
      sequence.push_back(to_yaml_node(item, key_path + "[" + std::to_string(index++) + "]"));
    return sequence;
  }
  throw ArgumentError(where + ": a " + py::type::of(value).attr("__name__").cast<std::string>() +
                      " cannot be written as YAML (use str, int, float, bool, list or dict)");
}

std::string yaml_text(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

void register_exceptions(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  error.attr("__doc__") =
      "A stage failed (a RuntimeError): no schedule fits, codegen cannot lower a group, a "
      "simulated fault. The message names the stage and the reason.";
  input_error.attr("__doc__") =
      "Bad input (a ValueError): a config and its key paths, an unknown model, a sweep spec, an "
      "array of the wrong dtype or shape. `.diagnostics` lists the located problems (file, "
      "line, column, key_path, message) when there are any.";
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& e) {
      error(e.what());
    } catch (const ArgumentError& e) {
      input_error(e.what());
    } catch (const InputError& e) {
      // The message is every located diagnostic; `diagnostics` gives them one by one.
      py::list diagnostics;
      for (const Diagnostic& d : e.diagnostics()) {
        py::dict item;
        item["file"] = d.location.file;
        item["line"] = d.location.line;
        item["column"] = d.location.column;
        item["key_path"] = d.key_path;
        item["message"] = d.message;
        diagnostics.append(item);
      }
      py::object instance =
          py::reinterpret_borrow<py::object>(input_error.ptr())(py::str(e.what()));
      instance.attr("diagnostics") = diagnostics;
      PyErr_SetObject(input_error.ptr(), instance.ptr());
    }
  });
}

}  // namespace tessel::py_api
