// The zoo matrices' check of a refusal: a model that needs a unit its config lacks is refused
// naming that unit by its config key (issue 36: "where a config lacks a needed unit, the
// refusal names it").
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "configs/hw_config.hpp"

namespace tessel::test_support {

/// The key (`vector.row_normalise`, ...) of the unit that `reason` says `config` lacks, when
/// it reads "... needs ... (KEY: true); config 'NAME' has none" and `config` indeed lacks it;
/// nullopt otherwise (any other failure, or a unit the config has).
inline std::optional<std::string> missing_unit(const std::string& reason, const HwConfig& config) {
  const std::pair<const char*, bool> units[] = {
      {"matrix.activation_operands", config.matrix.activation_operands},
      {"vector.lookup_table", config.vector.lookup_table},
      {"vector.row_reduce", config.vector.row_reduce},
      {"vector.broadcast_multiply", config.vector.broadcast_multiply},
      {"vector.row_normalise", config.vector.row_normalise}};
  if (reason.find("; config '" + config.name + "' has none") == std::string::npos)
    return std::nullopt;
  for (const auto& [key, present] : units)
    if (!present && reason.find("(" + std::string(key) + ": true)") != std::string::npos)
      return std::string(key);
  return std::nullopt;
}

}  // namespace tessel::test_support
