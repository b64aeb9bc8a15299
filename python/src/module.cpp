// The `tessel._tessel` extension module: binds Tessel's C++ API (python/README.md).
#include <pybind11/pybind11.h>

#include "python/src/bindings.hpp"
#include "python/src/convert.hpp"
#include "support/version.hpp"

PYBIND11_MODULE(_tessel, m) {
  namespace api = tessel::py_api;
  m.doc() = "Tessel's C++ API (models, hardware configs, schedules, simulation, sweeps).";
  api::register_exceptions(m);
  api::bind_model(m);
  api::bind_config(m);
  api::bind_pipeline(m);
  api::bind_sweep(m);
  m.attr("__version__") = tessel::version();
}
