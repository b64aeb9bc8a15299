// Reading and writing NumPy .npy files with located errors.
#include "support/npy.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

#include "support/diagnostic.hpp"
#include "support/files.hpp"

namespace tessel {

namespace {

constexpr std::uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DtypeEntry {
  NpyDtype dtype;
  const char* descr;  // as written; '<' little-endian, '|' not applicable (one byte)
};
constexpr DtypeEntry kDtypes[] = {
    {NpyDtype::f32, "<f4"}, {NpyDtype::i8, "|i1"}, {NpyDtype::i16, "<i2"}, {NpyDtype::i32, "<i4"}};

[[noreturn]] void fail_at(const std::string& name, const std::string& key, std::string message) {
  throw_input_error(SourceLocation{name, 0, 0}, key, std::move(message));
}

std::optional<NpyDtype> dtype_from_descr(std::string_view descr) {
  for (const auto& e : kDtypes)
    if (descr == e.descr) return e.dtype;
  if (descr == "<i1" || descr == "i1") return NpyDtype::i8;  // NumPy accepts these spellings
  return std::nullopt;
}

// A tiny parser for the header's Python dict literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Only what NumPy writes is accepted.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  void parse(std::string& descr, bool& fortran, std::vector<std::int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal("header");
      expect(':');
      skip_space();
      if (key == "descr") {
        descr = string_literal("header.descr");
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail_at(name_, "header." + key,
                "unknown header key (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail("header", "expected ',' or '}'");
    }
    if (!have_descr) fail_at(name_, "header.descr", "missing");
    if (!have_fortran) fail_at(name_, "header.fortran_order", "missing");
    if (!have_shape) fail_at(name_, "header.shape", "missing");
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    fail_at(name_, key,
            what + " at header character " + std::to_string(pos_) + " in \"" + std::string(text_) +
                "\"");
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail("header", std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string_literal(const std::string& key) {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(key, "expected a quoted string");
    const auto end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail(key, "unterminated string");
    std::string out(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("header.fortran_order", "expected True or False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return dims;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail("header.shape", "expected a non-negative integer");
      std::int64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
          fail("header.shape", "dimension too large");
        value = value * 10 + (peek() - '0');
        ++pos_;
      }
      dims.push_back(value);
      skip_space();
      if (peek() == ',') ++pos_;
    }
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

NpyArray make(NpyDtype dtype, std::vector<std::int64_t> shape, const void* data,
              std::size_t count) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  if (static_cast<std::size_t>(a.element_count()) != count)
    throw std::invalid_argument("NpyArray: shape does not match the number of values");
  a.bytes.resize(count * npy_dtype_size(dtype));
  if (count != 0) std::memcpy(a.bytes.data(), data, a.bytes.size());
  return a;
}

}  // namespace

std::string_view npy_dtype_name(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::f32:
      return "float32";
    case NpyDtype::i8:
      return "int8";
    case NpyDtype::i16:
      return "int16";
    case NpyDtype::i32:
      return "int32";
  }
  return "?";
}

std::size_t npy_dtype_size(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::f32:
    case NpyDtype::i32:
      return 4;
    case NpyDtype::i16:
      return 2;
    case NpyDtype::i8:
      return 1;
  }
  return 0;
}

std::int64_t NpyArray::element_count() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

NpyArray NpyArray::from_f32(std::vector<std::int64_t> shape, std::span<const float> values) {
  return make(NpyDtype::f32, std::move(shape), values.data(), values.size());
}
NpyArray NpyArray::from_i8(std::vector<std::int64_t> shape, std::span<const std::int8_t> values) {
  return make(NpyDtype::i8, std::move(shape), values.data(), values.size());
}
NpyArray NpyArray::from_i16(std::vector<std::int64_t> shape, std::span<const std::int16_t> values) {
  return make(NpyDtype::i16, std::move(shape), values.data(), values.size());
}
NpyArray NpyArray::from_i32(std::vector<std::int64_t> shape, std::span<const std::int32_t> values) {
  return make(NpyDtype::i32, std::move(shape), values.data(), values.size());
}

NpyArray parse_npy(std::span<const std::uint8_t> content, const std::string& name) {
  if (content.size() < 10 || std::memcmp(content.data(), kMagic, sizeof kMagic) != 0)
    fail_at(name, "magic",
            "not a .npy file (expected the magic string \\x93NUMPY; file has " +
                std::to_string(content.size()) + " bytes)");
  const int major = content[6];
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = content[8] | (std::size_t{content[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (content.size() < 12) fail_at(name, "header", "truncated header length");
    header_len = content[8] | (std::size_t{content[9]} << 8) | (std::size_t{content[10]} << 16) |
                 (std::size_t{content[11]} << 24);
    header_start = 12;
  } else {
    fail_at(name, "magic",
            "unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(content[7]) + " (expected 1.x, 2.x or 3.x)");
  }
  if (header_start + header_len > content.size())
    fail_at(name, "header",
            "truncated: header says " + std::to_string(header_len) + " bytes but the file has " +
                std::to_string(content.size() - header_start) + " after the preamble");
  const std::string_view header(reinterpret_cast<const char*>(content.data() + header_start),
                                header_len);
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  HeaderParser(header, name).parse(descr, fortran, shape);

  const auto dtype = dtype_from_descr(descr);
  if (!dtype)
    fail_at(name, "header.descr",
            "unsupported dtype '" + descr +
                "' (expected float32 '<f4', int8 '|i1', int16 '<i2' or int32 '<i4')");
  if (fortran) fail_at(name, "header.fortran_order", "Fortran-order arrays are not supported");

  NpyArray array;
  array.dtype = *dtype;
  array.shape = std::move(shape);
  const std::size_t data_start = header_start + header_len;
  // The data size in checked arithmetic: a shape whose byte count wraps (2^32 x 2^32) must not
  // match a short data section.
  std::uint64_t expected = npy_dtype_size(array.dtype);
  for (const std::int64_t dim : array.shape) {
    if (dim != 0 && expected > files::kMaxArrayBytes / static_cast<std::uint64_t>(dim))
      fail_at(name, "header.shape",
              "the shape needs more than " + std::to_string(files::kMaxArrayBytes) +
                  " data bytes, the limit for a .npy array");
    expected *= static_cast<std::uint64_t>(dim);
  }
  const std::size_t actual = content.size() - data_start;
  if (actual != expected)
    fail_at(
        name, "data",
        "shape " +
            [&] {
              std::string s = "(";
              for (std::size_t i = 0; i < array.shape.size(); ++i)
                s += (i ? ", " : "") + std::to_string(array.shape[i]);
              return s + ")";
            }() +
            " of " + std::string(npy_dtype_name(array.dtype)) + " needs " +
            std::to_string(expected) + " data bytes but the file has " + std::to_string(actual) +
            " (from byte offset " + std::to_string(data_start) + ")");
  array.bytes.assign(content.begin() + static_cast<std::ptrdiff_t>(data_start), content.end());
  return array;
}

NpyArray read_npy(const std::string& path) {
  const std::string content = files::read_file(path, files::kMaxArrayBytes + 65536);
  return parse_npy(std::span(reinterpret_cast<const std::uint8_t*>(content.data()), content.size()),
                   path);
}

void check_finite(const NpyArray& array, const std::string& name) {
  if (array.dtype != NpyDtype::f32) return;
  const std::size_t count = array.bytes.size() / sizeof(float);
  for (std::size_t i = 0; i < count; ++i) {
    float x = 0;
    std::memcpy(&x, array.bytes.data() + i * sizeof(float), sizeof(float));
    if (std::isfinite(x)) continue;
    std::string index;
    std::size_t rest = i;
    for (std::size_t d = array.shape.size(); d-- > 0;) {
      const auto extent = static_cast<std::size_t>(array.shape[d]);
      index = std::to_string(rest % extent) + (index.empty() ? "" : ", ") + index;
      rest /= extent;
    }
    fail_at(name, "data[" + index + "]",
            std::string("value is ") +
                (std::isnan(x) ? "NaN"
                 : x > 0       ? "+Inf"
                               : "-Inf") +
                " (flat index " + std::to_string(i) +
                "); network inputs and calibration data must be finite");
  }
}

std::vector<std::uint8_t> serialize_npy(const NpyArray& array) {
  std::string descr;
  for (const auto& e : kDtypes)
    if (e.dtype == array.dtype) descr = e.descr;
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < array.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1) header += ',';  // NumPy writes "(5,)"
  header += "), }";
  // Exactly as NumPy (1.17+) writes it: room for the first axis to grow to 21 digits, then
  // spaces and a newline so that the data starts on a 64-byte boundary (a full 64 when the
  // header happens to be aligned already), so our files are byte-identical to np.save's.
  if (!array.shape.empty()) header.append(21 - std::to_string(array.shape[0]).size(), ' ');
  const std::size_t preamble = 10;
  header.append(64 - (preamble + header.size() + 1) % 64, ' ');
  header += '\n';
  std::vector<std::uint8_t> out(std::begin(kMagic), std::end(kMagic));
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.bytes.begin(), array.bytes.end());
  return out;
}

void write_npy(const std::string& path, const NpyArray& array,
               const std::vector<std::string>& inputs) {
  files::write_file(path, std::span<const std::uint8_t>(serialize_npy(array)), inputs);
}

}  // namespace tessel
