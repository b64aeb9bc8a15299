// `tessel asm` / `tessel disasm` end to end through the CLI registry, on temporary files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "isa/program.hpp"
#include "support/cli.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

int run(std::vector<std::string> args) {
  return cli::run_args(std::move(args));
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class IsaCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_isa_cli_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

const std::string kPrograms = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/";

TEST_F(IsaCli, asm_then_disasm_then_asm_gives_the_same_bytes) {
  const auto bin = (dir_ / "a.bin").string(), tasm = (dir_ / "a.tasm").string(),
             bin2 = (dir_ / "b.bin").string();
  ASSERT_EQ(run({"asm", kPrograms + "double_buffer_conv.tasm", "-o", bin, "--hw",
                 kPrograms + "micro.yaml"}),
            0);
  EXPECT_EQ(fs::file_size(bin), 16u + 14 * 32);
  ASSERT_EQ(run({"disasm", bin, "-o", tasm}), 0);
  ASSERT_EQ(run({"asm", tasm, "-o", bin2}), 0);
  EXPECT_EQ(read(bin), read(bin2));
}

TEST_F(IsaCli, disasm_with_hw_writes_scratchpad_names_that_asm_reads_back) {
  const auto bin = (dir_ / "a.bin").string(), tasm = (dir_ / "a.tasm").string(),
             bin2 = (dir_ / "b.bin").string();
  const std::string hw = kPrograms + "micro.yaml";
  ASSERT_EQ(run({"asm", kPrograms + "matrix_tile.tasm", "-o", bin}), 0);
  ASSERT_EQ(run({"disasm", bin, "-o", tasm, "--hw", hw}), 0);
  EXPECT_NE(read(tasm).find(" in_sp=act w_sp=wgt acc_sp=acc "), std::string::npos);
  ASSERT_EQ(run({"asm", tasm, "-o", bin2, "--hw", hw}), 0);
  EXPECT_EQ(read(bin), read(bin2));
}

TEST_F(IsaCli, asm_reports_a_located_error_and_exits_1) {
  const auto tasm = (dir_ / "bad.tasm").string();
  std::ofstream(tasm) << "finish\nload sp=0 sram_addr=0x30000 y_size=1 x_size=1 c_size=1\n";
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"asm", tasm, "-o", (dir_ / "bad.bin").string(), "--hw", kPrograms + "micro.yaml"}),
            1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            tasm + ":2:11: error: field 'sram_addr' = 0x30000 beyond scratchpad 'act' (4 KiB)\n");
  EXPECT_FALSE(fs::exists(dir_ / "bad.bin"));
}

}  // namespace
}  // namespace tessel
