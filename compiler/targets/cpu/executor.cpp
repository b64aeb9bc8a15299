// The CPU executor: dispatch by op kind and dtype; oneDNN for convolutions, C++ for the rest.
#include "compiler/targets/cpu/executor.hpp"

#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "compiler/ir/analysis.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/int_gemm.hpp"
#include "compiler/targets/cpu/kernels.hpp"
#include "compiler/targets/cpu/nhwc_kernels.hpp"
#include "compiler/targets/cpu/ops/kernel.hpp"
#include "support/cancel.hpp"
#include "support/int_ops.hpp"
#include "support/seeded.hpp"

namespace tessel::cpu {

namespace {

using ir::DType;
using ir::OpKind;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

std::string where(const ir::Op& op) {
  return "%" + op.name + " (" + std::string(ir::to_string(op.kind)) + ")";
}

/// Calls f(p) with the tensor's typed element pointer (const when the tensor is const).
template <class Tensor, class F>
void with_any(Tensor& t, F&& f) {
  switch (t.dtype()) {
    case DType::i8:
      f(t.template data<std::int8_t>());
      break;
    case DType::u8:
      f(t.template data<std::uint8_t>());
      break;
    case DType::i16:
      f(t.template data<std::int16_t>());
      break;
    case DType::i32:
      f(t.template data<std::int32_t>());
      break;
    case DType::f32:
      f(t.template data<float>());
      break;
  }
}
/// As with_any, for integer dtypes only; f is never instantiated for float.
template <class F>
void with_int(TensorData& t, F&& f) {
  with_any(t, [&](auto* p) {
    if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(p)>>, float>) {
      throw std::logic_error("with_int on f32");
    } else {
      f(p);
    }
  });
}

/// nhwc::window_sums over an integer tensor of its own width: an average pool's input and
/// output may differ in width (a 16-bit output class under norm_input_bits or a per-layer
/// override, an 8-bit input).
void integer_window_sums(const TensorData& x, std::int64_t* sums, std::int64_t* counts,
                         std::int64_t out_h, std::int64_t out_w, const ir::WindowGeometry& g,
                         bool include_pad) {
  const auto& xs = x.shape();
  const auto sum = [&](const auto* xv) {
    nhwc::window_sums(xv, sums, counts, xs[0], xs[1], xs[2], xs[3], out_h, out_w, g, include_pad);
  };
  if (x.dtype() == DType::i8)
    sum(x.data<std::int8_t>());
  else if (x.dtype() == DType::u8)
    sum(x.data<std::uint8_t>());
  else if (x.dtype() == DType::i16)
    sum(x.data<std::int16_t>());
  else
    sum(x.data<std::int32_t>());
}

/// A value in flight. A 4-D tensor may be stored channels-last (`nhwc`); its shape stays NCHW.
struct Value {
  TensorData data;
  bool nhwc = false;
};

/// Whether NCHW and NHWC storage of `shape` differ (4-D with C > 1 and H * W > 1).
/// TESSEL_CPU_NO_ONEDNN_INT8 set (to anything but "" or "0"): the integer convolutions take the
/// exact im2col loop even where oneDNN's would be exact (ctest's `cpu_tests_no_onednn_int8`).
bool onednn_int8_disabled_by_environment() {
  const char* value = std::getenv("TESSEL_CPU_NO_ONEDNN_INT8");
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

/// The integer tensor `x` as int16 values: its own data when it holds int16, else widened into
/// `scratch` (im2col convolutions read int16 operands).
const std::int16_t* as_int16(const TensorData& x, std::vector<std::int16_t>& scratch) {
  if (x.dtype() == DType::i16) return x.data<std::int16_t>();
  with_any(x, [&](const auto* p) {
    if constexpr (std::is_integral_v<std::remove_pointer_t<decltype(p)>>)
      scratch.assign(p, p + x.size());
  });
  return scratch.data();
}

/// OIHW int8 or int16 weights in the im2col convolution's [o][kh][kw][c / group] int16 layout.
std::vector<std::int16_t> im2col_weights_of(const TensorData& w) {
  const auto& ws = w.shape();
  return w.dtype() == DType::i8
             ? nhwc::reorder_weights_ohwc(w.data<std::int8_t>(), ws[0], ws[1], ws[2], ws[3])
             : nhwc::reorder_weights_ohwc(w.data<std::int16_t>(), ws[0], ws[1], ws[2], ws[3]);
}

bool layouts_differ(const ir::Shape& shape) {
  return shape.size() == 4 && shape[1] > 1 && shape[2] * shape[3] > 1;
}

/// `t` stored in the other layout (NCHW -> NHWC when `to_nhwc`, else back).
TensorData relayout(const TensorData& t, bool to_nhwc) {
  if (!layouts_differ(t.shape())) return t;
  TensorData out(t.dtype(), t.shape());
  const auto& s = t.shape();
  const int bytes = ir::dtype_bytes(t.dtype());
  if (to_nhwc)
    nhwc::nchw_to_nhwc(t.raw(), out.raw(), s[0], s[1], s[2] * s[3], bytes);
  else
    nhwc::nhwc_to_nchw(t.raw(), out.raw(), s[0], s[1], s[2] * s[3], bytes);
  return out;
}

/// Calls ok = f(begin, end) on slices of [0, n) in parallel on the OpenMP threads oneDNN also
/// uses (OMP_NUM_THREADS), one slice when n < 2 * grain; true when every slice returned true.
/// The kernels it splits are elementwise (or per pixel): the result does not depend on the
/// number of threads.
template <class F>
bool parallel_slices(std::int64_t n, std::int64_t grain, F&& f) {
  const std::int64_t slices =
      std::clamp<std::int64_t>(n / std::max<std::int64_t>(grain, 1), 1, omp_get_max_threads());
  if (slices == 1) return f(std::int64_t{0}, n);
  bool ok = true;
  const int threads = static_cast<int>(slices);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : ok)
  for (std::int64_t t = 0; t < slices; ++t) ok = f(n * t / slices, n * (t + 1) / slices) && ok;
  return ok;
}

/// A oneDNN convolution reading and writing channels-last (NHWC) buffers, with its primitive and
/// its weights reordered once into the layout the primitive prefers.
/// - Integer (exact) convolutions run on NHWC directly: oneDNN's int8 kernels take it natively,
///   and any implementation gives the same integers.
/// - Float convolutions let oneDNN pick the activation layout (tag::any) and reorder to and from
///   NHWC around the call: the primitive, and so every float rounding, is the one session 1's
///   NCHW executor used, which keeps calibration (and every scale derived from it) unchanged.
class DnnlConv {
 public:
  DnnlConv(dnnl::engine& engine, const ir::Shape& x, const ir::Shape& y,
           const ir::WindowGeometry& g, const TensorData& w, const TensorData* bias, dt src_type,
           dt wei_type, dt dst_type)
      : engine_(engine), stream_(engine) {
    const dnnl::memory::dims src_dims(x.begin(), x.end());
    const dnnl::memory::dims dst_dims(y.begin(), y.end());
    dnnl::memory::dims wei_dims;
    tag wei_tag = tag::oihw;
    const auto& ws = w.shape();
    if (g.group > 1) {
      wei_dims = {g.group, ws[0] / g.group, ws[1], ws[2], ws[3]};
      wei_tag = tag::goihw;
    } else {
      wei_dims = {ws[0], ws[1], ws[2], ws[3]};
    }
    user_src_md_ = dnnl::memory::desc(src_dims, src_type, tag::nhwc);
    user_dst_md_ = dnnl::memory::desc(dst_dims, dst_type, tag::nhwc);
    const bool native_nhwc = src_type != dt::f32;
    const dnnl::memory::desc src_md =
        native_nhwc ? user_src_md_ : dnnl::memory::desc(src_dims, src_type, tag::any);
    const dnnl::memory::desc dst_md =
        native_nhwc ? user_dst_md_ : dnnl::memory::desc(dst_dims, dst_type, tag::any);
    const dnnl::memory::desc wei_md(wei_dims, wei_type, tag::any);
    const dnnl::memory::dims strides = {g.stride_h, g.stride_w};
    const dnnl::memory::dims dilates = {g.dilation_h - 1, g.dilation_w - 1};
    const dnnl::memory::dims pad_l = {g.pad_top, g.pad_left};
    const dnnl::memory::dims pad_r = {g.pad_bottom, g.pad_right};
    std::optional<dnnl::convolution_forward::desc> desc;
    if (bias) {
      const dnnl::memory::desc bias_md({ws[0]}, dt::f32, tag::a);
      desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                   wei_md, bias_md, dst_md, strides, dilates, pad_l, pad_r);
    } else {
      desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                   wei_md, dst_md, strides, dilates, pad_l, pad_r);
    }
    pd_ = dnnl::convolution_forward::primitive_desc(*desc, engine_);
    conv_ = dnnl::convolution_forward(pd_);
    // Weights: reorder once from the user's OIHW into the primitive's layout.
    dnnl::memory user_w({wei_dims, wei_type, wei_tag}, engine_, const_cast<void*>(w.raw()));
    weights_ = dnnl::memory(pd_.weights_desc(), engine_);
    dnnl::reorder(user_w, weights_).execute(stream_, user_w, weights_);
    if (bias) {
      bias_ = dnnl::memory({{ws[0]}, dt::f32, tag::a}, engine_);
      std::memcpy(bias_.get_data_handle(), bias->raw(), bias->bytes());
    }
    if (pd_.src_desc() != user_src_md_) {
      src_ = dnnl::memory(pd_.src_desc(), engine_);
      src_reorder_ = dnnl::reorder(dnnl::memory(user_src_md_, engine_, nullptr), src_);
    }
    if (pd_.dst_desc() != user_dst_md_) {
      dst_ = dnnl::memory(pd_.dst_desc(), engine_);
      dst_reorder_ = dnnl::reorder(dst_, dnnl::memory(user_dst_md_, engine_, nullptr));
    }
    stream_.wait();
  }

  /// x and y: NHWC buffers of the source and destination shapes.
  void run(const void* x, void* y) {
    dnnl::memory user_src(user_src_md_, engine_, const_cast<void*>(x));
    dnnl::memory user_dst(user_dst_md_, engine_, y);
    dnnl::memory src = user_src, dst = user_dst;
    if (src_) {
      src_reorder_.execute(stream_, user_src, src_);
      src = src_;
    }
    if (dst_) dst = dst_;
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}};
    if (bias_) args[DNNL_ARG_BIAS] = bias_;
    conv_.execute(stream_, args);
    if (dst_) dst_reorder_.execute(stream_, dst_, user_dst);
    stream_.wait();
  }

  /// oneDNN's name of the implementation it chose (e.g. "brg:avx512_core_amx").
  std::string implementation() const { return pd_.impl_info_str(); }

 private:
  dnnl::engine& engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::memory::desc user_src_md_, user_dst_md_;
  dnnl::memory weights_, bias_, src_, dst_;
  dnnl::reorder src_reorder_, dst_reorder_;
};

/// Output dtype/shape come from the graph (shapes inferred, dtypes set by the quantizer).
TensorData allocate(const ir::Graph& graph, const std::string& name) {
  const auto& t = graph.tensor(name);
  return TensorData(t.dtype, t.shape);
}

/// The clamp a Relu/Clip on integers applies ([0, int32 max] for Relu).
std::pair<std::int32_t, std::int32_t> activation_bounds(const ir::Graph& graph, const ir::Op& op) {
  if (op.kind == OpKind::Relu) return {0, std::numeric_limits<std::int32_t>::max()};
  return quant::clip_bounds(graph.tensor(op.inputs[0]), op.get_float("min"), op.get_float("max"));
}

/// Ops the fast path runs as one: `head` (a Conv or an Add) and the ops it absorbs, whose
/// results are never stored; `output` is the last absorbed op's result.
struct Fusion {
  std::vector<ir::OpId> absorbed;
  std::string output;
  std::string label;  ///< "Conv+Requantize+Relu"
  /// Conv: the requantization (bounds narrowed by an absorbed Relu/Clip); Add: unused.
  nhwc::ChannelRequant requant;
  /// Add: the rescale with the narrowed bounds.
  intops::AddRequant add;
};

}  // namespace

bool onednn_int8_conv_exact() {
  static const bool exact = [] {
    if (onednn_int8_disabled_by_environment()) return false;
    // cpu_isa values are feature masks: an ISA includes another when it has all its bits.
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto has = [&](dnnl_cpu_isa_t bits) {
      return (isa & static_cast<unsigned>(bits)) == static_cast<unsigned>(bits);
    };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
  }();
  return exact;
}

// ------------------------------------------------------------------------------------------------
// The executor

struct Executor::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::unordered_map<std::string, TensorData> constants;
  std::unordered_map<std::string, TensorData> constants_nhwc;  // 4-D constants, channels-last
  std::vector<ir::OpId> order;
  std::unordered_map<std::string, std::size_t> last_use;  // tensor -> position in `order`
  std::unordered_map<std::string, std::vector<ir::OpId>> readers;
  std::unordered_map<ir::OpId, std::unique_ptr<DnnlConv>> convs;
  std::unordered_map<ir::OpId, nhwc::ChannelRequant> requants;
  std::unordered_map<ir::OpId, std::vector<std::int8_t>> gemm_weights_kn;
  std::unordered_map<ir::OpId, std::vector<std::int16_t>> im2col_weights;  // [o][kh][kw][c/g]
  std::unordered_map<ir::OpId, Fusion> fusions;                            // by head op
  std::vector<std::int32_t> accumulators;  // a fused conv's int32 result (reused)

  /// The single reader of `tensor` when it has exactly one and is not a graph output.
  std::optional<ir::OpId> sole_reader(const ir::Graph& graph, const std::string& tensor) const {
    const auto it = readers.find(tensor);
    if (it == readers.end() || it->second.size() != 1) return std::nullopt;
    const auto& outputs = graph.outputs();
    if (std::find(outputs.begin(), outputs.end(), tensor) != outputs.end()) return std::nullopt;
    return it->second[0];
  }

  void plan_fusions(const ir::Graph& graph);
};

void Executor::Impl::plan_fusions(const ir::Graph& graph) {
  // Narrows [lo, hi] by a following Relu/Clip when the two clamps compose into one.
  const auto absorb_activation = [&](const std::string& tensor, Fusion& f, std::int32_t& lo,
                                     std::int32_t& hi) {
    const auto act_id = sole_reader(graph, tensor);
    if (!act_id) return;
    const ir::Op* act = &graph.op(*act_id);
    if (act->kind != OpKind::Relu && act->kind != OpKind::Clip) return;
    if (graph.tensor(act->outputs[0]).dtype != graph.tensor(tensor).dtype) return;
    const auto [alo, ahi] = activation_bounds(graph, *act);
    const std::int32_t nlo = std::max(lo, alo), nhi = std::min(hi, ahi);
    if (alo > ahi || nlo > nhi) return;
    lo = nlo;
    hi = nhi;
    f.absorbed.push_back(*act_id);
    f.output = act->outputs[0];
    f.label += "+" + std::string(ir::to_string(act->kind));
  };
  for (const ir::OpId id : order) {
    const ir::Op& op = graph.op(id);
    if (op.kind == OpKind::Conv && op.inputs.size() >= 2) {
      const auto& x = graph.tensor(op.inputs[0]);
      const auto& w = graph.tensor(op.inputs[1]);
      const auto& acc = graph.tensor(op.outputs[0]);
      if (!((x.dtype == DType::i8 || x.dtype == DType::u8) && w.dtype == DType::i8 && w.constant &&
            acc.dtype == DType::i32 && acc.shape.size() == 4))
        continue;
      const auto rq_id = sole_reader(graph, op.outputs[0]);
      if (!rq_id) continue;
      const ir::Op* rq = &graph.op(*rq_id);
      if (rq->kind != OpKind::Requantize) continue;
      const auto& y = graph.tensor(rq->outputs[0]);
      if (y.dtype != DType::i8 && y.dtype != DType::u8 && y.dtype != DType::i16) continue;
      Fusion f;
      f.absorbed = {*rq_id};
      f.output = rq->outputs[0];
      f.label = "Conv+Requantize";
      f.requant = nhwc::channel_requant(quant::requantize_params(acc, y), acc.shape[1]);
      f.requant.zero_point = y.quant->zero_points.empty() ? 0 : y.quant->zero_points[0];
      absorb_activation(rq->outputs[0], f, f.requant.lo, f.requant.hi);
      fusions.emplace(id, std::move(f));
    } else if (op.kind == OpKind::Add && op.inputs.size() == 2) {
      const auto& a = graph.tensor(op.inputs[0]);
      const auto& b = graph.tensor(op.inputs[1]);
      const auto& y = graph.tensor(op.outputs[0]);
      if (!(a.dtype == y.dtype && b.dtype == y.dtype &&
            (y.dtype == DType::i8 || y.dtype == DType::i16)))
        continue;
      Fusion f;
      f.label = "Add";
      f.add = quant::add_params(a, b, y);
      absorb_activation(op.outputs[0], f, f.add.lo, f.add.hi);
      if (!f.absorbed.empty()) fusions.emplace(id, std::move(f));
    }
  }
}

Executor::Executor(const ir::Graph& graph) : graph_(graph), impl_(std::make_unique<Impl>()) {
  auto order = ir::topological_order(graph);
  if (!order) throw std::invalid_argument("Executor: " + order.reason());
  impl_->order = std::move(order.value());
  for (const auto& [name, tensor] : graph.tensors())
    if (tensor.constant && tensor.has_data())
      impl_->constants.emplace(name, TensorData::from_constant(tensor));
  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos) {
    const ir::OpId id = impl_->order[pos];
    for (const auto& in : graph.op(id).inputs) {
      impl_->last_use[in] = pos;
      impl_->readers[in].push_back(id);
    }
  }
  impl_->plan_fusions(graph);
}

Executor::~Executor() = default;

Result<std::map<std::string, TensorData>> Executor::run(
    const std::map<std::string, TensorData>& inputs, const RunOptions& options) {
  const std::map<std::string, TensorData>* sample[] = {&inputs};
  auto results = run_samples(sample, {&options, 1});
  if (!results) return fail(results.reason());
  return std::move(results.value()[0]);
}

Result<std::vector<std::map<std::string, TensorData>>> Executor::run_lockstep(
    std::span<const std::map<std::string, TensorData>> samples, const SampleObserver& observer,
    std::size_t* failed_sample) {
  std::vector<const std::map<std::string, TensorData>*> inputs;
  std::vector<RunOptions> options(samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    inputs.push_back(&samples[k]);
    options[k].layout_observer = [&observer, k](const std::string& tensor, const TensorData& value,
                                                bool channels_last) {
      return observer(k, tensor, value, channels_last);
    };
  }
  return run_samples(inputs, options, failed_sample);
}

Result<std::vector<std::map<std::string, TensorData>>> Executor::run_samples(
    std::span<const std::map<std::string, TensorData>* const> sample_inputs,
    std::span<const RunOptions> sample_options, std::size_t* current_sample) {
  const auto& outputs = graph_.outputs();
  const auto is_output = [&](const std::string& n) {
    return std::find(outputs.begin(), outputs.end(), n) != outputs.end();
  };
  const RunOptions& first_options = sample_options[0];
  const bool fuse = !first_options.observer && !first_options.layout_observer &&
                    !first_options.keep_intermediates;
  std::vector<bool> absorbed(graph_.num_ops(), false);
  std::vector<std::unordered_map<std::string, Value>> sample_values(sample_inputs.size());

  // Op by op, each op on every sample before the next op (one sample: a plain run).
  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos)
    for (std::size_t sample = 0; sample < sample_inputs.size(); ++sample) {
      if (cancel_requested()) return cancelled();  // support/cancel.hpp
      if (current_sample) *current_sample = sample;
      auto& values = sample_values[sample];
      const std::map<std::string, TensorData>& inputs = *sample_inputs[sample];
      const RunOptions& options = sample_options[sample];
      // A value in the layout an op needs; a stored value is converted in place (a later reader
      // wanting the other layout converts it back), a constant's channels-last copy is cached.
      const auto nchw = [&](const std::string& name) -> const TensorData& {
        if (auto it = values.find(name); it != values.end()) {
          Value& v = it->second;
          if (v.nhwc && layouts_differ(v.data.shape())) v.data = relayout(v.data, false);
          v.nhwc = false;
          return v.data;
        }
        return impl_->constants.at(name);
      };
      const auto channels_last = [&](const std::string& name) -> const TensorData& {
        if (auto it = values.find(name); it != values.end()) {
          Value& v = it->second;
          if (v.data.shape().size() != 4) return v.data;
          if (!v.nhwc && layouts_differ(v.data.shape())) v.data = relayout(v.data, true);
          v.nhwc = true;
          return v.data;
        }
        const TensorData& c = impl_->constants.at(name);
        if (c.shape().size() != 4) return c;
        auto cached = impl_->constants_nhwc.find(name);
        if (cached == impl_->constants_nhwc.end())
          cached = impl_->constants_nhwc.emplace(name, relayout(c, true)).first;
        return cached->second;
      };
      // Whatever layout the value has (for elementwise ops), and that layout.
      const auto as_is = [&](const std::string& name) -> std::pair<const TensorData*, bool> {
        if (auto it = values.find(name); it != values.end())
          return {&it->second.data, it->second.nhwc && layouts_differ(it->second.data.shape())};
        return {&impl_->constants.at(name), false};
      };
      const auto in_layout = [&](const std::string& name, bool nhwc_wanted) -> const TensorData& {
        return nhwc_wanted ? channels_last(name) : nchw(name);
      };

      const ir::OpId id = impl_->order[pos];
      if (absorbed[id]) continue;
      const ir::Op& op = graph_.op(id);
      const auto start = std::chrono::steady_clock::now();
      const Fusion* fusion = nullptr;
      if (fuse)
        if (auto it = impl_->fusions.find(id); it != impl_->fusions.end()) {
          fusion = &it->second;
          for (const ir::OpId a : fusion->absorbed) absorbed[a] = true;
        }
      const std::string& out_name = fusion ? fusion->output : op.outputs.at(0);
      TensorData y;
      bool y_nhwc = false;
      // The kinds registered by kind (compiler/targets/cpu/ops); the switch below keeps the kinds
      // with channels-last fast paths (convolutions, Gemm, requantize, pools, activations).
      const auto registered = [&]() -> Status {
        const OpKernel kernel = find_op_kernel(op.kind);
        if (!kernel) return fail(where(op) + ": no kernel for this op kind");
        KernelArgs args{graph_, op, {}};
        for (const auto& in : op.inputs) args.inputs.push_back(&nchw(in));
        auto results = kernel(args);
        if (!results) return fail(results.reason());
        auto& values_out = results.value();
        y = std::move(values_out[0]);
        for (std::size_t k = 1; k < values_out.size(); ++k) {
          if (options.observer)
            if (auto ok = options.observer(op.outputs[k], values_out[k]); !ok) return ok;
          if (options.layout_observer)
            if (auto ok = options.layout_observer(op.outputs[k], values_out[k], false); !ok)
              return ok;
          values[op.outputs[k]] = Value{std::move(values_out[k]), false};
        }
        return {};
      };
      // Add has both: the built-in case for equal shapes (its fused integer fast path).
      const bool builtin = !find_op_kernel(op.kind) ||
                           (op.kind == OpKind::Add &&
                            graph_.tensor(op.inputs[0]).shape == graph_.tensor(op.inputs[1]).shape);
      try {
        if (!builtin) {
          if (auto ok = registered(); !ok) return fail(ok.reason());
        } else
          switch (op.kind) {
            case OpKind::Input: {
              const auto it = inputs.find(op.outputs[0]);
              if (it == inputs.end()) return fail("no value given for graph input %" + out_name);
              const auto& t = graph_.tensor(out_name);
              if (it->second.shape() != t.shape || it->second.dtype() != t.dtype)
                return fail("graph input %" + out_name + " expects " + ir::type_string(t) +
                            ", got " + std::string(ir::to_string(it->second.dtype())) +
                            ir::shape_string(it->second.shape()));
              y = it->second;
              break;
            }
            case OpKind::Conv: {
              const TensorData& w = nchw(op.inputs[1]);
              const TensorData* b = op.inputs.size() > 2 ? &nchw(op.inputs[2]) : nullptr;
              const auto& x_t = graph_.tensor(op.inputs[0]);
              const auto& y_t = graph_.tensor(op.outputs[0]);
              const auto g = ir::window_geometry(op);
              // Weights that are not constants (ONNX node tests feed them as inputs) cannot be
              // reordered once: rebuild the primitive for every run.
              const bool constant_weights = graph_.tensor(op.inputs[1]).constant;
              const bool onednn_int = (x_t.dtype == DType::i8 || x_t.dtype == DType::u8) &&
                                      w.dtype() == DType::i8 && y_t.dtype == DType::i32;
              if (x_t.dtype == DType::f32 || onednn_int) {
                const TensorData& x = channels_last(op.inputs[0]);
                // Without VNNI oneDNN's 8-bit convolution is not exact (onednn_int8_conv_exact):
                // the accumulators then come from the exact im2col loop, the rest is the same.
                const bool im2col = onednn_int && !onednn_int8_conv_exact();
                auto& conv = impl_->convs[id];
                const std::vector<std::int16_t>* w16 = nullptr;
                if (im2col) {
                  auto& cached = impl_->im2col_weights[id];
                  if (cached.empty() || !constant_weights) cached = im2col_weights_of(w);
                  w16 = &cached;
                } else if (!conv || !constant_weights) {
                  if (x.dtype() == DType::f32)
                    conv = std::make_unique<DnnlConv>(impl_->engine, x.shape(), y_t.shape, g, w, b,
                                                      dt::f32, dt::f32, dt::f32);
                  else  // exact: s8/u8 x s8 -> s32 with no scales; the int32 bias is added below
                    conv = std::make_unique<DnnlConv>(
                        impl_->engine, x.shape(), y_t.shape, g, w, nullptr,
                        x.dtype() == DType::i8 ? dt::s8 : dt::u8, dt::s8, dt::s32);
                }
                y_nhwc = true;
                const auto& ys = y_t.shape;
                const std::int64_t pixels = ys[0] * ys[2] * ys[3], channels = ys[1];
                const std::int32_t* bias = onednn_int && b ? b->data<std::int32_t>() : nullptr;
                // The accumulators without the bias into `out` (NHWC int32); false when one
                // leaves int32 (only the im2col loop sees that: 8-bit products would need more
                // than 2^17 terms).
                const auto accumulate = [&](std::int32_t* out) {
                  if (!im2col) {
                    conv->run(x.raw(), out);
                    return true;
                  }
                  std::vector<std::int16_t> x16;
                  const auto& xs = x.shape();
                  return nhwc::conv_im2col_s16(as_int16(x, x16), w16->data(), nullptr, out, xs[0],
                                               xs[1], xs[2], xs[3], ys[1], ys[2], ys[3], g);
                };
                const auto overflow = [&] {
                  TensorData check(DType::i32, ys);
                  auto ok = conv_int_reference(nchw(op.inputs[0]), w, nullptr, g, check);
                  return fail(where(op) + ": " + (ok ? "int32 accumulator overflow" : ok.reason()));
                };
                std::int32_t* acc = nullptr;
                if (fusion) {
                  impl_->accumulators.resize(static_cast<std::size_t>(ir::element_count(ys)));
                  acc = impl_->accumulators.data();
                  if (!accumulate(acc)) return overflow();
                  y = allocate(graph_, out_name);
                  bool in_range = true;
                  with_int(y, [&](auto* out) {
                    using T = std::remove_pointer_t<decltype(out)>;
                    if constexpr (std::is_same_v<T, std::int32_t>) {
                      throw std::logic_error("fused requantize to int32");
                    } else {
                      in_range =
                          parallel_slices(pixels, 1024, [&](std::int64_t p0, std::int64_t p1) {
                            return nhwc::requantize(acc + p0 * channels, bias, out + p0 * channels,
                                                    p1 - p0, channels, fusion->requant);
                          });
                    }
                  });
                  if (in_range) break;
                } else {
                  y = allocate(graph_, out_name);
                  if (!accumulate(y.data<std::int32_t>())) return overflow();
                  if (!bias || nhwc::add_bias(y.data<std::int32_t>(), bias, pixels, channels))
                    break;
                  acc = y.data<std::int32_t>();
                }
                // The first element (in NCHW order, as the scalar contract reports it) whose
                // accumulator + bias leaves int32.
                const std::int64_t inner = ys[2] * ys[3];
                for (std::int64_t i = 0; i < ir::element_count(ys); ++i) {
                  const std::int64_t n = i / (channels * inner), c = (i / inner) % channels;
                  const std::int64_t v =
                      std::int64_t{acc[(n * inner + i % inner) * channels + c]} + bias[c];
                  if (v > std::numeric_limits<std::int32_t>::max() ||
                      v < std::numeric_limits<std::int32_t>::min())
                    return fail(where(op) +
                                ": int32 accumulator overflow adding the bias at output element " +
                                std::to_string(i));
                }
                return fail(where(op) + ": int32 accumulator overflow adding the bias");
              } else if (y_t.dtype == DType::i32 && x_t.dtype != DType::i32 &&
                         (w.dtype() == DType::i8 || w.dtype() == DType::i16) &&
                         (!b || b->dtype() == DType::i32)) {
                // 16-bit data: im2col + int64-accumulated dot products (oneDNN has no s16 conv).
                const TensorData& x = channels_last(op.inputs[0]);
                const auto &xs = x.shape(), &ys = y_t.shape;
                std::vector<std::int16_t> x16;
                const std::int16_t* xp = as_int16(x, x16);
                auto& w16 = impl_->im2col_weights[id];
                if (w16.empty() || !constant_weights) w16 = im2col_weights_of(w);
                y = allocate(graph_, out_name);
                y_nhwc = true;
                if (!nhwc::conv_im2col_s16(xp, w16.data(), b ? b->data<std::int32_t>() : nullptr,
                                           y.data<std::int32_t>(), xs[0], xs[1], xs[2], xs[3],
                                           ys[1], ys[2], ys[3], g)) {
                  // Out of int32 somewhere: the reference names the first element.
                  TensorData check(DType::i32, ys);
                  auto ok = conv_int_reference(nchw(op.inputs[0]), w, b, g, check);
                  return fail(where(op) + ": " + (ok ? "int32 accumulator overflow" : ok.reason()));
                }
              } else if (y_t.dtype == DType::i32) {
                y = allocate(graph_, out_name);
                if (auto ok = conv_int_reference(nchw(op.inputs[0]), w, b, g, y); !ok)
                  return fail(where(op) + ": " + ok.reason());
              } else {
                return fail(where(op) + ": unsupported dtypes " +
                            std::string(ir::to_string(x_t.dtype)) + " x " +
                            std::string(ir::to_string(w.dtype())) + " -> " +
                            std::string(ir::to_string(y_t.dtype)));
              }
              break;
            }
            case OpKind::Gemm: {
              const TensorData& a = nchw(op.inputs[0]);
              const TensorData& b = nchw(op.inputs[1]);
              const TensorData* c = op.inputs.size() > 2 ? &nchw(op.inputs[2]) : nullptr;
              y = allocate(graph_, out_name);
              const bool trans_b = op.get_int("transB") != 0;
              if (a.dtype() == DType::f32) {
                gemm_f32(a, b, c, trans_b, op.get_float("alpha"), op.get_float("beta"), y);
                break;
              }
              const std::int64_t M = a.shape()[0], K = a.shape()[1];
              const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
              const bool fast = a.dtype() == DType::i8 && b.dtype() == DType::i8 &&
                                graph_.tensor(op.inputs[1]).constant && K < (1 << 17) &&
                                (!c || (c->dtype() == DType::i32 && c->size() == N));
              if (fast) {
                auto& b_kn = impl_->gemm_weights_kn[id];
                if (b_kn.empty()) {  // once: b as [K, N] rows (oneDNN's brgemm takes this layout)
                  b_kn.resize(static_cast<std::size_t>(N * K));
                  const std::int8_t* bv = b.data<std::int8_t>();
                  for (std::int64_t k = 0; k < K; ++k)
                    for (std::int64_t n = 0; n < N; ++n)
                      b_kn[static_cast<std::size_t>(k * N + n)] =
                          trans_b ? bv[n * K + k] : bv[k * N + n];
                }
                gemm_s8_exact(a.data<std::int8_t>(), b_kn.data(), false, y.data<std::int32_t>(), 1,
                              M, K, N);
                if (!c || nhwc::add_bias(y.data<std::int32_t>(), c->data<std::int32_t>(), M, N))
                  break;
              }
              // The reference also locates the first overflow for the message.
              if (auto ok = gemm_int_reference(a, b, c, trans_b, y); !ok)
                return fail(where(op) + ": " + ok.reason());
              break;
            }
            case OpKind::Requantize: {
              const auto& acc_t = graph_.tensor(op.inputs[0]);
              // Channels on axis 1 (Conv, Gemm) or, for a MatMul by a constant, the last axis.
              const auto axis = static_cast<std::size_t>(
                  acc_t.quant && acc_t.quant->per_channel() ? acc_t.quant->axis : 1);
              const bool spatial = acc_t.shape.size() == 4 && axis == 1;
              const TensorData& acc = spatial ? channels_last(op.inputs[0]) : nchw(op.inputs[0]);
              y = allocate(graph_, out_name);
              y_nhwc = spatial;
              const auto raw = quant::requantize_params(acc_t, graph_.tensor(out_name));
              const auto& out_q = *graph_.tensor(out_name).quant;
              const std::int32_t zp = out_q.zero_points.empty() ? 0 : out_q.zero_points[0];
              const auto& s = acc.shape();
              const bool last_axis = axis + 1 == s.size();  // [.., C]: a MatMul by weights
              if (!(spatial || last_axis || raw.size() == 1)) {
                // Per-channel on `axis` of another rank: the plain loop.
                std::int64_t inner = 1;
                for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
                const std::int64_t C = s[axis];
                const std::int32_t* a = acc.data<std::int32_t>();
                with_int(y, [&](auto* out) {
                  for (std::int64_t i = 0; i < acc.size(); ++i) {
                    auto p = raw[static_cast<std::size_t>((i / inner) % C)];
                    p.zero_point = zp;
                    out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(
                        intops::requantize(a[i], p));
                  }
                });
                break;
              }
              // Channels innermost: NHWC, [.., C], or one per-tensor lane for any shape.
              const std::int64_t channels = raw.size() == 1 ? 1 : spatial ? s[1] : s[axis];
              auto& params = impl_->requants[id];
              if (params.multiplier.empty()) {
                params = nhwc::channel_requant(raw, channels);
                params.zero_point = zp;
              }
              with_int(y, [&](auto* out) {
                using T = std::remove_pointer_t<decltype(out)>;
                const std::int32_t* a = acc.data<std::int32_t>();
                if constexpr (std::is_same_v<T, std::int32_t>) {  // no vector kernel for int32 out
                  for (std::int64_t i = 0; i < acc.size(); ++i) {
                    auto p = raw[raw.size() == 1 ? 0 : static_cast<std::size_t>(i % channels)];
                    p.zero_point = zp;
                    out[i] = intops::requantize(a[i], p);
                  }
                } else {
                  parallel_slices(
                      acc.size() / channels, 1024, [&](std::int64_t p0, std::int64_t p1) {
                        return nhwc::requantize(a + p0 * channels, nullptr, out + p0 * channels,
                                                p1 - p0, channels, params);
                      });
                }
              });
              break;
            }
            case OpKind::Quantize: {
              const auto [xp, x_nhwc] = as_is(op.inputs[0]);
              const TensorData& x = *xp;
              y = allocate(graph_, out_name);
              y_nhwc = x_nhwc;
              const auto& q = *graph_.tensor(out_name).quant;
              const int bits = quant::dtype_bits(y.dtype());
              const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
              const std::int32_t lo = y.dtype() == DType::u8 ? 0 : intops::qmin(bits);
              const std::int32_t hi = y.dtype() == DType::u8 ? 255 : intops::qmax(bits);
              const float* xv = x.data<float>();
              if (y.dtype() == DType::i8) {
                nhwc::quantize(xv, y.data<std::int8_t>(), x.size(), double{q.scales[0]}, zp, lo,
                               hi);
                break;
              }
              with_int(y, [&](auto* out) {
                for (std::int64_t i = 0; i < x.size(); ++i) {
                  const double r =
                      std::isnan(xv[i]) ? 0.0 : std::round(double{xv[i]} / q.scales[0]);
                  const double v =
                      std::clamp(r + zp, static_cast<double>(lo), static_cast<double>(hi));
                  out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(v);
                }
              });
              break;
            }
            case OpKind::Dequantize: {
              const auto [xp, x_nhwc] = as_is(op.inputs[0]);
              const TensorData& x = *xp;
              y = allocate(graph_, out_name);
              y_nhwc = x_nhwc;
              const auto& q = *graph_.tensor(op.inputs[0]).quant;
              const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
              float* out = y.data<float>();
              for (std::int64_t i = 0; i < x.size(); ++i)
                out[i] = static_cast<float>((x.at(i) - zp) * static_cast<double>(q.scales[0]));
              break;
            }
            case OpKind::MaxPool: {
              const TensorData& x = channels_last(op.inputs[0]);
              y = allocate(graph_, out_name);
              y_nhwc = true;
              const auto g = ir::window_geometry(op);
              const auto &xs = x.shape(), &ys = y.shape();
              with_any(y, [&](auto* out) {
                using T = std::remove_pointer_t<decltype(out)>;
                nhwc::max_pool<T>(x.data<T>(), out, xs[0], xs[1], xs[2], xs[3], ys[2], ys[3], g);
              });
              break;
            }
            case OpKind::AveragePool:
            case OpKind::GlobalAveragePool: {
              const TensorData& x = channels_last(op.inputs[0]);
              y = allocate(graph_, out_name);
              y_nhwc = true;
              ir::WindowGeometry g;
              bool include_pad = true;
              if (op.kind == OpKind::AveragePool) {
                g = ir::window_geometry(op);
                include_pad = op.get_int("count_include_pad") != 0;
              } else {
                g.kernel_h = x.shape()[2];
                g.kernel_w = x.shape()[3];
              }
              const auto &xs = x.shape(), &ys = y.shape();
              const std::int64_t C = xs[1];
              std::vector<std::int64_t> counts(static_cast<std::size_t>(ys[0] * ys[2] * ys[3]));
              if (x.dtype() == DType::f32) {
                std::vector<double> sums(static_cast<std::size_t>(y.size()));
                nhwc::window_sums(x.data<float>(), sums.data(), counts.data(), xs[0], C, xs[2],
                                  xs[3], ys[2], ys[3], g, include_pad);
                float* out = y.data<float>();
                for (std::int64_t i = 0; i < y.size(); ++i)
                  out[i] = static_cast<float>(sums[static_cast<std::size_t>(i)] /
                                              static_cast<double>(counts[i / C]));
              } else {
                const std::int64_t n = g.kernel_h * g.kernel_w;
                auto p =
                    quant::average_params(graph_.tensor(op.inputs[0]), graph_.tensor(out_name), n);
                std::vector<std::int64_t> sums(static_cast<std::size_t>(y.size()));
                integer_window_sums(x, sums.data(), counts.data(), ys[2], ys[3], g, include_pad);
                with_int(y, [&](auto* out) {
                  using T = std::remove_pointer_t<decltype(out)>;
                  for (std::int64_t i = 0; i < y.size(); ++i)
                    out[i] = static_cast<T>(intops::requantize(
                        static_cast<std::int32_t>(sums[static_cast<std::size_t>(i)]), p));
                });
              }
              break;
            }
            case OpKind::Relu:
            case OpKind::Clip: {
              const auto [xp, x_nhwc] = as_is(op.inputs[0]);
              const TensorData& x = *xp;
              y = allocate(graph_, out_name);
              y_nhwc = x_nhwc;
              double lo = 0.0, hi = std::numeric_limits<double>::infinity();
              if (op.kind == OpKind::Clip) {
                lo = op.get_float("min");
                hi = op.get_float("max");
              }
              if (x.dtype() == DType::f32) {
                const float* xv = x.data<float>();
                float* out = y.data<float>();
                const float flo =
                    static_cast<float>(std::max(lo, double{std::numeric_limits<float>::lowest()}));
                const float fhi =
                    static_cast<float>(std::min(hi, double{std::numeric_limits<float>::max()}));
                for (std::int64_t i = 0; i < x.size(); ++i)
                  out[i] = std::min(std::max(xv[i], flo), fhi);
              } else {
                const auto [ilo, ihi] = activation_bounds(graph_, op);
                if (x.dtype() == DType::i8) {
                  nhwc::clamp(x.data<std::int8_t>(), y.data<std::int8_t>(), x.size(), ilo, ihi);
                  break;
                }
                if (x.dtype() == DType::i16) {
                  nhwc::clamp(x.data<std::int16_t>(), y.data<std::int16_t>(), x.size(), ilo, ihi);
                  break;
                }
                with_int(y, [&](auto* out) {
                  using T = std::remove_pointer_t<decltype(out)>;
                  const T* xv = x.data<T>();
                  for (std::int64_t i = 0; i < x.size(); ++i)
                    out[i] = static_cast<T>(std::clamp<std::int32_t>(xv[i], ilo, ihi));
                });
              }
              break;
            }
            case OpKind::Add: {
              const auto [ap, a_nhwc] = as_is(op.inputs[0]);
              const TensorData& a = *ap;
              const TensorData& b = in_layout(op.inputs[1], a_nhwc);
              y = allocate(graph_, out_name);
              y_nhwc = a_nhwc;
              if (a.size() != b.size()) return fail(where(op) + ": operands differ in size");
              if (a.dtype() == DType::f32) {
                const float *av = a.data<float>(), *bv = b.data<float>();
                float* out = y.data<float>();
                for (std::int64_t i = 0; i < a.size(); ++i) out[i] = av[i] + bv[i];
                break;
              }
              const auto p = fusion ? fusion->add
                                    : quant::add_params(graph_.tensor(op.inputs[0]),
                                                        graph_.tensor(op.inputs[1]),
                                                        graph_.tensor(op.outputs[0]));
              const bool same = a.dtype() == y.dtype() && b.dtype() == y.dtype();
              if (same && y.dtype() == DType::i8) {
                parallel_slices(a.size(), 1 << 16, [&](std::int64_t i0, std::int64_t i1) {
                  nhwc::add_requantize(a.data<std::int8_t>() + i0, b.data<std::int8_t>() + i0,
                                       y.data<std::int8_t>() + i0, i1 - i0, p);
                  return true;
                });
              } else if (same && y.dtype() == DType::i16) {
                nhwc::add_requantize(a.data<std::int16_t>(), b.data<std::int16_t>(),
                                     y.data<std::int16_t>(), a.size(), p);
              } else {
                const auto av = a.to_i32(), bv = b.to_i32();
                with_int(y, [&](auto* out) {
                  using T = std::remove_pointer_t<decltype(out)>;
                  for (std::int64_t i = 0; i < a.size(); ++i)
                    out[i] = static_cast<T>(intops::add_requantize(
                        av[static_cast<std::size_t>(i)], bv[static_cast<std::size_t>(i)], p));
                });
              }
              break;
            }
            default:
              return fail(where(op) + ": not a built-in op kind");
          }
      } catch (const dnnl::error& e) {
        return fail(where(op) + ": oneDNN: " + e.what());
      }
      if (options.seconds_by_op) {
        const std::string label = fusion ? fusion->label : std::string(ir::to_string(op.kind));
        (*options.seconds_by_op)[label] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (options.observer) {
        const TensorData observed = y_nhwc ? relayout(y, false) : TensorData();
        if (auto ok = options.observer(out_name, y_nhwc ? observed : y); !ok)
          return fail(ok.reason());
      }
      if (options.layout_observer)
        if (auto ok = options.layout_observer(out_name, y, y_nhwc && layouts_differ(y.shape()));
            !ok)
          return fail(ok.reason());
      values[out_name] = Value{std::move(y), y_nhwc};
      // Free what no later op reads.
      if (!options.keep_intermediates)
        for (const auto& in : op.inputs) {
          const auto it = impl_->last_use.find(in);
          if (it != impl_->last_use.end() && it->second == pos && !is_output(in)) values.erase(in);
        }
    }
  std::vector<std::map<std::string, TensorData>> results(sample_inputs.size());
  for (std::size_t sample = 0; sample < sample_inputs.size(); ++sample) {
    auto& result = results[sample];
    for (auto& [name, value] : sample_values[sample])
      if (sample_options[sample].keep_intermediates || is_output(name))
        result[name] = value.nhwc ? relayout(value.data, false) : std::move(value.data);
    for (const auto& name : outputs)
      if (!result.count(name)) return fail("graph output %" + name + " was not computed");
  }
  return results;
}

TensorData default_input(const ir::Shape& shape, std::uint64_t seed) {
  const auto values = seeded_normal_values(ir::element_count(shape), seed);
  return TensorData::from_f32(shape, values);
}

}  // namespace tessel::cpu
