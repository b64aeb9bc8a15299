// The --model family of CLI options, shared by every command that takes a network.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "compiler/zoo/load_model.hpp"
#include "support/diagnostic.hpp"

namespace tessel::zoo {

/// Values of the model options; owned by the command's Runner through a shared_ptr.
struct ModelOptionValues {
  std::string model;
  std::int64_t batch = 1;
  std::uint64_t seed = 0;
  bool no_weights = false;
  std::int64_t sequence = 0;              ///< transformer tokens (0: the model's default)
  std::int64_t kv_length = 0;             ///< decode KV cache length (0: the model's default)
  std::int64_t layers = 0;                ///< transformer stack layers (0: the model's default)
  std::vector<std::string> input_shapes;  ///< NAME:D0xD1x... (ONNX inputs)

  /// Adds `[MODEL]` (positional) and --model, --batch, --seed, --no-weights, --input-shape.
  void add_to(CLI::App& command) {
    command.add_option("MODEL", model, "Same as --model");
    command.add_option("-m,--model", model,
                       "Zoo model name (resnet18, ...), or a .onnx / .tir / .json file");
    command.add_option("--batch", batch, "Batch size of zoo models")->capture_default_str();
    command.add_option("--seed", seed, "Weight seed of zoo models")->capture_default_str();
    command.add_option("--seq", sequence, "Tokens of a transformer zoo model (0: its default)")
        ->check(CLI::NonNegativeNumber);
    command
        .add_option("--kv-length", kv_length,
                    "KV cache length of a decode zoo model (0: its default)")
        ->check(CLI::NonNegativeNumber);
    command
        .add_option(
            "--layers", layers,
            "Layers of a transformer stack zoo model (bert_base, gpt2*, vit_b_16; 0: all 12)")
        ->check(CLI::NonNegativeNumber);
    command.add_flag("--no-weights", no_weights,
                     "Build zoo models with shapes only (constants without payload)");
    command.add_option("--input-shape", input_shapes,
                       "ONNX input shape NAME:D0xD1x... (fixes dynamic dimensions)");
  }

  /// Loads the model; InputError for a missing --model, a bad shape or any load problem.
  ir::Graph load() const {
    if (model.empty()) throw_input_error({}, "--model", "no model given (a zoo name or a file)");
    LoadOptions options;
    options.zoo.batch = batch;
    options.zoo.seed = seed;
    options.zoo.with_weights = !no_weights;
    options.zoo.sequence = sequence;
    options.zoo.kv_length = kv_length;
    options.zoo.layers = layers;
    for (const std::string& spec : input_shapes) {
      const std::size_t colon = spec.rfind(':');
      ir::Shape shape;
      bool ok = colon != std::string::npos && colon > 0 && colon + 1 < spec.size();
      for (std::size_t start = colon + 1; ok && start <= spec.size();) {
        const std::size_t x = std::min(spec.find('x', start), spec.size());
        try {
          std::size_t used = 0;
          const std::string digits = spec.substr(start, x - start);
          const long long dim = std::stoll(digits, &used);
          ok = used == digits.size() && dim > 0;
          shape.push_back(dim);
        } catch (const std::exception&) {
          ok = false;
        }
        start = x + 1;
      }
      if (!ok)
        throw_input_error({}, "--input-shape", "expected NAME:D0xD1x..., got '" + spec + "'");
      options.input_shapes[spec.substr(0, colon)] = shape;
    }
    return load_model(model, options);
  }
};

}  // namespace tessel::zoo
