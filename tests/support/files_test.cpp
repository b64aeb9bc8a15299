// Bounded regular-file reads and atomic, input-preserving writes (support/files.hpp).
#include "support/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/diagnostic.hpp"

namespace tessel::files {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_files_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string put(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  /// The diagnostic text a read or write throws, or "" when it does not throw.
  template <class F>
  static std::string error_of(F&& action) {
    try {
      action();
    } catch (const InputError& e) {
      return e.diagnostics().front().str();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(FilesTest, read_returns_the_whole_regular_file) {
  const auto path = put("a.txt", std::string("ab\0cd", 5));
  EXPECT_EQ(read_file(path, 5), std::string("ab\0cd", 5));
}

TEST_F(FilesTest, read_refuses_a_file_one_byte_over_the_limit_naming_file_and_sizes) {
  const auto path = put("a.txt", "123456");
  EXPECT_EQ(error_of([&] { read_file(path, 5); }),
            path +
                ": error: the file has 6 bytes, over the limit of 5 bytes for this kind of "
                "input");
}

TEST_F(FilesTest, read_refuses_a_directory) {
  EXPECT_EQ(error_of([&] { read_file(dir_.string(), 100); }),
            dir_.string() + ": error: is a directory, expected a regular file");
}

TEST_F(FilesTest, read_refuses_dev_zero_without_reading_it) {
  EXPECT_EQ(error_of([] { read_file("/dev/zero", kMaxConfigBytes); }),
            "/dev/zero: error: is a character device, expected a regular file");
}

TEST_F(FilesTest, read_refuses_a_fifo_without_blocking_on_open) {
  const auto path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_file(path, 100); }),
            path + ": error: is a FIFO (named pipe), expected a regular file");
}

TEST_F(FilesTest, read_of_a_missing_file_names_it) {
  const auto path = (dir_ / "missing.yaml").string();
  EXPECT_EQ(error_of([&] { read_file(path, 100); }),
            path + ": error: cannot open: No such file or directory");
}

TEST_F(FilesTest, write_replaces_the_file_and_leaves_no_temporary) {
  const auto path = put("out.txt", "old");
  write_file(path, std::string_view("new content"));
  EXPECT_EQ(slurp(path), "new content");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FilesTest, write_removes_the_temporaries_of_killed_writers_of_that_file_only) {
  // A pid that is certainly no live process: a child that has exited and been reaped.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string dead = std::to_string(child);
  const std::string live = std::to_string(::getppid());  // the test runner: alive
  const auto path = put("out.txt", "old");
  put(".out.txt.tmp-" + dead + "-0", "left by a kill -9");
  put(".out.txt.tmp-" + dead + "-17", "left by a kill -9");
  put(".out.txt.tmp-" + live + "-3", "a writer still running");
  put(".other.txt.tmp-" + dead + "-0", "another file's: not this write's business");
  put(".out.txt.tmp-notes", "not a temporary's name");
  write_file(path, std::string_view("new"));
  EXPECT_EQ(slurp(path), "new");
  EXPECT_FALSE(fs::exists(dir_ / (".out.txt.tmp-" + dead + "-0")));
  EXPECT_FALSE(fs::exists(dir_ / (".out.txt.tmp-" + dead + "-17")));
  EXPECT_TRUE(fs::exists(dir_ / (".out.txt.tmp-" + live + "-3")));
  EXPECT_TRUE(fs::exists(dir_ / (".other.txt.tmp-" + dead + "-0")));
  EXPECT_TRUE(fs::exists(dir_ / ".out.txt.tmp-notes"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 4);
}

TEST_F(FilesTest, write_keeps_the_mode_of_the_file_it_replaces) {
  const auto path = put("out.txt", "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file(path, std::string_view("x"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(FilesTest, write_refuses_the_input_itself_and_leaves_it_unchanged) {
  const auto input = put("model.onnx", "precious");
  EXPECT_EQ(error_of([&] { write_file(input, std::string_view("junk"), {input}); }),
            input + ": error: the output is the same file as the input '" + input +
                "'; refusing to overwrite an input (choose another output path)");
  EXPECT_EQ(slurp(input), "precious");
}

TEST_F(FilesTest, write_refuses_an_input_reached_through_another_spelling_or_a_link) {
  const auto input = put("in.bin", "precious");
  const auto other_spelling = (dir_ / "." / ".." / dir_.filename() / "in.bin").string();
  EXPECT_NE(error_of([&] { write_file(other_spelling, std::string_view("x"), {input}); }), "");
  const auto link = (dir_ / "link.bin").string();
  fs::create_symlink(input, link);
  EXPECT_NE(error_of([&] { write_file(link, std::string_view("x"), {input}); }), "");
  const auto hard = (dir_ / "hard.bin").string();
  fs::create_hard_link(input, hard);
  EXPECT_NE(error_of([&] { write_file(hard, std::string_view("x"), {input}); }), "");
  EXPECT_EQ(slurp(input), "precious");
}

TEST_F(FilesTest, write_through_a_symlink_replaces_the_target_and_keeps_the_link) {
  const auto target = put("target.txt", "old");
  const auto link = (dir_ / "link.txt").string();
  fs::create_symlink(target, link);
  write_file(link, std::string_view("new"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
}

TEST_F(FilesTest, write_refuses_a_directory_and_a_missing_parent) {
  EXPECT_EQ(error_of([&] { write_file(dir_.string(), std::string_view("x")); }),
            dir_.string() + ": error: is a directory; refusing to write over it");
  const auto nowhere = (dir_ / "no" / "such" / "out.json").string();
  EXPECT_NE(error_of([&] {
              write_file(nowhere, std::string_view("x"));
            }).find("cannot create a temporary file in"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

TEST_F(FilesTest, write_to_dev_null_writes_in_place) {
  write_file("/dev/null", std::string_view("discarded"));
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(FilesTest, content_hash_is_fnv1a_64) {
  // Published FNV-1a 64 test vectors: "" and "a".
  EXPECT_EQ(content_hash(""), "cbf29ce484222325");
  EXPECT_EQ(content_hash("a"), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace tessel::files
