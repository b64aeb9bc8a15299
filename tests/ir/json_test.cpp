// The JSON form: lossless round trip with payloads, compact form, keyed errors.
#include "compiler/ir/json.hpp"

#include <gtest/gtest.h>

#include "compiler/ir/text.hpp"
#include "compiler/zoo/zoo.hpp"
#include "support/diagnostic.hpp"

namespace tessel::ir {
namespace {

TEST(Json, round_trip_is_lossless_with_payloads) {
  for (const char* name : {"tiny_conv", "tiny_residual", "tiny_inception", "tiny_mlp"}) {
    auto built = zoo::build_model(name);
    ASSERT_TRUE(built.ok());
    const nlohmann::json document = to_json(built.value());
    EXPECT_EQ(from_json(nlohmann::json::parse(document.dump())), built.value()) << name;
  }
}

TEST(Json, payload_is_base64_little_endian_binary32) {
  const Graph g = parse_text(R"(graph g {
  input %x : f32[1,1,1,1]
  const %w : f32[1,1,1,1] = [1]
  %y = Conv(%x, %w) {kernel=1x1} : f32[1,1,1,1]
  output %y
})");
  const nlohmann::json document = to_json(g);
  // 1.0f = 0x3f800000 -> bytes 00 00 80 3f -> "AACAPw=="
  EXPECT_EQ(document["tensors"][0]["name"], "w");
  EXPECT_EQ(document["tensors"][0]["data_f32"], "AACAPw==");
  EXPECT_EQ(document["ops"][1]["attrs"]["kernel"], nlohmann::json::array({1, 1}));
}

TEST(Json, without_data_keeps_digests_and_matches_text) {
  auto built = zoo::build_model("tiny_conv");
  ASSERT_TRUE(built.ok());
  JsonOptions compact;
  compact.include_data = false;
  const Graph back = from_json(to_json(built.value(), compact));
  EXPECT_FALSE(back.tensor("conv.weight").has_data());
  TextOptions summary;
  summary.inline_constant_limit = 0;
  EXPECT_EQ(to_text(back, summary), to_text(built.value(), summary));
}

TEST(Json, errors_name_the_key_path) {
  auto built = zoo::build_model("tiny_conv");
  ASSERT_TRUE(built.ok());
  nlohmann::json document = to_json(built.value());
  document["ops"][1]["attrs"]["kernel"] = "three";
  try {
    from_json(document, "m.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    const std::string text = error.diagnostics().at(0).str();
    EXPECT_EQ(text.rfind("m.json: error: ops[1].attrs.kernel: wrong type", 0), 0u) << text;
  }
}

}  // namespace
}  // namespace tessel::ir
