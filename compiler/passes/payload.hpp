// Helpers shared by the passes that compute new constants (internal to compiler/passes).
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::passes::detail {

/// Whether a rewrite can compute values: every named tensor is a constant with an f32 payload
/// (Ok true), none has a payload (Ok false: the rewrite is structural, results are payload-less,
/// as for zoo models built without weights), or a mix / a non-constant (failure naming it).
Result<bool> payload_available(const ir::Graph& graph, const std::vector<std::string>& names,
                               const std::string& where);

/// Adds a constant named `name` (made unique) with `shape` and, when `values` is non-empty,
/// that payload; returns the name used.
std::string add_constant(ir::Graph& graph, const std::string& name, ir::Shape shape,
                         std::vector<float> values);

}  // namespace tessel::passes::detail
