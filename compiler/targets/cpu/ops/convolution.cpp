// The convolution kinds' channels-last kernels: Conv (oneDNN for f32 and exact s8/u8 x s8 -> s32,
// the exact im2col loop for 16-bit data and for 8-bit data without VNNI, the int64 reference for
// the rest) and Gemm (oneDNN's exact s8 matmul for int8 x constant int8 weights).
#include <cstdlib>
#include <cstring>
#include <limits>

#include "compiler/ir/analysis.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/int_gemm.hpp"
#include "compiler/targets/cpu/kernels.hpp"
#include "compiler/targets/cpu/ops/channels_last.hpp"
#include "support/int_ops.hpp"

namespace tessel::cpu {

namespace {

using ir::DType;
using ir::OpKind;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

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
  ops::visit_elements(x, [&](const auto* p) {
    if constexpr (std::is_integral_v<std::remove_cv_t<std::remove_pointer_t<decltype(p)>>>)
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

}  // namespace

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

KernelCache::KernelCache() = default;
KernelCache::~KernelCache() = default;

namespace {

TensorData shifted_input(const TensorData& x, int u) {
  TensorData out = x;
  with_int(out, [&](auto* v) {
    for (std::int64_t i = 0; i < out.size(); ++i)
      v[i] = static_cast<std::remove_pointer_t<decltype(v)>>(intops::round_half_away(v[i], u));
  });
  return out;
}

Status check_input_shift(const ir::Graph& graph, const ir::Op& op, int u) {
  const ir::DType x = graph.tensor(op.inputs[0]).dtype;
  const int bits = x == DType::i16 ? 16 : x == DType::i8 ? 8 : 0;
  if (u == 0 || (bits > 0 && u > 0 && u <= bits - 2)) return {};
  return fail("%" + op.name + " (" + std::string(ir::to_string(op.kind)) + "): input_shift " +
              std::to_string(u) + " on a " + std::string(ir::to_string(x)) +
              " input (an integer input of b bits takes 0 .. b - 2)");
}

/// The failure of a convolution whose accumulator left int32: the reference names the first
/// element (or says why it cannot run).
Failure accumulator_overflow(ChannelsLastArgs& a, const TensorData& w, const TensorData* b,
                             const ir::WindowGeometry& g, const ir::Shape& ys, int u = 0) {
  TensorData check(DType::i32, ys);
  const TensorData& x = a.values.nchw(a.op.inputs[0]);
  auto ok = conv_int_reference(u > 0 ? shifted_input(x, u) : x, w, b, g, check);
  return fail(a.where() + ": " + (ok ? "int32 accumulator overflow" : ok.reason()));
}

/// The failure naming the first element (in NCHW order, as the scalar contract reports it) whose
/// NHWC accumulator `acc` + bias leaves int32.
Failure bias_overflow(const ChannelsLastArgs& a, const std::int32_t* acc, const std::int32_t* bias,
                      const ir::Shape& ys) {
  const std::int64_t channels = ys[1], inner = ys[2] * ys[3];
  for (std::int64_t i = 0; i < ir::element_count(ys); ++i) {
    const std::int64_t n = i / (channels * inner), c = (i / inner) % channels;
    const std::int64_t v = std::int64_t{acc[(n * inner + i % inner) * channels + c]} + bias[c];
    if (v > std::numeric_limits<std::int32_t>::max() ||
        v < std::numeric_limits<std::int32_t>::min())
      return fail(a.where() + ": int32 accumulator overflow adding the bias at output element " +
                  std::to_string(i));
  }
  return fail(a.where() + ": int32 accumulator overflow adding the bias");
}

/// f32, and s8/u8 x s8 -> s32 (`onednn_int`): oneDNN on NHWC (or, for 8-bit data without VNNI,
/// the exact im2col loop), then the bias, or a fused requantization straight from the
/// accumulators.
Result<bool> conv_onednn(ChannelsLastArgs& a, const TensorData& w, const TensorData* b,
                         bool onednn_int, bool constant_weights) {
  const auto& y_t = a.graph.tensor(a.op.outputs[0]);
  const auto g = ir::window_geometry(a.op);
  const TensorData& x = a.values.channels_last(a.op.inputs[0]);
  // Without VNNI oneDNN's 8-bit convolution is not exact (onednn_int8_conv_exact): the
  // accumulators then come from the exact im2col loop, the rest is the same.
  const bool im2col = onednn_int && !onednn_int8_conv_exact();
  auto& conv = a.cache.convs[a.id];
  const std::vector<std::int16_t>* w16 = nullptr;
  if (im2col) {
    auto& cached = a.cache.im2col_weights[a.id];
    if (cached.empty() || !constant_weights) cached = im2col_weights_of(w);
    w16 = &cached;
  } else if (!conv || !constant_weights) {
    if (x.dtype() == DType::f32)
      conv = std::make_unique<DnnlConv>(a.cache.engine, x.shape(), y_t.shape, g, w, b, dt::f32,
                                        dt::f32, dt::f32);
    else  // exact: s8/u8 x s8 -> s32 with no scales; the int32 bias is added below
      conv = std::make_unique<DnnlConv>(a.cache.engine, x.shape(), y_t.shape, g, w, nullptr,
                                        x.dtype() == DType::i8 ? dt::s8 : dt::u8, dt::s8, dt::s32);
  }
  a.y_nhwc = true;
  const auto& ys = y_t.shape;
  const std::int64_t pixels = ys[0] * ys[2] * ys[3], channels = ys[1];
  const std::int32_t* bias = onednn_int && b ? b->data<std::int32_t>() : nullptr;
  // The accumulators without the bias into `out` (NHWC int32); false when one leaves int32
  // (only the im2col loop sees that: 8-bit products would need more than 2^17 terms).
  const auto accumulate = [&](std::int32_t* out) {
    if (!im2col) {
      conv->run(x.raw(), out);
      return true;
    }
    std::vector<std::int16_t> x16;
    const auto& xs = x.shape();
    return nhwc::conv_im2col_s16(as_int16(x, x16), w16->data(), nullptr, out, xs[0], xs[1], xs[2],
                                 xs[3], ys[1], ys[2], ys[3], g);
  };
  std::int32_t* acc = nullptr;
  if (a.fusion) {
    a.cache.accumulators.resize(static_cast<std::size_t>(ir::element_count(ys)));
    acc = a.cache.accumulators.data();
    if (!accumulate(acc)) return accumulator_overflow(a, w, nullptr, g, ys);
    a.y = a.allocate();
    bool in_range = true;
    with_int(a.y, [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      if constexpr (std::is_same_v<T, std::int32_t>) {
        throw std::logic_error("fused requantize to int32");
      } else {
        in_range = parallel_slices(pixels, 1024, [&](std::int64_t p0, std::int64_t p1) {
          return nhwc::requantize(acc + p0 * channels, bias, out + p0 * channels, p1 - p0, channels,
                                  a.fusion->requant);
        });
      }
    });
    if (in_range) return true;
  } else {
    a.y = a.allocate();
    if (!accumulate(a.y.data<std::int32_t>())) return accumulator_overflow(a, w, nullptr, g, ys);
    if (!bias || nhwc::add_bias(a.y.data<std::int32_t>(), bias, pixels, channels)) return true;
    acc = a.y.data<std::int32_t>();
  }
  return bias_overflow(a, acc, bias, ys);
}

/// 16-bit data, or any input shift: im2col + int64-accumulated dot products (oneDNN has no s16
/// conv), on the input rounded right by the op's input_shift u.
Result<bool> conv_im2col(ChannelsLastArgs& a, const TensorData& w, const TensorData* b,
                         bool constant_weights, int u) {
  const auto& y_t = a.graph.tensor(a.op.outputs[0]);
  const auto g = ir::window_geometry(a.op);
  TensorData shifted;
  if (u > 0) shifted = shifted_input(a.values.channels_last(a.op.inputs[0]), u);
  const TensorData& x = u > 0 ? shifted : a.values.channels_last(a.op.inputs[0]);
  const auto &xs = x.shape(), &ys = y_t.shape;
  std::vector<std::int16_t> x16;
  const std::int16_t* xp = as_int16(x, x16);
  auto& w16 = a.cache.im2col_weights[a.id];
  if (w16.empty() || !constant_weights) w16 = im2col_weights_of(w);
  a.y = a.allocate();
  a.y_nhwc = true;
  if (!nhwc::conv_im2col_s16(xp, w16.data(), b ? b->data<std::int32_t>() : nullptr,
                             a.y.data<std::int32_t>(), xs[0], xs[1], xs[2], xs[3], ys[1], ys[2],
                             ys[3], g))
    return accumulator_overflow(a, w, b, g, ys, u);  // out of int32 somewhere
  return true;
}

Result<bool> conv(ChannelsLastArgs& a) {
  const ir::Op& op = a.op;
  const TensorData& w = a.values.nchw(op.inputs[1]);
  const TensorData* b = op.inputs.size() > 2 ? &a.values.nchw(op.inputs[2]) : nullptr;
  const auto& x_t = a.graph.tensor(op.inputs[0]);
  const auto& y_t = a.graph.tensor(op.outputs[0]);
  // Weights that are not constants (ONNX node tests feed them as inputs) cannot be reordered
  // once: rebuild the primitive for every run.
  const bool constant_weights = a.graph.tensor(op.inputs[1]).constant;
  const int u = static_cast<int>(op.get_int("input_shift"));
  if (auto ok = check_input_shift(a.graph, op, u); !ok) return fail(ok.reason());
  const bool onednn_int = (x_t.dtype == DType::i8 || x_t.dtype == DType::u8) &&
                          w.dtype() == DType::i8 && y_t.dtype == DType::i32 && u == 0;
  if (x_t.dtype == DType::f32 || onednn_int)
    return conv_onednn(a, w, b, onednn_int, constant_weights);
  if (y_t.dtype == DType::i32 && x_t.dtype != DType::i32 &&
      (w.dtype() == DType::i8 || w.dtype() == DType::i16) && (!b || b->dtype() == DType::i32))
    return conv_im2col(a, w, b, constant_weights, u);
  if (y_t.dtype == DType::i32) {
    a.y = a.allocate();
    const TensorData& x = a.values.nchw(op.inputs[0]);
    if (auto ok =
            conv_int_reference(u > 0 ? shifted_input(x, u) : x, w, b, ir::window_geometry(op), a.y);
        !ok)
      return fail(a.where() + ": " + ok.reason());
    return true;
  }
  return fail(a.where() + ": unsupported dtypes " + std::string(ir::to_string(x_t.dtype)) + " x " +
              std::string(ir::to_string(w.dtype())) + " -> " +
              std::string(ir::to_string(y_t.dtype)));
}

Result<bool> gemm(ChannelsLastArgs& args) {
  const ir::Op& op = args.op;
  const int u = static_cast<int>(op.get_int("input_shift"));
  if (auto ok = check_input_shift(args.graph, op, u); !ok) return fail(ok.reason());
  TensorData shifted;
  if (u > 0) shifted = shifted_input(args.values.nchw(op.inputs[0]), u);
  const TensorData& a = u > 0 ? shifted : args.values.nchw(op.inputs[0]);
  const TensorData& b = args.values.nchw(op.inputs[1]);
  const TensorData* c = op.inputs.size() > 2 ? &args.values.nchw(op.inputs[2]) : nullptr;
  args.y = args.allocate();
  TensorData& y = args.y;
  const bool trans_b = op.get_int("transB") != 0;
  if (a.dtype() == DType::f32) {
    gemm_f32(a, b, c, trans_b, op.get_float("alpha"), op.get_float("beta"), y);
    return true;
  }
  const std::int64_t M = a.shape()[0], K = a.shape()[1];
  const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const bool fast = a.dtype() == DType::i8 && b.dtype() == DType::i8 &&
                    args.graph.tensor(op.inputs[1]).constant && K < (1 << 17) &&
                    (!c || (c->dtype() == DType::i32 && c->size() == N));
  if (fast) {
    auto& b_kn = args.cache.gemm_weights_kn[args.id];
    if (b_kn.empty()) {  // once: b as [K, N] rows (oneDNN's brgemm takes this layout)
      b_kn.resize(static_cast<std::size_t>(N * K));
      const std::int8_t* bv = b.data<std::int8_t>();
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t n = 0; n < N; ++n)
          b_kn[static_cast<std::size_t>(k * N + n)] = trans_b ? bv[n * K + k] : bv[k * N + n];
    }
    gemm_s8_exact(a.data<std::int8_t>(), b_kn.data(), false, y.data<std::int32_t>(), 1, M, K, N);
    if (!c || nhwc::add_bias(y.data<std::int32_t>(), c->data<std::int32_t>(), M, N)) return true;
  }
  // The reference also locates the first overflow for the message.
  if (auto ok = gemm_int_reference(a, b, c, trans_b, y); !ok)
    return fail(args.where() + ": " + ok.reason());
  return true;
}

}  // namespace

std::vector<KernelEntry> convolution_kernels() {
  return {{OpKind::Conv, nullptr, conv}, {OpKind::Gemm, nullptr, gemm}};
}

}  // namespace tessel::cpu
