// The FPGA implementation target of a config: part name, Yosys family and clock constraint.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "configs/hw_config.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// The part used when neither `--part` nor the config's `fpga.part` names one: the Artix-7
/// 100T of the Arty A7-100 and Nexys A7 boards, a common 7-series evaluation target.
inline constexpr std::string_view kDefaultPart = "xc7a100tcsg324-1";

/// Where a value of an FpgaTarget came from (reported in resources.json and the scripts).
enum class TargetSource { kCommandLine, kConfig, kDefault };

/// "command line", "config" or "default".
std::string_view to_string(TargetSource source);

/// Everything the flow needs to know about the device and clock.
struct FpgaTarget {
  std::string part;          ///< full Vivado part name, e.g. "xc7z020clg400-1"
  std::string yosys_family;  ///< `synth_xilinx -family` value; "xc7" for every accepted part
  double clock_mhz = 0;      ///< synthesis clock target (the XDC's create_clock)
  TargetSource part_source = TargetSource::kDefault;
  std::string clock_key;  ///< the config key clock_mhz came from: "fpga.clock_mhz" or "clock_mhz"

  /// 1000 / clock_mhz.
  double clock_period_ns() const;
};

/// Checks that `part` names a 7-series device in Vivado's spelling: "xc7" + family letter
/// (a Artix, k Kintex, v Virtex, z Zynq, s Spartan) + size digits + package + "-" + speed
/// grade, e.g. "xc7a100tcsg324-1", "xc7z020clg400-1", "xc7s50csga324-1il". The failure names
/// the part and the rule it breaks. Only 7-series parts are accepted because the flow's Yosys
/// step is `synth_xilinx -family xc7` (UltraScale needs other cell libraries, not checked here).
Status check_part(std::string_view part);

/// The target of `config`: the part is `part_override` when given, else `config.fpga->part`,
/// else kDefaultPart; the clock is `config.fpga->clock_mhz` when the config has an `fpga` key,
/// else the modelled `config.clock_mhz`. Fails when the chosen part fails check_part (naming
/// where it came from).
Result<FpgaTarget> resolve_target(const HwConfig& config,
                                  const std::optional<std::string>& part_override);

}  // namespace tessel::fpga
