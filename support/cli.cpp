// Builds the CLI11 application from the registered commands and dispatches to one of them.
#include "support/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "support/diagnostic.hpp"
#include "support/version.hpp"

namespace tessel::cli {
namespace {

struct Registry {
  std::vector<Command> commands;
  std::map<std::string, std::string> group_summaries;
};

Registry& registry() {
  static Registry instance;  // constructed on first use, so registration order is safe
  return instance;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::istringstream in(path);
  for (std::string part; in >> part;) parts.push_back(part);
  return parts;
}

}  // namespace

Registration::Registration(Command command) {
  registry().commands.push_back(std::move(command));
}

GroupRegistration::GroupRegistration(std::string path, std::string summary) {
  registry().group_summaries[std::move(path)] = std::move(summary);
}

std::vector<Command> registered_commands() {
  auto commands = registry().commands;
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) {
    const auto depth_a = split_path(a.path).size(), depth_b = split_path(b.path).size();
    return depth_a != depth_b ? depth_a < depth_b : a.path < b.path;
  });
  return commands;
}

int run_main(int argc, char** argv) {
  CLI::App app{"Tessel: co-design workbench for a DNN accelerator and its scheduler", "tessel"};
  app.set_version_flag("--version", std::string("tessel ") + version());
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<std::string, CLI::App*> nodes;  // path -> CLI11 node
  auto node_for = [&](const std::vector<std::string>& parts, std::size_t count,
                      const std::string& summary) -> CLI::App* {
    CLI::App* parent = &app;
    std::string path;
    for (std::size_t i = 0; i < count; ++i) {
      path += (i ? " " : "") + parts[i];
      auto it = nodes.find(path);
      if (it == nodes.end()) {
        const auto group = registry().group_summaries.find(path);
        const std::string text = i + 1 == count                              ? summary
                                 : group != registry().group_summaries.end() ? group->second
                                                                             : std::string();
        CLI::App* child = parent->add_subcommand(parts[i], text);
        it = nodes.emplace(path, child).first;
      }
      parent = it->second;
    }
    return parent;
  };

  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (const auto& command : registered_commands()) {
    const auto parts = split_path(command.path);
    CLI::App* node = node_for(parts, parts.size(), command.summary);
    node->description(command.summary);
    runners.emplace_back(node, command.setup(*node));
  }
  // A group with no runner of its own needs one of its subcommands.
  for (auto& [path, node] : nodes) {
    const bool has_runner = std::any_of(runners.begin(), runners.end(),
                                        [node = node](const auto& r) { return r.first == node; });
    if (!has_runner) node->require_subcommand(1);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // Run the deepest parsed command that has a runner.
  Runner* chosen = nullptr;
  std::size_t chosen_depth = 0;
  for (auto& [node, runner] : runners) {
    if (!node->parsed()) continue;
    std::size_t depth = 0;
    for (const CLI::App* p = node; p != nullptr; p = p->get_parent()) ++depth;
    if (depth > chosen_depth) {
      chosen = &runner;
      chosen_depth = depth;
    }
  }
  if (chosen == nullptr) {
    std::cerr << app.help();
    return 1;
  }
  try {
    return (*chosen)();
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.str() << '\n';
    return 1;
  }
}

void add_model_option(CLI::App& command, std::string& model) {
  command.add_option("-m,--model", model, "Zoo model name or model file (.onnx, .tir, .json)")
      ->required();
}

void add_hw_option(CLI::App& command, std::string& hw, const std::string& what) {
  command.add_option("--hw", hw, what + ": a YAML path or a name in configs/hw/")
      ->capture_default_str();
}

int run_args(std::vector<std::string> args) {
  args.insert(args.begin(), "tessel");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run_main(static_cast<int>(argv.size()), argv.data());
}

}  // namespace tessel::cli
