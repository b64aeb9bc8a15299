// The .tasm assembler: syntax, defaults, and the exact located messages of its errors.
#include <gtest/gtest.h>

#include "isa/assembler.hpp"
#include "support/diagnostic.hpp"

namespace tessel::isa {
namespace {

/// The first diagnostic assembling `text` throws, or "" when it assembles.
std::string first_error(std::string_view text, const AssembleOptions& options = {}) {
  try {
    assemble(text, "prog.tasm", options);
  } catch (const InputError& e) {
    return e.diagnostics().front().str();
  }
  return "";
}

TargetInfo act_target() {
  TargetInfo t;
  t.scratchpads = {{"act", 192 * 1024, {SramKind::kActivations, SramKind::kOutputs}},
                   {"wgt", 64 * 1024, {SramKind::kWeights}},
                   {"acc", 64 * 1024, {SramKind::kAccumulators}}};
  t.matrix_rows = 16;
  t.matrix_cols = 16;
  return t;
}

TEST(IsaAssembler, comments_blank_lines_and_defaults) {
  const auto program = assemble(
      "# a comment\n"
      "\n"
      "load sp=0 dram_addr=0x40 y_size=1 x_size=1 c_size=64 push_next=1 ; trailing\n"
      "  finish pop_prev=1\t# another\n",
      "prog.tasm");
  ASSERT_EQ(program.instructions.size(), 2u);
  const auto& load = std::get<Load>(program.instructions[0]);
  EXPECT_EQ(load.dram_addr, 0x40u);
  EXPECT_EQ(load.c_size, 64u);
  EXPECT_EQ(load.elem, Elem::kI8);              // first enum name
  EXPECT_EQ(load.kind, Traffic::kActivations);  // first enum name
  EXPECT_EQ(load.sram_stride_x, 0u);            // omitted: 0
  EXPECT_TRUE(load.push_next);
  EXPECT_TRUE(std::get<Finish>(program.instructions[1]).pop_prev);
}

TEST(IsaAssembler, values_in_hex_binary_negative_and_enum_names) {
  const auto program = assemble(
      "vcfg mult_a=0x40000000 mult_b=0b101 shift=31 zp=-3 lo=-128 hi=127\n"
      "pool mode=avg elem=i16 out_h=1 out_w=1 c_size=8 kh=7 kw=7 stride_h=1 stride_w=1\n",
      "prog.tasm");
  const auto& vcfg = std::get<Vcfg>(program.instructions[0]);
  EXPECT_EQ(vcfg.mult_a, 0x40000000u);
  EXPECT_EQ(vcfg.mult_b, 5u);
  EXPECT_EQ(vcfg.zp, -3);
  const auto& pool = std::get<Pool>(program.instructions[1]);
  EXPECT_EQ(pool.mode, PoolMode::kAvg);
  EXPECT_EQ(pool.elem, Elem::kI16);
}

TEST(IsaAssembler, unknown_instruction_suggests_the_closest) {
  EXPECT_EQ(first_error("finish\nlod sp=0\n"),
            "prog.tasm:2:1: error: unknown instruction 'lod'; did you mean 'load'?");
}

TEST(IsaAssembler, unknown_field_suggests_the_closest) {
  EXPECT_EQ(first_error("finish\nload sram_adr=0 y_size=1 x_size=1 c_size=1\n"),
            "prog.tasm:2:6: error: load has no field 'sram_adr'; did you mean 'sram_addr'?");
}

TEST(IsaAssembler, missing_required_field_is_named) {
  EXPECT_EQ(first_error("load y_size=1 c_size=1\n"),
            "prog.tasm:1:1: error: load: missing field 'x_size'");
}

TEST(IsaAssembler, value_out_of_range_points_at_the_field) {
  EXPECT_EQ(first_error("load y_size=1 x_size=4096 c_size=1\n"),
            "prog.tasm:1:15: error: field 'x_size' = 4096 out of range [1, 4095]");
  EXPECT_EQ(first_error("load y_size=1 x_size=1 c_size=1 sram_addr=0x1000000\n"),
            "prog.tasm:1:33: error: field 'sram_addr' = 0x1000000 out of range [0x0, 0xffffff]");
  EXPECT_EQ(first_error("load y_size=1 x_size=3 c_size=4 pad_right=256\n"),
            "prog.tasm:1:33: error: field 'pad_right' = 256 out of range [0, 255]");
}

TEST(IsaAssembler, bad_enum_name_and_bad_number) {
  EXPECT_EQ(first_error("pool mode=avgg out_h=1 out_w=1 c_size=1 kh=1 kw=1 stride_h=1 stride_w=1"),
            "prog.tasm:1:6: error: field 'mode' = 'avgg' is not one of its names; did you mean "
            "'avg'?");
  EXPECT_EQ(first_error("load y_size=1 x_size=1 c_size=twelve\n"),
            "prog.tasm:1:24: error: field 'c_size' = 'twelve' is not an integer");
  EXPECT_EQ(first_error("load sp=act y_size=1 x_size=1 c_size=1\n"),
            "prog.tasm:1:6: error: field 'sp' = 'act' is not an integer (scratchpad names need "
            "--hw)");
}

TEST(IsaAssembler, duplicate_field_and_malformed_token) {
  EXPECT_EQ(first_error("finish pop_prev=1 pop_prev=0"),
            "prog.tasm:1:19: error: field 'pop_prev' given twice (first at column 8)");
  EXPECT_EQ(first_error("finish pop_prev = 1"),
            "prog.tasm:1:8: error: expected field=value, got 'pop_prev'");
}

TEST(IsaAssembler, cross_field_rule_points_at_the_field) {
  EXPECT_EQ(first_error("load pop_prev=1 y_size=1 x_size=1 c_size=1"),
            "prog.tasm:1:6: error: field 'pop_prev' = 1: the load engine has no previous engine");
}

TEST(IsaAssembler, every_error_is_reported_not_only_the_first) {
  try {
    assemble("lod\nfinish\nfinsh\n", "prog.tasm");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[1].location.line, 3);
  }
}

TEST(IsaAssembler, hw_target_resolves_scratchpad_names) {
  const TargetInfo target = act_target();
  const auto program =
      assemble("load sp=wgt kind=weights y_size=1 x_size=1 c_size=256\n", "p.tasm", {&target});
  EXPECT_EQ(std::get<Load>(program.instructions[0]).sp, 1u);
  EXPECT_EQ(first_error("load sp=wgts y_size=1 x_size=1 c_size=1\n", {&target}),
            "prog.tasm:1:6: error: field 'sp' = 'wgts' names no scratchpad; did you mean 'wgt'?");
}

TEST(IsaAssembler, hw_target_rejects_an_address_beyond_the_scratchpad) {
  const TargetInfo target = act_target();
  EXPECT_EQ(
      first_error("finish\nload sp=act sram_addr=0x30000 y_size=1 x_size=1 c_size=1\n", {&target}),
      "prog.tasm:2:13: error: field 'sram_addr' = 0x30000 beyond scratchpad 'act' (192 KiB)");
}

TEST(IsaAssembler, hw_target_rejects_a_box_that_runs_off_the_end) {
  const TargetInfo target = act_target();
  // 2 rows of 16 pixels x 16 channels at stride 256/16: last byte 0x2ff00 + 511 = 0x300ff.
  EXPECT_EQ(first_error("load sp=act sram_addr=0x2ff00 y_size=2 x_size=16 c_size=16 "
                        "sram_stride_y=256 sram_stride_x=16\n",
                        {&target}),
            "prog.tasm:1:13: error: field 'sram_addr' = 0x2ff00: the operand's last byte 0x300ff "
            "is beyond scratchpad 'act' (192 KiB)");
}

TEST(IsaAssembler, hw_target_rejects_data_the_scratchpad_may_not_hold) {
  const TargetInfo target = act_target();
  EXPECT_EQ(first_error("conv in_sp=act w_sp=act acc_sp=acc out_h=1 out_w=1 ic_blocks=1 "
                        "oc_blocks=1 kh=1 kw=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1\n",
                        {&target}),
            "prog.tasm:1:16: error: field 'w_sp' = act: the scratchpad may not hold weights");
}

TEST(IsaAssembler, disassembly_writes_every_field_and_names_with_a_target) {
  Load load;
  load.sp = 1;
  load.c_size = 4;
  const std::string line = format_instruction(load, {"act", "wgt"});
  EXPECT_EQ(line,
            "load pop_prev=0 pop_next=0 push_prev=0 push_next=0 sp=wgt elem=i8 "
            "kind=activations sram_addr=0x0 dram_addr=0x0 y_size=1 x_size=1 c_size=4 "
            "dram_stride_y=0 dram_stride_x=0 sram_stride_y=0 sram_stride_x=0 pad_top=0 "
            "pad_bottom=0 pad_left=0 pad_right=0 pad_value=0");
}

}  // namespace
}  // namespace tessel::isa
