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
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/nhwc_kernels.hpp"
#include "support/diagnostic.hpp"
#include "support/npy.hpp"

namespace tessel::cpu {

std::vector<Sample> synthetic_samples(const ir::Graph& graph, const quant::QuantConfig& config) {
  std::vector<Sample> samples;
  for (int k = 0; k < config.calibration_samples; ++k) {
    Sample sample;
    for (const ir::OpId id : graph.inputs()) {
      const auto& name = graph.op(id).outputs[0];
      sample[name] = default_input(graph.tensor(name).shape,
                                   config.calibration_seed + static_cast<std::uint64_t>(k));
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
  Executor executor(float_graph);

  // Pass 1: max |x|. The statistics do not depend on element order, so values arrive in the
  // executor's own layout (no transposes). For the histogram methods pass 2 needs every value
  // again once all maxima are known: pass 1 keeps a copy of each observed value (ResNet-50, 4
  // samples: about 0.4 GB) instead of running the samples a second time, unless that would
  // exceed kKeepBudgetBytes; either way the histograms count the same values.
  const bool histograms = config.method != quant::CalibrationMethod::minmax;
  constexpr std::size_t kKeepBudgetBytes = std::size_t{1} << 30;
  bool keep = histograms;
  std::size_t kept_bytes = 0;
  std::vector<std::pair<std::string, std::vector<float>>> kept;
  RunOptions pass1;
  pass1.layout_observer = [&](const std::string& tensor, const TensorData& value,
                              bool channels_last) -> Status {
    if (!observed.count(tensor)) return {};
    if (value.dtype() != ir::DType::f32) return {};
    const std::span<const float> values(value.data<float>(),
                                        static_cast<std::size_t>(value.size()));
    if (auto ok = stats[tensor].observe_range(values); !ok) {
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
    if (keep) {
      kept_bytes += values.size_bytes();
      if (kept_bytes > kKeepBudgetBytes) {
        keep = false;
        kept = {};
      } else {
        kept.emplace_back(tensor, std::vector<float>(values.begin(), values.end()));
      }
    }
    return {};
  };
  // Graph inputs are not op results of a run: observe them directly.
  for (std::size_t k = 0; k < samples.size(); ++k) {
    for (const auto& [name, value] : samples[k]) {
      if (auto ok = pass1.layout_observer(name, value, false); !ok)
        return fail(ok.reason() + " in calibration sample " + std::to_string(k));
    }
    auto run = executor.run(samples[k], pass1);
    if (!run) return fail(run.reason() + " (calibration sample " + std::to_string(k) + ")");
  }
  if (histograms) {
    for (auto& [name, s] : stats) s.start_histogram(config.histogram_bins);
    if (keep) {
      for (const auto& [tensor, values] : kept) stats[tensor].observe_histogram(values);
      kept = {};
    } else {
      RunOptions pass2;
      pass2.layout_observer = [&](const std::string& tensor, const TensorData& value,
                                  bool) -> Status {
        if (!observed.count(tensor) || value.dtype() != ir::DType::f32) return {};
        stats[tensor].observe_histogram(
            {value.data<float>(), static_cast<std::size_t>(value.size())});
        return {};
      };
      for (const auto& sample : samples) {
        for (const auto& [name, value] : sample)
          if (auto ok = pass2.layout_observer(name, value, false); !ok) return fail(ok.reason());
        auto run = executor.run(sample, pass2);
        if (!run) return fail(run.reason());
      }
    }
  }
  QuantizedModel model;
  for (const auto& tensor : plan.value().observed) {
    const int bits = plan.value().class_bits[plan.value().class_of.at(tensor)];
    model.tensor_thresholds[tensor] =
        quant::choose_threshold(stats[tensor], {config.method, config.percentile, bits});
  }
  auto thresholds = quant::class_thresholds(plan.value(), model.tensor_thresholds, config);
  if (!thresholds) return fail(thresholds.reason());
  auto graph = quant::realize(float_graph, plan.value(), thresholds.value());
  if (!graph) return fail(graph.reason());
  model.graph = std::move(graph.value());
  model.plan = std::move(plan.value());
  model.thresholds = std::move(thresholds.value());
  model.scales = quant::scales_json(model.graph, config, model.plan, model.thresholds);
  return model;
}

Result<ir::Graph> prepare_graph(const ir::Graph& graph) {
  ir::Graph prepared = graph;
  if (auto ok = passes::run_passes(prepared, "fold-batchnorm"); !ok) return fail(ok.reason());
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
