// The .bin file format: a 16-byte header and 32-byte instruction words.
#include "isa/program.hpp"

#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel::isa {
namespace {

void put_u16(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  put_u16(out, v & 0xffff);
  put_u16(out, v >> 16);
}

std::uint32_t get_u16(std::span<const std::uint8_t> b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8;
}

std::uint32_t get_u32(std::span<const std::uint8_t> b, std::size_t at) {
  return get_u16(b, at) | get_u16(b, at + 2) << 16;
}

}  // namespace

Result<std::vector<std::uint8_t>> to_binary(const Program& program) {
  std::vector<std::uint8_t> out;
  out.reserve(kBinaryHeaderBytes + program.instructions.size() * kInstructionBytes);
  put_u32(out, kBinaryMagic);
  put_u16(out, kIsaVersion);
  put_u16(out, kInstructionBytes);
  put_u32(out, static_cast<std::uint32_t>(program.instructions.size()));
  put_u32(out, 0);
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    auto word = encode(program.instructions[i]);
    if (!word) return fail("instruction " + std::to_string(i) + ": " + word.reason());
    out.insert(out.end(), word.value().begin(), word.value().end());
  }
  return out;
}

Program from_binary(std::span<const std::uint8_t> bytes, const std::string& file) {
  const SourceLocation where{file, 0, 0};
  if (bytes.size() < kBinaryHeaderBytes)
    throw_input_error(
        where, "header",
        "file has " + std::to_string(bytes.size()) + " bytes, fewer than the 16-byte header");
  if (get_u32(bytes, 0) != kBinaryMagic)
    throw_input_error(where, "header", "bad magic (not a Tessel ISA binary; expected 'TISA')");
  if (const auto version = get_u16(bytes, 4);
      version < kIsaMinReadableVersion || version > kIsaVersion)
    throw_input_error(where, "header",
                      "ISA version " + std::to_string(version) + ", this build reads versions " +
                          std::to_string(kIsaMinReadableVersion) + " to " +
                          std::to_string(kIsaVersion));
  if (const auto size = get_u16(bytes, 6); size != kInstructionBytes)
    throw_input_error(where, "header",
                      "instruction size " + std::to_string(size) + " bytes, expected " +
                          std::to_string(kInstructionBytes));
  if (const auto reserved = get_u32(bytes, 12); reserved != 0)
    throw_input_error(where, "header", "reserved header word is not 0");
  const std::uint64_t count = get_u32(bytes, 8);
  const std::uint64_t expected = kBinaryHeaderBytes + count * kInstructionBytes;
  if (bytes.size() != expected)
    throw_input_error(where, "header",
                      "header says " + std::to_string(count) + " instructions (" +
                          std::to_string(expected) + " bytes) but the file has " +
                          std::to_string(bytes.size()) + " bytes");
  Program program;
  program.instructions.reserve(count);
  std::vector<Diagnostic> problems;
  for (std::size_t i = 0; i < count; ++i) {
    Word word;
    const auto begin =
        bytes.begin() + static_cast<std::ptrdiff_t>(kBinaryHeaderBytes + i * kInstructionBytes);
    std::copy(begin, begin + kInstructionBytes, word.begin());
    auto decoded = decode(word);
    if (!decoded) {
      problems.push_back({where, "instruction " + std::to_string(i), decoded.reason()});
      continue;
    }
    program.instructions.push_back(std::move(decoded).value());
  }
  if (!problems.empty()) throw InputError(std::move(problems));
  return program;
}

Program read_binary_file(const std::string& path) {
  return from_binary(files::read_file_bytes(path, files::kMaxProgramBytes), path);
}

void write_binary_file(const Program& program, const std::string& path,
                       const std::vector<std::string>& inputs) {
  auto bytes = to_binary(program);
  if (!bytes) throw_input_error({path, 0, 0}, "", bytes.reason());
  files::write_file(path, std::span<const std::uint8_t>(bytes.value()), inputs);
}

}  // namespace tessel::isa
