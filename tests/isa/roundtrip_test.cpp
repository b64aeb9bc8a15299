// Round trips: 100k seeded random valid instructions, and every .tasm program in the repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "isa/assembler.hpp"
#include "support/diagnostic.hpp"
#include "tests/support/sanitized.hpp"

namespace tessel::isa {
namespace {

/// A random instruction satisfying check(): every field uniform in its legal range, redrawn
/// until the cross-field rules hold. Small fields are also drawn at their extremes often.
Instruction random_instruction(std::mt19937_64& rng) {
  const auto specs = opcode_specs();
  for (;;) {
    const auto& spec = specs[rng() % specs.size()];
    std::vector<std::int64_t> values;
    for (const auto& field : spec.fields()) {
      const auto span = static_cast<std::uint64_t>(field.max_value - field.min_value);
      std::int64_t v;
      switch (rng() % 4) {
        case 0:
          v = field.min_value;
          break;
        case 1:
          v = field.max_value;
          break;
        default:
          v = field.min_value + static_cast<std::int64_t>(rng() % (span + 1));
      }
      values.push_back(v);
    }
    auto made = make_instruction(spec, values);
    if (made.ok() && check(made.value()).ok()) return std::move(made).value();
  }
}

TEST(IsaRoundTrip, random_instructions_encode_decode_and_assemble_back_identically) {
  // A quarter of the instructions under ASan (tests/support/sanitized.hpp): ~10 CPU-s for all.
  constexpr int kCount = testing::kSanitized ? 25000 : 100000;
  std::mt19937_64 rng(20261121);
  Program program;
  program.instructions.reserve(kCount);
  std::vector<int> per_opcode(opcode_specs().size(), 0);
  for (int i = 0; i < kCount; ++i) {
    program.instructions.push_back(random_instruction(rng));
    ++per_opcode[program.instructions.back().index()];
  }
  for (std::size_t op = 0; op < per_opcode.size(); ++op)
    EXPECT_GT(per_opcode[op], kCount / 100) << opcode_specs()[op].name;

  for (int i = 0; i < kCount; ++i) {
    const auto& x = program.instructions[static_cast<std::size_t>(i)];
    auto word = encode(x);
    ASSERT_TRUE(word.ok()) << i << ": " << word.reason();
    auto back = decode(word.value());
    ASSERT_TRUE(back.ok()) << i << ": " << back.reason();
    ASSERT_EQ(back.value(), x) << i << ": " << format_instruction(x);
  }

  auto binary = to_binary(program);
  ASSERT_TRUE(binary.ok()) << binary.reason();
  const Program decoded = from_binary(binary.value(), "random.bin");
  const Program reassembled = assemble(disassemble(decoded), "random.tasm");
  auto binary_again = to_binary(reassembled);
  ASSERT_TRUE(binary_again.ok());
  EXPECT_TRUE(binary_again.value() == binary.value()) << "asm(disasm(bin)) != bin";
}

TEST(IsaRoundTrip, every_program_in_the_repository_round_trips) {
  namespace fs = std::filesystem;
  const fs::path root(TESSEL_SOURCE_DIR);
  int programs = 0;
  for (const char* dir : {"tests", "examples", "experiments", "hw", "sim"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (entry.path().extension() != ".tasm") continue;
      SCOPED_TRACE(entry.path().string());
      if (entry.path().string().find("/invalid/") != std::string::npos) continue;
      const Program program = assemble_file(entry.path().string());
      auto binary = to_binary(program);
      ASSERT_TRUE(binary.ok()) << binary.reason();
      const Program again = assemble(disassemble(from_binary(binary.value(), "x.bin")), "x.tasm");
      auto binary_again = to_binary(again);
      ASSERT_TRUE(binary_again.ok());
      EXPECT_TRUE(binary_again.value() == binary.value());
      ++programs;
    }
  }
  EXPECT_GE(programs, 9) << "the microbenchmark suite lives in tests/isa/programs/";
}

}  // namespace
}  // namespace tessel::isa
