// libFuzzer target: the .bin reader and the instruction decoder on arbitrary bytes.
// Invariants: no crash; anything accepted re-encodes to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <span>

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
    if (!binary ||
        !std::equal(binary.value().begin(), binary.value().end(), bytes.begin(), bytes.end()))
      std::abort();
  } catch (const tessel::InputError&) {
  }
  return 0;
}
