// The graph IR: ops as vertices of a Boost.Graph adjacency list, tensors as named values.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/op.hpp"
#include "compiler/ir/tensor.hpp"
#include "support/result.hpp"

namespace tessel::ir {

/// An edge producer -> consumer carries the tensor that flows along it and the consumer's
/// input slot (an op reading one tensor twice has two parallel edges).
struct EdgeData {
  std::string tensor;
  int input_index = 0;
};

/// The Boost graph underneath: vertices are ops (bundled `Op`), edges are data dependences.
using BoostGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op, EdgeData>;

/// An op's vertex index. Stable while ops are only added; `remove_ops` renumbers (it is the one
/// call that invalidates OpIds — re-look ops up by name afterwards).
using OpId = std::size_t;

/// Where a tensor is read: op and input slot.
struct Use {
  OpId op;
  int input_index;
  friend bool operator==(const Use&, const Use&) = default;
};

/// A dataflow graph of ops over named tensors.
///
/// Invariants kept by the mutators: every tensor an op names exists; each tensor has at most
/// one producer; there is an edge producer->consumer for every (tensor, consumer slot).
/// Cycles and unreachable ops are representable (so that `validate` can report them).
class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // --- building -------------------------------------------------------------------------------
  /// Adds a graph input: an `Input` op named `name` producing tensor `name`.
  /// Fails when the name is taken.
  Result<OpId> add_input(const std::string& name, Shape shape, DType dtype = DType::f32);
  /// Adds a constant tensor (its payload must match the shape's element count when present).
  Status add_constant(Tensor tensor);
  /// Declares a non-constant tensor (an op result) before the op that produces it; add_op does
  /// this itself for outputs not yet declared.
  Status declare_tensor(Tensor tensor);
  /// Adds an op. Inputs must name existing tensors; outputs not yet declared are created with
  /// unknown shape and dtype f32; an output that already has a producer is an error. Attributes
  /// are completed from the schema (defaults) and checked. The op name must be unique.
  Result<OpId> add_op(Op op);

  // --- lookup ---------------------------------------------------------------------------------
  std::size_t num_ops() const { return boost::num_vertices(graph_); }
  const Op& op(OpId id) const { return graph_[id]; }
  /// Mutable attributes of an op (inputs/outputs change only through the mutators below).
  Attrs& attrs(OpId id) { return graph_[id].attrs; }
  std::optional<OpId> find_op(std::string_view name) const;

  bool has_tensor(std::string_view name) const;
  const Tensor& tensor(std::string_view name) const;  ///< the tensor must exist
  Tensor& tensor_mut(std::string_view name);          ///< payload, shape, dtype, quant only
  const std::map<std::string, Tensor, std::less<>>& tensors() const { return tensors_; }

  /// The op producing `tensor` (nullopt for constants and undefined tensors).
  std::optional<OpId> producer(std::string_view tensor) const;
  /// Every (op, slot) reading `tensor`, ordered by op id then slot.
  std::vector<Use> consumers(std::string_view tensor) const;
  /// Ops that read an output of `id` / whose outputs `id` reads (deduplicated, sorted).
  std::vector<OpId> successors(OpId id) const;
  std::vector<OpId> predecessors(OpId id) const;

  /// The graph's Input ops in creation order.
  std::vector<OpId> inputs() const;
  /// Graph outputs (tensor names), in declaration order.
  const std::vector<std::string>& outputs() const { return outputs_; }
  /// Declares the graph outputs; each must name an existing tensor.
  Status set_outputs(std::vector<std::string> outputs);

  // --- rewriting ------------------------------------------------------------------------------
  /// Points input slot `index` of `id` at `tensor` (edges follow).
  Status set_input(OpId id, int index, const std::string& tensor);
  /// Appends an input slot to `id` (e.g. the bias a folded Conv gains); checks the arity.
  Status append_input(OpId id, const std::string& tensor);
  /// Makes every reader of `from` (ops and graph outputs) read `to` instead.
  Status replace_all_uses(const std::string& from, const std::string& to);
  /// Removes ops; their outputs stay as tensors without a producer unless removed too.
  /// Renumbers OpIds.
  void remove_ops(std::vector<OpId> ids);
  /// Renumbers ops so that id order is topological, keeping the current order wherever the
  /// dependences allow (Kahn's algorithm taking the lowest ready id first), so a pass that
  /// appended ops leaves a graph that dumps in a natural order. Fails on a cycle, unchanged.
  Status sort_topologically();
  /// The same, except that a ready op with `eager[id]` set is taken before every other ready
  /// op (the lowest such id first): a pass places the ops it appended right after what they
  /// read, where a schedule over the order can consume a result as soon as it is made.
  /// `eager` has one entry per op.
  Status sort_topologically(const std::vector<bool>& eager);
  /// Removes tensors that no op reads or writes and that are not graph outputs; returns how many.
  std::size_t remove_unused_tensors();
  /// A name not yet used by any tensor or op: `base`, else `base.1`, `base.2`, ...
  std::string unique_name(std::string_view base) const;

  /// The Boost graph, for Boost algorithms (see analysis.hpp).
  const BoostGraph& boost_graph() const { return graph_; }

  /// Structural equality: same name, ops (in id order), tensors and outputs.
  friend bool operator==(const Graph& a, const Graph& b);

 private:
  void connect_inputs(OpId id);
  void rebuild();

  std::string name_;
  BoostGraph graph_;
  std::map<std::string, Tensor, std::less<>> tensors_;
  std::unordered_map<std::string, OpId> op_by_name_;
  std::unordered_map<std::string, OpId> producer_;
  std::vector<std::string> outputs_;
};

/// Validation, all problems at once: cycles (naming the ops on each), tensors read but never
/// defined, op results never read and not graph outputs (dangling), arity and attributes
/// against the schema, no graph outputs. Empty when valid.
std::vector<std::string> validation_errors(const Graph& graph);
/// validation_errors as a Status (messages joined by newlines).
Status validate(const Graph& graph);

/// Sum of the element counts of every constant (what torchvision's `sum(p.numel())` counts,
/// BatchNorm running mean/var excluded: they are buffers there, not parameters).
std::int64_t parameter_count(const Graph& graph);

}  // namespace tessel::ir
