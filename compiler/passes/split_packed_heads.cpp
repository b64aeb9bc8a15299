// Pass split-packed-heads: a packed q|k|v projection [B, N, P * H * hd] reshaped to
// [B, N, P, H, hd], transposed by perm [2, 0, 3, 1, 4] to [P, B, H, N, hd] and taken apart by
// Gathers of scalar indices along axis 0 (`qkv[0], qkv[1], qkv[2]`: torchvision's Swin, timm's
// ViTs) becomes, per Gather i, a Slice of the projection's last axis [i H hd, (i + 1) H hd),
// Reshaped to [B, N, H, hd] and transposed to [B, H, N, hd]: the head views the accelerator path
// reads, and Slices that split-sliced-linear (run after it) turns into one Linear each. Pure data
// movement: results are equal.
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/split_packed_heads.hpp"

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

// The match at a Transpose: the packed tensor, the part count P and the Gathers (by part).
struct PackedMatch {
  std::string packed;
  ir::OpId reshape = 0;
  std::vector<ir::OpId> gathers;
  std::vector<std::int64_t> parts;
};

std::optional<PackedMatch> match_packed(const ir::Graph& g, const ir::Op& t) {
  if (t.kind != OpKind::Transpose || t.get_ints("perm") != std::vector<std::int64_t>{2, 0, 3, 1, 4})
    return std::nullopt;
  const auto reshape = detail::produced_by(g, t.inputs[0], OpKind::Reshape);
  if (!reshape || !detail::sole_reader(g, t.inputs[0])) return std::nullopt;
  const std::string& packed = g.op(*reshape).inputs[0];
  const ir::Shape& x = g.tensor(packed).shape;
  const ir::Shape& heads = g.tensor(t.inputs[0]).shape;  // [B, N, P, H, hd]
  if (x.size() != 3 || heads.size() != 5 || heads[0] != x[0] || heads[1] != x[1] ||
      heads[2] * heads[3] * heads[4] != x[2])
    return std::nullopt;
  if (detail::is_graph_output(g, t.outputs[0])) return std::nullopt;
  PackedMatch m;
  m.packed = packed;
  m.reshape = *reshape;
  for (ir::OpId id : detail::readers(g, t.outputs[0])) {
    const ir::Op& gather = g.op(id);
    if (gather.kind != OpKind::Gather || gather.get_int("axis") != 0 ||
        !gather.get_ints("indices_shape").empty() || gather.get_ints("indices").size() != 1)
      return std::nullopt;
    m.gathers.push_back(id);
    m.parts.push_back(gather.get_ints("indices")[0]);
  }
  if (m.gathers.empty()) return std::nullopt;
  return m;
}

Status run_split_packed_heads(ir::Graph& graph) {
  std::vector<std::string> transposes;  // by name: rewriting renumbers ids
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (graph.op(id).kind == OpKind::Transpose) transposes.push_back(graph.op(id).name);
  std::set<std::string> added;
  for (const std::string& name : transposes) {
    const auto id = graph.find_op(name);
    if (!id) continue;
    const auto m = match_packed(graph, graph.op(*id));
    if (!m) continue;
    const ir::Shape heads = graph.tensor(graph.op(*id).inputs[0]).shape;  // [B, N, P, H, hd]
    const std::int64_t width = heads[3] * heads[4];
    std::vector<ir::Op> gathers;
    for (ir::OpId g : m->gathers) gathers.push_back(graph.op(g));
    std::vector<ir::OpId> removed = m->gathers;
    removed.push_back(*id);
    removed.push_back(m->reshape);
    graph.remove_ops(removed);
    for (size_t i = 0; i < gathers.size(); ++i) {
      const ir::Op& gather = gathers[i];
      const std::int64_t part = m->parts[i];
      ir::Tensor sliced = graph.tensor(gather.outputs[0]);
      sliced.constant = false;
      sliced.name = graph.unique_name(gather.name + ".slice");
      sliced.shape = {heads[0], heads[1], width};
      ir::Tensor split = sliced;
      split.name = graph.unique_name(gather.name + ".heads");
      split.shape = {heads[0], heads[1], heads[3], heads[4]};
      for (const ir::Tensor* t : {&sliced, &split})
        if (Status s = graph.declare_tensor(*t); !s) return s;
      std::vector<ir::Op> ops = {
          {sliced.name,
           OpKind::Slice,
           {m->packed},
           {sliced.name},
           {{"starts", ir::AttrValue(std::vector<std::int64_t>{part * width})},
            {"ends", ir::AttrValue(std::vector<std::int64_t>{(part + 1) * width})},
            {"axes", ir::AttrValue(std::vector<std::int64_t>{2})},
            {"steps", ir::AttrValue(std::vector<std::int64_t>{1})}}},
          {split.name,
           OpKind::Reshape,
           {sliced.name},
           {split.name},
           {{"shape", ir::AttrValue(split.shape)}}},
          {gather.name,
           OpKind::Transpose,
           {split.name},
           gather.outputs,
           {{"perm", ir::AttrValue(std::vector<std::int64_t>{0, 2, 1, 3})}}}};
      for (ir::Op& op : ops) {
        added.insert(op.name);
        if (auto added_op = graph.add_op(std::move(op)); !added_op) return added_op.failure();
      }
    }
  }
  return detail::place_new_ops(graph, added);
}

}  // namespace

bool split_packed_heads_applies(const ir::Graph& graph) {
  for (ir::OpId id = 0; id < graph.num_ops(); ++id)
    if (match_packed(graph, graph.op(id))) return true;
  return false;
}

const PassInfo& split_packed_heads_pass() {
  static const PassInfo info{
      "split-packed-heads",
      "Reshape [B, N, P, H, hd] + Transpose [2, 0, 3, 1, 4] + Gathers along axis 0 of a packed "
      "q|k|v projection -> per part a Slice of its last axis, Reshape and Transpose [0, 2, 1, 3]",
      run_split_packed_heads};
  return info;
}

}  // namespace tessel::passes
