// Outside oracle (b): onnxruntime on the six torchvision exports, fp32 and our QDQ int8 export.
//
// Needs the cached exports (.cache/models/*.onnx, experiments/models/export_torchvision.py) and
// onnxruntime-node (tests/oracles/setup_ort.sh); skipped with a message naming the missing piece.
// Label `slow`: each model runs once, batch 1, on the default input (seed 0).
//
// - fp32: Tessel's fp32 executor vs onnxruntime on the original .onnx file: max |diff| <=
//   1e-4 x the output's range.
// - int8: Tessel's golden int8 executor vs onnxruntime running `export_qdq_onnx` of the same
//   quantized graph (percentile calibration, one seeded synthetic sample). Every integer
//   activation is compared in LSBs, twice: end to end (onnxruntime's own values flow through
//   its graph, so a 1-LSB difference can grow downstream) and with layers isolated (each layer
//   fed our input to it), where the +-1 LSB contract applies: >= 99.9% of the elements of every
//   tensor within +-1 LSB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/quant/onnx_export.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/cli.hpp"
#include "support/npy.hpp"
#include "tests/oracles/ort_support.hpp"

namespace tessel {
namespace {

using namespace oracle;  // NOLINT(google-build-using-namespace): the shared helpers
namespace fs = std::filesystem;
using cpu::TensorData;

struct Loaded {
  ir::Graph graph;
  std::string input;
  TensorData x;
};

Loaded load(const std::string& model) {
  ir::Graph graph = zoo::load_model((cache_dir() / "models" / (model + ".onnx")).string());
  auto prepared = cpu::prepare_graph(graph);
  if (!prepared) throw std::runtime_error(prepared.reason());
  std::string input = prepared.value().op(prepared.value().inputs().at(0)).outputs[0];
  TensorData x = cpu::default_input(prepared.value().tensor(input).shape, 0);
  return {std::move(prepared.value()), input, std::move(x)};
}

// Eight engineers share two cores: oneDNN's OpenMP pool gets two threads unless told otherwise.
const bool kThreadsSet = setenv("OMP_NUM_THREADS", "2", 0) == 0;

class OnnxRuntime : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string why = missing(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
  void TearDown() override { remove_work_dirs_unless_failed(); }
};

TEST_P(OnnxRuntime, Fp32ExecutorMatchesWithinOneTenThousandthOfTheOutputRange) {
  const std::string model = GetParam();
  const fs::path dir = work_dir(model + "_fp32");
  const Loaded m = load(model);
  cpu::Executor executor(m.graph);
  auto ours = executor.run({{m.input, m.x}});
  ASSERT_TRUE(ours.ok()) << ours.reason();
  write_npy((dir / "input.npy").string(), m.x.to_npy());
  ASSERT_NO_FATAL_FAILURE(run_ort(cache_dir() / "models" / (model + ".onnx"),
                                  "--feed " + quoted(m.input + "=" + (dir / "input.npy").string()) +
                                      " --out-dir " + quoted((dir / "ort").string())));
  const auto theirs = read_outputs(dir / "ort");
  for (const auto& name : m.graph.outputs()) {
    ASSERT_TRUE(theirs.count(name)) << "onnxruntime has no output " << name;
    const auto a = ours.value().at(name).to_f32(), b = theirs.at(name).to_f32();
    ASSERT_EQ(a.size(), b.size());
    const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
    double max_diff = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    const double range = static_cast<double>(*hi) - *lo;
    std::cout << model << " fp32 " << name << ": max |diff| " << max_diff << " = "
              << max_diff / range << " x range " << range << '\n';
    RecordProperty("max_diff_over_range", std::to_string(max_diff / range));
    EXPECT_LE(max_diff, 1e-4 * range) << name;
  }
}

TEST_P(OnnxRuntime, Int8ExecutorMatchesTheQdqExportWithinOneLsb) {
  const std::string model = GetParam();
  const fs::path dir = work_dir(model + "_int8");
  const Loaded m = load(model);
  quant::QuantConfig config;  // percentile 99.99, int8
  config.calibration_samples = 1;
  auto quantized = cpu::quantize_model(m.graph, config, cpu::synthetic_samples(m.graph, config));
  ASSERT_TRUE(quantized.ok()) << quantized.reason();
  const ir::Graph& q = quantized.value().graph;
  cpu::Executor executor(q);
  cpu::RunOptions keep;
  keep.keep_intermediates = true;
  auto ours = executor.run({{m.input, m.x}}, keep);
  ASSERT_TRUE(ours.ok()) << ours.reason();
  write_npy((dir / "input.npy").string(), m.x.to_npy());

  // End to end: onnxruntime's values flow through its own graph.
  quant::OnnxExportOptions expose;
  expose.expose_intermediates = true;
  auto whole = quant::export_qdq_onnx(q, expose);
  ASSERT_TRUE(whole.ok()) << whole.reason();
  std::ofstream(dir / "whole.onnx", std::ios::binary) << whole.value().bytes;
  ASSERT_NO_FATAL_FAILURE(
      run_ort(dir / "whole.onnx", "--feed " + quoted(m.input + "=" + (dir / "input.npy").string()) +
                                      " --out-dir " + quoted((dir / "whole").string())));
  const auto end_to_end =
      compare(whole.value().intermediates, ours.value(), read_outputs(dir / "whole"));
  summarize(model, "end to end", end_to_end);

  // Isolated: every layer reads our values of its integer inputs.
  quant::OnnxExportOptions isolate;
  isolate.isolate_layers = true;
  auto isolated = quant::export_qdq_onnx(q, isolate);
  ASSERT_TRUE(isolated.ok()) << isolated.reason();
  std::ofstream(dir / "isolated.onnx", std::ios::binary) << isolated.value().bytes;
  Feeds feeds{{m.input, dir / "input.npy"}};
  for (std::size_t k = 0; k < isolated.value().golden_inputs.size(); ++k) {
    const std::string& t = isolated.value().golden_inputs[k];
    const fs::path file = dir / ("golden" + std::to_string(k) + ".npy");
    write_npy(file.string(), ours.value().at(t).to_npy());
    feeds.emplace_back(quant::golden_input_name(t), file);
  }
  ASSERT_NO_FATAL_FAILURE(
      run_ort(dir / "isolated.onnx", feeds_file_argument(feeds, dir / "feeds.json") +
                                         " --out-dir " + quoted((dir / "isolated").string())));
  const auto layers =
      compare(isolated.value().intermediates, ours.value(), read_outputs(dir / "isolated"));
  summarize(model, "layers isolated", layers);
  for (const auto& row : layers)
    EXPECT_GE(row.fraction(), 0.999) << row.tensor << ": " << row.within_one << " of "
                                     << row.elements << " within +-1 LSB, max " << row.max_lsb;
}

// The CLI path on the tiny nets: `tessel quantize --export-onnx --export-intermediates`, then
// onnxruntime's integer output vs `tessel infer --quantize --raw` (same default input, seed 0).
class QuantizeCliOnnx : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!fs::exists(cache_dir() / "ort" / "node_modules" / "onnxruntime-node"))
      GTEST_SKIP() << "onnxruntime-node not installed (run tests/oracles/setup_ort.sh)";
  }
};

TEST_P(QuantizeCliOnnx, ExportedModelMatchesTheRawInt8OutputWithinOneLsb) {
  const std::string model = GetParam();
  const fs::path dir = work_dir("cli_" + model);
  const std::string onnx = (dir / "q.onnx").string(), raw = (dir / "raw.npy").string();
  ASSERT_EQ(cli::run_args({"quantize", "--model", model, "--out", (dir / "q.json").string(),
                           "--export-onnx", onnx, "--export-intermediates"}),
            0);
  ASSERT_EQ(cli::run_args({"infer", "--model", model, "--quantize", "--raw", "--output", raw}), 0);
  const ir::Graph g = zoo::load_model(model);
  const std::string input = g.op(g.inputs().at(0)).outputs[0];
  write_npy((dir / "input.npy").string(), cpu::default_input(g.tensor(input).shape, 0).to_npy());
  ASSERT_NO_FATAL_FAILURE(run_ort(onnx, "--feed " +
                                            quoted(input + "=" + (dir / "input.npy").string()) +
                                            " --out-dir " + quoted((dir / "ort").string())));
  const auto theirs = read_outputs(dir / "ort");
  const std::string y = g.outputs().at(0) + ".q";
  ASSERT_TRUE(theirs.count(y)) << "no integer output " << y;
  const auto rows = compare({y}, {{y, TensorData::from_npy(read_npy(raw))}}, theirs);
  std::cout << model << ": " << rows[0].within_one << " of " << rows[0].elements
            << " output elements within +-1 LSB, max " << rows[0].max_lsb << " LSB\n";
  EXPECT_GE(rows[0].fraction(), 0.999);
}

INSTANTIATE_TEST_SUITE_P(TinyNets, QuantizeCliOnnx,
                         ::testing::Values("tiny_conv", "tiny_residual", "tiny_inception",
                                           "tiny_depthwise"),
                         [](const auto& param_info) { return param_info.param; });

INSTANTIATE_TEST_SUITE_P(Torchvision, OnnxRuntime,
                         ::testing::Values("resnet18", "resnet50", "vgg19", "googlenet",
                                           "inception_v3", "mobilenet_v2"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tessel
