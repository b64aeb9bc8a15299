// Built-in model zoo: torchvision-exact topologies with deterministic seeded weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::zoo {

/// How a zoo model is built.
struct ZooOptions {
  std::int64_t batch = 1;     ///< N of the input
  std::uint64_t seed = 0;     ///< weight seed; weights are a pure function of (seed, tensor, index)
  bool with_weights = true;   ///< false: constants carry shapes only (fast; for counting and
                              ///< scheduling studies where values do not matter)
  std::int64_t sequence = 0;  ///< tokens of a transformer's input (0: the model's default)
  std::int64_t kv_length = 0;  ///< a decode graph's KV cache length (0: the model's default)
  std::int64_t layers = 0;     ///< layers of a transformer stack (bert_base, gpt2; 0: the model's)
};

/// One zoo entry.
struct ModelInfo {
  std::string name;     ///< "resnet18"
  std::string summary;  ///< one line
  bool tiny;            ///< a few-KB test net
  /// Whether the accelerator path (scheduler, codegen, simulator) runs it yet; the golden
  /// executors run every model.
  bool accelerated = true;
};

/// Every model, full-size first, then the tiny test nets.
const std::vector<ModelInfo>& models();
/// Names of models() in order.
std::vector<std::string> model_names();
bool is_zoo_model(const std::string& name);

/// Builds a model: a validated graph with every shape inferred, input `input` (NCHW f32,
/// 224x224 except inception_v3's 299x299), one output (logits, or the tiny net's result).
/// Fails for an unknown name ("unknown model 'resnet81'; did you mean 'resnet18'?") or a batch
/// below 1.
///
/// Full-size models, eval mode, topology exactly torchvision 0.14's (names follow its module
/// paths: `layer1.0.conv1.weight`): resnet18, resnet50, vgg19, googlenet (no aux heads,
/// transform_input=False), inception_v3 (no aux head, 299x299), mobilenet_v2. Dropout is the
/// identity in eval mode and is left out; AdaptiveAvgPool2d((1,1)) is GlobalAveragePool and
/// VGG's AdaptiveAvgPool2d((7,7)) on a 7x7 map is AveragePool 1x1, and Inception-v3's nested
/// torch.cat in InceptionE is one 6-input Concat, as torch.onnx exports them.
/// Tiny nets: tiny_conv, tiny_residual, tiny_inception, tiny_mlp, tiny_depthwise, ...,
/// tiny_attention (one post-norm encoder layer at sequence 16, d 32).
///
/// Weights: He-normal, std = sqrt(gain / fan_in), gain 2 before a ReLU and 1 otherwise (the
/// classifier, linear bottlenecks); biases N(0, 0.01^2); BatchNorm gamma = 1 + 0.1 n,
/// beta = 0.05 n, mean = 0.05 n, var = exp(0.1 n) with n ~ N(0,1) per channel; the last BN of
/// a residual branch has gamma centred on 0.5 so that activations grow slowly (x1.25 in
/// variance per block) instead of doubling at every residual add.
Result<ir::Graph> build_model(const std::string& name, const ZooOptions& options = {});

}  // namespace tessel::zoo
