// `tessel asm` and `tessel disasm`: the .tasm <-> .bin tools.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "configs/hw_config.hpp"
#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "support/cli.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel::isa {
namespace {

struct AsmOptions {
  std::string input;
  std::string output;
  std::string hw;
};

cli::Runner setup_asm(CLI::App& command) {
  auto options = std::make_shared<AsmOptions>();
  command.add_option("input", options->input, "program text (.tasm)")->required();
  command.add_option("-o,--output", options->output, "binary to write (.bin)")->required();
  command.add_option("--hw", options->hw,
                     "hardware config: validate against it and accept scratchpad names");
  return [options] {
    // Refuse an output that is an input before reading anything (and never touch it).
    const std::vector<std::string> inputs = {options->input, options->hw};
    files::require_output_distinct(options->output, inputs);
    std::optional<TargetInfo> target;
    if (!options->hw.empty()) target = target_from_config(load_hw_config(options->hw));
    AssembleOptions assemble_options;
    assemble_options.target = target ? &*target : nullptr;
    const Program program = assemble_file(options->input, assemble_options);
    write_binary_file(program, options->output, inputs);
    std::cout << options->output << ": " << program.instructions.size() << " instructions, "
              << kBinaryHeaderBytes + program.instructions.size() * kInstructionBytes << " bytes\n";
    return 0;
  };
}

struct DisasmOptions {
  std::string input;
  std::string output;
  std::string hw;
};

cli::Runner setup_disasm(CLI::App& command) {
  auto options = std::make_shared<DisasmOptions>();
  command.add_option("input", options->input, "binary program (.bin)")->required();
  command.add_option("-o,--output", options->output, "text to write (.tasm); stdout if absent");
  command.add_option("--hw", options->hw, "hardware config: write scratchpad names, validate");
  return [options] {
    const std::vector<std::string> inputs = {options->input, options->hw};
    files::require_output_distinct(options->output, inputs);
    const Program program = read_binary_file(options->input);
    std::vector<std::string> names;
    if (!options->hw.empty()) {
      const HwConfig config = load_hw_config(options->hw);
      const TargetInfo target = target_from_config(config);
      std::vector<Diagnostic> problems;
      for (std::size_t i = 0; i < program.instructions.size(); ++i)
        if (auto problem = validate(program.instructions[i], target))
          problems.push_back(
              {{options->input, 0, 0}, "instruction " + std::to_string(i), problem->message});
      if (!problems.empty()) throw InputError(std::move(problems));
      names = scratchpad_names(config);
    }
    const std::string text = disassemble(program, names);
    if (options->output.empty()) {
      std::cout << text;
      return 0;
    }
    files::write_file(options->output, text, inputs);
    return 0;
  };
}

const cli::Registration kAsm{
    {"asm", "Assemble a .tasm program into a .bin (optionally validated against --hw)", setup_asm}};
const cli::Registration kDisasm{
    {"disasm", "Disassemble a .bin program into .tasm text", setup_disasm}};

}  // namespace
}  // namespace tessel::isa
