// A sweep model entry's zoo options as load_model takes them (analytic and sim modes).
#pragma once

#include "compiler/zoo/load_model.hpp"
#include "experiments/sweep/spec.hpp"

namespace tessel::sweep {

/// The LoadOptions of `--batch`, `--seq`, `--kv-length` and `--layers` for one models: entry.
inline zoo::LoadOptions zoo_load_options(const ModelSource& source) {
  zoo::LoadOptions load;
  load.zoo.batch = source.batch;
  load.zoo.sequence = source.sequence;
  load.zoo.kv_length = source.kv_length;
  load.zoo.layers = source.layers;
  return load;
}

}  // namespace tessel::sweep
