// The CPU executor: dispatch by op kind and dtype; oneDNN for convolutions, C++ for the rest.
#include "compiler/targets/cpu/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "compiler/ir/analysis.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/kernels.hpp"
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

/// A oneDNN convolution with its primitive, reordered weights and layout reorders.
class DnnlConv {
 public:
  DnnlConv(dnnl::engine& engine, const ir::Shape& x, const ir::Shape& y,
           const ir::WindowGeometry& g, const TensorData& w, const TensorData* bias, dt src_type,
           dt wei_type, dt dst_type)
      : engine_(engine) {
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
    const dnnl::memory::desc src_md(src_dims, src_type, tag::any);
    const dnnl::memory::desc wei_md(wei_dims, wei_type, tag::any);
    const dnnl::memory::desc dst_md(dst_dims, dst_type, tag::any);
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
    user_src_md_ = dnnl::memory::desc(src_dims, src_type, tag::nchw);
    user_dst_md_ = dnnl::memory::desc(dst_dims, dst_type, tag::nchw);
    dnnl::stream stream(engine_);
    // Weights: reorder once from the user's OIHW into the primitive's layout.
    dnnl::memory user_w({wei_dims, wei_type, wei_tag}, engine_, const_cast<void*>(w.raw()));
    weights_ = dnnl::memory(pd_.weights_desc(), engine_);
    dnnl::reorder(user_w, weights_).execute(stream, user_w, weights_);
    if (bias) {
      bias_ = dnnl::memory({{ws[0]}, dt::f32, tag::a}, engine_);
      std::memcpy(bias_.get_data_handle(), bias->raw(), bias->bytes());
    }
    stream.wait();
    if (pd_.src_desc() != user_src_md_) src_ = dnnl::memory(pd_.src_desc(), engine_);
    if (pd_.dst_desc() != user_dst_md_) dst_ = dnnl::memory(pd_.dst_desc(), engine_);
  }

  void run(const void* x, void* y) {
    dnnl::stream stream(engine_);
    dnnl::memory user_src(user_src_md_, engine_, const_cast<void*>(x));
    dnnl::memory user_dst(user_dst_md_, engine_, y);
    dnnl::memory src = user_src, dst = user_dst;
    if (src_) {
      dnnl::reorder(user_src, src_).execute(stream, user_src, src_);
      src = src_;
    }
    if (dst_) dst = dst_;
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}};
    if (bias_) args[DNNL_ARG_BIAS] = bias_;
    conv_.execute(stream, args);
    if (dst_) dnnl::reorder(dst_, user_dst).execute(stream, dst_, user_dst);
    stream.wait();
  }

 private:
  dnnl::engine& engine_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::memory::desc user_src_md_, user_dst_md_;
  dnnl::memory weights_, bias_, src_, dst_;
};

std::int64_t channel_inner(const ir::Shape& shape) {
  std::int64_t inner = 1;
  for (std::size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  return inner;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Reference kernels (kernels.hpp)

Status conv_int_reference(const TensorData& x, const TensorData& w, const TensorData* bias,
                          const ir::WindowGeometry& g, TensorData& y, std::int32_t x_zero_point,
                          std::int32_t w_zero_point) {
  const auto xs = x.shape(), ws = w.shape(), ys = y.shape();
  const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const std::int64_t O = ws[0], KH = ws[2], KW = ws[3], OH = ys[2], OW = ys[3];
  const std::int64_t G = g.group, CG = C / G, OG = O / G;
  const auto xv = x.to_i32();
  const auto wv = w.to_i32();
  const std::vector<std::int32_t> bv = bias ? bias->to_i32() : std::vector<std::int32_t>();
  auto* out = y.data<std::int32_t>();
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o) {
      const std::int64_t grp = o / OG;
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          std::int64_t acc = bias ? bv[static_cast<std::size_t>(o)] : 0;
          for (std::int64_t c = 0; c < CG; ++c) {
            const std::int64_t ci = grp * CG + c;
            for (std::int64_t kh = 0; kh < KH; ++kh) {
              const std::int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              if (ih < 0 || ih >= H) continue;
              for (std::int64_t kw = 0; kw < KW; ++kw) {
                const std::int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
                if (iw < 0 || iw >= W) continue;
                const std::int64_t xval =
                    xv[static_cast<std::size_t>(((n * C + ci) * H + ih) * W + iw)] - x_zero_point;
                const std::int64_t wval =
                    wv[static_cast<std::size_t>(((o * CG + c) * KH + kh) * KW + kw)] - w_zero_point;
                acc += xval * wval;
              }
            }
          }
          const std::int64_t index = ((n * O + o) * OH + oh) * OW + ow;
          if (acc > std::numeric_limits<std::int32_t>::max() ||
              acc < std::numeric_limits<std::int32_t>::min())
            return fail("int32 accumulator overflow at output element " + std::to_string(index) +
                        " (value " + std::to_string(acc) + ")");
          out[index] = static_cast<std::int32_t>(acc);
        }
    }
  return {};
}

Status gemm_int_reference(const TensorData& a, const TensorData& b, const TensorData* bias,
                          bool trans_b, TensorData& y, std::int32_t a_zero_point,
                          std::int32_t b_zero_point) {
  const std::int64_t M = a.shape()[0], K = a.shape()[1];
  const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const auto av = a.to_i32();
  const auto bv = b.to_i32();
  const std::vector<std::int32_t> cv = bias ? bias->to_i32() : std::vector<std::int32_t>();
  auto* out = y.data<std::int32_t>();
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      std::int64_t acc = bias ? cv[static_cast<std::size_t>(n)] : 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t bval = trans_b ? bv[static_cast<std::size_t>(n * K + k)]
                                          : bv[static_cast<std::size_t>(k * N + n)];
        acc += (static_cast<std::int64_t>(av[static_cast<std::size_t>(m * K + k)]) - a_zero_point) *
               (bval - b_zero_point);
      }
      if (acc > std::numeric_limits<std::int32_t>::max() ||
          acc < std::numeric_limits<std::int32_t>::min())
        return fail("int32 accumulator overflow at output element " + std::to_string(m * N + n) +
                    " (value " + std::to_string(acc) + ")");
      out[m * N + n] = static_cast<std::int32_t>(acc);
    }
  return {};
}

void gemm_f32(const TensorData& a, const TensorData& b, const TensorData* c, bool trans_b,
              double alpha, double beta, TensorData& y) {
  const std::int64_t M = a.shape()[0], K = a.shape()[1];
  const std::int64_t N = trans_b ? b.shape()[0] : b.shape()[1];
  const float* av = a.data<float>();
  const float* bv = b.data<float>();
  float* out = y.data<float>();
  std::vector<float> row(static_cast<std::size_t>(N));
  for (std::int64_t m = 0; m < M; ++m) {
    if (trans_b) {
      for (std::int64_t n = 0; n < N; ++n) {
        float acc = 0.0f;
        const float* ap = av + m * K;
        const float* bp = bv + n * K;
        for (std::int64_t k = 0; k < K; ++k) acc += ap[k] * bp[k];
        row[static_cast<std::size_t>(n)] = acc;
      }
    } else {
      std::fill(row.begin(), row.end(), 0.0f);
      for (std::int64_t k = 0; k < K; ++k) {
        const float aval = av[m * K + k];
        const float* bp = bv + k * N;
        for (std::int64_t n = 0; n < N; ++n) row[static_cast<std::size_t>(n)] += aval * bp[n];
      }
    }
    for (std::int64_t n = 0; n < N; ++n) {
      double v = alpha * row[static_cast<std::size_t>(n)];
      if (c) {
        const std::int64_t cs = c->size();
        const std::int64_t ci = cs == M * N ? m * N + n : cs == 1 ? 0 : n;
        v += beta * c->data<float>()[ci];
      }
      out[m * N + n] = static_cast<float>(v);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// The executor

struct Executor::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::unordered_map<std::string, TensorData> constants;
  std::vector<ir::OpId> order;
  std::unordered_map<std::string, std::size_t> last_use;  // tensor -> position in `order`
  std::unordered_map<ir::OpId, std::unique_ptr<DnnlConv>> convs;
  std::unordered_map<ir::OpId, std::vector<intops::Requant>> requants;
};

Executor::Executor(const ir::Graph& graph) : graph_(graph), impl_(std::make_unique<Impl>()) {
  auto order = ir::topological_order(graph);
  if (!order) throw std::invalid_argument("Executor: " + order.reason());
  impl_->order = std::move(order.value());
  for (const auto& [name, tensor] : graph.tensors())
    if (tensor.constant && tensor.has_data())
      impl_->constants.emplace(name, TensorData::from_constant(tensor));
  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos)
    for (const auto& in : graph.op(impl_->order[pos]).inputs) impl_->last_use[in] = pos;
}

Executor::~Executor() = default;

namespace {

// Output dtype/shape come from the graph (shapes inferred, dtypes set by the quantizer).
TensorData allocate(const ir::Graph& graph, const std::string& name) {
  const auto& t = graph.tensor(name);
  return TensorData(t.dtype, t.shape);
}

template <class T>
void max_pool(const T* x, T* y, const ir::Shape& xs, const ir::Shape& ys,
              const ir::WindowGeometry& g) {
  const std::int64_t NC = xs[0] * xs[1], H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
  for (std::int64_t nc = 0; nc < NC; ++nc)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        T best = std::numeric_limits<T>::lowest();
        for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const std::int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
          if (ih < 0 || ih >= H) continue;
          for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const std::int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
            if (iw < 0 || iw >= W) continue;
            best = std::max(best, x[(nc * H + ih) * W + iw]);
          }
        }
        y[(nc * OH + oh) * OW + ow] = best;
      }
}

// Sums each window (padding contributes zeros); `divisor` gets ONNX/PyTorch's count.
template <class T, class Emit>
void window_sums(const T* x, const ir::Shape& xs, const ir::Shape& ys, const ir::WindowGeometry& g,
                 bool count_include_pad, Emit&& emit) {
  const std::int64_t NC = xs[0] * xs[1], H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
  for (std::int64_t nc = 0; nc < NC; ++nc)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
        const std::int64_t h1 = std::min(h0 + g.kernel_h, H + g.pad_bottom);
        const std::int64_t w1 = std::min(w0 + g.kernel_w, W + g.pad_right);
        const std::int64_t padded_count = (h1 - h0) * (w1 - w0);
        const std::int64_t hs = std::max<std::int64_t>(h0, 0), ws = std::max<std::int64_t>(w0, 0);
        const std::int64_t he = std::min(h1, H), we = std::min(w1, W);
        double sum_f = 0.0;
        std::int64_t sum_i = 0;
        for (std::int64_t ih = hs; ih < he; ++ih)
          for (std::int64_t iw = ws; iw < we; ++iw) {
            if constexpr (std::is_floating_point_v<T>)
              sum_f += x[(nc * H + ih) * W + iw];
            else
              sum_i += x[(nc * H + ih) * W + iw];
          }
        const std::int64_t count = count_include_pad ? padded_count : (he - hs) * (we - ws);
        emit((nc * OH + oh) * OW + ow, sum_f, sum_i, count);
      }
}

}  // namespace

Result<std::map<std::string, TensorData>> Executor::run(
    const std::map<std::string, TensorData>& inputs, const RunOptions& options) {
  std::unordered_map<std::string, TensorData> values;
  const auto get = [&](const std::string& name) -> const TensorData& {
    if (auto it = values.find(name); it != values.end()) return it->second;
    return impl_->constants.at(name);
  };
  std::map<std::string, TensorData> result;
  const auto& outputs = graph_.outputs();
  const auto is_output = [&](const std::string& n) {
    return std::find(outputs.begin(), outputs.end(), n) != outputs.end();
  };

  for (std::size_t pos = 0; pos < impl_->order.size(); ++pos) {
    const ir::OpId id = impl_->order[pos];
    const ir::Op& op = graph_.op(id);
    const std::string& out_name = op.outputs.at(0);
    TensorData y;
    try {
      switch (op.kind) {
        case OpKind::Input: {
          const auto it = inputs.find(op.outputs[0]);
          if (it == inputs.end()) return fail("no value given for graph input %" + out_name);
          const auto& t = graph_.tensor(out_name);
          if (it->second.shape() != t.shape || it->second.dtype() != t.dtype)
            return fail("graph input %" + out_name + " expects " + ir::type_string(t) + ", got " +
                        std::string(ir::to_string(it->second.dtype())) +
                        ir::shape_string(it->second.shape()));
          y = it->second;
          break;
        }
        case OpKind::Conv: {
          const TensorData& x = get(op.inputs[0]);
          const TensorData& w = get(op.inputs[1]);
          const TensorData* b = op.inputs.size() > 2 ? &get(op.inputs[2]) : nullptr;
          y = allocate(graph_, out_name);
          const auto g = ir::window_geometry(op);
          // Weights that are not constants (ONNX node tests feed them as inputs) cannot be
          // reordered once: rebuild the primitive for every run.
          const bool constant_weights = graph_.tensor(op.inputs[1]).constant;
          if (x.dtype() == DType::f32) {
            auto& conv = impl_->convs[id];
            if (!conv || !constant_weights)
              conv = std::make_unique<DnnlConv>(impl_->engine, x.shape(), y.shape(), g, w, b,
                                                dt::f32, dt::f32, dt::f32);
            conv->run(x.raw(), y.raw());
          } else if ((x.dtype() == DType::i8 || x.dtype() == DType::u8) && w.dtype() == DType::i8 &&
                     y.dtype() == DType::i32) {
            // Exact: s8/u8 x s8 -> s32 with no scales; the int32 bias is added below.
            auto& conv = impl_->convs[id];
            if (!conv || !constant_weights)
              conv = std::make_unique<DnnlConv>(impl_->engine, x.shape(), y.shape(), g, w, nullptr,
                                                x.dtype() == DType::i8 ? dt::s8 : dt::u8, dt::s8,
                                                dt::s32);
            conv->run(x.raw(), y.raw());
            if (b) {
              const std::int32_t* bias = b->data<std::int32_t>();
              std::int32_t* acc = y.data<std::int32_t>();
              const std::int64_t C = y.shape()[1], inner = channel_inner(y.shape());
              for (std::int64_t i = 0; i < y.size(); ++i) {
                const std::int64_t v = std::int64_t{acc[i]} + bias[(i / inner) % C];
                if (v > std::numeric_limits<std::int32_t>::max() ||
                    v < std::numeric_limits<std::int32_t>::min())
                  return fail(where(op) +
                              ": int32 accumulator overflow adding the bias at "
                              "output element " +
                              std::to_string(i));
                acc[i] = static_cast<std::int32_t>(v);
              }
            }
          } else if (y.dtype() == DType::i32) {
            if (auto ok = conv_int_reference(x, w, b, g, y); !ok)
              return fail(where(op) + ": " + ok.reason());
          } else {
            return fail(where(op) + ": unsupported dtypes " +
                        std::string(ir::to_string(x.dtype())) + " x " +
                        std::string(ir::to_string(w.dtype())) + " -> " +
                        std::string(ir::to_string(y.dtype())));
          }
          break;
        }
        case OpKind::Gemm: {
          const TensorData& a = get(op.inputs[0]);
          const TensorData& b = get(op.inputs[1]);
          const TensorData* c = op.inputs.size() > 2 ? &get(op.inputs[2]) : nullptr;
          y = allocate(graph_, out_name);
          const bool trans_b = op.get_int("transB") != 0;
          if (a.dtype() == DType::f32) {
            gemm_f32(a, b, c, trans_b, op.get_float("alpha"), op.get_float("beta"), y);
          } else {
            if (auto ok = gemm_int_reference(a, b, c, trans_b, y); !ok)
              return fail(where(op) + ": " + ok.reason());
          }
          break;
        }
        case OpKind::Requantize: {
          const TensorData& acc = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          auto& params = impl_->requants[id];
          if (params.empty())
            params = quant::requantize_params(graph_.tensor(op.inputs[0]), graph_.tensor(out_name));
          const auto& out_t = graph_.tensor(out_name);
          const std::int32_t zp =
              out_t.quant->zero_points.empty() ? 0 : out_t.quant->zero_points[0];
          const std::int64_t C = params.size() == 1 ? 1 : acc.shape()[1];
          const std::int64_t inner = params.size() == 1 ? acc.size() : channel_inner(acc.shape());
          const std::int32_t* a = acc.data<std::int32_t>();
          with_int(y, [&](auto* out) {
            for (std::int64_t i = 0; i < acc.size(); ++i) {
              auto p = params[static_cast<std::size_t>((i / inner) % C)];
              p.zero_point = zp;
              out[i] =
                  static_cast<std::remove_pointer_t<decltype(out)>>(intops::requantize(a[i], p));
            }
          });
          break;
        }
        case OpKind::Quantize: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          const auto& q = *graph_.tensor(out_name).quant;
          const int bits = quant::dtype_bits(y.dtype());
          const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
          const std::int32_t lo = y.dtype() == DType::u8 ? 0 : intops::qmin(bits);
          const std::int32_t hi = y.dtype() == DType::u8 ? 255 : intops::qmax(bits);
          const float* xv = x.data<float>();
          with_int(y, [&](auto* out) {
            for (std::int64_t i = 0; i < x.size(); ++i) {
              const double r = std::isnan(xv[i]) ? 0.0 : std::round(double{xv[i]} / q.scales[0]);
              const double v = std::clamp(r + zp, static_cast<double>(lo), static_cast<double>(hi));
              out[i] = static_cast<std::remove_pointer_t<decltype(out)>>(v);
            }
          });
          break;
        }
        case OpKind::Dequantize: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          const auto& q = *graph_.tensor(op.inputs[0]).quant;
          const std::int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[0];
          float* out = y.data<float>();
          for (std::int64_t i = 0; i < x.size(); ++i)
            out[i] = static_cast<float>((x.at(i) - zp) * static_cast<double>(q.scales[0]));
          break;
        }
        case OpKind::MaxPool: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          const auto g = ir::window_geometry(op);
          with_any(y, [&](auto* out) {
            using T = std::remove_pointer_t<decltype(out)>;
            max_pool<T>(x.data<T>(), out, x.shape(), y.shape(), g);
          });
          break;
        }
        case OpKind::AveragePool:
        case OpKind::GlobalAveragePool: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          ir::WindowGeometry g;
          bool include_pad = true;
          if (op.kind == OpKind::AveragePool) {
            g = ir::window_geometry(op);
            include_pad = op.get_int("count_include_pad") != 0;
          } else {
            g.kernel_h = x.shape()[2];
            g.kernel_w = x.shape()[3];
          }
          if (x.dtype() == DType::f32) {
            float* out = y.data<float>();
            window_sums(x.data<float>(), x.shape(), y.shape(), g, include_pad,
                        [&](std::int64_t i, double s, std::int64_t, std::int64_t count) {
                          out[i] = static_cast<float>(s / static_cast<double>(count));
                        });
          } else {
            const std::int64_t n = g.kernel_h * g.kernel_w;
            auto p = quant::average_params(graph_.tensor(op.inputs[0]), graph_.tensor(out_name), n);
            with_int(y, [&](auto* out) {
              using T = std::remove_pointer_t<decltype(out)>;
              window_sums(x.data<T>(), x.shape(), y.shape(), g, include_pad,
                          [&](std::int64_t i, double, std::int64_t s, std::int64_t) {
                            out[i] =
                                static_cast<T>(intops::requantize(static_cast<std::int32_t>(s), p));
                          });
            });
          }
          break;
        }
        case OpKind::Relu:
        case OpKind::Clip: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
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
            std::int32_t ilo = 0, ihi = std::numeric_limits<std::int32_t>::max();
            if (op.kind == OpKind::Clip) {
              const auto b = quant::clip_bounds(graph_.tensor(op.inputs[0]), lo, hi);
              ilo = b.first;
              ihi = b.second;
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
          const TensorData& a = get(op.inputs[0]);
          const TensorData& b = get(op.inputs[1]);
          y = allocate(graph_, out_name);
          if (a.size() != b.size()) return fail(where(op) + ": operands differ in size");
          if (a.dtype() == DType::f32) {
            const float *av = a.data<float>(), *bv = b.data<float>();
            float* out = y.data<float>();
            for (std::int64_t i = 0; i < a.size(); ++i) out[i] = av[i] + bv[i];
          } else {
            const auto p = quant::add_params(graph_.tensor(op.inputs[0]),
                                             graph_.tensor(op.inputs[1]), graph_.tensor(out_name));
            const auto av = a.to_i32(), bv = b.to_i32();
            with_int(y, [&](auto* out) {
              using T = std::remove_pointer_t<decltype(out)>;
              for (std::int64_t i = 0; i < a.size(); ++i)
                out[i] = static_cast<T>(intops::add_requantize(av[static_cast<std::size_t>(i)],
                                                               bv[static_cast<std::size_t>(i)], p));
            });
          }
          break;
        }
        case OpKind::BatchNormalization:
        case OpKind::Scale: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          if (x.dtype() != DType::f32) return fail(where(op) + ": float only");
          const std::int64_t C = x.shape()[1], inner = channel_inner(x.shape());
          std::vector<double> mul(static_cast<std::size_t>(C)),
              add(static_cast<std::size_t>(C), 0.0);
          if (op.kind == OpKind::BatchNormalization) {
            const float* gamma = get(op.inputs[1]).data<float>();
            const float* beta = get(op.inputs[2]).data<float>();
            const float* mean = get(op.inputs[3]).data<float>();
            const float* var = get(op.inputs[4]).data<float>();
            const double eps = op.get_float("epsilon");
            for (std::int64_t c = 0; c < C; ++c) {
              mul[c] = gamma[c] / std::sqrt(double{var[c]} + eps);
              add[c] = beta[c] - mean[c] * mul[c];
            }
          } else {
            const float* scale = get(op.inputs[1]).data<float>();
            for (std::int64_t c = 0; c < C; ++c) mul[c] = scale[c];
            if (op.inputs.size() > 2) {
              const float* bias = get(op.inputs[2]).data<float>();
              for (std::int64_t c = 0; c < C; ++c) add[c] = bias[c];
            }
          }
          const float* xv = x.data<float>();
          float* out = y.data<float>();
          for (std::int64_t i = 0; i < x.size(); ++i) {
            const auto c = static_cast<std::size_t>((i / inner) % C);
            out[i] = static_cast<float>(xv[i] * mul[c] + add[c]);
          }
          break;
        }
        case OpKind::Concat: {
          y = allocate(graph_, out_name);
          const auto& ys = y.shape();
          const auto rank = static_cast<std::int64_t>(ys.size());
          std::int64_t axis = op.get_int("axis");
          if (axis < 0) axis += rank;
          std::int64_t outer = 1, inner = 1;
          for (std::int64_t d = 0; d < axis; ++d) outer *= ys[d];
          for (std::int64_t d = axis + 1; d < rank; ++d) inner *= ys[d];
          const auto elem = static_cast<std::size_t>(ir::dtype_bytes(y.dtype()));
          auto* dst = static_cast<std::uint8_t*>(y.raw());
          const std::size_t out_row = static_cast<std::size_t>(ys[axis] * inner) * elem;
          std::size_t offset = 0;
          for (const auto& in : op.inputs) {
            const TensorData& x = get(in);
            const std::size_t row = static_cast<std::size_t>(x.shape()[axis] * inner) * elem;
            const auto* src = static_cast<const std::uint8_t*>(x.raw());
            for (std::int64_t o = 0; o < outer; ++o)
              std::memcpy(dst + o * out_row + offset, src + o * row, row);
            offset += row;
          }
          break;
        }
        case OpKind::Split: {
          const TensorData& x = get(op.inputs[0]);
          const auto& xs = x.shape();
          const auto rank = static_cast<std::int64_t>(xs.size());
          std::int64_t axis = op.get_int("axis");
          if (axis < 0) axis += rank;
          std::int64_t outer = 1, inner = 1;
          for (std::int64_t d = 0; d < axis; ++d) outer *= xs[d];
          for (std::int64_t d = axis + 1; d < rank; ++d) inner *= xs[d];
          const auto elem = static_cast<std::size_t>(ir::dtype_bytes(x.dtype()));
          const std::size_t in_row = static_cast<std::size_t>(xs[axis] * inner) * elem;
          std::size_t offset = 0;
          for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            TensorData part = allocate(graph_, op.outputs[k]);
            const std::size_t row = static_cast<std::size_t>(part.shape()[axis] * inner) * elem;
            for (std::int64_t o = 0; o < outer; ++o)
              std::memcpy(static_cast<std::uint8_t*>(part.raw()) + o * row,
                          static_cast<const std::uint8_t*>(x.raw()) + o * in_row + offset, row);
            offset += row;
            if (k == 0) {
              y = std::move(part);
            } else {
              if (options.observer)
                if (auto ok = options.observer(op.outputs[k], part); !ok) return fail(ok.reason());
              values[op.outputs[k]] = std::move(part);
            }
          }
          break;
        }
        case OpKind::Flatten:
        case OpKind::Reshape: {
          y = get(op.inputs[0]);
          y.reshape(graph_.tensor(out_name).shape);
          break;
        }
        case OpKind::Pad: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          const auto& pads = op.get_ints("pads");
          const auto& xs = x.shape();
          const auto rank = xs.size();
          double value = op.get_float("value");
          if (x.dtype() != DType::f32) {
            const auto& q = *graph_.tensor(op.inputs[0]).quant;
            value = intops::quantize_value(static_cast<float>(value), q.scales[0],
                                           quant::dtype_bits(x.dtype()));
          }
          const auto& ys = y.shape();
          with_any(y, [&](auto* out) {
            using T = std::remove_pointer_t<decltype(out)>;
            const T* xv = x.data<T>();
            std::fill(out, out + y.size(), static_cast<T>(value));
            std::vector<std::int64_t> idx(rank, 0);
            for (std::int64_t i = 0; i < x.size(); ++i) {
              std::int64_t rem = i, oi = 0;
              for (std::size_t d = rank; d-- > 0;) {
                idx[d] = rem % xs[d];
                rem /= xs[d];
              }
              for (std::size_t d = 0; d < rank; ++d) oi = oi * ys[d] + idx[d] + pads[d];
              out[oi] = xv[i];
            }
          });
          break;
        }
        case OpKind::Softmax: {
          const TensorData& x = get(op.inputs[0]);
          y = allocate(graph_, out_name);
          if (x.dtype() != DType::f32) return fail(where(op) + ": float only");
          const auto& xs = x.shape();
          const auto rank = static_cast<std::int64_t>(xs.size());
          std::int64_t axis = op.get_int("axis");
          if (axis < 0) axis += rank;
          std::int64_t outer = 1, inner = 1;
          for (std::int64_t d = 0; d < axis; ++d) outer *= xs[d];
          for (std::int64_t d = axis + 1; d < rank; ++d) inner *= xs[d];
          const std::int64_t len = xs[axis];
          const float* xv = x.data<float>();
          float* out = y.data<float>();
          for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t in = 0; in < inner; ++in) {
              const std::int64_t base = o * len * inner + in;
              float m = -std::numeric_limits<float>::infinity();
              for (std::int64_t k = 0; k < len; ++k) m = std::max(m, xv[base + k * inner]);
              double sum = 0.0;
              for (std::int64_t k = 0; k < len; ++k)
                sum += std::exp(double{xv[base + k * inner]} - m);
              for (std::int64_t k = 0; k < len; ++k)
                out[base + k * inner] =
                    static_cast<float>(std::exp(double{xv[base + k * inner]} - m) / sum);
            }
          break;
        }
      }
    } catch (const dnnl::error& e) {
      return fail(where(op) + ": oneDNN: " + e.what());
    }
    if (options.observer)
      if (auto ok = options.observer(out_name, y); !ok) return fail(ok.reason());
    values[out_name] = std::move(y);
    // Free what no later op reads.
    if (!options.keep_intermediates)
      for (const auto& in : op.inputs) {
        const auto it = impl_->last_use.find(in);
        if (it != impl_->last_use.end() && it->second == pos && !is_output(in)) values.erase(in);
      }
  }
  for (auto& [name, value] : values)
    if (options.keep_intermediates || is_output(name)) result[name] = std::move(value);
  for (const auto& name : outputs)
    if (!result.count(name)) return fail("graph output %" + name + " was not computed");
  return result;
}

TensorData default_input(const ir::Shape& shape, std::uint64_t seed) {
  const auto values = seeded_normal_values(ir::element_count(shape), seed);
  return TensorData::from_f32(shape, values);
}

}  // namespace tessel::cpu
