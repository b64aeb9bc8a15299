// pools-before-concat outside the pass table: which policies compile with it, whether it would
// change a graph, and running it on a float graph and its quantized graph together.
#pragma once

#include <string_view>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::passes {

/// Whether `policy` compiles its graph after pools-before-concat: `optimal` only. Mirrors the
/// scheduler's NetForm::FoldedPoolsBeforeConcat (tests/passes checks that the two agree).
bool pools_before_concat_for_policy(std::string_view policy);

/// Whether `graph` holds a MaxPool that alone reads a channel Concat (one the pass rewrites):
/// a caller that keeps one prepared model per form can share the plain one otherwise.
bool pools_before_concat_applies(const ir::Graph& graph);

/// Runs the pass on a prepared float graph and on the quantized graph made from it. It runs
/// after quantization, not before: calibration then sees the Concat the pool read, so the
/// scales, and with them every integer, are the ones of the graph as written (a max pool and a
/// Concat share one scale, so pooling each branch gives the same integers). Run before
/// calibration, a histogram threshold of the unpooled Concat would be missing and the
/// rewritten graph would quantize differently. Fails, changing neither, if the two graphs do
/// not rewrite alike.
Status pools_before_concat(ir::Graph& float_graph, ir::Graph& quantized_graph);

}  // namespace tessel::passes
