// libFuzzer target: the YAML hardware-config loader on arbitrary text.
// Invariants: no crash and no exception but a diagnostic list; a config that loads is within
// the documented limits and its canonical YAML loads back to the same config.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "configs/hw_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessel;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const HwConfigCheck check = check_hw_config_text(text, "fuzz.yaml");
  if (!check.ok()) {
    if (check.diagnostics.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const HwConfig& config = *check.config;
  if (config.scratchpads.empty() || config.scratchpads.size() > kMaxScratchpads) std::abort();
  for (const auto& pad : config.scratchpads)
    if (pad.size_bytes <= 0 || pad.size_bytes > kMaxScratchpadBytes) std::abort();
  if (!(config.dram_bytes_per_cycle() >= kMinDramBytesPerCycle)) std::abort();
  auto again = parse_hw_config(to_yaml(config), "canonical.yaml");
  if (!again.ok() || !(again.value() == config)) std::abort();
  return 0;
}
