// Lowering a quantized graph to GPU kernel steps: fusion chains, NHWC views, packed weights.
// The classic CNN ops; the Lowering class is in lower_internal.hpp.
#include "compiler/targets/cuda/lower_internal.hpp"

namespace tessel::cuda::detail {

using ir::DType;
using ir::OpKind;

// ---- ops ---------------------------------------------------------------------------------
Status Lowering::lower_op(ir::OpId id) {
  const ir::Op& op = graph_.op(id);
  switch (op.kind) {
    case OpKind::Input:
      return lower_input(op);
    case OpKind::Quantize:
      return lower_quantize(op);
    case OpKind::Conv:
    case OpKind::Gemm:
      return lower_conv(op);
    case OpKind::MaxPool:
    case OpKind::AveragePool:
    case OpKind::GlobalAveragePool:
      return lower_pool(op);
    case OpKind::Requantize:
    case OpKind::Relu:
    case OpKind::Clip:
      return lower_eltwise(op);
    case OpKind::Add: {
      // The fused NHWC path for equal shapes and layouts; broadcasts and constants: a workload.
      const auto &a = op.inputs[0], &b = op.inputs[1];
      if (place_.count(a) && place_.count(b) && graph_.tensor(a).shape == graph_.tensor(b).shape &&
          rows_layout(a) == rows_layout(b))
        return lower_eltwise(op);
      return lower_workload(op);
    }
    case OpKind::Concat:
    case OpKind::Split: {
      const auto& first = graph_.tensor(op.kind == OpKind::Concat ? op.outputs[0] : op.inputs[0]);
      bool nhwc = first.shape.size() == 4 && channel_axis(op, first.shape.size());
      for (const auto& in : op.inputs) nhwc = nhwc && place_.count(in) && !rows_layout(in);
      return nhwc ? lower_copy(op) : lower_workload(op);
    }
    case OpKind::Flatten:
    case OpKind::Reshape:
      return lower_view(op);
    case OpKind::Dequantize:
      if (!place_.count(op.inputs[0]))
        return fail(where(op) + ": its input is not computed on the GPU");
      add_output(op.inputs[0]);
      plan_.host_ops.push_back(op.name);
      return {};
    case OpKind::Softmax:
      if (graph_.tensor(op.inputs[0]).dtype != DType::f32) return lower_workload(op);
      plan_.host_ops.push_back(op.name);
      return {};
    default:
      return lower_workload(op);
  }
}

Status Lowering::lower_input(const ir::Op& op) {
  const auto& t = graph_.tensor(op.outputs[0]);
  if (t.dtype != DType::f32 || t.shape.empty())
    return fail(where(op) + ": the GPU backend takes one f32 input, got " + ir::type_string(t));
  Buffer b;
  b.tensor = t.name;
  b.type = kI32;  // 4-byte elements; is_f32_input marks the float contents
  b.is_f32_input = true;
  b.rows = t.shape.size() != 4;  // NCHW; other ranks row-major (n rows of the last dim)
  b.c = b.rows ? t.shape.back() : t.shape[1];
  b.n = b.rows ? ir::element_count(t.shape) / std::max<std::int64_t>(b.c, 1) : t.shape[0];
  b.h = b.rows ? 1 : t.shape[2];
  b.w = b.rows ? 1 : t.shape[3];
  b.c_stride = b.c;
  plan_.buffers.push_back(b);
  const int buffer = static_cast<int>(plan_.buffers.size()) - 1;
  plan_.inputs.push_back(PlanInput{t.name, t.shape, buffer});
  if (plan_.input_buffer < 0) {
    plan_.input_buffer = buffer;
    plan_.input_tensor = t.name;
    plan_.input_shape = t.shape;
  }
  return {};
}

Status Lowering::lower_quantize(const ir::Op& op) {
  const auto input = std::find_if(plan_.inputs.begin(), plan_.inputs.end(),
                                  [&](const PlanInput& in) { return in.tensor == op.inputs[0]; });
  if (input == plan_.inputs.end())
    return fail(where(op) + ": only graph inputs are quantized on the GPU");
  const auto& out = graph_.tensor(op.outputs[0]);
  auto type = elem_type(out.dtype, op);
  if (!type) return fail(type.reason());
  Step s;
  s.kind = KernelKind::QuantizeInput;
  s.name = op.name;
  s.ops = {op.name};
  const Buffer& in = plan_.buffers[static_cast<std::size_t>(input->buffer)];
  s.x = PlanView{input->buffer, in.n, in.h, in.w, in.c, in.c, 0};
  s.scale = static_cast<double>(out.quant->scales[0]);
  s.zero_point = out.quant->zero_points.empty() ? 0 : out.quant->zero_points[0];
  const int bits = quant::dtype_bits(out.dtype);
  s.lo = intops::qmin(bits);
  s.hi = intops::qmax(bits);
  s.y = new_buffer(out.name, type.value());
  s.launch = elementwise_launch(s.y.elements());
  s.bytes.activations_read = 4 * s.x.elements();
  s.bytes.activations_written = s.y.elements() * elem(s.y);
  plan_.steps.push_back(std::move(s));
  return {};
}

/// Packs weights [O][KH][KW][stride] from OIHW (Conv) or a Gemm matrix; for a Gemm over a
/// flattened (h, w, c) map, column k = c * hw + p of the NCHW flatten goes to p * c_stride + c.
std::vector<std::uint8_t> Lowering::pack(
    const std::vector<std::int32_t>& values, int elem_size, std::int64_t out_channels,
    std::int64_t taps, std::int64_t stride,
    const std::function<std::int64_t(std::int64_t, std::int64_t, std::int64_t)>& source,
    std::int64_t channels) {
  std::vector<std::uint8_t> bytes(
      static_cast<std::size_t>(out_channels * taps * stride * elem_size), 0);
  for (std::int64_t o = 0; o < out_channels; ++o)
    for (std::int64_t t = 0; t < taps; ++t)
      for (std::int64_t c = 0; c < channels; ++c) {
        const std::int64_t from = source(o, t, c);
        if (from < 0) continue;
        const std::int32_t v = values[static_cast<std::size_t>(from)];
        const std::int64_t to = ((o * taps + t) * stride + c) * elem_size;
        if (elem_size == 1) {
          bytes[static_cast<std::size_t>(to)] =
              static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
        } else {
          const auto h = static_cast<std::int16_t>(v);
          std::memcpy(&bytes[static_cast<std::size_t>(to)], &h, 2);
        }
      }
  return bytes;
}

Status Lowering::lower_conv(const ir::Op& op) {
  const auto& x_t = graph_.tensor(op.inputs[0]);
  const auto& w_t = graph_.tensor(op.inputs[1]);
  const auto& acc_t = graph_.tensor(op.outputs[0]);
  if (x_t.dtype == DType::f32) return fail(where(op) + ": a float Conv/Gemm (quantize first)");
  if (op.get_int("input_shift") != 0)  // docs/quantization.md, "Input shift on Conv/Gemm"
    return fail(where(op) + ": input_shift " + std::to_string(op.get_int("input_shift")) +
                " (a 16-bit layer's input shift) is not lowered to the GPU yet");
  if (!w_t.constant || !w_t.has_data())
    return fail(where(op) + ": weights must be constants with values");
  if (!place_.count(op.inputs[0])) return fail(where(op) + ": input not computed on the GPU");
  auto w_type = elem_type(w_t.dtype, op);
  if (!w_type) return fail(w_type.reason());
  const int w_size = elem_bytes(w_type.value());
  const auto weights = cpu::TensorData::from_constant(w_t).to_i32();

  Step s;
  s.name = op.name;
  s.ops = {op.name};
  s.weight_type = w_type.value();
  PlanView in = place_.at(op.inputs[0]);
  if (op.kind == OpKind::Conv) {
    auto nhwc = nhwc_place(op.inputs[0], op);
    if (!nhwc) return nhwc.failure();
    in = nhwc.value();
  }
  std::int64_t out_channels = 0;
  if (op.kind == OpKind::Conv) {
    const auto g = ir::window_geometry(op);
    s.window = Window{g.kernel_h, g.kernel_w,   g.stride_h,  g.stride_w,   g.pad_top,
                      g.pad_left, g.pad_bottom, g.pad_right, g.dilation_h, g.dilation_w};
    s.group = g.group;
    s.x = in;
    out_channels = acc_t.shape[1];
    const std::int64_t cg = x_t.shape[1] / g.group, taps = g.kernel_h * g.kernel_w;
    s.weight_c_stride = padded_channels(cg);
    s.weights = pack(
        weights, w_size, out_channels, taps, s.weight_c_stride,
        [&](std::int64_t o, std::int64_t t, std::int64_t c) { return (o * cg + c) * taps + t; },
        cg);
    s.macs = acc_t.shape[0] * acc_t.shape[2] * acc_t.shape[3] * out_channels * taps * cg;
  } else {
    const bool trans_b = op.get_int("transB") != 0;
    const std::int64_t k = x_t.shape[1];
    out_channels = acc_t.shape[1];
    const std::int64_t hw = in.h * in.w;
    if (hw == 1) {
      s.x = PlanView{in.buffer, in.n, 1, 1, in.c, in.pixel_stride, in.channel_offset};
      s.weight_c_stride = padded_channels(in.c);
    } else {
      if (in.channel_offset != 0 || in.h * in.w * in.c != k)
        return fail(where(op) + ": reads a flattened channel slice");
      const std::int64_t row = hw * in.pixel_stride;
      s.x = PlanView{in.buffer, in.n, 1, 1, row, row, 0};
      s.weight_c_stride = row;
    }
    const std::int64_t c_stride = in.pixel_stride;
    // Position in the packed row of logical column kk = c * hw + p is p * c_stride + c.
    std::vector<std::int64_t> column_of(static_cast<std::size_t>(s.weight_c_stride), -1);
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const std::int64_t c = kk / hw, p = kk % hw;
      column_of[static_cast<std::size_t>(hw == 1 ? c : p * c_stride + c)] = kk;
    }
    s.weights = pack(
        weights, w_size, out_channels, 1, s.weight_c_stride,
        [&](std::int64_t o, std::int64_t, std::int64_t pos) {
          const std::int64_t kk = column_of[static_cast<std::size_t>(pos)];
          if (kk < 0) return std::int64_t{-1};
          return trans_b ? o * k + kk : kk * out_channels + o;
        },
        s.weight_c_stride);
    s.macs = acc_t.shape[0] * out_channels * k;
  }
  const bool int8 = plan_.buffers[s.x.buffer].type == kI8 && s.weight_type == kI8;
  const bool aligned = s.x.pixel_stride % 4 == 0 && s.x.channel_offset % 4 == 0;
  s.kind = int8 && s.group == 1 && aligned ? KernelKind::ConvDp4a : KernelKind::ConvDirect;
  if (op.inputs.size() > 2) {
    s.epilogue.bias = cpu::TensorData::from_constant(graph_.tensor(op.inputs[2])).to_i32();
    s.epilogue.bias.resize(static_cast<std::size_t>(out_channels), 0);
  }
  Chain chain{op.outputs[0], 1};
  fuse_tail(s, chain);
  auto type = elem_type(graph_.tensor(chain.tensor).dtype, op);
  if (!type) return fail(type.reason());
  const std::int64_t read_channels =
      s.kind == KernelKind::ConvDp4a ? s.weight_c_stride * s.group : s.x.c;
  s.bytes.activations_read = s.x.n * s.x.h * s.x.w * read_channels * elem(s.x);
  finish(s, chain, type);
  s.launch = s.kind == KernelKind::ConvDp4a ? dp4a_launch(s.y.n * s.y.h * s.y.w, s.y.c)
                                            : elementwise_launch(s.y.elements());
  plan_.steps.push_back(std::move(s));
  return {};
}

Status Lowering::lower_pool(const ir::Op& op) {
  const auto& x_t = graph_.tensor(op.inputs[0]);
  if (!place_.count(op.inputs[0])) return fail(where(op) + ": input not computed on the GPU");
  Step s;
  s.kind = KernelKind::Pool;
  s.name = op.name;
  s.ops = {op.name};
  auto nhwc = nhwc_place(op.inputs[0], op);
  if (!nhwc) return nhwc.failure();
  s.x = nhwc.value();
  if (op.kind == OpKind::GlobalAveragePool) {
    s.window.kernel_h = x_t.shape[2];
    s.window.kernel_w = x_t.shape[3];
  } else {
    const auto g = ir::window_geometry(op);
    s.window = Window{g.kernel_h, g.kernel_w,   g.stride_h,  g.stride_w,   g.pad_top,
                      g.pad_left, g.pad_bottom, g.pad_right, g.dilation_h, g.dilation_w};
  }
  s.is_max = op.kind == OpKind::MaxPool;
  Chain chain{op.outputs[0], s.is_max ? 3 : 2};
  if (!s.is_max) {
    if (op.kind == OpKind::AveragePool && op.get_int("count_include_pad") == 0 &&
        (s.window.pad_top || s.window.pad_left || s.window.pad_bottom || s.window.pad_right))
      return fail(where(op) + ": count_include_pad = 0 with padding");
    const auto p = quant::average_params(x_t, graph_.tensor(op.outputs[0]),
                                         s.window.kernel_h * s.window.kernel_w);
    s.epilogue.multiplier = {p.multiplier};
    s.epilogue.shift = {p.shift};
    s.epilogue.scalars.zero_point = p.zero_point;
    s.epilogue.scalars.requant_lo = p.lo;
    s.epilogue.scalars.requant_hi = p.hi;
    fuse_tail(s, chain);
  }
  auto type = elem_type(graph_.tensor(chain.tensor).dtype, op);
  if (!type) return fail(type.reason());
  s.bytes.activations_read = s.x.elements() * elem(s.x);
  finish(s, chain, type);
  s.launch = elementwise_launch(s.y.elements());
  plan_.steps.push_back(std::move(s));
  return {};
}

Status Lowering::lower_eltwise(const ir::Op& op) {
  for (const auto& in : op.inputs)
    if (!place_.count(in)) return fail(where(op) + ": input %" + in + " not computed on the GPU");
  Step s;
  s.kind = KernelKind::Eltwise;
  s.name = op.name;
  s.x = place_.at(op.inputs[0]);
  Chain chain{op.inputs[0], 0};
  auto& e = s.epilogue.scalars;
  if (op.kind == OpKind::Requantize) {
    set_requant(s.epilogue, op.inputs[0], op.outputs[0]);
    chain.stage = 2;
    s.ops = {op.name};
  } else if (op.kind == OpKind::Add) {
    set_add(s, op, op.inputs[0]);
    chain.stage = 4;
  } else {
    std::tie(e.clamp_lo, e.clamp_hi) = act_bounds(op);
    e.has_clamp = 1;
    chain.stage = 3;
    s.ops = {op.name};
  }
  chain.tensor = op.outputs[0];
  fuse_tail(s, chain);
  auto type = elem_type(graph_.tensor(chain.tensor).dtype, op);
  if (!type) return fail(type.reason());
  s.bytes.activations_read = s.x.elements() * elem(s.x);
  finish(s, chain, type);
  s.launch = elementwise_launch(s.y.elements());
  plan_.steps.push_back(std::move(s));
  return {};
}

bool Lowering::channel_axis(const ir::Op& op, std::size_t rank) {
  std::int64_t axis = op.get_int("axis");
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  return axis == 1;
}

Status Lowering::lower_copy(const ir::Op& op) {
  const auto& first = graph_.tensor(op.kind == OpKind::Concat ? op.outputs[0] : op.inputs[0]);
  if (!channel_axis(op, first.shape.size()))
    return fail(where(op) + ": only the channel axis (1) is supported");
  auto type = elem_type(first.dtype, op);
  if (!type) return fail(type.reason());
  for (const auto& in : op.inputs)
    if (!place_.count(in)) return fail(where(op) + ": input %" + in + " not computed on the GPU");
  const auto copy = [&](const PlanView& from, const PlanView& to) {
    Step s;
    s.kind = KernelKind::Copy;
    s.name = op.name;
    s.ops = {op.name};
    s.x = from;
    s.y = to;
    s.launch = elementwise_launch(to.elements());
    s.bytes.activations_read = from.elements() * elem(from);
    s.bytes.activations_written = to.elements() * elem(to);
    plan_.steps.push_back(std::move(s));
  };
  std::int64_t offset = 0;
  if (op.kind == OpKind::Concat) {
    const PlanView out = new_buffer(op.outputs[0], type.value());
    for (const auto& in : op.inputs) {
      PlanView slice = out;
      slice.c = graph_.tensor(in).shape[1];
      slice.channel_offset = offset;
      offset += slice.c;
      copy(place_.at(in), slice);
    }
  } else {
    const PlanView in = place_.at(op.inputs[0]);
    for (const auto& out_name : op.outputs) {
      const PlanView out = new_buffer(out_name, type.value());
      PlanView slice = in;
      slice.c = out.c;
      slice.channel_offset = in.channel_offset + offset;
      offset += out.c;
      copy(slice, out);
    }
  }
  return {};
}

Status Lowering::lower_view(const ir::Op& op) {
  if (!place_.count(op.inputs[0])) return fail(where(op) + ": input not computed on the GPU");
  const auto& in = graph_.tensor(op.inputs[0]);
  const auto& out = graph_.tensor(op.outputs[0]);
  const PlanView v = place_.at(op.inputs[0]);
  if (in.shape == out.shape) {
    place_[op.outputs[0]] = v;
    return {};
  }
  // Rows keeping their last dim: the same rows, counted anew.
  if (rows_layout(op.inputs[0]) && !out.shape.empty() && v.h == 1 && v.w == 1 &&
      out.shape.back() == v.c) {
    PlanView r = v;
    r.n = ir::element_count(out.shape) / std::max<std::int64_t>(v.c, 1);
    place_[op.outputs[0]] = r;
    return {};
  }
  // A flatten of an NHWC map to [N, K]: only a Gemm reads it (its weight columns permuted).
  const bool flatten = !rows_layout(op.inputs[0]) && out.shape.size() == 2 &&
                       out.shape[0] == in.shape[0] &&
                       ir::element_count(out.shape) == ir::element_count(in.shape);
  if (flatten) {
    place_[op.outputs[0]] = v;
    return {};
  }
  return lower_reshape(op);
}

}  // namespace tessel::cuda::detail

namespace tessel::cuda {

Result<GpuPlan> lower_to_gpu(const ir::Graph& quantized) {
  return detail::Lowering(quantized).run();
}

std::vector<float> input_values(const cpu::TensorData& input) {
  const float* p = input.data<float>();
  return std::vector<float>(p, p + input.size());
}

cpu::TensorData gather_output(const GpuPlan& plan, const DeviceOutput& output,
                              const void* buffer_data) {
  const PlanView& v = output.view;
  const ir::DType dtype = output.type == kI8    ? ir::DType::i8
                          : output.type == kI16 ? ir::DType::i16
                                                : ir::DType::i32;
  cpu::TensorData t(dtype, ir::Shape{v.n, v.c, v.h, v.w});
  std::vector<std::int32_t> values(static_cast<std::size_t>(t.size()));
  TensorView tv{const_cast<void*>(buffer_data),
                plan.buffers[v.buffer].type,
                v.n,
                v.h,
                v.w,
                v.c,
                v.pixel_stride,
                v.channel_offset};
  std::size_t i = 0;
  for (std::int64_t n = 0; n < v.n; ++n)
    for (std::int64_t c = 0; c < v.c; ++c)
      for (std::int64_t y = 0; y < v.h; ++y)
        for (std::int64_t x = 0; x < v.w; ++x)
          values[i++] = load_int(buffer_data, tv.type, view_index(tv, n, y, x, c));
  return cpu::TensorData::from_ints(dtype, output.shape, values);
}

}  // namespace tessel::cuda
