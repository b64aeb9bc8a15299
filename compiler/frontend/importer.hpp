// The ONNX importer's core (internal): the Importer class whose converters live in convert_*.cpp.
#pragma once

#include <onnx/onnx_pb.h>

#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/frontend/constant_eval.hpp"
#include "compiler/frontend/onnx_import.hpp"
#include "compiler/ir/graph.hpp"

namespace tessel::frontend::detail {

std::string in_quotes(std::string_view text);
std::string ints_string(const Ints& values);

/// What an ONNX value name stands for while importing: an IR tensor, or a constant (an
/// initializer or Constant node, decoded on use, or a value the evaluator folded).
struct Value {
  std::string ir_name;                         ///< the IR tensor (or constant to create)
  const onnx::TensorProto* proto = nullptr;    ///< initializers and Constant outputs
  std::shared_ptr<const ConstantData> folded;  ///< results of evaluated nodes
  std::string origin;                          ///< where a constant was defined, for messages
  bool is_constant() const { return proto != nullptr || folded != nullptr; }
};

/// Imports one model; all state of a single import_onnx_bytes call. The core (importer.cpp)
/// checks the graph and runs one converter per live node; converters read the node through
/// the helpers below and add IR ops through emit().
class Importer {
 public:
  Importer(std::string source, const OnnxImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  ir::Graph run(const onnx::ModelProto& model, std::string graph_name);

  /// A member converter for the node being imported.
  using Converter = void (Importer::*)();
  /// The converter for a default-domain op type, or nullptr (the table is in importer.cpp).
  static Converter converter_for(std::string_view op_type);
  /// Every op type with a converter, sorted (for messages and docs).
  static std::vector<std::string> supported_op_types();

 private:
  // --- diagnostics ------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  std::string node_where(int index) const;
  [[noreturn]] void fail_node(const std::string& what) const { fail(node_where(node_), what); }

  // --- graph-level steps (importer.cpp) ------------------------------------------------------
  void read_opset(const onnx::ModelProto& model);
  void collect_constants();
  void add_graph_inputs();
  std::vector<int> live_nodes_in_order();
  void convert(int index);
  [[noreturn]] void fail_unsupported(const std::string& type) const;
  bool try_fold();
  void set_graph_outputs();

  // --- node helpers (operate on node_) ----------------------------------------------------
  const onnx::NodeProto& node() const { return graph_proto_->node(node_); }
  void check_attributes(std::initializer_list<std::string_view> allowed) const;
  const onnx::AttributeProto* attribute(std::string_view name,
                                        onnx::AttributeProto_AttributeType type) const;
  std::int64_t attr_int(std::string_view name, std::int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::optional<Ints> attr_ints(std::string_view name) const;
  std::string attr_string(std::string_view name, std::string fallback) const;

  std::size_t input_count() const;
  void expect_inputs(std::size_t min, std::size_t max) const;
  bool has_input(int slot) const;
  const Value& input_value(int slot) const;
  bool is_constant_input(int slot) const {
    return has_input(slot) && input_value(slot).is_constant();
  }
  std::string data_input(int slot);  ///< IR tensor name (constants created)
  ConstantData constant_input(int slot, std::string_view role) const;
  /// An integer constant input (axes, pads, shapes); floats of whole numbers are accepted.
  Ints ints_input(int slot, std::string_view role) const;
  ConstantData value_data(const Value& value) const;
  ir::Shape shape_of(const std::string& ir_name) const;
  ir::Shape input_shape(int slot) const;  ///< of an activation or a constant
  void require_rank(int slot, std::size_t rank, std::string_view what);
  void expect_outputs(std::size_t max_used);
  bool output_used(int slot) const;

  std::string materialize(const Value& value);
  /// A new IR constant holding `data` (float payloads; a scalar becomes [1]).
  std::string add_constant(const std::string& base, ConstantData data, const std::string& origin,
                           bool exact_name = false);
  ConstantData decode(const onnx::TensorProto& tensor, const std::string& origin) const;
  void define_folded(const std::string& onnx_name, ConstantData data);

  /// Adds the IR op for the current node writing `onnx_output`, infers its shape and binds the
  /// ONNX name to it.
  void emit(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
            const std::string& onnx_output);
  /// Adds an intermediate IR op (its output a fresh name derived from `base`); returns it.
  std::string emit_temp(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                        const std::string& base);
  /// Adds one IR op with several outputs (Split) and binds each ONNX output.
  void emit_multi(ir::OpKind kind, std::vector<std::string> inputs, ir::Attrs attrs,
                  const std::vector<std::string>& onnx_outputs);
  std::string op_name(const std::string& base);
  /// Fails when the IR graph already holds kMaxImportedOps ops (before adding one more).
  void check_op_budget() const;
  /// Fails when a result of op `id` has more than kMaxTensorElements elements.
  void check_result_size(ir::OpId id) const;
  static const std::map<std::string, Converter, std::less<>>& converter_table();
  std::string fresh_tensor_name(const std::string& base) const;
  /// Fails when an entry of the window attribute `what` passes kMaxWindowValue.
  void check_window_values(std::string_view what, const Ints& values) const;
  std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, std::string_view attr) const;

  // --- converters: convert_cnn.cpp ---------------------------------------------------------
  void convert_constant();
  void convert_identity();
  void convert_dropout();
  void alias_output_to_input();
  void convert_conv();
  void convert_maxpool() { convert_pool(true); }
  void convert_averagepool() { convert_pool(false); }
  void convert_pool(bool is_max);
  void convert_global_average_pool();
  void convert_gemm();
  void convert_clip();
  void convert_batchnorm();
  void convert_pad();
  struct Window {
    Ints kernel, strides, dilations, pads;
  };
  Window read_window(const Ints& kernel_from_weight, bool allow_dilation);

  // --- converters: convert_math.cpp --------------------------------------------------------
  void convert_unary();
  void convert_binary();
  void convert_where();
  void convert_cast();
  void convert_softmax();
  void convert_layernorm();
  void convert_reduce();
  void convert_matmul();
  void convert_einsum();  // convert_einsum.cpp
  bool absorb_bias_add(std::vector<std::string>& gemm_inputs, std::string& output, std::int64_t m,
                       std::int64_t n);

  // --- converters: convert_shape.cpp -------------------------------------------------------
  void convert_concat();
  void convert_flatten();
  void convert_reshape();
  void convert_squeeze();
  void convert_unsqueeze();
  void convert_transpose();
  void convert_slice();
  void convert_split();
  void convert_gather();
  void convert_expand();
  void convert_trilu();
  void convert_resize();
  Ints axes_operand(int slot, std::string_view attr_name, std::int64_t input_from_opset);

  // --- converters: convert_rnn.cpp ---------------------------------------------------------
  void convert_lstm();
  void convert_gru();
  /// The operands and geometry LSTM and GRU share.
  struct Recurrence {
    std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, gates = 4;
    bool reverse = false, batch_major = false;
    std::string x;  ///< [seq, batch, input]
    ConstantData w, r, b;
  };
  Recurrence read_recurrence(std::int64_t gates, const std::string& base);
  /// The name intermediate tensors of a recurrence derive from (its first named output).
  std::string recurrence_base(int max_outputs) const;
  /// The initial state of direction d, or nullopt where it is zero (absent, or a constant of
  /// zeros): the first step then leaves out the terms that read it.
  std::optional<std::string> initial_state(const Recurrence& rec, int slot, std::int64_t d,
                                           const std::string& base);
  void emit_recurrence_outputs(const Recurrence& rec,
                               const std::vector<std::vector<std::string>>& hidden_steps,
                               const std::vector<std::vector<std::string>>& last_states);
  /// Splits [rows, sum(sizes)] along axis 1 into fresh tensors named base + suffix.
  std::vector<std::string> emit_split(const std::string& x, const Ints& sizes,
                                      const std::vector<std::string>& suffixes,
                                      const std::string& base);

  std::string source_;
  const OnnxImportOptions& options_;
  const onnx::GraphProto* graph_proto_ = nullptr;
  std::int64_t opset_ = 0;
  ir::Graph graph_;
  int node_ = -1;  ///< the node being converted

  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> producer_;              ///< ONNX output -> node index
  std::unordered_map<std::string, std::vector<int>> readers_;  ///< among live nodes
  std::set<std::string, std::less<>> graph_output_names_;
  std::set<std::string, std::less<>> materialized_;
  std::set<int> absorbed_;  ///< nodes already folded into an earlier op (MatMul+Add)
  std::deque<onnx::TensorProto> owned_tensors_;
};

}  // namespace tessel::frontend::detail
