// Sweep specs: axis expansion, enumeration order, stable ids and located errors.
#include "experiments/sweep/spec.hpp"

#include <gtest/gtest.h>

#include <set>

#include "support/diagnostic.hpp"
#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::edge_config_path;

std::string header() {
  return "name: t\nmode: synthetic\nhw: " + edge_config_path() + "\n";
}

/// The first diagnostic of parsing `text` as "spec.yaml", or "" when it parses.
std::string first_error(const std::string& text) {
  try {
    parse_spec(text, "spec.yaml");
  } catch (const InputError& e) {
    return e.diagnostics().front().str();
  }
  return "";
}

TEST(Spec, ProductEnumeratesModelsOuterAxesThenPoliciesInner) {
  const SweepSpec spec = parse_spec(header() +
                                        "models: [m1, m2]\n"
                                        "policies: [p1, p2]\n"
                                        "axes:\n"
                                        "  - product:\n"
                                        "      scratchpads[0].size: [64KiB, 128KiB]\n"
                                        "      dram.bandwidth: [1GB/s, 2GB/s]\n",
                                    "spec.yaml");
  ASSERT_EQ(spec.points.size(), 16u);
  const auto& p = spec.points;
  EXPECT_EQ(p[0].model, "m1");
  EXPECT_EQ(p[0].policy, "p1");
  EXPECT_EQ(p[1].policy, "p2");
  EXPECT_EQ(p[0].config->axes.dump(),
            R"({"scratchpads[0].size":"64KiB","dram.bandwidth":"1GB/s"})");
  EXPECT_EQ(p[2].config->axes.dump(),
            R"({"scratchpads[0].size":"64KiB","dram.bandwidth":"2GB/s"})");
  EXPECT_EQ(p[4].config->axes.dump(),
            R"({"scratchpads[0].size":"128KiB","dram.bandwidth":"1GB/s"})");
  EXPECT_EQ(p[8].model, "m2");
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].index, i);
  ASSERT_TRUE(p[4].config->hw.has_value());
  EXPECT_EQ(p[4].config->hw->scratchpads[0].size_bytes, 131072);
  EXPECT_DOUBLE_EQ(p[2].config->hw->dram.bandwidth_bytes_per_second, 2e9);
  EXPECT_EQ(spec.axis_keys, (std::vector<std::string>{"scratchpads[0].size", "dram.bandwidth"}));
}

TEST(Spec, PointIdsAreDistinctAndStableAcrossParses) {
  const std::string text = header() +
                           "models: [m1, m2]\npolicies: [p1, p2]\n"
                           "axes: {dram.bandwidth: [1GB/s, 2GB/s, 4GB/s]}\n";
  const SweepSpec a = parse_spec(text, "a.yaml");
  const SweepSpec b = parse_spec(text, "b.yaml");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].id, b.points[i].id);
    EXPECT_EQ(a.points[i].id.size(), 16u);
    ids.insert(a.points[i].id);
  }
  EXPECT_EQ(ids.size(), 12u);
}

TEST(Spec, SameHardwareSpeltDifferentlyHasTheSameConfigHashAndId) {
  const SweepSpec a = parse_spec(
      header() + "models: m\npolicies: p\naxes:\n  scratchpads[0].size: [64KiB]\n", "a.yaml");
  const SweepSpec b = parse_spec(
      header() + "models: m\npolicies: p\naxes:\n  scratchpads[0].size: [65536]\n", "b.yaml");
  EXPECT_EQ(a.points[0].config->config_hash, b.points[0].config->config_hash);
  EXPECT_EQ(a.points[0].id, b.points[0].id);
  const SweepSpec c = parse_spec(
      header() + "models: m\npolicies: p\naxes:\n  scratchpads[0].size: [65600]\n", "c.yaml");
  EXPECT_NE(a.points[0].config->config_hash, c.points[0].config->config_hash);
}

TEST(Spec, ModeAndObjectiveArepart_of_the_id) {
  const SweepSpec a = parse_spec(header() + "models: m\npolicies: p\n", "a.yaml");
  const SweepSpec b =
      parse_spec(header() + "models: m\npolicies: p\nobjective: latency\n", "a.yaml");
  EXPECT_EQ(a.points[0].config->config_hash, b.points[0].config->config_hash);
  EXPECT_NE(a.points[0].id, b.points[0].id);
}

// tiles_2d (default true, as `tessel schedule`) is read as a boolean and joins the point id only
// when false; anything else is an error naming the key and its line.
TEST(Spec, Tiles2dIsABooleanAndPartOfTheIdOnlyWhenOff) {
  const SweepSpec a = parse_spec(header() + "models: m\npolicies: p\n", "a.yaml");
  const SweepSpec on = parse_spec(header() + "models: m\npolicies: p\ntiles_2d: true\n", "a.yaml");
  const SweepSpec off =
      parse_spec(header() + "models: m\npolicies: p\ntiles_2d: false\n", "a.yaml");
  EXPECT_TRUE(a.tiles_2d);
  EXPECT_TRUE(on.tiles_2d);
  EXPECT_FALSE(off.tiles_2d);
  EXPECT_EQ(a.points[0].id, on.points[0].id);
  EXPECT_NE(a.points[0].id, off.points[0].id);
  try {
    parse_spec(header() + "models: m\npolicies: p\ntiles_2d: sometimes\n", "a.yaml");
    FAIL() << "tiles_2d: sometimes was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tiles_2d"), std::string::npos) << what;
    EXPECT_NE(what.find("expected true or false"), std::string::npos) << what;
    EXPECT_NE(what.find("a.yaml:"), std::string::npos) << what;
  }
}

TEST(Spec, ZipPairsValuesAndListGivesExplicitPoints) {
  const SweepSpec spec = parse_spec(header() +
                                        "models: m\npolicies: p\n"
                                        "axes:\n"
                                        "  - zip: {matrix.rows: [8, 16], matrix.cols: [8, 16]}\n"
                                        "  - list:\n"
                                        "      - {dram.bandwidth: 1GB/s, dram.latency_ns: 50}\n"
                                        "      - {dram.bandwidth: 3GB/s, dram.latency_ns: 90}\n"
                                        "      - {dram.bandwidth: 5GB/s, dram.latency_ns: 70}\n",
                                    "spec.yaml");
  ASSERT_EQ(spec.points.size(), 6u);
  EXPECT_EQ(spec.points[0].config->axes.dump(),
            R"({"matrix.rows":8,"matrix.cols":8,"dram.bandwidth":"1GB/s","dram.latency_ns":50})");
  EXPECT_EQ(spec.points[5].config->axes.dump(),
            R"({"matrix.rows":16,"matrix.cols":16,"dram.bandwidth":"5GB/s","dram.latency_ns":70})");
}

TEST(Spec, GeometricAndLinearRangesExpandExactly) {
  const SweepSpec spec = parse_spec(
      header() +
          "models: m\npolicies: p\n"
          "axes:\n"
          "  - product:\n      scratchpads[0].size: {from: 65536, to: 8388608, times: 2}\n"
          "  - product: {dram.latency_ns: {from: 0.5, to: 1.5, step: 0.25}}\n",
      "spec.yaml");
  ASSERT_EQ(spec.points.size(), 8u * 5u);
  std::vector<long long> sizes;
  for (std::size_t i = 0; i < spec.points.size(); i += 5) {
    sizes.push_back(spec.points[i].config->axes["scratchpads[0].size"].get<long long>());
  }
  EXPECT_EQ(sizes, (std::vector<long long>{65536, 131072, 262144, 524288, 1048576, 2097152, 4194304,
                                           8388608}));
  std::vector<double> latencies;
  for (std::size_t i = 0; i < 5; ++i) {
    latencies.push_back(spec.points[i].config->axes["dram.latency_ns"].get<double>());
  }
  EXPECT_EQ(latencies, (std::vector<double>{0.5, 0.75, 1.0, 1.25, 1.5}));
}

TEST(Spec, QuantizationAxisChangesTheConfigHash) {
  const SweepSpec spec = parse_spec(header() +
                                        "models: m\npolicies: p\nquantization: {bits: 8}\n"
                                        "axes: {quantization.bits: [8, 16]}\n",
                                    "spec.yaml");
  ASSERT_EQ(spec.points.size(), 2u);
  EXPECT_EQ(spec.points[1].config->quantization.dump(), R"({"bits":16})");
  EXPECT_NE(spec.points[0].config->config_hash, spec.points[1].config->config_hash);
  ASSERT_TRUE(spec.points[0].config->hw.has_value());
  EXPECT_EQ(spec.points[0].config->hw->matrix.input_bits, 8);
  EXPECT_EQ(spec.points[0].config->hw->matrix.weight_bits, 8);
  // docs/config.md: accumulator_bits >= input_bits + weight_bits, so 16-bit data with the base
  // config's 32-bit accumulators is still a valid point, now with 16-bit operands.
  ASSERT_TRUE(spec.points[1].config->hw.has_value());
  EXPECT_EQ(spec.points[1].config->hw->matrix.input_bits, 16);
  EXPECT_EQ(spec.points[1].config->hw->matrix.weight_bits, 16);
}

TEST(Spec, ConfigRejectedByTheValidatorBecomesAnInvalidPointNotAnError) {
  // edge-small has 8 banks x 8 B ports: a size must be a multiple of 64 bytes.
  const SweepSpec spec = parse_spec(header() +
                                        "models: m\npolicies: p\n"
                                        "axes:\n  scratchpads[0].size: [64KiB, 100]\n",
                                    "spec.yaml");
  ASSERT_EQ(spec.points.size(), 2u);
  EXPECT_TRUE(spec.points[0].config->hw.has_value());
  EXPECT_FALSE(spec.points[1].config->hw.has_value());
  EXPECT_EQ(
      spec.points[1].config->hw_invalid_reason.rfind("hw config rejected: scratchpads[0].size", 0),
      0u)
      << spec.points[1].config->hw_invalid_reason;
}

TEST(SpecErrors, UnknownTopLevelKeySuggestsTheClosest) {
  EXPECT_EQ(first_error(header() + "models: m\npolices: p\n"),
            "spec.yaml:5:1: error: polices: unknown spec key; did you mean 'policies'?");
}

TEST(SpecErrors, UnknownModeSuggestsTheClosest) {
  EXPECT_EQ(first_error("mode: analytc\nhw: x\nmodels: m\npolicies: p\n"),
            "spec.yaml:1:7: error: mode: unknown mode 'analytc'; did you mean 'analytic'? (one of "
            "analytic, sim, synthetic)");
}

TEST(SpecErrors, UnknownObjectiveNamesTheFourAndEnergyObjectivesParse) {
  EXPECT_EQ(first_error("mode: analytic\nobjective: enrgy\nhw: x\nmodels: m\npolicies: p\n"),
            "spec.yaml:2:12: error: objective: unknown objective 'enrgy'; did you mean 'energy'? "
            "(one of bytes, latency, energy, edp)");
  for (const char* objective : {"energy", "edp"}) {
    const SweepSpec spec = parse_spec(
        header() + "models: m\npolicies: optimal\nobjective: " + objective + "\n", "a.yaml");
    EXPECT_EQ(spec.objectives, std::vector<std::string>{objective});
    EXPECT_EQ(spec.points[0].objective, objective);
  }
}

// `objectives`: the spec's own list, innermost in the enumeration; the energy objectives pair
// only with optimal and opfusion; a point's id is the one a one-objective spec gives it.
TEST(Spec, ObjectivesListRunsEachPolicyUnderEveryObjectiveItTakes) {
  const SweepSpec spec = parse_spec(
      header() + "models: m\npolicies: [layerwise, optimal]\nobjectives: [bytes, energy, edp]\n",
      "a.yaml");
  EXPECT_EQ(spec.objectives, (std::vector<std::string>{"bytes", "energy", "edp"}));
  ASSERT_EQ(spec.points.size(), 4u);  // layerwise: bytes; optimal: bytes, energy, edp
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"layerwise", "bytes"}, {"optimal", "bytes"}, {"optimal", "energy"}, {"optimal", "edp"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(spec.points[i].index, i);
    EXPECT_EQ(spec.points[i].policy, expected[i].first);
    EXPECT_EQ(spec.points[i].objective, expected[i].second);
  }
  const SweepSpec energy =
      parse_spec(header() + "models: m\npolicies: optimal\nobjective: energy\n", "b.yaml");
  const SweepSpec bytes = parse_spec(header() + "models: m\npolicies: optimal\n", "c.yaml");
  EXPECT_EQ(spec.points[2].id, energy.points[0].id);
  EXPECT_EQ(spec.points[1].id, bytes.points[0].id);
  EXPECT_EQ(bytes.objectives, std::vector<std::string>{"bytes"});  // the default
}

TEST(SpecErrors, ObjectivesListErrorsAreLocatedAtTheEntry) {
  const std::string top = "mode: analytic\nhw: x\nmodels: m\npolicies: [layerwise, optimal]\n";
  EXPECT_EQ(first_error(top + "objectives: [bytes, enrgy]\n"),
            "spec.yaml:5:21: error: objectives[1]: unknown objective 'enrgy'; did you mean "
            "'energy'? (one of bytes, latency, energy, edp)");
  EXPECT_EQ(first_error(top + "objectives: [bytes, latency, bytes]\n"),
            "spec.yaml:5:30: error: objectives[2]: 'bytes' is listed twice");
  EXPECT_EQ(first_error(top + "objectives: []\n"),
            "spec.yaml:5:13: error: objectives: expected a name or a non-empty list of names");
  EXPECT_EQ(first_error(top + "objectives: {bytes: 1}\n"),
            "spec.yaml:5:13: error: objectives: expected a name or a non-empty list of names");
  EXPECT_EQ(first_error(top + "objective: bytes\nobjectives: [latency]\n"),
            "spec.yaml:6:13: error: objectives: give either objective (one name) or objectives "
            "(a list), not both");
  // Checked once the policies are read (after hw, so with a base config that exists).
  EXPECT_EQ(first_error(header() + "models: m\npolicies: [layerwise, fusion]\n"
                                   "objectives: [bytes, edp]\n"),
            "spec.yaml:6:21: error: objectives[1]: objective 'edp' is for the optimal and "
            "opfusion policies; none of the spec's policies (layerwise, fusion) takes it");
  EXPECT_EQ(first_error(header() + "models: m\npolicies: fusion\nobjective: energy\n"),
            "spec.yaml:6:12: error: objective: objective 'energy' is for the optimal and opfusion "
            "policies; none of the spec's policies (fusion) takes it");
}

TEST(SpecErrors, OverrideKeyMissingFromTheBaseConfigIsLocated) {
  EXPECT_EQ(
      first_error(header() +
                  "models: m\npolicies: p\naxes:\n  - product:\n      dram.bandwith: [1GB/s]\n"),
      "spec.yaml:8:7: error: dram.bandwith: in the hw config: 'dram' has no key 'bandwith'; "
      "did you mean 'bandwidth'?");
}

TEST(SpecErrors, ZipOfUnequalLengthsNamesBothAxes) {
  EXPECT_EQ(
      first_error(
          header() +
          "models: m\npolicies: p\naxes:\n  - zip: {matrix.rows: [8, 16], matrix.cols: [8]}\n"),
      "spec.yaml:7:46: error: matrix.cols: zip needs equal lengths: 1 values here, 2 for "
      "'matrix.rows'");
}

TEST(SpecErrors, RepeatedAxisKeyIsRejected) {
  EXPECT_EQ(first_error(header() + "models: m\npolicies: p\naxes:\n  - product: {matrix.rows: "
                                   "[8]}\n  - product: {matrix.rows: [16]}\n"),
            "spec.yaml:8:15: error: matrix.rows: this axis key appears in more than one place");
}

TEST(SpecErrors, BadRangeAndUnknownGroup) {
  EXPECT_EQ(first_error(header() + "models: m\npolicies: p\naxes:\n  - product: {matrix.rows: "
                                   "{from: 8, to: 4, times: 2}}\n"),
            "spec.yaml:7:42: error: matrix.rows.to: is below 'from'");
  EXPECT_EQ(
      first_error(header() + "models: m\npolicies: p\naxes:\n  - prodcut: {matrix.rows: [8]}\n"),
      "spec.yaml:7:5: error: axes[0].prodcut: unknown axis group; did you mean 'product'? (one "
      "of product, zip, list)");
}

TEST(SpecErrors, DuplicateModelAndMissingHwFile) {
  EXPECT_EQ(first_error(header() + "models: [a, b, a]\npolicies: p\n"),
            "spec.yaml:4:16: error: models[2]: 'a' is listed twice");
  EXPECT_EQ(first_error("mode: synthetic\nhw: /no/such.yaml\nmodels: m\npolicies: p\n"),
            "spec.yaml:2:5: error: hw: no such file: /no/such.yaml");
}

TEST(Spec, ModelMappingSetsZooOptionsLabelsAndIds) {
  const SweepSpec spec = parse_spec(header() +
                                        "models:\n"
                                        "  - bert_base\n"
                                        "  - {zoo: bert_base, layers: 1, seq: 128}\n"
                                        "  - {zoo: gpt2, batch: 8, kv_length: 1024, name: g8}\n"
                                        "policies: p\n",
                                    "spec.yaml");
  EXPECT_EQ(spec.models, (std::vector<std::string>{"bert_base", "bert_base-layers1-seq128", "g8"}));
  const ModelSource& plain = spec.model_sources.at("bert_base");
  EXPECT_EQ(plain.source, "bert_base");
  EXPECT_EQ(plain.options_text(), "");
  const ModelSource& bert = spec.model_sources.at("bert_base-layers1-seq128");
  EXPECT_EQ(bert.source, "bert_base");
  EXPECT_EQ(bert.layers, 1);
  EXPECT_EQ(bert.sequence, 128);
  EXPECT_EQ(bert.batch, 1);
  EXPECT_EQ(bert.kv_length, 0);
  const ModelSource& gpt = spec.model_sources.at("g8");
  EXPECT_EQ(gpt.source, "gpt2");
  EXPECT_EQ(gpt.options_text(), "batch=8,kv_length=1024");
  ASSERT_EQ(spec.points.size(), 3u);
  EXPECT_EQ(spec.points[2].model, "g8");
  // A named entry's options join its id: the same name with other options is another point.
  const SweepSpec other = parse_spec(
      header() + "models: [{zoo: gpt2, batch: 1, kv_length: 1024, name: g8}]\npolicies: p\n",
      "spec.yaml");
  EXPECT_NE(other.points[0].id, spec.points[2].id);
  const SweepSpec plain_only = parse_spec(header() + "models: bert_base\npolicies: p\n", "s.yaml");
  EXPECT_EQ(plain_only.points[0].id, spec.points[0].id);
}

TEST(SpecErrors, ModelMappingErrorsAreLocated) {
  EXPECT_EQ(first_error(header() + "models: [{zoo: gpt2, seqs: 4}]\npolicies: p\n"),
            "spec.yaml:4:22: error: models[0].seqs: unknown model key; did you mean 'seq'? (zoo, "
            "name, batch, seq, kv_length, layers)");
  EXPECT_EQ(first_error(header() + "models: [{layers: 1}]\npolicies: p\n"),
            "spec.yaml:4:10: error: models[0].zoo: missing; the zoo model's name");
  EXPECT_EQ(first_error(header() + "models: [{zoo: gpt2, batch: 0}]\npolicies: p\n"),
            "spec.yaml:4:29: error: models[0].batch: expected a whole number >= 1");
  EXPECT_EQ(first_error(header() + "models: [{zoo: gpt2, layers: 1.5}]\npolicies: p\n"),
            "spec.yaml:4:30: error: models[0].layers: expected a whole number >= 1");
  EXPECT_EQ(first_error(header() + "models: [gpt2-layers1, {zoo: gpt2, layers: 1}]\npolicies: p\n"),
            "spec.yaml:4:24: error: models[1]: 'gpt2-layers1' is listed twice");
}

}  // namespace
}  // namespace tessel::sweep
