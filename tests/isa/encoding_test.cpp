// Bit-exact encodings computed by hand, and the decoder's located rejections.
#include <gtest/gtest.h>

#include "isa/instruction.hpp"

namespace tessel::isa {
namespace {

Word word_of(std::initializer_list<int> bytes) {
  Word w{};
  std::size_t i = 0;
  for (int b : bytes) w[i++] = static_cast<std::uint8_t>(b);
  return w;
}

Word encoded(const Instruction& x) {
  auto w = encode(x);
  EXPECT_TRUE(w.ok()) << w.reason();
  return w.ok() ? w.value() : Word{};
}

TEST(IsaEncoding, finish_is_its_opcode_alone) {
  EXPECT_EQ(encoded(Finish{}), word_of({0x0a}));
}

TEST(IsaEncoding, nop_on_store_with_push_prev_sets_bit_10_and_engine_code_2) {
  Nop nop;
  nop.engine = Engine::kStore;
  nop.push_prev = true;
  EXPECT_EQ(encoded(nop), word_of({0x01, 0x04, 0x02}));
}

TEST(IsaEncoding, load_fields_land_on_their_table_bits) {
  Load x;
  x.push_next = true;          // bit 11
  x.sp = 1;                    // bits 16..19
  x.elem = Elem::kI16;         // bits 20..21
  x.kind = Traffic::kWeights;  // bits 22..23
  x.sram_addr = 0x100;         // bits 24..47
  x.dram_addr = 0x4000;        // bits 48..87
  x.y_size = 2;                // bits 88..99
  x.x_size = 3;                // bits 100..111
  x.c_size = 16;               // bits 112..127
  x.dram_stride_y = 48;        // bits 128..151
  x.dram_stride_x = 16;        // bits 152..171
  x.sram_stride_y = 80;        // bits 172..191
  x.sram_stride_x = 16;        // bits 192..207
  x.pad_top = 1;               // bits 208..215
  x.pad_left = 1;              // bits 224..231
  x.pad_right = 1;             // bits 232..239
  x.pad_value = -1;            // bits 240..255, two's complement
  EXPECT_EQ(encoded(x), word_of({0x02, 0x08, 0x51, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
                                 0x02, 0x30, 0x00, 0x10, 0x00, 0x30, 0x00, 0x00, 0x10, 0x00, 0x00,
                                 0x05, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x01, 0xff, 0xff}));
}

// The load's pads are 8 bits each (bytes 26..29) and pad_value follows at bits 240..255: a
// weight block of a 3-channel conv1 on a 128-row array needs 125 rows of right padding.
TEST(IsaEncoding, load_pads_are_one_byte_each_up_to_255) {
  Load x;
  x.elem = Elem::kI16;  // byte 2 = 0x10
  x.y_size = 1;
  x.x_size = 3;
  x.c_size = 128;
  x.pad_top = 200;      // byte 26 = 0xc8
  x.pad_bottom = 17;    // byte 27 = 0x11
  x.pad_left = 16;      // byte 28 = 0x10
  x.pad_right = 255;    // byte 29 = 0xff
  x.pad_value = 0x123;  // bytes 30..31 = 0x23 0x01
  EXPECT_EQ(encoded(x),
            word_of({0x02, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0,    0x01, 0x30, 0x00, 0x80, 0x00,
                     0,    0, 0,    0, 0, 0, 0, 0, 0, 0, 0xc8, 0x11, 0x10, 0xff, 0x23, 0x01}));
  auto back = decode(encoded(x));
  ASSERT_TRUE(back.ok()) << back.reason();
  const auto& load = std::get<Load>(back.value());
  EXPECT_EQ(load.pad_top, 200u);
  EXPECT_EQ(load.pad_bottom, 17u);
  EXPECT_EQ(load.pad_left, 16u);
  EXPECT_EQ(load.pad_right, 255u);
  EXPECT_EQ(load.pad_value, 0x123);
}

TEST(IsaEncoding, vcfg_signed_fields_straddle_bytes) {
  Vcfg x;
  x.mult_a = 1u << 30;  // bit 46
  x.mult_b = 1;         // bit 47
  x.shift = 31;         // bits 78..83
  x.zp = -3;            // bits 84..99
  x.lo = -128;          // bits 100..115
  x.hi = 127;           // bits 116..131
  EXPECT_EQ(encoded(x), word_of({0x05, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0xc0, 0xd7, 0xff, 0x0f, 0xf8,
                                 0xff, 0x07, 0x00}));
}

TEST(IsaEncoding, decode_inverts_the_hand_computed_load) {
  const Word w = word_of({0x02, 0x08, 0x51, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
                          0x02, 0x30, 0x00, 0x10, 0x00, 0x30, 0x00, 0x00, 0x10, 0x00, 0x00,
                          0x05, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x01, 0xff, 0xff});
  auto x = decode(w);
  ASSERT_TRUE(x.ok()) << x.reason();
  const auto& load = std::get<Load>(x.value());
  EXPECT_EQ(load.pad_value, -1);
  EXPECT_EQ(load.sram_stride_y, 80u);
  EXPECT_EQ(load.kind, Traffic::kWeights);
  EXPECT_EQ(engine_of(x.value()), Engine::kLoad);
}

TEST(IsaEncoding, decode_rejects_opcode_zero) {
  auto x = decode(Word{});
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.reason(), "unknown opcode 0x00");
}

TEST(IsaEncoding, decode_rejects_an_unassigned_opcode) {
  auto x = decode(word_of({0x2a}));
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.reason(), "unknown opcode 0x2a");
}

TEST(IsaEncoding, decode_rejects_a_set_reserved_bit) {
  auto x = decode(word_of({0x0a, 0x10}));  // finish with bit 12
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.reason(), "reserved bit 12 is set (finish does not use it)");
  auto y = decode(word_of({0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                           0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}));
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.reason(), "reserved bit 255 is set (finish does not use it)");
}

TEST(IsaEncoding, decode_rejects_a_zero_extent) {
  Load x;
  auto w = encoded(x);
  w[11] = 0;  // y_size = 0
  auto d = decode(w);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason(), "field 'y_size' = 0 out of range [1, 4095]");
}

TEST(IsaEncoding, decode_rejects_an_enum_code_without_a_name) {
  auto w = encoded(Load{});
  w[2] |= 0x30;  // elem = 3
  auto d = decode(w);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason(), "field 'elem' = 3 out of range [i8, i32]");
}

TEST(IsaEncoding, decode_rejects_token_flags_the_engine_lacks) {
  auto w = encoded(Load{});
  w[1] = 0x01;  // pop_prev
  auto d = decode(w);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason(), "field 'pop_prev' = 1: the load engine has no previous engine");
  auto s = encoded(Store{});
  s[1] = 0x08;  // push_next
  d = decode(s);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.reason(), "field 'push_next' = 1: the store engine has no next engine");
}

TEST(IsaEncoding, check_rejects_a_pad_value_outside_elem) {
  Load x;
  x.pad_value = 128;
  auto w = encode(x);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(), "field 'pad_value' = 128: does not fit elem i8");
  x.elem = Elem::kI16;
  EXPECT_TRUE(encode(x).ok());
}

TEST(IsaEncoding, lut_fields_land_on_their_table_bits) {
  Lut x;
  x.src_sp = 2;             // bits 16-19
  x.dst_sp = 3;             // bits 20-23
  x.table_sp = 1;           // bits 24-27
  x.dst_elem = Elem::kI16;  // bits 28-29: code 1
  x.src_addr = 0x102;       // bits 32-55: bytes 4-6
  x.table_addr = 0x200;     // bits 80-103: bytes 10-12
  x.y_size = 1;             // bit 104 = byte 13 bit 0
  x.x_size = 1;             // bit 114 = byte 14 bit 2
  x.c_size = 1;             // bit 124 = byte 15 bit 4
  EXPECT_EQ(encoded(x),
            word_of({0x0b, 0, 0x32, 0x11, 0x02, 0x01, 0, 0, 0, 0, 0, 0x02, 0, 0x01, 0x04, 0x10}));
  auto back = decode(encoded(x));
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), Instruction{x});
}

TEST(IsaEncoding, reduce_sumsq_takes_int8_only_and_lut_no_int32_table) {
  Reduce r;
  r.y_size = r.x_size = r.c_size = 1;
  r.mode = ReduceMode::kSumsq;
  r.elem = Elem::kI16;
  auto w = encode(r);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(),
            "field 'elem' = 1: must be i8 when mode = sumsq (int16 squares overflow int32)");
  r.elem = Elem::kI8;
  EXPECT_TRUE(encode(r).ok());
  r.mode = ReduceMode::kMax;
  r.elem = Elem::kI16;
  EXPECT_TRUE(encode(r).ok());
  // dst_elem is 2 bits with max 1: i32 (code 2) is out of range in a word.
  auto bad = decode(word_of({0x0b, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x04, 0x10}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.reason().find("dst_elem"), std::string::npos) << bad.reason();
}

TEST(IsaEncoding, check_rejects_padding_that_leaves_no_stored_input) {
  Conv x;  // out 1x1, 1x1 kernel: one stored row; any bottom pad removes it
  x.pad_bottom = 1;
  auto w = encode(x);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(),
            "field 'pad_bottom' = 1: the padding leaves 0 stored input rows/columns (at least 1 "
            "needed)");
  x.kh = 3;  // 3 padded rows, 1 stored
  x.pad_top = 1;
  EXPECT_TRUE(encode(x).ok());
}

TEST(IsaEncoding, check_rejects_depthwise_with_several_input_blocks) {
  Conv x;
  x.depthwise = true;
  x.ic_blocks = 2;
  auto w = encode(x);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(), "field 'ic_blocks' = 2: must be 1 when depthwise = 1");
}

TEST(IsaEncoding, check_rejects_pool_padding_as_large_as_the_window) {
  Pool x;
  x.kh = x.kw = 2;
  x.out_h = x.out_w = 2;
  x.pad_left = 2;
  auto w = encode(x);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(), "field 'pad_left' = 2: must be smaller than the window (2)");
}

TEST(IsaEncoding, check_rejects_an_empty_clamp_range) {
  Vcfg x;
  x.lo = 1;
  x.hi = 0;
  auto w = encode(x);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.reason(), "field 'hi' = 0: below lo = 1");
}

TEST(IsaEncoding, make_instruction_checks_ranges_and_field_count) {
  const auto* spec = find_opcode("vcfg");
  ASSERT_NE(spec, nullptr);
  std::vector<std::int64_t> values(static_cast<std::size_t>(spec->field_count), 0);
  values[6] = 63;  // shift (after the 4 flags, mult_a, mult_b)
  auto x = make_instruction(*spec, values);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.reason(), "field 'shift' = 63 out of range [0, 62]");
  values.pop_back();
  EXPECT_FALSE(make_instruction(*spec, values).ok());
}

TEST(IsaEncoding, mul_fields_land_on_their_table_bits) {
  Mul x;
  x.a_sp = 2;              // bits 16-19
  x.b_sp = 1;              // bits 20-23
  x.dst_sp = 3;            // bits 24-27
  x.elem = Elem::kI16;     // bits 28-29: code 1
  x.dst_elem = Elem::kI8;  // bits 30-31: code 0
  x.a_addr = 0x102;        // bits 32-55: bytes 4-6
  x.dst_addr = 0x200;      // bits 80-103: bytes 10-12
  x.y_size = 1;            // bit 104 = byte 13 bit 0
  x.x_size = 1;            // bit 114 = byte 14 bit 2
  x.c_size = 1;            // bit 124 = byte 15 bit 4
  x.b_per_pixel = true;    // bit 236 = byte 29 bit 4
  EXPECT_EQ(encoded(x),
            word_of({0x0d, 0, 0x12, 0x13, 0x02, 0x01, 0, 0, 0, 0, 0, 0x02, 0, 0x01, 0x04,
                     0x10, 0, 0,    0,    0,    0,    0, 0, 0, 0, 0, 0,    0, 0,    0x10}));
  auto back = decode(encoded(x));
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), Instruction{x});
  // elem and dst_elem are 2 bits with max 1: i32 (code 2) is out of range in a word.
  auto bad = decode(word_of({0x0d, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x04, 0x10}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.reason().find("dst_elem"), std::string::npos) << bad.reason();
  // Bits 237-255 are reserved.
  auto reserved = decode(word_of({0x0d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x04,
                                  0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0x20}));
  ASSERT_FALSE(reserved.ok());
}

TEST(IsaEncoding, matmul_fields_land_on_their_table_bits) {
  Matmul x;
  x.a_sp = 2;            // bits 16-19
  x.b_sp = 1;            // bits 20-23
  x.acc_sp = 3;          // bits 24-27
  x.elem = Elem::kI16;   // bit 28
  x.init = Init::kAcc;   // bits 29-30: code 2
  x.transpose_b = true;  // bit 31
  x.a_addr = 0x102;      // bits 32-55: bytes 4-6
  x.acc_addr = 0x200;    // bits 80-103: bytes 10-12
  x.m_size = 1;          // bit 128 = byte 16 bit 0
  x.n_size = 1;          // bit 140 = byte 17 bit 4
  x.k_size = 1;          // bit 156 = byte 19 bit 4
  x.bias_sp = 5;         // bits 226-229 = byte 28 bits 2-5
  x.operand_shift = 3;   // bits 230-233: byte 28 bits 6, 7
  EXPECT_EQ(encoded(x),
            word_of({0x0e, 0,    0x12, 0xd3, 0x02, 0x01, 0, 0, 0, 0, 0, 0x02, 0, 0,   0,
                     0,    0x01, 0x10, 0,    0x10, 0,    0, 0, 0, 0, 0, 0,    0, 0xd4}));
  auto back = decode(encoded(x));
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), Instruction{x});
  // Bits 234-255 are reserved.
  auto reserved = decode(word_of({0x0e, 0,    0,    0, 0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                  0,    0x01, 0x10, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04}));
  ASSERT_FALSE(reserved.ok());
  // A zero size is out of range: k_size (bits 156-171) left 0.
  auto empty = decode(word_of({0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x10}));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.reason().find("k_size"), std::string::npos) << empty.reason();
  // The operand shift leaves 2 bits of an int8 operand: u = 7 (bits 230-232) is refused for i8,
  // u = 7 is legal for i16 (at most 14, the table's max).
  auto wide = decode(word_of({0x0e, 0,    0,    0, 0,    0, 0, 0, 0, 0, 0, 0, 0, 0,    0,
                              0,    0x01, 0x10, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x01}));
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.reason().find("operand_shift"), std::string::npos) << wide.reason();
  Matmul sixteen = x;
  sixteen.operand_shift = 14;
  EXPECT_TRUE(decode(encoded(sixteen)).ok());
  sixteen.operand_shift = 15;  // past the table's max
  EXPECT_FALSE(encode(sixteen).ok());
}

TEST(IsaEncoding, softmax_fields_land_on_their_table_bits_and_a_bad_mask_is_refused) {
  Softmax x;
  x.src_sp = 2;         // bits 16-19
  x.dst_sp = 1;         // bits 20-23
  x.table_sp = 3;       // bits 24-27
  x.elem = Elem::kI16;  // bits 28-29: code 1
  x.y_size = 1;         // bit 104 = byte 13 bit 0
  x.x_size = 1;         // bit 114 = byte 14 bit 2
  x.c_size = 1;         // bit 124 = byte 15 bit 4
  x.causal = true;      // bit 204 = byte 25 bit 4
  x.mask_offset = -1;   // bits 205-222: 18 ones (byte 25 bits 5-7, byte 26, byte 27 bits 0-6)
  EXPECT_EQ(encoded(x), word_of({0x10, 0,    0x12, 0x13, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0x01,
                                 0x04, 0x10, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 0x7f}));
  auto back = decode(encoded(x));
  ASSERT_TRUE(back.ok()) << back.reason();
  EXPECT_EQ(back.value(), Instruction{x});
  // A mask offset without the causal mask would be ignored: refused, naming the field.
  x.causal = false;
  x.mask_offset = 3;
  auto bad = encode(x);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.reason(), "field 'mask_offset' = 3: must be 0 unless causal = 1");
}

TEST(IsaEncoding, norm_rows_are_one_to_two_to_the_fourteen_elements) {
  Norm x;
  x.centre = true;  // bit 204 = byte 25 bit 4
  x.c_size = 16384;
  auto word = encode(x);
  ASSERT_TRUE(word.ok()) << word.reason();
  EXPECT_EQ(word.value()[0], 0x11);
  EXPECT_EQ(word.value()[25], 0x10);
  for (const std::uint32_t c : {0u, 16385u}) {
    x.c_size = c;
    auto bad = encode(x);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.reason(), "field 'c_size' = " + std::to_string(c) + " out of range [1, 16384]");
  }
}

}  // namespace
}  // namespace tessel::isa
