// The embedded self-test of the FPGA image: one conv tile, its DRAM image and expected result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "isa/program.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// A 1x1 conv tile on the config's R x C matrix unit, after tests/isa/programs/matrix_tile.tasm
/// but sized by the config: 2 x 2 output pixels, R input and C output channels. Input element
/// `in[p][i] = (p * R + i) % 17 - 8`, weight `w[i][o] = (3 i + 5 o) % 11 - 5`, output
/// `acc[p][o] = sum_i in[p][i] * w[i][o]` as int32. Five instructions: load input, load weights
/// (push), conv (pop, push), store the int32 accumulators (pop, push), finish (pop).
struct TestProgram {
  std::string tasm;                             ///< the program with scratchpad names
  isa::Program program;                         ///< assembled and validated against the config
  std::vector<std::uint8_t> instruction_bytes;  ///< 32 bytes per instruction, no .bin header
  std::vector<std::uint8_t> dram;               ///< DRAM image before the run, from address 0
  std::uint64_t input_dram_addr = 0;
  std::uint64_t weights_dram_addr = 0;
  std::uint64_t output_dram_addr = 0;
  std::vector<std::int32_t> expected_output;  ///< int32 at output_dram_addr, [pixel][channel]

  /// The DRAM image after a correct run: `dram` with expected_output written little-endian.
  std::vector<std::uint8_t> expected_dram() const;
};

/// The test program for `config`. Scratchpads are the first that may hold activations, weights
/// and accumulators (one unified buffer gets them at disjoint 256-byte-aligned addresses); DRAM
/// holds input, weights and output at 256-byte-aligned addresses from 0. Fails when the tile
/// does not fit the config (a field out of range or a scratchpad too small), with the
/// assembler's message.
Result<TestProgram> make_test_program(const HwConfig& config);

}  // namespace tessel::fpga
