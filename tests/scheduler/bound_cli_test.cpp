// The built `tessel bound`: rows, JSON keys and values on a hand-computed net, the default
// capacities, and a bad --capacities item.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs `tessel <args>` in the source tree, capturing stdout and stderr separately.
CliRun tessel(const std::string& args) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tessel-bound-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string command =
      "cd '" TESSEL_SOURCE_DIR "' && '" TESSEL_BINARY_DIR "/tools/tessel/tessel' " + args + " >'" +
      (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_text(dir / "out");
  run.err = read_text(dir / "err");
  std::filesystem::remove_all(dir);
  return run;
}

// tiny_residual (input 4x8x8 -> conv 3x3 (BN folded: bias) -> relu -> conv 3x3 -> add input ->
// relu) on npc19-deepfusion, 16-bit: every map 4 * 64 * 2 = 512 B; each conv 4 * 4 * 9 * 2 + 4 *
// 4 = 304 B of weights and bias, 32 B of table. Compulsory: 608 + 64 + 512 + 512 = 1696. The
// first conv's output lives from conv1 to conv2: both convs' 608 B, or swept, the 512-byte map
// alone at conv2. At 500 B neither fits, so it crosses: per tensor 1696 + 512 + 512 = 2720.
// The chain bound finds no partition at all (chain_bytes -1: no schedule exists): every group
// holding a conv holds its weight buffer, at least one packed 16-column block of 4 input
// channels, 9 taps and 16 x 16 16-bit weights, its bias and table (4680 B > 500; F9). The
// bound is then the per-tensor one. (Session 26, with compact weights only: the chain loaded x
// twice, 3232.) At 768 KiB everything fits: 1696.
TEST(BoundCli, rows_and_json_on_a_hand_computed_net) {
  const CliRun run = tessel(
      "bound --model tiny_residual --hw configs/hw/npc19-deepfusion.yaml --capacities "
      "500,768KiB --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["model"], "tiny_residual");
  EXPECT_EQ(j["hw"], "npc19-deepfusion");
  EXPECT_EQ(j["policy"], "optimal");
  EXPECT_FALSE(j["tool_version"].get<std::string>().empty());
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["capacity_bytes"], 500);
  EXPECT_EQ(j["rows"][0]["compulsory_bytes"], 1696);
  EXPECT_EQ(j["rows"][0]["bound_bytes"], 2720);
  EXPECT_EQ(j["rows"][0]["own_bound_bytes"], 2720);  // 768 KiB's 1696 is lower
  EXPECT_EQ(j["rows"][0]["per_tensor_bytes"], 2720);
  EXPECT_EQ(j["rows"][0]["chain_bytes"], -1);
  EXPECT_EQ(j["rows"][0]["crossing_bytes"], 1024);
  EXPECT_EQ(j["rows"][1]["capacity_bytes"], 786432);
  EXPECT_EQ(j["rows"][1]["bound_bytes"], 1696);
}

// Monotone in capacity: a schedule that fits 500 B fits 6000 B, so 6000 B's bound holds at 500 B.
// tiny_residual as above; at 6000 B one conv's group fits (4680 B of packed weights, its
// 3 x 3 window of 4 channels padded to 16, 288 B, and one 64-byte accumulator pixel: F11), two
// do not (9360 B tiled or swept), so every partition cuts between the convs: the first conv's
// 512-byte map is stored and loaded, and the network input, read by the first conv and the
// Add, is loaded twice: 1696 + 1024 + 512 = 3232. At 500 B no partition exists and the
// per-tensor bound (2720) is lifted to 3232; `own_bound_bytes` keeps 2720.
TEST(BoundCli, a_smaller_capacity_takes_a_larger_ones_bound) {
  const CliRun run = tessel(
      "bound --model tiny_residual --hw configs/hw/npc19-deepfusion.yaml --capacities "
      "6000,500,768KiB --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out)["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["capacity_bytes"], 6000);
  EXPECT_EQ(rows[0]["bound_bytes"], 3232);
  EXPECT_EQ(rows[0]["own_bound_bytes"], 3232);
  EXPECT_EQ(rows[0]["chain_bytes"], 3232);
  EXPECT_EQ(rows[1]["capacity_bytes"], 500);
  EXPECT_EQ(rows[1]["bound_bytes"], 3232);
  EXPECT_EQ(rows[1]["own_bound_bytes"], 2720);
  EXPECT_EQ(rows[1]["chain_bytes"], -1);
  EXPECT_EQ(rows[2]["bound_bytes"], 1696);
  EXPECT_EQ(rows[2]["own_bound_bytes"], 1696);
}

// Without --capacities: the config's own 768 KiB and 64 KiB .. 16 MiB doubling, ascending.
TEST(BoundCli, default_capacities_are_the_configs_own_and_64KiB_to_16MiB) {
  const CliRun run = tessel("bound --model tiny_conv --hw npc19-deepfusion --json - ");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out)["rows"];
  std::vector<int64_t> capacities;
  for (const auto& row : rows) capacities.push_back(row["capacity_bytes"].get<int64_t>());
  const std::vector<int64_t> expected = {65536,   131072,  262144,  524288,  786432,
                                         1048576, 2097152, 4194304, 8388608, 16777216};
  EXPECT_EQ(capacities, expected);
}

TEST(BoundCli, a_bad_capacity_is_named) {
  const CliRun run = tessel("bound --model tiny_conv --capacities 1KiB,12XB");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("--capacities"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("12XB"), std::string::npos) << run.err;
}

}  // namespace
