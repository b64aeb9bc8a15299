// The causal-mask recogniser: a Softmax whose mask input is a constant lower-triangular band
// runs as the ISA `softmax` with its `causal` field instead of loading the mask.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/ir/graph.hpp"

namespace tessel::sched {

/// For a Softmax over the last axis with a constant keep-mask (its second input, 1 = kept, as
/// pass fuse-attention-mask writes whatever form the exporter used: Trilu/Where, an additive
/// -inf), the diagonal k such that key j of query i is kept exactly when j <= i + k, the same
/// in every leading slice (batch, heads). nullopt when the mask is not of that form: a padding
/// mask, a band that drops a whole row (k < 0), a mask that broadcasts along the queries or
/// keys, or a Softmax without a constant mask.
std::optional<std::int64_t> causal_diagonal(const ir::Graph& graph, const ir::Op& softmax);

}  // namespace tessel::sched
