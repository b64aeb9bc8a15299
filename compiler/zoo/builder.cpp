// NetBuilder: one op per call, shapes inferred as the graph grows, weights from a counter RNG.
#include "compiler/zoo/builder.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>

#include "compiler/ir/rng.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "compiler/zoo/models_internal.hpp"
#include "compiler/zoo/normal_fill.hpp"

namespace tessel::zoo {

using ir::Op;
using ir::OpKind;

namespace {
using Ints = std::vector<std::int64_t>;
/// Parameters at least this large draw their values on every OpenMP thread (ResNet-50's 25 M
/// weights took ~0.8 s of scalar Box-Muller on one core, ~0.1 s 8-wide: normal_fill.hpp).
constexpr std::int64_t kParallelElements = 1 << 16;
/// The threads' unit of work (a multiple of fill_normal_floats' 8 or 4 lanes).
constexpr std::size_t kBlockElements = 4096;
}  // namespace

NetBuilder::NetBuilder(std::string graph_name, const ZooOptions& options)
    : graph_(std::move(graph_name)), options_(options) {}

std::string NetBuilder::add_op(Op op) {
  const std::string name = op.name;
  auto id = graph_.add_op(std::move(op));
  if (!id) throw std::logic_error("zoo: " + id.reason());
  if (Status inferred = ir::infer_shapes(graph_, id.value()); !inferred) {
    throw std::logic_error("zoo: " + inferred.reason());
  }
  return graph_.op(id.value()).outputs[0];
}

void NetBuilder::add_parameter(const std::string& name, ir::Shape shape, double mean,
                               double std_dev) {
  ir::Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  if (options_.with_weights) {
    const ir::CounterRng rng(options_.seed, name);
    const auto count = static_cast<std::size_t>(ir::element_count(tensor.shape));
    tensor.f32_values.resize(count);
    // Element i depends on (seed, name, i) only, so the threads' split changes no value.
    const std::span<float> values(tensor.f32_values);
    const auto blocks = static_cast<std::int64_t>((count + kBlockElements - 1) / kBlockElements);
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(count) >= \
                                              kParallelElements)
    for (std::int64_t block = 0; block < blocks; ++block) {
      const std::size_t begin = static_cast<std::size_t>(block) * kBlockElements;
      fill_normal_floats(rng, mean, std_dev,
                         values.subspan(begin, std::min(kBlockElements, count - begin)), begin);
    }
  }
  if (Status added = graph_.add_constant(std::move(tensor)); !added) {
    throw std::logic_error("zoo: " + added.reason());
  }
}

void NetBuilder::add_positive_parameter(const std::string& name, ir::Shape shape, double log_std) {
  ir::Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  if (options_.with_weights) {
    const ir::CounterRng rng(options_.seed, name);
    const auto count = static_cast<std::size_t>(ir::element_count(tensor.shape));
    tensor.f32_values.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      tensor.f32_values[i] = static_cast<float>(std::exp(log_std * rng.normal(i)));
    }
  }
  if (Status added = graph_.add_constant(std::move(tensor)); !added) {
    throw std::logic_error("zoo: " + added.reason());
  }
}

std::string NetBuilder::input(const std::string& name, std::int64_t channels, std::int64_t height,
                              std::int64_t width) {
  auto id = graph_.add_input(name, {options_.batch, channels, height, width});
  if (!id) throw std::logic_error("zoo: " + id.reason());
  return name;
}

std::string NetBuilder::conv(const std::string& x, const std::string& name, const ConvSpec& spec) {
  const std::int64_t in_channels = channels(x);
  const std::int64_t fan_in = in_channels / spec.group * spec.kernel_h * spec.kernel_w;
  add_parameter(name + ".weight",
                {spec.out_channels, in_channels / spec.group, spec.kernel_h, spec.kernel_w}, 0.0,
                std::sqrt(spec.gain / static_cast<double>(fan_in)));
  Op op{name, OpKind::Conv, {x, name + ".weight"}, {name}, {}};
  if (spec.bias) {
    add_parameter(name + ".bias", {spec.out_channels}, 0.0, 0.01);
    op.inputs.push_back(name + ".bias");
  }
  op.attrs = {{"kernel", Ints{spec.kernel_h, spec.kernel_w}},
              {"stride", Ints{spec.stride, spec.stride}},
              {"pad", Ints{spec.pad_h, spec.pad_w, spec.pad_h, spec.pad_w}},
              {"group", spec.group}};
  return add_op(std::move(op));
}

std::string NetBuilder::batch_norm(const std::string& x, const std::string& name, double epsilon,
                                   double gamma_centre) {
  const std::int64_t c = channels(x);
  add_parameter(name + ".weight", {c}, gamma_centre, 0.1 * gamma_centre);
  add_parameter(name + ".bias", {c}, 0.0, 0.05);
  add_parameter(name + ".running_mean", {c}, 0.0, 0.05);
  add_positive_parameter(name + ".running_var", {c}, 0.1);
  Op op{name,
        OpKind::BatchNormalization,
        {x, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var"},
        {name},
        {{"epsilon", epsilon}}};
  return add_op(std::move(op));
}

std::string NetBuilder::relu(const std::string& x, const std::string& name) {
  return add_op(Op{name, OpKind::Relu, {x}, {name}, {}});
}

std::string NetBuilder::clip(const std::string& x, const std::string& name, double min,
                             double max) {
  return add_op(Op{name, OpKind::Clip, {x}, {name}, {{"min", min}, {"max", max}}});
}

std::string NetBuilder::add(const std::string& a, const std::string& b, const std::string& name) {
  return add_op(Op{name, OpKind::Add, {a, b}, {name}, {}});
}

std::string NetBuilder::concat(const std::vector<std::string>& xs, const std::string& name) {
  return add_op(Op{name, OpKind::Concat, xs, {name}, {{"axis", std::int64_t{1}}}});
}

std::string NetBuilder::max_pool(const std::string& x, const std::string& name, std::int64_t kernel,
                                 std::int64_t stride, std::int64_t pad, bool ceil_mode) {
  return add_op(Op{name,
                   OpKind::MaxPool,
                   {x},
                   {name},
                   {{"kernel", Ints{kernel, kernel}},
                    {"stride", Ints{stride, stride}},
                    {"pad", Ints{pad, pad, pad, pad}},
                    {"ceil_mode", std::int64_t{ceil_mode ? 1 : 0}}}});
}

std::string NetBuilder::average_pool(const std::string& x, const std::string& name,
                                     std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                                     bool count_include_pad) {
  Op op{name,
        OpKind::AveragePool,
        {x},
        {name},
        {{"kernel", Ints{kernel, kernel}},
         {"stride", Ints{stride, stride}},
         {"pad", Ints{pad, pad, pad, pad}}}};
  // count_include_pad only matters with padding; ONNX leaves it at its default otherwise.
  if (pad > 0) op.attrs["count_include_pad"] = std::int64_t{count_include_pad ? 1 : 0};
  return add_op(std::move(op));
}

std::string NetBuilder::global_average_pool(const std::string& x, const std::string& name) {
  return add_op(Op{name, OpKind::GlobalAveragePool, {x}, {name}, {}});
}

std::string NetBuilder::flatten(const std::string& x, const std::string& name) {
  return add_op(Op{name, OpKind::Flatten, {x}, {name}, {{"axis", std::int64_t{1}}}});
}

std::string NetBuilder::linear(const std::string& x, const std::string& name,
                               std::int64_t out_features, double gain) {
  const std::int64_t in_features = shape(x).at(1);
  add_parameter(name + ".weight", {out_features, in_features}, 0.0,
                std::sqrt(gain / static_cast<double>(in_features)));
  add_parameter(name + ".bias", {out_features}, 0.0, 0.01);
  return add_op(Op{name,
                   OpKind::Gemm,
                   {x, name + ".weight", name + ".bias"},
                   {name},
                   {{"transB", std::int64_t{1}}}});
}

std::string NetBuilder::softmax(const std::string& x, const std::string& name) {
  return add_op(Op{name, OpKind::Softmax, {x}, {name}, {{"axis", std::int64_t{1}}}});
}

std::string NetBuilder::conv_bn_relu(const std::string& x, const std::string& conv_name,
                                     const std::string& bn_name, const std::string& relu_name,
                                     const ConvSpec& spec, double epsilon) {
  return relu(batch_norm(conv(x, conv_name, spec), bn_name, epsilon), relu_name);
}

std::string NetBuilder::input_shaped(const std::string& name, ir::Shape shape) {
  auto id = graph_.add_input(name, std::move(shape));
  if (!id) throw std::logic_error("zoo: " + id.reason());
  return name;
}

std::string NetBuilder::input_ids(const std::string& name, ir::Shape shape) {
  auto id = graph_.add_input(name, std::move(shape), ir::DType::i32);
  if (!id) throw std::logic_error("zoo: " + id.reason());
  return name;
}

std::string NetBuilder::parameter(const std::string& name, ir::Shape shape, double mean,
                                  double std_dev) {
  add_parameter(name, std::move(shape), mean, std_dev);
  return name;
}

std::string NetBuilder::constant(const std::string& name, ir::Shape shape,
                                 std::vector<float> values) {
  ir::Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  tensor.f32_values = std::move(values);  // structure, not weights: kept in shape-only graphs
  if (Status added = graph_.add_constant(std::move(tensor)); !added)
    throw std::logic_error("zoo: " + added.reason());
  return name;
}

std::string NetBuilder::op(const std::string& name, OpKind kind, std::vector<std::string> inputs,
                           ir::Attrs attrs) {
  return add_op(Op{name, kind, std::move(inputs), {name}, std::move(attrs)});
}

std::string NetBuilder::dense(const std::string& x, const std::string& name,
                              std::int64_t out_features, double gain, bool bias) {
  const std::int64_t in_features = shape(x).back();
  add_parameter(name + ".weight", {out_features, in_features}, 0.0,
                std::sqrt(gain / static_cast<double>(in_features)));
  return linear_by(x, name, name + ".weight",
                   bias ? parameter(name + ".bias", {out_features}, 0.0, 0.01) : "");
}

std::string NetBuilder::linear_by(const std::string& x, const std::string& name,
                                  const std::string& weight, const std::string& bias) {
  const ir::Shape in_shape = shape(x);
  const std::int64_t in_features = in_shape.back();
  const std::int64_t out_features = shape(weight).at(0);
  std::vector<std::string> inputs = {x, weight};
  if (!bias.empty()) inputs.push_back(bias);
  if (in_shape.size() == 2)
    return op(name, OpKind::Gemm, std::move(inputs), {{"transB", std::int64_t{1}}});
  inputs[0] = reshape(x, name + ".flatten", {-1, in_features});
  const std::string y = op(name, OpKind::Gemm, std::move(inputs), {{"transB", std::int64_t{1}}});
  ir::Shape out_shape = in_shape;
  out_shape.back() = out_features;
  return reshape(y, name + ".unflatten", out_shape);
}

std::string NetBuilder::layer_norm(const std::string& x, const std::string& name, double epsilon) {
  const std::int64_t n = shape(x).back();
  add_parameter(name + ".weight", {n}, 1.0, 0.1);
  add_parameter(name + ".bias", {n}, 0.0, 0.05);
  return op(name, OpKind::LayerNormalization, {x, name + ".weight", name + ".bias"},
            {{"axis", std::int64_t{-1}}, {"epsilon", epsilon}});
}

std::string NetBuilder::rms_norm(const std::string& x, const std::string& name, double epsilon) {
  add_parameter(name + ".weight", {shape(x).back()}, 1.0, 0.1);
  return op(name, OpKind::RMSNormalization, {x, name + ".weight"},
            {{"axis", std::int64_t{-1}}, {"epsilon", epsilon}});
}

std::string NetBuilder::reshape(const std::string& x, const std::string& name, ir::Shape to) {
  return op(name, OpKind::Reshape, {x}, {{"shape", std::move(to)}});
}

std::string NetBuilder::transpose(const std::string& x, const std::string& name,
                                  std::vector<std::int64_t> perm) {
  return op(name, OpKind::Transpose, {x}, {{"perm", std::move(perm)}});
}

std::string NetBuilder::matmul(const std::string& a, const std::string& b,
                               const std::string& name) {
  return op(name, OpKind::MatMul, {a, b});
}

std::string NetBuilder::softmax_axis(const std::string& x, const std::string& name,
                                     std::int64_t axis) {
  return op(name, OpKind::Softmax, {x}, {{"axis", axis}});
}

std::string NetBuilder::slice(const std::string& x, const std::string& name, std::int64_t axis,
                              std::int64_t start, std::int64_t end) {
  return op(
      name, OpKind::Slice, {x},
      {{"starts", Ints{start}}, {"ends", Ints{end}}, {"axes", Ints{axis}}, {"steps", Ints{1}}});
}

std::string NetBuilder::concat_axis(const std::vector<std::string>& xs, const std::string& name,
                                    std::int64_t axis) {
  return add_op(Op{name, OpKind::Concat, xs, {name}, {{"axis", axis}}});
}

const ir::Shape& NetBuilder::shape(const std::string& tensor) const {
  return graph_.tensor(tensor).shape;
}

ir::Graph NetBuilder::finish(const std::vector<std::string>& outputs) {
  if (Status set = graph_.set_outputs(outputs); !set)
    throw std::logic_error("zoo: " + set.reason());
  if (Status valid = ir::validate(graph_); !valid) throw std::logic_error("zoo: " + valid.reason());
  return std::move(graph_);
}

namespace detail {

std::string basic_conv(NetBuilder& net, const std::string& x, const std::string& prefix,
                       const ConvSpec& spec) {
  constexpr double kBasicConvEpsilon = 0.001;  // BasicConv2d's BatchNorm2d(eps=0.001)
  return net.conv_bn_relu(x, prefix + ".conv", prefix + ".bn", prefix + ".relu", spec,
                          kBasicConvEpsilon);
}

}  // namespace detail
}  // namespace tessel::zoo
