// Bindings of the hardware config: HwConfig.load / from_dict / replace, the YAML loader's checks.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "python/src/bindings.hpp"
#include "python/src/convert.hpp"
#include "support/diagnostic.hpp"

namespace tessel::py_api {
namespace {

HwConfig checked(HwConfigCheck check) {
  if (!check.ok()) throw InputError(std::move(check.diagnostics));
  return std::move(*check.config);
}

HwConfig load(const std::string& path_or_name) {
  return checked(check_hw_config_file(resolve_hw_config(path_or_name)));
}

HwConfig from_dict(const py::dict& values, const std::string& label) {
  return checked(check_hw_config_text(yaml_text(to_yaml_node(values, "")), label));
}

// A copy with values replaced by key path ("dram.bandwidth"), validated as a loaded file.
HwConfig replace(const HwConfig& config, const py::kwargs& changes) {
  std::vector<KeyOverride> overrides;
  for (auto [key, value] : changes) {
    const auto key_path = key.cast<std::string>();
    std::string text = yaml_text(to_yaml_node(value, key_path));
    while (!text.empty() && text.back() == '\n') text.pop_back();
    overrides.push_back({key_path, text});
  }
  return checked(check_hw_config_text(to_yaml(config), "<" + config.name + ">", overrides));
}

}  // namespace

HwConfig config_from(py::handle hw) {
  if (py::isinstance<HwConfig>(hw)) return hw.cast<HwConfig>();
  if (py::isinstance<py::str>(hw) || py::hasattr(hw, "__fspath__"))
    return load(py::str(py::module_::import("os").attr("fspath")(hw)).cast<std::string>());
  throw ArgumentError("hw: expected a tessel.HwConfig, a config name or a YAML path, got " +
                      py::type::of(hw).attr("__name__").cast<std::string>());
}

void bind_config(py::module_& m) {
  py::class_<HwConfig>(m, "HwConfig",
                       "A validated hardware config (docs/config.md); immutable: replace() "
                       "returns a changed copy.")
      .def_static("load", &load, py::arg("path_or_name"),
                  "Loads a YAML file, or a shipped config by name ('npc19-deepfusion'). "
                  "Raises InputError with every located diagnostic.")
      .def_static("from_dict", &from_dict, py::arg("values"), py::arg("label") = "<dict>",
                  "A config from a dict in the YAML schema (docs/config.md), validated as a "
                  "file. Raises InputError naming each bad key path.")
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& label) {
            return checked(check_hw_config_text(text, label));
          },
          py::arg("text"), py::arg("label") = "<yaml>", "A config from YAML text.")
      .def("replace", &replace,
           "A copy with values replaced by key path: hw.replace(**{'dram.bandwidth': '2GB/s', "
           "'scratchpads[0].size': '256KiB'}). Validated; raises InputError naming the key.")
      .def_readonly("name", &HwConfig::name, "The config's name (its `name:` key).")
      .def_readonly("description", &HwConfig::description, "Its free-text description.")
      .def_readonly("clock_mhz", &HwConfig::clock_mhz, "The accelerator clock in MHz.")
      .def_property_readonly("macs_per_cycle", &HwConfig::macs_per_cycle,
                             "Multiply-accumulates per cycle (matrix rows x cols).")
      .def_property_readonly("peak_gops", &HwConfig::peak_gops,
                             "Peak operations per second in G (2 per MAC x clock).")
      .def_property_readonly("dram_bytes_per_cycle", &HwConfig::dram_bytes_per_cycle,
                             "DRAM bandwidth in bytes per accelerator cycle.")
      .def_property_readonly(
          "dram_bandwidth_bytes_per_second",
          [](const HwConfig& c) { return c.dram.bandwidth_bytes_per_second; },
          "DRAM bandwidth in bytes per second.")
      .def_property_readonly("total_onchip_bytes", &HwConfig::total_onchip_bytes,
                             "The scratchpads' sizes added up, in bytes.")
      .def_property_readonly(
          "content_hash", [](const HwConfig& c) { return content_hash(c); },
          "A hash (FNV-1a, hex) of its canonical content; reports and sweep rows carry it.")
      .def(
          "to_dict",
          [](const HwConfig& c) { return to_python(nlohmann::json::parse(to_canonical_json(c))); },
          "The canonical JSON form (units in key names) as a dict.")
      .def(
          "to_json", [](const HwConfig& c) { return to_canonical_json(c); },
          "The canonical JSON text (units in key names), what content_hash hashes.")
      .def(
          "to_yaml", [](const HwConfig& c) { return to_yaml(c); },
          "YAML in the input schema; HwConfig.from_yaml(c.to_yaml()) == c.")
      .def(
          "derived",
          [](const HwConfig& c) {
            return to_python(nlohmann::json::parse(derived_figures_json(c)));
          },
          "The derived figures of `tessel config show --json`.")
      .def(
          "describe", [](const HwConfig& c) { return describe(c); },
          "A readable summary: clock, matrix and vector units, scratchpads, DRAM.")
      .def(py::self == py::self)
      .def("__repr__", [](const HwConfig& c) {
        return "<tessel.HwConfig " + c.name + " " + content_hash(c) + ">";
      });
}

}  // namespace tessel::py_api
