// SplitRunner: every index of a job is run exactly once, by one of the two threads, for many
// jobs in a row, counts and splits of every size, a job ends only when its chunks are done, and
// a helper that slows the jobs is left out. HelperPolicy: the decision, on made-up window times.
#include "sim/core/split_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace tessel::sim {
namespace {

TEST(SimSplitRunner, runs_every_index_exactly_once_over_many_jobs) {
  SplitRunner runner;
  for (std::int64_t count = 1; count <= 300; ++count) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
    const std::function<void(std::int64_t, std::int64_t)> fn = [&](std::int64_t begin,
                                                                   std::int64_t end) {
      ASSERT_LE(0, begin);
      ASSERT_LT(begin, end);
      ASSERT_LE(end, count);
      for (std::int64_t i = begin; i < end; ++i)
        hits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    };
    runner.run(count, count / 2, fn);
    for (std::int64_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "count " << count << " i " << i;
  }
  EXPECT_EQ(runner.jobs(), 300u);
  EXPECT_LE(runner.helped_jobs(), runner.jobs());
}

TEST(SimSplitRunner, an_empty_job_calls_nothing_and_a_zero_split_still_covers_the_range) {
  SplitRunner runner;
  int calls = 0;
  runner.run(0, 0, [&](std::int64_t, std::int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(runner.jobs(), 0u);
  std::atomic<std::int64_t> sum{0};
  runner.run(5, 0, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) sum += i + 1;
  });
  EXPECT_EQ(sum.load(), 15);  // chunks of one
}

// Every job of the first window is posted to the helper. The caller's first chunk waits (up to
// 10 s) until the helper has started one, so the helper runs a chunk of every job whatever the
// machine's load; its chunk then sleeps 2 ms, and run() must wait for it: the helper's writes
// (plain ints) are all visible when run() returns.
TEST(SimSplitRunner, waits_for_the_helpers_chunk_and_sees_its_writes) {
  SplitRunner runner;
  const auto caller = std::this_thread::get_id();
  constexpr int kJobs = 20;
  static_assert(kJobs <= HelperPolicy::kWindowJobs);
  for (int job = 0; job < kJobs; ++job) {
    std::vector<int> values(8, 0);
    std::atomic<int> by_helper{0};
    runner.run(8, 4, [&](std::int64_t begin, std::int64_t end) {
      if (std::this_thread::get_id() != caller) {
        by_helper.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      } else if (begin == 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (by_helper.load() == 0 && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      for (std::int64_t i = begin; i < end; ++i) values[static_cast<std::size_t>(i)] = job + 1;
    });
    ASSERT_GT(by_helper.load(), 0) << "job " << job << ": the helper ran no chunk in 10 s";
    for (int v : values) ASSERT_EQ(v, job + 1) << "job " << job;
  }
  EXPECT_EQ(runner.helped_jobs(), static_cast<std::uint64_t>(kJobs));
}

/// Runs one measuring cycle (a window with the helper, one alone, the decided jobs) of jobs of
/// 4 elements in 4 chunks, each element sleeping `caller_us` on the caller and `helper_us` on
/// the helper; returns helped_jobs() after the first window and after the whole cycle.
std::pair<std::uint64_t, std::uint64_t> one_cycle(int caller_us, int helper_us) {
  SplitRunner runner;
  const auto caller = std::this_thread::get_id();
  const std::function<void(std::int64_t, std::int64_t)> fn = [&](std::int64_t begin,
                                                                 std::int64_t end) {
    const int us = std::this_thread::get_id() == caller ? caller_us : helper_us;
    std::this_thread::sleep_for(std::chrono::microseconds(us * (end - begin)));
  };
  std::uint64_t after_first_window = 0;
  for (int job = 0; job < 2 * HelperPolicy::kWindowJobs + HelperPolicy::kDecidedJobs; ++job) {
    runner.run(4, 2, fn);
    if (job + 1 == HelperPolicy::kWindowJobs) after_first_window = runner.helped_jobs();
  }
  return {after_first_window, runner.helped_jobs()};
}

// A helper 50x slower per element than the caller makes the helped window slower than the
// alone one: the decided jobs run on the caller alone (no chunk of theirs goes to the helper).
TEST(SimSplitRunner, a_helper_that_slows_the_jobs_is_left_out_until_the_next_window) {
  const auto [first, all] = one_cycle(20, 1000);
  EXPECT_EQ(all, first);
}

// The decision itself, with made-up window times (the threads and the clock left out): one
// measuring cycle is kWindowJobs jobs with the helper, kWindowJobs alone, then the decided jobs.
using Policy = HelperPolicy;
using std::chrono::microseconds;

/// Runs `jobs` jobs through the policy, the helper taking a chunk of each helped job when
/// `helper_takes`; a window that ends takes `helped_us` if its jobs ran with the helper, else
/// `alone_us`. Returns how many of the jobs ran with the helper.
int drive(Policy& policy, int jobs, bool helper_takes, int helped_us, int alone_us) {
  int helped = 0;
  for (int job = 0; job < jobs; ++job) {
    const bool with_helper = policy.helped();
    helped += with_helper ? 1 : 0;
    if (policy.end_job(with_helper && helper_takes))
      policy.end_window(microseconds(with_helper ? helped_us : alone_us));
  }
  return helped;
}

TEST(SimHelperPolicy, a_faster_helped_window_keeps_the_helper_for_the_decided_jobs) {
  Policy policy;
  EXPECT_TRUE(policy.window_starts());
  EXPECT_EQ(drive(policy, Policy::kWindowJobs, true, 500, 900), Policy::kWindowJobs);
  EXPECT_FALSE(policy.helped());  // the window alone
  EXPECT_EQ(drive(policy, Policy::kWindowJobs, true, 500, 900), 0);
  EXPECT_TRUE(policy.helped());
  EXPECT_FALSE(policy.parked());
  EXPECT_EQ(policy.decided_jobs(), Policy::kDecidedJobs);
  EXPECT_EQ(drive(policy, Policy::kDecidedJobs, true, 500, 900), Policy::kDecidedJobs);
  // Then it measures again: the next job starts a helped window.
  EXPECT_TRUE(policy.window_starts());
  EXPECT_TRUE(policy.helped());
}

TEST(SimHelperPolicy, a_slower_helped_window_parks_the_helper_and_doubles_the_decided_jobs) {
  Policy policy;
  // Cycle 1: helped 900 us against 500 alone: 2 * kDecidedJobs jobs alone, the helper parked.
  EXPECT_EQ(drive(policy, 2 * Policy::kWindowJobs, true, 900, 500), Policy::kWindowJobs);
  EXPECT_FALSE(policy.helped());
  EXPECT_TRUE(policy.parked());
  EXPECT_EQ(policy.decided_jobs(), 2 * Policy::kDecidedJobs);
  EXPECT_EQ(drive(policy, 2 * Policy::kDecidedJobs, true, 900, 500), 0);
  EXPECT_FALSE(policy.parked());  // measuring again
  // Each further decision against doubles again, up to kMaxDecidedJobs.
  int expected = 2 * Policy::kDecidedJobs;
  for (int cycle = 0; cycle < 4; ++cycle) {
    EXPECT_EQ(drive(policy, 2 * Policy::kWindowJobs, true, 900, 500), Policy::kWindowJobs);
    expected = std::min(2 * expected, Policy::kMaxDecidedJobs);
    EXPECT_EQ(policy.decided_jobs(), expected) << "cycle " << cycle;
    EXPECT_EQ(drive(policy, expected, true, 900, 500), 0);
  }
  EXPECT_EQ(expected, Policy::kMaxDecidedJobs);
  // One decision for the helper sets them back.
  EXPECT_EQ(drive(policy, 2 * Policy::kWindowJobs, true, 400, 500), Policy::kWindowJobs);
  EXPECT_EQ(policy.decided_jobs(), Policy::kDecidedJobs);
  EXPECT_TRUE(policy.helped());
}

// A helper that took a chunk in fewer than kMinHelpedJobs of its window's jobs had no core: it is
// left out even if that window measured faster; at exactly kMinHelpedJobs it is kept.
TEST(SimHelperPolicy, a_helper_that_rarely_took_a_chunk_is_left_out_whatever_the_times) {
  for (const int took : {0, Policy::kMinHelpedJobs - 1, Policy::kMinHelpedJobs}) {
    Policy policy;
    for (int job = 0; job < Policy::kWindowJobs; ++job) {
      ASSERT_TRUE(policy.helped());
      if (policy.end_job(job < took)) policy.end_window(microseconds(100));
    }
    drive(policy, Policy::kWindowJobs, true, 100, 900);
    EXPECT_EQ(policy.helped(), took >= Policy::kMinHelpedJobs) << took << " chunks taken";
  }
}

// Equal times count against the helper (it costs a core for nothing).
TEST(SimHelperPolicy, equal_windows_leave_the_helper_out) {
  Policy policy;
  drive(policy, 2 * Policy::kWindowJobs, true, 700, 700);
  EXPECT_FALSE(policy.helped());
  EXPECT_TRUE(policy.parked());
}

}  // namespace
}  // namespace tessel::sim
