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

}  // namespace
}  // namespace tessel
