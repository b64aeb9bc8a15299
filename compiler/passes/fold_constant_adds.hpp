// fold-constant-adds outside the pass table: whether it would change a graph (the scheduler
// runs it on graphs it is given unprepared, as it runs split-packed-heads).
#pragma once

#include "compiler/ir/graph.hpp"

namespace tessel::passes {

/// Whether `graph` holds two constant Adds that fold-constant-adds makes one (directly, or
/// around a Reshape and its way back).
bool fold_constant_adds_applies(const ir::Graph& graph);

}  // namespace tessel::passes
