// Annotate (scale classes, widths) and realize (the quantized graph) per docs/quantization.md.
#include "compiler/quant/realize.hpp"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/quant/realizer.hpp"
#include "compiler/quant/workload_params.hpp"
#include "support/cancel.hpp"
#include "support/diagnostic.hpp"
#include "support/strings.hpp"
#include "support/version.hpp"

namespace tessel::quant {

namespace {

using ir::DType;
using ir::OpKind;

using detail::check_finite;
using detail::where;

bool moves_data_only(OpKind kind) {
  switch (kind) {
    case OpKind::MaxPool:
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::Pad:
    case OpKind::Split:
    case OpKind::Concat:
      return true;
    default:
      return false;
  }
}

struct UnionFind {
  std::vector<int> parent;
  int add() {
    parent.push_back(static_cast<int>(parent.size()));
    return parent.back();
  }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

}  // namespace

int dtype_bits(DType dtype) {
  switch (dtype) {
    case DType::i8:
    case DType::u8:
      return 8;
    case DType::i16:
      return 16;
    case DType::i32:
      return 32;
    case DType::f32:
      return 32;
  }
  return 32;
}

std::vector<Diagnostic> override_errors(const ir::Graph& graph, const QuantConfig& config) {
  std::vector<Diagnostic> errors;
  std::vector<std::string> op_names;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) op_names.push_back(graph.op(id).name);
  for (const auto& [name, layer] : config.layers) {
    const auto id = graph.find_op(name);
    if (!id) {
      errors.push_back({layer.location, "layers." + name,
                        "no op named '" + name + "' in model '" + graph.name() + "'" +
                            did_you_mean(name, op_names)});
      continue;
    }
    const auto kind = graph.op(*id).kind;
    if (kind != OpKind::Conv && kind != OpKind::Gemm)
      errors.push_back({layer.location, "layers." + name,
                        "op '" + name + "' is a " + std::string(ir::to_string(kind)) +
                            "; bits can be set only on Conv and Gemm ops"});
  }
  return errors;
}

namespace {

// An 8-bit class whose every member is an accumulator's requantized result (Conv, Gemm, MatMul)
// read only by unary functions (SiLU, Sigmoid, GELU, ...) becomes 16 bits: the requantize keeps
// 16 bits and the function's table interpolates them, so the value is rounded to 8 bits once,
// after the function, instead of before and after it (docs/quantization.md, "Table inputs").
void widen_table_inputs(const ir::Graph& graph, const QuantConfig& config, ScalePlan& plan) {
  if (config.table_input_bits <= config.bits) return;
  const auto& outputs = graph.outputs();
  for (std::size_t c = 0; c < plan.classes.size(); ++c) {
    if (plan.class_bits[c] != config.bits) continue;
    const bool widen =
        std::all_of(plan.classes[c].begin(), plan.classes[c].end(), [&](const std::string& t) {
          const auto producer = graph.producer(t);
          if (!producer) return false;
          const OpKind kind = graph.op(*producer).kind;
          if (kind != OpKind::Conv && kind != OpKind::Gemm && kind != OpKind::MatMul) return false;
          if (std::find(outputs.begin(), outputs.end(), t) != outputs.end()) return false;
          const auto readers = graph.consumers(t);
          return !readers.empty() &&
                 std::all_of(readers.begin(), readers.end(), [&](const ir::Use& use) {
                   return ir::is_unary_function(graph.op(use.op).kind);
                 });
        });
    if (widen) plan.class_bits[c] = config.table_input_bits;
  }
}

// Every reader is a Relu or Clip, and the tensor is no graph output: what they clip away does
// not widen the class.
bool is_pre_activation(const ir::Graph& graph, const std::string& tensor) {
  const auto readers = graph.consumers(tensor);
  const auto& outputs = graph.outputs();
  const bool is_output = std::find(outputs.begin(), outputs.end(), tensor) != outputs.end();
  return !readers.empty() && !is_output &&
         std::all_of(readers.begin(), readers.end(), [&](const ir::Use& use) {
           const auto kind = graph.op(use.op).kind;
           return kind == OpKind::Relu || kind == OpKind::Clip;
         });
}

// ScalePlan::class_constants from (constant, the output of the op it feeds) pairs.
void add_class_constants(const ir::Graph& graph,
                         const std::vector<std::pair<std::string, std::string>>& constants,
                         ScalePlan& plan) {
  for (const auto& [constant, output] : constants) {
    double max_abs = 0.0;
    for (const float v : graph.tensor(constant).f32_values)
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
    plan.class_constants[plan.class_of.at(output)].emplace_back(constant, max_abs);
  }
}

// A constant input of an op whose inputs share a scale class (a Concat's class token): it needs
// data to be quantized at the class's scale, and finite values.
Status class_constant(const ir::Graph& graph, const ir::Op& op, const std::string& name) {
  const ir::Tensor& t = graph.tensor(name);
  if (t.f32_values.empty())
    return fail(where(op) + ": input %" + name + " must be a float constant with data");
  if (auto ok = check_finite(t); !ok) return fail(where(op) + ": " + ok.reason());
  return {};
}

// The residual stream at norm_input_bits (docs/quantization.md, "Norm inputs"): a class at the
// default width, holding no graph output, whose every reader is a LayerNormalization or
// RMSNormalization, an op writing into the class itself (Reshape, Transpose, ...) or an Add/Sub
// writing into a widened class, with at least one norm or such Add among them; to a fixed point,
// so that what is summed into the stream (a residual branch, ViT's class-token Concat) is widened
// with it. A norm rescales each row by the row's own deviation, so a row far smaller than the
// tensor's range (ViT's class token) keeps few codes at 8 bits and the norm amplifies their
// rounding.
void widen_norm_inputs(const ir::Graph& graph, const QuantConfig& config, ScalePlan& plan) {
  if (config.norm_input_bits <= config.bits) return;
  const auto& outputs = graph.outputs();
  const auto class_of = [&](const std::string& t) {
    const auto it = plan.class_of.find(t);
    return it == plan.class_of.end() ? -1 : it->second;
  };
  std::vector<bool> wide(plan.classes.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t c = 0; c < plan.classes.size(); ++c) {
      if (wide[c] || plan.class_bits[c] != config.bits) continue;
      bool stream = true, feeds = false;
      for (const auto& t : plan.classes[c]) {
        const auto readers = graph.consumers(t);
        if (readers.empty() || std::find(outputs.begin(), outputs.end(), t) != outputs.end())
          stream = false;
        for (const ir::Use& use : readers) {
          const ir::Op& op = graph.op(use.op);
          const int into = class_of(op.outputs[0]);
          if (op.kind == OpKind::LayerNormalization || op.kind == OpKind::RMSNormalization) {
            feeds = true;
          } else if ((op.kind == OpKind::Add || op.kind == OpKind::Sub) && into >= 0 &&
                     wide[static_cast<std::size_t>(into)]) {
            feeds = true;
          } else if (into != static_cast<int>(c)) {
            stream = false;
          }
        }
      }
      if (stream && feeds) {
        wide[c] = true;
        plan.class_bits[c] = config.norm_input_bits;
        changed = true;
      }
    }
  }
}

}  // namespace

Result<ScalePlan> plan_scales(const ir::Graph& graph, const QuantConfig& config) {
  auto order = ir::topological_order(graph);
  if (!order) return fail(order.reason());
  ScalePlan plan;
  UnionFind sets;
  std::map<std::string, int> node_of;  // tensor -> union-find node
  std::map<std::string, int> demand;   // tensor -> widest width a reader wants
  std::vector<std::pair<std::string, std::string>> constants;  // (constant, its op's output)
  const auto node = [&](const std::string& tensor) {
    auto it = node_of.find(tensor);
    if (it != node_of.end()) return it->second;
    plan.observed.push_back(tensor);
    return node_of[tensor] = sets.add();
  };

  if (const auto errors = override_errors(graph, config); !errors.empty())
    return fail(errors.front().str());

  for (const ir::OpId id : order.value()) {
    const ir::Op& op = graph.op(id);
    if (detail::is_workload_kind(graph, op)) {
      auto activations = detail::workload_activations(graph, op);
      if (!activations) return fail(activations.reason());
      for (const auto& x : activations.value()) {
        node(x);
        demand[x] = std::max(demand[x], config.bits);
      }
      if (op.kind == OpKind::MatMul && graph.tensor(op.inputs[1]).constant)
        plan.op_bits[op.name] = config.bits;
    }
    const auto activation_input = [&](int index) -> Result<std::string> {
      const std::string& name = op.inputs[static_cast<std::size_t>(index)];
      if (graph.tensor(name).constant)
        return fail(where(op) + ": input %" + name +
                    " is a constant; the quantizer supports constants only as Conv/Gemm "
                    "weights and biases");
      return name;
    };
    switch (detail::is_workload_kind(graph, op) ? OpKind::Input : op.kind) {
      case OpKind::Input:
        break;
      case OpKind::Conv:
      case OpKind::Gemm: {
        auto x = activation_input(0);
        if (!x) return fail(x.reason());
        for (std::size_t i = 1; i < op.inputs.size(); ++i) {
          const ir::Tensor& t = graph.tensor(op.inputs[i]);
          if (!t.constant || t.f32_values.empty())
            return fail(where(op) + ": input %" + t.name +
                        " must be a float constant with data to be quantized");
          if (auto ok = check_finite(t); !ok) return fail(ok.reason());
        }
        if (op.kind == OpKind::Gemm && op.inputs.size() == 3) {
          const auto& w = graph.tensor(op.inputs[1]).shape;
          const auto n = op.get_int("transB") ? w[0] : w[1];
          if (ir::element_count(graph.tensor(op.inputs[2]).shape) != n)
            return fail(where(op) + ": bias %" + op.inputs[2] +
                        " must hold one value per output (" + std::to_string(n) +
                        ") to be quantized");
        }
        const auto it = config.layers.find(op.name);
        const int bits = it == config.layers.end() ? config.bits : it->second.bits;
        plan.op_bits[op.name] = bits;
        node(x.value());
        demand[x.value()] = std::max(demand[x.value()], bits);
        break;
      }
      case OpKind::BatchNormalization:
      case OpKind::Scale:
        return fail(where(op) +
                    ": cannot be quantized; run fold-batchnorm first (only a "
                    "BatchNormalization directly after a Conv folds)");
      case OpKind::AveragePool: {
        const auto& pad = op.get_ints("pad");
        const bool padded = std::any_of(pad.begin(), pad.end(), [](auto p) { return p != 0; });
        if (padded && op.get_int("count_include_pad") == 0)
          return fail(where(op) +
                      ": count_include_pad=0 with padding is not supported by the integer "
                      "contract (the divisor would vary by position)");
        [[fallthrough]];
      }
      case OpKind::GlobalAveragePool:
      case OpKind::MaxPool:
      case OpKind::Relu:
      case OpKind::Clip:
      case OpKind::Flatten:
      case OpKind::Reshape:
      case OpKind::Pad:
      case OpKind::Split:
      case OpKind::Concat:
      case OpKind::Softmax:
        for (std::size_t i = 0; i < op.inputs.size(); ++i) {
          if (op.kind == OpKind::Concat && graph.tensor(op.inputs[i]).constant) {
            if (auto ok = class_constant(graph, op, op.inputs[i]); !ok) return ok.failure();
            continue;  // a value of the concat's class (below)
          }
          auto x = activation_input(static_cast<int>(i));
          if (!x) return fail(x.reason());
          node(x.value());
          demand[x.value()] = std::max(demand[x.value()], config.bits);
        }
        break;
      case OpKind::Quantize:
      case OpKind::Dequantize:
      case OpKind::Requantize:
        return fail(where(op) + ": the graph is already quantized");
      default:
        return fail(where(op) + ": " + std::string(ir::to_string(op.kind)) +
                    " cannot be quantized yet");
    }
    if (detail::is_float_softmax(graph, op)) continue;  // its result stays float
    if (op.kind == OpKind::Input && graph.tensor(op.outputs[0]).dtype == DType::i32)
      continue;  // token ids: not calibrated, no scale (an Embedding reads them)
    for (const auto& out : op.outputs) node(out);
    if (moves_data_only(op.kind) || detail::joins_scale_class(op.kind)) {
      const int first = node(op.outputs[0]);
      for (std::size_t i = 0; i < op.inputs.size(); ++i) {
        const std::string& in = op.inputs[i];
        if (op.kind == OpKind::Embedding && i == 0) continue;  // token ids carry no scale
        if (!graph.tensor(in).constant)
          sets.unite(first, node(in));
        else if (op.kind != OpKind::Where || i > 0)  // Where's condition is a mask, no value
          constants.emplace_back(in, op.outputs[0]);
      }
      for (const auto& out : op.outputs) sets.unite(first, node(out));
    }
  }

  // Classes in order of first member; widths; pre-activation tensors.
  std::map<int, int> class_index;
  for (const auto& tensor : plan.observed) {
    const int root = sets.find(node_of[tensor]);
    auto [it, inserted] = class_index.emplace(root, static_cast<int>(plan.classes.size()));
    if (inserted) {
      plan.classes.emplace_back();
      plan.class_bits.push_back(0);
    }
    plan.class_of[tensor] = it->second;
    plan.classes[it->second].push_back(tensor);
    const auto d = demand.find(tensor);
    plan.class_bits[it->second] =
        std::max(plan.class_bits[it->second], d == demand.end() ? config.bits : d->second);
    if (is_pre_activation(graph, tensor)) plan.pre_activation.insert(tensor);
  }
  add_class_constants(graph, constants, plan);
  widen_table_inputs(graph, config, plan);
  widen_norm_inputs(graph, config, plan);
  return plan;
}

Result<std::vector<ClassThreshold>> class_thresholds(
    const ScalePlan& plan, const std::map<std::string, double>& tensor_thresholds,
    const QuantConfig& config) {
  std::vector<ClassThreshold> out(plan.classes.size());
  for (std::size_t c = 0; c < plan.classes.size(); ++c) {
    const auto& members = plan.classes[c];
    const bool all_pre = std::all_of(members.begin(), members.end(), [&](const auto& m) {
      return plan.pre_activation.count(m) != 0;
    });
    for (const auto& m : members) {
      if (!all_pre && plan.pre_activation.count(m)) continue;
      const auto it = tensor_thresholds.find(m);
      if (it == tensor_thresholds.end()) return fail("no calibration statistics for %" + m);
      if (out[c].from_tensor.empty() || it->second > out[c].threshold) {
        out[c].threshold = it->second;
        out[c].from_tensor = m;
      }
    }
    // A constant's values are known exactly: its max |c| is its threshold under every method.
    if (const auto k = plan.class_constants.find(static_cast<int>(c));
        k != plan.class_constants.end())
      for (const auto& [name, max_abs] : k->second)
        if (max_abs > out[c].threshold) {
          out[c].threshold = max_abs;
          out[c].from_tensor = name;
        }
    if (out[c].threshold <= 0.0) {
      if (!config.allow_zero_range) {
        std::string names;
        for (const auto& m : members) names += (names.empty() ? "%" : ", %") + m;
        return fail("activation " + names +
                    " is zero on every calibration sample, so its scale is undefined (set "
                    "allow_zero_range: true in the quantization config to use scale 1/qmax)");
      }
      out[c].threshold = 1.0;
    }
  }
  return out;
}

namespace detail {

Status check_finite(const ir::Tensor& tensor) {
  // Fast path (vectorised): |x| as a bit pattern is below +Inf's for every finite float.
  constexpr std::uint32_t kMagnitude = 0x7fffffffu, kInfinity = 0x7f800000u;
  std::uint32_t max_bits = 0;
  for (const float v : tensor.f32_values)
    max_bits = std::max(max_bits, std::bit_cast<std::uint32_t>(v) & kMagnitude);
  if (max_bits < kInfinity) return {};
  for (std::size_t i = 0; i < tensor.f32_values.size(); ++i) {
    const float v = tensor.f32_values[i];
    if (!std::isfinite(v))
      return fail("constant %" + tensor.name + ": " + (std::isnan(v) ? "NaN" : "Inf") +
                  " at element " + std::to_string(i) + " (weights must be finite to quantize)");
  }
  return {};
}

// Per-channel symmetric weights along `axis` (scale max|w_c| / qmax), each channel's scale
// widened where needed so that no input can overflow the int32 accumulator
// (docs/quantization.md, "Accumulator headroom"): with A = 2^(input_bits - 1), K weights per
// channel and the bias quantized at s_x * s_w[c] (times alpha),
//   A * sum_k |w_q[c,k]| + |b_q[c]| <= 2^31 - 1.
// Rounding adds at most 1/2 per weight and per bias, so
//   s_w[c] >= (A * sum|w_c| + |beta * b_c| / (alpha * s_x)) / (2^31 - 2 - A * K / 2)
// suffices (with a 2^-20 relative margin for the float scales); the integers are checked
// afterwards. Returns the scales.
Result<std::vector<float>> Realizer::add_weight(const ir::Op& op, const ir::Tensor& w, int axis,
                                                int bits, int input_bits, const ir::Tensor* bias,
                                                double alpha, double beta, double input_scale,
                                                std::string& name_out) {
  const auto& shape = w.shape;
  const std::int64_t channels = shape[static_cast<std::size_t>(axis)];
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const auto total = static_cast<std::int64_t>(w.f32_values.size());
  const std::int64_t per_channel = total / channels;
  const std::int64_t outer = total / (channels * inner);
  const WeightChannelStats stats = weight_channel_stats(w, axis);
  const std::vector<double>& max_abs = stats.max_abs;
  const std::vector<double> sum_abs = stats.headroom_sums(nonnegative_input);
  constexpr double kAccMax = 2147483647.0;
  const double input_magnitude = -static_cast<double>(intops::qmin(input_bits));
  const double room = kAccMax - 1.0 - input_magnitude * static_cast<double>(per_channel) / 2.0;
  if (room <= 0.0)
    return fail(where(op) + ": " + std::to_string(per_channel) + " products of " +
                std::to_string(input_bits) +
                "-bit inputs per output cannot fit an int32 accumulator at any weight scale");
  std::vector<float> scales(static_cast<std::size_t>(channels), 0.0f);
  for (std::size_t c = 0; c < scales.size(); ++c) {
    double s = max_abs[c] > 0.0 ? max_abs[c] / intops::qmax(bits) : 1.0;
    const double bias_abs =
        bias ? std::fabs(beta * static_cast<double>(bias->f32_values[c])) / (alpha * input_scale)
             : 0.0;
    const double needed =
        (input_magnitude * sum_abs[c] + bias_abs) * (1.0 + std::ldexp(1.0, -20)) / room;
    if (needed > s) {
      s = needed;
      ++widened_channels;
    }
    float f = static_cast<float>(s);
    if (static_cast<double>(f) < s) f = std::nextafter(f, std::numeric_limits<float>::max());
    scales[c] = f;
  }
  ir::Tensor q;
  q.name = out.has_tensor(w.name) ? out.unique_name(w.name) : w.name;
  q.dtype = dtype_for(bits);
  q.shape = shape;
  q.quant = ir::QuantParams{scales, std::vector<std::int32_t>(scales.size(), 0), axis};
  q.int_values.resize(w.f32_values.size());
  name_out = q.name;
  weight_l1.assign(static_cast<std::size_t>(channels), 0);
  std::vector<std::int64_t> positive(static_cast<std::size_t>(channels), 0);
  const std::span<const float> values(w.f32_values);
  const std::span<std::int32_t> ints(q.int_values);
  for (std::int64_t o = 0, i = 0; o < outer; ++o)  // each channel's runs of `inner` weights
    for (std::size_t c = 0; c < scales.size(); ++c, i += inner) {
      const auto first = static_cast<std::size_t>(i), count = static_cast<std::size_t>(inner);
      weight_l1[c] += quantize_values(values.subspan(first, count), scales[c], bits,
                                      ints.subspan(first, count));
      for (const std::int32_t v : ints.subspan(first, count)) positive[c] += std::max(v, 0);
    }
  if (nonnegative_input)  // an input >= 0 meets the positive and the negative weights apart
    for (std::size_t c = 0; c < weight_l1.size(); ++c)
      weight_l1[c] = std::max(positive[c], weight_l1[c] - positive[c]);
  if (auto ok = out.add_constant(std::move(q)); !ok) return fail(ok.reason());
  return scales;
}

// The accumulator bound of the weights just added (and the bias, when given) holds.
Status Realizer::check_headroom(const ir::Op& op, int input_bits, const ir::Tensor* bias_q) const {
  const std::int64_t magnitude = -static_cast<std::int64_t>(intops::qmin(input_bits));
  for (std::size_t c = 0; c < weight_l1.size(); ++c) {
    const std::int64_t bias = bias_q ? std::abs(std::int64_t{bias_q->int_values[c]}) : 0;
    if (magnitude * weight_l1[c] + bias > 2147483647)
      return fail(where(op) + ": channel " + std::to_string(c) +
                  " can overflow the int32 accumulator (" + std::to_string(magnitude) + " x " +
                  std::to_string(weight_l1[c]) + " + " + std::to_string(bias) + ")");
  }
  return {};
}

Status Realizer::add_bias(const ir::Tensor& b, const std::vector<float>& acc_scales, double beta,
                          std::string& name_out, const std::vector<double>& shift, int input_bits) {
  ir::Tensor q;
  q.name = out.has_tensor(b.name) ? out.unique_name(b.name) : b.name;
  q.dtype = DType::i32;
  q.shape = b.shape;
  q.quant = ir::QuantParams{acc_scales, std::vector<std::int32_t>(acc_scales.size(), 0),
                            static_cast<int>(b.shape.size()) - 1};
  q.int_values.resize(b.f32_values.size());
  for (std::size_t c = 0; c < b.f32_values.size(); ++c) {
    const double corrected = beta * b.f32_values[c] - (shift.empty() ? 0.0 : shift[c]);
    const double v = corrected / static_cast<double>(acc_scales[c]);
    double limit = 2147483647.0;
    if (!shift.empty()) {  // the corrected bias keeps the accumulator bound the weights left
      const double magnitude = -static_cast<double>(intops::qmin(input_bits));
      const double plain = std::fabs(std::round(beta * b.f32_values[c] / acc_scales[c]));
      limit = std::max(plain, 2147483647.0 - magnitude * static_cast<double>(weight_l1[c]));
    }
    q.int_values[c] = static_cast<std::int32_t>(std::clamp(std::round(v), -limit, limit));
  }
  name_out = q.name;
  return out.add_constant(std::move(q));
}

// The input shift of a Conv/Gemm/MatMul by a constant: choose_input_shift over the weights'
// statistics and the input's calibrated mean square. u = 0 without a search where the headroom
// rule cannot bind through the weights (A * K * qmax_w <= 2^30: every int8 layer below
// K = 2^16) or without statistics.
int Realizer::input_shift(const ir::Op& op, const ir::Tensor& w, int axis, int bits,
                          const ir::Tensor* bias, double alpha, double beta) const {
  const std::string& x = op.inputs[0];
  const std::int64_t k =
      static_cast<std::int64_t>(w.f32_values.size()) / w.shape[static_cast<std::size_t>(axis)];
  const double magnitude = -static_cast<double>(intops::qmin(bits_of(x)));
  const auto it = mean_squares ? mean_squares->find(x) : decltype(mean_squares->end()){};
  const bool known = mean_squares && it != mean_squares->end() && it->second > 0.0;
  if (!known || magnitude * static_cast<double>(k) * intops::qmax(bits) <= std::ldexp(1.0, 30))
    return 0;  // (without statistics a K too long for int32 fails in add_weight, as before)
  // With bias correction the weights' rounding meets the input's variance, not its mean square.
  double input_power = it->second;
  if (const AxisMoments* m = correction_moments(op)) input_power = corrected_power(*m);
  std::vector<double> bias_abs;
  if (bias)
    for (const float b : bias->f32_values)
      bias_abs.push_back(std::fabs(beta * static_cast<double>(b)) / alpha);
  return choose_input_shift(weight_channel_stats(w, axis), bias_abs, bits, bits_of(x),
                            static_cast<double>(scale_of(x)), input_power, nonnegative_input);
}

bool Realizer::nonnegative(const std::string& t, int depth) const {
  if (const auto known = nonnegative_memo.find(t); known != nonnegative_memo.end())
    return known->second;
  const auto id = in.producer(t);
  if (!id || depth > 64) return false;
  const ir::Op& op = in.op(*id);
  const bool result = [&] {
    switch (op.kind) {
      case OpKind::Relu:
        return true;
      case OpKind::Clip:
        return op.get_float("min") >= 0.0;
      case OpKind::Pad:
        return op.get_float("value") >= 0.0 && nonnegative(op.inputs[0], depth + 1);
      case OpKind::MaxPool:
      case OpKind::AveragePool:
      case OpKind::GlobalAveragePool:
      case OpKind::Flatten:
      case OpKind::Reshape:
        return nonnegative(op.inputs[0], depth + 1);
      case OpKind::Concat:
        return std::all_of(op.inputs.begin(), op.inputs.end(),
                           [&](const std::string& x) { return nonnegative(x, depth + 1); });
      default:
        return false;
    }
  }();
  nonnegative_memo[t] = result;
  return result;
}

Status Realizer::matmul(const ir::Op& op) {
  const std::string& x = op.inputs[0];
  const int bits = plan.op_bits.at(op.name);
  const ir::Tensor& w = in.tensor(op.inputs[1]);
  const bool gemm = op.kind == OpKind::Gemm;
  // Output channels: axis 0 of OIHW and of a transB Gemm's [N, K]; axis 1 of [K, N] (a Gemm
  // without transB, a MatMul by a constant matrix).
  const int axis = (gemm && op.get_int("transB") == 0) || op.kind == OpKind::MatMul ? 1 : 0;
  const double alpha = gemm ? op.get_float("alpha") : 1.0;
  const double beta = gemm ? op.get_float("beta") : 1.0;
  const ir::Tensor* bias = op.inputs.size() == 3 ? &in.tensor(op.inputs[2]) : nullptr;
  nonnegative_input = nonnegative(x);
  // The input shift u (docs/quantization.md, "Input shift on Conv/Gemm"): the layer then reads
  // an (a - u)-bit input at scale s_x * 2^u, and the rules below are the plain ones for it.
  const int u = input_shift(op, w, axis, bits, bias, alpha, beta);
  if (u < 0)
    return fail(where(op) + ": " + std::to_string(w.f32_values.size() / w.shape[axis]) +
                " products of " + std::to_string(bits_of(x)) +
                "-bit inputs per output cannot fit an int32 accumulator at any input shift");
  const int input_bits = bits_of(x) - u;
  const double input_scale = std::ldexp(static_cast<double>(scale_of(x)), u);
  std::string w_name;
  auto w_scales = add_weight(op, w, axis, bits, input_bits, bias, alpha, beta, input_scale, w_name);
  if (!w_scales) return fail(w_scales.reason());
  std::vector<float> acc_scales;
  for (const float s : w_scales.value())
    acc_scales.push_back(static_cast<float>(alpha * input_scale * s));
  ir::Op q = op;
  q.inputs = {qname(x), w_name};
  if (u > 0) q.attrs["input_shift"] = std::int64_t{u};
  if (bias) {
    std::string b_name;
    std::vector<double> shift;
    if (const AxisMoments* m = correction_moments(op))
      shift = bias_shift(op, w, out.tensor(w_name), *m, alpha);
    if (auto ok = add_bias(*bias, acc_scales, beta, b_name, shift, input_bits); !ok) return ok;
    q.inputs.push_back(b_name);
    if (auto ok = check_headroom(op, input_bits, &out.tensor(b_name)); !ok) return ok;
  } else if (auto ok = check_headroom(op, input_bits, nullptr); !ok) {
    return ok;
  }
  if (gemm) {
    q.attrs["alpha"] = 1.0;
    q.attrs["beta"] = 1.0;
  }
  ir::Tensor acc;
  acc.name = out.unique_name(op.name + ".acc");
  acc.dtype = DType::i32;
  acc.shape = in.tensor(op.outputs[0]).shape;
  // Channels on axis 1 (NCHW, [M, N]); a MatMul's on its last axis.
  const int acc_axis = op.kind == OpKind::MatMul ? static_cast<int>(acc.shape.size()) - 1 : 1;
  acc.quant =
      ir::QuantParams{acc_scales, std::vector<std::int32_t>(acc_scales.size(), 0), acc_axis};
  q.outputs = {acc.name};
  const std::string acc_name = acc.name;
  if (auto ok = out.declare_tensor(std::move(acc)); !ok) return ok;
  if (auto id = out.add_op(std::move(q)); !id) return fail(id.reason());
  if (auto ok = declare_int(op.outputs[0]); !ok) return ok;
  ir::Op requantize;
  requantize.name = out.unique_name(op.name + ".requantize");
  requantize.kind = OpKind::Requantize;
  requantize.inputs = {acc_name};
  requantize.outputs = {qname(op.outputs[0])};
  if (auto id = out.add_op(std::move(requantize)); !id) return fail(id.reason());
  return {};
}

Status Realizer::run() {
  auto order = ir::topological_order(in);
  if (!order) return fail(order.reason());
  for (const auto& t : in.outputs()) graph_outputs.insert(t);
  for (const ir::OpId id : order.value()) {
    if (cancel_requested()) return cancelled();  // one op's weights at most (support/cancel.hpp)
    const ir::Op& op = in.op(id);
    if (op.kind == OpKind::Input) {
      const ir::Tensor& x = in.tensor(op.outputs[0]);
      // Token ids (i32) stay as they are: no scale, no Quantize.
      if (auto r = out.add_input(x.name, x.shape, x.dtype); !r) return fail(r.reason());
      if (!integer(x.name)) continue;
      if (auto ok = declare_int(x.name); !ok) return ok;
      ir::Op quantize;
      quantize.name = out.unique_name(x.name + ".quantize");
      quantize.kind = OpKind::Quantize;
      quantize.inputs = {x.name};
      quantize.outputs = {qname(x.name)};
      if (auto r = out.add_op(std::move(quantize)); !r) return fail(r.reason());
      continue;
    }
    if (op.kind == OpKind::Conv || op.kind == OpKind::Gemm) {
      if (auto ok = matmul(op); !ok) return ok;
      continue;
    }
    if (is_workload_op(op)) {
      if (auto ok = workload_op(op); !ok) return ok;
      continue;
    }
    if (op.kind == OpKind::Softmax) {  // the float form, as the graph's last op
      const std::string& x = op.inputs[0];
      ir::Tensor f;
      f.name = out.unique_name(qname(x) + ".f32");
      f.shape = in.tensor(x).shape;
      const std::string f_name = f.name;
      if (auto ok = out.declare_tensor(std::move(f)); !ok) return ok;
      ir::Op dq;
      dq.name = f_name;
      dq.kind = OpKind::Dequantize;
      dq.inputs = {qname(x)};
      dq.outputs = {f_name};
      if (auto r = out.add_op(std::move(dq)); !r) return fail(r.reason());
      ir::Op softmax = op;
      softmax.inputs = {f_name};
      ir::Tensor y;
      y.name = op.outputs[0];
      y.shape = in.tensor(op.outputs[0]).shape;
      if (auto ok = out.declare_tensor(std::move(y)); !ok) return ok;
      if (auto r = out.add_op(std::move(softmax)); !r) return fail(r.reason());
      continue;
    }
    ir::Op q = op;
    for (std::size_t i = 0; i < q.inputs.size(); ++i) {
      auto name = op.kind == OpKind::Concat
                      ? operand(op, i, scale_of(op.outputs[0]), bits_of(op.outputs[0]))
                      : Result<std::string>(qname(op.inputs[i]));
      if (!name) return name.failure();
      q.inputs[i] = name.value();
    }
    for (auto& t : q.outputs) t = qname(t);
    for (const auto& t : op.outputs)
      if (auto ok = declare_int(t); !ok) return ok;
    if (auto r = out.add_op(std::move(q)); !r) return fail(r.reason());
  }
  for (const auto& t : in.outputs()) {
    if (!integer(t)) continue;
    ir::Tensor f;
    f.name = t;
    f.shape = in.tensor(t).shape;
    if (auto ok = out.declare_tensor(std::move(f)); !ok) return ok;
    ir::Op dq;
    dq.name = out.unique_name(t + ".dequantize");
    dq.kind = OpKind::Dequantize;
    dq.inputs = {qname(t)};
    dq.outputs = {t};
    if (auto r = out.add_op(std::move(dq)); !r) return fail(r.reason());
  }
  return out.set_outputs(in.outputs());
}

}  // namespace detail

Result<ir::Graph> realize(const ir::Graph& graph, const ScalePlan& plan,
                          const std::vector<ClassThreshold>& thresholds,
                          const std::map<std::string, double>* mean_squares,
                          const std::map<std::string, ChannelMoments>* moments) {
  if (thresholds.size() != plan.classes.size())
    return fail("realize: " + std::to_string(thresholds.size()) + " thresholds for " +
                std::to_string(plan.classes.size()) + " scale classes");
  detail::Realizer r{graph,        plan,  thresholds, ir::Graph(graph.name()), {}, {}, 0,
                     mean_squares, false, {}};
  r.moments = moments;
  if (auto ok = r.run(); !ok) return fail("quantizing '" + graph.name() + "': " + ok.reason());
  return std::move(r.out);
}

namespace {

#define TESSEL_QUANTIZE_TARGET __attribute__((target("avx512f")))

std::int64_t quantize_scalar(std::span<const float> x, float scale, int bits,
                             std::span<std::int32_t> out) {
  std::int64_t l1 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = intops::quantize_value(x[i], scale, bits);
    l1 += std::abs(out[i]);
  }
  return l1;
}

// Eight lanes of quantize_value: q = x / scale in double; t = trunc(q), plus sign(q) where
// |q - t| >= 1/2 (q - t is exact: t is q with its fraction bits cleared); clamp; NaN -> 0.
// (Zero-masking forms throughout: GCC 12's unmasked ones trip -Wmaybe-uninitialized.)
TESSEL_QUANTIZE_TARGET std::int64_t quantize_avx512(std::span<const float> x, float scale, int bits,
                                                    std::span<std::int32_t> out) {
  constexpr __mmask8 kAll = 0xff;
  const __m512d divisor = _mm512_set1_pd(static_cast<double>(scale));
  const __m512d lo = _mm512_set1_pd(intops::qmin(bits)), hi = _mm512_set1_pd(intops::qmax(bits));
  const __m512d half = _mm512_set1_pd(0.5);
  const __m512i one = _mm512_castpd_si512(_mm512_set1_pd(1.0));
  const __m512i sign = _mm512_set1_epi64(std::numeric_limits<std::int64_t>::min());
  __m512i l1 = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 8 <= x.size(); i += 8) {
    const __m512d value = _mm512_maskz_cvtps_pd(kAll, _mm256_loadu_ps(x.data() + i));
    const __mmask8 number = _mm512_cmp_pd_mask(value, value, _CMP_ORD_Q);
    const __m512d q = _mm512_div_pd(value, divisor);
    __m512d t = _mm512_maskz_roundscale_pd(kAll, q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 away = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(q, t)), half, _CMP_GE_OQ);
    const __m512d step =
        _mm512_castsi512_pd(_mm512_or_si512(one, _mm512_and_si512(_mm512_castpd_si512(q), sign)));
    t = _mm512_mask_add_pd(t, away, t, step);
    t = _mm512_maskz_min_pd(kAll, _mm512_maskz_max_pd(kAll, t, lo), hi);
    const __m256i ints = _mm512_maskz_cvttpd_epi32(number, t);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.data() + i), ints);
    l1 = _mm512_add_epi64(l1, _mm512_maskz_cvtepi32_epi64(kAll, _mm256_abs_epi32(ints)));
  }
  alignas(64) std::int64_t lanes[8];
  _mm512_store_si512(lanes, l1);
  return std::accumulate(lanes, lanes + 8, std::int64_t{0}) +
         quantize_scalar(x.subspan(i), scale, bits, out.subspan(i));
}

#define TESSEL_QUANTIZE_AVX2_TARGET __attribute__((target("avx2")))

// quantize_avx512 on 4 lanes for CPUs with AVX2 and not AVX-512 (session 17's AMD EPYC host):
// the same steps, NaN lanes zeroed by their ordered-compare mask.
TESSEL_QUANTIZE_AVX2_TARGET std::int64_t quantize_avx2(std::span<const float> x, float scale,
                                                       int bits, std::span<std::int32_t> out) {
  const __m256d divisor = _mm256_set1_pd(static_cast<double>(scale));
  const __m256d lo = _mm256_set1_pd(intops::qmin(bits)), hi = _mm256_set1_pd(intops::qmax(bits));
  const __m256d half = _mm256_set1_pd(0.5);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256i l1 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 4 <= x.size(); i += 4) {
    const __m256d value = _mm256_cvtps_pd(_mm_loadu_ps(x.data() + i));
    const __m256d number = _mm256_cmp_pd(value, value, _CMP_ORD_Q);
    const __m256d q = _mm256_div_pd(value, divisor);
    __m256d t = _mm256_round_pd(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d away =
        _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(q, t)), half, _CMP_GE_OQ);
    const __m256d step = _mm256_or_pd(one, _mm256_and_pd(q, sign));
    t = _mm256_add_pd(t, _mm256_and_pd(away, step));
    t = _mm256_and_pd(number, _mm256_min_pd(_mm256_max_pd(t, lo), hi));
    const __m128i ints = _mm256_cvttpd_epi32(t);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + i), ints);
    l1 = _mm256_add_epi64(l1, _mm256_cvtepi32_epi64(_mm_abs_epi32(ints)));
  }
  alignas(32) std::int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), l1);
  return std::accumulate(lanes, lanes + 4, std::int64_t{0}) +
         quantize_scalar(x.subspan(i), scale, bits, out.subspan(i));
}

}  // namespace

bool quant_avx512_allowed() {
  static const bool allowed = [] {
    const char* value = std::getenv("TESSEL_QUANT_NO_AVX512");
    return value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0;
  }();
  return allowed;
}

std::int64_t quantize_values(std::span<const float> x, float scale, int bits,
                             std::span<std::int32_t> out) {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && quant_avx512_allowed();
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512 && x.size() >= 8) return quantize_avx512(x, scale, bits, out);
  if (avx2 && x.size() >= 4) return quantize_avx2(x, scale, bits, out);
  return quantize_scalar(x, scale, bits, out);
}

std::vector<intops::Requant> requantize_params(const ir::Tensor& input, const ir::Tensor& output) {
  const int bits = dtype_bits(output.dtype);
  const double s_out = output.quant->scales.at(0);
  std::vector<intops::Requant> params;
  for (const float s : input.quant->scales)
    params.push_back(intops::make_requant(static_cast<double>(s) / s_out, intops::qmin(bits),
                                          intops::qmax(bits)));
  return params;
}

intops::AddRequant add_params(const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor& y) {
  const int bits = dtype_bits(y.dtype);
  const double s_y = y.quant->scales.at(0);
  return intops::make_add_requant(a.quant->scales.at(0) / s_y, b.quant->scales.at(0) / s_y,
                                  intops::qmin(bits), intops::qmax(bits));
}

intops::Requant average_params(const ir::Tensor& input, const ir::Tensor& output,
                               std::int64_t window_elements) {
  const int bits = dtype_bits(output.dtype);
  const double ratio =
      static_cast<double>(input.quant->scales.at(0)) /
      (static_cast<double>(output.quant->scales.at(0)) * static_cast<double>(window_elements));
  return intops::make_requant(ratio, intops::qmin(bits), intops::qmax(bits));
}

std::pair<std::int32_t, std::int32_t> clip_bounds(const ir::Tensor& tensor, double min,
                                                  double max) {
  const int bits = dtype_bits(tensor.dtype);
  const double s = tensor.quant->scales.at(0);
  const double lo = std::max<double>(intops::qmin(bits), std::round(min / s));
  const double hi = std::min<double>(intops::qmax(bits), std::round(max / s));
  return {static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi)};
}

nlohmann::json scales_json(const ir::Graph& quantized, const QuantConfig& config,
                           const ScalePlan& plan, const std::vector<ClassThreshold>& thresholds) {
  nlohmann::json j;
  j["model"] = quantized.name();
  j["tool_version"] = tessel::version();
  j["config"] = {{"bits", config.bits},
                 {"method", std::string(to_string(config.method))},
                 {"percentile", config.percentile},
                 {"wide_headroom", config.wide_headroom},
                 {"histogram_bins", config.histogram_bins},
                 {"calibration_samples", config.calibration_samples},
                 {"calibration_seed", config.calibration_seed},
                 {"allow_zero_range", config.allow_zero_range},
                 {"table_input_bits", config.table_input_bits},
                 {"norm_input_bits", config.norm_input_bits},
                 {"bias_correction", config.bias_correction}};
  nlohmann::json layers = nlohmann::json::object();
  for (const auto& [name, layer] : config.layers) layers[name] = {{"bits", layer.bits}};
  j["config"]["layers"] = layers;
  nlohmann::json classes = nlohmann::json::array();
  for (std::size_t c = 0; c < plan.classes.size(); ++c)
    classes.push_back(
        {{"bits", plan.class_bits[c]},
         {"threshold", thresholds[c].threshold},
         {"scale", static_cast<float>(thresholds[c].threshold / intops::qmax(plan.class_bits[c]))},
         {"from", thresholds[c].from_tensor},
         {"tensors", plan.classes[c]}});
  j["classes"] = classes;
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, t] : quantized.tensors()) {
    if (!t.quant) continue;
    nlohmann::json e = {{"dtype", std::string(ir::to_string(t.dtype))}};
    if (t.quant->per_channel()) {
      e["axis"] = t.quant->axis;
      e["scales"] = t.quant->scales;
    } else {
      e["scale"] = t.quant->scales.at(0);
    }
    if (t.constant) e["constant"] = true;
    tensors[name] = e;
  }
  j["tensors"] = tensors;
  nlohmann::json ops = nlohmann::json::array();
  for (ir::OpId id = 0; id < quantized.num_ops(); ++id) {
    const ir::Op& op = quantized.op(id);
    nlohmann::json e = {{"op", op.name}, {"kind", std::string(ir::to_string(op.kind))}};
    if (op.kind == OpKind::Requantize) {
      std::vector<std::int32_t> m;
      std::vector<int> r;
      const auto params =
          requantize_params(quantized.tensor(op.inputs[0]), quantized.tensor(op.outputs[0]));
      for (const auto& p : params) {
        m.push_back(p.multiplier);
        r.push_back(p.shift);
      }
      e["multiplier"] = m;
      e["shift"] = r;
      e["lo"] = params.at(0).lo;
      e["hi"] = params.at(0).hi;
    } else if (op.kind == OpKind::Add) {
      const auto p = add_params(quantized.tensor(op.inputs[0]), quantized.tensor(op.inputs[1]),
                                quantized.tensor(op.outputs[0]));
      e["multiplier_a"] = p.multiplier_a;
      e["multiplier_b"] = p.multiplier_b;
      e["shift"] = p.shift;
    } else if (op.kind == OpKind::AveragePool || op.kind == OpKind::GlobalAveragePool) {
      const auto& x = quantized.tensor(op.inputs[0]);
      const std::int64_t n = op.kind == OpKind::GlobalAveragePool
                                 ? x.shape[2] * x.shape[3]
                                 : op.get_ints("kernel")[0] * op.get_ints("kernel")[1];
      const auto p = average_params(x, quantized.tensor(op.outputs[0]), n);
      e["window_elements"] = n;
      e["multiplier"] = p.multiplier;
      e["shift"] = p.shift;
    } else if ((op.kind == OpKind::Conv || op.kind == OpKind::Gemm) &&
               op.get_int("input_shift") > 0) {  // "Input shift on Conv/Gemm"
      e["input_shift"] = op.get_int("input_shift");
    } else if (auto w = detail::workload_op_json(quantized, op); !w.is_null()) {
      e.update(w);
    } else {
      continue;
    }
    ops.push_back(e);
  }
  j["ops"] = ops;
  return j;
}

}  // namespace tessel::quant
