// JSON text for reports: invalid UTF-8 (a Latin-1 file name, a config description) is replaced,
// never an exception that aborts the writer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessel {

/// j.dump(indent) with every invalid UTF-8 sequence replaced by U+FFFD (nlohmann's default
/// throws type_error 316, which aborted commands whose input names were not UTF-8).
/// indent < 0 gives one line.
inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tessel
