// Bounded reads of regular files and safe (atomic, input-preserving) writes: every path option.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::files {

/// Documented input limits (docs/hostile-input.md). A file over its limit is refused with a
/// located error before anything is allocated for it.
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
/// YAML hardware configs, sweep specs, quantization configs, JSON manifests.
inline constexpr std::uint64_t kMaxConfigBytes = 16 * kMiB;
/// ISA programs (.tasm text and .bin), compile.json, schedule/graph text.
inline constexpr std::uint64_t kMaxProgramBytes = 1024 * kMiB;
/// .npy arrays and DRAM images.
inline constexpr std::uint64_t kMaxArrayBytes = 4096 * kMiB;

/// Reads the whole of `path`, which must be a regular file of at most `max_bytes` bytes.
/// A failure's reason is the message alone (the caller's diagnostic names the file): missing or
/// unreadable, a directory, a FIFO, socket or device
/// (/dev/zero, /dev/stdin are refused: they have no bounded size), over the limit, or a read
/// error. The file is opened without blocking, so a FIFO never hangs the open.
Result<std::string> try_read_file(const std::string& path, std::uint64_t max_bytes);

/// try_read_file, throwing tessel::InputError (file, no key) on failure.
std::string read_file(const std::string& path, std::uint64_t max_bytes);
std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::uint64_t max_bytes);

/// Checks that `path` names a regular file of at most `max_bytes` without reading it; returns
/// its size. For readers that map or stream a file themselves.
Result<std::uint64_t> check_regular_file(const std::string& path, std::uint64_t max_bytes);

/// True when `a` and `b` name the same file: the same device and inode when both exist, or
/// the same canonical path (symlinks and '..' resolved) when neither exists; false when only
/// one exists (a name that is no file yet cannot be an input to protect).
bool same_file(const std::string& a, const std::string& b);

/// Fails, naming `output` and the input, when `output` is the same file as one of `inputs`
/// (empty entries are skipped). Run it before reading or computing anything.
Status check_output_distinct(const std::string& output, const std::vector<std::string>& inputs);

/// check_output_distinct, throwing tessel::InputError naming `output`.
void require_output_distinct(const std::string& output, const std::vector<std::string>& inputs);

/// Writes `content` to `path` so that the file is either its old self or completely new:
/// the bytes go to a temporary file beside the target (same directory, so the same file
/// system), are flushed, and the temporary is renamed over the target. Refuses, without
/// changing anything: `path` is the same file as one of `inputs`, `path` is a directory, FIFO
/// or socket, or its directory does not exist. A character device (/dev/null) is written in
/// place. A symlink is followed: its target is replaced and the link kept. Throws
/// tessel::InputError naming `path`.
void write_file(const std::string& path, std::string_view content,
                const std::vector<std::string>& inputs = {});
void write_file(const std::string& path, std::span<const std::uint8_t> content,
                const std::vector<std::string>& inputs = {});

/// Creates the folder `path` (and its parents) unless it exists; throws tessel::InputError
/// naming `path` when it is something other than a folder or cannot be created.
void make_directory(const std::string& path);

/// FNV-1a 64-bit of `content`, as 16 hex digits (manifests of multi-file outputs).
std::string content_hash(std::string_view content);

/// The size and content_hash of a regular file, read in chunks (nothing held in memory).
struct FileDigest {
  std::uint64_t bytes = 0;
  std::string fnv1a64;
};
Result<FileDigest> digest_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace tessel::files
