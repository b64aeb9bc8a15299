// The quantization config (quant YAML): bits, calibration method and samples, per-layer overrides.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/quant/calibration.hpp"
#include "support/diagnostic.hpp"

namespace tessel::quant {

/// A per-layer setting, keyed by op name in QuantConfig::layers.
struct LayerOverride {
  int bits = 8;             ///< width of the op's weights and of its activation input (8 or 16)
  SourceLocation location;  ///< where the override was written (for "no such op" errors)
};

/// Everything that determines the scales: same model + same QuantConfig -> same q.json.
struct QuantConfig {
  int bits = 8;  ///< default width of activations and weights: 8 or 16
  CalibrationMethod method = CalibrationMethod::percentile;
  double percentile = 99.99;  ///< for method percentile, in (0, 100]
  /// Classes wider than 8 bits: threshold = wide_headroom * max |x| over the samples, whatever
  /// `method` is (docs/quantization.md, "Width-aware thresholds"); 0 applies `method` to them.
  double wide_headroom = 2.0;
  int histogram_bins = 2048;           ///< histogram resolution for percentile/entropy/mse, >= 16
  int calibration_samples = 4;         ///< synthetic samples (or the first N files of --calib)
  std::uint64_t calibration_seed = 1;  ///< sample k uses default_input seed `seed + k`
  /// An activation that is zero on every calibration sample has no range. false: an error
  /// naming the tensor; true: give it scale 1 / qmax (threshold 1.0) and continue.
  bool allow_zero_range = false;
  /// Width of a tensor that only feeds unary functions (tables) and comes from an accumulator:
  /// 16 keeps the requantized value at 16 bits for the table to interpolate; 8 (the default,
  /// or `bits`) leaves it at `bits`. Measured worse with today's 16-bit tables
  /// (docs/quantization.md, "Table inputs"), so off by default.
  int table_input_bits = 8;
  /// Width of a residual stream: a class at `bits` whose tensors are read only by
  /// LayerNormalization/RMSNormalization and Add/Sub, at least one norm among them, and is no
  /// graph output (docs/quantization.md, "Norm inputs"). 8 (the default) leaves it at `bits`.
  int norm_input_bits = 8;
  /// Fold the mean output error of each Conv/Gemm's weight rounding, E[x] . (s_w w_q - w), into
  /// its int32 bias, E[x] per input channel from calibration (docs/quantization.md, "Bias
  /// correction"). Changes only the bias integers.
  bool bias_correction = true;
  std::map<std::string, LayerOverride> layers;  ///< op name -> override
  std::string source;                           ///< the YAML file, "" for defaults
};

/// Reads a quant YAML file. Throws tessel::InputError `FILE:LINE:COL: error: key: message` for
/// unknown keys (with a did-you-mean), wrong types, bits other than 8/16, an unknown method,
/// percentile outside (0, 100], non-positive samples or bins.
QuantConfig load_quant_config(const std::string& path);

/// Same from YAML text; `source_name` is used in diagnostics.
QuantConfig parse_quant_config(const std::string& yaml_text, const std::string& source_name);

/// The config as YAML text (keys in the order above; loads back to an equal config).
std::string to_yaml(const QuantConfig& config);

}  // namespace tessel::quant
