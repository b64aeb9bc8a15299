// Graph IR -> scheduler Net: shapes from the IR, weights and MACs from the ops'
// attributes.
#include "scheduler/from_ir.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/ir/analysis.hpp"
#include "compiler/ir/unary.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "scheduler/group_info.hpp"

namespace tessel::sched {

namespace {

constexpr int64_t kBiasBytes = 4;

Result<Shape3> shape3(const ir::Tensor& tensor, const std::string& op_name) {
  const auto& s = tensor.shape;
  if (s.empty()) return fail("op '" + op_name + "': tensor '" + tensor.name + "' has no shape");
  if (s[0] != 1) return fail("op '" + op_name + "': batch " + std::to_string(s[0]) + " is not 1");
  if (s.size() == 4) return Shape3{s[1], s[2], s[3]};
  if (s.size() == 2) return Shape3{s[1], 1, 1};
  int64_t elements = 1;
  for (size_t i = 1; i < s.size(); ++i) elements *= s[i];
  return Shape3{elements, 1, 1};
}

// The space-to-depth rewrite of a stride-2 conv over an input of `in`
// (docs/scheduler.md, "Space-to-depth stem"), when it applies and takes fewer
// matrix steps per output pixel and column block (input-channel blocks x taps);
// nullopt otherwise. `out_h`/`out_w`: the conv's output size. Fills the
// rewritten window and the record of the original.
std::optional<std::pair<Window, SpaceToDepthConv>> space_to_depth_rewrite(
    const Window& w, int64_t groups, Shape3 in, int64_t out_h, int64_t out_w, int64_t rows) {
  if (groups != 1 || w.stride_h != 2 || w.stride_w != 2 || w.dilation_h != 1 || w.dilation_w != 1 ||
      in.h % 2 != 0 || in.w % 2 != 0 || rows < 1)
    return std::nullopt;
  SpaceToDepthConv s2d{in.c, w.kernel_h, w.kernel_w, w.pad_top % 2, w.pad_left % 2};
  Window out;
  // Original row 2 oy - pad_top + ky = 2 (oy - pad_top') + (ky + shift): s2d
  // row oy - pad_top' + (ky + shift) / 2, parity (ky + shift) % 2.
  out.kernel_h = (w.kernel_h - 1 + s2d.shift_h) / 2 + 1;
  out.kernel_w = (w.kernel_w - 1 + s2d.shift_w) / 2 + 1;
  out.pad_top = (w.pad_top + s2d.shift_h) / 2;
  out.pad_left = (w.pad_left + s2d.shift_w) / 2;
  // The last output reads s2d row out_h - 1 - pad_top' + kernel' - 1; beyond
  // in.h / 2 is padding (zero, as the original's rows beyond in.h).
  out.pad_bottom = out_h + out.kernel_h - 1 - out.pad_top - in.h / 2;
  out.pad_right = out_w + out.kernel_w - 1 - out.pad_left - in.w / 2;
  if (out.pad_bottom < 0 || out.pad_right < 0) return std::nullopt;
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t before = ceil_div(in.c, rows) * w.kernel_h * w.kernel_w;
  const int64_t after = ceil_div(4 * in.c, rows) * out.kernel_h * out.kernel_w;
  if (after >= before) return std::nullopt;
  return std::make_pair(out, s2d);
}

// Builds a Net op by op in topological order: the kinds with rules of their own
// (Input, Conv, BatchNormalization, Gemm, a foldable activation) each in a
// method, every other kind on the generic path (activation inputs, constants as
// weights, one output).
class GraphConverter {
 public:
  GraphConverter(const ir::Graph& graph, const Machine& machine, NetForm form,
                 const MapSpaceFeatures& features)
      : graph_(graph), machine_(machine), form_(form), features_(features) {
    net_.name = graph.name();
    net_.activation_bytes = machine.activation_bytes;
  }

  Status add(const ir::Op& op) {
    Op out;
    out.name = op.name;
    out.type = std::string(ir::to_string(op.kind));
    switch (op.kind) {
      case ir::OpKind::Input:
        return add_input(op, std::move(out));
      case ir::OpKind::Conv:
        return add_conv(op, std::move(out));
      case ir::OpKind::BatchNormalization:
        return add_batch_norm(op, std::move(out));
      case ir::OpKind::Gemm:
        return add_gemm(op, std::move(out));
      case ir::OpKind::Mul:
        return add_mul(op, std::move(out));
      case ir::OpKind::Relu:
      case ir::OpKind::Clip: {
        bool folded = false;
        if (auto s = fold_activation(op, folded); !s.ok() || folded) return s;
        break;
      }
      default:
        break;
    }
    if (ir::is_unary_function(op.kind)) return add_lookup_table(op, std::move(out));
    if (auto s = generic_kind(op, out); !s.ok()) return s;
    return add_generic(op, std::move(out));
  }

  Net take() {
    net_.finalize();
    return std::move(net_);
  }

 private:
  auto consumers_of(const std::string& t) const { return graph_.consumers(t); }

  Result<int> input_tensor(const ir::Op& op, size_t i) {
    auto it = tensor_of_.find(op.inputs[i]);
    if (it == tensor_of_.end()) {
      return fail("op '" + op.name + "': input '" + op.inputs[i] + "' is not an activation");
    }
    return it->second;
  }

  Result<int> new_tensor(const std::string& name, const std::string& op_name) {
    auto s = shape3(graph_.tensor(name), op_name);
    if (!s.ok()) return s.failure();
    const int t = net_.add_tensor(name, s.value());
    tensor_of_[name] = t;
    return t;
  }

  // The net op that an activation `op` reading net tensor `x` folds into, or
  // null: folding is on, the form is not Caffe, `x` is made by a Conv, Gemm or
  // Add with no activation yet, the activation is its only reader and `x` is no
  // graph output.
  Op* foldable_producer(const ir::Op& op, int x) {
    if (!features_.fold_activations || form_ == NetForm::Caffe) return nullptr;
    const std::string& pre = op.inputs[0];
    if (consumers_of(pre).size() != 1) return nullptr;
    for (const std::string& o : graph_.outputs())
      if (o == pre) return nullptr;
    for (auto it = net_.ops.rbegin(); it != net_.ops.rend(); ++it) {
      if (it->output != x) continue;
      const bool clamps =
          it->kind == OpKind::Conv || it->kind == OpKind::Gemm || it->kind == OpKind::Add;
      return clamps && it->activation.empty() ? &*it : nullptr;
    }
    return nullptr;
  }

  Status add_input(const ir::Op& op, Op out) {
    out.kind = OpKind::Input;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    network_inputs_.insert(t.value());
    net_.add_op(std::move(out));
    return {};
  }

  Status add_conv(const ir::Op& op, Op out) {
    const int64_t wb = machine_.weight_bytes;
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    const auto geo = ir::window_geometry(op);
    out.kind = OpKind::Conv;
    out.inputs = {x.value()};
    out.window = {geo.kernel_h,   geo.kernel_w, geo.stride_h, geo.stride_w,   geo.dilation_h,
                  geo.dilation_w, geo.pad_top,  geo.pad_left, geo.pad_bottom, geo.pad_right};
    out.groups = geo.group;
    const auto& w = graph_.tensor(op.inputs[1]).shape;  // OIHW
    const int64_t per_output = w[1] * w[2] * w[3];
    bool bias = op.inputs.size() > 2 && !op.inputs[2].empty();
    // Folding: a BatchNormalization that is this conv's only consumer becomes
    // its bias.
    std::string result = op.outputs[0];
    if (form_ != NetForm::Caffe) {
      const auto uses = consumers_of(result);
      if (uses.size() == 1 && graph_.op(uses[0].op).kind == ir::OpKind::BatchNormalization) {
        bias = true;
      }
    }
    auto t = new_tensor(result, op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    out.weight_bytes = w[0] * per_output * wb + (bias ? w[0] * kBiasBytes : 0);
    out.requant_table_bytes = w[0] * kRequantEntryBytes;
    out.macs = net_.tensor(out.output).shape.elements() * per_output;
    Tensor& in = net_.tensors[static_cast<size_t>(x.value())];
    if (features_.space_to_depth_stem && network_inputs_.count(x.value()) &&
        consumers_of(op.inputs[0]).size() == 1) {
      const Shape3 y = net_.tensor(out.output).shape;
      if (auto r = space_to_depth_rewrite(out.window, out.groups, in.shape, y.h, y.w,
                                          machine_.matrix_rows)) {
        out.window = r->first;
        out.space_to_depth = r->second;
        in.shape = Shape3{4 * in.shape.c, in.shape.h / 2, in.shape.w / 2};
        in.space_to_depth = 2;
        const int64_t taps = out.window.kernel_h * out.window.kernel_w;
        out.zero_weight_bytes = w[0] * (in.shape.c * taps - per_output) * wb;
        out.weight_bytes += out.zero_weight_bytes;  // stored and moved as the conv's
      }
    }
    net_.add_op(std::move(out));
    return {};
  }

  Status add_batch_norm(const ir::Op& op, Op out) {
    const int64_t wb = machine_.weight_bytes;
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    const Shape3 s = net_.tensor(x.value()).shape;
    const auto producer = graph_.producer(op.inputs[0]);
    const bool folds = form_ != NetForm::Caffe && producer &&
                       graph_.op(*producer).kind == ir::OpKind::Conv &&
                       consumers_of(op.inputs[0]).size() == 1;
    if (folds) {  // the conv already produces the normalized tensor
      tensor_of_[op.outputs[0]] = x.value();
      return {};
    }
    out.kind = OpKind::Eltwise;
    out.inputs = {x.value()};
    if (form_ == NetForm::Caffe) {
      Op bn = out;
      bn.type = "BatchNorm";
      bn.name = op.name + "/bn";
      auto mid = net_.add_tensor(op.name + "/bn", s);
      bn.output = mid;
      bn.weight_bytes = 2 * s.c * wb;  // mean, variance
      net_.add_op(std::move(bn));
      out.name = op.name + "/scale";
      out.type = "Scale";
      out.inputs = {mid};
    }
    out.weight_bytes = 2 * s.c * wb;  // gamma, beta (or folded scale, shift)
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  Status add_gemm(const ir::Op& op, Op out) {
    const int64_t wb = machine_.weight_bytes;
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    out.kind = OpKind::Gemm;
    out.inputs = {x.value()};
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    const int64_t k = net_.tensor(x.value()).shape.elements();
    const int64_t n = net_.tensor(out.output).shape.c;
    const bool bias = op.inputs.size() > 2 && !op.inputs[2].empty();
    out.weight_bytes = k * n * wb + (bias ? n * kBiasBytes : 0);
    out.requant_table_bytes = n * kRequantEntryBytes;
    out.macs = k * n;
    net_.add_op(std::move(out));
    return {};
  }

  // A unary function (Sigmoid, HardSwish, Silu, ...): one Eltwise kind, run by table lookup
  // (ISA `lut`, docs/codegen.md "Unary functions"). Its weights are the 256-entry table, of the
  // output's element type; the quantized graph passes it as the op's constant second input.
  // A global pool wider than the pool instruction's window runs as depthwise convs of all-one
  // weights (docs/codegen.md): its weights are one DRAM pixel of ones, matrix_cols elements.
  void mark_pool_by_conv(const ir::Op& op, Op& out) const {
    const auto& in = graph_.tensor(op.inputs[0]).shape;
    if (in.size() != 4 || (in[2] <= kPoolWindowMax && in[3] <= kPoolWindowMax)) return;
    out.pool_by_conv = true;
    out.weight_bytes = machine_.matrix_cols * net_.activation_bytes;
  }

  Status add_lookup_table(const ir::Op& op, Op out) {
    const std::string what = "op '" + op.name + "' (" + std::string(ir::to_string(op.kind)) + ")";
    if (!machine_.lookup_table)
      return fail(what + " needs a vector unit with lookup tables (vector.lookup_table: true); " +
                  "config '" + machine_.name + "' has none");
    if (net_.activation_bytes != 1)
      return fail(what + ": the lut instruction looks up 8-bit codes; " +
                  std::to_string(8 * net_.activation_bytes) +
                  "-bit activations (interpolated tables) are not supported yet");
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    out.kind = OpKind::Eltwise;
    out.lookup_table = true;
    out.inputs = {x.value()};
    out.weight_bytes = 256 * net_.activation_bytes;
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    net_.add_op(std::move(out));
    return {};
  }

  // Mul of two activations, equal-shaped or the second one value per channel (C x 1 x 1, an
  // SE block's scale) broadcast over the pixels: ISA `mul`. The full operand is input 0.
  Status add_mul(const ir::Op& op, Op out) {
    const std::string what = "op '" + op.name + "' (Mul)";
    if (!machine_.broadcast_multiply)
      return fail(what + " needs a vector unit with a broadcast multiply " +
                  "(vector.broadcast_multiply: true); config '" + machine_.name + "' has none");
    if (op.inputs.size() != 2) return fail(what + " with other than two inputs");
    std::vector<int> xs;
    for (size_t i = 0; i < 2; ++i) {
      if (graph_.tensor(op.inputs[i]).constant)
        return fail(what + ": a Mul by the constant '" + op.inputs[i] +
                    "' is not supported by the accelerator path yet");
      auto x = input_tensor(op, i);
      if (!x.ok()) return x.failure();
      xs.push_back(x.value());
    }
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    const Shape3 y = net_.tensor(t.value()).shape;
    auto per_channel = [&](int x) {
      const Shape3 s = net_.tensor(x).shape;
      return s.c == y.c && s.h == 1 && s.w == 1;
    };
    if (net_.tensor(xs[0]).shape != y) std::swap(xs[0], xs[1]);
    if (net_.tensor(xs[0]).shape != y || !(net_.tensor(xs[1]).shape == y || per_channel(xs[1])))
      return fail(what + ": operands " + ir::shape_string(graph_.tensor(op.inputs[0]).shape) +
                  " x " + ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                  " (only equal shapes or one value per channel are supported)");
    out.kind = OpKind::Mul;
    out.inputs = xs;
    out.output = t.value();
    out.vector_elements = y.elements();
    net_.add_op(std::move(out));
    return {};
  }

  // Activation folding: the producer's output clamp applies it, and its output
  // tensor takes the activation's name (the pre-activation values are never
  // stored).
  Status fold_activation(const ir::Op& op, bool& folded) {
    auto x = input_tensor(op, 0);
    if (!x.ok()) return x.failure();
    if (Op* producer = foldable_producer(op, x.value())) {
      producer->activation = op.name;
      net_.tensors[static_cast<size_t>(x.value())].name = op.outputs[0];
      tensor_of_[op.outputs[0]] = x.value();
      folded = true;
    }
    return {};
  }

  // The kind (and window) of an op on the generic path; fails for kinds the
  // scheduler cannot place.
  Status generic_kind(const ir::Op& op, Op& out) const {
    switch (op.kind) {
      case ir::OpKind::MaxPool:
      case ir::OpKind::AveragePool: {
        const auto geo = ir::window_geometry(op);
        out.kind = op.kind == ir::OpKind::MaxPool ? OpKind::MaxPool : OpKind::AvgPool;
        out.window = {geo.kernel_h,   geo.kernel_w, geo.stride_h, geo.stride_w,   geo.dilation_h,
                      geo.dilation_w, geo.pad_top,  geo.pad_left, geo.pad_bottom, geo.pad_right};
        break;
      }
      case ir::OpKind::GlobalAveragePool:
        out.kind = OpKind::GlobalPool;
        mark_pool_by_conv(op, out);
        break;
      case ir::OpKind::ReduceMean: {
        // A mean over the spatial axes of an NCHW tensor is a global average pool (the pool
        // instruction, with ReduceMean's requantizer: docs/codegen.md).
        const auto& in = graph_.tensor(op.inputs[0]).shape;
        std::vector<int64_t> axes = op.get_ints("axes");
        for (int64_t& a : axes)
          if (a < 0) a += static_cast<int64_t>(in.size());
        std::sort(axes.begin(), axes.end());
        if (in.size() != 4 || axes != std::vector<int64_t>{2, 3})
          return fail("op '" + op.name + "': ReduceMean over axes other than the spatial ones " +
                      "(H, W of a 4-D tensor) is not supported by the accelerator path yet");
        out.kind = OpKind::GlobalPool;
        mark_pool_by_conv(op, out);
        break;
      }
      case ir::OpKind::Relu:
      case ir::OpKind::Clip:
      case ir::OpKind::Quantize:
      case ir::OpKind::Dequantize:
      case ir::OpKind::Requantize:
        out.kind = OpKind::Eltwise;
        break;
      case ir::OpKind::Scale: {
        out.kind = OpKind::Eltwise;
        break;
      }
      case ir::OpKind::Add:
        if (graph_.tensor(op.inputs[0]).shape != graph_.tensor(op.inputs[1]).shape)
          return fail("op '" + op.name + "': Add with broadcasting (" +
                      ir::shape_string(graph_.tensor(op.inputs[0]).shape) + " + " +
                      ir::shape_string(graph_.tensor(op.inputs[1]).shape) +
                      ") is not supported by the accelerator path yet");
        out.kind = OpKind::Add;
        break;
      case ir::OpKind::Concat: {
        if (op.get_int("axis") != 1) {
          return fail("op '" + op.name + "': Concat along axis " +
                      std::to_string(op.get_int("axis")) + " (only channels are supported)");
        }
        out.kind = OpKind::Concat;
        break;
      }
      case ir::OpKind::Pad: {
        const auto& pads = op.get_ints("pads");  // N C H W begins, then ends
        out.kind = OpKind::Pad;
        if (pads.size() == 8) {
          out.window.pad_top = pads[2];
          out.window.pad_left = pads[3];
          out.window.pad_bottom = pads[6];
          out.window.pad_right = pads[7];
        }
        break;
      }
      case ir::OpKind::Flatten:
      case ir::OpKind::Reshape:
        out.kind = OpKind::Reshape;
        break;
      case ir::OpKind::Softmax:
        if (op.inputs.size() > 1)
          return fail("op '" + op.name +
                      "': a masked Softmax is not supported by the accelerator path yet");
        out.kind = OpKind::Softmax;
        break;
      case ir::OpKind::Split:
        return fail("op '" + op.name + "': Split is not supported by the scheduler");
      default:  // the modern-workload kinds (MatMul .. Resize): no instructions
                // for them yet
        return fail("op '" + op.name + "': " + std::string(ir::to_string(op.kind)) +
                    " is not supported by the accelerator path yet (the golden "
                    "executors run "
                    "it; the ISA, scheduler and codegen do not)");
    }

    return {};
  }

  // Generic path: activation inputs (constants are weights), one output.
  Status add_generic(const ir::Op& op, Op out) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i].empty()) continue;
      const ir::Tensor& t = graph_.tensor(op.inputs[i]);
      if (t.constant) {
        out.weight_bytes +=
            t.shape.empty() ? 0 : ir::element_count(t.shape) * machine_.weight_bytes;
        continue;
      }
      auto x = input_tensor(op, i);
      if (!x.ok()) return x.failure();
      out.inputs.push_back(x.value());
    }
    auto t = new_tensor(op.outputs[0], op.name);
    if (!t.ok()) return t.failure();
    out.output = t.value();
    if (out.kind == OpKind::Concat) {
      int64_t offset = 0;
      for (int x : out.inputs) {
        out.concat_offsets.push_back(offset);
        offset += net_.tensor(x).shape.c;
      }
    }
    net_.add_op(std::move(out));
    return {};
  }

  const ir::Graph& graph_;
  const Machine& machine_;
  const NetForm form_;
  const MapSpaceFeatures& features_;
  Net net_;
  std::map<std::string, int, std::less<>> tensor_of_;  // IR tensor name -> Net tensor
  std::set<int> network_inputs_;                       // Net tensors of Input ops
};

}  // namespace

Result<Net> net_from_graph(const ir::Graph& graph, const Machine& machine, NetForm form,
                           const MapSpaceFeatures& features) {
  // A graph the pass would change is rewritten on a copy (one the pipelines
  // already rewrote with passes::pools_before_concat, after quantizing, is not
  // copied).
  if (form == NetForm::FoldedPoolsBeforeConcat && passes::pools_before_concat_applies(graph)) {
    ir::Graph rewritten = graph;
    if (Status s = passes::run_passes(rewritten, "pools-before-concat"); !s) return s.failure();
    return net_from_graph(rewritten, machine, NetForm::Folded, features);
  }
  auto order = ir::topological_order(graph);
  if (!order.ok()) return order.failure();
  GraphConverter builder(graph, machine, form, features);
  for (ir::OpId id : order.value()) {
    if (auto s = builder.add(graph.op(id)); !s.ok()) return s.failure();
  }
  return builder.take();
}

}  // namespace tessel::sched
