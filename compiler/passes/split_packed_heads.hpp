// split-packed-heads outside the pass table: whether it would change a graph (the scheduler
// runs it on graphs it is given unprepared, as it runs split-sliced-linear).
#pragma once

#include "compiler/ir/graph.hpp"

namespace tessel::passes {

/// Whether `graph` holds a packed q|k|v projection that split-packed-heads takes apart (a
/// Reshape to [B, N, P, H, hd], Transpose [2, 0, 3, 1, 4], Gathers of one index along axis 0).
bool split_packed_heads_applies(const ir::Graph& graph);

}  // namespace tessel::passes
