// Quantization figures (a benchmark, not a test): SQNR of int8 vs fp32 per model and calibration
// method, and executor speed (int8 vs fp32) on one model.
//
//   quant_bench sqnr [--samples N] [MODEL ...]      (default: the six zoo models)
//   quant_bench speed [--runs N] [--save-input X.npy] [MODEL]   (default: resnet50)
//
// Prints a table and one JSON object per line (model, method, sqnr_db / ms per run).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/npy.hpp"
#include "support/version.hpp"

namespace {

using namespace tessel;

ir::Graph load(const std::string& name) {
  auto prepared = cpu::prepare_graph(zoo::load_model(name));
  if (!prepared) throw std::runtime_error(prepared.reason());
  return std::move(prepared.value());
}

// The input shifts of a quantized graph's Conv/Gemm/MatMul ops (docs/quantization.md, "Input
// shift on Conv/Gemm"): how many layers shift, and the histogram "u:count".
std::string input_shifts(const ir::Graph& q, int& shifted) {
  std::map<std::int64_t, int> count;
  shifted = 0;
  for (ir::OpId id = 0; id < q.num_ops(); ++id) {
    const ir::Op& op = q.op(id);
    if (op.kind != ir::OpKind::Conv && op.kind != ir::OpKind::Gemm && op.kind != ir::OpKind::MatMul)
      continue;
    const std::int64_t u = op.get_int("input_shift");
    ++count[u];
    shifted += u > 0;
  }
  std::string text;
  for (const auto& [u, n] : count)
    text += (text.empty() ? "" : " ") + std::to_string(u) + ":" + std::to_string(n);
  return text;
}

// bits 0: int8 under the four methods; else `bits` under the default method only.
int sqnr(int samples, int bits, std::vector<std::string> models) {
  if (models.empty())
    models = {"resnet18", "resnet50", "vgg19", "googlenet", "inception_v3", "mobilenet_v2"};
  std::vector<quant::CalibrationMethod> methods = {
      quant::CalibrationMethod::minmax, quant::CalibrationMethod::percentile,
      quant::CalibrationMethod::entropy, quant::CalibrationMethod::mse};
  if (bits > 0) methods = {quant::QuantConfig{}.method};
  std::cout << std::left << std::setw(14) << "model";
  for (auto m : methods) std::cout << std::setw(12) << quant::to_string(m);
  std::cout << "(SQNR dB, int" << (bits > 0 ? bits : 8) << " vs fp32, default input)\n";
  for (const auto& name : models) {
    const ir::Graph g = load(name);
    const std::string input = g.op(g.inputs()[0]).outputs[0];
    const std::string output = g.outputs()[0];
    const auto x = cpu::default_input(g.tensor(input).shape, 0);
    cpu::Executor fp32(g);
    auto ref = fp32.run({{input, x}});
    if (!ref) throw std::runtime_error(ref.reason());
    const auto reference = ref.value().at(output).to_f32();
    std::cout << std::setw(14) << name << std::flush;
    std::map<std::string, double> max_abs;  // minmax runs first: its thresholds are max |x|
    for (auto method : methods) {
      quant::QuantConfig config;
      config.method = method;
      config.calibration_samples = samples;
      if (bits > 0) config.bits = bits;
      auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
      if (!q) throw std::runtime_error(q.reason());
      int shifted = 0;
      const std::string shifts = input_shifts(q.value().graph, shifted);
      cpu::Executor int8(q.value().graph);
      auto got = int8.run({{input, x}});
      if (!got) throw std::runtime_error(got.reason());
      const double db = cpu::sqnr_db(reference, got.value().at(output).to_f32());
      // How much each method clips: the median over tensors of threshold / max |x|.
      if (method == quant::CalibrationMethod::minmax) max_abs = q.value().tensor_thresholds;
      std::vector<double> ratios;
      std::string most_clipped;
      double least_ratio = 2.0;
      for (const auto& [tensor, t] : q.value().tensor_thresholds)
        if (max_abs.count(tensor) && max_abs.at(tensor) > 0.0) {
          ratios.push_back(t / max_abs.at(tensor));
          if (ratios.back() < least_ratio) {
            least_ratio = ratios.back();
            most_clipped = tensor;
          }
        }
      std::sort(ratios.begin(), ratios.end());
      const double median_ratio = ratios.empty() ? 0.0 : ratios[ratios.size() / 2];
      std::cout << std::setw(12) << std::fixed << std::setprecision(2) << db << std::flush;
      std::cerr << nlohmann::json{{"model", name},
                                  {"tool_version", tessel::version()},
                                  {"bits", config.bits},
                                  {"method", std::string(quant::to_string(method))},
                                  {"samples", samples},
                                  {"shifted_layers", shifted},
                                  {"input_shifts", shifts},
                                  {"sqnr_db", db},
                                  {"median_threshold_over_max", median_ratio},
                                  {"least_threshold_over_max", least_ratio},
                                  {"most_clipped_tensor", most_clipped}}
                       .dump()
                << '\n';
    }
    std::cout << '\n';
  }
  return 0;
}

double time_ms(cpu::Executor& executor, const std::map<std::string, cpu::TensorData>& feed,
               int runs) {
  (void)executor.run(feed);  // warm-up: primitive creation, weight reorders
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    auto r = executor.run(feed);
    if (!r) throw std::runtime_error(r.reason());
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count() /
         runs;
}

int speed(int runs, const std::string& name, const std::string& save_input) {
  const ir::Graph g = load(name);
  const std::string input = g.op(g.inputs()[0]).outputs[0];
  const std::map<std::string, cpu::TensorData> feed = {
      {input, cpu::default_input(g.tensor(input).shape, 0)}};
  if (!save_input.empty()) write_npy(save_input, feed.at(input).to_npy());
  quant::QuantConfig config;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  if (!q) throw std::runtime_error(q.reason());
  cpu::Executor fp32(g), int8(q.value().graph);
  const double fp32_ms = time_ms(fp32, feed, runs);
  const double int8_ms = time_ms(int8, feed, runs);
  if (!save_input.empty()) {  // the outputs beside the input, for the onnxruntime comparison
    const std::string output = g.outputs()[0];
    write_npy(save_input + ".fp32_out.npy", fp32.run(feed).value().at(output).to_npy());
    write_npy(save_input + ".int8_out.npy", int8.run(feed).value().at(output).to_npy());
  }
  std::cout << name << " batch 1, " << runs << " runs: tessel fp32 " << std::fixed
            << std::setprecision(1) << fp32_ms << " ms, tessel int8 " << int8_ms << " ms\n";
  std::cerr << nlohmann::json{{"model", name},
                              {"runs", runs},
                              {"tessel_fp32_ms", fp32_ms},
                              {"tessel_int8_ms", int8_ms}}
                   .dump()
            << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || (args[0] != "sqnr" && args[0] != "speed")) {
    std::cerr << "usage: quant_bench sqnr [--samples N] [--bits B] [MODEL ...] | speed [--runs N] "
                 "[MODEL]\n";
    return 2;
  }
  int count = args[0] == "sqnr" ? 4 : 10;
  std::vector<std::string> models;
  std::string save_input;
  int bits = 0;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if ((args[i] == "--samples" || args[i] == "--runs") && i + 1 < args.size())
      count = std::atoi(args[++i].c_str());
    else if (args[i] == "--bits" && i + 1 < args.size())
      bits = std::atoi(args[++i].c_str());
    else if (args[i] == "--save-input" && i + 1 < args.size())
      save_input = args[++i];
    else
      models.push_back(args[i]);
  }
  try {
    return args[0] == "sqnr" ? sqnr(count, bits, models)
                             : speed(count, models.empty() ? "resnet50" : models[0], save_input);
  } catch (const std::exception& e) {
    std::cerr << "quant_bench: " << e.what() << '\n';
    return 1;
  }
}
