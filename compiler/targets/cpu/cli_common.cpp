// Model loading, config and calibration setup shared by the CPU target's commands.
#include "compiler/targets/cpu/cli_common.hpp"

#include "compiler/zoo/load_model.hpp"
#include "support/diagnostic.hpp"

namespace tessel::cpu {

ir::Graph load_prepared_model(const std::string& name_or_path) {
  const ir::Graph graph = zoo::load_model(name_or_path);
  auto prepared = prepare_graph(graph);
  if (!prepared) throw_input_error({name_or_path, 0, 0}, "", prepared.reason());
  return std::move(prepared.value());
}

quant::QuantConfig load_config_or_default(const std::string& path) {
  return path.empty() ? quant::QuantConfig{} : quant::load_quant_config(path);
}

std::vector<Sample> calibration_samples(const ir::Graph& graph, const std::string& calib_dir,
                                        const quant::QuantConfig& config) {
  return calib_dir.empty() ? synthetic_samples(graph, config)
                           : load_calibration_folder(graph, calib_dir, config);
}

QuantizedModel quantize_or_throw(const ir::Graph& graph, const quant::QuantConfig& config,
                                 const std::vector<Sample>& samples, const std::string& model) {
  if (auto errors = quant::override_errors(graph, config); !errors.empty())
    throw InputError(std::move(errors));
  auto quantized = quantize_model(graph, config, samples);
  if (!quantized) throw_input_error({model, 0, 0}, "", quantized.reason());
  return std::move(quantized.value());
}

std::string tensor_file_name(const std::string& tensor) {
  std::string out = tensor;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return out;
}

}  // namespace tessel::cpu
