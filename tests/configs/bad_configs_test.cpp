// Every malformed config under bad/ fails with exactly the diagnostics its "# expect:" lines say.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "configs/hw_config.hpp"

namespace tessel {
namespace {

const std::filesystem::path kBadDir =
    std::filesystem::path(TESSEL_SOURCE_DIR) / "tests/configs/bad";

std::vector<std::string> bad_config_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kBadDir)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The "# expect: <diagnostic>" lines of the file's leading comment block, in order.
std::vector<std::string> expected_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  const std::string marker = "# expect: ";
  for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) {
    if (line.rfind(marker, 0) == 0) lines.push_back(line.substr(marker.size()));
  }
  return lines;
}

class BadConfig : public testing::TestWithParam<std::string> {};

TEST_P(BadConfig, fails_with_exactly_the_expected_located_diagnostics) {
  const std::string label = "bad/" + GetParam() + ".yaml";
  const std::string text = read_text(kBadDir / (GetParam() + ".yaml"));
  const auto expected = expected_lines(text);
  ASSERT_FALSE(expected.empty()) << label << " has no '# expect:' line";

  const HwConfigCheck check = check_hw_config_text(text, label);
  EXPECT_FALSE(check.ok());
  std::vector<std::string> got;
  for (const auto& diagnostic : check.diagnostics) got.push_back(diagnostic.str());
  EXPECT_EQ(got, expected);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadConfig, testing::ValuesIn(bad_config_names()),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(BadConfigCatalogue, covers_at_least_eighteen_distinct_problems) {
  EXPECT_GE(bad_config_names().size(), 18u);
}

TEST(BadConfigCatalogue, every_problem_is_located_by_line_and_column) {
  for (const auto& name : bad_config_names()) {
    const auto check = check_hw_config_text(read_text(kBadDir / (name + ".yaml")), name);
    for (const auto& diagnostic : check.diagnostics) {
      EXPECT_GT(diagnostic.location.line, 0) << diagnostic.str();
      EXPECT_GT(diagnostic.location.column, 0) << diagnostic.str();
    }
  }
}

}  // namespace
}  // namespace tessel
