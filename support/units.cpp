// Unit parsing in exact integer arithmetic: mantissa digits times a unit multiplier.
#include "support/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "support/strings.hpp"

namespace tessel::units {
namespace {

// 128-bit intermediates keep digits x multiplier exact (digits <= 2^62 times <= 2^40).
__extension__ typedef unsigned __int128 Wide;

/// A decimal number split into its digits without the point: value = digits / 10^fraction.
struct Decimal {
  Wide digits = 0;
  int fraction_digits = 0;
};

struct Unit {
  std::string_view name;
  std::uint64_t multiplier;
};

constexpr std::uint64_t kKi = 1024;
constexpr std::array<Unit, 9> kSizeUnits = {{{"B", 1},
                                             {"KB", 1000},
                                             {"MB", 1000'000},
                                             {"GB", 1000'000'000},
                                             {"TB", 1000'000'000'000},
                                             {"KiB", kKi},
                                             {"MiB", kKi* kKi},
                                             {"GiB", kKi* kKi* kKi},
                                             {"TiB", kKi* kKi* kKi* kKi}}};

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

/// Splits `text` into a decimal number and the unit after it (spaces between are allowed).
Result<std::pair<Decimal, std::string_view>> split_number(std::string_view text,
                                                          std::string_view what) {
  const std::string_view original = text;
  text = trim(text);
  if (text.empty()) return fail("empty " + std::string(what));
  if (text.front() == '-') {
    return fail(std::string(what) + " " + quoted(original) + " is negative");
  }
  if (text.front() == '+') text.remove_prefix(1);
  Decimal number;
  std::size_t i = 0;
  int digit_count = 0;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (digit_count >= 30) {
      return fail(std::string(what) + " " + quoted(original) + " has too many digits");
    }
    number.digits = number.digits * 10 + static_cast<unsigned>(c - '0');
    ++digit_count;
    if (seen_point) ++number.fraction_digits;
  }
  if (digit_count == 0) {
    return fail(std::string(what) + " " + quoted(original) + " does not start with a number");
  }
  return std::pair{number, trim(text.substr(i))};
}

Wide power_of_ten(int exponent) {
  Wide result = 1;
  for (int i = 0; i < exponent; ++i) result *= 10;
  return result;
}

std::string unit_list(std::string_view suffix) {
  std::string out;
  for (const auto& unit : kSizeUnits) {
    out += (out.empty() ? "" : ", ") + std::string(unit.name) + std::string(suffix);
  }
  return out;
}

/// Finds `unit` (with `suffix`, "" or "/s") among kSizeUnits; the message suggests a unit that
/// differs only in letter case.
Result<std::uint64_t> find_unit(std::string_view unit, std::string_view suffix,
                                std::string_view original, std::string_view what) {
  for (const auto& candidate : kSizeUnits) {
    if (std::string(candidate.name) + std::string(suffix) == unit) return candidate.multiplier;
  }
  std::string message = std::string(what) + " " + quoted(original) + " has unknown unit " +
                        quoted(unit) + " (expected one of " + unit_list(suffix) + ")";
  if (!suffix.empty()) {
    for (const auto& candidate : kSizeUnits) {
      if (candidate.name == unit) {  // a size unit where a rate belongs: "1.5GB" for "1.5GB/s"
        return fail(message.substr(0, message.find(" (expected")) + "; did you mean '" +
                    std::string(unit) + std::string(suffix) + "'?");
      }
    }
  }
  for (const auto& candidate : kSizeUnits) {
    const std::string spelled = std::string(candidate.name) + std::string(suffix);
    bool same_ignoring_case = spelled.size() == unit.size();
    for (std::size_t i = 0; same_ignoring_case && i < unit.size(); ++i) {
      same_ignoring_case = std::tolower(static_cast<unsigned char>(spelled[i])) ==
                           std::tolower(static_cast<unsigned char>(unit[i]));
    }
    if (same_ignoring_case) {
      message = std::string(what) + " " + quoted(original) + " has unknown unit " + quoted(unit) +
                "; did you mean '" + spelled + "'?";
      break;
    }
  }
  return fail(message);
}

}  // namespace

Result<std::int64_t> parse_size_bytes(std::string_view text) {
  auto split = split_number(text, "size");
  if (!split) return split.failure();
  const auto [number, unit_text] = split.value();
  std::uint64_t multiplier = 1;
  if (!unit_text.empty()) {
    auto unit = find_unit(unit_text, "", text, "size");
    if (!unit) return unit.failure();
    multiplier = unit.value();
  }
  const Wide scale = power_of_ten(number.fraction_digits);
  const Wide limit = Wide{1} << 62;
  if (number.digits > limit) return fail("size " + quoted(text) + " is too large");
  const Wide scaled = number.digits * multiplier;
  if (scaled % scale != 0) {
    return fail("size " + quoted(text) + " is not a whole number of bytes");
  }
  const Wide bytes = scaled / scale;
  if (bytes > limit) return fail("size " + quoted(text) + " is too large (above 2^62 bytes)");
  return static_cast<std::int64_t>(bytes);
}

Result<double> parse_bandwidth_bytes_per_second(std::string_view text) {
  auto split = split_number(text, "bandwidth");
  if (!split) return split.failure();
  const auto [number, unit_text] = split.value();
  if (unit_text.empty()) {
    return fail("bandwidth " + quoted(text) + " needs a unit (e.g. GB/s, MiB/s)");
  }
  auto unit = find_unit(unit_text, "/s", text, "bandwidth");
  if (!unit) return unit.failure();
  if (number.digits > (Wide{1} << 62)) return fail("bandwidth " + quoted(text) + " is too large");
  const Wide scaled = number.digits * unit.value();
  const Wide scale = power_of_ten(number.fraction_digits);
  // Exact when the quotient is an integer below 2^53 (all practical bandwidths); otherwise
  // one correctly-rounded long double division.
  if (scaled % scale == 0) return static_cast<double>(scaled / scale);
  return static_cast<double>(static_cast<long double>(scaled) / static_cast<long double>(scale));
}

std::string format_size_bytes(std::int64_t bytes) {
  static constexpr std::array<std::pair<std::string_view, std::int64_t>, 4> kBinary = {
      {{"TiB", std::int64_t{1} << 40},
       {"GiB", std::int64_t{1} << 30},
       {"MiB", std::int64_t{1} << 20},
       {"KiB", std::int64_t{1} << 10}}};
  for (const auto& [name, multiplier] : kBinary) {
    if (bytes != 0 && bytes % multiplier == 0) {
      return std::to_string(bytes / multiplier) + std::string(name);
    }
  }
  return std::to_string(bytes) + "B";
}

std::string format_bandwidth(double bytes_per_second) {
  static constexpr std::array<std::pair<std::string_view, double>, 4> kDecimal = {
      {{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}}};
  for (const auto& [name, multiplier] : kDecimal) {
    if (bytes_per_second < multiplier) continue;
    const double thousandths = bytes_per_second / multiplier * 1000;
    if (thousandths == std::round(thousandths) && thousandths < 1e15) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.3f", thousandths / 1000);
      std::string digits = buffer;
      while (digits.back() == '0') digits.pop_back();
      if (digits.back() == '.') digits.pop_back();
      // Only use the unit when the printed digits read back as the same value.
      if (std::stod(digits) * multiplier == bytes_per_second) return digits + std::string(name);
    }
  }
  std::array<char, 64> buffer{};
  const auto [end, error] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), bytes_per_second);
  (void)error;
  return std::string(buffer.data(), end) + "B/s";
}

}  // namespace tessel::units
