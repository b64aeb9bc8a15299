// Real interrupted sweeps of the built `tessel`: kill -9 mid-flight and Ctrl-C lose no point,
// duplicate none, leave no torn line, and the resumed results equal an uninterrupted run's.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/sweep/sweep_test_util.hpp"

extern char** environ;

namespace tessel::sweep {
namespace {

using testing::edge_config_path;
using testing::read_lines;
using testing::read_text;
using testing::TempDir;
using testing::tessel_executable;
using testing::write_text;

constexpr std::size_t kPoints = 2 * 10 * 2 * 3;

/// 2 models x 10 bandwidths x 2 sizes x 3 policies = 120 points, 25 ms each, every 7th invalid.
std::string slow_spec(const std::string& extra_options = "") {
  return "name: killtest\nmode: synthetic\nhw: " + edge_config_path() +
         "\nmodels: [a, b]\npolicies: [p1, p2, p3]\n"
         "synthetic: {delay_ms: 25, invalid_every: 7" +
         extra_options +
         "}\n"
         "axes:\n"
         "  - product:\n"
         "      dram.bandwidth: [1GB/s, 2GB/s, 3GB/s, 4GB/s, 5GB/s, 6GB/s, 7GB/s, 8GB/s, 9GB/s, "
         "10GB/s]\n"
         "      scratchpads[0].size: [64KiB, 128KiB]\n";
}

/// Starts `tessel args...` with stdout/stderr appended to `log`; returns its pid.
pid_t start_tessel(const std::vector<std::string>& args, const std::filesystem::path& log) {
  std::vector<std::string> all = {tessel_executable()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

/// Waits for `pid`; returns its exit code, or 128 + signal.
int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_tessel(const std::vector<std::string>& args, const std::filesystem::path& log) {
  return wait_exit(start_tessel(args, log));
}

/// Waits until `file` has at least `lines` newline characters (or 20 s pass).
void wait_for_lines(const std::filesystem::path& file, std::size_t lines) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = std::filesystem::exists(file) ? read_text(file) : "";
    if (static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) >= lines) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL() << "timed out waiting for " << lines << " lines in " << file;
}

std::vector<std::string> sorted_lines(const std::filesystem::path& file) {
  std::vector<std::string> lines = read_lines(file);
  std::sort(lines.begin(), lines.end());
  return lines;
}

/// Every line is a complete JSON object and no id appears twice.
void expect_clean(const std::filesystem::path& file) {
  const std::string text = read_text(file);
  ASSERT_TRUE(text.empty() || text.back() == '\n') << "torn last line in " << file;
  std::set<std::string> ids;
  for (const std::string& line : read_lines(file)) {
    const auto object = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(object.is_object()) << "not JSON: " << line;
    EXPECT_TRUE(ids.insert(object["id"].get<std::string>()).second) << "duplicate: " << line;
  }
}

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tessel_executable())) GTEST_SKIP() << "tessel is not built";
    write_text(dir_ / "spec.yaml", slow_spec());
    ASSERT_EQ(run_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out",
                          (dir_ / "reference.jsonl").string(), "-j", "2"},
                         dir_ / "reference.log"),
              0)
        << read_text(dir_ / "reference.log");
    ASSERT_EQ(read_lines(dir_ / "reference.jsonl").size(), kPoints);
  }
  TempDir dir_;
};

TEST_F(SweepCli, KillNineMidFlightThenRerunLosesAndDuplicatesNothing) {
  const auto out = dir_ / "r.jsonl";
  const pid_t pid =
      start_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string(), "-j", "2"},
                   dir_ / "killed.log");
  ASSERT_GT(pid, 0);
  wait_for_lines(out, 30);
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  expect_clean(out);
  const std::size_t survived = read_lines(out).size();
  EXPECT_GE(survived, 30u);
  EXPECT_LT(survived, kPoints) << "the sweep finished before it was killed; make it slower";

  // A kill in the middle of write(2) would leave a partial line: simulate one.
  {
    std::ofstream torn(out, std::ios::app | std::ios::binary);
    torn << R"({"id":"0123456789abcdef","point":3,"spe)";
  }
  ASSERT_EQ(run_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string(), "-j", "2"},
                       dir_ / "resumed.log"),
            0)
      << read_text(dir_ / "resumed.log");
  const std::string log = read_text(dir_ / "resumed.log");
  EXPECT_NE(log.find("dropped a torn last line (39 bytes)"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming: " + std::to_string(survived) + " of 120 points already in"),
            std::string::npos)
      << log;
  expect_clean(out);
  EXPECT_EQ(sorted_lines(out), sorted_lines(dir_ / "reference.jsonl"));
}

TEST_F(SweepCli, CtrlCFinishesInFlightPointsAndExitsCleanly) {
  const auto out = dir_ / "r.jsonl";
  const pid_t pid =
      start_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string(), "-j", "2"},
                   dir_ / "interrupted.log");
  ASSERT_GT(pid, 0);
  wait_for_lines(out, 20);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 130) << read_text(dir_ / "interrupted.log");
  const std::string log = read_text(dir_ / "interrupted.log");
  EXPECT_NE(log.find("sweep: interrupted; "), std::string::npos) << log;
  expect_clean(out);
  EXPECT_LT(read_lines(out).size(), kPoints);

  ASSERT_EQ(run_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string()},
                       dir_ / "resumed.log"),
            0);
  EXPECT_EQ(read_text(dir_ / "resumed.log").find("dropped a torn"), std::string::npos);
  EXPECT_EQ(sorted_lines(out), sorted_lines(dir_ / "reference.jsonl"));
}

// Issue 41: a sweep ignored SIGTERM while a point ran. Points of 60 s each: SIGTERM stops the
// sweep long before they end (worker processes are killed; in-process points get 2 s of grace
// and are then abandoned), nothing is recorded for them, and the file stays sound. Were the
// points finished instead, their lines would be in the file.
TEST_F(SweepCli, SigtermStopsPointsInFlightWithoutRecordingThem) {
  for (const std::string isolated : {"true", "false"}) {
    const auto spec = dir_ / ("long_" + isolated + ".yaml");
    write_text(spec, "name: long\nmode: synthetic\nhw: " + edge_config_path() +
                         "\nmodels: [a, b]\npolicies: [p1]\n"
                         "synthetic: {delay_ms: 60000, thread_safe: " +
                         (isolated == "true" ? std::string("false") : std::string("true")) + "}\n");
    const auto out = dir_ / ("long_" + isolated + ".jsonl");
    const auto log = dir_ / ("long_" + isolated + ".log");
    const pid_t pid = start_tessel({"sweep", spec.string(), "--out", out.string(), "-j", "2"}, log);
    ASSERT_GT(pid, 0);
    // The results file is opened (and the handlers installed) before any point starts.
    while (!std::filesystem::exists(out)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(pid, SIGTERM);
    EXPECT_EQ(wait_exit(pid), 130) << read_text(log);
    EXPECT_TRUE(read_lines(out).empty()) << read_text(out);
    expect_clean(out);
  }
}

TEST_F(SweepCli, ProcessIsolatedPointsGiveTheSameLinesAsThreads) {
  // thread_safe: false runs every point in its own `tessel sweep point` child process.
  write_text(dir_ / "isolated.yaml", slow_spec(", thread_safe: false"));
  const auto out = dir_ / "isolated.jsonl";
  ASSERT_EQ(
      run_tessel({"sweep", (dir_ / "isolated.yaml").string(), "--out", out.string(), "-j", "2"},
                 dir_ / "isolated.log"),
      0)
      << read_text(dir_ / "isolated.log");
  EXPECT_EQ(sorted_lines(out), sorted_lines(dir_ / "reference.jsonl"));
}

TEST_F(SweepCli, SecondSweepOnTheSameFileIsRefused) {
  const auto out = dir_ / "r.jsonl";
  const pid_t pid =
      start_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string(), "-j", "1"},
                   dir_ / "first.log");
  wait_for_lines(out, 1);
  EXPECT_EQ(run_tessel({"sweep", (dir_ / "spec.yaml").string(), "--out", out.string()},
                       dir_ / "second.log"),
            1);
  EXPECT_NE(read_text(dir_ / "second.log").find("is being written by another sweep"),
            std::string::npos);
  kill(pid, SIGKILL);
  wait_exit(pid);
}

TEST_F(SweepCli, BadSpecIsALocatedErrorWithExitCodeOne) {
  write_text(dir_ / "bad.yaml",
             "mode: synthetic\nhw: " + edge_config_path() + "\nmodels: m\npolices: p\n");
  EXPECT_EQ(
      run_tessel({"sweep", (dir_ / "bad.yaml").string(), "--out", (dir_ / "x.jsonl").string()},
                 dir_ / "bad.log"),
      1);
  EXPECT_EQ(read_text(dir_ / "bad.log"),
            (dir_ / "bad.yaml").string() +
                ":4:1: error: polices: unknown spec key; did you mean 'policies'?\n");
}

TEST_F(SweepCli, PlotWritesPngAndSvgPerModelForEachKind) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  for (const std::string kind : {"ski-slope", "bandwidth", "pareto"}) {
    ASSERT_EQ(run_tessel({"plot", (dir_ / "reference.jsonl").string(), "--kind", kind, "--out",
                          (dir_ / "plots").string()},
                         dir_ / "plot.log"),
              0)
        << read_text(dir_ / "plot.log");
    for (const std::string model : {"a", "b"}) {
      for (const std::string ext : {"png", "svg"}) {
        const auto file = dir_ / "plots" / (kind + "-" + model + "." + ext);
        EXPECT_TRUE(std::filesystem::exists(file)) << file << "\n" << read_text(dir_ / "plot.log");
      }
    }
  }
  const std::string svg = read_text(dir_ / "plots" / "ski-slope-a.svg");
  EXPECT_NE(svg.find("compulsory"), std::string::npos);
}

}  // namespace
}  // namespace tessel::sweep
