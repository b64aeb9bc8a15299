// Speed benchmark of the CPU executors (not a test): one engine, driven line by line on stdin.
//
//   tessel_cpu_bench --model M [--mode int8|fp32] [--input X.npy] [--save-input X.npy]
//                    [--calib-samples N]
//
// Loads and prepares M (zoo name or .onnx), quantizes it for --mode int8 (default config, N
// synthetic calibration samples), runs one warm-up, prints {"ready": ...} and then answers one
// command per stdin line with one JSON line:
//   run            -> {"ms": wall, "cpu_ms": process CPU milliseconds of one Executor::run}
//   profile        -> {"ms": ..., "ms_by_op": {"Conv": ..., ...}} (one run, per-op-kind timing)
//   profile unfused   the same with keep_intermediates (no fusion: every op timed alone)
//   output PATH    -> writes the graph output (float32 .npy, dequantized) and {"written": PATH}
//   quit
// bench/cpu/run.py starts this and onnxruntime (ort_serve.js) side by side and interleaves them.
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/npy.hpp"

namespace {

using namespace tessel;

struct Args {
  std::string model = "resnet50";
  std::string mode = "int8";
  std::string input;
  std::string save_input;
  int calib_samples = 4;
};

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--model") {
      a.model = value;
    } else if (key == "--mode") {
      a.mode = value;
    } else if (key == "--input") {
      a.input = value;
    } else if (key == "--save-input") {
      a.save_input = value;
    } else if (key == "--calib-samples") {
      a.calib_samples = std::stoi(value);
    } else {
      throw std::invalid_argument("unknown option " + key);
    }
  }
  if (a.mode != "int8" && a.mode != "fp32") throw std::invalid_argument("--mode int8|fp32");
  return a;
}

int serve(const Args& args) {
  auto prepared = cpu::prepare_graph(zoo::load_model(args.model));
  if (!prepared) throw std::runtime_error(prepared.reason());
  const ir::Graph float_graph = std::move(prepared.value());
  const std::string input_name = float_graph.op(float_graph.inputs()[0]).outputs[0];
  const std::string output_name = float_graph.outputs().at(0);
  cpu::TensorData input = args.input.empty()
                              ? cpu::default_input(float_graph.tensor(input_name).shape, 0)
                              : cpu::TensorData::from_npy(read_npy(args.input));
  if (!args.save_input.empty()) write_npy(args.save_input, input.to_npy());

  std::optional<cpu::QuantizedModel> quantized;
  if (args.mode == "int8") {
    quant::QuantConfig config;
    config.calibration_samples = args.calib_samples;
    auto q = cpu::quantize_model(float_graph, config, cpu::synthetic_samples(float_graph, config));
    if (!q) throw std::runtime_error(q.reason());
    quantized = std::move(q.value());
  }
  cpu::Executor executor(quantized ? quantized->graph : float_graph);
  const std::map<std::string, cpu::TensorData> feed = {{input_name, input}};

  double cpu_ms = 0.0;  // process CPU time of the last run (all threads)
  const auto run_once = [&](cpu::RunOptions options) {
    const double cpu_start = process_cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    auto result = executor.run(feed, options);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    cpu_ms = process_cpu_ms() - cpu_start;
    if (!result) throw std::runtime_error(result.reason());
    return std::make_pair(ms, std::move(result.value()));
  };
  run_once({});  // warm-up: primitive creation, weight reorders
  std::cout << nlohmann::json{{"ready", args.mode}, {"model", args.model}}.dump() << std::endl;

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "run") {
      const double ms = run_once({}).first;
      std::cout << nlohmann::json{{"ms", ms}, {"cpu_ms", cpu_ms}}.dump() << std::endl;
    } else if (line == "profile" || line == "profile unfused") {
      std::map<std::string, double> seconds;
      cpu::RunOptions options;
      options.seconds_by_op = &seconds;
      options.keep_intermediates = line == "profile unfused";  // every op alone
      const double ms = run_once(options).first;
      nlohmann::json by_op;
      for (const auto& [op, s] : seconds) by_op[op] = s * 1e3;
      std::cout << nlohmann::json{{"ms", ms}, {"cpu_ms", cpu_ms}, {"ms_by_op", by_op}}.dump()
                << std::endl;
    } else if (line.rfind("output ", 0) == 0) {
      const std::string path = line.substr(7);
      auto values = run_once({}).second;
      const auto f = values.at(output_name).to_f32();
      write_npy(path, cpu::TensorData::from_f32(values.at(output_name).shape(), f).to_npy());
      std::cout << nlohmann::json{{"written", path}}.dump() << std::endl;
    } else if (line == "quit") {
      break;
    } else {
      std::cout << nlohmann::json{{"error", "unknown command: " + line}}.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return serve(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "tessel_cpu_bench: " << e.what() << '\n';
    return 1;
  }
}
