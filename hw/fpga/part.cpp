// FPGA part validation and resolution of the part and clock from a config.
#include "hw/fpga/part.hpp"

#include <cctype>

namespace tessel::fpga {
namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_lower_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z');
}

}  // namespace

std::string_view to_string(TargetSource source) {
  switch (source) {
    case TargetSource::kCommandLine:
      return "command line";
    case TargetSource::kConfig:
      return "config";
    case TargetSource::kDefault:
      return "default";
  }
  return "default";
}

double FpgaTarget::clock_period_ns() const {
  return 1000.0 / clock_mhz;
}

Status check_part(std::string_view part) {
  const std::string quoted = "part '" + std::string(part) + "'";
  if (part.substr(0, 3) != "xc7") {
    return fail(quoted + ": not a 7-series part (expected xc7a/xc7k/xc7v/xc7z/xc7s..., e.g. " +
                std::string(kDefaultPart) + "); the Yosys step is synth_xilinx -family xc7");
  }
  if (part.size() < 4 || std::string_view("akvzs").find(part[3]) == std::string_view::npos) {
    return fail(quoted + ": unknown 7-series family letter after 'xc7' (expected a, k, v, z or s)");
  }
  std::size_t i = 4;
  while (i < part.size() && (part[i] == 'x' || part[i] == 'h')) ++i;  // Virtex-7 xc7vx, xc7vh
  const std::size_t digits_begin = i;
  while (i < part.size() && is_digit(part[i])) ++i;
  if (i == digits_begin)
    return fail(quoted + ": no device size after '" + std::string(part.substr(0, i)) +
                "' (e.g. xc7a100t)");
  const std::size_t dash = part.find('-', i);
  if (dash == std::string_view::npos || dash + 1 >= part.size()) {
    return fail(quoted + ": no speed grade (Vivado needs the full name, e.g. " +
                std::string(part.substr(0, dash)) + "-1)");
  }
  for (std::size_t k = i; k < part.size(); ++k) {
    if (k != dash && !is_lower_alnum(part[k])) {
      return fail(quoted + ": character '" + std::string(1, part[k]) +
                  "' (Vivado part names are lower-case letters, digits and one '-')");
    }
  }
  if (!is_digit(part[dash + 1])) {
    return fail(quoted + ": speed grade must start with a digit (e.g. -1, -2, -1L)");
  }
  return {};
}

Result<FpgaTarget> resolve_target(const HwConfig& config,
                                  const std::optional<std::string>& part_override) {
  FpgaTarget target;
  target.yosys_family = "xc7";
  if (part_override) {
    target.part = *part_override;
    target.part_source = TargetSource::kCommandLine;
  } else if (config.fpga) {
    target.part = config.fpga->part;
    target.part_source = TargetSource::kConfig;
  } else {
    target.part = std::string(kDefaultPart);
    target.part_source = TargetSource::kDefault;
  }
  if (auto status = check_part(target.part); !status) {
    const std::string origin = target.part_source == TargetSource::kCommandLine ? "--part"
                               : target.part_source == TargetSource::kConfig
                                   ? config.name + ": fpga.part"
                                   : "default part";
    return fail(origin + ": " + status.reason());
  }
  if (config.fpga) {
    target.clock_mhz = config.fpga->clock_mhz;
    target.clock_key = "fpga.clock_mhz";
  } else {
    target.clock_mhz = config.clock_mhz;
    target.clock_key = "clock_mhz";
  }
  return target;
}

}  // namespace tessel::fpga
