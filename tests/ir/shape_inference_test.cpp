// Shape rules: hand-computed output sizes and located mismatch messages.
#include "compiler/ir/shape_inference.hpp"

#include <gtest/gtest.h>

#include "compiler/ir/text.hpp"

namespace tessel::ir {
namespace {

Shape infer_one(const std::string& body) {
  Graph g = parse_text("graph g {\n" + body + "\n}\n");
  const Status status = infer_all_shapes(g);
  EXPECT_TRUE(status.ok()) << status.reason();
  return g.tensor("y").shape;
}

std::string infer_error(const std::string& body) {
  Graph g = parse_text("graph g {\n" + body + "\n}\n");
  const Status status = infer_all_shapes(g);
  return status.ok() ? "ok" : status.reason();
}

TEST(ShapeInference, conv_7x7_stride2_pad3_on_224_gives_112) {
  EXPECT_EQ(infer_one("input %x : f32[2,3,224,224]\nconst %w : f32[64,3,7,7] #elided\n"
                      "%y = Conv(%x, %w) {kernel=7x7, stride=2x2, pad=3,3,3,3} : f32[?]"),
            (Shape{2, 64, 112, 112}));
}

TEST(ShapeInference, depthwise_conv_has_one_input_channel_per_group) {
  EXPECT_EQ(infer_one("input %x : f32[1,32,112,112]\nconst %w : f32[32,1,3,3] #elided\n"
                      "%y = Conv(%x, %w) {kernel=3x3, stride=2x2, pad=1,1,1,1, group=32} : f32[?]"),
            (Shape{1, 32, 56, 56}));
}

TEST(ShapeInference, ceil_mode_maxpool_matches_pytorch) {
  // GoogLeNet maxpool1: 112 -> ceil((112-3)/2)+1 = 56 (floor would give 55).
  EXPECT_EQ(infer_one("input %x : f32[1,64,112,112]\n"
                      "%y = MaxPool(%x) {kernel=3x3, stride=2x2, ceil_mode=1} : f32[?]"),
            (Shape{1, 64, 56, 56}));
  // 14 -> 2x2 stride 2 ceil: 7 (the last window may not start in the padding).
  EXPECT_EQ(infer_one("input %x : f32[1,8,14,14]\n"
                      "%y = MaxPool(%x) {kernel=2x2, stride=2x2, ceil_mode=1} : f32[?]"),
            (Shape{1, 8, 7, 7}));
}

TEST(ShapeInference, gemm_flatten_reshape_concat_split_pad) {
  EXPECT_EQ(infer_one("input %x : f32[2,512]\nconst %w : f32[1000,512] #elided\n"
                      "%y = Gemm(%x, %w) {transB=1} : f32[?]"),
            (Shape{2, 1000}));
  EXPECT_EQ(infer_one("input %x : f32[2,512,7,7]\n%y = Flatten(%x) : f32[?]"), (Shape{2, 25088}));
  EXPECT_EQ(infer_one("input %x : f32[2,8,3,3]\n%y = Reshape(%x) {shape=0,-1} : f32[?]"),
            (Shape{2, 72}));
  EXPECT_EQ(infer_one("input %x : f32[1,8,3,3]\ninput %z : f32[1,4,3,3]\n"
                      "%y = Concat(%x, %z) {axis=1} : f32[?]"),
            (Shape{1, 12, 3, 3}));
  EXPECT_EQ(infer_one("input %x : f32[1,8,3,3]\n"
                      "%y, %r = Split(%x) {axis=1, split=5,3} : f32[?], f32[?]"),
            (Shape{1, 5, 3, 3}));
  EXPECT_EQ(infer_one("input %x : f32[1,8,3,3]\n"
                      "%y = Pad(%x) {pads=0,0,1,2,0,0,3,4} : f32[?]"),
            (Shape{1, 8, 7, 9}));
}

TEST(ShapeInference, mismatches_name_the_op_and_the_inputs) {
  EXPECT_EQ(infer_error("input %x : f32[1,3,8,8]\nconst %w : f32[4,4,3,3] #elided\n"
                        "%y = Conv(%x, %w) {kernel=3x3} : f32[?]"),
            "%y (Conv): weight %w has 4 input channels per group but input %x has 3 (group 1)");
  EXPECT_EQ(infer_error("input %x : f32[1,3,8,8]\ninput %z : f32[1,3,4,4]\n"
                        "%y = Add(%x, %z) : f32[?]"),
            "%y (Add): operands %x [1,3,8,8] and %z [1,3,4,4] do not broadcast");
  EXPECT_EQ(infer_error("input %x : f32[2,100]\nconst %w : f32[10,99] #elided\n"
                        "%y = Gemm(%x, %w) {transB=1} : f32[?]"),
            "%y (Gemm): A %x [2,100] and B %w [10,99] (transB=1) disagree on K");
  EXPECT_EQ(infer_error("input %x : f32[1,3,2,2]\n%y = MaxPool(%x) {kernel=3x3} : f32[?]"),
            "%y (MaxPool): window larger than the padded input [1,3,2,2]");
}

TEST(ShapeInference, integer_conv_accumulates_in_i32) {
  Graph g = parse_text(
      "graph g {\ninput %x : i8[1,1,1,1]\nconst %w : i8[1,1,1,1] ints [3]\n"
      "%y = Conv(%x, %w) {kernel=1x1} : f32[?]\noutput %y\n}\n");
  ASSERT_TRUE(infer_all_shapes(g).ok());
  EXPECT_EQ(g.tensor("y").dtype, DType::i32);
}

}  // namespace
}  // namespace tessel::ir
