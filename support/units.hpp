// Exact parsing and formatting of byte sizes ("768KiB") and bandwidths ("1.5GB/s").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/result.hpp"

namespace tessel::units {

/// Parses a byte size: a non-negative decimal number, optional spaces, and a unit among
/// B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024); no unit means
/// bytes. Exact: "768KiB" = 786432, "768KB" = 768000, "1.5KiB" = 1536. Fails (with a message
/// naming the text) on a negative number, an unknown unit, a fraction of a byte, or a value
/// above 2^62.
Result<std::int64_t> parse_size_bytes(std::string_view text);

/// Parses a bandwidth: a non-negative decimal number, optional spaces, and a unit among
/// B/s, KB/s, MB/s, GB/s, TB/s and KiB/s, MiB/s, GiB/s, TiB/s. The unit is required.
/// "1.5GB/s" = 1.5e9, "800MiB/s" = 838860800. Computed in integers, then rounded once.
Result<double> parse_bandwidth_bytes_per_second(std::string_view text);

/// The largest binary unit that divides `bytes` exactly: 786432 -> "768KiB", 1000 -> "1000B".
std::string format_size_bytes(std::int64_t bytes);

/// A bandwidth with the largest decimal unit keeping at most 3 fraction digits exact:
/// 1.5e9 -> "1.5GB/s"; otherwise "<bytes>B/s" with the shortest round-trip digits.
std::string format_bandwidth(double bytes_per_second);

}  // namespace tessel::units
