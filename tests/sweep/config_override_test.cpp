// Key-path overrides on YAML trees, canonical JSON and the FNV-1a hash behind point ids.
#include "experiments/sweep/config_override.hpp"

#include <gtest/gtest.h>

namespace tessel::sweep {
namespace {

TEST(KeyPath, ParsesKeysAndIndices) {
  auto steps = parse_key_path("scratchpads[1].size");
  ASSERT_TRUE(steps.ok()) << steps.reason();
  ASSERT_EQ(steps.value().size(), 3u);
  EXPECT_EQ(steps.value()[0].key, "scratchpads");
  EXPECT_EQ(steps.value()[1].key, "");
  EXPECT_EQ(steps.value()[1].index, 1u);
  EXPECT_EQ(steps.value()[2].key, "size");
}

TEST(KeyPath, RejectsMalformedPaths) {
  EXPECT_EQ(parse_key_path("a..b").reason(), "bad key path 'a..b': empty key at offset 2");
  EXPECT_EQ(parse_key_path("a[x]").reason(),
            "bad key path 'a[x]': index 'x' is not a non-negative integer");
  EXPECT_EQ(parse_key_path("a[1").reason(), "bad key path 'a[1': unclosed '['");
  EXPECT_EQ(parse_key_path("a.").reason(), "bad key path 'a.': ends with '.'");
}

TEST(Override, ReplacesAnExistingValueInPlace) {
  YAML::Node root = YAML::Load("dram: {bandwidth: 1GB/s}\nscratchpads: [{size: 1}, {size: 2}]");
  ASSERT_TRUE(override_value(root, "scratchpads[1].size", YAML::Node("64KiB")).ok());
  ASSERT_TRUE(override_value(root, "dram.bandwidth", YAML::Node("2GB/s")).ok());
  EXPECT_EQ(root["scratchpads"][1]["size"].Scalar(), "64KiB");
  EXPECT_EQ(root["scratchpads"][0]["size"].Scalar(), "1");
  EXPECT_EQ(root["dram"]["bandwidth"].Scalar(), "2GB/s");
}

TEST(Override, MistypedKeyFailsWithDidYouMean) {
  YAML::Node root = YAML::Load("dram: {bandwidth: 1GB/s, latency_ns: 100}");
  EXPECT_EQ(override_value(root, "dram.bandwith", YAML::Node("1")).reason(),
            "'dram' has no key 'bandwith'; did you mean 'bandwidth'?");
}

TEST(Override, IndexOutOfRangeNamesTheListLength) {
  YAML::Node root = YAML::Load("scratchpads: [{size: 1}]");
  EXPECT_EQ(override_value(root, "scratchpads[2].size", YAML::Node("1")).reason(),
            "'scratchpads' has 1 entries; [2] is out of range");
}

TEST(CanonicalJson, SortsKeysAndTypesScalars) {
  const YAML::Node node = YAML::Load("b: 2\na: [1.5, x, true, '7', ~]");
  EXPECT_EQ(canonical_json(node).dump(), R"({"a":[1.5,"x",true,"7",null],"b":2})");
}

TEST(StableHash, IsFnv1a64) {
  // Reference values of FNV-1a 64 (offset basis for "", and the published value for "a").
  EXPECT_EQ(stable_hash_hex(""), "cbf29ce484222325");
  EXPECT_EQ(stable_hash_hex("a"), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace tessel::sweep
