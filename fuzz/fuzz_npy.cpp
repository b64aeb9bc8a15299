// libFuzzer target: the .npy reader on arbitrary bytes.
// Invariants: no crash; an accepted array holds exactly element_count() elements of its dtype
// and serialises back to an array that parses equal.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "support/diagnostic.hpp"
#include "support/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessel;
  try {
    const NpyArray array = parse_npy(std::span(data, size), "fuzz.npy");
    if (array.bytes.size() !=
        static_cast<std::size_t>(array.element_count()) * npy_dtype_size(array.dtype))
      std::abort();
    const auto bytes = serialize_npy(array);
    const NpyArray again = parse_npy(bytes, "again.npy");
    if (again.dtype != array.dtype || again.shape != array.shape || again.bytes != array.bytes)
      std::abort();
    try {
      check_finite(array, "fuzz.npy");
    } catch (const InputError& e) {
      if (e.diagnostics().empty()) std::abort();
    }
  } catch (const InputError& e) {
    if (e.diagnostics().empty()) std::abort();
  }
  return 0;
}
