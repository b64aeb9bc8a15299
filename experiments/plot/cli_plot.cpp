// `tessel plot`: runs experiments/plot/plot_sweep.py (python3 + matplotlib) on sweep results.
#include <spawn.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "support/cli.hpp"

extern char** environ;

namespace tessel::plot {
namespace {

/// Debian's python3 has python3-matplotlib; TESSEL_PYTHON overrides it.
std::string python() {
  const char* chosen = std::getenv("TESSEL_PYTHON");
  return chosen ? chosen : "/usr/bin/python3";
}

std::string script() {
  const char* chosen = std::getenv("TESSEL_PLOT_SCRIPT");
  return chosen ? chosen : TESSEL_SOURCE_DIR "/experiments/plot/plot_sweep.py";
}

cli::Runner setup_plot(CLI::App& command) {
  struct Options {
    std::string results, kind, out, x, y;
    std::vector<std::string> where;
  };
  auto o = std::make_shared<Options>();
  command.add_option("results", o->results, "Sweep results (JSONL)")->required();
  command.add_option("--kind", o->kind, "ski-slope | bandwidth | pareto | energy-breakdown")
      ->required()
      ->check(CLI::IsMember({"ski-slope", "bandwidth", "pareto", "energy-breakdown"}));
  const auto axes = CLI::IsMember({"latency", "energy", "edp", "area", "onchip", "dram"});
  command.add_option("--x", o->x, "pareto: cost axis (latency|energy|edp|area|onchip|dram)")
      ->check(axes);
  command.add_option("--y", o->y, "pareto: other axis (default latency)")->check(axes);
  command.add_option("--out,-o", o->out, "Output directory (PNG and SVG per model)")->required();
  command.add_option("--where", o->where,
                     "Hold an axis at a value, KEY=VALUE (default: its median; repeatable)");
  return [o]() -> int {
    if (!std::filesystem::exists(o->results)) {
      std::cerr << "error: no such file: " << o->results << '\n';
      return 1;
    }
    std::vector<std::string> args = {python(), script(), o->results, "--kind",
                                     o->kind,  "--out",  o->out};
    if (!o->x.empty()) args.insert(args.end(), {"--x", o->x});
    if (!o->y.empty()) args.insert(args.end(), {"--y", o->y});
    for (const std::string& where : o->where) {
      args.push_back("--where");
      args.push_back(where);
    }
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int error = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
        error != 0) {
      std::cerr << "error: cannot run " << args[0]
                << " (set TESSEL_PYTHON to a python3 with matplotlib)\n";
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  };
}

const cli::Registration kPlot{
    {"plot",
     "Plot sweep results: ski-slope, bandwidth (roofline), pareto or energy-breakdown; PNG and SVG",
     setup_plot}};

}  // namespace
}  // namespace tessel::plot
