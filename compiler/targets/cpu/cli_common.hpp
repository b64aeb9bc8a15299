// Shared pieces of `tessel infer` and `tessel quantize`: model loading and quantization setup.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "compiler/quant/config.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"

namespace tessel::cpu {

/// load_model (zoo name, .onnx, .tir, .json) followed by prepare_graph; throws InputError on
/// a bad model and on a failed preparation (naming the model).
ir::Graph load_prepared_model(const std::string& name_or_path);

/// The config from `path` ("" = defaults).
quant::QuantConfig load_config_or_default(const std::string& path);

/// Calibration samples: the .npy files of `calib_dir`, or synthetic ones when it is "".
std::vector<Sample> calibration_samples(const ir::Graph& graph, const std::string& calib_dir,
                                        const quant::QuantConfig& config);

/// quantize_model; bad per-layer overrides throw InputError located in the config file, any
/// other failure an InputError naming the model.
QuantizedModel quantize_or_throw(const ir::Graph& graph, const quant::QuantConfig& config,
                                 const std::vector<Sample>& samples, const std::string& model);

/// A file-system-safe file name for a tensor ("layer1.0/conv:0" -> "layer1.0_conv_0").
std::string tensor_file_name(const std::string& tensor);

}  // namespace tessel::cpu
