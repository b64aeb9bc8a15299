// libFuzzer target: the .tasm assembler on arbitrary text.
// Invariants: no crash; a program that assembles disassembles and reassembles to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "isa/assembler.hpp"
#include "support/diagnostic.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessel::isa;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Program program = assemble(text, "fuzz.tasm");
    const Program again = assemble(disassemble(program), "again.tasm");
    auto a = to_binary(program);
    auto b = to_binary(again);
    if (!a || !b || a.value() != b.value()) std::abort();
  } catch (const tessel::InputError& e) {
    if (e.diagnostics().empty()) std::abort();
  }
  return 0;
}
