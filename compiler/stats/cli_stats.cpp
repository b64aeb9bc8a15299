// `tessel stats`: per-layer and per-type compute and memory figures of a model.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "compiler/stats/stats.hpp"
#include "compiler/zoo/cli_model_options.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/json_text.hpp"

namespace tessel {
namespace {

cli::Runner setup_stats(CLI::App& command) {
  auto model = std::make_shared<zoo::ModelOptionValues>();
  auto bits = std::make_shared<int>(8);
  auto by_type = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto fused_bn = std::make_shared<bool>(false);
  model->add_to(command);
  command.add_option("--bits", *bits, "Bits per element of activations and weights (8, 16, 32)")
      ->capture_default_str();
  command.add_flag("--by-type", *by_type,
                   "Per Caffe layer type, beside the Deep Fusion paper's Table 1 (ResNet-18)");
  command.add_flag("--json", *json, "Print JSON (layers, by_type, totals, paper_table1)");
  command.add_flag("--fused-bn", *fused_bn,
                   "Count BatchNormalization as one layer (default: Caffe's BatchNorm + Scale)");
  return [=]() {
    model->no_weights = true;  // statistics need shapes only
    const ir::Graph graph = model->load();
    stats::StatsOptions options;
    options.bits = *bits;
    options.caffe_batchnorm = !*fused_bn;
    auto computed = stats::compute_stats(graph, options);
    if (!computed) throw_input_error({}, "--bits", computed.reason());
    if (*json) {
      std::cout << tessel::json_text(stats::to_json(computed.value(), *by_type), 1) << "\n";
    } else if (*by_type) {
      std::cout << computed.value().model << ", " << *bits << "-bit, "
                << (options.caffe_batchnorm ? "BatchNorm counted as BatchNorm + Scale (Caffe)"
                                            : "BatchNorm as one layer")
                << "\n"
                << stats::format_by_type(computed.value(), true);
    } else {
      std::cout << stats::format_layers(computed.value());
    }
    return 0;
  };
}

const cli::Registration kStats{
    {"stats", "MACs, parameters, bytes and compute-to-memory ratio per layer and per type",
     setup_stats}};

}  // namespace
}  // namespace tessel
