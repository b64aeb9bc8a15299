// Shape rules shared by shape inference and the executors: broadcasting, reductions, slices.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/op.hpp"
#include "compiler/ir/tensor.hpp"
#include "support/result.hpp"

namespace tessel::ir {

/// NumPy broadcasting of two shapes (aligned at the last axis; a 1 stretches); failure names
/// both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// Row-major strides of `shape`, with stride 0 on the axes where `shape` (right-aligned against
/// `out`) has extent 1 and `out` does not: reading element `i` of `out` at
/// sum(index_d * stride_d) gives the broadcast value.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& out);

/// A reduction's axes normalised to [0, rank), sorted, each once (empty `axes`: every axis).
Result<std::vector<std::int64_t>> reduce_axes(const Op& op, std::size_t rank);

/// One sliced axis after normalisation: elements start, start + step, ... (count of them).
struct SliceAxis {
  std::int64_t start = 0, step = 1, count = 0;
};
/// Every axis of `shape` as the Slice op `op` reads it (unlisted axes whole).
Result<std::vector<SliceAxis>> slice_axes(const Op& op, const Shape& shape);

/// Output shapes of the modern-workload kinds (MatMul .. Embedding in OpKind order), given the
/// inputs' shapes; failures name the op.
Result<std::vector<Shape>> workload_output_shapes(const Op& op, const std::vector<Shape>& in);

}  // namespace tessel::ir
