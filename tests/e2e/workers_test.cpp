// run_in_workers (tools/run/workers.hpp): replies in task order whatever the parallelism, and a
// task that throws or a child that dies is reported, not lost.
#include "tools/run/workers.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::pipeline {
namespace {

TEST(RunWorkers, replies_come_back_in_task_order_for_any_number_of_jobs) {
  // A child's changes stay in the child: each sees counter = 0 and replies counter + i.
  int counter = 0;
  const auto task = [&](std::size_t i) {
    counter += static_cast<int>(i);
    return "task " + std::to_string(i) + " saw " + std::to_string(counter);
  };
  for (const std::size_t jobs : {1u, 2u, 7u}) {
    const auto outcomes = run_in_workers(5, jobs, task);
    ASSERT_EQ(outcomes.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_TRUE(outcomes[i].ok) << outcomes[i].error;
      EXPECT_EQ(outcomes[i].reply, "task " + std::to_string(i) + " saw " + std::to_string(i));
    }
  }
  EXPECT_EQ(counter, 0);
}

TEST(RunWorkers, a_reply_larger_than_a_pipe_buffer_arrives_whole) {
  const auto outcomes =
      run_in_workers(3, 3, [](std::size_t i) { return std::string(300000 + i, 'a'); });
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(outcomes[i].reply.size(), 300000 + i);
}

TEST(RunWorkers, a_throwing_task_and_a_dying_child_are_errors_of_their_own_task) {
  const auto outcomes = run_in_workers(4, 2, [](std::size_t i) -> std::string {
    if (i == 1) throw std::runtime_error("no schedule fits");
    if (i == 2) std::raise(SIGABRT);
    if (i == 3) std::_Exit(9);
    return "fine";
  });
  EXPECT_TRUE(outcomes[0].ok);
  EXPECT_EQ(outcomes[0].reply, "fine");
  EXPECT_FALSE(outcomes[1].ok);
  EXPECT_EQ(outcomes[1].error, "no schedule fits");
  EXPECT_FALSE(outcomes[2].ok);
  EXPECT_EQ(outcomes[2].error, "worker process died of signal 6 (Aborted)");
  EXPECT_FALSE(outcomes[3].ok);
  EXPECT_EQ(outcomes[3].error, "worker process exited with status 9");
}

}  // namespace
}  // namespace tessel::pipeline
