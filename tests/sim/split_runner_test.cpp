// SplitRunner: every index of a job is run exactly once, by one of the two threads, for many
// jobs in a row, counts and splits of every size, a job ends only when its chunks are done, and
// the helper is used for the decided jobs only when its measured window was the faster.
#include "sim/core/split_runner.hpp"

#include <gtest/gtest.h>

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

// Slow chunks: the helper takes some (it is spinning between jobs), and run() returns only
// after the helper's chunk has finished (its writes are visible to the caller).
TEST(SimSplitRunner, waits_for_the_helpers_chunk_and_sees_its_writes) {
  SplitRunner runner;
  const auto caller = std::this_thread::get_id();
  for (int job = 0; job < 20; ++job) {
    std::vector<int> values(8, 0);  // plain ints: the join must publish them
    std::atomic<int> by_helper{0};
    runner.run(8, 4, [&](std::int64_t begin, std::int64_t end) {
      if (std::this_thread::get_id() != caller) by_helper.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      for (std::int64_t i = begin; i < end; ++i) values[static_cast<std::size_t>(i)] = job + 1;
    });
    for (int v : values) ASSERT_EQ(v, job + 1) << "job " << job;
  }
  EXPECT_GT(runner.helped_jobs(), 0u);  // 4 chunks of 200 us: the spinning helper takes some
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
  for (int job = 0; job < 2 * SplitRunner::kWindowJobs + SplitRunner::kDecidedJobs; ++job) {
    runner.run(4, 2, fn);
    if (job + 1 == SplitRunner::kWindowJobs) after_first_window = runner.helped_jobs();
  }
  return {after_first_window, runner.helped_jobs()};
}

// A helper 50x slower per element than the caller makes the helped window slower than the
// alone one: the decided jobs run on the caller alone (no chunk of theirs goes to the helper).
TEST(SimSplitRunner, a_helper_that_slows_the_jobs_is_left_out_until_the_next_window) {
  const auto [first, all] = one_cycle(20, 1000);
  EXPECT_EQ(all, first);
}

// 100 us per element on either thread: with the helper a job takes ~2 chunk times instead of
// 4, so the decided jobs use it (it takes chunks beyond the first window).
TEST(SimSplitRunner, a_helper_that_halves_the_jobs_is_kept_for_the_decided_jobs) {
  const auto [first, all] = one_cycle(100, 100);
  EXPECT_GT(first, 0u);
  EXPECT_GT(all, first + SplitRunner::kDecidedJobs / 2);
}

}  // namespace
}  // namespace tessel::sim
