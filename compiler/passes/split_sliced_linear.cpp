// Pass split-sliced-linear: a Gemm with constant weights whose result only last-axis Slices, or
// one last-axis Split, read (through at most one Reshape that keeps the last axis), each part a
// disjoint range of its output columns, becomes one Gemm per part over that part's weight rows:
// a transformer's fused `in_proj` with its q, k and v Slices (torch) or GPT-2's `c_attn` with
// its Split (HF) becomes q, k and v projections. Each output element is the same dot product, so
// fp32 results are unchanged; the quantizer then gives q, k and v a scale each
// (docs/quantization.md, "Graph preparation"). The accelerator needs the split to fuse K and V into
// the attention group that reads them whole (docs/scheduler-mapping.md, "Attention fusion"): a
// slice of an on-chip tensor is no view.
#include "compiler/passes/split_sliced_linear.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "compiler/ir/shape_rules.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"
#include "compiler/passes/payload.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

/// One part of the Gemm's result: the tensor a Slice or Split writes and its column range
/// [begin, end).
struct Part {
  std::string output;
  std::int64_t begin = 0, end = 0;
};

/// The match at Gemm `gemm`: the Reshape between (if any), the Slices or the Split (`readers`)
/// and the parts they write, or nullopt.
struct Match {
  std::optional<ir::Op> reshape;
  std::vector<std::string> readers;
  std::vector<Part> parts;
};

/// The parts a Split of a tensor of `shape` writes along its last axis; empty otherwise.
std::vector<Part> split_parts(const ir::Op& split, const ir::Shape& shape) {
  if (shape.empty()) return {};
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::int64_t axis = split.get_int("axis");
  if (axis < 0) axis += rank;
  const std::vector<std::int64_t>& sizes = split.get_ints("split");
  if (axis != rank - 1 || sizes.size() != split.outputs.size()) return {};
  std::vector<Part> parts;
  std::int64_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0) return {};
    parts.push_back({split.outputs[i], at, at + sizes[i]});
    at += sizes[i];
  }
  if (at != shape.back()) return {};
  return parts;
}

/// The column range a Slice of a tensor of `shape` takes: every axis but the last whole, the
/// last with step 1; nullopt otherwise.
std::optional<std::pair<std::int64_t, std::int64_t>> last_axis_range(const ir::Op& slice,
                                                                     const ir::Shape& shape) {
  auto axes = ir::slice_axes(slice, shape);
  if (!axes || axes.value().size() != shape.size() || shape.empty()) return std::nullopt;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const ir::SliceAxis& a = axes.value()[d];
    if (d + 1 < shape.size() && (a.start != 0 || a.step != 1 || a.count != shape[d]))
      return std::nullopt;
    if (d + 1 == shape.size() && (a.step != 1 || a.count <= 0)) return std::nullopt;
  }
  const ir::SliceAxis& last = axes.value().back();
  return std::make_pair(last.start, last.start + last.count);
}

std::optional<Match> match(const ir::Graph& graph, const ir::Op& gemm) {
  if (gemm.kind != OpKind::Gemm || gemm.get_float("alpha") != 1.0 ||
      gemm.get_float("beta") != 1.0 || gemm.get_int("input_shift") != 0)
    return std::nullopt;
  const ir::Tensor& weight = graph.tensor(gemm.inputs[1]);
  const ir::Tensor& out = graph.tensor(gemm.outputs[0]);
  if (!weight.constant || weight.quant || out.quant || weight.shape.size() != 2 ||
      out.shape.size() != 2)
    return std::nullopt;
  if (gemm.inputs.size() == 3 && !graph.tensor(gemm.inputs[2]).constant) return std::nullopt;
  Match m;
  std::string sliced = out.name;
  if (detail::is_graph_output(graph, sliced)) return std::nullopt;
  const std::vector<ir::OpId> first = detail::readers(graph, sliced);
  if (first.size() == 1 && graph.op(first[0]).kind == OpKind::Reshape) {
    const ir::Op& reshape = graph.op(first[0]);
    const ir::Shape& to = graph.tensor(reshape.outputs[0]).shape;
    if (to.empty() || to.back() != out.shape[1]) return std::nullopt;
    m.reshape = reshape;
    sliced = reshape.outputs[0];
    if (detail::is_graph_output(graph, sliced)) return std::nullopt;
  }
  const ir::Shape& shape = graph.tensor(sliced).shape;
  const std::vector<ir::OpId> readers = detail::readers(graph, sliced);
  if (readers.size() == 1 && graph.op(readers[0]).kind == OpKind::Split) {
    const ir::Op& split = graph.op(readers[0]);
    m.parts = split_parts(split, shape);
    if (m.parts.size() < 2) return std::nullopt;
    m.readers = {split.name};
    return m;  // consecutive, disjoint by construction
  }
  if (readers.size() < 2) return std::nullopt;
  for (ir::OpId id : readers) {
    const ir::Op& slice = graph.op(id);
    if (slice.kind != OpKind::Slice) return std::nullopt;
    const auto range = last_axis_range(slice, shape);
    if (!range) return std::nullopt;
    m.readers.push_back(slice.name);
    m.parts.push_back({slice.outputs[0], range->first, range->second});
  }
  std::sort(m.parts.begin(), m.parts.end(),
            [](const Part& a, const Part& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < m.parts.size(); ++i)
    if (m.parts[i].begin < m.parts[i - 1].end) return std::nullopt;  // overlapping: not split
  return m;
}

/// Rows [begin, end) of the output columns of weight `w` (transB: [N, K], else [K, N]).
std::vector<float> weight_part(const ir::Tensor& w, bool trans_b, std::int64_t begin,
                               std::int64_t end) {
  std::vector<float> values;
  if (w.f32_values.empty()) return values;
  const std::int64_t rows = w.shape[0], cols = w.shape[1];
  if (trans_b) {
    values.assign(w.f32_values.begin() + begin * cols, w.f32_values.begin() + end * cols);
    return values;
  }
  values.reserve(static_cast<std::size_t>(rows * (end - begin)));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = begin; c < end; ++c)
      values.push_back(w.f32_values[static_cast<std::size_t>(r * cols + c)]);
  return values;
}

Status split(ir::Graph& graph, const ir::Op& gemm, const Match& m, std::set<std::string>& added) {
  const std::string where = "%" + gemm.name + " (Gemm)";
  std::vector<std::string> constants(gemm.inputs.begin() + 1, gemm.inputs.end());
  auto compute = detail::payload_available(graph, constants, where);
  if (!compute) return compute.failure();
  const bool trans_b = gemm.get_int("transB") != 0;
  const ir::Tensor weight = graph.tensor(gemm.inputs[1]);
  const std::optional<ir::Tensor> bias =
      gemm.inputs.size() == 3 ? std::optional<ir::Tensor>(graph.tensor(gemm.inputs[2]))
                              : std::nullopt;
  const ir::Tensor result = graph.tensor(gemm.outputs[0]);
  std::vector<ir::OpId> removed = {*graph.find_op(gemm.name)};
  if (m.reshape) removed.push_back(*graph.find_op(m.reshape->name));
  for (const std::string& reader : m.readers) removed.push_back(*graph.find_op(reader));
  graph.remove_ops(removed);     // the parts stay, without producer, until re-made
  std::vector<ir::Op> reshapes;  // added after every Gemm (place_new_ops keeps id order)
  for (const Part& part : m.parts) {
    const std::int64_t n = part.end - part.begin;
    const std::string& name = part.output;
    ir::Shape w_shape = weight.shape;
    w_shape[trans_b ? 0 : 1] = n;
    ir::Op linear = gemm;
    linear.name = graph.unique_name(name + ".linear");
    linear.outputs = {m.reshape ? linear.name : name};
    linear.inputs[1] = detail::add_constant(graph, name + ".weight", w_shape,
                                            weight_part(weight, trans_b, part.begin, part.end));
    if (bias) {
      std::vector<float> b;
      if (compute.value())
        b.assign(bias->f32_values.begin() + part.begin, bias->f32_values.begin() + part.end);
      linear.inputs[2] = detail::add_constant(graph, name + ".bias", {n}, std::move(b));
    }
    ir::Tensor linear_type = result;
    linear_type.name = linear.outputs[0];
    linear_type.shape[1] = n;
    if (m.reshape) {
      if (Status s = graph.declare_tensor(linear_type); !s) return s;
    }
    added.insert(linear.name);
    if (auto op = graph.add_op(std::move(linear)); !op) return op.failure();
    if (m.reshape) {
      ir::Op reshape = *m.reshape;
      reshape.name = graph.unique_name(name + ".unflatten");
      reshape.inputs = {linear_type.name};
      reshape.outputs = {name};
      reshape.attrs["shape"] = ir::AttrValue(graph.tensor(name).shape);
      reshapes.push_back(std::move(reshape));
    }
  }
  for (ir::Op& reshape : reshapes) {
    added.insert(reshape.name);
    if (auto op = graph.add_op(std::move(reshape)); !op) return op.failure();
  }
  return {};
}

Status run_split_sliced_linear(ir::Graph& graph) {
  // Find the Gemms first (by name: splitting renumbers ids), then split one at a time.
  std::vector<std::string> names;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (graph.op(id).kind == OpKind::Gemm) names.push_back(graph.op(id).name);
  std::set<std::string> added;
  for (const std::string& name : names) {
    const auto id = graph.find_op(name);
    if (!id) continue;
    const ir::Op gemm = graph.op(*id);
    const auto m = match(graph, gemm);
    if (!m) continue;
    if (Status s = split(graph, gemm, *m, added); !s) return s;
  }
  // The projections right after what they read, where the fused one stood, one after another
  // and then their Reshapes (in a decode step each Reshape is a DRAM view, alone in its group):
  // the projections can share one group, and the ops between them and their readers (q's
  // scale, the scores, the softmax) stay together, so the groups a planner forms from
  // consecutive ops still hold the attention chain.
  return detail::place_new_ops(graph, added);
}

}  // namespace

bool split_sliced_linear_applies(const ir::Graph& graph) {
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (match(graph, graph.op(id))) return true;
  return false;
}

const PassInfo& split_sliced_linear_pass() {
  static const PassInfo info{
      "split-sliced-linear",
      "A Gemm read only by disjoint last-axis Slices or a Split -> one Gemm per part (q, k, v)",
      run_split_sliced_linear};
  return info;
}

}  // namespace tessel::passes
