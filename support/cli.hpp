// Subcommand registry for the `tessel` CLI: each module registers the commands it owns.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tessel::cli {

/// Runs a parsed subcommand; returns the process exit code
/// (0 success, 1 invalid input or a failed check, 2 a simulated fault).
using Runner = std::function<int()>;

/// Declares a subcommand's options and positionals on `command` (CLI11) and returns the
/// Runner that executes it once parsing succeeded. Options bind to state the Runner captures.
using Setup = std::function<Runner(CLI::App& command)>;

/// One subcommand. `path` is space-separated: "infer", "config check", "sweep collect".
/// A parent ("config") that has no registration of its own is created as a group whose
/// summary comes from `register_group`.
struct Command {
  std::string path;
  std::string summary;
  Setup setup;
};

/// Registers a command at static-initialisation time, from the owning module's CLI file:
///   namespace { const tessel::cli::Registration kInfer{{"infer", "Run a network", setup}}; }
struct Registration {
  explicit Registration(Command command);
};

/// Registers a summary for a parent group such as "config".
struct GroupRegistration {
  GroupRegistration(std::string path, std::string summary);
};

/// All registered commands, sorted by path (parents before children).
std::vector<Command> registered_commands();

/// `-m,--model` (required), bound to `model`: a zoo model name or a model file.
void add_model_option(CLI::App& command, std::string& model);
/// `--hw`, bound to `hw` (its default shown): a YAML path or a name in configs/hw/; `what` names
/// the config in the help ("Hardware config", "Accelerator config").
void add_hw_option(CLI::App& command, std::string& hw, const std::string& what = "Hardware config");

/// Builds the CLI from the registry, parses argv, runs the chosen command and returns its exit
/// code. Input errors (tessel::InputError) are printed one diagnostic per line, exit code 1.
int run_main(int argc, char** argv);

/// run_main on `args` (the subcommand and its options, without the program name); for tests
/// and in-process drivers.
int run_args(std::vector<std::string> args);

}  // namespace tessel::cli
