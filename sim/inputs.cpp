// Program, DRAM image and run-folder readers for the simulator.
#include "sim/inputs.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "isa/assembler.hpp"
#include "isa/program.hpp"
#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel::sim {
namespace {

std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  // One read of the whole regular file (the 63 MB image of ResNet-50 byte by byte was 8% of a
  // full simulation); pipes, devices and folders are refused (support/files.hpp).
  return files::read_file_bytes(path, max_bytes);
}

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = files::read_file(path, files::kMaxProgramBytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error({path, 0, 0}, "", std::string("invalid JSON: ") + e.what());
  }
}

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

std::uint16_t le16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<isa::Word> read_program_words(const std::string& path, const HwConfig* config) {
  if (ends_with(path, ".tasm")) {
    isa::AssembleOptions options;
    isa::TargetInfo target;
    if (config) {
      target = target_info(*config);
      options.target = &target;
    }
    const isa::Program program = isa::assemble_file(path, options);
    std::vector<isa::Word> words;
    words.reserve(program.instructions.size());
    for (std::size_t i = 0; i < program.instructions.size(); ++i) {
      auto word = isa::encode(program.instructions[i]);
      if (!word.ok())
        throw_input_error({path, 0, 0}, "instruction " + std::to_string(i), word.reason());
      words.push_back(word.value());
    }
    return words;
  }
  const std::vector<std::uint8_t> bytes = read_file_bytes(path, files::kMaxProgramBytes);
  if (bytes.size() < isa::kBinaryHeaderBytes || le32(bytes.data()) != isa::kBinaryMagic)
    throw_input_error({path, 0, 0}, "header", "not a Tessel program (no 'TISA' magic)");
  if (const auto version = le16(bytes.data() + 4);
      version < isa::kIsaMinReadableVersion || version > isa::kIsaVersion)
    throw_input_error({path, 0, 0}, "header.version",
                      "ISA version " + std::to_string(version) + ", expected " +
                          std::to_string(isa::kIsaMinReadableVersion) + " to " +
                          std::to_string(isa::kIsaVersion));
  if (le16(bytes.data() + 6) != isa::kInstructionBytes)
    throw_input_error({path, 0, 0}, "header.instruction_bytes",
                      std::to_string(le16(bytes.data() + 6)) + ", expected " +
                          std::to_string(isa::kInstructionBytes));
  const std::uint64_t count = le32(bytes.data() + 8);
  if (bytes.size() != isa::kBinaryHeaderBytes + count * isa::kInstructionBytes)
    throw_input_error({path, 0, 0}, "header.count",
                      std::to_string(count) + " instructions need " +
                          std::to_string(isa::kBinaryHeaderBytes + count * isa::kInstructionBytes) +
                          " bytes, the file has " + std::to_string(bytes.size()));
  std::vector<isa::Word> words(count);
  for (std::uint64_t i = 0; i < count; ++i)
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(isa::kBinaryHeaderBytes +
                                                            i * isa::kInstructionBytes),
                isa::kInstructionBytes, words[i].begin());
  return words;
}

DramImage read_dram_image(const std::string& path, bool read_contents, std::uint64_t size_bytes) {
  DramImage image;
  if (size_bytes > files::kMaxArrayBytes)
    throw_input_error({path, 0, 0}, "--dram-size",
                      std::to_string(size_bytes) + " bytes is over the limit of " +
                          std::to_string(files::kMaxArrayBytes) + " bytes for a DRAM image");
  if (read_contents) {
    image.bytes = read_file_bytes(path, files::kMaxArrayBytes);
    image.size_bytes = image.bytes.size();
  } else {
    auto size = files::check_regular_file(path, files::kMaxArrayBytes);
    if (!size) throw_input_error({path, 0, 0}, "", size.reason());
    image.size_bytes = size.value();
  }
  if (size_bytes > image.size_bytes) {
    image.size_bytes = size_bytes;
    if (read_contents) image.bytes.resize(size_bytes, 0);
  }
  return image;
}

RunFolder read_run_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  const fs::path root(folder);
  RunFolder run;
  const fs::path manifest = root / "manifest.json";
  nlohmann::json names = nlohmann::json::object();
  verify_compile_folder(folder);
  if (fs::exists(manifest)) names = read_json_file(manifest.string());
  auto pick = [&](const char* key, std::vector<const char*> defaults) -> std::string {
    if (names.contains(key) && names[key].is_string())
      return (root / names[key].get<std::string>()).string();
    for (const char* name : defaults)
      if (fs::exists(root / name)) return (root / name).string();
    return "";
  };
  run.program = pick("program", {"program.bin", "program.tasm"});
  run.dram = pick("dram", {"dram.bin"});
  run.hw = pick("hw", {"hw.yaml"});
  if (run.program.empty())
    throw_input_error({folder, 0, 0}, "program", "the folder has no program.bin or program.tasm");
  return run;
}

namespace {

/// Every file a marker lists (`files`: name -> {bytes, fnv1a64}, the format of compile.json and
/// fpga.json) is there with that size and hash. `subfolders`: names may hold '/' (fpga.json
/// lists rtl/NAME), never an absolute path or a '..' or '.' component.
void verify_listed_files(const std::filesystem::path& root, const std::string& marker_path,
                         const nlohmann::json& listed, bool subfolders) {
  namespace fs = std::filesystem;
  const std::string marker = fs::path(marker_path).filename().string();
  if (!listed.is_object()) throw_input_error({marker_path, 0, 0}, "files", "expected an object");
  std::error_code ec;
  for (const auto& [name, entry] : listed.items()) {
    const std::string key = "files." + name;
    bool plain =
        !name.empty() && name.front() != '/' && (subfolders || name.find('/') == std::string::npos);
    for (const auto& part : fs::path(name))
      plain = plain && part != "." && part != ".." && !part.empty();
    if (!plain)
      throw_input_error(
          {marker_path, 0, 0}, key,
          subfolders ? "not a relative path inside the folder" : "not a plain file name");
    if (!entry.is_object() || !entry.contains("bytes") || !entry["bytes"].is_number_unsigned() ||
        !entry.contains("fnv1a64") || !entry["fnv1a64"].is_string())
      throw_input_error({marker_path, 0, 0}, key, "expected {\"bytes\": N, \"fnv1a64\": HEX}");
    const std::string path = (root / name).string();
    if (!fs::exists(path, ec))
      throw_input_error({path, 0, 0}, "",
                        "missing: " + marker + " lists it; the folder is incomplete");
    auto digest = files::digest_file(path, files::kMaxArrayBytes);
    if (!digest) throw_input_error({path, 0, 0}, "", digest.reason());
    const auto bytes = entry["bytes"].get<std::uint64_t>();
    if (digest.value().bytes != bytes || digest.value().fnv1a64 != entry["fnv1a64"])
      throw_input_error({path, 0, 0}, "",
                        "does not match " + marker + " (" + std::to_string(digest.value().bytes) +
                            " bytes, FNV-1a " + digest.value().fnv1a64 +
                            "; listed: " + std::to_string(bytes) + " bytes, " +
                            entry["fnv1a64"].get<std::string>() +
                            "): the folder mixes files of two runs or was edited; run again");
  }
}

/// A multi-file output's completion marker: written last, it lists the folder's files. A folder
/// with one of `signs` but no marker is an interrupted run.
struct MarkerRule {
  const char* marker;
  std::vector<const char*> signs;
  const char* incomplete;  ///< the error for a missing marker
  bool subfolders;         ///< listed names may hold '/'
  bool files_required;     ///< a marker without "files" is refused (else: an older folder, passed)
};

void verify_marker(const std::filesystem::path& root, const MarkerRule& rule) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string marker_path = (root / rule.marker).string();
  if (!fs::exists(marker_path, ec)) {
    for (const char* sign : rule.signs)
      if (fs::exists(root / sign, ec)) throw_input_error({marker_path, 0, 0}, "", rule.incomplete);
    return;
  }
  const nlohmann::json marker = read_json_file(marker_path);
  if (!marker.is_object() || !marker.contains("files")) {
    if (!rule.files_required) return;
    throw_input_error({marker_path, 0, 0}, "files",
                      std::string("missing: ") + rule.marker + " lists no files");
  }
  verify_listed_files(root, marker_path, marker.at("files"), rule.subfolders);
}

}  // namespace

void verify_compile_folder(const std::string& folder) {
  // hw/fpga/flow.cpp writes fpga.json after the program; codegen writes compile.json last.
  static const MarkerRule kFpga{
      "fpga.json",
      {"synth.ys", "vivado.tcl"},
      "missing: the folder is an incomplete `tessel fpga` run (synth.ys or vivado.tcl is there, "
      "fpga.json, written after the program, is not); run `tessel fpga` again",
      true,
      true};
  static const MarkerRule kCompile{
      "compile.json",
      {"schedule.json"},
      "missing: the folder is an incomplete compile (schedule.json is there, compile.json, "
      "written last, is not; was `tessel compile` interrupted?); compile again",
      false,
      false};
  const std::filesystem::path root(folder);
  verify_marker(root, kFpga);
  verify_marker(root, kCompile);
}

}  // namespace tessel::sim
