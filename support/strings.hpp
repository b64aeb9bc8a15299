// Small string utilities: edit distance and "did you mean" suggestions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a likely misspelling
/// (distance <= max(1, size/3)); ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// "; did you mean 'x'?" or "" when there is no close candidate.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// `text` with every byte that does not start or continue a valid UTF-8 sequence (overlong
/// forms, surrogates and code points past U+10FFFF included) replaced by U+FFFD, one per bad
/// byte; valid text comes back unchanged. For free text read from files (a config's
/// description), so that what Tessel writes back (YAML, JSON) reads back the same.
std::string to_valid_utf8(std::string_view text);

/// `text` without its leading and trailing white space (std::isspace).
std::string_view trim(std::string_view text);

/// The shortest text that reads back as the same double ("100", "390.625", "1e-05").
std::string shortest_text(double value);

}  // namespace tessel
