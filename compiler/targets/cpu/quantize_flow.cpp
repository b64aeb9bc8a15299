// The quantization flow: synthetic or .npy calibration samples, two calibration passes, realize.
#include "compiler/targets/cpu/quantize_flow.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <span>

#include "compiler/ir/analysis.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/nhwc_kernels.hpp"
#include "support/cancel.hpp"
#include "support/diagnostic.hpp"
#include "support/npy.hpp"

namespace tessel::cpu {

std::vector<Sample> synthetic_samples(const ir::Graph& graph, const quant::QuantConfig& config) {
  std::vector<Sample> samples;
  for (int k = 0; k < config.calibration_samples; ++k) {
    Sample sample;
    std::uint64_t input_index = 0;
    for (const ir::OpId id : graph.inputs()) {
      // Input i > 0 of a multi-input graph (a KV cache) draws from its own stream.
      const auto& name = graph.op(id).outputs[0];
      sample[name] = default_graph_input(
          graph, name,
          config.calibration_seed + static_cast<std::uint64_t>(k) + (input_index++ << 32));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<Sample> load_calibration_folder(const ir::Graph& graph, const std::string& dir,
                                            const quant::QuantConfig& config) {
  namespace fs = std::filesystem;
  if (graph.inputs().size() != 1)
    throw_input_error({dir, 0, 0}, "",
                      "a calibration folder feeds a single-input graph; '" + graph.name() +
                          "' has " + std::to_string(graph.inputs().size()) + " inputs");
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw_input_error({dir, 0, 0}, "", "calibration folder not found");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".npy")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw_input_error({dir, 0, 0}, "", "no .npy files in the calibration folder");
  if (static_cast<int>(files.size()) > config.calibration_samples)
    files.resize(static_cast<std::size_t>(config.calibration_samples));
  const auto& input = graph.tensor(graph.op(graph.inputs()[0]).outputs[0]);
  std::vector<Sample> samples;
  for (const auto& file : files) {
    const NpyArray array = read_npy(file);
    if (array.dtype != NpyDtype::f32)
      throw_input_error(
          {file, 0, 0}, "header.descr",
          "calibration tensors must be float32, got " + std::string(npy_dtype_name(array.dtype)));
    check_finite(array, file);
    const ir::Shape shape(array.shape.begin(), array.shape.end());
    if (shape != input.shape)
      throw_input_error({file, 0, 0}, "header.shape",
                        "calibration tensor has shape " + ir::shape_string(shape) + " but input %" +
                            input.name + " of '" + graph.name() + "' is " +
                            ir::shape_string(input.shape));
    samples.push_back({{input.name, TensorData::from_npy(array)}});
  }
  return samples;
}

Result<QuantizedModel> quantize_model(const ir::Graph& float_graph,
                                      const quant::QuantConfig& config,
                                      const std::vector<Sample>& samples) {
  auto plan = quant::plan_scales(float_graph, config);
  if (!plan) return fail(plan.reason());
  if (samples.empty()) return fail("calibration needs at least one sample");
  const std::set<std::string> observed(plan.value().observed.begin(), plan.value().observed.end());
  std::map<std::string, quant::TensorStats> stats;
  // The statistics do not depend on element order, so values arrive in the executor's own
  // layout (no transposes). A histogram needs its tensor's max |x| over every sample before it
  // counts a value: the samples run in lockstep (Executor::run_lockstep), each op on every
  // sample before the next op, so when the last sample's value of a tensor arrives its maximum
  // is final and the values of all samples are still in memory, to be counted at once. One run
  // of each sample, and no copies (session 4 kept a copy of every value: 0.4 GB on ResNet-50,
  // whose page faults cost more than the runs). Counts are integers: the order changes none.
  const bool histograms = config.method != quant::CalibrationMethod::minmax;
  std::map<std::string, std::vector<std::span<const float>>> waiting;  // tensor -> samples' values
  const auto observe = [&](std::size_t, const std::string& tensor, const TensorData& value,
                           bool channels_last) -> Status {
    if (!observed.count(tensor)) return {};
    if (value.dtype() != ir::DType::f32) return {};
    const std::span<const float> values(value.data<float>(),
                                        static_cast<std::size_t>(value.size()));
    quant::TensorStats& s = stats[tensor];
    if (auto ok = s.observe_range(values); !ok) {
      std::string reason = ok.reason();
      if (channels_last) {  // name the first bad element in NCHW order, as the contract says
        const auto& shape = value.shape();
        std::vector<float> nchw(values.size());
        nhwc::nhwc_to_nchw(values.data(), nchw.data(), shape[0], shape[1], shape[2] * shape[3],
                           sizeof(float));
        reason = quant::TensorStats().observe_range(nchw).reason();
      }
      return fail("calibration: activation %" + tensor + " holds " + reason +
                  " (check the weights and the calibration inputs)");
    }
    if (config.bias_correction) s.observe_moments(values, value.shape(), channels_last);
    if (!histograms) return {};
    auto& pending = waiting[tensor];
    pending.push_back(values);
    if (pending.size() < samples.size()) return {};
    // A graph input arrives twice per sample (observed directly below, then as the executor's
    // Input op result): both count, as they always have; the histogram starts once.
    if (s.histogram().empty()) s.start_histogram(config.histogram_bins);
    for (const auto& sample_values : pending) s.observe_histogram(sample_values);
    waiting.erase(tensor);
    return {};
  };
  // Graph inputs are not op results of a run: observe them directly.
  for (std::size_t k = 0; k < samples.size(); ++k)
    for (const auto& [name, value] : samples[k])
      if (auto ok = observe(k, name, value, false); !ok)
        return fail(ok.reason() + " in calibration sample " + std::to_string(k));
  {
    Executor executor(float_graph);  // freed before realize: its buffers serve the new graph
    std::size_t failed_sample = 0;
    auto run = executor.run_lockstep(samples, observe, &failed_sample);
    if (!run)
      return fail(run.reason() + " (calibration sample " + std::to_string(failed_sample) + ")");
  }
  QuantizedModel model;
  for (const auto& tensor : plan.value().observed) {
    if (cancel_requested()) return cancelled();  // a histogram search per tensor
    const int bits = plan.value().class_bits[plan.value().class_of.at(tensor)];
    model.tensor_thresholds[tensor] = quant::choose_threshold(
        stats[tensor], {config.method, config.percentile, bits, config.wide_headroom});
    model.tensor_mean_squares[tensor] = stats[tensor].mean_square();
    if (config.bias_correction) model.tensor_moments[tensor] = stats[tensor].moments();
  }
  auto thresholds = quant::class_thresholds(plan.value(), model.tensor_thresholds, config);
  if (!thresholds) return fail(thresholds.reason());
  auto graph =
      quant::realize(float_graph, plan.value(), thresholds.value(), &model.tensor_mean_squares,
                     config.bias_correction ? &model.tensor_moments : nullptr);
  if (!graph) return fail(graph.reason());
  model.graph = std::move(graph.value());
  model.plan = std::move(plan.value());
  model.thresholds = std::move(thresholds.value());
  model.scales = quant::scales_json(model.graph, config, model.plan, model.thresholds);
  return model;
}

Result<ir::Graph> prepare_graph(const ir::Graph& graph) {
  ir::Graph prepared = graph;
  if (auto ok = passes::prepare_for_quantization(prepared); !ok) return fail(ok.reason());
  return prepared;
}

double sqnr_db(const std::vector<float>& reference, const std::vector<float>& test) {
  double signal = 0.0, noise = 0.0;
  for (std::size_t i = 0; i < reference.size() && i < test.size(); ++i) {
    signal += double{reference[i]} * reference[i];
    const double d = double{reference[i]} - test[i];
    noise += d * d;
  }
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

}  // namespace tessel::cpu
