// `tessel import` (load a model, print its IR) and `tessel opt` (run passes, print the IR).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "compiler/ir/json.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/zoo/cli_model_options.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/json_text.hpp"

namespace tessel {
namespace {

/// How the resulting graph is printed.
struct PrintOptions {
  bool dump = false;
  bool json = false;
  bool no_data = false;
  std::string out;

  void add_to(CLI::App& command) {
    command.add_flag("--dump", dump, "Print the text form (the default)");
    command.add_flag("--json", json, "Print the JSON form (constants in base64)");
    command.add_flag("--no-data", no_data, "JSON without constant payloads (digests only)");
    command.add_option("-o,--out", out, "Write to this file instead of stdout");
  }

  /// Run before loading: -o must not name the model file.
  void check_out(const std::string& model) const { files::require_output_distinct(out, {model}); }

  int print(const ir::Graph& graph, const std::string& model) const {
    std::string text;
    if (json) {
      ir::JsonOptions options;
      options.include_data = !no_data;
      text = tessel::json_text(ir::to_json(graph, options), 1) + "\n";
    } else {
      text = ir::to_text(graph);
    }
    if (out.empty()) {
      std::cout << text;
      return 0;
    }
    files::write_file(out, text, {model});
    return 0;
  }
};

cli::Runner setup_import(CLI::App& command) {
  auto model = std::make_shared<zoo::ModelOptionValues>();
  auto print = std::make_shared<PrintOptions>();
  model->add_to(command);
  print->add_to(command);
  return [model, print]() {
    print->check_out(model->model);
    return print->print(model->load(), model->model);
  };
}

cli::Runner setup_opt(CLI::App& command) {
  auto model = std::make_shared<zoo::ModelOptionValues>();
  auto print = std::make_shared<PrintOptions>();
  auto passes = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  model->add_to(command);
  print->add_to(command);
  command.add_option("-p,--passes", *passes, "Comma-separated passes, run in order");
  command.add_flag("--list", *list, "List the passes and exit");
  return [model, print, passes, list]() {
    if (*list) {
      for (const passes::PassInfo& pass : passes::all_passes()) {
        std::cout << pass.name << std::string(24 - std::min<std::size_t>(pass.name.size(), 23), ' ')
                  << pass.summary << "\n";
      }
      return 0;
    }
    auto pipeline = passes::parse_pipeline(*passes);
    if (!pipeline) throw_input_error({}, "--passes", pipeline.reason());
    print->check_out(model->model);
    ir::Graph graph = model->load();
    if (Status status = passes::run_pipeline(graph, pipeline.value()); !status) {
      std::cerr << "error: " << status.reason() << "\n";
      return 1;
    }
    if (Status valid = ir::validate(graph); !valid) {
      std::cerr << "error: the passes left an invalid graph: " << valid.reason() << "\n";
      return 1;
    }
    return print->print(graph, model->model);
  };
}

const cli::Registration kImport{
    {"import", "Load a model (zoo name, .onnx, .tir, .json) and print its IR", setup_import}};
const cli::Registration kOpt{{"opt", "Run graph passes on a model and print the IR", setup_opt}};

}  // namespace
}  // namespace tessel
