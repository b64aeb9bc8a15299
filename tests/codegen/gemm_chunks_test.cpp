// Reduction chunks: a streamed Gemm or dense conv whose one output block's whole reduction
// exceeds the weight scratchpad goes through its buffer one chunk of input blocks at a time
// (conv init=acc after the first), exactly as the scheduler models it; bit exact, bytes equal.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "compiler/zoo/builder.hpp"
#include "tests/codegen/e2e_check.hpp"

namespace tessel::codegen {
namespace {

using test::config_path;
using test::expect_end_to_end;

/// input 20 x 10 x 11 -> flatten (K = 2200) -> fc1 (32) -> ReLU -> fc2 (8). K is 137.5 blocks
/// of 16, and 20 channels per pixel are not a whole block: the Gemm reads its input as one
/// pixel of 2200 channels in HWC order, so the blocks run across pixels.
ir::Graph chunked_mlp(int64_t fc1_outputs = 32) {
  zoo::NetBuilder net("chunked_mlp", {});
  std::string x = net.input("input", 20, 10, 11);
  x = net.flatten(x, "flatten");
  x = net.relu(net.linear(x, "fc1", fc1_outputs, 2.0), "relu");
  return net.finish({net.linear(x, "fc2", 8)});
}

/// vta-pynq with a 20 KiB weight buffer: one 16-column block of fc1's whole reduction (138
/// blocks of 16 x 16 bytes = 35,328 B) does not fit, so the scheduler streams fc1 in two
/// 16-channel slices and chunks each slice's reduction in 64 input blocks (16,576 B with the
/// bias vector and the table); two copies would not fit, so the group is serialised.
HwConfig small_weight_config() {
  HwConfig config = load_hw_config(config_path("vta-pynq"));
  config.scratchpads[1].size_bytes = 20 * 1024;  // "wgt"
  return config;
}

/// One line per instruction of a program range, with the fields this test is about.
std::vector<std::string> describe(const isa::Program& program, int64_t first, int64_t end,
                                  int64_t weights_region) {
  std::vector<std::string> lines;
  for (int64_t i = first; i < end; ++i) {
    const isa::Instruction& instruction = program.instructions[static_cast<size_t>(i)];
    std::string line(isa::mnemonic(instruction));
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, isa::Load>) {
            if (x.kind == isa::Traffic::kWeights && x.elem != isa::Elem::kI32)
              line += " w+" + std::to_string(static_cast<int64_t>(x.dram_addr) - weights_region) +
                      " y=" + std::to_string(x.y_size) + " x=" + std::to_string(x.x_size) +
                      " c=" + std::to_string(x.c_size) + " pad=" + std::to_string(x.pad_right) +
                      " sram=" + std::to_string(x.sram_addr);
            else
              line += x.kind == isa::Traffic::kWeights ? " table" : " input";
          }
          if constexpr (std::is_same_v<T, isa::Conv>)
            line += std::string(" init=") +
                    (x.init == isa::Init::kBias  ? "bias"
                     : x.init == isa::Init::kAcc ? "acc"
                                                 : "zero") +
                    " ic_blocks=" + std::to_string(x.ic_blocks) + " in+" +
                    std::to_string(x.in_addr) + " w=" + std::to_string(x.w_addr);
          if constexpr (!std::is_same_v<T, isa::Finish>) {
            if (x.pop_prev) line += " pop_prev";
            if (x.pop_next) line += " pop_next";
            if (x.push_prev) line += " push_prev";
            if (x.push_next) line += " push_next";
          }
        },
        instruction);
    lines.push_back(line);
  }
  return lines;
}

/// fc1's group in the schedule (null when absent, a failure when it is not streamed in
/// `channel_tiles` with `double_buffered`), a buffer of a group and fc1's code.
const sched::GroupSchedule* fc1_group(const sched::ScheduledNet& scheduled, int64_t channel_tiles,
                                      bool double_buffered) {
  for (const sched::GroupSchedule& g : scheduled.schedule.groups) {
    if (scheduled.net.op(g.ops.front()).name != "fc1") continue;
    EXPECT_EQ(g.channel_tiles, channel_tiles);
    EXPECT_FALSE(g.weights_resident);
    EXPECT_EQ(g.double_buffered, double_buffered);
    return &g;
  }
  return nullptr;
}
const sched::BufferAlloc* buffer_named(const sched::GroupSchedule& group, const std::string& name) {
  for (const auto& b : group.buffers)
    if (b.name == name) return &b;
  return nullptr;
}
const GroupCode* fc1_code(const CompiledProgram& compiled) {
  for (const GroupCode& g : compiled.groups)
    if (g.ops.front() == "fc1") return &g;
  return nullptr;
}

TEST(GemmChunks, a_chunked_reduction_is_bit_exact_and_moves_the_scheduled_bytes) {
  CompiledProgram compiled;
  sched::ScheduledNet scheduled;
  expect_end_to_end(chunked_mlp(), small_weight_config(), "opfusion", &compiled, &scheduled);
  ASSERT_FALSE(compiled.groups.empty());

  // The schedule: fc1 (its ReLU folded into the requant's clamp: no vector pass of its own,
  // docs/scheduler.md "Activation folding") streamed in 2 channel tiles, serialised, one 64-block
  // chunk of one output block in the buffer: 64 * 256 + 16 * 4 (bias) + 16 * 8 (table) = 16,576
  // bytes.
  const sched::GroupSchedule* fc1 = fc1_group(scheduled, 2, false);
  ASSERT_NE(fc1, nullptr);
  ASSERT_NE(buffer_named(*fc1, "w:fc1"), nullptr);
  EXPECT_EQ(buffer_named(*fc1, "w:fc1")->size_bytes, 16576);

  // The program of that group (groups before it are DRAM views with no code).
  const GroupCode* code = fc1_code(compiled);
  ASSERT_NE(code, nullptr);
  const int64_t weights = compiled.layout.find("w:fc1")->offset;
  // Per tile (16 output channels): chunk 0 (blocks 0-63) with the bias and table, then chunk 1
  // (64-127) and chunk 2 (128-137: 9 whole blocks and one of 8 rows, padded by the DMA), each
  // loaded once the previous chunk's conv has read the buffer (compute->load token) and
  // accumulated onto it. DRAM per slice: [chunk][ocb][icb][r][c], 16 x 2200 bytes a slice, a
  // chunk's first byte at 16 x (1024 k) of it. Chunk k's input starts at byte 1024 k of the
  // one 2200-channel pixel. The input (tile 0 only) is kept for tile 1.
  const std::vector<std::string> expected = {
      // tile 0
      "load w+0 y=64 x=16 c=16 pad=0 sram=0",
      "load table",
      "load table",
      "load input push_next",
      "vcfg pop_prev",
      "conv init=bias ic_blocks=64 in+0 w=0 push_prev",
      "load w+16384 y=64 x=16 c=16 pad=0 sram=0 pop_next push_next",
      "conv init=acc ic_blocks=64 in+1024 w=0 pop_prev push_prev",
      "load w+32768 y=9 x=16 c=16 pad=0 sram=0 pop_next",
      "load w+35072 y=1 x=8 c=16 pad=8 sram=2304 push_next",
      "conv init=acc ic_blocks=10 in+2048 w=0 pop_prev",
      "requant push_next",
      "store pop_prev push_prev",
      "nop pop_next push_prev",
      // tile 1: the second slice, 16 x 2200 bytes further
      "load w+35200 y=64 x=16 c=16 pad=0 sram=0 pop_next",
      "load table",
      "load table push_next",
      "vcfg pop_prev",
      "conv init=bias ic_blocks=64 in+0 w=0 push_prev",
      "load w+51584 y=64 x=16 c=16 pad=0 sram=0 pop_next push_next",
      "conv init=acc ic_blocks=64 in+1024 w=0 pop_prev push_prev",
      "load w+67968 y=9 x=16 c=16 pad=0 sram=0 pop_next",
      "load w+70272 y=1 x=8 c=16 pad=8 sram=2304 push_next",
      "conv init=acc ic_blocks=10 in+2048 w=0 pop_prev",
      "requant push_next",
      "store pop_prev push_prev",
      "nop pop_next push_prev",
  };
  EXPECT_EQ(describe(compiled.program, code->first_instruction, code->end_instruction, weights),
            expected);
  EXPECT_EQ(code->traffic.weights_read, 32 * 2200 + 32 * 4);  // every weight once, the bias
  EXPECT_EQ(code->traffic.weights_read, fc1->traffic.weights_read);
}

/// vta-pynq with a 34 KiB weight buffer and fc1 of 64 outputs: one block's whole reduction
/// (35,520 B with bias and table) does not fit, but two copies of a 16-channel slice's 64-block
/// chunk (2 x 16,576 = 33,152 B) do. `optimal` (latency) double-buffers fc1 in 4 channel tiles.
HwConfig two_chunk_config() {
  HwConfig config = load_hw_config(config_path("vta-pynq"));
  config.scratchpads[1].size_bytes = 34 * 1024;
  return config;
}

TEST(GemmChunks, a_double_buffered_reduction_ping_pongs_its_chunks) {
  CompiledProgram compiled;
  sched::ScheduledNet scheduled;
  expect_end_to_end(chunked_mlp(64), two_chunk_config(), "optimal", &compiled, &scheduled, {},
                    nullptr, nullptr, sched::Objective::Latency);
  const sched::GroupSchedule* fc1 = fc1_group(scheduled, 4, true);
  ASSERT_NE(fc1, nullptr);
  // The two slice copies: 16,576 bytes each, one after the other.
  ASSERT_NE(buffer_named(*fc1, "w:fc1"), nullptr);
  ASSERT_NE(buffer_named(*fc1, "w:fc1#1"), nullptr);
  const int64_t copy0 = buffer_named(*fc1, "w:fc1")->offset;
  const int64_t copy1 = buffer_named(*fc1, "w:fc1#1")->offset;
  ASSERT_EQ(copy0, 0);
  ASSERT_EQ(copy1, 16576);
  const GroupCode* code = fc1_code(compiled);
  ASSERT_NE(code, nullptr);
  // 4 tiles x 3 chunks = 12 phases; phase q's chunk lands in and is read from copy q % 2, so a
  // tile's chunks do not keep one parity (3 chunks a tile): bias, acc, acc per tile.
  std::vector<std::string> convs;
  std::vector<int64_t> chunk_sram;  // the first weight block load of every chunk
  for (int64_t i = code->first_instruction; i < code->end_instruction; ++i) {
    const auto& instruction = compiled.program.instructions[static_cast<size_t>(i)];
    if (const auto* c = std::get_if<isa::Conv>(&instruction))
      convs.push_back(std::string(c->init == isa::Init::kBias ? "bias" : "acc") + "@" +
                      std::to_string(c->w_addr));
    if (const auto* l = std::get_if<isa::Load>(&instruction))
      if (l->kind == isa::Traffic::kWeights && l->elem != isa::Elem::kI32 && l->x_size == 16 &&
          (l->sram_addr == copy0 || l->sram_addr == copy1) && l->sp == 1)
        chunk_sram.push_back(l->sram_addr);
  }
  const std::vector<std::string> expected = {"bias@0", "acc@16576",  "acc@0",  "bias@16576",
                                             "acc@0",  "acc@16576",  "bias@0", "acc@16576",
                                             "acc@0",  "bias@16576", "acc@0",  "acc@16576"};
  EXPECT_EQ(convs, expected);
  const std::vector<int64_t> lands = {0, 16576, 0, 16576, 0, 16576, 0, 16576, 0, 16576, 0, 16576};
  EXPECT_EQ(chunk_sram, lands);
  EXPECT_EQ(code->traffic.weights_read, 64 * 2200 + 64 * 4);  // every weight once, the bias
}

TEST(GemmChunks, every_policy_is_bit_exact_with_chunks) {
  // Each policy gives fc1 its own streamed group (a Gemm group channel-tiles only with
  // elementwise ops after it); all of them chunk its reduction.
  for (const char* policy : {"layerwise", "fusion", "fusion+reuse", "optimal"}) {
    SCOPED_TRACE(policy);
    CompiledProgram compiled;
    expect_end_to_end(chunked_mlp(), small_weight_config(), policy, &compiled);
    int64_t accumulating = 0;
    for (const auto& instruction : compiled.program.instructions)
      if (const auto* conv = std::get_if<isa::Conv>(&instruction))
        accumulating += conv->init == isa::Init::kAcc;
    EXPECT_EQ(accumulating, 4);  // chunks 1 and 2 of each of the two slices
  }
}

TEST(GemmChunks, a_reduction_longer_than_one_instruction_runs_in_chunks_where_it_fits) {
  // edge-small's 8-row array: K = 103 x 8 x 10 = 8,240 inputs are 1,030 input blocks, beyond
  // the conv instruction's ic_blocks field (at most 1,023), though one output block's whole
  // reduction (65,920 B) fits its 128 KiB scratchpad (AlexNet's 9,216-input classifier.1 was
  // refused by codegen here). The scheduler chunks it, at most 64 blocks an instruction.
  zoo::NetBuilder net("long_gemm", {});
  std::string x = net.flatten(net.input("input", 103, 8, 10), "flatten");
  x = net.relu(net.linear(x, "fc1", 8, 2.0), "relu");
  const ir::Graph graph = net.finish({net.linear(x, "fc2", 8)});
  for (const char* policy : {"layerwise", "fusion", "optimal"}) {
    SCOPED_TRACE(policy);
    CompiledProgram compiled;
    expect_end_to_end(graph, load_hw_config(config_path("edge-small")), policy, &compiled);
    int64_t blocks = 0, accumulating = 0;
    for (const auto& instruction : compiled.program.instructions) {
      const auto* conv = std::get_if<isa::Conv>(&instruction);
      if (conv == nullptr || conv->oc_blocks != 1 || conv->ic_blocks == 1) continue;  // fc1
      EXPECT_LE(conv->ic_blocks, 64);
      blocks += conv->ic_blocks;
      accumulating += conv->init == isa::Init::kAcc;
    }
    EXPECT_EQ(blocks, 1030);      // every input block once
    EXPECT_EQ(accumulating, 16);  // 16 chunks of 64 and one of 6: all but the first accumulate
  }
}

/// input 392 x 8 x 8 -> conv1 1x1 (40, bias) -> ReLU -> conv2 3x3 pad 1 (24, bias): on vta-pynq
/// (16 x 16 int8 array) with a 4 KiB weight buffer, one output block of conv1 holds 25 input
/// blocks (392 = 24.5 x 16) of 256 B and conv2 3 blocks x 9 taps of 256 B, with the block's bias
/// (64 B) and table (128 B): 6,592 and 7,104 B, neither fits. Both run their reduction in
/// chunks of as many input blocks as 4,096 - 192 bytes hold: conv1 15 (3,840 B), conv2 1
/// (2,304 B).
ir::Graph chunked_convs() {
  zoo::NetBuilder net("chunked_convs", {});
  std::string x = net.input("input", 392, 8, 8);
  zoo::ConvSpec one = zoo::conv_spec(40, 1);
  one.bias = true;
  x = net.relu(net.conv(x, "conv1", one), "relu");
  zoo::ConvSpec three = zoo::conv_spec(24, 3, 1, 1);
  three.bias = true;
  three.gain = 1.0;
  return net.finish({net.conv(x, "conv2", three)});
}

HwConfig tiny_weight_config() {
  HwConfig config = load_hw_config(config_path("vta-pynq"));
  config.scratchpads[1].size_bytes = 4 * 1024;  // "wgt"
  return config;
}

TEST(ConvChunks, convs_whose_reduction_exceeds_the_weights_buffer_run_in_chunks) {
  for (const char* policy : {"layerwise", "opfusion", "fusion", "optimal"}) {
    SCOPED_TRACE(policy);
    CompiledProgram compiled;
    sched::ScheduledNet scheduled;
    std::uint64_t cycles = 0;
    expect_end_to_end(chunked_convs(), tiny_weight_config(), policy, &compiled, &scheduled, {},
                      nullptr, &cycles);
    // The cost model counts each chunk's conv instruction (its block load, fill and drain) and
    // each chunk's weight DMAs: the simulated cycles are the predicted ones within 5%.
    ASSERT_GT(scheduled.schedule.cycles, 0);
    const double ratio =
        static_cast<double>(cycles) / static_cast<double>(scheduled.schedule.cycles);
    EXPECT_GT(ratio, 0.95);
    EXPECT_LT(ratio, 1.05);
    // Per op, the chunk the schedule gives it (in input channels), wherever it is grouped.
    std::map<std::string, int64_t> chunk;
    for (const sched::GroupSchedule& g : scheduled.schedule.groups)
      for (size_t pos = 0; pos < g.ops.size(); ++pos)
        if (pos < g.reduction_chunk_inputs.size())
          chunk[scheduled.net.op(g.ops[pos]).name] = g.reduction_chunk_inputs[pos];
    EXPECT_EQ(chunk["conv1"], 15 * 16);
    EXPECT_EQ(chunk["conv2"], 16);
    // Each conv step is its chunks in order: conv1 (kh 1) 15 blocks from the bias, then the
    // other 10 (25 = 15 + 10) accumulated, reading its input 15 x 16 channels further; conv2
    // (kh 3) one block from the bias, then two accumulated, each 16 channels further.
    int64_t from_bias[4] = {}, accumulated[4] = {};
    int64_t step_in[4] = {}, chunk_of[4] = {};
    for (const auto& instruction : compiled.program.instructions) {
      const auto* conv = std::get_if<isa::Conv>(&instruction);
      if (conv == nullptr) continue;
      EXPECT_LE(conv->ic_blocks * conv->kh * conv->kw * 256, 4096 - 192);
      ASSERT_TRUE(conv->kh == 1 || conv->kh == 3);
      const int k = static_cast<int>(conv->kh);
      if (conv->init != isa::Init::kAcc) {
        ++from_bias[k];
        chunk_of[k] = 0;
        step_in[k] = conv->in_addr;
        EXPECT_EQ(conv->ic_blocks, k == 1 ? 15u : 1u);
        continue;
      }
      ++accumulated[k];
      ++chunk_of[k];
      EXPECT_EQ(conv->ic_blocks, k == 1 ? 10u : 1u);
      EXPECT_EQ(conv->in_addr, step_in[k] + chunk_of[k] * (k == 1 ? 15 : 1) * 16);
    }
    EXPECT_GT(from_bias[1], 0);
    EXPECT_GT(from_bias[3], 0);
    EXPECT_EQ(accumulated[1], from_bias[1]);
    EXPECT_EQ(accumulated[3], 2 * from_bias[3]);
  }
}

}  // namespace
}  // namespace tessel::codegen
