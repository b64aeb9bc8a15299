// SRAM operand extents and validation against a target, on hand-computed tiny cases.
#include <gtest/gtest.h>

#include "isa/target.hpp"

namespace tessel::isa {
namespace {

TargetInfo split_target() {
  TargetInfo t;
  t.scratchpads = {{"inp", 1024, {SramKind::kActivations}},
                   {"wgt", 4096, {SramKind::kWeights}},
                   {"acc", 4096, {SramKind::kAccumulators}},
                   {"out", 1024, {SramKind::kOutputs}}};
  t.matrix_rows = 4;
  t.matrix_cols = 4;
  return t;
}

Conv conv_3x3_pad1() {
  Conv x;
  x.in_sp = 0;
  x.w_sp = 1;
  x.acc_sp = 2;
  x.out_h = x.out_w = 2;
  x.ic_blocks = 1;
  x.oc_blocks = 2;
  x.kh = x.kw = 3;
  x.pad_top = x.pad_left = 1;  // stored input: (2-1)+3-1 = 3 rows/cols before pads -> 4 - 1 = 3
  x.in_stride_y = 12;          // 3 pixels x 4 channels
  x.in_stride_x = 4;
  x.acc_stride_y = 16;  // 2 pixels x 8 channels
  x.acc_stride_x = 8;
  x.init = Init::kBias;
  x.bias_addr = 0x200;
  return x;
}

TEST(IsaTarget, conv_operand_extents_follow_the_layouts) {
  const auto accesses = sram_accesses(conv_3x3_pad1(), 4, 4, 8);
  ASSERT_EQ(accesses.size(), 4u);  // input, weights, bias, accumulators (written)
  // input: stored rows = (2-1)*1 + (3-1)*1 + 1 - 1 - 0 = 3, cols 3, 4 channels:
  // last element (2, 2, 3) at 2*12 + 2*4 + 3 = 35 -> end 36
  EXPECT_EQ(accesses[0].addr_field, "in_addr");
  EXPECT_EQ(accesses[0].end, 36);
  // weights: 2 oc blocks x 1 ic block x 3 x 3 x 4 x 4 = 288 bytes
  EXPECT_EQ(accesses[1].end, 288);
  // bias: 8 channels x 4 bytes after 0x200
  EXPECT_EQ(accesses[2].begin, 0x200);
  EXPECT_EQ(accesses[2].end, 0x200 + 32);
  // accumulators: (1*16 + 1*8 + 8) * 4 = 128 bytes
  EXPECT_EQ(accesses[3].end, 128);
  EXPECT_TRUE(accesses[3].is_write);
}

TEST(IsaTarget, a_valid_conv_passes) {
  EXPECT_FALSE(validate(conv_3x3_pad1(), split_target()).has_value());
}

TEST(IsaTarget, weights_past_the_end_are_reported_on_w_addr) {
  Conv x = conv_3x3_pad1();
  x.w_addr = 4096 - 287;
  const auto problem = validate(x, split_target());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "w_addr");
  EXPECT_EQ(problem->message,
            "field 'w_addr' = 0xee1: the operand's last byte 0x1000 is beyond scratchpad 'wgt' "
            "(4 KiB)");
}

TEST(IsaTarget, missing_scratchpad_lists_the_config_names) {
  Requant x;
  x.src_sp = 2;
  x.dst_sp = 7;
  const auto problem = validate(x, split_target());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message,
            "field 'dst_sp' = 7: no such scratchpad (the config has 4: inp, wgt, acc, out)");
}

TEST(IsaTarget, requant_must_read_accumulators) {
  Requant x;
  x.src_sp = 0;
  x.dst_sp = 3;
  const auto problem = validate(x, split_target());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message, "field 'src_sp' = inp: the scratchpad may not hold accumulators");
}

TEST(IsaTarget, conv_elem_must_match_the_matrix_input_width) {
  Conv x = conv_3x3_pad1();
  x.elem = Elem::kI16;
  const auto problem = validate(x, split_target());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message,
            "field 'elem' = i16 but the matrix unit takes 8-bit inputs (matrix.input_bits)");
}

TEST(IsaTarget, padded_load_box_counts_its_padding) {
  Load x;
  x.y_size = 2;
  x.x_size = 2;
  x.c_size = 4;
  x.pad_top = x.pad_bottom = x.pad_left = x.pad_right = 1;  // 4 x 4 pixels written
  x.sram_stride_y = 16;
  x.sram_stride_x = 4;
  const auto accesses = sram_accesses(x, 4, 4, 8);
  ASSERT_EQ(accesses.size(), 1u);
  EXPECT_EQ(accesses[0].end, 3 * 16 + 3 * 4 + 4);  // 64 bytes
  x.sram_addr = 1024 - 63;
  EXPECT_TRUE(validate(x, split_target()).has_value());
  x.sram_addr = 1024 - 64;
  EXPECT_FALSE(validate(x, split_target()).has_value());
}

TEST(IsaTarget, sizes_are_written_in_binary_units) {
  EXPECT_EQ(format_size(192 * 1024), "192 KiB");
  EXPECT_EQ(format_size(2 << 20), "2 MiB");
  EXPECT_EQ(format_size(1000), "1000 bytes");
}

}  // namespace
}  // namespace tessel::isa

namespace tessel::isa {
namespace {

// ISA version 3: lut and reduce need their unit; their operands' extents by hand.
Lut lut_2x3x5() {
  Lut x;
  x.src_sp = 0;
  x.table_sp = 1;
  x.dst_sp = 3;
  x.dst_elem = Elem::kI16;
  x.table_addr = 0x300;
  x.y_size = 2;
  x.x_size = 3;
  x.c_size = 5;
  x.src_stride_y = 15;
  x.src_stride_x = 5;
  x.dst_stride_y = 16;
  x.dst_stride_x = 5;
  return x;
}

TEST(IsaTarget, lut_operands_are_the_source_the_table_and_the_destination) {
  const auto accesses = sram_accesses(lut_2x3x5(), 4, 4, 8);
  ASSERT_EQ(accesses.size(), 3u);
  // source: int8, last element (1, 2, 4) at 15 + 10 + 4 = 29 -> end 30
  EXPECT_EQ(accesses[0].end, 30);
  // table: 256 i16 entries from 0x300 -> 0x500
  EXPECT_EQ(accesses[1].addr_field, "table_addr");
  EXPECT_EQ(accesses[1].begin, 0x300);
  EXPECT_EQ(accesses[1].end, 0x500);
  // destination: i16, last element at 16 + 10 + 4 = 30 -> (30 + 1) * 2 = 62
  EXPECT_EQ(accesses[2].end, 62);
  EXPECT_TRUE(accesses[2].is_write);
}

TEST(IsaTarget, lut_and_reduce_are_refused_without_their_unit) {
  TargetInfo t = split_target();
  auto problem = validate(lut_2x3x5(), t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "opcode");
  EXPECT_EQ(problem->message,
            "opcode 'lut' needs a vector unit with a lookup table, which this config lacks "
            "(vector.lookup_table: true)");
  Reduce r;
  r.dst_sp = 2;
  r.y_size = r.x_size = r.c_size = 1;
  problem = validate(r, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message,
            "opcode 'reduce' needs a vector unit with row reductions, which this config lacks "
            "(vector.row_reduce: true)");
  t.lookup_table = t.row_reduce = true;
  EXPECT_FALSE(validate(lut_2x3x5(), t).has_value());
  EXPECT_FALSE(validate(r, t).has_value());
  // A table past the weight scratchpad's end (4096 bytes): 0xF80 + 512 > 4096.
  Lut far = lut_2x3x5();
  far.table_addr = 0xF80;
  problem = validate(far, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "table_addr");
  // reduce writes int32 results: accumulators only.
  r.dst_sp = 3;
  problem = validate(r, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "dst_sp");
}

// mul: a, b (per pixel, per channel or per element) and the destination, by hand.
Mul mul_2x3x5() {
  Mul x;
  x.a_sp = 0;
  x.b_sp = 1;
  x.dst_sp = 3;
  x.elem = Elem::kI16;
  x.dst_elem = Elem::kI8;
  x.b_addr = 0x100;
  x.y_size = 2;
  x.x_size = 3;
  x.c_size = 5;
  x.a_stride_y = 15;
  x.a_stride_x = 5;
  x.b_stride_y = 3;
  x.b_stride_x = 1;
  x.dst_stride_y = 16;
  x.dst_stride_x = 5;
  x.b_per_pixel = true;
  return x;
}

TEST(IsaTarget, mul_b_per_pixel_is_one_element_a_pixel_and_per_channel_one_row) {
  auto accesses = sram_accesses(mul_2x3x5(), 4, 4, 8);
  ASSERT_EQ(accesses.size(), 3u);
  // a: i16, last element (1, 2, 4) at 15 + 10 + 4 = 29 -> (29 + 1) * 2 = 60
  EXPECT_EQ(accesses[0].end, 60);
  // b per pixel: i16, last pixel (1, 2) at 3 + 2 = 5 -> 0x100 + 6 * 2 = 0x10c
  EXPECT_EQ(accesses[1].addr_field, "b_addr");
  EXPECT_EQ(accesses[1].begin, 0x100);
  EXPECT_EQ(accesses[1].end, 0x10c);
  // destination: i8, last element at 16 + 10 + 4 = 30 -> 31
  EXPECT_EQ(accesses[2].end, 31);
  EXPECT_TRUE(accesses[2].is_write);
  // b per channel: strides 0, c_size elements: 0x100 + 5 * 2 = 0x10a.
  Mul channel = mul_2x3x5();
  channel.b_per_pixel = false;
  channel.b_stride_y = channel.b_stride_x = 0;
  accesses = sram_accesses(channel, 4, 4, 8);
  EXPECT_EQ(accesses[1].end, 0x10a);
}

TEST(IsaTarget, mul_is_refused_without_its_unit_and_b_must_fit) {
  TargetInfo t = split_target();
  auto problem = validate(mul_2x3x5(), t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "opcode");
  EXPECT_EQ(problem->message,
            "opcode 'mul' needs a vector unit with a broadcast multiplier, which this config "
            "lacks (vector.broadcast_multiply: true)");
  t.broadcast_multiply = true;
  EXPECT_FALSE(validate(mul_2x3x5(), t).has_value());
  // b (weights, 4096 bytes) from 0xFF8: 12 bytes end past it.
  Mul far = mul_2x3x5();
  far.b_addr = 0xFF8;
  problem = validate(far, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "b_addr");
  // b from the accumulators: not a kind mul reads.
  Mul acc = mul_2x3x5();
  acc.b_sp = 2;
  problem = validate(acc, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "b_sp");
}

// matmul: Q [3][6] x K^T with K stored [5][6] (transposed read), by hand.
Matmul qk_transposed() {
  Matmul x;
  x.a_sp = 0;
  x.b_sp = 3;
  x.acc_sp = 2;
  x.transpose_b = true;
  x.b_addr = 0x40;
  x.acc_addr = 0x100;
  x.m_size = 3;
  x.n_size = 5;
  x.k_size = 6;
  x.a_stride = 8;
  x.b_stride = 6;
  x.acc_stride = 5;
  return x;
}

TEST(IsaTarget, matmul_operands_are_exact_boxes_and_b_follows_its_stored_order) {
  auto accesses = sram_accesses(qk_transposed(), 4, 4, 8);
  ASSERT_EQ(accesses.size(), 3u);  // a, b, accumulators (written)
  // a: 3 rows of 6 at stride 8: last element 2 * 8 + 5 = 21 -> 22
  EXPECT_EQ(accesses[0].addr_field, "a_addr");
  EXPECT_EQ(accesses[0].end, 22);
  // b transposed: stored 5 rows (n) of 6 (k) at stride 6: 0x40 + 4 * 6 + 6 = 0x40 + 30
  EXPECT_EQ(accesses[1].addr_field, "b_addr");
  EXPECT_EQ(accesses[1].end, 0x40 + 30);
  // accumulators: 3 rows of 5 int32 at stride 5, only the n_size columns: 0x100 + 15 * 4
  EXPECT_EQ(accesses[2].end, 0x100 + 60);
  EXPECT_TRUE(accesses[2].is_write);
  // Row-major b: 6 rows (k) of 5 (n) at stride 6: 0x40 + 5 * 6 + 5 = 0x40 + 35.
  Matmul row_major = qk_transposed();
  row_major.transpose_b = false;
  row_major.init = Init::kBias;
  row_major.bias_sp = 1;
  row_major.bias_addr = 0x20;
  accesses = sram_accesses(row_major, 4, 4, 8);
  ASSERT_EQ(accesses.size(), 4u);  // a, b, bias, accumulators
  EXPECT_EQ(accesses[1].end, 0x40 + 35);
  EXPECT_EQ(accesses[2].addr_field, "bias_addr");
  EXPECT_EQ(accesses[2].end, 0x20 + 20);  // n_size int32
}

TEST(IsaTarget, matmul_is_refused_without_activation_operands_and_located_otherwise) {
  TargetInfo t = split_target();
  auto problem = validate(qk_transposed(), t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "opcode");
  EXPECT_EQ(problem->message,
            "opcode 'matmul' needs a matrix unit that takes both operands from activations, "
            "which this config lacks (matrix.activation_operands: true)");
  t.activation_operands = true;
  EXPECT_FALSE(validate(qk_transposed(), t).has_value());
  // b in the outputs scratchpad (1 KiB) from 0x3f0: 30 bytes end past it.
  Matmul far = qk_transposed();
  far.b_addr = 0x3f0;
  problem = validate(far, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "b_addr");
  EXPECT_EQ(problem->message,
            "field 'b_addr' = 0x3f0: the operand's last byte 0x40d is beyond scratchpad 'out' "
            "(1 KiB)");
  // a from the weights: not an activation.
  Matmul weights = qk_transposed();
  weights.a_sp = 1;
  problem = validate(weights, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "a_sp");
  // 16-bit operands on an 8-bit array.
  Matmul wide = qk_transposed();
  wide.elem = Elem::kI16;
  problem = validate(wide, t);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "elem");
}

}  // namespace
}  // namespace tessel::isa
