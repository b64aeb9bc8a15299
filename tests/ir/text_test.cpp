// The text form: exact dump of a hand-written graph, round trips, located parse errors.
#include "compiler/ir/text.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "compiler/zoo/zoo.hpp"
#include "support/diagnostic.hpp"

namespace tessel::ir {
namespace {

constexpr const char* kConvRelu = R"(graph tiny {
  input %input : f32[1,3,4,4]
  const %conv.bias : f32[2] = [0.5, -0.25]
  const %conv.weight : f32[2,3,3,3] #0123456789abcdef
  %conv = Conv(%input, %conv.weight, %conv.bias) {kernel=3x3, stride=2x2, pad=1,1,1,1} : f32[1,2,2,2]
  %relu = Relu(%conv) : f32[1,2,2,2]
  %q = Quantize(%relu) : i8[1,2,2,2]{scale=0.0625, zp=-3} @quantize_relu
  output %q
}
)";

TEST(Text, dump_of_parsed_text_is_identical) {
  EXPECT_EQ(to_text(parse_text(kConvRelu)), kConvRelu);
}

TEST(Text, parse_fills_attributes_types_and_payloads) {
  const Graph g = parse_text(kConvRelu);
  const Op& conv = g.op(*g.find_op("conv"));
  EXPECT_EQ(conv.get_ints("pad"), (std::vector<std::int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.get_ints("dilation"), (std::vector<std::int64_t>{1, 1}));  // default
  EXPECT_EQ(conv.get_int("group"), 1);
  EXPECT_EQ(g.tensor("conv.bias").f32_values, (std::vector<float>{0.5f, -0.25f}));
  EXPECT_FALSE(g.tensor("conv.weight").has_data());
  EXPECT_EQ(g.tensor("conv.weight").digest(), 0x0123456789abcdefULL);
  EXPECT_EQ(g.tensor("q").quant, QuantParams::per_tensor(0.0625f, -3));
  EXPECT_EQ(g.tensor("q").dtype, DType::i8);
  EXPECT_EQ(g.find_op("quantize_relu"), g.producer("q"));
}

TEST(Text, per_channel_quant_and_integer_payload_round_trip) {
  const char* text = R"(graph q {
  input %x : i8[1,2,1,1]{scale=0.5, zp=0}
  const %w : i8[2,2,1,1]{axis=0, scales=[0.25, 0.125], zps=[0, 0]} ints [1, -2, 127, -128]
  %y = Conv(%x, %w) {kernel=1x1} : i32[1,2,1,1]
  output %y
}
)";
  const Graph g = parse_text(text);
  EXPECT_EQ(g.tensor("w").int_values, (std::vector<std::int32_t>{1, -2, 127, -128}));
  EXPECT_EQ(g.tensor("w").quant->axis, 0);
  EXPECT_EQ(to_text(g), text);
}

TEST(Text, a_slice_to_int64_max_round_trips_as_integers) {
  // ONNX writes "to the end" as 2^63 - 1 (torch.roll in swin_t's export); a double cannot
  // hold it, so the list is read as int64.
  const char* text = R"(graph s {
  input %x : f32[1,8]
  %y = Slice(%x) {starts=[3], ends=[9223372036854775807], axes=[1], steps=[1]} : f32[1,5]
  output %y
}
)";
  const Graph g = parse_text(text);
  EXPECT_EQ(g.op(*g.find_op("y")).get_ints("ends"),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max()}));
  EXPECT_EQ(to_text(g), text);
}

TEST(Text, every_zoo_model_round_trips) {
  for (const std::string& name : zoo::model_names()) {
    zoo::ZooOptions options;
    options.with_weights = name.rfind("tiny", 0) == 0;  // big payloads only cost time here
    auto built = zoo::build_model(name, options);
    ASSERT_TRUE(built.ok()) << built.reason();
    const std::string text = to_text(built.value());
    EXPECT_EQ(to_text(parse_text(text)), text) << name;
  }
}

TEST(Text, tiny_net_with_inline_constants_round_trips_to_an_equal_graph) {
  zoo::ZooOptions options;
  auto built = zoo::build_model("tiny_mlp", options);
  ASSERT_TRUE(built.ok());
  TextOptions all_inline;
  all_inline.inline_constant_limit = 1 << 20;
  EXPECT_EQ(parse_text(to_text(built.value(), all_inline)), built.value());
}

std::string parse_error(const std::string& text) {
  try {
    parse_text(text, "t.tir");
  } catch (const InputError& error) {
    return error.diagnostics().at(0).str();
  }
  return "no error";
}

TEST(Text, parse_errors_are_located) {
  EXPECT_EQ(parse_error("graph g {\n  %y = Relux(%x) : f32[1]\n}\n"),
            "t.tir:2:8: error: op: unknown op 'Relux'; did you mean 'Relu'?");
  EXPECT_EQ(parse_error("graph g {\n  input %x : f33[1]\n}\n"),
            "t.tir:2:14: error: type: unknown dtype 'f33' (expected f32, i8, u8, i16 or i32)");
  EXPECT_EQ(parse_error("graph g {\n  input %x : f32[1,2\n}\n"),
            "t.tir:3:1: error: expected ']', found '}'");
  EXPECT_EQ(parse_error("graph g {\n  input %x : f32[1]\n  input %x : f32[1]\n}\n"),
            "t.tir:3:3: error: tensor %x: name already used");
  EXPECT_EQ(parse_error("graph g {\n  input %x : f32[1]\n"),
            "t.tir:3:1: error: missing '}' at the end of the graph");
}

}  // namespace
}  // namespace tessel::ir
