// The Verilator model of hw/rtl against the SystemC simulator: every ISA microbenchmark runs
// to the same cycles (the hand-computed ones), the same per-instruction dispatch/start/finish
// cycles, the same DRAM bytes, counters and final DRAM contents.
#include <gtest/gtest.h>

#include <cstring>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "isa/assembler.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/int_nonlinear.hpp"
#include "tests/rtl/report_checks.hpp"

namespace tessel::hw {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPrograms = fs::path(TESSEL_SOURCE_DIR) / "tests/isa/programs";
constexpr std::uint64_t kDramBytes = 1 << 20;

std::uint64_t number(const json& value) {
  return value.is_string() ? std::stoull(value.get<std::string>(), nullptr, 0)
                           : value.get<std::uint64_t>();
}

std::vector<std::uint8_t> initial_dram(const json& spec) {
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (const json& entry : spec["dram_init"]) {
    const std::string elem = entry["elem"];
    const std::uint64_t e = elem == "i8" ? 1 : elem == "i16" ? 2 : 4;
    std::vector<std::int64_t> values;
    if (entry.contains("values")) {
      values = entry["values"].get<std::vector<std::int64_t>>();
    } else {
      const json& ramp = entry["ramp"];
      for (std::int64_t i = 0; i < ramp["count"].get<std::int64_t>(); ++i)
        values.push_back(ramp["start"].get<std::int64_t>() + i * ramp["step"].get<std::int64_t>());
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      for (std::uint64_t b = 0; b < e; ++b)
        dram.at(number(entry["addr"]) + i * e + b) =
            static_cast<std::uint8_t>(static_cast<std::uint64_t>(values[i]) >> (8 * b));
  }
  return dram;
}

std::vector<std::string> program_names() {
  std::vector<std::string> names;
  if (!fs::exists(kPrograms)) return names;
  for (const auto& file : fs::directory_iterator(kPrograms)) {
    const std::string name = file.path().filename().string();
    const std::string suffix = ".expect.json";
    if (name.size() > suffix.size() && name.ends_with(suffix))
      names.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Assembles `text` (named `name` in messages), runs it on the simulator and on the RTL from
/// `dram`, and checks what every hand-written case needs: no late cycle, no scratchpad write
/// collision, the same report and the same final DRAM. Returns the RTL's result; nullopt (a
/// failure recorded) when a run could not be made.
std::optional<RtlResult> run_on_both(const HwConfig& config, const std::string& text,
                                     const std::string& name,
                                     const std::vector<std::uint8_t>& dram) {
  const isa::Program program = isa::assemble(text, name);
  std::vector<isa::Word> words;
  for (const auto& instruction : program.instructions)
    words.push_back(isa::encode(instruction).value());
  sim::SimOptions sim_options;
  sim_options.record_instruction_cycles = true;
  auto simulated = sim::simulate(config, words, sim::DramImage::from_bytes(dram), sim_options);
  if (!simulated.ok()) {
    ADD_FAILURE() << name << ": " << simulated.reason();
    return std::nullopt;
  }
  RtlOptions options;
  options.record_instruction_cycles = true;
  options.watchdog_cycles = 100'000;
  auto rtl = run_rtl(config, words, sim::DramImage::from_bytes(dram), options);
  if (!rtl.ok()) {
    ADD_FAILURE() << name << ": " << rtl.reason();
    return std::nullopt;
  }
  EXPECT_EQ(rtl.value().late_cycles, 0u) << name;
  EXPECT_EQ(rtl.value().sram_collisions, 0u) << name;
  expect_same_report(rtl.value().report, simulated.value().report);
  EXPECT_TRUE(rtl.value().dram == simulated.value().dram) << name << ": final DRAM contents differ";
  return std::move(rtl).value();
}

class RtlMicrobenchmark : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlMicrobenchmark, equals_the_simulator_cycle_for_cycle_and_byte_for_byte) {
  const std::string name = GetParam();
  std::ifstream in(kPrograms / (name + ".expect.json"));
  const json spec = json::parse(in);
  const json& want = spec["expect"];
  const HwConfig config = load_hw_config((kPrograms / spec["config"].get<std::string>()).string());
  const auto words = sim::read_program_words((kPrograms / (name + ".tasm")).string(), &config);
  const auto dram = initial_dram(spec);

  sim::SimOptions sim_options;
  sim_options.record_instruction_cycles = true;
  auto simulated = sim::simulate(config, words, sim::DramImage::from_bytes(dram), sim_options);
  ASSERT_TRUE(simulated.ok()) << simulated.reason();

  RtlOptions options;
  options.record_instruction_cycles = true;
  options.watchdog_cycles = 100'000;
  auto rtl = run_rtl(config, words, sim::DramImage::from_bytes(dram), options);
  ASSERT_TRUE(rtl.ok()) << rtl.reason();
  const sim::SimReport& report = rtl.value().report;

  EXPECT_EQ(rtl.value().late_cycles, 0u);
  EXPECT_EQ(rtl.value().sram_collisions, 0u);
  expect_same_report(report, simulated.value().report);
  // The values too (lut's table lookups, reduce's int32 rows): the simulator's final DRAM is
  // checked against the hand-computed expectation by tests/sim's program suite.
  EXPECT_TRUE(rtl.value().dram == simulated.value().dram) << name << ": final DRAM contents differ";
  if (want["status"] == "ok")
    EXPECT_EQ(report.cycles, want["cycles"].get<std::uint64_t>());
  else
    EXPECT_EQ(report.fault ? report.fault->cycle : 0, want["fault_cycle"].get<std::uint64_t>());
}

INSTANTIATE_TEST_SUITE_P(Microbenchmarks, RtlMicrobenchmark, ::testing::ValuesIn(program_names()),
                         [](const auto& test_info) { return test_info.param; });

// The DMA data mover moves strided scratchpad pixels and padding a group of pixels per cycle,
// so it keeps up with the DRAM (tiny_conv's weight load on edge-small was 18 cycles late when
// it moved one pixel per cycle). On micro (DW = 64, L = 10, T = 4):
//   0 load   d 0 s 1   4 rows x 3 pixels x 4 B, DRAM dense (one 48 B request, one burst, bus
//                      [11, 15)), SRAM pixels 8 B apart + 5 pixels of right padding (7): f 15
//                      (one pixel per cycle would take 32 mover cycles: f 34)
//   1 nop    d 1 s 15  f 16
//   2 store  d 2 s 16  the 12 data pixels back to DRAM dense at 0x2000: bus [26, 30), f 30
//   3 store  d 3 s 30  the padded 4 x 8 box dense at 0x3000: 128 B, 2 bursts, bus [40, 48), f 48
//   4 finish d 4 s 48  f 49
TEST(RtlDma, strided_pixels_and_padding_move_in_groups_within_the_dram_time) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x1000 y_size=4 x_size=3 "
      "c_size=4 "
      "dram_stride_y=12 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 pad_right=5 "
      "pad_value=7 push_next=1\n"
      "nop engine=compute pop_prev=1 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=4 x_size=3 "
      "c_size=4 dram_stride_y=12 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 pop_prev=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x3000 y_size=4 x_size=8 "
      "c_size=4 dram_stride_y=32 dram_stride_x=4 sram_stride_y=64 sram_stride_x=8 "
      "push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (std::size_t i = 0; i < 48; ++i) dram[0x1000 + i] = static_cast<std::uint8_t>(i);

  const auto rtl = run_on_both(config, text, "dma_groups.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  EXPECT_EQ(rtl->report.cycles, 49u);
  const auto& out = rtl->dram;
  for (std::size_t i = 0; i < 48; ++i) EXPECT_EQ(out[0x2000 + i], i) << "dense copy byte " << i;
  for (std::size_t y = 0; y < 4; ++y)
    for (std::size_t x = 0; x < 8; ++x)
      for (std::size_t c = 0; c < 4; ++c)
        EXPECT_EQ(out[0x3000 + 32 * y + 4 * x + c], x < 3 ? 12 * y + 4 * x + c : 7u)
            << "padded box y " << y << " x " << x << " c " << c;
}

// A gather whose mover, not the DRAM, decides its finish (docs/timing.md "gather"), on
// edge-small (400 MHz, 16 B/cycle, B = 32 so T = 2, L = ceil(120 ns x 0.4) = 48, O = 32, mover
// W = 32): 64 rows of one burst from a 100-row table at 0x1000, ids at 0x800 (8 bursts).
//   0 gather d 0 s 1    65 bursts issued from 1 (slots refill in time): bus [49, 179), c_last
//                       179; mover 1 + 2 + 64 x (2 + 1) = 195: f 195
//   1 nop    d 1 s 195  f 196
//   2 store  d 2 s 196  the 64 rows dense at 0x8000: 64 bursts, bus [244, 372): f 372
//   3 finish d 3 s 372  f 373
TEST(RtlDma, a_gather_waits_for_its_mover_where_the_dram_is_faster) {
  const HwConfig config =
      load_hw_config((fs::path(TESSEL_SOURCE_DIR) / "configs/hw/edge-small.yaml").string());
  ASSERT_EQ(config.dma_mover_bytes_per_cycle(), 32);
  const std::string text =
      "gather sp=0 kind=weights elem=i8 sram_addr=0x0 dram_addr=0x1000 y_size=64 c_size=32 "
      "dram_stride_y=32 sram_stride_y=32 table_rows=100 ids_addr=0x800 push_next=1\n"
      "nop engine=compute pop_prev=1 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x8000 y_size=64 x_size=1 "
      "c_size=32 dram_stride_y=32 dram_stride_x=32 sram_stride_y=32 sram_stride_x=32 pop_prev=1 "
      "push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (std::size_t i = 0; i < 100 * 32; ++i)
    dram[0x1000 + i] = static_cast<std::uint8_t>(7 * i + 3);
  std::vector<std::int32_t> ids;
  for (std::int32_t r = 0; r < 64; ++r) ids.push_back((r * 37) % 200 - 100);  // [-100, 100)
  std::memcpy(dram.data() + 0x800, ids.data(), 4 * ids.size());

  const auto rtl = run_on_both(config, text, "gather_mover.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  EXPECT_EQ(rtl->report.cycles, 373u);
  for (std::size_t r = 0; r < 64; ++r) {
    const std::size_t row = static_cast<std::size_t>(ids[r] < 0 ? ids[r] + 100 : ids[r]);
    for (std::size_t j = 0; j < 32; ++j)
      ASSERT_EQ(rtl->dram[0x8000 + 32 * r + j], static_cast<std::uint8_t>(7 * (32 * row + j) + 3))
          << "row " << r << " (id " << ids[r] << ") byte " << j;
  }
}

/// `text` (the second instruction needs a unit edge-small lacks) run on edge-small's RTL and
/// simulator: refused at its start (cycle 2) as an illegal instruction with `message`.
void expect_refused_on_edge_small(const std::string& text, const std::string& file,
                                  const std::string& message) {
  const HwConfig config =
      load_hw_config((fs::path(TESSEL_SOURCE_DIR) / "configs/hw/edge-small.yaml").string());
  const auto rtl = run_on_both(config, text, file, std::vector<std::uint8_t>(kDramBytes, 0));
  ASSERT_TRUE(rtl.has_value());
  ASSERT_TRUE(rtl->report.fault.has_value());
  EXPECT_EQ(rtl->report.fault->kind, "illegal_instruction");
  EXPECT_EQ(rtl->report.fault->instruction_index, 1);
  EXPECT_EQ(rtl->report.fault->cycle, 2u);
  EXPECT_EQ(rtl->report.fault->message, message);
}

// ISA version 3's mul on a config without vector.broadcast_multiply (edge-small: the RTL built
// without VECTOR_BROADCAST_MULTIPLY): the harness refuses it at its start as the simulator does,
// naming the unit. vcfg: d 0, s 1, f 2; mul: d 1, s 2 -> fault at cycle 2.
TEST(RtlVector, mul_without_its_unit_is_refused_at_its_start_like_the_simulator) {
  ASSERT_FALSE(load_hw_config((fs::path(TESSEL_SOURCE_DIR) / "configs/hw/edge-small.yaml").string())
                   .vector.broadcast_multiply);
  expect_refused_on_edge_small(
      "vcfg mult_a=0x40000000 mult_b=0 shift=31 zp=0 lo=-128 hi=127\n"
      "mul a_sp=0 b_sp=0 dst_sp=0 elem=i8 dst_elem=i8 a_addr=0x0 b_addr=0x40 dst_addr=0x80 "
      "y_size=1 x_size=1 c_size=8 a_stride_y=8 a_stride_x=8 b_stride_y=8 b_stride_x=8 "
      "dst_stride_y=8 dst_stride_x=8\n"
      "finish\n",
      "mul_no_unit.tasm",
      "opcode 'mul' needs a vector unit with a broadcast multiplier, which this config "
      "lacks (vector.broadcast_multiply: true)");
}

// ISA version 3's matmul on micro (R = C = 4, the systolic array), beyond the microbenchmark:
// passes longer than a block load (m = 6 and 9 rows against W = 4), k and n with partial last
// blocks both ways (k 9 = 4 + 4 + 1, n 7 = 4 + 3; k 7, n 6), a transposed and a row-major b,
// and init=acc over a whole multi-block reduction (the second row-major matmul doubles the
// first's sums). The accumulators are checked against the definition, the rest against the
// simulator (cycles, starts, counters, final DRAM).
TEST(RtlMatmul, long_passes_and_partial_blocks_equal_the_definition_and_the_simulator) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x1000 y_size=1 x_size=1 "
      "c_size=256 push_next=1\n"
      "matmul a_sp=0 b_sp=0 acc_sp=2 elem=i8 init=zero transpose_b=1 a_addr=0x0 b_addr=0x40 "
      "acc_addr=0x0 m_size=6 n_size=7 k_size=9 a_stride=9 b_stride=9 acc_stride=7 pop_prev=1\n"
      "matmul a_sp=0 b_sp=0 acc_sp=2 elem=i8 init=zero a_addr=0x80 b_addr=0xc0 acc_addr=0x100 "
      "m_size=9 n_size=6 k_size=7 a_stride=7 b_stride=6 acc_stride=6\n"
      "matmul a_sp=0 b_sp=0 acc_sp=2 elem=i8 init=acc a_addr=0x80 b_addr=0xc0 acc_addr=0x100 "
      "m_size=9 n_size=6 k_size=7 a_stride=7 b_stride=6 acc_stride=6 push_next=1\n"
      "store sp=2 kind=outputs elem=i32 sram_addr=0x0 dram_addr=0x3000 y_size=1 x_size=1 "
      "c_size=118 pop_prev=1 push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < 256; ++i) {
    state = state * 1103515245u + 12345u;
    dram[0x1000 + i] = static_cast<std::uint8_t>(state >> 16);
  }
  dram[0x1000] = 0x80;  // -128 meets -128 and 127 in the first products
  dram[0x1040] = 0x80;
  dram[0x1041] = 0x7f;
  const auto rtl = run_on_both(config, text, "matmul_rtl.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  ASSERT_FALSE(rtl->report.fault.has_value());
  const auto at = [&](std::size_t addr) { return static_cast<std::int8_t>(dram[0x1000 + addr]); };
  const auto acc = [&](std::size_t word) {
    std::int32_t v = 0;
    std::memcpy(&v, rtl->dram.data() + 0x3000 + 4 * word, 4);
    return v;
  };
  for (std::size_t m = 0; m < 6; ++m)
    for (std::size_t n = 0; n < 7; ++n) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < 9; ++k) sum += at(9 * m + k) * at(0x40 + 9 * n + k);
      EXPECT_EQ(acc(7 * m + n), sum) << "Q K^T m " << m << " n " << n;
    }
  for (std::size_t m = 0; m < 9; ++m)
    for (std::size_t n = 0; n < 6; ++n) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < 7; ++k) sum += at(0x80 + 7 * m + k) * at(0xc0 + 6 * k + n);
      EXPECT_EQ(acc(64 + 6 * m + n), 2 * sum) << "x V m " << m << " n " << n;
    }
  for (std::size_t word = 42; word < 64; ++word) EXPECT_EQ(acc(word), 0) << "word " << word;
}

// matmul on a config without matrix.activation_operands (edge-small: the RTL built without
// MATRIX_ACTIVATION_OPERANDS) is refused at its start as the simulator does, naming the key.
// nop: d 0, s 1, f 2; matmul: d 1, s 2 -> fault at cycle 2.
TEST(RtlMatmul, matmul_without_activation_operands_is_refused_at_its_start_like_the_simulator) {
  ASSERT_FALSE(load_hw_config((fs::path(TESSEL_SOURCE_DIR) / "configs/hw/edge-small.yaml").string())
                   .matrix.activation_operands);
  expect_refused_on_edge_small(
      "nop engine=compute\n"
      "matmul a_sp=0 b_sp=0 acc_sp=0 elem=i8 a_addr=0x0 b_addr=0x40 acc_addr=0x80 m_size=2 "
      "n_size=8 k_size=8 a_stride=8 b_stride=8 acc_stride=8\n"
      "finish\n",
      "matmul_no_unit.tasm",
      "opcode 'matmul' needs a matrix unit that takes both operands from activations, "
      "which this config lacks (matrix.activation_operands: true)");
}

// The row normaliser on a config without vector.row_normalise (edge-small: the RTL built
// without VECTOR_ROW_NORMALISE): the harness refuses softmax and norm at their start as the
// simulator does, naming the key. nop: d 0, s 1, f 2; softmax / norm: d 1, s 2 -> cycle 2.
TEST(RtlVector, the_row_normaliser_without_its_unit_is_refused_at_its_start_like_the_simulator) {
  ASSERT_FALSE(load_hw_config((fs::path(TESSEL_SOURCE_DIR) / "configs/hw/edge-small.yaml").string())
                   .vector.row_normalise);
  expect_refused_on_edge_small(
      "nop engine=compute\n"
      "softmax src_sp=0 dst_sp=0 table_sp=0 elem=i8 dst_elem=i8 src_addr=0x0 dst_addr=0x40 "
      "table_addr=0x400 y_size=1 x_size=1 c_size=8 src_stride_y=8 src_stride_x=8 "
      "dst_stride_y=8 dst_stride_x=8\n"
      "finish\n",
      "softmax_no_unit.tasm",
      "opcode 'softmax' needs a vector unit with row normalisation, which this config lacks "
      "(vector.row_normalise: true)");
  expect_refused_on_edge_small(
      "nop engine=compute\n"
      "norm src_sp=0 dst_sp=0 param_sp=0 elem=i8 dst_elem=i8 src_addr=0x0 dst_addr=0x40 "
      "param_addr=0x400 y_size=1 x_size=1 c_size=8 src_stride_y=8 src_stride_x=8 "
      "dst_stride_y=8 dst_stride_x=8 centre=1\n"
      "finish\n",
      "norm_no_unit.tasm",
      "opcode 'norm' needs a vector unit with row normalisation, which this config lacks "
      "(vector.row_normalise: true)");
}

/// Little-endian `bytes`-byte value `v` at dram[at].
void put_le(std::vector<std::uint8_t>& dram, std::size_t at, std::uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) dram.at(at + b) = static_cast<std::uint8_t>(v >> (8 * b));
}

/// The little-endian signed `bytes`-byte value at dram[at].
std::int32_t get_le(const std::vector<std::uint8_t>& dram, std::size_t at, int bytes) {
  std::uint32_t u = 0;
  for (int b = bytes - 1; b >= 0; --b) u = (u << 8) | dram.at(at + b);
  return bytes == 1   ? static_cast<std::int8_t>(u)
         : bytes == 2 ? static_cast<std::int16_t>(u)
                      : static_cast<std::int32_t>(u);
}

/// Each {instruction index, cycles} of `costs` ran exactly that long (finish - start).
void expect_costs(const sim::SimReport& report,
                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& costs) {
  for (const auto& [index, cycles] : costs) {
    bool found = false;
    for (const auto& c : report.instruction_cycles)
      if (c.index == index) {
        found = true;
        EXPECT_EQ(c.finish_cycle - c.start_cycle, cycles) << "instruction " << index;
      }
    EXPECT_TRUE(found) << "instruction " << index << " did not run";
  }
}

/// A deterministic stream of pseudo-random numbers in [lo, hi].
struct Lcg {
  std::uint64_t state;
  std::int64_t next(std::int64_t lo, std::int64_t hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

/// One softmax or norm of a test below: its box, element sizes and addresses (act scratchpad,
/// dst in the stored copy at DRAM 0x3000), for the golden check.
struct RowBox {
  std::uint64_t y, x, c, src, dst, stride_y, stride_x, e, de;
};

// softmax on micro (V = 4) beyond the microbenchmark, against the golden executor's
// intops::softmax_row and the simulator (cycles, starts, counters, final DRAM): rows of 11, 9
// and 17 elements (partial last chunks), several pixels and rows, i8 and i16 scores with tables
// of two input scales (the i16 scores reach exp_high[23]), a causal mask whose offset -1 masks
// the whole first row (all 0) and one whose offset 5 keeps 6 .. 9 keys, an in-place softmax,
// an i8 -> i16 one and a zero point.
TEST(RtlRowNormaliser, softmax_rows_equal_the_golden_rule_and_the_simulator) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=1 kind=weights elem=i16 sram_addr=0x0 dram_addr=0x4000 y_size=1 x_size=1 "
      "c_size=1024 push_next=1\n"
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=1 x_size=1 "
      "c_size=512 push_next=1\n"
      "vcfg mult_a=1065353216 mult_b=0 shift=53 zp=-100 lo=-128 hi=127 pop_prev=1\n"
      // A: i8, causal, offset -1: query x keeps keys 0 .. x - 1 (query 0 none)
      "softmax src_sp=0 dst_sp=0 table_sp=1 elem=i8 dst_elem=i8 src_addr=0x0 dst_addr=0x200 "
      "table_addr=0x0 y_size=2 x_size=3 c_size=11 src_stride_y=33 src_stride_x=11 "
      "dst_stride_y=33 dst_stride_x=11 causal=1 mask_offset=-1 pop_prev=1\n"
      // B: i8 in place, no mask
      "softmax src_sp=0 dst_sp=0 table_sp=1 elem=i8 dst_elem=i8 src_addr=0x60 dst_addr=0x60 "
      "table_addr=0x0 y_size=1 x_size=2 c_size=11 src_stride_y=22 src_stride_x=11 "
      "dst_stride_y=22 dst_stride_x=11\n"
      "vcfg mult_a=2147418112 mult_b=0 shift=46 zp=0 lo=-32768 hi=32767\n"
      // C: i16, causal, offset 5
      "softmax src_sp=0 dst_sp=0 table_sp=1 elem=i16 dst_elem=i16 src_addr=0x100 "
      "dst_addr=0x280 table_addr=0x400 y_size=2 x_size=2 c_size=9 src_stride_y=18 "
      "src_stride_x=9 dst_stride_y=18 dst_stride_x=9 causal=1 mask_offset=5\n"
      // D: i8 scores, i16 probabilities
      "softmax src_sp=0 dst_sp=0 table_sp=1 elem=i8 dst_elem=i16 src_addr=0xa0 dst_addr=0x300 "
      "table_addr=0x0 y_size=1 x_size=1 c_size=17 src_stride_y=17 src_stride_x=17 "
      "dst_stride_y=17 dst_stride_x=17 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x3000 y_size=1 x_size=1 "
      "c_size=1024 pop_prev=1 push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  // exp tables: 2^15 exp(-s u) for s = 0.05 (i8 scores, at 0x0) and 0.002 (i16, at 0x400)
  std::array<intops::SoftmaxParams, 2> params;
  const double scales[2] = {0.05, 0.002};
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 256; ++i) {
      params[t].exp_high[i] =
          static_cast<std::int32_t>(std::llround(32768.0 * std::exp(-scales[t] * 256 * i)));
      params[t].exp_low[i] =
          static_cast<std::int32_t>(std::llround(32768.0 * std::exp(-scales[t] * i)));
      put_le(dram, 0x4000 + 0x400 * t + 2 * i, params[t].exp_high[i], 2);
      put_le(dram, 0x4000 + 0x400 * t + 512 + 2 * i, params[t].exp_low[i], 2);
    }
  Lcg rng{7};
  for (std::size_t i = 0; i < 0x100; ++i)
    put_le(dram, 0x2000 + i, static_cast<std::uint64_t>(rng.next(-128, 127)), 1);
  for (std::size_t i = 0; i < 36; ++i)
    put_le(dram, 0x2100 + 2 * i, static_cast<std::uint64_t>(rng.next(-3000, 3000)), 2);
  put_le(dram, 0x2100, static_cast<std::uint64_t>(-32768), 2);  // u up to 35768: a big step
  const std::vector<std::uint8_t> input = dram;

  const auto rtl = run_on_both(config, text, "softmax_rtl.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  ASSERT_FALSE(rtl->report.fault.has_value()) << rtl->report.fault->str();
  // cost 128 + y x (3 ceil(c / 4) + 31) + 4: A 128 + 6 x 40 + 4 = 372, B 128 + 2 x 40 + 4 = 212,
  // C 128 + 4 x 40 + 4 = 292, D 128 + 46 + 4 = 178
  const intops::Requant q8{1065353216, 53, -100, -128, 127}, q16{2147418112, 46, 0, -32768, 32767};
  struct Case {
    RowBox box;
    int table;
    intops::Requant q;
    bool causal;
    std::int64_t offset;
  };
  const Case cases[] = {{{2, 3, 11, 0x0, 0x200, 33, 11, 1, 1}, 0, q8, true, -1},
                        {{1, 2, 11, 0x60, 0x60, 22, 11, 1, 1}, 0, q8, false, 0},
                        {{2, 2, 9, 0x100, 0x280, 18, 9, 2, 2}, 1, q16, true, 5},
                        {{1, 1, 17, 0xa0, 0x300, 17, 17, 1, 2}, 0, q16, false, 0}};
  int index = 0;
  for (const Case& k : cases) {
    ++index;
    params[k.table].output = k.q;
    for (std::uint64_t y = 0; y < k.box.y; ++y)
      for (std::uint64_t x = 0; x < k.box.x; ++x) {
        std::vector<std::int32_t> row(k.box.c), want(k.box.c);
        std::vector<std::uint8_t> keep(k.box.c);
        const std::uint64_t pixel = y * k.box.stride_y + x * k.box.stride_x;
        for (std::uint64_t c = 0; c < k.box.c; ++c) {
          row[c] =
              get_le(input, 0x2000 + k.box.src + (pixel + c) * k.box.e, static_cast<int>(k.box.e));
          keep[c] = static_cast<std::int64_t>(c) <= static_cast<std::int64_t>(x) + k.offset;
        }
        intops::softmax_row(row.data(), k.causal ? keep.data() : nullptr,
                            static_cast<std::int64_t>(k.box.c), params[k.table], want.data());
        for (std::uint64_t c = 0; c < k.box.c; ++c)
          EXPECT_EQ(get_le(rtl->dram, 0x3000 + k.box.dst + (pixel + c) * k.box.de,
                           static_cast<int>(k.box.de)),
                    want[c])
              << "softmax " << index << " y " << y << " x " << x << " c " << c;
      }
  }
  EXPECT_EQ(get_le(rtl->dram, 0x3200, 1), 0) << "a fully masked row is 0";
  expect_costs(rtl->report, {{3, 372}, {4, 212}, {6, 292}, {7, 178}});
}

// norm on micro (V = 4) beyond the microbenchmark, against the golden executor's
// intops::norm_row and the simulator: a LayerNorm of i8 rows of 13 (in place; one row constant
// with E = 0, so W = 0 and every t = 0), an RMSNorm of i16 rows of 10 with E > 0, and an i16 ->
// i8 LayerNorm of rows of 6 with a large E; channels with random G (both signs), r in 30 .. 31
// and B, and one channel with G = 0, r = 0, B = 5 (the output is B).
TEST(RtlRowNormaliser, norm_rows_equal_the_golden_rule_and_the_simulator) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=1 kind=weights elem=i8 sram_addr=0x0 dram_addr=0x4000 y_size=1 x_size=1 "
      "c_size=1024 push_next=1\n"
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=1 x_size=1 "
      "c_size=512 push_next=1\n"
      "vcfg mult_a=0 mult_b=0 shift=0 zp=0 lo=-128 hi=127 pop_prev=1\n"
      // A: LayerNorm, i8, in place, y 1 x 3 c 13 (params 8 + 16 x 13 = 216 B at 0x0)
      "norm src_sp=0 dst_sp=0 param_sp=1 elem=i8 dst_elem=i8 src_addr=0x0 dst_addr=0x0 "
      "param_addr=0x0 y_size=1 x_size=3 c_size=13 src_stride_y=39 src_stride_x=13 "
      "dst_stride_y=39 dst_stride_x=13 centre=1 pop_prev=1\n"
      // C: LayerNorm, i16 -> i8, y 1 x 2 c 6 (params 104 B at 0x200)
      "norm src_sp=0 dst_sp=0 param_sp=1 elem=i16 dst_elem=i8 src_addr=0x180 dst_addr=0x300 "
      "param_addr=0x200 y_size=1 x_size=2 c_size=6 src_stride_y=12 src_stride_x=6 "
      "dst_stride_y=12 dst_stride_x=6 centre=1\n"
      "vcfg mult_a=0 mult_b=0 shift=0 zp=0 lo=-32768 hi=32767\n"
      // B: RMSNorm, i16, y 2 x 1 c 10 (params 168 B at 0x100)
      "norm src_sp=0 dst_sp=0 param_sp=1 elem=i16 dst_elem=i16 src_addr=0x40 dst_addr=0x80 "
      "param_addr=0x100 y_size=2 x_size=1 c_size=10 src_stride_y=10 src_stride_x=10 "
      "dst_stride_y=10 dst_stride_x=10 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x3000 y_size=1 x_size=1 "
      "c_size=1024 pop_prev=1 push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  Lcg rng{11};
  struct Case {
    RowBox box;
    bool centre;
    std::int64_t epsilon;
    std::uint64_t params;
    std::int32_t lo, hi;
  };
  const Case cases[] = {
      {{1, 3, 13, 0x0, 0x0, 39, 13, 1, 1}, true, 0, 0x0, -128, 127},
      {{1, 2, 6, 0x180, 0x300, 12, 6, 2, 1}, true, std::int64_t{1} << 40, 0x200, -128, 127},
      {{2, 1, 10, 0x40, 0x80, 10, 10, 2, 2}, false, 12345, 0x100, -32768, 32767}};
  std::vector<std::vector<intops::NormAffine>> affine;
  for (const Case& k : cases) {
    put_le(dram, 0x4000 + k.params, static_cast<std::uint64_t>(k.epsilon), 8);
    affine.emplace_back(k.box.c);
    for (std::uint64_t c = 0; c < k.box.c; ++c) {
      intops::NormAffine& a = affine.back()[c];
      a.multiplier = static_cast<std::int32_t>(rng.next(1 << 19, 1 << 21) * (c % 2 ? -1 : 1));
      a.shift = static_cast<int>(rng.next(30, 31));
      a.bias = rng.next(-(std::int64_t{1} << 36), std::int64_t{1} << 36);
      if (c == 2) a = {0, 0, 5};
      const std::uint64_t at = 0x4000 + k.params + 8 + 16 * c;
      put_le(dram, at, static_cast<std::uint32_t>(a.multiplier), 4);
      put_le(dram, at + 4, static_cast<std::uint64_t>(a.shift), 4);
      put_le(dram, at + 8, static_cast<std::uint64_t>(a.bias), 8);
    }
    const std::int64_t span = k.box.e == 1 ? 127 : 20000;
    for (std::uint64_t y = 0; y < k.box.y; ++y)
      for (std::uint64_t x = 0; x < k.box.x; ++x)
        for (std::uint64_t c = 0; c < k.box.c; ++c)
          put_le(dram, 0x2000 + k.box.src + (y * k.box.stride_y + x * k.box.stride_x + c) * k.box.e,
                 static_cast<std::uint64_t>(x == 1 && k.epsilon == 0 ? -7 : rng.next(-span, span)),
                 static_cast<int>(k.box.e));
  }
  const std::vector<std::uint8_t> input = dram;

  const auto rtl = run_on_both(config, text, "norm_rtl.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  ASSERT_FALSE(rtl->report.fault.has_value()) << rtl->report.fault->str();
  for (std::size_t i = 0; i < 3; ++i) {
    const Case& k = cases[i];
    for (std::uint64_t y = 0; y < k.box.y; ++y)
      for (std::uint64_t x = 0; x < k.box.x; ++x) {
        std::vector<std::int32_t> row(k.box.c), want(k.box.c);
        const std::uint64_t pixel = y * k.box.stride_y + x * k.box.stride_x;
        for (std::uint64_t c = 0; c < k.box.c; ++c)
          row[c] =
              get_le(input, 0x2000 + k.box.src + (pixel + c) * k.box.e, static_cast<int>(k.box.e));
        intops::norm_row(row.data(), static_cast<std::int64_t>(k.box.c), k.centre, k.epsilon,
                         affine[i].data(), k.lo, k.hi, want.data());
        for (std::uint64_t c = 0; c < k.box.c; ++c)
          EXPECT_EQ(get_le(rtl->dram, 0x3000 + k.box.dst + (pixel + c) * k.box.de,
                           static_cast<int>(k.box.de)),
                    want[c])
              << "norm " << i << " y " << y << " x " << x << " c " << c;
      }
  }
  // the constant row (A, x 1): W = 0, t = 0, so channel k is clamp(rha(B_k, r_k)); channel 2: 5
  EXPECT_EQ(get_le(rtl->dram, 0x3000 + 13 + 2, 1), 5);
  // cost y x (2 ceil(c / 4) + 56) + 4: A 3 x 64 + 4 = 196, C 2 x 60 + 4 = 124, B 2 x 62 + 4 = 128
  expect_costs(rtl->report, {{3, 196}, {4, 124}, {6, 128}});
}

// The DMA's addresses are registers stepped as its loops advance (no per-cycle products): a
// padding row, a left padding shorter than a group, full data groups, a data group that runs
// into the right padding, and a last short padding group (pixel mode, i16: 6-byte pixels, SRAM
// 6 B apart, DRAM 10 B apart, so 10 padding or 6 data pixels per group on micro's DW = 64);
// whole rows with every padding part (row mode, i32, DRAM rows 40 B apart for 24 B of data);
// and a store of 11 strided pixels in groups of 8 (SRAM 6 B apart, DRAM 8 B apart). The
// bytes are checked against the boxes' definitions, the timing against the simulator.
TEST(RtlDma, stepped_addresses_cover_padding_rows_groups_and_element_sizes) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      // 5 x 16 padded pixels of 3 x i16 at SRAM 0x0 (96 B rows, 480 B)
      "load sp=0 kind=activations elem=i16 sram_addr=0x0 dram_addr=0x1002 y_size=3 x_size=11 "
      "c_size=3 dram_stride_y=64 dram_stride_x=5 sram_stride_y=48 sram_stride_x=3 pad_top=1 "
      "pad_bottom=1 pad_left=3 pad_right=2 pad_value=-2\n"
      // 5 x 7 padded pixels of 2 x i32 at SRAM 0x200 (56 B rows, 280 B)
      "load sp=0 kind=activations elem=i32 sram_addr=0x200 dram_addr=0x1400 y_size=2 x_size=3 "
      "c_size=2 dram_stride_y=10 dram_stride_x=2 sram_stride_y=14 sram_stride_x=2 pad_top=1 "
      "pad_bottom=2 pad_left=1 pad_right=3 pad_value=5 push_next=1\n"
      "nop engine=compute pop_prev=1 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=1 x_size=1 "
      "c_size=480 pop_prev=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x200 dram_addr=0x2200 y_size=1 x_size=1 "
      "c_size=280\n"
      // the i16 box's data pixels (SRAM row 1, pixel 3 = 0x72) to DRAM, 8 B apart, 96 B rows
      "store sp=0 kind=outputs elem=i16 sram_addr=0x72 dram_addr=0x2400 y_size=3 x_size=11 "
      "c_size=3 dram_stride_y=48 dram_stride_x=4 sram_stride_y=48 sram_stride_x=3 "
      "push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  const auto source = [](std::size_t address) {
    return static_cast<std::uint8_t>(address * 7 + 3);
  };
  for (std::size_t a = 0x1000; a < 0x1500; ++a) dram[a] = source(a);

  const auto rtl = run_on_both(config, text, "dma_steps.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  const auto& out = rtl->dram;
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t p = 0; p < 16; ++p)
      for (std::size_t b = 0; b < 6; ++b) {
        const bool data = r >= 1 && r <= 3 && p >= 3 && p <= 13;
        EXPECT_EQ(out[0x2000 + 96 * r + 6 * p + b],
                  data    ? source(0x1002 + 128 * (r - 1) + 10 * (p - 3) + b)
                  : b % 2 ? 0xff
                          : 0xfe)
            << "i16 box row " << r << " pixel " << p << " byte " << b;
      }
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t p = 0; p < 7; ++p)
      for (std::size_t b = 0; b < 8; ++b) {
        const bool data = r >= 1 && r <= 2 && p >= 1 && p <= 3;
        EXPECT_EQ(out[0x2200 + 56 * r + 8 * p + b],
                  data    ? source(0x1400 + 40 * (r - 1) + 8 * (p - 1) + b)
                  : b % 4 ? 0
                          : 5)
            << "i32 box row " << r << " pixel " << p << " byte " << b;
      }
  for (std::size_t y = 0; y < 3; ++y)
    for (std::size_t x = 0; x < 11; ++x)
      for (std::size_t b = 0; b < 8; ++b)
        EXPECT_EQ(out[0x2400 + 96 * y + 8 * x + b],
                  b < 6 ? source(0x1002 + 128 * y + 10 * x + b) : 0)
            << "strided store y " << y << " x " << x << " byte " << b;
}

// Synchronous scratchpad reads (tessel_sram): the matrix unit reads a step's accumulators a
// cycle before it writes them back, so in a conv whose passes are one cycle long (depthwise,
// P = W = 1) each pass reads the accumulators the previous pass writes at that very edge; the
// unit forwards that write. On micro (R = C = 4, int8, F = D = 4): a 3x3 depthwise conv of one
// output pixel over 4 channels, 9 passes of one cycle, cost 1 + 9 * 1 + 8 = 18:
//   0 load input    d 0 s 1   36 B: bus [11, 15)                       f 15
//   1 load weights  d 1 s 15  36 B: bus [25, 29)                       f 29
//   2 conv          d 2 s 29  18                                       f 47
//   3 store acc     d 3 s 47  16 B: bus [57, 61)                       f 61
//   4 finish        d 4 s 61                                           f 62
// acc[c] = sum over the 9 taps p of in[p][c] * w[p][c], in[p][c] = (p + 1)(c + 1),
// w[p][c] = p - 4 + c. With q = p + 1 (sum q = 45, sum q^2 = 285): acc[c] = (c + 1) sum q (q - 5
// + c) = (c + 1)(285 - (5 - c) 45): c = 0..3 -> 60, 210, 450, 780.
TEST(RtlMatrix, one_cycle_passes_accumulate_through_the_forwarded_write) {
  const HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  const std::string text =
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=0x1000 y_size=1 x_size=1 "
      "c_size=36\n"
      "load sp=1 kind=weights elem=i8 sram_addr=0x0 dram_addr=0x1100 y_size=1 x_size=1 "
      "c_size=36 push_next=1\n"
      "conv in_sp=0 w_sp=1 acc_sp=2 elem=i8 init=zero depthwise=1 in_addr=0x0 w_addr=0x0 "
      "acc_addr=0x0 out_h=1 out_w=1 ic_blocks=1 oc_blocks=1 kh=3 kw=3 stride_h=1 stride_w=1 "
      "dil_h=1 dil_w=1 in_stride_y=12 in_stride_x=4 acc_stride_y=4 acc_stride_x=4 pop_prev=1 "
      "push_next=1\n"
      "store sp=2 kind=outputs elem=i32 sram_addr=0x0 dram_addr=0x2000 y_size=1 x_size=1 "
      "c_size=4 pop_prev=1 push_prev=1\n"
      "finish pop_next=1\n";
  std::vector<std::uint8_t> dram(kDramBytes, 0);
  for (int p = 0; p < 9; ++p)
    for (int c = 0; c < 4; ++c) {
      dram[0x1000 + 4 * p + c] = static_cast<std::uint8_t>((p + 1) * (c + 1));
      dram[0x1100 + 4 * p + c] = static_cast<std::uint8_t>(static_cast<std::int8_t>(p - 4 + c));
    }

  const auto rtl = run_on_both(config, text, "one_pixel_depthwise.tasm", dram);
  ASSERT_TRUE(rtl.has_value());
  EXPECT_EQ(rtl->report.cycles, 62u);
  const std::int32_t expected[4] = {60, 210, 450, 780};
  for (int c = 0; c < 4; ++c) {
    std::uint32_t got = 0;
    for (int b = 0; b < 4; ++b)
      got |= static_cast<std::uint32_t>(rtl->dram[0x2000 + 4 * c + b]) << (8 * b);
    EXPECT_EQ(static_cast<std::int32_t>(got), expected[c]) << "channel " << c;
  }
}

TEST(RtlModels, micro_and_edge_small_are_built) {
  std::vector<std::string> names;
  for (const auto& model : rtl_models()) names.push_back(model.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "micro"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "edge-small"), names.end());
}

TEST(RtlModels, a_config_without_a_model_is_refused_by_name) {
  HwConfig config = load_hw_config((kPrograms / "micro.yaml").string());
  config.matrix.fill_cycles = 5;  // another content hash
  auto result = run_rtl(config, {}, sim::DramImage::from_bytes({}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason().rfind("no RTL model was built for config 'micro' (content hash ", 0),
            0u)
      << result.reason();
}

}  // namespace
}  // namespace tessel::hw
