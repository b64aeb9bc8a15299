// Builds the conv-tile self-test program and its data for a config.
#include "hw/fpga/test_program.hpp"

#include <map>
#include <sstream>

#include "isa/assembler.hpp"
#include "isa/hw_target.hpp"
#include "support/diagnostic.hpp"

namespace tessel::fpga {
namespace {

constexpr std::int64_t kAlignBytes = 256;
constexpr int kPixels = 4;  // a 2 x 2 output tile

std::int64_t align_up(std::int64_t value) {
  return (value + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
}

void put_le(std::vector<std::uint8_t>& bytes, std::uint64_t addr, std::int64_t value,
            int width_bytes) {
  for (int k = 0; k < width_bytes; ++k) {
    bytes[addr + static_cast<std::uint64_t>(k)] =
        static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * k));
  }
}

std::string hex(std::int64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

}  // namespace

std::vector<std::uint8_t> TestProgram::expected_dram() const {
  std::vector<std::uint8_t> bytes = dram;
  for (std::size_t k = 0; k < expected_output.size(); ++k) {
    put_le(bytes, output_dram_addr + 4 * k, expected_output[k], 4);
  }
  return bytes;
}

Result<TestProgram> make_test_program(const HwConfig& config) {
  const int rows = config.matrix.rows;
  const int cols = config.matrix.cols;
  const int input_bytes = config.matrix.input_bits / 8;
  const int weight_bytes = config.matrix.weight_bits / 8;
  const std::string input_elem = input_bytes == 1 ? "i8" : "i16";
  const std::string weight_elem = weight_bytes == 1 ? "i8" : "i16";

  // On-chip placement: the next free byte of each scratchpad.
  std::map<std::string, std::int64_t> next_free;
  auto place = [&](DataKind kind, std::int64_t bytes) {
    const std::string& name = config.scratchpad_for(kind).name;
    const std::int64_t addr = next_free[name];
    next_free[name] = align_up(addr + bytes);
    return std::pair{name, addr};
  };
  const std::int64_t act_bytes = std::int64_t{kPixels} * rows * input_bytes;
  const std::int64_t wgt_bytes = std::int64_t{rows} * cols * weight_bytes;
  const std::int64_t acc_bytes = std::int64_t{kPixels} * cols * 4;
  const auto [act_sp, act_addr] = place(DataKind::kActivations, act_bytes);
  const auto [wgt_sp, wgt_addr] = place(DataKind::kWeights, wgt_bytes);
  const auto [acc_sp, acc_addr] = place(DataKind::kAccumulators, acc_bytes);

  TestProgram test;
  test.input_dram_addr = 0;
  test.weights_dram_addr = static_cast<std::uint64_t>(align_up(act_bytes));
  test.output_dram_addr = test.weights_dram_addr + static_cast<std::uint64_t>(align_up(wgt_bytes));
  test.dram.assign(test.output_dram_addr + static_cast<std::uint64_t>(align_up(acc_bytes)), 0);

  std::vector<std::int64_t> in(static_cast<std::size_t>(kPixels * rows));
  std::vector<std::int64_t> w(static_cast<std::size_t>(rows * cols));
  for (int p = 0; p < kPixels; ++p) {
    for (int i = 0; i < rows; ++i) {
      const std::int64_t value = (p * rows + i) % 17 - 8;
      in[static_cast<std::size_t>(p * rows + i)] = value;
      put_le(test.dram,
             test.input_dram_addr + static_cast<std::uint64_t>((p * rows + i) * input_bytes), value,
             input_bytes);
    }
  }
  for (int i = 0; i < rows; ++i) {
    for (int o = 0; o < cols; ++o) {
      const std::int64_t value = (3 * i + 5 * o) % 11 - 5;
      w[static_cast<std::size_t>(i * cols + o)] = value;
      put_le(test.dram,
             test.weights_dram_addr + static_cast<std::uint64_t>((i * cols + o) * weight_bytes),
             value, weight_bytes);
    }
  }
  for (int p = 0; p < kPixels; ++p) {
    for (int o = 0; o < cols; ++o) {
      std::int64_t sum = 0;
      for (int i = 0; i < rows; ++i) {
        sum +=
            in[static_cast<std::size_t>(p * rows + i)] * w[static_cast<std::size_t>(i * cols + o)];
      }
      test.expected_output.push_back(static_cast<std::int32_t>(sum));
    }
  }

  std::ostringstream tasm;
  tasm << "# FPGA self-test for " << config.name << ": a 1x1 conv tile, 2x2 pixels, " << rows
       << " -> " << cols << " channels (hw/fpga/test_program.hpp).\n"
       << "# DRAM: input " << hex(static_cast<std::int64_t>(test.input_dram_addr)) << ", weights "
       << hex(static_cast<std::int64_t>(test.weights_dram_addr)) << ", int32 output "
       << hex(static_cast<std::int64_t>(test.output_dram_addr)) << ".\n";
  tasm << "load sp=" << act_sp << " kind=activations elem=" << input_elem
       << " sram_addr=" << hex(act_addr)
       << " dram_addr=" << hex(static_cast<std::int64_t>(test.input_dram_addr))
       << " y_size=1 x_size=1 c_size=" << kPixels * rows << "\n";
  tasm << "load sp=" << wgt_sp << " kind=weights elem=" << weight_elem
       << " sram_addr=" << hex(wgt_addr)
       << " dram_addr=" << hex(static_cast<std::int64_t>(test.weights_dram_addr))
       << " y_size=" << rows << " x_size=1 c_size=" << cols << " dram_stride_y=" << cols
       << " sram_stride_y=" << cols << " push_next=1\n";
  tasm << "conv in_sp=" << act_sp << " w_sp=" << wgt_sp << " acc_sp=" << acc_sp
       << " elem=" << input_elem << " init=zero in_addr=" << hex(act_addr)
       << " w_addr=" << hex(wgt_addr) << " acc_addr=" << hex(acc_addr)
       << " out_h=2 out_w=2 ic_blocks=1 oc_blocks=1 kh=1 kw=1 stride_h=1 stride_w=1 dil_h=1"
       << " dil_w=1 in_stride_y=" << 2 * rows << " in_stride_x=" << rows
       << " acc_stride_y=" << 2 * cols << " acc_stride_x=" << cols << " pop_prev=1 push_next=1\n";
  tasm << "store sp=" << acc_sp << " kind=outputs elem=i32 sram_addr=" << hex(acc_addr)
       << " dram_addr=" << hex(static_cast<std::int64_t>(test.output_dram_addr))
       << " y_size=1 x_size=1 c_size=" << kPixels * cols << " pop_prev=1 push_prev=1\n";
  tasm << "finish pop_next=1\n";
  test.tasm = tasm.str();

  const isa::TargetInfo target = isa::target_from_config(config);
  try {
    test.program = isa::assemble(test.tasm, config.name + " self-test", {&target});
  } catch (const InputError& error) {
    return fail(std::string("the FPGA self-test does not fit ") + config.name + ": " +
                error.what());
  }
  auto binary = isa::to_binary(test.program);
  if (!binary) return fail("the FPGA self-test does not encode: " + binary.reason());
  test.instruction_bytes.assign(binary.value().begin() + isa::kBinaryHeaderBytes,
                                binary.value().end());
  return test;
}

}  // namespace tessel::fpga
