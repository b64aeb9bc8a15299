// libFuzzer target: the ONNX importer on arbitrary bytes (protobuf parsing, graph checks,
// constant folding, every converter). Invariant: an InputError or a graph; never a crash.
#include <cstdint>
#include <string_view>

#include "compiler/frontend/onnx_import.hpp"
#include "support/diagnostic.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    (void)tessel::frontend::import_onnx_bytes(bytes, "fuzz.onnx");
  } catch (const tessel::InputError&) {
  }
  return 0;
}
