// Bounded reads of regular files and atomic, input-preserving writes (POSIX underneath).
#include "support/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "support/diagnostic.hpp"

namespace tessel::files {
namespace {

namespace fs = std::filesystem;

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string size_text(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes";
}

std::string errno_text(int error) {
  return std::strerror(error);
}

/// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

/// Removes `PREFIX<pid>-<n>` files in `folder` left by writers that were killed (their pid is
/// no live process): the temporaries of one target, after that target was written again. A
/// live writer's temporary (this process's included) is kept; so is anything else.
void remove_stale_temporaries(const fs::path& folder, const std::string& prefix) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size()) continue;
    if (rest.find_first_not_of("0123456789-") != std::string::npos) continue;
    if (rest.find('-', dash + 1) != std::string::npos || dash > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    if (it->is_regular_file(ignored)) fs::remove(it->path(), ignored);
  }
}

// The reason carries the message only; callers put the file into their diagnostic.
Failure refuse(const std::string& /*path*/, const std::string& message) {
  return fail(message);
}

Result<std::uint64_t> check_stat(const std::string& path, const struct stat& st,
                                 std::uint64_t max_bytes) {
  if (!S_ISREG(st.st_mode))
    return refuse(path, "is " + kind_of(st.st_mode) + ", expected a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    return refuse(path, "the file has " + size_text(size) + ", over the limit of " +
                            size_text(max_bytes) + " for this kind of input");
  return size;
}

void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_input_error({path, 0, 0}, "", "write failed: " + errno_text(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string weak_canonical(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : canonical.string();
}

}  // namespace

Result<std::string> try_read_file(const std::string& path, std::uint64_t max_bytes) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return refuse(path, "cannot open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refuse(path, "cannot stat: " + errno_text(errno));
  auto size = check_stat(path, st, max_bytes);
  if (!size) return size.failure();
  // Regular files do not block; clear O_NONBLOCK anyway so a short read means end of file.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  std::string content;
  content.resize(static_cast<std::size_t>(size.value()));
  std::size_t filled = 0;
  while (true) {
    if (filled == content.size()) {
      // The file may have grown since fstat: read on, but never past the limit.
      if (content.size() >= max_bytes + 1) break;
      content.resize(std::min<std::uint64_t>(max_bytes + 1, content.size() + 65536));
    }
    const ssize_t n = ::read(fd.get(), content.data() + filled, content.size() - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      return refuse(path, "read failed: " + errno_text(errno));
    }
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  if (filled > max_bytes)
    return refuse(path,
                  "the file grew past the limit of " + size_text(max_bytes) + " while it was read");
  content.resize(filled);
  return content;
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  auto content = try_read_file(path, max_bytes);
  if (!content) throw_input_error({path, 0, 0}, "", content.reason());
  return std::move(content).value();
}

std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  const std::string content = read_file(path, max_bytes);
  return {content.begin(), content.end()};
}

Result<std::uint64_t> check_regular_file(const std::string& path, std::uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return refuse(path, "cannot open: " + errno_text(errno));
  return check_stat(path, st, max_bytes);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0;
  const bool b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  // A name that is no file yet (a zoo model name, an output still to be made) is no input to
  // protect; two such names are the same when their canonical paths are.
  if (a_exists != b_exists) return false;
  return weak_canonical(a) == weak_canonical(b);
}

Status check_output_distinct(const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty()) return {};
  for (const auto& input : inputs) {
    if (input.empty()) continue;
    if (same_file(output, input))
      return refuse(output, "the output is the same file as the input '" + input +
                                "'; refusing to overwrite an input (choose another output path)");
  }
  return {};
}

void require_output_distinct(const std::string& output, const std::vector<std::string>& inputs) {
  const Status status = check_output_distinct(output, inputs);
  if (!status) throw_input_error({output, 0, 0}, "", status.reason());
}

void write_file(const std::string& path, std::string_view content,
                const std::vector<std::string>& inputs) {
  if (path.empty()) throw_input_error({"<output>", 0, 0}, "", "empty output path");
  require_output_distinct(path, inputs);
  struct stat st {};
  std::string target = path;
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed) {
    if (S_ISCHR(st.st_mode)) {  // /dev/null and the like: written in place, never replaced
      const Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
      if (fd.get() < 0) throw_input_error({path, 0, 0}, "", "cannot open: " + errno_text(errno));
      write_all(fd.get(), content.data(), content.size(), path);
      return;
    }
    if (!S_ISREG(st.st_mode))
      throw_input_error({path, 0, 0}, "",
                        "is " + kind_of(st.st_mode) + "; refusing to write over it");
    target = weak_canonical(path);  // keep a symlink: replace what it points to
  }
  const fs::path parent =
      fs::path(target).parent_path().empty() ? fs::path(".") : fs::path(target).parent_path();
  const std::string prefix = "." + fs::path(target).filename().string() + ".tmp-";
  // The bytes go first to an unnamed file (O_TMPFILE): a kill while writing leaves nothing.
  // Only once complete is it linked under a temporary name and renamed over the target, so a
  // kill can leave a temporary only in the instant between those two calls. File systems
  // without O_TMPFILE get a named temporary from the start.
  static std::atomic<unsigned> counter{0};
  auto temporary_name = [&] {
    return (parent / (prefix + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
        .string();
  };
  std::string temporary;
  // Linking an unnamed file needs /proc (linkat of /proc/self/fd/N).
  static const bool have_proc = ::access("/proc/self/fd", X_OK) == 0;
  int raw = have_proc ? ::open(parent.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666) : -1;
  const bool unnamed = raw >= 0;
  // O_EXCL with mode 0666 so the umask applies as for any new file; a counter and the pid
  // keep concurrent writers (threads of a sweep, parallel processes) apart.
  for (int attempt = 0; attempt < 100 && raw < 0; ++attempt) {
    temporary = temporary_name();
    raw = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0)
    throw_input_error(
        {path, 0, 0}, "",
        "cannot create a temporary file in '" + parent.string() + "': " + errno_text(errno));
  Fd fd(raw);
  try {
    if (existed) ::fchmod(fd.get(), st.st_mode & 07777);  // keep the replaced file's mode
    write_all(fd.get(), content.data(), content.size(), path);
    if (::fsync(fd.get()) != 0)
      throw_input_error({path, 0, 0}, "", "cannot flush: " + errno_text(errno));
    if (unnamed) {
      const std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
      for (int attempt = 0; attempt < 100; ++attempt) {
        temporary = temporary_name();
        if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temporary.c_str(), AT_SYMLINK_FOLLOW) == 0)
          break;
        if (errno != EEXIST)
          throw_input_error({path, 0, 0}, "", "cannot link the new file: " + errno_text(errno));
        temporary.clear();
      }
      if (temporary.empty())
        throw_input_error({path, 0, 0}, "", "cannot link the new file: no free temporary name");
    }
    if (::close(fd.release()) != 0)
      throw_input_error({path, 0, 0}, "", "cannot close: " + errno_text(errno));
    if (::rename(temporary.c_str(), target.c_str()) != 0)
      throw_input_error({path, 0, 0}, "", "cannot replace the file: " + errno_text(errno));
  } catch (...) {
    if (!temporary.empty()) ::unlink(temporary.c_str());
    throw;
  }
  remove_stale_temporaries(parent, prefix);
}

void write_file(const std::string& path, std::span<const std::uint8_t> content,
                const std::vector<std::string>& inputs) {
  write_file(path, std::string_view(reinterpret_cast<const char*>(content.data()), content.size()),
             inputs);
}

void make_directory(const std::string& path) {
  if (path.empty()) throw_input_error({"<output>", 0, 0}, "", "empty output folder path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw_input_error({path, 0, 0}, "",
                        "is " + kind_of(st.st_mode) + ", expected a folder (or a new name)");
    return;
  }
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw_input_error({path, 0, 0}, "", "cannot create the folder: " + ec.message());
}

namespace {
constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
std::uint64_t fnv1a(std::uint64_t hash, std::string_view content) {
  for (const char c : content) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}
std::string hex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}
}  // namespace

std::string content_hash(std::string_view content) {
  return hex(fnv1a(kFnvOffset, content));
}

Result<FileDigest> digest_file(const std::string& path, std::uint64_t max_bytes) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return refuse(path, "cannot open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refuse(path, "cannot stat: " + errno_text(errno));
  if (auto size = check_stat(path, st, max_bytes); !size) return size.failure();
  std::uint64_t hash = kFnvOffset, total = 0;
  std::string chunk(1 << 20, '\0');
  while (true) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return refuse(path, "read failed: " + errno_text(errno));
    }
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (total > max_bytes) return refuse(path, "the file grew past the limit while it was read");
    hash = fnv1a(hash, std::string_view(chunk.data(), static_cast<std::size_t>(n)));
  }
  return FileDigest{total, hex(hash)};
}

}  // namespace tessel::files
