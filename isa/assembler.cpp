// Assembler and disassembler of the .tasm text form.
#include "isa/assembler.hpp"

#include <charconv>
#include <sstream>

#include "support/diagnostic.hpp"
#include "support/files.hpp"
#include "support/strings.hpp"

namespace tessel::isa {
namespace {

constexpr std::size_t kMaxDiagnostics = 50;

struct Token {
  std::string_view text;
  int column = 0;  // 1-based
};

std::vector<Token> split_line(std::string_view line) {
  // A comment runs from the first '#' or ';' to the end of the line.
  line = line.substr(0, std::min(line.find('#'), line.find(';')));
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return tokens;
}

bool is_scratchpad_field(std::string_view name) {
  return name == "sp" || (name.size() > 3 && name.ends_with("_sp"));
}

/// Parses decimal, 0x hex or 0b binary, optionally negative; nullopt when not a number or when it
/// does not fit in int64.
std::optional<std::int64_t> parse_integer(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    base = 2;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  const auto value = static_cast<std::int64_t>(magnitude);
  return negative ? -value : value;
}

/// The field a message of the form "field 'NAME' ..." names, or "".
std::string_view named_field(std::string_view message) {
  constexpr std::string_view kPrefix = "field '";
  if (!message.starts_with(kPrefix)) return {};
  message.remove_prefix(kPrefix.size());
  return message.substr(0, message.find('\''));
}

class Assembler {
 public:
  Assembler(const std::string& file, const AssembleOptions& options)
      : file_(file), options_(options) {}

  Program run(std::string_view text) {
    Program program;
    int line_number = 0;
    std::size_t start = 0;
    while (start <= text.size() && diagnostics_.size() < kMaxDiagnostics) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      ++line_number;
      if (auto instruction = assemble_line(text.substr(start, end - start), line_number))
        program.instructions.push_back(std::move(*instruction));
      if (end == text.size()) break;
      start = end + 1;
    }
    if (!diagnostics_.empty()) throw InputError(std::move(diagnostics_));
    return program;
  }

 private:
  void error(int line, int column, std::string message) {
    diagnostics_.push_back({{file_, line, column}, "", std::move(message)});
  }

  std::optional<std::int64_t> parse_value(const FieldSpec& field, std::string_view text, int line,
                                          int column) {
    if (field.type == FieldType::kEnum) {
      std::vector<std::string> names;
      for (int code = 0; code < field.enum_count; ++code) {
        if (field.enum_names[code] == text) return code;
        names.emplace_back(field.enum_names[code]);
      }
      error(line, column,
            "field '" + std::string(field.name) + "' = '" + std::string(text) +
                "' is not one of its names" + did_you_mean(text, names));
      return std::nullopt;
    }
    if (auto value = parse_integer(text)) return value;
    if (is_scratchpad_field(field.name) && options_.target != nullptr) {
      std::vector<std::string> names;
      const auto& pads = options_.target->scratchpads;
      for (std::size_t i = 0; i < pads.size(); ++i) {
        if (pads[i].name == text) return static_cast<std::int64_t>(i);
        names.push_back(pads[i].name);
      }
      error(line, column,
            "field '" + std::string(field.name) + "' = '" + std::string(text) +
                "' names no scratchpad" + did_you_mean(text, names));
      return std::nullopt;
    }
    error(line, column,
          "field '" + std::string(field.name) + "' = '" + std::string(text) +
              "' is not an integer" +
              (is_scratchpad_field(field.name) ? " (scratchpad names need --hw)" : ""));
    return std::nullopt;
  }

  std::optional<Instruction> assemble_line(std::string_view line, int line_number) {
    const auto tokens = split_line(line);
    if (tokens.empty()) return std::nullopt;
    const OpcodeSpec* spec = find_opcode(tokens[0].text);
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const auto& s : opcode_specs()) names.emplace_back(s.name);
      error(line_number, tokens[0].column,
            "unknown instruction '" + std::string(tokens[0].text) + "'" +
                did_you_mean(tokens[0].text, names));
      return std::nullopt;
    }
    const auto fields = spec->fields();
    std::vector<std::int64_t> values(fields.size());
    std::vector<int> columns(fields.size(), 0);  // 0: not given
    bool ok = true;
    for (std::size_t t = 1; t < tokens.size(); ++t) {
      const auto& token = tokens[t];
      const auto equals = token.text.find('=');
      if (equals == std::string_view::npos || equals == 0) {
        error(line_number, token.column,
              "expected field=value, got '" + std::string(token.text) + "'");
        ok = false;
        continue;
      }
      const auto name = token.text.substr(0, equals);
      const auto value_text = token.text.substr(equals + 1);
      std::size_t index = fields.size();
      for (std::size_t f = 0; f < fields.size(); ++f)
        if (fields[f].name == name) index = f;
      if (index == fields.size()) {
        std::vector<std::string> names;
        for (const auto& f : fields) names.emplace_back(f.name);
        error(line_number, token.column,
              std::string(spec->name) + " has no field '" + std::string(name) + "'" +
                  did_you_mean(name, names));
        ok = false;
        continue;
      }
      if (columns[index] != 0) {
        error(line_number, token.column,
              "field '" + std::string(name) + "' given twice (first at column " +
                  std::to_string(columns[index]) + ")");
        ok = false;
        continue;
      }
      columns[index] = token.column;
      if (auto value = parse_value(fields[index], value_text, line_number, token.column))
        values[index] = *value;
      else
        ok = false;
    }
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (columns[f] != 0) continue;
      const auto& field = fields[f];
      if (field.type != FieldType::kEnum && field.type != FieldType::kFlag && field.min_value > 0) {
        error(line_number, tokens[0].column,
              std::string(spec->name) + ": missing field '" + std::string(field.name) + "'");
        ok = false;
      } else {
        values[f] = std::max<std::int64_t>(0, field.min_value);
      }
    }
    if (!ok) return std::nullopt;

    auto column_of = [&](std::string_view field) {
      for (std::size_t f = 0; f < fields.size(); ++f)
        if (fields[f].name == field && columns[f] != 0) return columns[f];
      return tokens[0].column;
    };
    auto made = make_instruction(*spec, values);
    if (!made) {
      error(line_number, column_of(named_field(made.reason())), made.reason());
      return std::nullopt;
    }
    if (auto status = check(made.value()); !status) {
      error(line_number, column_of(named_field(status.reason())), status.reason());
      return std::nullopt;
    }
    if (options_.target != nullptr) {
      if (auto problem = validate(made.value(), *options_.target)) {
        error(line_number, column_of(problem->field), problem->message);
        return std::nullopt;
      }
    }
    return std::move(made).value();
  }

  std::string file_;
  AssembleOptions options_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace

Program assemble(std::string_view text, const std::string& file, const AssembleOptions& options) {
  return Assembler(file, options).run(text);
}

Program assemble_file(const std::string& path, const AssembleOptions& options) {
  return assemble(files::read_file(path, files::kMaxProgramBytes), path, options);
}

std::string format_instruction(const Instruction& instruction,
                               const std::vector<std::string>& scratchpad_names) {
  std::string out(mnemonic(instruction));
  const auto values = field_values(instruction);
  const auto fields = spec_of(instruction).fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out += ' ';
    out += fields[i].name;
    out += '=';
    const auto value = values[i];
    if (is_scratchpad_field(fields[i].name) && value >= 0 &&
        static_cast<std::size_t>(value) < scratchpad_names.size())
      out += scratchpad_names[static_cast<std::size_t>(value)];
    else
      out += format_value(fields[i], value);
  }
  return out;
}

std::string disassemble(const Program& program, const std::vector<std::string>& scratchpad_names) {
  std::string out = "# Tessel ISA v" + std::to_string(kIsaVersion) + ", " +
                    std::to_string(program.instructions.size()) + " instructions\n";
  for (const auto& instruction : program.instructions)
    out += format_instruction(instruction, scratchpad_names) + '\n';
  return out;
}

}  // namespace tessel::isa
