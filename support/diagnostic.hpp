// Located diagnostics and the one exception type thrown at input boundaries.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel {

/// Where in an input a problem is. line/column are 1-based; 0 means unknown.
/// `detail` carries a non-textual position (an ONNX node, an instruction index, a byte offset).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col", "file:line" or "file" depending on what is known.
  std::string str() const;
};

/// One problem found in an input: `FILE:LINE:COL: error: <key path>: <message>`.
struct Diagnostic {
  SourceLocation location;
  std::string key_path;  ///< e.g. "scratchpads[1].size"; empty when not keyed
  std::string message;

  std::string str() const;
};

/// Thrown only where input enters Tessel (YAML, ONNX, binaries, .npy, .tasm); carries every
/// diagnostic found, so a caller can print them all. Library code below the boundary returns
/// Result values instead.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostic diagnostic);
  explicit InputError(std::vector<Diagnostic> diagnostics);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Convenience: throw an InputError for one located problem.
[[noreturn]] void throw_input_error(SourceLocation location, std::string key_path,
                                    std::string message);

}  // namespace tessel
