// split-sliced-linear outside the pass table: whether it would change a graph (the scheduler
// runs it on graphs it is given unprepared, so that it plans the ops the quantized graph has).
#pragma once

#include "compiler/ir/graph.hpp"

namespace tessel::passes {

/// Whether `graph` holds a Gemm that split-sliced-linear splits (its result read only by
/// disjoint last-axis Slices or one last-axis Split, through at most one Reshape).
bool split_sliced_linear_applies(const ir::Graph& graph);

}  // namespace tessel::passes
