// `tessel infer`: run a model on the fp32 or the quantized (golden) executor.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "compiler/targets/cpu/cli_common.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/npy.hpp"
#include "support/strings.hpp"

namespace tessel::cpu {
namespace {

struct InferOptions {
  std::string model;
  std::string quant_config;
  bool quantize = false;
  std::string calib_dir;
  std::vector<std::string> inputs;  ///< FILE, or NAME=FILE per graph input
  std::string output;
  bool raw = false;
  std::string dump_dir;
};

TensorData read_input(const ir::Tensor& input, const std::string& model, const std::string& path) {
  const NpyArray array = read_npy(path);
  // Token ids (an i32 input) come as int32; every other input as float32.
  const NpyDtype wanted = input.dtype == ir::DType::i32 ? NpyDtype::i32 : NpyDtype::f32;
  if (array.dtype != wanted)
    throw_input_error({path, 0, 0}, "header.descr",
                      "the network input %" + input.name + " must be " +
                          std::string(npy_dtype_name(wanted)) + ", got " +
                          std::string(npy_dtype_name(array.dtype)));
  if (wanted == NpyDtype::f32) check_finite(array, path);
  const ir::Shape shape(array.shape.begin(), array.shape.end());
  if (shape != input.shape)
    throw_input_error({path, 0, 0}, "header.shape",
                      "input has shape " + ir::shape_string(shape) + " but %" + input.name +
                          " of '" + model + "' is " + ir::shape_string(input.shape));
  return TensorData::from_npy(array);
}

/// A value for every graph input: `--input FILE` (a single-input graph) or `--input NAME=FILE`
/// per input; an input not given gets the seeded default, input k (graph order) with seed k.
std::map<std::string, TensorData> load_inputs(const ir::Graph& graph,
                                              const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  std::vector<std::string> names;
  for (const ir::OpId id : graph.inputs()) names.push_back(graph.op(id).outputs[0]);
  for (const std::string& spec : specs) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      if (names.size() != 1)
        throw_input_error({graph.name(), 0, 0}, "--input",
                          "the model has " + std::to_string(names.size()) +
                              " inputs; give each as --input NAME=FILE");
      files[names[0]] = spec;
      continue;
    }
    const std::string name = spec.substr(0, eq);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw_input_error({graph.name(), 0, 0}, "--input",
                        "'" + name + "' is not an input of the model" + did_you_mean(name, names));
    files[name] = spec.substr(eq + 1);
  }
  std::map<std::string, TensorData> values;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const ir::Tensor& input = graph.tensor(names[k]);
    const auto it = files.find(names[k]);
    values[names[k]] = it == files.end() ? default_graph_input(graph, names[k], k)
                                         : read_input(input, graph.name(), it->second);
  }
  return values;
}

int run_infer(const InferOptions& o) {
  std::vector<std::string> input_files = {o.model, o.quant_config};
  for (const std::string& spec : o.inputs)  // FILE or NAME=FILE
    input_files.push_back(spec.find('=') == std::string::npos ? spec
                                                              : spec.substr(spec.find('=') + 1));
  files::require_output_distinct(o.output, input_files);
  if (!o.dump_dir.empty()) files::require_output_distinct(o.dump_dir, input_files);
  const ir::Graph float_graph = load_prepared_model(o.model);
  const std::map<std::string, TensorData> inputs = load_inputs(float_graph, o.inputs);
  const std::string output_name = float_graph.outputs().at(0);

  std::optional<QuantizedModel> quantized;
  if (o.quantize) {
    const auto config = load_config_or_default(o.quant_config);
    quantized = quantize_or_throw(float_graph, config,
                                  calibration_samples(float_graph, o.calib_dir, config), o.model);
  }
  const ir::Graph& graph = quantized ? quantized->graph : float_graph;

  RunOptions options;
  if (!o.dump_dir.empty()) {
    files::make_directory(o.dump_dir);
    options.observer = [&](const std::string& tensor, const TensorData& value) -> Status {
      write_npy((std::filesystem::path(o.dump_dir) / (tensor_file_name(tensor) + ".npy")).string(),
                value.to_npy(), input_files);
      return {};
    };
    for (const auto& [name, value] : inputs) options.observer(name, value).ok();
  }
  options.keep_intermediates = o.raw;
  Executor executor(graph);
  auto result = executor.run(inputs, options);
  if (!result) throw_input_error({o.model, 0, 0}, "", result.reason());
  auto& values = result.value();
  const TensorData& output = (o.raw && quantized && values.count(output_name + ".q"))
                                 ? values.at(output_name + ".q")
                                 : values.at(output_name);
  write_npy(o.output, output.to_npy(), input_files);

  const auto f = output.to_f32();
  const auto [lo, hi] = std::minmax_element(f.begin(), f.end());
  std::cout << "model " << graph.name() << (quantized ? " (quantized)" : " (fp32)") << ": output %"
            << output_name << " " << ir::to_string(output.dtype())
            << ir::shape_string(output.shape()) << " range [" << *lo << ", " << *hi << "] -> "
            << o.output << '\n';
  if (quantized) {
    // The fp32 reference on the same input, for the SQNR the quantization costs.
    Executor reference(float_graph);
    auto ref = reference.run(inputs);
    if (ref) {
      const auto q = values.at(output_name).to_f32();
      std::cout << "SQNR vs fp32: " << std::fixed << std::setprecision(2)
                << sqnr_db(ref.value().at(output_name).to_f32(), q) << " dB\n";
    }
  }
  return 0;
}

cli::Runner setup_infer(CLI::App& command) {
  auto o = std::make_shared<InferOptions>();
  command.add_option("--model", o->model, "Zoo model name or .onnx/.tir/.json file")->required();
  command
      .add_option("--quantize", o->quant_config,
                  "Run the quantized (integer) golden model; optional quantization YAML")
      ->expected(0, 1)
      ->default_str("");
  command.add_option("--calib", o->calib_dir,
                     "Folder of .npy calibration inputs (default: seeded)");
  command.add_option("--input", o->inputs,
                     "Input .npy (float32), or NAME=FILE per input of a multi-input model "
                     "(default: seeded, input k with seed k)");
  command.add_option("--output", o->output, "Output .npy")->required();
  command.add_flag("--raw", o->raw, "Write the integer output tensor instead of dequantizing");
  command.add_option("--dump-dir", o->dump_dir, "Write every intermediate tensor as .npy here");
  return [o, &command]() {
    o->quantize = command.count("--quantize") > 0;
    return run_infer(*o);
  };
}

const cli::Registration kInfer{
    {"infer", "Run a model on the fp32 or quantized CPU executor (the golden model)", setup_infer}};

}  // namespace
}  // namespace tessel::cpu
