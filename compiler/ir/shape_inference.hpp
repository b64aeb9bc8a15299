// Output shape/dtype inference for one op (the shape-inference pass runs it over a graph).
#pragma once

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::ir {

/// Computes the shapes and dtypes of `id`'s outputs from its inputs and attributes and stores
/// them on the output tensors. Fails, naming the op, its kind and the offending input, when an
/// input shape is unknown or inconsistent ("%conv1 (Conv): weight %w has 4 input channels but
/// input %x has 3 (group 1)"). Output dtype: the first input's, except Conv/Gemm on integers (i32),
/// Quantize (from the output's existing dtype, i8 by default), Dequantize (f32) and Requantize
/// (output's, i8).
Status infer_shapes(Graph& graph, OpId id);

/// infer_shapes over every op in topological order.
Status infer_all_shapes(Graph& graph);

}  // namespace tessel::ir
