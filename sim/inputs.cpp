// Program, DRAM image and run-folder readers for the simulator.
#include "sim/inputs.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "isa/assembler.hpp"
#include "isa/program.hpp"
#include "support/diagnostic.hpp"

namespace tessel::sim {
namespace {

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw_input_error({path, 0, 0}, "", "cannot open file");
  // One read of the whole file (the 63 MB image of ResNet-50 byte by byte was 8% of a full
  // simulation); a stream without a size (a pipe) is read as it comes.
  const std::streamsize size = in.tellg();
  if (size < 0) {
    in.clear();
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw_input_error({path, 0, 0}, "", "cannot read file");
  return bytes;
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
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  if (bytes.size() < isa::kBinaryHeaderBytes || le32(bytes.data()) != isa::kBinaryMagic)
    throw_input_error({path, 0, 0}, "header", "not a Tessel program (no 'TISA' magic)");
  if (le16(bytes.data() + 4) != isa::kIsaVersion)
    throw_input_error({path, 0, 0}, "header.version",
                      "ISA version " + std::to_string(le16(bytes.data() + 4)) + ", expected " +
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
  if (read_contents) {
    image.bytes = read_file_bytes(path);
    image.size_bytes = image.bytes.size();
  } else {
    std::error_code error;
    image.size_bytes = std::filesystem::file_size(path, error);
    if (error)
      throw_input_error({path, 0, 0}, "", "cannot read the DRAM image: " + error.message());
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
  if (fs::exists(manifest)) {
    std::ifstream in(manifest);
    try {
      names = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw_input_error({manifest.string(), 0, 0}, "", std::string("invalid JSON: ") + e.what());
    }
  }
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

}  // namespace tessel::sim
