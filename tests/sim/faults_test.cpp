// Purpose-built faulty programs each stop with their located fault, counters kept, exit code 2.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "configs/hw_config.hpp"
#include "isa/assembler.hpp"
#include "isa/program.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"
#include "support/cli.hpp"

namespace tessel::sim {
namespace {

const std::string kMicro = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml";

isa::Word word_of(const isa::Instruction& instruction) {
  auto word = isa::encode(instruction);
  EXPECT_TRUE(word.ok()) << word.reason();
  return word.value();
}

// Runs `words` with 1 thread and with the datapath helper thread (--threads 2), which must
// fault the same way (and, in full mode, leave the same DRAM); returns the 1-thread run.
SimResult run_twice(const HwConfig& config, const std::vector<isa::Word>& words, DramImage image,
                    SimOptions options) {
  SimOptions threaded = options;
  threaded.threads = 2;
  auto twin = simulate(config, words, image, threaded);
  auto result = simulate(config, words, std::move(image), options);
  EXPECT_TRUE(result.ok()) << result.reason();
  EXPECT_TRUE(twin.ok()) << twin.reason();
  const SimReport& a = result.value().report;
  const SimReport& b = twin.value().report;
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.instructions_executed, b.instructions_executed);
  EXPECT_EQ(a.fault.has_value(), b.fault.has_value());
  if (a.fault && b.fault) {
    EXPECT_EQ(a.fault->str(), b.fault->str()) << "with 2 threads";
  }
  EXPECT_EQ(result.value().dram, twin.value().dram) << "with 2 threads";
  return std::move(result.value());
}

SimReport run(const std::vector<isa::Word>& words, bool timing_only = false) {
  DramImage image;
  image.size_bytes = 1 << 20;
  if (!timing_only) image.bytes.assign(image.size_bytes, 0);
  SimOptions options;
  options.timing_only = timing_only;
  return run_twice(load_hw_config(kMicro), words, std::move(image), options).report;
}

/// `x` after a nop, then finish, on `config` over 1 MiB of zero DRAM (so that its start is
/// cycle 2: nop d=0 s=1 f=2, x d=1 s=2): the unit and operand checks of one instruction.
SimReport after_nop(const HwConfig& config, const isa::Instruction& x) {
  DramImage image;
  image.size_bytes = 1 << 20;
  image.bytes.assign(image.size_bytes, 0);
  return run_twice(config, {word_of(isa::Nop{}), word_of(x), word_of(isa::Finish{})},
                   std::move(image), SimOptions{})
      .report;
}

isa::Load load(std::uint32_t sp, std::uint32_t sram_addr, std::uint64_t dram_addr,
               std::uint32_t c_size) {
  isa::Load x;
  x.sp = sp;
  x.sram_addr = sram_addr;
  x.dram_addr = dram_addr;
  x.c_size = c_size;
  return x;
}

TEST(SimFaults, sram_out_of_bounds_names_cycle_engine_instruction_and_scratchpad) {
  for (const bool timing_only : {false, true}) {
    const SimReport report =
        run({word_of(isa::Nop{}), word_of(load(0, 4090, 0x1000, 64)), word_of(isa::Finish{})},
            timing_only);
    ASSERT_TRUE(report.fault);
    EXPECT_EQ(report.fault->kind, "out_of_bounds");
    EXPECT_EQ(report.fault->cycle, 2u);  // nop: d=0 s=1 f=2; load: d=1, starts at 2
    EXPECT_EQ(report.fault->engine, "load");
    EXPECT_EQ(report.fault->instruction_index, 1);
    EXPECT_EQ(report.fault->message,
              "field 'sram_addr' = 0xffa: the operand's last byte 0x1039 is beyond scratchpad "
              "'act' (4 KiB)");
    EXPECT_EQ(report.fault->instruction_text.rfind("load ", 0), 0u);
    EXPECT_EQ(report.cycles, 2u);
    EXPECT_EQ(report.instructions_executed, 1u);  // counters up to the fault are kept
    EXPECT_EQ(report.engines[0].instructions, 1u);
  }
}

TEST(SimFaults, dram_out_of_bounds_names_the_byte_range) {
  const SimReport report = run({word_of(load(0, 0, (1 << 20) - 16, 64)), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->str().substr(0, 46), "cycle 1: load: instruction 0 (`load pop_prev=0");
  EXPECT_EQ(report.fault->kind, "out_of_bounds");
  EXPECT_EQ(report.fault->message,
            "DRAM bytes [0xffff0, 0x100030) beyond the DRAM image (1048576 bytes)");
}

TEST(SimFaults, undecodable_word_is_an_illegal_instruction_at_fetch) {
  isa::Word bad{};
  bad[0] = 0x2a;
  const SimReport report = run({word_of(isa::Nop{}), bad, word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->engine, "fetch");
  EXPECT_EQ(report.fault->cycle, 1u);
  EXPECT_EQ(report.fault->instruction_index, 1);
  EXPECT_EQ(report.fault->message, "unknown opcode 0x2a");
  EXPECT_EQ(report.instructions_dispatched, 1u);
}

TEST(SimFaults, kind_the_scratchpad_may_not_hold_is_illegal_on_this_config) {
  isa::Load x = load(0, 0, 0x1000, 16);
  x.kind = isa::Traffic::kWeights;  // 'act' holds activations and outputs only
  const SimReport report = run({word_of(x), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->message, "field 'sp' = act: the scratchpad may not hold weights");
}

TEST(SimFaults, lut_on_a_config_without_a_lookup_table_is_illegal_naming_the_unit) {
  HwConfig config = load_hw_config(kMicro);
  config.vector.lookup_table = false;
  isa::Lut x;
  x.table_sp = 1;
  x.y_size = x.x_size = x.c_size = 1;
  const SimReport report = after_nop(config, x);
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->instruction_index, 1);
  EXPECT_EQ(report.fault->message,
            "opcode 'lut' needs a vector unit with a lookup table, which this config lacks "
            "(vector.lookup_table: true)");
}

// mul (ISA version 3): refused without its unit, and its b operand is checked as a box of one
// element a pixel when b_per_pixel (with the unit, its second pixel's element is one byte past
// act).
TEST(SimFaults, mul_without_its_unit_or_with_b_past_the_scratchpad_is_located) {
  isa::Mul x;
  x.y_size = 1;
  x.x_size = 2;
  x.c_size = 4;
  x.a_stride_x = x.dst_stride_x = 4;
  x.dst_addr = 0x100;
  x.b_stride_x = 1;
  x.b_per_pixel = true;
  for (const bool with_unit : {false, true}) {
    // Without the unit an in-bounds mul (bounds are checked first); with it, b past act.
    x.b_addr = with_unit ? 0xfff : 0x10;
    HwConfig config = load_hw_config(kMicro);
    config.vector.broadcast_multiply = with_unit;
    const SimReport report = after_nop(config, x);
    ASSERT_TRUE(report.fault);
    EXPECT_EQ(report.fault->instruction_index, 1);
    EXPECT_EQ(report.fault->engine, "compute");
    EXPECT_EQ(report.fault->cycle, 2u);  // nop: d=0 s=1 f=2; mul: d=1, starts at 2
    if (!with_unit) {
      EXPECT_EQ(report.fault->kind, "illegal_instruction");
      EXPECT_EQ(report.fault->message,
                "opcode 'mul' needs a vector unit with a broadcast multiplier, which this config "
                "lacks (vector.broadcast_multiply: true)");
    } else {
      EXPECT_EQ(report.fault->kind, "out_of_bounds");
      EXPECT_EQ(report.fault->message,
                "field 'b_addr' = 0xfff: the operand's last byte 0x1000 is beyond scratchpad "
                "'act' (4 KiB)");
    }
  }
}

// matmul (ISA version 3): refused without the matrix unit's activation operands, its
// accumulators checked as the m_size x n_size box (with the unit, the last row ends 4 bytes past
// acc), and a zero size refused at fetch, naming the field.
TEST(SimFaults, matmul_without_its_unit_past_its_scratchpad_or_empty_is_located) {
  isa::Matmul x;
  x.acc_sp = 2;
  x.m_size = 2;
  x.n_size = 4;
  x.k_size = 4;
  x.a_stride = x.b_stride = 4;
  x.acc_stride = 4;
  for (const bool with_unit : {false, true}) {
    x.acc_addr = with_unit ? 0xfe4 : 0;  // 0xfe4 + (1 * 4 + 4) * 4 = 0x1004
    HwConfig config = load_hw_config(kMicro);
    config.matrix.activation_operands = with_unit;
    const SimReport report = after_nop(config, x);
    ASSERT_TRUE(report.fault);
    EXPECT_EQ(report.fault->instruction_index, 1);
    EXPECT_EQ(report.fault->engine, "compute");
    EXPECT_EQ(report.fault->cycle, 2u);  // nop: d=0 s=1 f=2; matmul: d=1, starts at 2
    if (!with_unit) {
      EXPECT_EQ(report.fault->kind, "illegal_instruction");
      EXPECT_EQ(report.fault->message,
                "opcode 'matmul' needs a matrix unit that takes both operands from activations, "
                "which this config lacks (matrix.activation_operands: true)");
    } else {
      EXPECT_EQ(report.fault->kind, "out_of_bounds");
      EXPECT_EQ(report.fault->message,
                "field 'acc_addr' = 0xfe4: the operand's last byte 0x1003 is beyond scratchpad "
                "'acc' (4 KiB)");
    }
  }
  // k_size = 0 cannot be encoded: a raw word (the fields above, k_size's bits cleared) faults
  // at fetch, in its dispatch cycle, naming the field.
  isa::Word empty = word_of(x);
  empty[19] = 0;  // k_size = 4 is bit 158: byte 19, bit 6
  const SimReport report = run({word_of(isa::Nop{}), empty, word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "illegal_instruction");
  EXPECT_EQ(report.fault->engine, "fetch");
  EXPECT_EQ(report.fault->instruction_index, 1);
  EXPECT_EQ(report.fault->cycle, 1u);
  EXPECT_NE(report.fault->message.find("'k_size' = 0"), std::string::npos) << report.fault->message;
}

TEST(SimFaults, pushes_into_a_full_fifo_nobody_pops_deadlock_as_overflow) {
  isa::Load pushing = load(0, 0, 0x1000, 16);
  pushing.push_next = true;  // token FIFO depth K = 2 and COMPUTE never pops
  const SimReport report =
      run({word_of(pushing), word_of(pushing), word_of(pushing), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "deadlock");
  ASSERT_EQ(report.fault->blocked.size(), 1u);
  EXPECT_EQ(report.fault->blocked[0].engine, "load");
  EXPECT_EQ(report.fault->blocked[0].instruction_index, 2u);
  EXPECT_EQ(report.fault->blocked[0].waits_on, "load->compute");
  EXPECT_NE(report.fault->message.find("holds 2 of 2 tokens that no one will pop (overflow)"),
            std::string::npos)
      << report.fault->message;
}

TEST(SimFaults, pop_of_a_token_nobody_pushes_deadlocks_as_underflow) {
  isa::Nop waiting;
  waiting.engine = isa::Engine::kStore;
  waiting.pop_prev = true;
  const SimReport report = run({word_of(waiting), word_of(isa::Finish{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "deadlock");
  EXPECT_EQ(report.fault->cycle, 3u);  // the last finish: finish d=1, s=2, f=3
  EXPECT_NE(report.fault->message.find("compute->store, which is empty"), std::string::npos)
      << report.fault->message;
}

TEST(SimFaults, program_without_finish_is_a_fault) {
  const SimReport report = run({word_of(isa::Nop{})});
  ASSERT_TRUE(report.fault);
  EXPECT_EQ(report.fault->kind, "no_finish");
  EXPECT_EQ(report.cycles, 2u);
}

// A per-channel requantize of 2 pixels x 4 channels from `table` (4 entries of (M, r)) at DRAM
// 0x3000; accumulators 1000, -1000, 7, 0 (pixel 0) and 100, 200, 300, 400 (pixel 1) at 0x1000;
// outputs stored at 0x2000 over 0x5a bytes. Instruction 3 is the requantize. Runs with 1 and
// 2 threads (the same report) and returns the 1-thread run.
SimResult run_requant(const std::vector<std::pair<std::int32_t, std::int32_t>>& table,
                      bool timing_only = false, const std::string& dst = "dst_sp=0 dst_addr=0x0",
                      int table_sp = 1) {
  const std::string sp = std::to_string(table_sp);
  HwConfig config = load_hw_config(kMicro);
  // A table in act: act a unified buffer, so that an output may overwrite it.
  if (table_sp == 0) config.scratchpads[0].holds.assign(kAllDataKinds.begin(), kAllDataKinds.end());
  const auto program = isa::assemble(
      "load sp=2 kind=activations elem=i32 sram_addr=0x0 dram_addr=0x1000 y_size=1 x_size=1 "
      "c_size=8\n"
      "load sp=" +
          sp + (table_sp == 1 ? " kind=weights" : " kind=activations") +
          " elem=i32 sram_addr=0x100 dram_addr=0x3000 y_size=1 x_size=1 c_size=8 push_next=1\n"
          "vcfg mult_a=0 mult_b=0 shift=0 zp=0 lo=-128 hi=127\n"
          "requant src_sp=2 " +
          dst + " dst_elem=i8 per_channel=1 param_sp=" + sp +
          " param_addr=0x100 "
          "src_addr=0x0 y_size=1 x_size=2 c_size=4 src_stride_y=8 src_stride_x=4 "
          "dst_stride_y=8 dst_stride_x=4 pop_prev=1 push_next=1\n"
          "store sp=0 kind=outputs elem=i8 sram_addr=0x0 dram_addr=0x2000 y_size=1 x_size=1 "
          "c_size=8 pop_prev=1 push_prev=1\n"
          "finish pop_next=1\n",
      "requant_table.tasm");
  std::vector<isa::Word> words;
  for (const auto& instruction : program.instructions) words.push_back(word_of(instruction));
  DramImage image;
  image.size_bytes = 1 << 16;
  image.bytes.assign(image.size_bytes, 0);
  const auto le32 = [&](std::size_t at, std::int32_t v) {
    for (int b = 0; b < 4; ++b) image.bytes[at + b] = static_cast<std::uint8_t>(v >> (8 * b));
  };
  const std::int32_t acc[8] = {1000, -1000, 7, 0, 100, 200, 300, 400};
  for (int i = 0; i < 8; ++i) le32(0x1000 + 4 * i, acc[i]);
  for (std::size_t c = 0; c < table.size(); ++c) {
    le32(0x3000 + 8 * c, table[c].first);
    le32(0x3000 + 8 * c + 4, table[c].second);
  }
  for (int i = 0; i < 8; ++i) image.bytes[0x2000 + i] = 0x5a;
  SimOptions options;
  options.timing_only = timing_only;
  options.record_instruction_cycles = true;
  return run_twice(config, words, std::move(image), options);
}

std::uint64_t start_of(const SimReport& report, std::uint64_t index) {
  for (const auto& at : report.instruction_cycles)
    if (at.index == index) return at.start_cycle;
  ADD_FAILURE() << "instruction " << index << " did not run";
  return 0;
}

TEST(SimFaults, requant_table_at_the_ends_of_its_ranges_runs_and_is_hand_computed) {
  // (M, r): (2^31 - 1, 31) ~ x1; (2^30, 31) = x/2; (0, 0) = 0; (2^31 - 1, 62) ~ x * 2^-31.
  const SimResult result =
      run_requant({{2147483647, 31}, {1073741824, 31}, {0, 0}, {2147483647, 62}});
  ASSERT_FALSE(result.report.fault) << result.report.fault->str();
  // Pixel 0: 1000 -> clamp 127; -1000 / 2 = -500 -> -128; 0; 0. Pixel 1: 100 * (1 - 2^-31)
  // rounds to 100; 200 / 2 = 100; 0; 400 * 2^-31 rounds to 0.
  const std::vector<std::int8_t> expected = {127, -128, 0, 0, 100, 100, 0, 0};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(static_cast<std::int8_t>(result.dram[0x2000 + i]), expected[i]) << "byte " << i;
}

isa::Gather gather(std::uint64_t table, std::uint32_t dram_stride_y, std::uint32_t table_rows) {
  isa::Gather x;
  x.sram_addr = 0;
  x.dram_addr = table;
  x.y_size = 3;
  x.c_size = 16;
  x.dram_stride_y = dram_stride_y;
  x.sram_stride_y = 16;
  x.table_rows = table_rows;
  x.ids_addr = 0x1000;
  x.kind = isa::Traffic::kWeights;
  return x;
}

// A gather's ids are data: an id outside [-table_rows, table_rows) is invalid_data at the
// gather's start on the load engine, naming the row, the id's DRAM byte and the id, with
// nothing written; --timing-only reads no id. Its table's placement is checked from the word:
// rows that do not start on bursts are illegal, a table past the image out of bounds.
TEST(SimFaults, gather_id_out_of_its_table_is_invalid_data_and_its_table_is_checked) {
  for (const std::int32_t bad : {5, -6}) {
    DramImage image;
    image.size_bytes = 1 << 20;
    image.bytes.assign(image.size_bytes, 0);
    const std::int32_t ids[3] = {4, -5, bad};
    std::memcpy(image.bytes.data() + 0x1000, ids, sizeof ids);
    isa::Gather x = gather(0x2000, 64, 5);
    x.push_next = true;
    isa::Nop wait;
    wait.engine = isa::Engine::kCompute;
    wait.pop_prev = true;
    wait.push_next = true;
    isa::Store out;
    out.sp = 0;
    out.dram_addr = 0x4000;
    out.y_size = 1;
    out.x_size = 1;
    out.c_size = 48;
    out.pop_prev = true;
    out.push_prev = true;
    isa::Finish finish;
    finish.pop_next = true;
    for (const bool timing_only : {false, true}) {
      SimOptions options;
      options.timing_only = timing_only;
      DramImage copy = image;
      if (timing_only) copy.bytes.clear();
      const SimResult result = run_twice(load_hw_config(kMicro),
                                         {word_of(x), word_of(wait), word_of(out), word_of(finish)},
                                         std::move(copy), options);
      if (timing_only) {
        EXPECT_FALSE(result.report.fault);
        continue;
      }
      ASSERT_TRUE(result.report.fault);
      const SimFault& fault = *result.report.fault;
      EXPECT_EQ(fault.kind, "invalid_data");
      EXPECT_EQ(fault.engine, "load");
      EXPECT_EQ(fault.instruction_index, 0);
      EXPECT_EQ(fault.cycle, 1u);
      EXPECT_EQ(fault.message, "gather id " + std::to_string(bad) +
                                   " of row 2 (DRAM 0x1008) outside [-5, 5): the table has 5 rows");
      for (int i = 0; i < 48; ++i) EXPECT_EQ(result.dram[0x4000 + i], 0) << "byte " << i;
    }
  }
  const SimReport misaligned = after_nop(load_hw_config(kMicro), gather(0x2010, 64, 5));
  ASSERT_TRUE(misaligned.fault);
  EXPECT_EQ(misaligned.fault->kind, "illegal_instruction");
  EXPECT_EQ(misaligned.fault->message,
            "field 'dram_addr' = 0x2010: a gather's table starts on a DRAM burst (64 bytes)");
  const SimReport apart = after_nop(load_hw_config(kMicro), gather(0x2000, 48, 5));
  ASSERT_TRUE(apart.fault);
  EXPECT_EQ(apart.fault->message,
            "field 'dram_stride_y' = 48: a gather's table rows are whole DRAM bursts apart (48 "
            "bytes, burst 64)");
  // Three rows at the table's start fit the image; its last row does not.
  const SimReport beyond = after_nop(load_hw_config(kMicro), gather((1 << 20) - 64 * 4, 64, 5));
  ASSERT_TRUE(beyond.fault);
  EXPECT_EQ(beyond.fault->kind, "out_of_bounds");
  EXPECT_EQ(beyond.fault->message,
            "the gather's table [0xfff00, 0x100010) lies beyond the DRAM image (1048576 bytes)");
}

TEST(SimFaults, requant_table_entry_out_of_range_is_invalid_data_at_the_requant) {
  // The same program's timing with a valid table: the fault's cycle is the requantize's start,
  // and the counters are the whole run's (the timing reads no data).
  const SimResult valid = run_requant({{1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}});
  ASSERT_FALSE(valid.report.fault);
  struct Case {
    std::vector<std::pair<std::int32_t, std::int32_t>> table;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{1 << 30, 31}, {1 << 30, 31}, {1 << 30, 63}, {1 << 30, 31}},
       "requantize table entry of channel 2 (wgt byte 272): M = 1073741824, r = 63; docs/isa.md "
       "allows 0 <= M < 2^31 and 0 <= r <= 62"},
      {{{-1, 31}, {1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}},
       "requantize table entry of channel 0 (wgt byte 256): M = -1, r = 31; docs/isa.md allows 0 "
       "<= M < 2^31 and 0 <= r <= 62"},
      {{{1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}, {1 << 30, -1}},
       "requantize table entry of channel 3 (wgt byte 280): M = 1073741824, r = -1; docs/isa.md "
       "allows 0 <= M < 2^31 and 0 <= r <= 62"},
  };
  for (const Case& c : cases) {
    const SimResult result = run_requant(c.table);
    ASSERT_TRUE(result.report.fault);
    const SimFault& fault = *result.report.fault;
    EXPECT_EQ(fault.kind, "invalid_data");
    EXPECT_EQ(fault.engine, "compute");
    EXPECT_EQ(fault.instruction_index, 3);
    EXPECT_EQ(fault.instruction_text.rfind("requant ", 0), 0u) << fault.instruction_text;
    EXPECT_EQ(fault.message, c.message);
    EXPECT_EQ(fault.cycle, start_of(valid.report, 3));
    EXPECT_EQ(result.report.cycles, valid.report.cycles);
    EXPECT_EQ(result.report.instructions_executed, 6u);
    // The requantize wrote nothing: the store wrote the scratchpad's zeros over the 0x5a.
    for (int i = 0; i < 8; ++i) EXPECT_EQ(result.dram[0x2000 + i], 0) << "byte " << i;
  }
  // --timing-only reads no table.
  const SimResult timing = run_requant(cases[0].table, true);
  EXPECT_FALSE(timing.report.fault);
}

TEST(SimFaults, requant_output_that_breaks_its_own_table_is_invalid_data_at_the_next_pixel) {
  // Pixel 0's channel-0 output, 1000 / 2 -> 127 = 0x7f, lands on the top byte of channel 3's
  // shift (act byte 0x11f): pixel 0 read a valid table, pixel 1 reads r = 0x7f00001f.
  const SimResult result = run_requant({{1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}, {1 << 30, 31}},
                                       false, "dst_sp=0 dst_addr=0x11f", 0);
  ASSERT_TRUE(result.report.fault);
  EXPECT_EQ(result.report.fault->kind, "invalid_data");
  EXPECT_EQ(result.report.fault->instruction_index, 3);
  EXPECT_EQ(result.report.fault->message,
            "requantize table entry of channel 3 (act byte 280): M = 1073741824, r = 2130706463; "
            "docs/isa.md allows 0 <= M < 2^31 and 0 <= r <= 62");
}

// The microbenchmark `name` of tests/isa/programs (its DRAM from the sidecar's dram_init), with
// `mutate` applied to the DRAM image first; on `config` (default: the sidecar's, micro).
SimResult run_microbenchmark(const std::string& name,
                             const std::function<void(std::vector<std::uint8_t>&)>& mutate,
                             const HwConfig* config = nullptr) {
  const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/";
  std::ifstream in(dir + name + ".expect.json");
  const auto spec = nlohmann::json::parse(in);
  const HwConfig micro = load_hw_config(kMicro);
  const HwConfig& hw = config ? *config : micro;
  DramImage image;
  image.size_bytes = 1 << 16;
  image.bytes.assign(image.size_bytes, 0);
  for (const auto& block : spec["dram_init"]) {
    const std::size_t at = std::stoul(block["addr"].get<std::string>(), nullptr, 16);
    const std::size_t width = block["elem"] == "i8" ? 1 : block["elem"] == "i16" ? 2 : 4;
    std::size_t i = 0;
    for (const auto& v : block["values"]) {
      const auto value = v.get<std::int64_t>();
      for (std::size_t b = 0; b < width; ++b)
        image.bytes[at + i * width + b] = static_cast<std::uint8_t>(value >> (8 * b));
      ++i;
    }
  }
  mutate(image.bytes);
  SimOptions options;
  options.record_instruction_cycles = true;
  // Assembled against micro (which has every unit), so that `config` may lack one.
  return run_twice(hw, read_program_words(dir + name + ".tasm", &micro), std::move(image), options);
}

// softmax and norm (the row normaliser, ISA version 3): refused without the unit; a bad exp
// table entry or norm parameter (data: no check of the instruction word sees it) is an
// invalid_data fault at the instruction's start naming the entry, its byte and value.
TEST(SimFaults, row_normaliser_without_its_unit_is_located) {
  HwConfig config = load_hw_config(kMicro);
  config.vector.row_normalise = false;
  for (const std::string name : {"softmax", "norm"}) {
    const SimResult result = run_microbenchmark(
        name, [](auto&) {}, &config);
    ASSERT_TRUE(result.report.fault) << name;
    EXPECT_EQ(result.report.fault->kind, "illegal_instruction");
    EXPECT_EQ(result.report.fault->instruction_index, 3);
    EXPECT_EQ(result.report.fault->message,
              "opcode '" + name +
                  "' needs a vector unit with row normalisation, which this config lacks "
                  "(vector.row_normalise: true)");
  }
}

TEST(SimFaults, softmax_table_entry_out_of_range_is_invalid_data_at_the_softmax) {
  const SimResult valid = run_microbenchmark("softmax", [](auto&) {});
  ASSERT_FALSE(valid.report.fault);
  struct Case {
    std::size_t byte;  // DRAM byte of the table (loaded to wgt 0) set to 0xff, with the next
    std::string message;
  };
  const std::vector<Case> cases = {
      // exp_low[0] of the second table (wgt 0x400 + 512): exp 0 must be 2^15.
      {0x4000 + 0x600,
       "softmax table entry exp_low[0] (wgt byte 1536) = 65535; docs/isa.md allows entries <= "
       "32768 and needs exp_low[0] = 32768 (exp 0)"},
      // exp_high[3] of the first table.
      {0x4000 + 6,
       "softmax table entry exp_high[3] (wgt byte 6) = 65535; docs/isa.md allows entries <= "
       "32768 and no more"},
  };
  for (const Case& c : cases) {
    const SimResult result = run_microbenchmark("softmax", [&](std::vector<std::uint8_t>& dram) {
      dram[c.byte] = dram[c.byte + 1] = 0xff;
    });
    ASSERT_TRUE(result.report.fault);
    const SimFault& fault = *result.report.fault;
    EXPECT_EQ(fault.kind, "invalid_data");
    const std::uint64_t index = c.byte >= 0x4400 ? 5 : 3;
    EXPECT_EQ(fault.instruction_index, static_cast<std::int64_t>(index));
    EXPECT_EQ(fault.instruction_text.rfind("softmax ", 0), 0u) << fault.instruction_text;
    EXPECT_EQ(fault.message, c.message);
    EXPECT_EQ(fault.cycle, start_of(valid.report, index));
    EXPECT_EQ(result.report.cycles, valid.report.cycles);
  }
}

TEST(SimFaults, norm_parameter_out_of_range_is_invalid_data_at_the_norm) {
  const SimResult valid = run_microbenchmark("norm", [](auto&) {});
  ASSERT_FALSE(valid.report.fault);
  // Channel 1's r (params at wgt 0: E, then 16 bytes a channel; r at 8 + 16 + 4) = 70.
  SimResult result = run_microbenchmark("norm", [](std::vector<std::uint8_t>& dram) {
    dram[0x4000 + 28] = 70;
    dram[0x4000 + 29] = 0;
  });
  ASSERT_TRUE(result.report.fault);
  EXPECT_EQ(result.report.fault->kind, "invalid_data");
  EXPECT_EQ(result.report.fault->instruction_index, 3);
  EXPECT_EQ(result.report.fault->cycle, start_of(valid.report, 3));
  EXPECT_EQ(result.report.fault->message,
            "norm parameters of channel 1 (wgt byte 24): G = 1073741824, r = 70, B = "
            "35184372088832; docs/isa.md allows |G| < 2^31, 0 <= r <= 62, |B| <= 2^61");
  // The second norm's E (wgt 0x80) negative.
  result = run_microbenchmark("norm", [](std::vector<std::uint8_t>& dram) {
    for (int b = 0; b < 8; ++b) dram[0x4080 + b] = 0xff;
  });
  ASSERT_TRUE(result.report.fault);
  EXPECT_EQ(result.report.fault->instruction_index, 5);
  EXPECT_EQ(result.report.fault->message,
            "norm epsilon term E (wgt byte 128) = -1; docs/isa.md allows 0 <= E < 2^60");
}

TEST(SimCli, fault_exits_with_two_and_writes_status_fault) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tessel_sim_cli_test";
  fs::create_directories(dir);
  isa::Program program;
  program.instructions = {load(0, 4090, 0x1000, 64), isa::Finish{}};
  isa::write_binary_file(program, (dir / "bad.bin").string());
  const std::string json_path = (dir / "r.json").string();
  EXPECT_EQ(cli::run_args({"sim", (dir / "bad.bin").string(), "--hw", kMicro, "--json", json_path}),
            2);
  std::ifstream in(json_path);
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["status"], "fault");
  EXPECT_EQ(report["fault"]["kind"], "out_of_bounds");
  EXPECT_EQ(report["fault"]["instruction_index"], 0);
  // The load faults at cycle 1, before fetch dispatches the finish in that cycle.
  EXPECT_EQ(report["dram_bytes"]["by_kind"]["instructions"], 32);
  EXPECT_EQ(report["cycles"], 1);
}

}  // namespace
}  // namespace tessel::sim
