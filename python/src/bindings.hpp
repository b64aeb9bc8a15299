// The objects the bindings share and the functions that register each part of the module.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "configs/hw_config.hpp"
#include "scheduler/driver.hpp"
#include "tools/run/pipeline.hpp"

namespace tessel::py_api {

namespace py = pybind11;

/// tessel.QuantizedModel: a model prepared for one policy's form (pipeline::PreparedModel).
struct QuantizedModel {
  std::shared_ptr<const pipeline::PreparedModel> model;
  std::string policy;  ///< the policy whose form it is in (BatchNorm lowering, pools)
  int bits = 8;
};

/// tessel.Schedule: a checked schedule and the Net it indexes.
struct Schedule {
  std::shared_ptr<const sched::ScheduledNet> scheduled;
  HwConfig config;  ///< what it was made for (its predicted energy)
};

/// tessel.Program: a compiled policy, ready to simulate (pipeline::compile_policy).
struct Program {
  std::shared_ptr<const pipeline::PreparedModel> model;
  HwConfig config;
  std::shared_ptr<pipeline::PolicyResult> result;
  sched::Objective objective = sched::Objective::Bytes;
};

/// Runs the golden executor on `graph` with x (one float32 array, or a dict by input name);
/// returns one array, or a dict by output name when the graph has several outputs.
py::object run_executor(const ir::Graph& graph, py::handle x);

/// Raises InputError when a constant of `graph` has no values (loaded with_weights=False).
void check_has_weights(const ir::Graph& graph);

/// A config from a tessel.HwConfig, or from a str: a name in configs/hw/ or a YAML path.
HwConfig config_from(py::handle hw);

void bind_model(py::module_& m);
void bind_config(py::module_& m);
void bind_pipeline(py::module_& m);
void bind_sweep(py::module_& m);

}  // namespace tessel::py_api
