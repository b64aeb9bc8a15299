// The registry builds nested subcommands and runs the deepest one parsed.
#include "support/cli.hpp"

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "support/diagnostic.hpp"

namespace tessel::cli {
namespace {

int last_value = -1;

const GroupRegistration kGroup{"zz-test", "a test group"};
const Registration kLeaf{{"zz-test leaf", "a leaf", [](CLI::App& command) -> Runner {
                            auto value = std::make_shared<int>(0);
                            command.add_option("--value", *value)->required();
                            return [value] {
                              last_value = *value;
                              return 7;
                            };
                          }}};
const Registration kFails{{"zz-fails", "throws an input error", [](CLI::App&) -> Runner {
                             return []() -> int {
                               throw_input_error({"x.yaml", 3, 4}, "key", "bad value");
                             };
                           }}};

int run(std::vector<std::string> args) {
  return run_args(std::move(args));
}

TEST(Cli, RunsNestedCommandWithItsOptions) {
  EXPECT_EQ(run({"zz-test", "leaf", "--value", "42"}), 7);
  EXPECT_EQ(last_value, 42);
}

TEST(Cli, MissingRequiredOptionIsAParseError) {
  EXPECT_NE(run({"zz-test", "leaf"}), 0);
}

TEST(Cli, UnknownCommandIsAParseError) {
  EXPECT_NE(run({"no-such-command"}), 0);
}

TEST(Cli, InputErrorExitsWithOne) {
  EXPECT_EQ(run({"zz-fails"}), 1);
}

TEST(Cli, ParentsAreSortedBeforeChildren) {
  const auto commands = registered_commands();
  ASSERT_GE(commands.size(), 2u);
  EXPECT_EQ(commands.back().path, "zz-test leaf");
}

}  // namespace
}  // namespace tessel::cli
