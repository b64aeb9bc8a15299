// Helpers shared by the pattern-fusion passes (internal to compiler/passes): reading constant
// operands, checking single readers, and replacing a matched chain of ops by one op.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::passes::detail {

/// The value of a constant f32 tensor with a payload of exactly one element (a scalar: shape
/// [1], or [1,1,...]); nullopt otherwise (an activation, a payload-less or larger constant).
std::optional<double> scalar_constant(const ir::Graph& graph, const std::string& tensor);

/// |value - expected| <= tolerance * |expected|: the float constants exporters write for sqrt(2),
/// 1/6 and the like are the double ones rounded to float (relative error < 6e-8).
bool near(double value, double expected, double tolerance = 1e-6);

/// The op writing `tensor` when its kind is `kind` (nullopt for another kind or no producer).
std::optional<ir::OpId> produced_by(const ir::Graph& graph, const std::string& tensor,
                                    ir::OpKind kind);

/// The one op reading `tensor` (in any number of its slots), when the tensor is no graph
/// output and no other op reads it: the condition for absorbing its producer into a fused op.
std::optional<ir::OpId> sole_reader(const ir::Graph& graph, const std::string& tensor);

/// Every op reading `tensor` (deduplicated, in id order) and whether it is a graph output.
std::vector<ir::OpId> readers(const ir::Graph& graph, const std::string& tensor);
bool is_graph_output(const ir::Graph& graph, const std::string& tensor);

/// For a two-input op reading `operand` in slot 0 or 1: the other input's name (the first
/// slot that reads `operand` counts); nullopt when the op does not read it.
std::optional<std::string> other_operand(const ir::Op& op, const std::string& operand);

/// Whether a and b name tensors with equal, known shapes.
bool same_shape(const ir::Graph& graph, const std::string& a, const std::string& b);

/// One rewrite a pattern pass found: the ops to remove (the last of them, in pattern order,
/// writes `replacement`'s result) and the op that replaces them, reading `constants` (added
/// first; their names are already unique in the graph).
struct Rewrite {
  std::vector<ir::OpId> removed;
  ir::Op replacement;
  std::vector<ir::Tensor> constants;
};

/// A pattern: the rewrite rooted at op `id`, or nullopt to leave it.
using Matcher = std::function<std::optional<Rewrite>(const ir::Graph& graph, ir::OpId id)>;

/// Applies `match` until no op matches: each rewrite is applied at once (so the next match sees
/// the graph it left), the new ops are then placed right after what they read
/// (Graph::sort_topologically with the new ops eager), and unread tensors are removed.
Status rewrite_all(ir::Graph& graph, const Matcher& match);

/// Applies one rewrite now: adds its constants, removes its ops, adds the replacement.
Status apply_rewrite(ir::Graph& graph, Rewrite rewrite);
/// After rewrites that added the ops named `added`: removes unread tensors and renumbers the
/// graph with the new ops placed right after what they read.
Status place_new_ops(ir::Graph& graph, const std::set<std::string>& added);

/// A constant tensor named `name` (not yet in the graph) with `shape` and `values`.
ir::Tensor make_constant(const std::string& name, ir::Shape shape, std::vector<float> values);

}  // namespace tessel::passes::detail
