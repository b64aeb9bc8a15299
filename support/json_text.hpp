// JSON text for reports: invalid UTF-8 (a Latin-1 file name, a config description) is replaced,
// never an exception that aborts the writer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessel {

/// j.dump(indent) with every invalid UTF-8 sequence replaced by U+FFFD (nlohmann's default
/// throws type_error 316, which aborted commands whose input names were not UTF-8).
/// indent < 0 gives one line. A template, so that an ordered_json keeps its key order (a
/// conversion to nlohmann::json would sort the keys, and change content hashes).
template <class Json>
std::string json_text(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace tessel
