// Edit distance and suggestions, checked on hand-computed cases.
#include "support/strings.hpp"

#include <gtest/gtest.h>

namespace tessel {
namespace {

TEST(Strings, EditDistanceCountsInsertDeleteSubstitute) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("banks", "bank"), 1u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(Strings, DidYouMeanSuggestsOnlyCloseCandidates) {
  const std::vector<std::string> keys = {"name", "clock_mhz", "scratchpads", "dram"};
  EXPECT_EQ(did_you_mean("scratchpad", keys), "; did you mean 'scratchpads'?");
  EXPECT_EQ(did_you_mean("clock_mhx", keys), "; did you mean 'clock_mhz'?");
  EXPECT_EQ(did_you_mean("zzzzzzzz", keys), "");
}

TEST(Strings, ToValidUtf8ReplacesEachBadByteAndKeepsValidText) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(to_valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(to_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");       // e-acute, euro sign, an emoji
  EXPECT_EQ(to_valid_utf8("caf\xE9"), "caf" + r);               // Latin-1 e-acute
  EXPECT_EQ(to_valid_utf8("\xFF\xFE"), r + r);                  // never valid bytes
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(to_valid_utf8("\xE0\x80\xAF"), r + r + r);          // overlong three-byte '/'
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), r + r + r);          // a UTF-16 surrogate
  EXPECT_EQ(to_valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_EQ(to_valid_utf8("a\xE2\x82"), "a" + r + r);           // cut short at the end
  EXPECT_EQ(to_valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

}  // namespace
}  // namespace tessel
