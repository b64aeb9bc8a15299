// ResultsFile: open + flock + torn-tail recovery, single-write appends, fdatasync.
#include "experiments/sweep/results_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/files.hpp"

namespace tessel::sweep {
namespace {

std::string errno_text(const std::string& what, const std::filesystem::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

}  // namespace

Result<ResultsFile> ResultsFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno_text("cannot open", path));
  ResultsFile file(fd, path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return fail(path.string() + " is being written by another sweep (it holds the file's lock)");
  }

  struct stat info {};
  if (fstat(fd, &info) != 0) return fail(errno_text("cannot stat", path));
  if (!S_ISREG(info.st_mode)) return fail(path.string() + ": not a regular file");
  if (static_cast<std::uint64_t>(info.st_size) > files::kMaxProgramBytes)
    return fail(path.string() + ": " + std::to_string(info.st_size) + " bytes, over the limit of " +
                std::to_string(files::kMaxProgramBytes) + " bytes for a results file");
  std::string text(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(errno_text("cannot read", path));
    got += static_cast<std::size_t>(n);
  }

  // Every complete line is checked before anything is cut: a file that is not a results file
  // is refused unchanged (it once lost its last line first).
  const std::size_t last_newline = text.rfind('\n');
  const std::size_t complete_size = last_newline == std::string::npos ? 0 : last_newline + 1;
  std::size_t begin = 0;
  for (std::size_t line_number = 1; begin < complete_size; ++line_number) {
    const std::size_t end = text.find('\n', begin);
    const std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object() || !object.contains("id") || !object["id"].is_string()) {
      return fail(path.string() + ":" + std::to_string(line_number) +
                  ": not a results line (a JSON object with a string \"id\"); only a torn last "
                  "line is repaired automatically");
    }
    file.completed_ids_.insert(object["id"].get<std::string>());
    ++file.existing_lines_;
  }

  // A torn append can only be the last line, and it begins as every results line does
  // ({"id":"...); anything else after the last newline is not ours to cut.
  if (complete_size < text.size()) {
    constexpr std::string_view kLineStart = "{\"id\":\"";
    const std::string_view tail(text.data() + complete_size, text.size() - complete_size);
    const std::size_t compared = std::min(tail.size(), kLineStart.size());
    if (tail.substr(0, compared) != kLineStart.substr(0, compared))
      return fail(path.string() + ":" + std::to_string(file.existing_lines_ + 1) +
                  ": not a results line, and not the torn start of one; refusing to cut it");
    if (ftruncate(fd, static_cast<off_t>(complete_size)) != 0)
      return fail(errno_text("cannot truncate", path));
    if (fdatasync(fd) != 0) return fail(errno_text("cannot sync", path));
    file.torn_bytes_dropped_ = text.size() - complete_size;
  }
  return file;
}

ResultsFile::ResultsFile(ResultsFile&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      completed_ids_(std::move(other.completed_ids_)),
      existing_lines_(other.existing_lines_),
      torn_bytes_dropped_(other.torn_bytes_dropped_) {
  other.fd_ = -1;
}

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) {
    fdatasync(fd_);
    close(fd_);  // releases the flock
  }
}

Status ResultsFile::append(std::string_view line) {
  std::string whole;
  whole.reserve(line.size() + 1);
  whole.append(line);
  whole.push_back('\n');
  for (;;) {
    const ssize_t written = write(fd_, whole.data(), whole.size());
    if (written == static_cast<ssize_t>(whole.size())) return {};
    if (written < 0 && errno == EINTR) continue;  // nothing was written; retry the whole line
    if (written < 0) return fail(errno_text("cannot append to", path_));
    // A short write (disk full) leaves a torn line; the next open cuts it away.
    return fail("short write to " + path_.string() + " (disk full?)");
  }
}

Status ResultsFile::sync() {
  if (fdatasync(fd_) != 0) return fail(errno_text("cannot sync", path_));
  return {};
}

}  // namespace tessel::sweep

namespace tessel::sweep {

Result<std::vector<ResultsLine>> read_results(const std::filesystem::path& path) {
  auto content = files::try_read_file(path.string(), files::kMaxProgramBytes);
  if (!content) return fail(path.string() + ": " + content.reason());
  const std::string& text = content.value();
  std::vector<ResultsLine> lines;
  std::size_t begin = 0;
  for (std::size_t line_number = 1;; ++line_number) {
    const std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;  // the rest, if any, is a torn last line
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object() || !object.contains("id") || !object["id"].is_string()) {
      return fail(path.string() + ":" + std::to_string(line_number) +
                  ": not a results line (a JSON object with a string \"id\")");
    }
    lines.push_back({object["id"].get<std::string>(), std::move(line)});
  }
  return lines;
}

}  // namespace tessel::sweep
