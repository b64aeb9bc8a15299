// The results file: whole-line appends, torn-tail repair, refusal of damage it cannot explain.
#include "experiments/sweep/results_file.hpp"

#include <gtest/gtest.h>

#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::read_text;
using testing::TempDir;
using testing::write_text;

TEST(ResultsFile, CreatesAMissingFileAndAppendsWholeLines) {
  TempDir dir;
  {
    auto file = ResultsFile::open(dir / "r.jsonl");
    ASSERT_TRUE(file.ok()) << file.reason();
    EXPECT_TRUE(file.value().completed_ids().empty());
    ASSERT_TRUE(file.value().append(R"({"id":"a"})").ok());
    ASSERT_TRUE(file.value().append(R"({"id":"b"})").ok());
  }
  EXPECT_EQ(read_text(dir / "r.jsonl"), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
}

TEST(ResultsFile, TornLastLineIsCutAwayAndReported) {
  TempDir dir;
  write_text(dir / "r.jsonl", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\",\"fig");
  {
    auto file = ResultsFile::open(dir / "r.jsonl");
    ASSERT_TRUE(file.ok()) << file.reason();
    EXPECT_EQ(file.value().torn_bytes_dropped(), 14u);
    EXPECT_EQ(file.value().existing_lines(), 2u);
    EXPECT_EQ(file.value().completed_ids(), (std::unordered_set<std::string>{"a", "b"}));
    ASSERT_TRUE(file.value().append(R"({"id":"c"})").ok());
  }
  EXPECT_EQ(read_text(dir / "r.jsonl"), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n");
}

TEST(ResultsFile, DamagedMiddleLineIsRefusedWithItsLineNumber) {
  TempDir dir;
  write_text(dir / "r.jsonl", "{\"id\":\"a\"}\nnot json\n{\"id\":\"b\"}\n");
  auto file = ResultsFile::open(dir / "r.jsonl");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.reason(), (dir / "r.jsonl").string() +
                               ":2: not a results line (a JSON object with a string \"id\"); only "
                               "a torn last line is repaired automatically");
  EXPECT_EQ(read_text(dir / "r.jsonl"), "{\"id\":\"a\"}\nnot json\n{\"id\":\"b\"}\n");
}

TEST(ResultsFile, AFileThatIsNotResultsIsRefusedWithoutLosingItsLastLine) {
  TempDir dir;
  // Issue 41: `sweep --out notes.txt` cut the last line off before refusing the file.
  write_text(dir / "notes.txt", "first line\nlast line without newline");
  auto file = ResultsFile::open(dir / "notes.txt");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.reason(), (dir / "notes.txt").string() +
                               ":1: not a results line (a JSON object with a string \"id\"); only "
                               "a torn last line is repaired automatically");
  EXPECT_EQ(read_text(dir / "notes.txt"), "first line\nlast line without newline");
  // One line, no newline: nothing complete to check, and the tail is not the start of ours.
  write_text(dir / "one.json", "{\"name\": 1}");
  auto one = ResultsFile::open(dir / "one.json");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.reason(), (dir / "one.json").string() +
                              ":1: not a results line, and not the torn start of one; refusing to "
                              "cut it");
  EXPECT_EQ(read_text(dir / "one.json"), "{\"name\": 1}");
}

TEST(ResultsFile, SecondWriterIsRefusedWhileTheFirstHoldsTheFile) {
  TempDir dir;
  auto first = ResultsFile::open(dir / "r.jsonl");
  ASSERT_TRUE(first.ok());
  auto second = ResultsFile::open(dir / "r.jsonl");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.reason(), (dir / "r.jsonl").string() +
                                 " is being written by another sweep (it holds the file's lock)");
}

TEST(ReadResults, IgnoresATornTailWithoutTouchingTheFile) {
  TempDir dir;
  write_text(dir / "r.jsonl", "{\"id\":\"a\",\"x\":1}\n{\"id\":\"b");
  auto lines = read_results(dir / "r.jsonl");
  ASSERT_TRUE(lines.ok()) << lines.reason();
  ASSERT_EQ(lines.value().size(), 1u);
  EXPECT_EQ(lines.value()[0].id, "a");
  EXPECT_EQ(lines.value()[0].text, "{\"id\":\"a\",\"x\":1}");
  EXPECT_EQ(read_text(dir / "r.jsonl"), "{\"id\":\"a\",\"x\":1}\n{\"id\":\"b");
}

}  // namespace
}  // namespace tessel::sweep
