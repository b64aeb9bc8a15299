// The quantization YAML: defaults, every key, and located errors for bad input.
#include "compiler/quant/config.hpp"

#include <gtest/gtest.h>

namespace tessel::quant {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    (void)parse_quant_config(yaml, "q.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(QuantConfig, EmptyFileGivesDefaults) {
  const auto c = parse_quant_config("", "q.yaml");
  EXPECT_EQ(c.bits, 8);
  EXPECT_EQ(c.method, CalibrationMethod::percentile);
  EXPECT_EQ(c.percentile, 99.99);
  EXPECT_EQ(c.wide_headroom, 2.0);
  EXPECT_EQ(c.calibration_samples, 4);
  EXPECT_FALSE(c.allow_zero_range);
  EXPECT_TRUE(c.bias_correction);
  EXPECT_TRUE(c.layers.empty());
}

TEST(QuantConfig, ReadsEveryKey) {
  const auto c = parse_quant_config(R"(bits: 16
method: kl
percentile: 99.9
wide_headroom: 0
histogram_bins: 1024
calibration:
  samples: 2
  seed: 9
allow_zero_range: true
bias_correction: false
layers:
  conv1:
    bits: 8
)",
                                    "q.yaml");
  EXPECT_EQ(c.bits, 16);
  EXPECT_EQ(c.method, CalibrationMethod::entropy);
  EXPECT_EQ(c.percentile, 99.9);
  EXPECT_EQ(c.wide_headroom, 0.0);
  EXPECT_EQ(c.histogram_bins, 1024);
  EXPECT_EQ(c.calibration_samples, 2);
  EXPECT_EQ(c.calibration_seed, 9u);
  EXPECT_TRUE(c.allow_zero_range);
  EXPECT_FALSE(c.bias_correction);
  ASSERT_EQ(c.layers.count("conv1"), 1u);
  EXPECT_EQ(c.layers.at("conv1").bits, 8);
  EXPECT_EQ(c.layers.at("conv1").location.str(), "q.yaml:12:3");
  EXPECT_EQ(to_yaml(parse_quant_config(to_yaml(c), "x")), to_yaml(c));
}

TEST(QuantConfig, UnknownKeyIsLocatedWithASuggestion) {
  EXPECT_EQ(error_of("bits: 8\nmethd: mse\n"),
            "q.yaml:2:1: error: methd: unknown key; did you mean 'method'? (expected one of: "
            "bits, method, percentile, histogram_bins, calibration, allow_zero_range, layers, "
            "table_input_bits, norm_input_bits, wide_headroom, bias_correction)");
  EXPECT_EQ(error_of("calibration:\n  sample: 3\n"),
            "q.yaml:2:3: error: calibration.sample: unknown key; did you mean 'samples'? "
            "(expected one of: samples, seed)");
  EXPECT_EQ(error_of("layers:\n  conv1:\n    bit: 16\n"),
            "q.yaml:3:5: error: layers.conv1.bit: unknown key; did you mean 'bits'? (expected "
            "one of: bits)");
}

TEST(QuantConfig, BadValuesAreLocated) {
  EXPECT_EQ(error_of("bits: 4\n"), "q.yaml:1:7: error: bits: bits must be 8 or 16, got 4");
  EXPECT_EQ(error_of("bits: eight\n"), "q.yaml:1:7: error: bits: expected an integer, got 'eight'");
  EXPECT_EQ(error_of("method: kld\n"),
            "q.yaml:1:9: error: method: unknown calibration method 'kld' (expected minmax, "
            "percentile, entropy (or kl) or mse); did you mean 'kl'?");
  EXPECT_EQ(error_of("percentile: 0\n"),
            "q.yaml:1:13: error: percentile: must be in (0, 100], got 0");
  EXPECT_EQ(error_of("wide_headroom: 0.5\n"),
            "q.yaml:1:16: error: wide_headroom: must be 0 (off) or in [1, 256], got 0.5");
  EXPECT_EQ(error_of("bias_correction: maybe\n"),
            "q.yaml:1:18: error: bias_correction: expected true or false, got 'maybe'");
  EXPECT_EQ(error_of("calibration:\n  samples: 0\n"),
            "q.yaml:2:12: error: calibration.samples: must be at least 1, got 0");
  EXPECT_EQ(error_of("- 1\n- 2\n"),
            "q.yaml:1:1: error: expected a mapping of quantization settings");
}

TEST(QuantConfig, MissingFileIsAnError) {
  try {
    (void)load_quant_config("/nonexistent/q.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/q.yaml: error: cannot open quantization config");
  }
}

}  // namespace
}  // namespace tessel::quant
