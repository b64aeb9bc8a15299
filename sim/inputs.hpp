// Reading what a simulation runs: programs (.bin, .tasm), DRAM images and compile-output
// folders. Input boundary: problems throw tessel::InputError naming the file.
#pragma once

#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/instruction.hpp"
#include "sim/simulator.hpp"

namespace tessel::sim {

/// The program's instruction words, in order. `.bin`: the header is checked (docs/isa.md)
/// but the words are not decoded here, so that an undecodable word becomes a located
/// `illegal_instruction` fault at its dispatch. `.tasm`: assembled (scratchpad names resolved
/// and instructions validated against `config` when given) and encoded.
std::vector<isa::Word> read_program_words(const std::string& path, const HwConfig* config);

/// A DRAM image file: raw bytes at addresses [0, file size). With `read_contents` false only
/// its size is taken (timing-only runs). `size_bytes` larger than the file zero-extends it.
DramImage read_dram_image(const std::string& path, bool read_contents,
                          std::uint64_t size_bytes = 0);

/// The files of a compile-output folder (docs/sim.md "Compile-output folders"): the program
/// (program.bin, else program.tasm), the DRAM image (dram.bin, optional) and the hardware
/// config (hw.yaml, optional); a manifest.json {"program", "dram", "hw"} with paths relative
/// to the folder overrides these names.
/// A compile folder is checked first (verify_compile_folder): an incomplete or mixed one is
/// refused naming what is missing or different.
struct RunFolder {
  std::string program;
  std::string dram;  ///< empty when the folder has none
  std::string hw;    ///< empty when the folder has none
};
RunFolder read_run_folder(const std::string& folder);

/// Throws InputError unless `folder` is complete: when its compile.json lists "files" (sizes
/// and FNV-1a hashes, written last by `tessel compile`), every listed file must be there with
/// that size and hash; a folder with schedule.json (a compile's) but no compile.json is an
/// interrupted compile. A `tessel fpga` folder is held to its fpga.json the same way (names
/// may be rtl/NAME), and one with synth.ys or vivado.tcl but no fpga.json is an interrupted
/// flow. Folders of other origin (no schedule.json, no flow script) and older compile folders
/// (no "files") pass.
void verify_compile_folder(const std::string& folder);

}  // namespace tessel::sim
