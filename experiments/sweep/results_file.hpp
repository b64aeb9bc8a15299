// An append-only JSONL results file that survives kill -9: whole-line appends, torn-tail repair.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "support/result.hpp"

namespace tessel::sweep {

/// A results file open for appending, one JSON object per line, each carrying an "id".
///
/// Crash safety: every line is one write(2) of the whole line on an O_APPEND descriptor, so a
/// killed writer leaves at worst one torn last line; `open` cuts such a tail away (and says so),
/// so every line in the file is complete. `sync()` (fdatasync) bounds what a power loss can take.
/// An exclusive flock keeps a second sweep from appending to the same file at the same time.
class ResultsFile {
 public:
  /// Opens (creating if missing) and recovers `path`. Fails when the file is locked by another
  /// sweep, or when a line other than the last is not a JSON object with a string "id"
  /// (`FILE:LINE: ...`): such damage is not a torn append and is left for a human to look at.
  static Result<ResultsFile> open(const std::filesystem::path& path);

  ResultsFile(ResultsFile&& other) noexcept;
  ResultsFile& operator=(ResultsFile&&) = delete;
  ResultsFile(const ResultsFile&) = delete;
  ~ResultsFile();

  /// Ids of the complete lines already in the file.
  const std::unordered_set<std::string>& completed_ids() const { return completed_ids_; }
  /// Complete lines found on open.
  std::size_t existing_lines() const { return existing_lines_; }
  /// Bytes of a torn last line cut away on open (0 when the file ended cleanly).
  std::size_t torn_bytes_dropped() const { return torn_bytes_dropped_; }

  /// Appends `line` (no newline inside) plus '\n' in a single write(2). Thread-safe.
  Status append(std::string_view line);
  /// fdatasync: completed lines survive a power loss.
  Status sync();

 private:
  ResultsFile(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
  std::unordered_set<std::string> completed_ids_;
  std::size_t existing_lines_ = 0;
  std::size_t torn_bytes_dropped_ = 0;
};

}  // namespace tessel::sweep

namespace tessel::sweep {

/// One complete line of a results file and the fields the merge needs.
struct ResultsLine {
  std::string id;
  std::string text;  ///< the line as written, without the newline
};

/// Reads the complete lines of a results file without locking or repairing it (a writer may be
/// appending): a torn last line is ignored, an unreadable middle line is a failure (FILE:LINE).
/// A missing file is a failure too; callers check existence first where that is normal.
Result<std::vector<ResultsLine>> read_results(const std::filesystem::path& path);

}  // namespace tessel::sweep
