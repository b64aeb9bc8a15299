// Shape rules of the modern-workload op kinds: broadcasting, matmul, reductions, slices.
#include "compiler/ir/shape_rules.hpp"
#include "compiler/ir/unary.hpp"

#include <algorithm>
#include <string>

namespace tessel::ir {
namespace {

Failure op_failure(const Op& op, const std::string& what) {
  return fail("%" + op.name + " (" + std::string(to_string(op.kind)) + "): " + what);
}

std::int64_t normalised(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

Result<std::vector<Shape>> matmul_shape(const Op& op, const Shape& a, const Shape& b) {
  if (a.size() < 2 || b.size() < 2)
    return op_failure(op, "operands " + shape_string(a) + " and " + shape_string(b) +
                              " need rank >= 2 (the importer reshapes vectors)");
  const std::int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    return op_failure(op, "operands " + shape_string(a) + " and " + shape_string(b) +
                              " disagree on K (" + std::to_string(k) + " vs " + std::to_string(kb) +
                              ")");
  auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch) return op_failure(op, "batch dims: " + batch.reason());
  Shape out = batch.value();
  out.push_back(m);
  out.push_back(n);
  return std::vector<Shape>{out};
}

Result<std::vector<Shape>> reduce_shape(const Op& op, const Shape& x) {
  auto axes = reduce_axes(op, x.size());
  if (!axes) return axes.failure();
  const bool keep = op.get_int("keepdims") != 0;
  Shape out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    const bool reduced =
        std::binary_search(axes.value().begin(), axes.value().end(), static_cast<std::int64_t>(d));
    if (!reduced)
      out.push_back(x[d]);
    else if (keep)
      out.push_back(1);
  }
  if (out.empty()) out.push_back(1);  // the IR has no rank-0 tensors: a full reduction is [1]
  return std::vector<Shape>{out};
}

Result<std::vector<Shape>> transpose_shape(const Op& op, const Shape& x) {
  const auto& perm = op.get_ints("perm");
  if (perm.size() != x.size())
    return op_failure(op, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                              std::to_string(x.size()));
  std::vector<bool> seen(x.size(), false);
  Shape out;
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(x.size()) || seen[static_cast<std::size_t>(p)])
      return op_failure(op, "perm " + shape_string(perm) + " is not a permutation of the axes");
    seen[static_cast<std::size_t>(p)] = true;
    out.push_back(x[static_cast<std::size_t>(p)]);
  }
  return std::vector<Shape>{out};
}

Result<std::vector<Shape>> gather_shape(const Op& op, const Shape& x) {
  const std::int64_t axis = normalised(op.get_int("axis"), x.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(x.size()))
    return op_failure(op, "axis " + std::to_string(op.get_int("axis")) + " out of range");
  const auto& indices = op.get_ints("indices");
  const auto& ishape = op.get_ints("indices_shape");
  const std::int64_t count = ishape.empty() ? 1 : element_count(ishape);
  if (static_cast<std::int64_t>(indices.size()) != count)
    return op_failure(
        op, std::to_string(indices.size()) + " indices for indices_shape " + shape_string(ishape));
  for (std::int64_t i : indices)
    if (i < 0 || i >= x[static_cast<std::size_t>(axis)])
      return op_failure(op, "index " + std::to_string(i) + " outside [0, " +
                                std::to_string(x[static_cast<std::size_t>(axis)]) + ")");
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), ishape.begin(), ishape.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  if (out.empty()) out.push_back(1);
  return std::vector<Shape>{out};
}

Result<std::vector<Shape>> norm_shape(const Op& op, const std::vector<Shape>& in) {
  const Shape& x = in[0];
  const std::int64_t axis = normalised(op.get_int("axis"), x.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(x.size()))
    return op_failure(op, "axis " + std::to_string(op.get_int("axis")) + " out of range");
  const Shape normalised_dims(x.begin() + axis, x.end());
  for (std::size_t slot = 1; slot < in.size(); ++slot) {
    // scale and bias: the normalised dims, or their element count as a vector
    if (in[slot] != normalised_dims && in[slot] != Shape{element_count(normalised_dims)})
      return op_failure(op, (slot == 1 ? "scale " : "bias ") + shape_string(in[slot]) +
                                " does not match the normalised dims " +
                                shape_string(normalised_dims));
  }
  return std::vector<Shape>{x};
}

Result<std::vector<Shape>> expand_shape(const Op& op, const Shape& x) {
  auto out = broadcast_shapes(x, op.get_ints("shape"));
  if (!out) return op_failure(op, out.reason());
  return std::vector<Shape>{out.value()};
}

Result<std::vector<Shape>> resize_shape(const Op& op, const Shape& x) {
  const auto& sizes = op.get_ints("sizes");
  if (sizes.size() != x.size())
    return op_failure(op, "sizes " + shape_string(sizes) + " for input " + shape_string(x));
  for (std::int64_t s : sizes)
    if (s <= 0) return op_failure(op, "sizes " + shape_string(sizes) + " has a non-positive dim");
  const std::string& mode = op.get_string("mode");
  if (mode != "nearest" && mode != "linear")
    return op_failure(op, "mode '" + mode + "' is not supported (nearest, linear)");
  return std::vector<Shape>{sizes};
}

}  // namespace

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail("shapes " + shape_string(a) + " and " + shape_string(b) + " do not broadcast");
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<std::int64_t> strides(out.size(), 0);
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::size_t d = shape.size() - 1 - i, o = out.size() - 1 - i;
    strides[o] = shape[d] == 1 && out[o] != 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

Result<std::vector<std::int64_t>> reduce_axes(const Op& op, std::size_t rank) {
  std::vector<std::int64_t> axes = op.get_ints("axes");
  if (axes.empty())
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(static_cast<std::int64_t>(d));
  for (auto& axis : axes) {
    axis = normalised(axis, rank);
    if (axis < 0 || axis >= static_cast<std::int64_t>(rank))
      return op_failure(op, "axes " + shape_string(op.get_ints("axes")) +
                                " out of range for rank " + std::to_string(rank));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return op_failure(op, "axes " + shape_string(op.get_ints("axes")) + " repeat an axis");
  return axes;
}

Result<std::vector<SliceAxis>> slice_axes(const Op& op, const Shape& shape) {
  const auto &starts = op.get_ints("starts"), &ends = op.get_ints("ends");
  const auto &axes = op.get_ints("axes"), &steps = op.get_ints("steps");
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
    return op_failure(op, "starts, ends, axes and steps differ in length");
  std::vector<SliceAxis> out(shape.size());
  std::vector<bool> seen(shape.size(), false);
  for (std::size_t d = 0; d < shape.size(); ++d) out[d] = {0, 1, shape[d]};
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t axis = normalised(axes[i], shape.size());
    if (axis < 0 || axis >= static_cast<std::int64_t>(shape.size()) ||
        seen[static_cast<std::size_t>(axis)])
      return op_failure(op, "axis " + std::to_string(axes[i]) + " out of range or repeated");
    seen[static_cast<std::size_t>(axis)] = true;
    const std::int64_t dim = shape[static_cast<std::size_t>(axis)], step = steps[i];
    if (step == 0) return op_failure(op, "step 0 on axis " + std::to_string(axis));
    // ONNX: negative starts/ends count from the end; clamp to [0, dim] (step > 0) or
    // [-1, dim - 1] (step < 0).
    auto clamp_index = [&](std::int64_t v) {
      if (v < 0) v += dim;
      return step > 0 ? std::clamp<std::int64_t>(v, 0, dim)
                      : std::clamp<std::int64_t>(v, -1, dim - 1);
    };
    const std::int64_t start = clamp_index(starts[i]), end = clamp_index(ends[i]);
    const std::int64_t count =
        step > 0 ? std::max<std::int64_t>(0, (end - start + step - 1) / step)
                 : std::max<std::int64_t>(0, (start - end + (-step) - 1) / (-step));
    out[static_cast<std::size_t>(axis)] = {start, step, count};
  }
  return out;
}

Result<std::vector<Shape>> workload_output_shapes(const Op& op, const std::vector<Shape>& in) {
  // Unary functions (ir/unary.hpp holds their one list) keep the shape of x.
  if (is_unary_function(op.kind)) return std::vector<Shape>{in[0]};
  switch (op.kind) {
    case OpKind::MatMul:
      return matmul_shape(op, in[0], in[1]);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow: {
      auto out = broadcast_shapes(in[0], in[1]);
      if (!out) return op_failure(op, out.reason());
      return std::vector<Shape>{out.value()};
    }
    case OpKind::Where: {
      auto ab = broadcast_shapes(in[1], in[2]);
      if (!ab) return op_failure(op, ab.reason());
      auto out = broadcast_shapes(in[0], ab.value());
      if (!out) return op_failure(op, out.reason());
      return std::vector<Shape>{out.value()};
    }
    case OpKind::Trilu:
      if (in[0].size() < 2) return op_failure(op, "input " + shape_string(in[0]) + " has rank < 2");
      return std::vector<Shape>{in[0]};
    case OpKind::LayerNormalization:
    case OpKind::RMSNormalization:
      return norm_shape(op, in);
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
      return reduce_shape(op, in[0]);
    case OpKind::Transpose:
      return transpose_shape(op, in[0]);
    case OpKind::Slice: {
      auto axes = slice_axes(op, in[0]);
      if (!axes) return axes.failure();
      Shape out;
      for (const SliceAxis& a : axes.value()) {
        if (a.count == 0)
          return op_failure(op, "the slice of " + shape_string(in[0]) + " is empty");
        out.push_back(a.count);
      }
      return std::vector<Shape>{out};
    }
    case OpKind::Gather:
      return gather_shape(op, in[0]);
    case OpKind::Expand:
      return expand_shape(op, in[0]);
    case OpKind::Resize:
      return resize_shape(op, in[0]);
    case OpKind::Embedding: {  // ids [...] x table [V, d...] -> [..., d...]
      if (in[1].empty()) return op_failure(op, "the table has no rows (rank 0)");
      Shape out = in[0];
      out.insert(out.end(), in[1].begin() + 1, in[1].end());
      return std::vector<Shape>{out};
    }
    default:
      break;
  }
  return op_failure(op, "no shape rule");
}

}  // namespace tessel::ir
