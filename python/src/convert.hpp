// Conversions the bindings share: JSON and YAML <-> Python objects, failures -> exceptions.
#pragma once

#include <pybind11/pybind11.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "support/result.hpp"

namespace tessel::py_api {

namespace py = pybind11;

/// A Result's failure, raised in Python as tessel.Error (a RuntimeError).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad arguments found by the bindings themselves (wrong array dtype or shape, a value that
/// cannot be YAML), raised as tessel.InputError (a ValueError) without diagnostics.
class ArgumentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The value of `result`, or tessel.Error with its reason (prefixed with `what` when given).
template <class T>
T value_or_raise(Result<T>&& result, const std::string& what = {}) {
  if (!result.ok()) throw Error(what.empty() ? result.reason() : what + ": " + result.reason());
  return std::move(result.value());
}
void raise_if_failed(const Status& status, const std::string& what = {});

/// JSON -> the Python object json.loads would give (dicts keep the key order).
py::object to_python(const nlohmann::json& json);
py::object to_python(const nlohmann::ordered_json& json);

/// A Python value (dict with str keys, list/tuple, str, bool, int, float, None, os.PathLike,
/// tessel.HwConfig) as a YAML node; anything else raises InputError naming `key_path`.
YAML::Node to_yaml_node(py::handle value, const std::string& key_path);

/// The YAML text of `node` (block style).
std::string yaml_text(const YAML::Node& node);

/// Registers tessel.Error and tessel.InputError and the translators of the C++ exceptions.
void register_exceptions(py::module_& m);

}  // namespace tessel::py_api
