// `tessel quantize`: calibrate and realize a model; write q.json (and a QDQ ONNX model).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "compiler/ir/text.hpp"
#include "compiler/quant/onnx_export.hpp"
#include "compiler/targets/cpu/cli_common.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"

namespace tessel::cpu {
namespace {

struct QuantizeOptions {
  std::string model;
  std::string config;
  std::string calib_dir;
  std::string out;
  std::string export_onnx;
  std::string dump_graph;
  bool export_intermediates = false;
};

int run_quantize(const QuantizeOptions& o) {
  const std::vector<std::string> inputs = {o.model, o.config};
  for (const auto* output : {&o.out, &o.dump_graph, &o.export_onnx})
    files::require_output_distinct(*output, inputs);
  const ir::Graph graph = load_prepared_model(o.model);
  const auto config = load_config_or_default(o.config);
  const auto model =
      quantize_or_throw(graph, config, calibration_samples(graph, o.calib_dir, config), o.model);
  files::write_file(o.out, json_text(model.scales, 1) + '\n', inputs);
  if (!o.dump_graph.empty()) files::write_file(o.dump_graph, ir::to_text(model.graph), inputs);
  if (!o.export_onnx.empty()) {
    quant::OnnxExportOptions options;
    options.expose_intermediates = o.export_intermediates;
    auto exported = quant::export_qdq_onnx(model.graph, options);
    if (!exported) throw_input_error({o.model, 0, 0}, "", exported.reason());
    files::write_file(o.export_onnx, exported.value().bytes, inputs);
    std::cout << "wrote QDQ ONNX (opset " << exported.value().opset << ", "
              << exported.value().intermediates.size() << " intermediate outputs) -> "
              << o.export_onnx << '\n';
  }
  int bits16 = 0;
  for (const int b : model.plan.class_bits) bits16 += b == 16;
  std::cout << "quantized " << graph.name() << ": " << model.plan.classes.size()
            << " activation scales (" << bits16 << " at 16 bits), method "
            << quant::to_string(config.method) << ", " << config.calibration_samples
            << " calibration samples -> " << o.out << '\n';
  return 0;
}

cli::Runner setup_quantize(CLI::App& command) {
  auto o = std::make_shared<QuantizeOptions>();
  command.add_option("--model", o->model, "Zoo model name or .onnx/.tir/.json file")->required();
  command.add_option("--config", o->config, "Quantization YAML (default: built-in defaults)");
  command.add_option("--calib", o->calib_dir,
                     "Folder of .npy calibration inputs (default: seeded)");
  command.add_option("--out", o->out, "Scales JSON to write (q.json)")->required();
  command.add_option("--dump-graph", o->dump_graph, "Also write the quantized graph's text form");
  command.add_option(
      "--export-onnx", o->export_onnx,
      "Also write a QDQ ONNX model (QuantizeLinear/DequantizeLinear) for onnxruntime");
  command.add_flag("--export-intermediates", o->export_intermediates,
                   "With --export-onnx: every integer activation is also a graph output");
  return [o]() { return run_quantize(*o); };
}

const cli::Registration kQuantize{
    {"quantize", "Calibrate and quantize a model; write its scales (q.json)", setup_quantize}};

}  // namespace
}  // namespace tessel::cpu
