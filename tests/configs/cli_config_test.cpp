// The built `tessel` binary: config check exit codes and lines, config show --json.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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
      std::filesystem::temp_directory_path() / ("tessel-config-cli-" + std::to_string(::getpid()));
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

TEST(ConfigCli, check_accepts_every_shipped_config) {
  std::string files;
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TESSEL_SOURCE_DIR) + "/configs/hw")) {
    files += " configs/hw/" + entry.path().filename().string();
    ++count;
  }
  ASSERT_EQ(count, 4);
  const CliRun run = tessel("config check" + files);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_NE(run.out.find("configs/hw/vta-pynq.yaml: ok (vta-pynq, content hash "),
            std::string::npos)
      << run.out;
}

TEST(ConfigCli, check_prints_one_located_line_per_problem_and_exits_1) {
  const CliRun run = tessel(
      "config check configs/hw/edge-small.yaml tests/configs/bad/bits_12.yaml "
      "tests/configs/bad/many_problems.yaml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "tests/configs/bad/bits_12.yaml:8:15: error: matrix.input_bits: must be 8 or 16, got "
            "12\n"
            "tests/configs/bad/many_problems.yaml:7:12: error: clock_mhz: expected a number, got "
            "'fast'\n"
            "tests/configs/bad/many_problems.yaml:9:9: error: matrix.rows: must be between 1 and "
            "4096, got 0\n"
            "tests/configs/bad/many_problems.yaml:19:12: error: scratchpads[0].banks: must be a "
            "power of two, got 6\n"
            "tests/configs/bad/many_problems.yaml:29:21: error: queues.token_fifo_depth: must be "
            "between 1 and 65536, got 0\n");
  EXPECT_NE(run.out.find("configs/hw/edge-small.yaml: ok"), std::string::npos) << run.out;
}

TEST(ConfigCli, check_applies_set_overrides) {
  const CliRun run = tessel("config check configs/hw/edge-small.yaml --set dram.bandwidth=0GB/s");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "override dram.bandwidth=0GB/s: error: dram.bandwidth: must be greater than 0 B/s, "
            "got 0GB/s\n");
}

TEST(ConfigCli, show_json_carries_config_derived_figures_and_hash) {
  const CliRun run = tessel("config show configs/hw/npc19-deepfusion.yaml --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["config"]["name"], "npc19-deepfusion");
  EXPECT_EQ(json["config"]["scratchpads"][0]["size_bytes"], 786432);
  EXPECT_EQ(json["derived"]["macs_per_cycle"], 256);
  EXPECT_EQ(json["derived"]["peak_gops"], 200.0);
  EXPECT_EQ(json["derived"]["dram_bytes_per_cycle"], 3.84);
  EXPECT_EQ(json["derived"]["total_onchip_bytes"], 786432);
  EXPECT_EQ(json["derived"]["scratchpad_for"]["weights"], "unified");
  EXPECT_EQ(json["content_hash"].get<std::string>().size(), 16u);
}

TEST(ConfigCli, show_table_lists_derived_figures) {
  const CliRun run = tessel("config show configs/hw/vta-pynq.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  peak                51.200 GOP/s\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  machine balance     32.0000 MACs per DRAM byte\n"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  scratchpad wgt      256KiB, 1 banks x 256 B; holds weights\n"),
            std::string::npos)
      << run.out;
}

TEST(ConfigCli, show_of_a_bad_file_exits_1_with_the_located_message) {
  const CliRun run = tessel("config show tests/configs/bad/unknown_key_misspelt.yaml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "tests/configs/bad/unknown_key_misspelt.yaml:6:3: error: matrix.rwos: unknown key; "
            "did you mean 'rows'?\n");
}

}  // namespace
