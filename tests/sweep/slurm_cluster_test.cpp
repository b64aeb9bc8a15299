// A real one-node Slurm cluster on localhost runs a sweep as an array job (label slow; skipped
// with the reason when the daemons cannot start: not root, no slurm-wlm/munge).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::tessel_executable;

TEST(SlurmLocalCluster, SweepThroughRealSlurmEqualsLocalRun) {
  if (!std::filesystem::exists(tessel_executable())) GTEST_SKIP() << "tessel is not built";
  const std::string command = std::string(TESSEL_SOURCE_DIR) +
                              "/scripts/slurm/local-cluster.sh test " + tessel_executable() +
                              " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) GTEST_SKIP() << "the Slurm daemons cannot start here:\n" << output;
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("PASS: 24 points through Slurm equal the local run"), std::string::npos)
      << output;
}

}  // namespace
}  // namespace tessel::sweep
