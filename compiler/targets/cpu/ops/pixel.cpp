// The per-pixel kinds' channels-last kernels: the graph Input, MaxPool, AveragePool and
// GlobalAveragePool on NHWC, and Relu, Clip and the same-shape Add (with its fused Relu/Clip)
// in whatever layout their input has. A broadcasting Add is the row-major kernel's
// (ops/elementwise.cpp).
#include <limits>

#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/ops/channels_last.hpp"

namespace tessel::cpu {
namespace {

using ir::DType;
using ir::OpKind;

Result<bool> input(ChannelsLastArgs& args) {
  const auto it = args.graph_inputs.find(args.op.outputs[0]);
  if (it == args.graph_inputs.end())
    return fail("no value given for graph input %" + args.out_name);
  const auto& t = args.graph.tensor(args.out_name);
  if (it->second.shape() != t.shape || it->second.dtype() != t.dtype)
    return fail("graph input %" + args.out_name + " expects " + ir::type_string(t) + ", got " +
                std::string(ir::to_string(it->second.dtype())) +
                ir::shape_string(it->second.shape()));
  args.y = it->second;
  return true;
}

Result<bool> max_pool(ChannelsLastArgs& args) {
  const TensorData& x = args.values.channels_last(args.op.inputs[0]);
  args.y = args.allocate();
  args.y_nhwc = true;
  const auto g = ir::window_geometry(args.op);
  const auto &xs = x.shape(), &ys = args.y.shape();
  ops::visit_elements(args.y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    nhwc::max_pool<T>(x.data<T>(), out, xs[0], xs[1], xs[2], xs[3], ys[2], ys[3], g);
  });
  return true;
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

/// AveragePool and GlobalAveragePool (the window is the whole plane).
Result<bool> average_pool(ChannelsLastArgs& args) {
  const TensorData& x = args.values.channels_last(args.op.inputs[0]);
  args.y = args.allocate();
  args.y_nhwc = true;
  TensorData& y = args.y;
  ir::WindowGeometry g;
  bool include_pad = true;
  if (args.op.kind == OpKind::AveragePool) {
    g = ir::window_geometry(args.op);
    include_pad = args.op.get_int("count_include_pad") != 0;
  } else {
    g.kernel_h = x.shape()[2];
    g.kernel_w = x.shape()[3];
  }
  const auto &xs = x.shape(), &ys = y.shape();
  const std::int64_t C = xs[1];
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ys[0] * ys[2] * ys[3]));
  if (x.dtype() == DType::f32) {
    std::vector<double> sums(static_cast<std::size_t>(y.size()));
    nhwc::window_sums(x.data<float>(), sums.data(), counts.data(), xs[0], C, xs[2], xs[3], ys[2],
                      ys[3], g, include_pad);
    float* out = y.data<float>();
    for (std::int64_t i = 0; i < y.size(); ++i)
      out[i] = static_cast<float>(sums[static_cast<std::size_t>(i)] /
                                  static_cast<double>(counts[i / C]));
    return true;
  }
  const std::int64_t n = g.kernel_h * g.kernel_w;
  auto p = quant::average_params(args.graph.tensor(args.op.inputs[0]),
                                 args.graph.tensor(args.out_name), n);
  std::vector<std::int64_t> sums(static_cast<std::size_t>(y.size()));
  integer_window_sums(x, sums.data(), counts.data(), ys[2], ys[3], g, include_pad);
  with_int(y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    for (std::int64_t i = 0; i < y.size(); ++i)
      out[i] = static_cast<T>(
          intops::requantize(static_cast<std::int32_t>(sums[static_cast<std::size_t>(i)]), p));
  });
  return true;
}

/// Relu and Clip.
Result<bool> clamp(ChannelsLastArgs& args) {
  const auto [xp, x_nhwc] = args.values.as_is(args.op.inputs[0]);
  const TensorData& x = *xp;
  args.y = args.allocate();
  args.y_nhwc = x_nhwc;
  TensorData& y = args.y;
  double lo = 0.0, hi = std::numeric_limits<double>::infinity();
  if (args.op.kind == OpKind::Clip) {
    lo = args.op.get_float("min");
    hi = args.op.get_float("max");
  }
  if (x.dtype() == DType::f32) {
    const float* xv = x.data<float>();
    float* out = y.data<float>();
    const float flo =
        static_cast<float>(std::max(lo, double{std::numeric_limits<float>::lowest()}));
    const float fhi = static_cast<float>(std::min(hi, double{std::numeric_limits<float>::max()}));
    for (std::int64_t i = 0; i < x.size(); ++i) out[i] = std::min(std::max(xv[i], flo), fhi);
    return true;
  }
  // Named, not a structured binding: clang 14 (the asan preset) cannot capture one in a lambda.
  const std::pair<std::int32_t, std::int32_t> bounds = activation_bounds(args.graph, args.op);
  const std::int32_t ilo = bounds.first, ihi = bounds.second;
  if (x.dtype() == DType::i8) {
    nhwc::clamp(x.data<std::int8_t>(), y.data<std::int8_t>(), x.size(), ilo, ihi);
    return true;
  }
  if (x.dtype() == DType::i16) {
    nhwc::clamp(x.data<std::int16_t>(), y.data<std::int16_t>(), x.size(), ilo, ihi);
    return true;
  }
  with_int(y, [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T* xv = x.data<T>();
    for (std::int64_t i = 0; i < x.size(); ++i)
      out[i] = static_cast<T>(std::clamp<std::int32_t>(xv[i], ilo, ihi));
  });
  return true;
}

/// Add of two equal shapes (its fused integer fast path); a broadcast declines to the row-major
/// kernel.
Result<bool> add(ChannelsLastArgs& args) {
  const ir::Op& op = args.op;
  if (args.graph.tensor(op.inputs[0]).shape != args.graph.tensor(op.inputs[1]).shape) return false;
  const auto [ap, a_nhwc] = args.values.as_is(op.inputs[0]);
  const TensorData& a = *ap;
  const TensorData& b = args.values.in_layout(op.inputs[1], a_nhwc);
  args.y = args.allocate();
  args.y_nhwc = a_nhwc;
  TensorData& y = args.y;
  if (a.size() != b.size()) return fail(args.where() + ": operands differ in size");
  if (a.dtype() == DType::f32) {
    const float *av = a.data<float>(), *bv = b.data<float>();
    float* out = y.data<float>();
    for (std::int64_t i = 0; i < a.size(); ++i) out[i] = av[i] + bv[i];
    return true;
  }
  const auto p = args.fusion ? args.fusion->add
                             : quant::add_params(args.graph.tensor(op.inputs[0]),
                                                 args.graph.tensor(op.inputs[1]),
                                                 args.graph.tensor(op.outputs[0]));
  const bool same = a.dtype() == y.dtype() && b.dtype() == y.dtype();
  if (same && y.dtype() == DType::i8) {
    parallel_slices(a.size(), 1 << 16, [&](std::int64_t i0, std::int64_t i1) {
      nhwc::add_requantize(a.data<std::int8_t>() + i0, b.data<std::int8_t>() + i0,
                           y.data<std::int8_t>() + i0, i1 - i0, p);
      return true;
    });
  } else if (same && y.dtype() == DType::i16) {
    nhwc::add_requantize(a.data<std::int16_t>(), b.data<std::int16_t>(), y.data<std::int16_t>(),
                         a.size(), p);
  } else {
    const auto av = a.to_i32(), bv = b.to_i32();
    with_int(y, [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (std::int64_t i = 0; i < a.size(); ++i)
        out[i] = static_cast<T>(intops::add_requantize(av[static_cast<std::size_t>(i)],
                                                       bv[static_cast<std::size_t>(i)], p));
    });
  }
  return true;
}

}  // namespace

std::vector<KernelEntry> pixel_kernels() {
  return {{OpKind::Input, nullptr, input},
          {OpKind::MaxPool, nullptr, max_pool},
          {OpKind::AveragePool, nullptr, average_pool},
          {OpKind::GlobalAveragePool, nullptr, average_pool},
          {OpKind::Relu, nullptr, clamp},
          {OpKind::Clip, nullptr, clamp},
          {OpKind::Add, nullptr, add}};
}

}  // namespace tessel::cpu
