// NetBuilder: terse layer-by-layer construction of zoo graphs with shapes and seeded weights.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::zoo {

/// Geometry of a convolution layer (PyTorch's Conv2d arguments).
struct ConvSpec {
  std::int64_t out_channels;
  std::int64_t kernel_h, kernel_w;
  std::int64_t stride = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t group = 1;
  bool bias = false;
  double gain = 2.0;  ///< He gain: 2 when a ReLU follows, 1 for a linear layer
};

/// Square kernel, symmetric padding.
inline ConvSpec conv_spec(std::int64_t out_channels, std::int64_t kernel, std::int64_t stride = 1,
                          std::int64_t pad = 0) {
  return {out_channels, kernel, kernel, stride, pad, pad};
}

/// Builds a graph layer by layer; each method adds one op named `name` whose output tensor is
/// also `name`, infers its shape at once and returns the output name. Parameters are named
/// `<name>.weight`, `<name>.bias`, `<name>.running_mean`, ... as in a torchvision state dict.
/// Misuse (a shape that does not fit) is a programming error of the zoo: std::logic_error.
class NetBuilder {
 public:
  NetBuilder(std::string graph_name, const ZooOptions& options);

  std::string input(const std::string& name, std::int64_t channels, std::int64_t height,
                    std::int64_t width);
  std::string conv(const std::string& x, const std::string& name, const ConvSpec& spec);
  /// BatchNormalization with torchvision's tensor names; `gamma_centre` shifts gamma's mean.
  std::string batch_norm(const std::string& x, const std::string& name, double epsilon = 1e-5,
                         double gamma_centre = 1.0);
  std::string relu(const std::string& x, const std::string& name);
  std::string clip(const std::string& x, const std::string& name, double min, double max);
  std::string add(const std::string& a, const std::string& b, const std::string& name);
  std::string concat(const std::vector<std::string>& xs, const std::string& name);
  std::string max_pool(const std::string& x, const std::string& name, std::int64_t kernel,
                       std::int64_t stride, std::int64_t pad = 0, bool ceil_mode = false);
  std::string average_pool(const std::string& x, const std::string& name, std::int64_t kernel,
                           std::int64_t stride, std::int64_t pad = 0,
                           bool count_include_pad = true);
  std::string global_average_pool(const std::string& x, const std::string& name);
  std::string flatten(const std::string& x, const std::string& name);
  /// Linear layer as Gemm(transB=1): weight [out, in], bias [out].
  std::string linear(const std::string& x, const std::string& name, std::int64_t out_features,
                     double gain = 1.0);
  std::string softmax(const std::string& x, const std::string& name);

  /// conv (no bias) -> BatchNorm -> ReLU, torchvision's BasicConv2d/ConvBNReLU; the ops are
  /// `<prefix>.conv`/`<prefix>.bn`/`<prefix>.relu` unless names are given.
  std::string conv_bn_relu(const std::string& x, const std::string& conv_name,
                           const std::string& bn_name, const std::string& relu_name,
                           const ConvSpec& spec, double epsilon = 1e-5);

  // --- transformer and modern-CNN layers -------------------------------------------------
  /// A graph input of any shape (the batch is not applied: give it in `shape`).
  std::string input_shaped(const std::string& name, ir::Shape shape);
  /// A graph input of token ids (i32, any shape): what an Embedding reads.
  std::string input_ids(const std::string& name, ir::Shape shape);
  /// A seeded N(mean, std_dev^2) parameter; returns its name.
  std::string parameter(const std::string& name, ir::Shape shape, double mean, double std_dev);
  /// A constant with the given values (not seeded: masks, rotary tables, scalars), kept in
  /// shape-only graphs too (the scheduler reads a causal mask's band from it).
  std::string constant(const std::string& name, ir::Shape shape, std::vector<float> values);
  /// Any op with one output named `name`.
  std::string op(const std::string& name, ir::OpKind kind, std::vector<std::string> inputs,
                 ir::Attrs attrs = {});
  /// nn.Linear on the last axis of a tensor of any rank: Gemm(transB=1) with `<name>.weight`
  /// [out, in] (and `<name>.bias`), reshaped to 2-D and back around it when the rank is not 2
  /// (as the importer lowers an exported MatMul by a constant).
  std::string dense(const std::string& x, const std::string& name, std::int64_t out_features,
                    double gain = 1.0, bool bias = true);
  /// The same Linear by an existing [out, in] `weight` (a tied weight: GPT-2's LM head by its
  /// token table) and an optional existing `bias`.
  std::string linear_by(const std::string& x, const std::string& name, const std::string& weight,
                        const std::string& bias = "");
  /// nn.LayerNorm over the last axis (`<name>.weight` ~ 1, `<name>.bias` ~ 0).
  std::string layer_norm(const std::string& x, const std::string& name, double epsilon);
  /// Llama's RMSNorm over the last axis (`<name>.weight` ~ 1).
  std::string rms_norm(const std::string& x, const std::string& name, double epsilon);
  std::string reshape(const std::string& x, const std::string& name, ir::Shape shape);
  std::string transpose(const std::string& x, const std::string& name,
                        std::vector<std::int64_t> perm);
  std::string matmul(const std::string& a, const std::string& b, const std::string& name);
  std::string softmax_axis(const std::string& x, const std::string& name, std::int64_t axis);
  /// Slice along one axis: elements [start, end).
  std::string slice(const std::string& x, const std::string& name, std::int64_t axis,
                    std::int64_t start, std::int64_t end);
  /// Concat along any axis.
  std::string concat_axis(const std::vector<std::string>& xs, const std::string& name,
                          std::int64_t axis);

  const ir::Shape& shape(const std::string& tensor) const;
  std::int64_t channels(const std::string& tensor) const { return shape(tensor).at(1); }

  /// Sets the outputs, validates and returns the graph.
  ir::Graph finish(const std::vector<std::string>& outputs);

 private:
  std::string add_op(ir::Op op);
  /// A constant of `shape` filled by `value(i)` (or shape-only without weights).
  void add_parameter(const std::string& name, ir::Shape shape, double mean, double std_dev);
  void add_positive_parameter(const std::string& name, ir::Shape shape, double log_std);

  ir::Graph graph_;
  ZooOptions options_;
};

}  // namespace tessel::zoo
