// Printer and parser of the graph text form (see text.hpp for the grammar by example).
#include "compiler/ir/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "compiler/ir/analysis.hpp"
#include "support/diagnostic.hpp"

namespace tessel::ir {
namespace {

// ---------------------------------------------------------------------------------------------
// Printing

bool is_simple_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '/';
}

std::string print_name(const std::string& name) {
  bool simple = !name.empty();
  for (char c : name) simple = simple && is_simple_name_char(c);
  if (simple) return "%" + name;
  std::string quoted = "%\"";
  for (char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

template <class T>
std::string print_number(T value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

template <class T>
std::string print_list(const std::vector<T>& values, const char* separator) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) text += separator;
    text += print_number(values[i]);
  }
  return text;
}

std::string print_quant(const QuantParams& quant) {
  if (!quant.per_channel()) {
    return "{scale=" + print_number(quant.scales.at(0)) +
           ", zp=" + print_number(quant.zero_points.at(0)) + "}";
  }
  return "{axis=" + std::to_string(quant.axis) + ", scales=[" + print_list(quant.scales, ", ") +
         "], zps=[" + print_list(quant.zero_points, ", ") + "]}";
}

std::string print_type(const Tensor& tensor) {
  std::string text = type_string(tensor);
  if (tensor.quant) text += print_quant(*tensor.quant);
  return text;
}

bool uses_times(std::string_view attr) {
  return attr == "kernel" || attr == "stride" || attr == "dilation";
}

std::string print_attr(std::string_view name, const AttrValue& value) {
  switch (attr_type(value)) {
    case AttrType::Int:
      return print_number(std::get<std::int64_t>(value));
    case AttrType::Float:
      return print_number(std::get<double>(value));
    case AttrType::Ints: {
      const auto& ints = std::get<std::vector<std::int64_t>>(value);
      if (ints.empty()) return "[]";
      // One element in brackets: a bare number reads back as an int, not a list.
      if (ints.size() == 1) return "[" + print_number(ints[0]) + "]";
      return print_list(ints, uses_times(name) ? "x" : ",");
    }
    case AttrType::Floats:
      return "[" + print_list(std::get<std::vector<double>>(value), ", ") + "]";
    case AttrType::String: {
      std::string quoted = "\"";
      for (char c : std::get<std::string>(value)) {
        if (c == '"' || c == '\\') quoted += '\\';
        quoted += c;
      }
      return quoted + "\"";
    }
  }
  return "?";
}

std::string print_digest(const Tensor& tensor) {
  const auto digest = tensor.digest();
  if (!digest) return "#elided";
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "#%016llx", static_cast<unsigned long long>(*digest));
  return buffer;
}

}  // namespace

std::string to_text(const Graph& graph, const TextOptions& options) {
  std::ostringstream out;
  out << "graph " << print_name(graph.name()).substr(1) << " {\n";
  auto order = topological_order(graph);
  std::vector<OpId> ids;
  if (order) {
    ids = order.value();
  } else {
    for (OpId id = 0; id < graph.num_ops(); ++id) ids.push_back(id);
  }
  for (OpId id : ids) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::Input) {
      out << "  input " << print_name(op.outputs[0]) << " : "
          << print_type(graph.tensor(op.outputs[0]));
      if (op.name != op.outputs[0]) out << " @" << print_name(op.name).substr(1);
      out << "\n";
    }
  }
  for (const auto& [name, tensor] : graph.tensors()) {
    if (!tensor.constant) continue;
    out << "  const " << print_name(name) << " : " << print_type(tensor);
    const bool inline_values =
        tensor.has_data() && tensor.has_shape() &&
        static_cast<std::size_t>(element_count(tensor.shape)) <= options.inline_constant_limit;
    if (inline_values) {
      if (!tensor.f32_values.empty()) out << " = [" << print_list(tensor.f32_values, ", ") << "]";
      if (!tensor.int_values.empty())
        out << " ints [" << print_list(tensor.int_values, ", ") << "]";
    } else {
      out << " " << print_digest(tensor);
    }
    out << "\n";
  }
  for (OpId id : ids) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::Input) continue;
    out << "  ";
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      out << (i ? ", " : "") << print_name(op.outputs[i]);
    }
    out << " = " << to_string(op.kind) << "(";
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      out << (i ? ", " : "") << print_name(op.inputs[i]);
    }
    out << ")";
    std::string attrs;
    for (const AttrSpec& spec : schema(op.kind).attrs) {
      const auto it = op.attrs.find(spec.name);
      if (it == op.attrs.end()) continue;
      if (spec.default_value && *spec.default_value == it->second) continue;
      attrs += (attrs.empty() ? "" : ", ") + std::string(spec.name) + "=" +
               print_attr(spec.name, it->second);
    }
    if (!attrs.empty()) out << " {" << attrs << "}";
    out << " :";
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      out << (i ? ", " : " ") << print_type(graph.tensor(op.outputs[i]));
    }
    if (op.outputs.empty() || op.name != op.outputs[0])
      out << " @" << print_name(op.name).substr(1);
    out << "\n";
  }
  if (!graph.outputs().empty()) {
    out << "  output ";
    for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
      out << (i ? ", " : "") << print_name(graph.outputs()[i]);
    }
    out << "\n";
  }
  out << "}\n";
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  Graph parse() {
    skip_space();
    expect_word("graph");
    Graph graph(parse_bare_name());
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (at_end()) error("", "missing '}' at the end of the graph");
      if (peek() == '}') {
        ++pos_;
        break;
      }
      statement(graph);
    }
    skip_space();
    if (!at_end()) error("", "text after the closing '}'");
    return graph;
  }

 private:
  // --- statements ---
  void statement(Graph& graph) {
    const SourceLocation start = location();
    if (peek() == '%') {
      op_statement(graph, start);
      return;
    }
    const std::string word = parse_word();
    if (word == "input") {
      const std::string name = parse_name();
      expect(':');
      Tensor type = parse_type();
      std::string op_name = name;
      if (try_consume('@')) op_name = parse_bare_name();
      Tensor tensor = std::move(type);
      tensor.name = name;
      check(graph.declare_tensor(tensor), start);
      Op op;
      op.name = op_name;
      op.kind = OpKind::Input;
      op.outputs = {name};
      check(graph.add_op(std::move(op)), start);
    } else if (word == "const") {
      const std::string name = parse_name();
      expect(':');
      Tensor tensor = parse_type();
      tensor.name = name;
      skip_space();
      if (peek() == '#') {
        ++pos_;
        const std::string digest = parse_word();
        if (digest != "elided") {
          std::uint64_t value = 0;
          const auto result =
              std::from_chars(digest.data(), digest.data() + digest.size(), value, 16);
          if (result.ec != std::errc() || result.ptr != digest.data() + digest.size()) {
            error("const", "bad digest '#" + digest + "'");
          }
          tensor.elided_digest = value;
        }
      } else {
        if (try_consume('=')) tensor.f32_values = parse_number_list<float>();
        skip_space();
        if (peek_word("ints")) {
          parse_word();
          tensor.int_values = parse_number_list<std::int32_t>();
        }
        if (!tensor.has_data())
          error("const", "expected '= [values]', 'ints [values]' or '#digest'");
      }
      check(graph.add_constant(std::move(tensor)), start);
    } else if (word == "output") {
      std::vector<std::string> outputs{parse_name()};
      while (try_consume(',')) outputs.push_back(parse_name());
      check(graph.set_outputs(std::move(outputs)), start);
    } else {
      error("", "expected 'input', 'const', 'output' or an op, found '" + word + "'");
    }
  }

  void op_statement(Graph& graph, const SourceLocation& start) {
    Op op;
    op.outputs.push_back(parse_name());
    while (try_consume(',')) op.outputs.push_back(parse_name());
    expect('=');
    skip_space();
    const SourceLocation kind_at = location();
    const std::string kind_name = parse_word();
    auto kind = parse_op_kind(kind_name);
    if (!kind) throw InputError(Diagnostic{kind_at, "op", kind.reason()});
    op.kind = kind.value();
    expect('(');
    skip_space();
    if (peek() != ')') {
      op.inputs.push_back(parse_name());
      while (try_consume(',')) op.inputs.push_back(parse_name());
    }
    expect(')');
    skip_space();
    if (peek() == '{') {
      ++pos_;
      skip_space();
      while (peek() != '}') {
        const std::string key = parse_word();
        expect('=');
        op.attrs[key] = parse_attr_value();
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
        } else if (peek() != '}') {
          error("attrs", "expected ',' or '}' after attribute '" + key + "'");
        }
      }
      ++pos_;
    }
    expect(':');
    std::vector<Tensor> types{parse_type()};
    while (try_consume(',')) types.push_back(parse_type());
    if (types.size() != op.outputs.size()) {
      error("", std::to_string(op.outputs.size()) + " results but " + std::to_string(types.size()) +
                    " types");
    }
    op.name = op.outputs[0];
    if (try_consume('@')) op.name = parse_bare_name();
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (graph.has_tensor(op.outputs[i])) {
        // Declared earlier as a forward reference: take the type; conflicts are add_op's to report.
        Tensor& existing = graph.tensor_mut(op.outputs[i]);
        if (!existing.constant && !graph.producer(op.outputs[i])) {
          existing.dtype = types[i].dtype;
          existing.shape = types[i].shape;
          existing.quant = types[i].quant;
        }
        continue;
      }
      types[i].name = op.outputs[i];
      check(graph.declare_tensor(std::move(types[i])), start);
    }
    // Inputs may be defined by later lines (cyclic or unordered text): declare them now.
    for (const std::string& input : op.inputs) {
      if (!graph.has_tensor(input)) {
        Tensor placeholder;
        placeholder.name = input;
        check(graph.declare_tensor(std::move(placeholder)), start);
      }
    }
    check(graph.add_op(std::move(op)), start);
  }

  // --- pieces ---
  Tensor parse_type() {
    skip_space();
    Tensor tensor;
    const SourceLocation at = location();
    std::string dtype_name;
    while (!at_end() && std::isalnum(static_cast<unsigned char>(peek())))
      dtype_name += text_[pos_++];
    auto dtype = parse_dtype(dtype_name);
    if (!dtype) throw InputError(Diagnostic{at, "type", dtype.reason()});
    tensor.dtype = dtype.value();
    expect('[');
    skip_space();
    if (peek() == '?') {
      ++pos_;
      expect(']');
    } else if (peek() == ']') {
      error("type", "empty shape (rank-0 tensors are not supported)");
    } else {
      tensor.shape.push_back(parse_number<std::int64_t>());
      while (try_consume(',')) tensor.shape.push_back(parse_number<std::int64_t>());
      expect(']');
    }
    if (pos_ < text_.size() && text_[pos_] == '{') tensor.quant = parse_quant();
    return tensor;
  }

  QuantParams parse_quant() {
    expect('{');
    QuantParams quant;
    skip_space();
    const std::string first = parse_word();
    if (first == "scale") {
      expect('=');
      quant.scales = {parse_number<float>()};
      expect(',');
      expect_word("zp");
      expect('=');
      quant.zero_points = {parse_number<std::int32_t>()};
    } else if (first == "axis") {
      expect('=');
      quant.axis = static_cast<int>(parse_number<std::int64_t>());
      expect(',');
      expect_word("scales");
      expect('=');
      quant.scales = parse_number_list<float>();
      expect(',');
      expect_word("zps");
      expect('=');
      quant.zero_points = parse_number_list<std::int32_t>();
    } else {
      error("quant", "expected 'scale' or 'axis', found '" + first + "'");
    }
    expect('}');
    return quant;
  }

  AttrValue parse_attr_value() {
    skip_space();
    if (peek() == '"') return parse_quoted();
    if (peek() == '[') {
      // A bracketed list of integer tokens is an int list, read as int64 (exact to 2^63 - 1,
      // which ONNX writes for "to the end"); the schema widens it when floats are due.
      const auto tokens = parse_number_list<std::string>();
      if (std::none_of(tokens.begin(), tokens.end(), is_float_token)) {
        std::vector<std::int64_t> ints;
        for (const std::string& token : tokens) ints.push_back(to_number<std::int64_t>(token));
        return ints;
      }
      std::vector<double> values;
      std::vector<std::int64_t> ints;
      for (const std::string& token : tokens) {
        const double v = to_number<double>(token);
        values.push_back(v);
        if (std::fabs(v) < 9.2e18 && v == std::trunc(v))
          ints.push_back(static_cast<std::int64_t>(v));
      }
      if (ints.size() == values.size()) return ints;  // "[2.0, 3.0]": whole numbers
      return values;
    }
    const std::string first = number_token();
    if (is_float_token(first)) return to_number<double>(first);
    std::vector<std::int64_t> list{to_number<std::int64_t>(first)};
    bool is_list = false;
    for (;;) {
      if (peek() == 'x' && pos_ + 1 < text_.size() && is_number_start(text_[pos_ + 1])) {
        ++pos_;
      } else if (peek() == ',' && next_non_space_after_comma_is_number()) {
        ++pos_;
        skip_space();
      } else {
        break;
      }
      list.push_back(to_number<std::int64_t>(number_token()));
      is_list = true;
    }
    if (!is_list) return list[0];
    return list;
  }

  bool next_non_space_after_comma_is_number() const {
    std::size_t look = pos_ + 1;
    while (look < text_.size() && (text_[look] == ' ' || text_[look] == '\t')) ++look;
    return look < text_.size() && is_number_start(text_[look]);
  }

  static bool is_number_start(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+';
  }
  static bool is_float_token(const std::string& token) {
    return token.find_first_of(".eEn") != std::string::npos;  // n: inf/nan spelled out
  }

  std::string number_token() {
    skip_space();
    std::string token;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '.' ||
                         peek() == '-' || peek() == '+')) {
      // 'x' separates list items ("3x3") unless it is part of a hex digest (not parsed here).
      if (peek() == 'x' && !token.empty()) break;
      token += text_[pos_++];
    }
    if (token.empty()) error("", "expected a number");
    return token;
  }

  template <class T>
  T to_number(const std::string& token) {
    T value{};
    const char* begin = token.data();
    if (!token.empty() && token[0] == '+') ++begin;
    const auto result = std::from_chars(begin, token.data() + token.size(), value);
    if (result.ec != std::errc() || result.ptr != token.data() + token.size()) {
      error("", "bad number '" + token + "'");
    }
    return value;
  }

  template <class T>
  T parse_number() {
    if constexpr (std::is_same_v<T, std::string>) {
      return number_token();
    } else {
      return to_number<T>(number_token());
    }
  }

  template <class T>
  std::vector<T> parse_number_list() {
    expect('[');
    std::vector<T> values;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return values;
    }
    values.push_back(parse_number<T>());
    while (try_consume(',')) values.push_back(parse_number<T>());
    expect(']');
    return values;
  }

  std::string parse_quoted() {
    expect('"');
    std::string value;
    while (!at_end() && peek() != '"') {
      if (peek() == '\\') ++pos_;
      if (at_end()) break;
      value += text_[pos_++];
    }
    if (at_end()) error("", "unterminated string");
    ++pos_;
    return value;
  }

  std::string parse_name() {
    skip_space();
    if (peek() != '%') error("", "expected a %name");
    ++pos_;
    return parse_bare_name();
  }

  std::string parse_bare_name() {
    skip_space();
    if (peek() == '"') return parse_quoted();
    std::string name;
    while (!at_end() && is_simple_name_char(peek())) name += text_[pos_++];
    if (name.empty()) error("", "expected a name");
    return name;
  }

  std::string parse_word() {
    skip_space();
    std::string word;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) {
      word += text_[pos_++];
    }
    if (word.empty())
      error("", std::string("expected a word, found '") +
                    (at_end() ? "end of text" : std::string(1, peek())) + "'");
    return word;
  }

  bool peek_word(std::string_view word) const { return text_.substr(pos_, word.size()) == word; }

  void expect_word(std::string_view word) {
    const SourceLocation at = location();
    const std::string found = parse_word();
    if (found != word) {
      throw InputError(
          Diagnostic{at, "", "expected '" + std::string(word) + "', found '" + found + "'"});
    }
  }

  void expect(char c) {
    skip_space();
    if (at_end() || peek() != c) {
      error("", std::string("expected '") + c + "', found " +
                    (at_end() ? std::string("end of text") : "'" + std::string(1, peek()) + "'"));
    }
    ++pos_;
  }

  bool try_consume(char c) {
    skip_space();
    if (!at_end() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void skip_space() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "//") {
        while (!at_end() && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  SourceLocation location() const {
    SourceLocation at{source_, 1, 1};
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++at.line;
        at.column = 1;
      } else {
        ++at.column;
      }
    }
    return at;
  }

  [[noreturn]] void error(const std::string& key, const std::string& message) const {
    throw InputError(Diagnostic{location(), key, message});
  }

  template <class T>
  void check(const Result<T>& result, const SourceLocation& at) const {
    if (!result) throw InputError(Diagnostic{at, "", result.reason()});
  }

  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
};

}  // namespace

Graph parse_text(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).parse();
}

Graph read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input_error({path, 0, 0}, "", "cannot open the file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_text(buffer.str(), path);
}

}  // namespace tessel::ir
