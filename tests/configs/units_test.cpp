// Sizes and bandwidths parse exactly; bad units fail with a message naming the text.
#include "support/units.hpp"

#include <gtest/gtest.h>

namespace tessel::units {
namespace {

std::int64_t size(std::string_view text) {
  auto parsed = parse_size_bytes(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.reason());
  return parsed.ok() ? parsed.value() : -1;
}

double bandwidth(std::string_view text) {
  auto parsed = parse_bandwidth_bytes_per_second(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.reason());
  return parsed.ok() ? parsed.value() : -1;
}

std::string size_error(std::string_view text) {
  auto parsed = parse_size_bytes(text);
  return parsed.ok() ? "parsed as " + std::to_string(parsed.value()) : parsed.reason();
}

std::string bandwidth_error(std::string_view text) {
  auto parsed = parse_bandwidth_bytes_per_second(text);
  return parsed.ok() ? "parsed" : parsed.reason();
}

TEST(Units, binary_and_decimal_size_units_are_exact) {
  EXPECT_EQ(size("768KiB"), 786432);
  EXPECT_EQ(size("768KB"), 768000);
  EXPECT_EQ(size("1.5KiB"), 1536);
  EXPECT_EQ(size("24MiB"), 25165824);
  EXPECT_EQ(size("2MB"), 2000000);
  EXPECT_EQ(size("1GiB"), 1073741824);
  EXPECT_EQ(size("1TB"), 1000000000000);
  EXPECT_EQ(size("0.25MiB"), 262144);
}

TEST(Units, size_without_unit_is_bytes_and_spaces_are_allowed) {
  EXPECT_EQ(size("4096"), 4096);
  EXPECT_EQ(size("64B"), 64);
  EXPECT_EQ(size("32 KiB"), 32768);
  EXPECT_EQ(size("  0B "), 0);
}

TEST(Units, bad_sizes_fail_with_the_text_and_the_reason) {
  EXPECT_EQ(size_error("-5KiB"), "size '-5KiB' is negative");
  EXPECT_EQ(size_error("12XB"),
            "size '12XB' has unknown unit 'XB' (expected one of B, KB, MB, GB, TB, KiB, MiB, "
            "GiB, TiB)");
  EXPECT_EQ(size_error("768kib"), "size '768kib' has unknown unit 'kib'; did you mean 'KiB'?");
  EXPECT_EQ(size_error("1.5B"), "size '1.5B' is not a whole number of bytes");
  EXPECT_EQ(size_error("0.1KiB"), "size '0.1KiB' is not a whole number of bytes");
  EXPECT_EQ(size_error("KiB"), "size 'KiB' does not start with a number");
  EXPECT_EQ(size_error(""), "empty size");
  EXPECT_EQ(size_error("5GiB/s"),
            "size '5GiB/s' has unknown unit 'GiB/s' (expected one of B, KB, MB, GB, TB, KiB, "
            "MiB, GiB, TiB)");
  EXPECT_EQ(size_error("8TiB"), "parsed as 8796093022208");
  EXPECT_EQ(size_error("4194305TiB"), "size '4194305TiB' is too large (above 2^62 bytes)");
}

TEST(Units, bandwidths_are_exact_for_decimal_and_binary_units) {
  EXPECT_EQ(bandwidth("1.5GB/s"), 1.5e9);
  EXPECT_EQ(bandwidth("25.6 GB/s"), 25.6e9);
  EXPECT_EQ(bandwidth("800MiB/s"), 838860800.0);
  EXPECT_EQ(bandwidth("1.2TB/s"), 1.2e12);
  EXPECT_EQ(bandwidth("800MB/s"), 8e8);
  EXPECT_EQ(bandwidth("12B/s"), 12.0);
  EXPECT_EQ(bandwidth("0.1KB/s"), 100.0);
  // Not an integer: one correctly rounded division.
  EXPECT_EQ(bandwidth("0.5B/s"), 0.5);
}

TEST(Units, bad_bandwidths_fail_with_the_text_and_the_reason) {
  EXPECT_EQ(bandwidth_error("1500000000"),
            "bandwidth '1500000000' needs a unit (e.g. GB/s, MiB/s)");
  EXPECT_EQ(bandwidth_error("1.5GB"),
            "bandwidth '1.5GB' has unknown unit 'GB'; did you mean 'GB/s'?");
  EXPECT_EQ(bandwidth_error("1.5gb/s"),
            "bandwidth '1.5gb/s' has unknown unit 'gb/s'; did you mean 'GB/s'?");
  EXPECT_EQ(bandwidth_error("2Gbps"),
            "bandwidth '2Gbps' has unknown unit 'Gbps' (expected one of B/s, KB/s, MB/s, GB/s, "
            "TB/s, KiB/s, MiB/s, GiB/s, TiB/s)");
  EXPECT_EQ(bandwidth_error("-1GB/s"), "bandwidth '-1GB/s' is negative");
}

TEST(Units, sizes_format_with_the_largest_exact_binary_unit) {
  EXPECT_EQ(format_size_bytes(786432), "768KiB");
  EXPECT_EQ(format_size_bytes(768000), "750KiB");  // 768000 = 750 x 1024
  EXPECT_EQ(format_size_bytes(1000), "1000B");
  EXPECT_EQ(format_size_bytes(25165824), "24MiB");
  EXPECT_EQ(format_size_bytes(0), "0B");
}

TEST(Units, bandwidths_format_readably_and_read_back_identically) {
  EXPECT_EQ(format_bandwidth(1.5e9), "1.5GB/s");
  EXPECT_EQ(format_bandwidth(1.2e12), "1.2TB/s");
  EXPECT_EQ(format_bandwidth(8e8), "800MB/s");
  EXPECT_EQ(format_bandwidth(838860800.0), "838860.8KB/s");
  for (double value : {1.5e9, 25.6e9, 838860800.0, 1.2e12, 12.0, 1e9 / 3}) {
    EXPECT_EQ(bandwidth(format_bandwidth(value)), value) << format_bandwidth(value);
  }
}

}  // namespace
}  // namespace tessel::units
