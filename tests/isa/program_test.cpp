// The .bin format: header layout, and the located errors of the reader.
#include <gtest/gtest.h>

#include "isa/program.hpp"
#include "support/diagnostic.hpp"

namespace tessel::isa {
namespace {

std::vector<std::uint8_t> binary_of(const Program& p) {
  auto b = to_binary(p);
  EXPECT_TRUE(b.ok()) << b.reason();
  return b.ok() ? b.value() : std::vector<std::uint8_t>{};
}

std::string first_error(const std::vector<std::uint8_t>& bytes) {
  try {
    from_binary(bytes, "prog.bin");
  } catch (const InputError& e) {
    return e.diagnostics().front().str();
  }
  return "";
}

TEST(IsaBinary, header_is_magic_version_size_count_reserved) {
  const auto bytes = binary_of({{Nop{}, Finish{}}});
  ASSERT_EQ(bytes.size(), 16u + 2 * 32);
  const std::vector<std::uint8_t> header(bytes.begin(), bytes.begin() + 16);
  EXPECT_EQ(header,
            (std::vector<std::uint8_t>{'T', 'I', 'S', 'A', 3, 0, 32, 0, 2, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes[16], 0x01);  // nop
  EXPECT_EQ(bytes[48], 0x0a);  // finish
  EXPECT_EQ(from_binary(bytes, "p.bin"), (Program{{Nop{}, Finish{}}}));
}

TEST(IsaBinary, reader_rejects_a_short_file_and_a_bad_magic) {
  EXPECT_EQ(first_error({'T', 'I'}),
            "prog.bin: error: header: file has 2 bytes, fewer than the 16-byte header");
  auto bytes = binary_of({{Finish{}}});
  bytes[0] = 'X';
  EXPECT_EQ(first_error(bytes),
            "prog.bin: error: header: bad magic (not a Tessel ISA binary; expected 'TISA')");
}

TEST(IsaBinary, reader_rejects_another_version_and_a_truncated_body) {
  auto bytes = binary_of({{Finish{}}});
  bytes[4] = 9;
  EXPECT_EQ(first_error(bytes),
            "prog.bin: error: header: ISA version 9, this build reads versions 2 to 3");
  bytes[4] = 1;  // version 1 had 4-bit load pads at other bits: refused
  EXPECT_EQ(first_error(bytes),
            "prog.bin: error: header: ISA version 1, this build reads versions 2 to 3");
  bytes[4] = 2;  // version 2 words are version 3 words (3 only added opcodes)
  EXPECT_TRUE(from_binary(bytes, "prog.bin").instructions.size() == 1);
  bytes = binary_of({{Finish{}}});
  bytes.pop_back();
  EXPECT_EQ(first_error(bytes),
            "prog.bin: error: header: header says 1 instructions (48 bytes) but the file has 47 "
            "bytes");
}

TEST(IsaBinary, reader_names_each_bad_instruction_by_index) {
  auto bytes = binary_of({{Nop{}, Finish{}, Finish{}}});
  bytes[16 + 32] = 0;      // instruction 1: opcode 0
  bytes[16 + 64 + 1] = 1;  // instruction 2: finish with pop_prev is fine ...
  bytes[16 + 64 + 2] = 1;  // ... but bit 16 is reserved
  try {
    from_binary(bytes, "prog.bin");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].str(), "prog.bin: error: instruction 1: unknown opcode 0x00");
    EXPECT_EQ(e.diagnostics()[1].str(),
              "prog.bin: error: instruction 2: reserved bit 16 is set (finish does not use it)");
  }
}

TEST(IsaBinary, writer_names_the_instruction_that_does_not_encode) {
  Load bad;
  bad.y_size = 0;
  auto bytes = to_binary({{Finish{}, bad}});
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.reason(), "instruction 1: field 'y_size' = 0 out of range [1, 4095]");
}

}  // namespace
}  // namespace tessel::isa
