// The whole post-training quantization flow: calibrate with the fp32 executor, then realize.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/targets/cpu/tensor_data.hpp"
#include "support/result.hpp"

namespace tessel::cpu {

/// One calibration sample: a value per graph input.
using Sample = std::map<std::string, TensorData>;

/// config.calibration_samples synthetic samples: sample k gives graph input i (graph order)
/// default_input(shape, config.calibration_seed + k + i * 2^32) (input 0: seed + k).
std::vector<Sample> synthetic_samples(const ir::Graph& graph, const quant::QuantConfig& config);

/// The `.npy` files of `dir` in name order (at most config.calibration_samples of them), each
/// one sample of the graph's single input. Throws tessel::InputError naming the file when it is
/// not float32 or its shape differs from the input's, and naming the folder when it holds no
/// .npy file or the graph has more than one input.
std::vector<Sample> load_calibration_folder(const ir::Graph& graph, const std::string& dir,
                                            const quant::QuantConfig& config);

/// What the flow produces.
struct QuantizedModel {
  ir::Graph graph;  ///< the quantized graph (docs/quantization.md, "The quantized graph")
  quant::ScalePlan plan;
  std::vector<quant::ClassThreshold> thresholds;
  std::map<std::string, double> tensor_thresholds;    ///< per calibrated tensor
  std::map<std::string, double> tensor_mean_squares;  ///< E[x^2] per calibrated tensor
  /// Per-channel moments per calibrated tensor (config.bias_correction only; else empty)
  std::map<std::string, quant::ChannelMoments> tensor_moments;
  nlohmann::json scales;  ///< q.json
};

/// `float_graph` must be prepared (BatchNorm folded: `prepare_graph`; shapes inferred).
/// Calibrates `float_graph` on `samples` (max |x|, then for histogram methods the histograms;
/// one lockstep run of all samples) and realizes the quantized graph. Deterministic: same graph,
/// config and samples give the same scales. Failures name the op or tensor (NaN/Inf activations,
/// all-zero ranges, unquantizable ops, bad overrides).
Result<QuantizedModel> quantize_model(const ir::Graph& float_graph,
                                      const quant::QuantConfig& config,
                                      const std::vector<Sample>& samples);

/// Makes a loaded model ready for execution and quantization: runs compiler/passes'
/// prepare_for_quantization: fold-batchnorm, which folds every BatchNormalization fed only by a
/// Conv into it (w' = w * g / sqrt(v + eps), b' = (b - mean) * g / sqrt(v + eps) + beta; the
/// Conv keeps its name and output, the BN's readers read the Conv), then the pattern fusions and
/// batchnorm-to-conv for the BNs left (policy_graph.hpp's kQuantizationPreparation); a graph
/// without those patterns is left as fold-batchnorm leaves it.
Result<ir::Graph> prepare_graph(const ir::Graph& graph);

/// SQNR in dB of `test` against `reference`: 10 log10(sum ref^2 / sum (ref - test)^2)
/// (+inf when equal).
double sqnr_db(const std::vector<float>& reference, const std::vector<float>& test);

}  // namespace tessel::cpu
