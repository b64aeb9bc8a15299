// The opcode table and its generated outputs: field tables consistent, SV package checked in.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "isa/instruction.hpp"

namespace tessel::isa {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(IsaTable, checked_in_sv_package_matches_table) {
  const std::string generated = read(TESSEL_ISA_SV);
  const std::string checked_in =
      read(std::string(TESSEL_SOURCE_DIR) + "/hw/rtl/generated/tessel_isa_pkg.sv");
  ASSERT_FALSE(generated.empty()) << TESSEL_ISA_SV;
  EXPECT_EQ(checked_in, generated)
      << "hw/rtl/generated/tessel_isa_pkg.sv is stale: run "
         "`cmake --build BUILD --target tessel_isa_refresh_sv` and commit it";
}

TEST(IsaTable, checked_in_field_reference_in_docs_matches_table) {
  const std::string generated = read(TESSEL_ISA_FIELDS_MD);
  const std::string doc = read(std::string(TESSEL_SOURCE_DIR) + "/docs/isa.md");
  const std::string begin = "<!-- BEGIN GENERATED FIELD REFERENCE -->\n";
  const auto at = doc.find(begin);
  const auto end = doc.find("<!-- END GENERATED FIELD REFERENCE -->");
  ASSERT_NE(at, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  ASSERT_FALSE(generated.empty());
  EXPECT_EQ(doc.substr(at + begin.size(), end - at - begin.size()), generated)
      << "docs/isa.md's field reference is stale: run "
         "`cmake --build BUILD --target tessel_isa_refresh_sv` and commit it";
}

TEST(IsaTable, sv_package_carries_every_opcode_and_field_position) {
  const std::string sv = read(TESSEL_ISA_SV);
  for (const auto& spec : opcode_specs()) {
    std::string upper;
    for (char c : spec.name) upper += static_cast<char>(std::toupper(c));
    EXPECT_NE(sv.find("OP_" + upper + " = 8'd" + std::to_string(spec.code) + ";"),
              std::string::npos)
        << spec.name;
    EXPECT_NE(sv.find("} " + std::string(spec.name) + "_insn_t;"), std::string::npos);
  }
  EXPECT_NE(sv.find("LOAD_SRAM_ADDR_LSB = 24, LOAD_SRAM_ADDR_W = 24;"), std::string::npos);
  EXPECT_NE(sv.find("CONV_ACC_STRIDE_X_LSB = 243, CONV_ACC_STRIDE_X_W = 13;"), std::string::npos);
}

TEST(IsaTable, fields_are_disjoint_and_inside_the_word) {
  for (const auto& spec : opcode_specs()) {
    std::set<int> bits{0, 1, 2, 3, 4, 5, 6, 7};  // opcode
    for (const auto& f : spec.fields()) {
      EXPECT_LE(f.lsb + f.width, kInstructionBits) << spec.name << "." << f.name;
      for (int b = f.lsb; b < f.lsb + f.width; ++b)
        EXPECT_TRUE(bits.insert(b).second) << spec.name << "." << f.name << " bit " << b;
    }
  }
}

TEST(IsaTable, every_opcode_starts_with_the_four_token_flags) {
  for (const auto& spec : opcode_specs()) {
    ASSERT_GE(spec.field_count, 4);
    EXPECT_EQ(spec.fields()[0].name, "pop_prev");
    EXPECT_EQ(spec.fields()[0].lsb, 8);
    EXPECT_EQ(spec.fields()[3].name, "push_next");
    EXPECT_EQ(spec.fields()[3].lsb, 11);
  }
}

TEST(IsaTable, mnemonics_and_codes_find_their_specs) {
  EXPECT_EQ(find_opcode("conv")->code, 4);
  EXPECT_EQ(find_opcode(std::uint8_t{10})->name, "finish");
  EXPECT_EQ(find_opcode("convolve"), nullptr);
  EXPECT_EQ(find_opcode(std::uint8_t{0}), nullptr);
  EXPECT_EQ(engine_of(Conv{}), Engine::kCompute);
  EXPECT_EQ(engine_of(Store{}), Engine::kStore);
}

}  // namespace
}  // namespace tessel::isa
