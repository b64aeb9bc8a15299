// Formatting of located diagnostics.
#include "support/diagnostic.hpp"

#include <utility>

namespace tessel {

std::string SourceLocation::str() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Diagnostic::str() const {
  std::string out = location.str() + ": error: ";
  if (!key_path.empty()) out += key_path + ": ";
  return out + message;
}

namespace {
std::string join_lines(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}
}  // namespace

InputError::InputError(Diagnostic diagnostic)
    : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_lines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void throw_input_error(SourceLocation location, std::string key_path, std::string message) {
  throw InputError(Diagnostic{std::move(location), std::move(key_path), std::move(message)});
}

}  // namespace tessel
