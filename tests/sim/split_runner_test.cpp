// SplitRunner: every index of a job is run exactly once, by one of the two threads, for many
// jobs in a row, counts and splits of every size, and a job ends only when its chunks are done.
#include "sim/core/split_runner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
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

}  // namespace
}  // namespace tessel::sim
