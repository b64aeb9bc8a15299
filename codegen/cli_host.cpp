// `tessel host DIR`: runs a compile folder's host ops (docs/codegen.md, "Host ops") on the golden
// executor, from the integer boundary tensors `tessel sim DIR` wrote, and writes the outputs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "compiler/ir/json.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/npy.hpp"

namespace tessel::codegen {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error({path.string(), 0, 0}, "", "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error({path.string(), 0, 0}, "", std::string("not valid JSON: ") + e.what());
  }
}

cli::Runner setup_host(CLI::App& command) {
  struct Options {
    std::string folder, out;
  };
  auto o = std::make_shared<Options>();
  command.add_option("folder", o->folder, "Compile folder (compile.json with a \"host\" part)")
      ->required();
  command.add_option("--out", o->out,
                     "Folder with the boundary tensors host-<name>.npy that `tessel sim` wrote; "
                     "the outputs go there too (default: the compile folder)");
  return [o]() {
    const fs::path folder(o->folder);
    const fs::path out = o->out.empty() ? folder : fs::path(o->out);
    const fs::path compile_path = folder / "compile.json";
    const nlohmann::json compile = read_json(compile_path);
    if (!compile.contains("host"))
      throw_input_error({compile_path.string(), 0, 0}, "host", "the folder has no host ops");
    const nlohmann::json& host = compile.at("host");
    const fs::path graph_path = folder / host.value("graph", std::string("host.json"));
    const ir::Graph graph = ir::from_json(read_json(graph_path), graph_path.string());
    std::map<std::string, cpu::TensorData> inputs;
    try {
      for (const auto& in : host.at("inputs")) {
        const std::string name = in.at("name").get<std::string>();
        const std::string tensor = in.at("ir_tensor").get<std::string>();
        const fs::path file = out / ("host-" + name + ".npy");
        inputs[tensor] = cpu::TensorData::from_npy(read_npy(file.string()));
      }
    } catch (const nlohmann::json::exception& e) {
      throw_input_error({compile_path.string(), 0, 0}, "host.inputs", e.what());
    }
    cpu::Executor executor(graph);
    auto result = executor.run(inputs);
    if (!result.ok()) {
      std::fprintf(stderr, "error: host ops: %s\n", result.reason().c_str());
      return 1;
    }
    // Outputs are numbered after the accelerator's (compile.json "io"): the first of all is
    // output.npy, the others output-<name>.npy, as `tessel sim DIR` names them.
    int numbered = 0;
    for (const auto& io : compile.value("io", nlohmann::json::array()))
      numbered += io.value("kind", std::string()) == "output";
    for (const std::string& name : graph.outputs()) {
      const fs::path file = out / (numbered++ == 0 ? "output.npy" : "output-" + name + ".npy");
      write_npy(file.string(), result.value().at(name).to_npy());
      std::printf("host output   %%%s -> %s\n", name.c_str(), file.string().c_str());
    }
    return 0;
  };
}

const cli::Registration kHost{
    {"host", "Run a compile folder's host ops (after `tessel sim DIR`) on the golden executor",
     setup_host}};

}  // namespace
}  // namespace tessel::codegen
