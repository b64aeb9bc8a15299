// The design `tessel fpga` synthesises: tessel_top (hw/rtl) inside hw/fpga/tessel_fpga_top.sv.
#pragma once

#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "hw/fpga/flow.hpp"
#include "hw/fpga/test_program.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// The FPGA wrapper's generated parameters (package `tessel_fpga_pkg`).
struct WrapperParams {
  int dram_word_bytes = 0;            ///< DW = tessel_cfg_pkg::DMA_BYTES_PER_CYCLE
  std::uint64_t program_words = 0;    ///< instructions in program.mem
  std::uint64_t dram_bank_words = 0;  ///< DW-byte words in each of the two DRAM banks
  std::uint64_t output_word = 0;      ///< first DW-byte word of the test's output
  std::uint64_t expected_words = 0;   ///< DW-byte words the checker compares
};

/// The wrapper parameters for `test` on `config` (DW from hw/gen's derive_hw_params). The
/// DRAM image is rounded up to an even number of DW-byte words (two banks).
Result<WrapperParams> wrapper_params(const HwConfig& config, const TestProgram& test);

/// `package tessel_fpga_pkg; localparam int unsigned PROGRAM_WORDS = 5; ... endpackage`.
std::string wrapper_package_sv(const WrapperParams& params);

/// The units resources.json reports apart for `config` (unit_cost.hpp): the matrix array,
/// the vector unit, the row normaliser, the scratchpads, the DMA engines and the instruction
/// queues, with notes naming the config's opt-in units each row includes.
std::vector<FpgaUnit> tessel_units(const HwConfig& config);

/// The sources of the FPGA image, in read order: hw/rtl/filelist.f with ${CFG_PKG} the
/// generated tessel_cfg_pkg.sv (hw/gen), then the generated tessel_fpga_pkg.sv, then
/// hw/fpga/tessel_fpga_top.sv; data files dram_bank0.mem / dram_bank1.mem (even / odd DW-byte
/// words of the test's DRAM image). Both tools read every source: the scratchpads are block
/// RAM on the design's second clock, clk2x (hw/rtl/tessel_sram.sv).
/// `source_root` is the repository root (the file list's paths are relative to it). Fails when the
/// file list is missing or malformed, or hw/gen cannot build the config.
Result<FlowDesign> tessel_fpga_design(const HwConfig& config, const TestProgram& test,
                                      const std::string& source_root);

/// The repository root this library was built from (absolute).
std::string source_root();

}  // namespace tessel::fpga
