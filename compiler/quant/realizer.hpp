// Internal to compiler/quant (not installed, not included outside it): the state of one
// realize() run, shared by realize.cpp (graph inputs, Conv/Gemm, the classic ops) and
// realize_workloads.cpp (the modern-workload ops of docs/quantization.md).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.hpp"
#include "compiler/quant/realize.hpp"
#include "support/result.hpp"

namespace tessel::quant::detail {

/// "%name (Kind)", the start of every quantizer message about an op.
using ir::where;

/// NaN/Inf in a constant, named with its element (weights must be finite to quantize).
Status check_finite(const ir::Tensor& tensor);

/// MatMul, the broadcasting binary ops, Where, the unary functions, the normalisations and
/// reductions, the movement ops of issue 33 and every Softmax but the float one at the graph's
/// end: the kinds whose operands workload_activations checks.
bool is_workload_kind(const ir::Graph& graph, const ir::Op& op);
/// A Softmax without a mask whose result is only a graph output: it stays float (after a
/// Dequantize), exact on the host, as for the classic classifiers.
bool is_float_softmax(const ir::Graph& graph, const ir::Op& op);
/// Ops whose inputs and output share one scale class (they move or select codes).
bool joins_scale_class(ir::OpKind kind);
/// The activation inputs of a workload op, after checking that its constants are where the
/// integer contract allows them (docs/quantization.md); a refusal names the op and the reason.
Result<std::vector<std::string>> workload_activations(const ir::Graph& graph, const ir::Op& op);

/// The power bias correction leaves for the weights' rounding to meet: the input's variance
/// averaged over the channels, plus the mean's estimate noise (var / count).
double corrected_power(const AxisMoments& m);

/// The derived integers of a workload op for q.json (null for another op).
nlohmann::json workload_op_json(const ir::Graph& quantized, const ir::Op& op);

struct Realizer {
  const ir::Graph& in;
  const ScalePlan& plan;
  const std::vector<ClassThreshold>& thresholds;
  ir::Graph out;
  std::set<std::string> graph_outputs;
  // Per channel accumulator sum of the last add_weight's w_q: sum |w_q|, or max(sum w_q+,
  // sum |w_q-|) when its layer's input is nonnegative (the headroom rule's bound).
  std::vector<std::int64_t> weight_l1;
  int widened_channels = 0;  // weight channels whose scale the headroom rule widened
  /// E[x^2] per calibrated tensor (the input-shift choice); null: every input shift is 0.
  const std::map<std::string, double>* mean_squares = nullptr;
  // The layer being realized reads an input whose codes are >= 0 by construction
  // (nonnegative(); set by matmul() for input_shift, add_weight and check_headroom).
  bool nonnegative_input = false;
  mutable std::map<std::string, bool> nonnegative_memo;  // nonnegative() per tensor (DAGs)
  /// Per-channel moments per calibrated tensor (bias correction); null: no correction.
  const std::map<std::string, ChannelMoments>* moments = nullptr;

  bool integer(const std::string& t) const { return plan.class_of.count(t) != 0; }
  int bits_of(const std::string& t) const { return plan.class_bits[plan.class_of.at(t)]; }
  float scale_of(const std::string& t) const {
    const int c = plan.class_of.at(t);
    return static_cast<float>(thresholds[c].threshold / intops::qmax(plan.class_bits[c]));
  }
  static ir::DType dtype_for(int bits) { return bits == 16 ? ir::DType::i16 : ir::DType::i8; }
  std::string qname(const std::string& t) const {
    if (in.producer(t) && in.op(*in.producer(t)).kind == ir::OpKind::Input) return t + ".q";
    return graph_outputs.count(t) && integer(t) ? t + ".q" : t;
  }

  Status declare_int(const std::string& t) {
    ir::Tensor tensor;
    tensor.name = qname(t);
    tensor.shape = in.tensor(t).shape;
    tensor.dtype = dtype_for(bits_of(t));
    tensor.quant = ir::QuantParams::per_tensor(scale_of(t), 0);
    return out.declare_tensor(std::move(tensor));
  }

  // realize.cpp
  Result<std::vector<float>> add_weight(const ir::Op& op, const ir::Tensor& w, int axis, int bits,
                                        int input_bits, const ir::Tensor* bias, double alpha,
                                        double beta, double input_scale, std::string& name_out);
  Status check_headroom(const ir::Op& op, int input_bits, const ir::Tensor* bias_q) const;
  /// Every integer value of activation `t` is >= 0 by construction (docs/quantization.md,
  /// "Accumulator headroom": Relu, Clip with min >= 0, and what keeps the sign after them).
  bool nonnegative(const std::string& t, int depth = 0) const;
  /// `shift` (empty, or per channel): subtracted from beta * b before rounding (bias
  /// correction), the result then kept within the accumulator bound of an `input_bits` input.
  Status add_bias(const ir::Tensor& b, const std::vector<float>& acc_scales, double beta,
                  std::string& name_out, const std::vector<double>& shift = {}, int input_bits = 0);
  // bias_correction.cpp (docs/quantization.md, "Bias correction")
  /// The input moments bias correction uses for `op` (a Conv's per input channel, a Gemm's per
  /// K index), or null where it does not apply (no bias, no statistics, a mean too small for
  /// its estimate: mean^2 <= 2 var / count averaged over the channels).
  const AxisMoments* correction_moments(const ir::Op& op) const;
  /// alpha * sum_k (s_w[c] w_q[c,k] - w[c,k]) E[x_k] per output channel c: the mean output
  /// error of the weights just quantized (`w_q`), E[x_k] from `m` and, for a Conv, the share of
  /// output positions whose tap k reads inside the input (zero padding reads 0).
  std::vector<double> bias_shift(const ir::Op& op, const ir::Tensor& w, const ir::Tensor& w_q,
                                 const AxisMoments& m, double alpha) const;

  int input_shift(const ir::Op& op, const ir::Tensor& w, int axis, int bits, const ir::Tensor* bias,
                  double alpha, double beta) const;
  Status matmul(const ir::Op& op);
  Status run();

  // realize_workloads.cpp: every op kind from MatMul on, and the integer Softmax.
  /// True when `op` is realized by workload_op (the float-only Softmax at the graph's end is not).
  bool is_workload_op(const ir::Op& op) const;
  Status workload_op(const ir::Op& op);

 private:
  // The name in the quantized graph of operand `slot`: its integer activation, or its constant
  // (times `factor`: 1, or the reciprocal for a Div) quantized per tensor at `scale` (0: the
  // constant's own max|c| / qmax) and `bits`.
  Result<std::string> operand(const ir::Op& op, std::size_t slot, float scale, int bits,
                              bool reciprocal = false);
  // A float constant of the float graph copied unchanged (LayerNorm's scale and bias).
  Result<std::string> float_constant(const std::string& name);
  // A constant selection mask (Where's condition, Softmax's mask) as i8 0/1.
  Result<std::string> mask_constant(const std::string& name);
  // Adds `q` (inputs already named) with its outputs declared as integer activations.
  Status emit(ir::Op q);
  Status unary(const ir::Op& op);
  Status binary(const ir::Op& op);
  Status select(const ir::Op& op);
  Status activation_matmul(const ir::Op& op);
  /// softmax_operand_shift when the quantized `a` is an integer Softmax's output over its last
  /// axis, else -1.
  int probabilities_shift(const std::string& a, int bits_b) const;
  Status reduce(const ir::Op& op);
  Status softmax(const ir::Op& op);
  Status normalization(const ir::Op& op);
};

}  // namespace tessel::quant::detail
