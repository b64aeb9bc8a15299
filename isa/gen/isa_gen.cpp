// tessel_isa_gen: reads isa/isa_table.yaml and writes the C++ ISA header and the SV package.
//
// Usage: tessel_isa_gen TABLE.yaml OUT.hpp OUT.sv [OUT_FIELDS.md]
// The table is checked first (overlaps, widths, ranges, duplicate names and codes); any
// problem is printed as `TABLE:LINE:COL: error: key: message` and the exit code is 1.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct TableError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Field {
  std::string name;
  int lsb = 0;
  int width = 0;
  std::string type;       // u, s, flag, enum
  std::string enum_name;  // type == enum
  std::int64_t min_value = 0;
  std::int64_t max_value = 0;
  std::string doc;
};

struct Op {
  std::string name;
  int code = 0;
  std::string engine;  // load, compute, store, field
  std::string doc;
  std::vector<Field> fields;  // without the common fields
};

struct Table {
  int version = 0;
  int min_readable_version = 0;  // oldest .bin version the reader accepts
  int instruction_bits = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> enums;
  std::vector<Field> common;  // opcode first
  std::vector<Op> ops;
};

std::string where(const std::string& file, const YAML::Node& node) {
  const auto mark = node.Mark();
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& key,
                       const std::string& message) {
  throw TableError(where(file, node) + ": error: " + key + ": " + message);
}

std::string camel(const std::string& snake) {
  std::string out;
  bool upper = true;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

std::string upper(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const std::vector<std::string>* find_enum(const Table& t, const std::string& name) {
  for (const auto& [n, values] : t.enums)
    if (n == name) return &values;
  return nullptr;
}

Field parse_field(const std::string& file, const YAML::Node& node, const std::string& key,
                  const Table& table) {
  Field f;
  for (const char* required : {"name", "lsb", "width", "type", "doc"})
    if (!node[required]) fail(file, node, key, std::string("missing '") + required + "'");
  f.name = node["name"].as<std::string>();
  f.lsb = node["lsb"].as<int>();
  f.width = node["width"].as<int>();
  f.doc = node["doc"].as<std::string>();
  const auto type = node["type"].as<std::string>();
  if (type.rfind("enum:", 0) == 0) {
    f.type = "enum";
    f.enum_name = type.substr(5);
    if (!find_enum(table, f.enum_name))
      fail(file, node, key + ".type", "unknown enum '" + f.enum_name + "'");
  } else if (type == "u" || type == "s" || type == "flag") {
    f.type = type;
  } else {
    fail(file, node, key + ".type", "'" + type + "' is not u, s, flag or enum:<name>");
  }
  if (f.width < 1 || f.width > 62) fail(file, node, key + ".width", "must be in [1, 62]");
  if (f.type == "flag" && f.width != 1) fail(file, node, key + ".width", "a flag is 1 bit");
  if (f.lsb < 0 || f.lsb + f.width > table.instruction_bits)
    fail(file, node, key + ".lsb", "field does not fit in the instruction");
  const bool is_signed = f.type == "s";
  const std::int64_t enc_min = is_signed ? -(std::int64_t{1} << (f.width - 1)) : 0;
  const std::int64_t enc_max =
      is_signed ? (std::int64_t{1} << (f.width - 1)) - 1 : (std::int64_t{1} << f.width) - 1;
  f.min_value = node["min"] ? node["min"].as<std::int64_t>() : enc_min;
  f.max_value = node["max"] ? node["max"].as<std::int64_t>() : enc_max;
  if (f.type == "enum") {
    const auto count = static_cast<std::int64_t>(find_enum(table, f.enum_name)->size());
    f.max_value = std::min(f.max_value, count - 1);
  }
  if (f.min_value < enc_min || f.max_value > enc_max || f.min_value > f.max_value)
    fail(file, node, key,
         "legal range [" + std::to_string(f.min_value) + ", " + std::to_string(f.max_value) +
             "] not within the encoding");
  return f;
}

Table parse(const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    throw TableError(file + ": error: " + e.what());
  }
  Table t;
  t.version = root["version"].as<int>();
  t.min_readable_version =
      root["min_readable_version"] ? root["min_readable_version"].as<int>() : t.version;
  if (t.min_readable_version < 1 || t.min_readable_version > t.version)
    fail(file, root["min_readable_version"], "min_readable_version", "must be in [1, version]");
  t.instruction_bits = root["instruction_bits"].as<int>();
  if (t.instruction_bits % 64 != 0)
    fail(file, root["instruction_bits"], "instruction_bits", "must be a multiple of 64");
  for (const auto& e : root["enums"])
    t.enums.emplace_back(e.first.as<std::string>(), e.second.as<std::vector<std::string>>());
  int index = 0;
  for (const auto& node : root["common"])
    t.common.push_back(parse_field(file, node, "common[" + std::to_string(index++) + "]", t));
  if (t.common.empty() || t.common[0].name != "opcode")
    fail(file, root["common"], "common", "the first common field must be 'opcode'");
  std::set<int> codes;
  std::set<std::string> names;
  index = 0;
  for (const auto& node : root["opcodes"]) {
    const std::string key = "opcodes[" + std::to_string(index++) + "]";
    Op op;
    op.name = node["name"].as<std::string>();
    op.code = node["code"].as<int>();
    op.engine = node["engine"].as<std::string>();
    op.doc = node["doc"].as<std::string>();
    if (!names.insert(op.name).second) fail(file, node, key + ".name", "duplicate opcode name");
    if (op.code < 1 || op.code > 255 || !codes.insert(op.code).second)
      fail(file, node, key + ".code", "codes are unique and in [1, 255] (0 is never valid)");
    const auto& engines = *find_enum(t, "engine");
    if (op.engine != "field" &&
        std::find(engines.begin(), engines.end(), op.engine) == engines.end())
      fail(file, node, key + ".engine", "unknown engine '" + op.engine + "'");
    int field_index = 0;
    for (const auto& fnode : node["fields"])
      op.fields.push_back(
          parse_field(file, fnode, key + ".fields[" + std::to_string(field_index++) + "]", t));
    // No two fields (common included) may share a bit or a name.
    std::vector<int> owner(static_cast<std::size_t>(t.instruction_bits), -1);
    std::vector<Field> all = t.common;
    all.insert(all.end(), op.fields.begin(), op.fields.end());
    std::set<std::string> field_names;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!field_names.insert(all[i].name).second)
        fail(file, node, key, "field name '" + all[i].name + "' used twice");
      for (int b = all[i].lsb; b < all[i].lsb + all[i].width; ++b) {
        auto& o = owner[static_cast<std::size_t>(b)];
        if (o >= 0)
          fail(file, node, key,
               "fields '" + all[static_cast<std::size_t>(o)].name + "' and '" + all[i].name +
                   "' overlap at bit " + std::to_string(b));
        o = static_cast<int>(i);
      }
    }
    if (op.engine == "field" && std::none_of(op.fields.begin(), op.fields.end(),
                                             [](const Field& f) { return f.name == "engine"; }))
      fail(file, node, key, "engine: field needs a field named 'engine'");
    t.ops.push_back(std::move(op));
  }
  return t;
}

std::string cpp_type(const Field& f) {
  if (f.type == "flag") return "bool";
  if (f.type == "enum") return camel(f.enum_name);
  if (f.type == "s") return "std::int32_t";
  return f.width <= 32 ? "std::uint32_t" : "std::uint64_t";
}

std::string cpp_default(const Field& f, const Table& t) {
  if (f.type == "flag") return "false";
  if (f.type == "enum") return camel(f.enum_name) + "::k" + camel((*find_enum(t, f.enum_name))[0]);
  return std::to_string(std::max<std::int64_t>(0, f.min_value));
}

std::string cpp_field_type(const Field& f) {
  if (f.type == "flag") return "FieldType::kFlag";
  if (f.type == "enum") return "FieldType::kEnum";
  if (f.type == "s") return "FieldType::kSigned";
  return "FieldType::kUnsigned";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string int_literal(std::int64_t v) {
  // INT64_MIN never occurs (widths <= 62); spell negatives so no literal overflows.
  return v < 0 ? "-" + std::to_string(-v) + "LL" : std::to_string(v) + "LL";
}

std::string emit_header(const Table& t, const std::string& table_path) {
  std::ostringstream o;
  o << "// Generated by tessel_isa_gen from " << table_path << ". Do not edit.\n"
    << "// The typed instruction structs and the field tables of the Tessel ISA.\n"
    << "#pragma once\n\n#include <cstdint>\n#include <string_view>\n#include <variant>\n\n"
    << "#include \"isa/spec.hpp\"\n\nnamespace tessel::isa {\n\n"
    << "/// Version of isa_table.yaml; stored in every .bin header.\n"
    << "inline constexpr int kIsaVersion = " << t.version << ";\n"
    << "/// The oldest .bin version the reader accepts (newer versions only added opcodes).\n"
    << "inline constexpr int kIsaMinReadableVersion = " << t.min_readable_version << ";\n"
    << "/// Every instruction has this many bits.\n"
    << "inline constexpr int kInstructionBits = " << t.instruction_bits << ";\n"
    << "inline constexpr int kInstructionBytes = " << t.instruction_bits / 8 << ";\n\n";
  for (const auto& [name, values] : t.enums) {
    o << "enum class " << camel(name) << " : std::uint8_t {";
    for (std::size_t i = 0; i < values.size(); ++i)
      o << (i ? ", " : " ") << "k" << camel(values[i]) << " = " << i;
    o << " };\ninline constexpr std::string_view k" << camel(name) << "Names[] = {";
    for (std::size_t i = 0; i < values.size(); ++i) o << (i ? ", " : "") << quoted(values[i]);
    o << "};\n";
  }
  o << "\n/// Operation codes (0 is never a valid opcode).\nenum class Opcode : std::uint8_t {";
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    o << (i ? "," : "") << "\n  k" << camel(t.ops[i].name) << " = " << t.ops[i].code;
  o << "\n};\n\n";
  for (const auto& op : t.ops) {
    o << "/// " << op.name << ": " << op.doc << "\nstruct " << camel(op.name) << " {\n"
      << "  static constexpr Opcode kOpcode = Opcode::k" << camel(op.name) << ";\n";
    std::vector<Field> all(t.common.begin() + 1, t.common.end());
    all.insert(all.end(), op.fields.begin(), op.fields.end());
    for (const auto& f : all)
      o << "  " << cpp_type(f) << " " << f.name << " = " << cpp_default(f, t) << ";  ///< " << f.doc
        << "\n";
    o << "  bool operator==(const " << camel(op.name) << "&) const = default;\n};\n\n";
  }
  o << "/// One decoded instruction; the alternative's index is its position in the table.\n"
    << "using Instruction = std::variant<";
  for (std::size_t i = 0; i < t.ops.size(); ++i) o << (i ? ", " : "") << camel(t.ops[i].name);
  o << ">;\n\nnamespace generated {\n\n";
  auto emit_fields = [&](const std::string& array, const std::vector<Field>& fields) {
    o << "inline constexpr FieldSpec " << array << "[] = {\n";
    for (const auto& f : fields) {
      o << "    {" << quoted(f.name) << ", " << f.lsb << ", " << f.width << ", "
        << cpp_field_type(f) << ", " << int_literal(f.min_value) << ", " << int_literal(f.max_value)
        << ", ";
      if (f.type == "enum")
        o << "k" << camel(f.enum_name) << "Names, " << find_enum(t, f.enum_name)->size() << ", ";
      else
        o << "nullptr, 0, ";
      o << quoted(f.doc) << "},\n";
    }
    o << "};\n";
  };
  emit_fields("kOpcodeField", {t.common[0]});
  for (const auto& op : t.ops) {
    std::vector<Field> all(t.common.begin() + 1, t.common.end());
    all.insert(all.end(), op.fields.begin(), op.fields.end());
    emit_fields("k" + camel(op.name) + "Fields", all);
  }
  const auto& engines = *find_enum(t, "engine");
  o << "\ninline constexpr OpcodeSpec kOpcodeSpecs[] = {\n";
  for (const auto& op : t.ops) {
    const auto engine_index =
        op.engine == "field" ? std::string("kEngineFromField")
                             : std::to_string(std::find(engines.begin(), engines.end(), op.engine) -
                                              engines.begin());
    o << "    {" << op.code << ", " << quoted(op.name) << ", " << engine_index << ", k"
      << camel(op.name) << "Fields, " << t.common.size() - 1 + op.fields.size() << ", "
      << quoted(op.doc) << "},\n";
  }
  o << "};\n\n}  // namespace generated\n\n"
    << "/// Calls f(const FieldSpec&, member&) for every field of `x`, in table order\n"
    << "/// (the common token flags first; the opcode is implied by the type).\n";
  for (const auto& op : t.ops) {
    std::vector<Field> all(t.common.begin() + 1, t.common.end());
    all.insert(all.end(), op.fields.begin(), op.fields.end());
    for (const char* qualifier : {"", "const "}) {
      o << "template <class F>\nvoid for_each_field(" << qualifier << camel(op.name)
        << "& x, F&& f) {\n";
      for (std::size_t i = 0; i < all.size(); ++i)
        o << "  f(generated::k" << camel(op.name) << "Fields[" << i << "], x." << all[i].name
          << ");\n";
      o << "}\n";
    }
  }
  o << "\n}  // namespace tessel::isa\n";
  return o.str();
}

std::string emit_sv(const Table& t, const std::string& table_path) {
  std::ostringstream o;
  o << "// Generated by tessel_isa_gen from " << table_path << ". Do not edit.\n"
    << "// Refresh the checked-in copy: cmake --build BUILD --target tessel_isa_refresh_sv\n"
    << "// Decode package of the Tessel ISA: opcodes, enum codes, field positions and packed\n"
    << "// views of the " << t.instruction_bits
    << "-bit instruction word (signed fields are noted; cast with $signed).\n"
    << "// Yosys 0.23 accepts qualified names (tessel_isa_pkg::OP_LOAD), not `import`.\n"
    << "/* verilator lint_off UNUSEDPARAM */\n"
    << "package tessel_isa_pkg;\n\n"
    << "  localparam int unsigned ISA_VERSION = " << t.version << ";\n"
    << "  localparam int unsigned INSN_BITS = " << t.instruction_bits << ";\n\n";
  const int opcode_width = t.common[0].width;
  for (const auto& op : t.ops)
    o << "  localparam logic [" << opcode_width - 1 << ":0] OP_" << upper(op.name) << " = "
      << opcode_width << "'d" << op.code << ";\n";
  o << "\n";
  for (const auto& [name, values] : t.enums) {
    int width = 1;
    while ((std::size_t{1} << width) < values.size()) ++width;
    for (std::size_t i = 0; i < values.size(); ++i)
      o << "  localparam logic [" << width - 1 << ":0] " << upper(name) << "_" << upper(values[i])
        << " = " << width << "'d" << i << ";\n";
  }
  auto emit_positions = [&](const std::string& prefix, const std::vector<Field>& fields) {
    for (const auto& f : fields)
      o << "  localparam int unsigned " << prefix << upper(f.name) << "_LSB = " << f.lsb << ", "
        << prefix << upper(f.name) << "_W = " << f.width << ";\n";
  };
  o << "\n  // Common fields (every opcode).\n";
  emit_positions("", t.common);
  for (const auto& op : t.ops) {
    o << "\n  // " << op.name << ": " << op.doc << "\n";
    emit_positions(upper(op.name) + "_", op.fields);
    std::vector<Field> all = t.common;
    all.insert(all.end(), op.fields.begin(), op.fields.end());
    std::sort(all.begin(), all.end(), [](const Field& a, const Field& b) { return a.lsb > b.lsb; });
    o << "  typedef struct packed {\n";
    int next_bit = t.instruction_bits;  // fill from the MSB down
    for (const auto& f : all) {
      const int top = f.lsb + f.width;
      if (top < next_bit)
        o << "    logic [" << next_bit - top - 1 << ":0] reserved_" << top << ";\n";
      o << "    logic " << (f.width > 1 ? "[" + std::to_string(f.width - 1) + ":0] " : "") << f.name
        << ";" << (f.type == "s" ? "  // signed" : "") << "\n";
      next_bit = f.lsb;
    }
    if (next_bit > 0) o << "    logic [" << next_bit - 1 << ":0] reserved_0;\n";
    o << "  } " << op.name << "_insn_t;\n";
  }
  o << "\nendpackage\n/* verilator lint_on UNUSEDPARAM */\n";
  return o.str();
}

std::string bits_of(const Field& f) {
  return f.width == 1 ? std::to_string(f.lsb)
                      : std::to_string(f.lsb) + "-" + std::to_string(f.lsb + f.width - 1);
}

std::string range_of(const Table& t, const Field& f) {
  if (f.type == "enum") {
    const auto& names = *find_enum(t, f.enum_name);
    std::string out;
    for (std::int64_t i = f.min_value; i <= f.max_value; ++i)
      out +=
          (out.empty() ? "" : ", ") + std::string("`") + names[static_cast<std::size_t>(i)] + "`";
    return out;
  }
  if (f.type == "flag") return "0, 1";
  return std::to_string(f.min_value) + " .. " + std::to_string(f.max_value);
}

std::string type_of(const Field& f) {
  if (f.type == "enum") return "enum";
  if (f.type == "flag") return "flag";
  return f.type + std::to_string(f.width);
}

std::string emit_markdown(const Table& t) {
  std::ostringstream o;
  auto table = [&](const std::vector<Field>& fields) {
    o << "| field | bits | type | legal values | meaning |\n|---|---|---|---|---|\n";
    for (const auto& f : fields)
      o << "| `" << f.name << "` | " << bits_of(f) << " | " << type_of(f) << " | " << range_of(t, f)
        << " | " << f.doc << " |\n";
  };
  o << "Generated from `isa/isa_table.yaml` by `tessel_isa_gen`; bits not listed for an opcode "
       "are reserved (zero).\n\n**Every opcode** (bits 12-15 reserved):\n\n";
  table(t.common);
  for (const auto& op : t.ops) {
    o << "\n**`" << op.name << "`** (opcode " << op.code << ", "
      << (op.engine == "field" ? std::string("engine from its `engine` field")
                               : op.engine + " engine")
      << "): " << op.doc << "\n\n";
    if (op.fields.empty())
      o << "No fields beyond the common ones.\n";
    else
      table(op.fields);
  }
  return o.str();
}

void write_if_changed(const std::string& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream old;
  old << in.rdbuf();
  if (in && old.str() == text) return;  // keeps timestamps, so nothing rebuilds needlessly
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw TableError(path + ": error: cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: tessel_isa_gen TABLE.yaml OUT.hpp OUT.sv [OUT_FIELDS.md]\n";
    return 1;
  }
  try {
    const Table table = parse(argv[1]);
    write_if_changed(argv[2], emit_header(table, "isa/isa_table.yaml"));
    write_if_changed(argv[3], emit_sv(table, "isa/isa_table.yaml"));
    if (argc == 5) write_if_changed(argv[4], emit_markdown(table));
  } catch (const TableError& e) {
    std::cerr << e.what() << '\n';
    return 1;
  } catch (const YAML::Exception& e) {
    std::cerr << argv[1] << ": error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
