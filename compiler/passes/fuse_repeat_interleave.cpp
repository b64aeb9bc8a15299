// Pass fuse-repeat-interleave: torch's `repeat_interleave(g, dim=a)` of a tensor whose axis a
// has n entries exports as a Split of axis a into n unit parts, each Reshaped to insert a unit
// axis after a, Expanded to g along it and Reshaped back, and a Concat of the n results along a.
// That is one Reshape (the unit axis inserted into the whole tensor), one Expand and one
// Reshape: grouped-query attention's key and value heads as Llama's `repeat_kv` and Tessel's
// zoo write them, the form the accelerator path takes. Pure data movement: results are equal.
#include <set>
#include <string>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

/// `shape` with `value` inserted before axis `at`.
ir::Shape with_axis(ir::Shape shape, std::size_t at, std::int64_t value) {
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), value);
  return shape;
}

/// The match at a Concat: the Split, its source, the axis and the repeat count.
struct RepeatMatch {
  ir::OpId split;
  std::vector<ir::OpId> chain;  ///< the parts' Reshape, Expand, Reshape ops
  std::string source;
  std::size_t axis = 0;
  std::int64_t parts = 0, repeat = 0;
};

std::optional<RepeatMatch> match_repeat(const ir::Graph& g, const ir::Op& concat) {
  if (concat.kind != OpKind::Concat || concat.inputs.size() < 2) return std::nullopt;
  const ir::Shape& out_shape = g.tensor(concat.outputs[0]).shape;
  std::int64_t axis = concat.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(out_shape.size());
  RepeatMatch m;
  m.axis = static_cast<std::size_t>(axis);
  std::optional<ir::OpId> split;
  for (std::size_t k = 0; k < concat.inputs.size(); ++k) {
    // Backwards from the Concat's input k: Reshape <- Expand <- Reshape <- Split output k.
    const auto back = detail::produced_by(g, concat.inputs[k], OpKind::Reshape);
    if (!back || !detail::sole_reader(g, concat.inputs[k])) return std::nullopt;
    const ir::Op& r2 = g.op(*back);
    const auto expand = detail::produced_by(g, r2.inputs[0], OpKind::Expand);
    if (!expand || !detail::sole_reader(g, r2.inputs[0])) return std::nullopt;
    const ir::Op& e = g.op(*expand);
    const auto front = detail::produced_by(g, e.inputs[0], OpKind::Reshape);
    if (!front || !detail::sole_reader(g, e.inputs[0])) return std::nullopt;
    const ir::Op& r1 = g.op(*front);
    const auto s = g.producer(r1.inputs[0]);
    if (!s || g.op(*s).kind != OpKind::Split || (split && *split != *s)) return std::nullopt;
    split = s;
    const ir::Op& sp = g.op(*s);
    if (sp.outputs.size() != concat.inputs.size() || sp.outputs[k] != r1.inputs[0] ||
        !detail::sole_reader(g, sp.outputs[k]))
      return std::nullopt;
    // The shapes: part [.., 1 at a, ..] -> [.., 1, 1, ..] -> [.., 1, g, ..] -> [.., g, ..].
    const ir::Shape& part = g.tensor(r1.inputs[0]).shape;
    if (m.axis >= part.size() || part[m.axis] != 1) return std::nullopt;
    const ir::Shape& expanded = g.tensor(e.outputs[0]).shape;
    if (expanded.size() != part.size() + 1) return std::nullopt;
    const std::int64_t repeat = expanded[m.axis + 1];
    if (g.tensor(r1.outputs[0]).shape != with_axis(part, m.axis + 1, 1) ||
        expanded != with_axis(part, m.axis + 1, repeat))
      return std::nullopt;
    ir::Shape merged = part;
    merged[m.axis] = repeat;
    if (g.tensor(r2.outputs[0]).shape != merged || (k > 0 && repeat != m.repeat))
      return std::nullopt;
    m.repeat = repeat;
    m.chain.insert(m.chain.end(), {*front, *expand, *back});
  }
  const ir::Op& sp = g.op(*split);
  const ir::Shape& source = g.tensor(sp.inputs[0]).shape;
  std::int64_t split_axis = sp.get_int("axis");
  if (split_axis < 0) split_axis += static_cast<std::int64_t>(source.size());
  if (static_cast<std::size_t>(split_axis) != m.axis ||
      source[m.axis] != static_cast<std::int64_t>(concat.inputs.size()))
    return std::nullopt;
  m.split = *split;
  m.source = sp.inputs[0];
  m.parts = source[m.axis];
  return m;
}

Status run_fuse_repeat_interleave(ir::Graph& graph) {
  std::vector<std::string> concats;  // by name: rewriting renumbers ids
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (graph.op(id).kind == OpKind::Concat) concats.push_back(graph.op(id).name);
  std::set<std::string> added;
  for (const std::string& name : concats) {
    const auto id = graph.find_op(name);
    if (!id) continue;
    const ir::Op concat = graph.op(*id);
    const auto m = match_repeat(graph, concat);
    if (!m) continue;
    const ir::Shape source = graph.tensor(m->source).shape;
    std::vector<ir::OpId> removed = m->chain;
    removed.push_back(m->split);
    removed.push_back(*id);
    graph.remove_ops(removed);
    // source -> [.., n, 1, ..] -> [.., n, g, ..] -> the Concat's output [.., n * g, ..].
    ir::Tensor grouped = graph.tensor(concat.outputs[0]);
    grouped.constant = false;
    grouped.name = graph.unique_name(concat.name + ".grouped");
    grouped.shape = with_axis(source, m->axis + 1, 1);
    ir::Tensor repeated = grouped;
    repeated.name = graph.unique_name(concat.name + ".repeated");
    repeated.shape = with_axis(source, m->axis + 1, m->repeat);
    for (const ir::Tensor* t : {&grouped, &repeated})
      if (Status s = graph.declare_tensor(*t); !s) return s;
    const ir::Shape& out = graph.tensor(concat.outputs[0]).shape;
    std::vector<ir::Op> ops = {{grouped.name,
                                OpKind::Reshape,
                                {m->source},
                                {grouped.name},
                                {{"shape", ir::AttrValue(grouped.shape)}}},
                               {repeated.name,
                                OpKind::Expand,
                                {grouped.name},
                                {repeated.name},
                                {{"shape", ir::AttrValue(repeated.shape)}}},
                               {concat.name,
                                OpKind::Reshape,
                                {repeated.name},
                                concat.outputs,
                                {{"shape", ir::AttrValue(out)}}}};
    for (ir::Op& op : ops) {
      added.insert(op.name);
      if (auto added_op = graph.add_op(std::move(op)); !added_op) return added_op.failure();
    }
  }
  return detail::place_new_ops(graph, added);
}

}  // namespace

const PassInfo& fuse_repeat_interleave_pass() {
  static const PassInfo info{
      "fuse-repeat-interleave",
      "Split into unit parts, each Reshape-Expand-Reshape, then Concat -> one Reshape, Expand, "
      "Reshape (torch's repeat_interleave: grouped-query attention's key/value heads)",
      run_fuse_repeat_interleave};
  return info;
}

}  // namespace tessel::passes
