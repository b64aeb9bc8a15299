// libFuzzer target: the .bin reader and the instruction decoder on arbitrary bytes.
// Invariants: no crash; anything accepted re-encodes to the same bytes, except that a binary of
// an older readable ISA version is written back as the current version (docs/isa.md: a newer
// version only adds opcodes, so the instruction words are unchanged).
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "isa/program.hpp"
#include "support/diagnostic.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessel::isa;
  // Every 32-byte window as a bare instruction word.
  for (std::size_t at = 0; at + kInstructionBytes <= size; at += kInstructionBytes) {
    Word word;
    std::copy(data + at, data + at + kInstructionBytes, word.begin());
    auto decoded = decode(word);
    if (!decoded) continue;
    auto again = encode(decoded.value());
    if (!again || again.value() != word) std::abort();  // decode accepted a non-canonical word
  }
  // The whole input as a .bin file.
  try {
    const std::span<const std::uint8_t> bytes(data, size);
    const Program program = from_binary(bytes, "fuzz.bin");
    auto binary = to_binary(program);
    if (!binary || binary.value().size() != size) std::abort();
    std::vector<std::uint8_t> expected(data, data + size);
    expected[4] = static_cast<std::uint8_t>(kIsaVersion);  // the version field, little-endian
    expected[5] = static_cast<std::uint8_t>(kIsaVersion >> 8);
    if (binary.value() != expected) std::abort();
  } catch (const tessel::InputError&) {
  }
  return 0;
}
