// Analytic block-RAM mapping of the config's scratchpads onto 7-series RAMB36E1 / RAMB18E1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "configs/hw_config.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// The port assumption of the mapping, as resources.json states it: what one bank of a
/// scratchpad is taken to be. It is the config's physical description (banks x
/// port_width_bytes), not the RTL's (hw/rtl/tessel_sram.sv serves two writes and four reads a
/// cycle at any byte address from two copies of its banks on a double-rate clock: rtl_bram()
/// below; docs/fpga.md "The scratchpads in block RAM").
inline constexpr std::string_view kBramPortAssumption =
    "each bank of a scratchpad is one simple dual-port block RAM: one write port and one "
    "synchronous read port, each port_width_bytes wide with byte write enables, depth "
    "size_bytes / (banks * port_width_bytes) words; the 9th (parity) bit of each byte is not "
    "used; one primitive shape per bank (the cheapest), no LUT-RAM for shallow banks";

/// One 7-series block-RAM primitive in one aspect ratio (UG473, tables 1-3 and 1-4).
struct BramShape {
  std::string primitive;  ///< "RAMB36E1" or "RAMB18E1"
  int depth_words = 0;    ///< words per primitive
  int data_bits = 0;      ///< data bits per word usable for byte data (x9 -> 8, x72 -> 64)
  int port_bits = 0;      ///< the port width as UG473 names the shape (x9, x72, ...)
  bool simple_dual_port_only = false;  ///< x72 / x36-on-18: SDP mode only
  double bram36_cost = 0;              ///< 1 for RAMB36E1, 0.5 for RAMB18E1 (half a tile)

  /// "512x72", "2Kx9", "32Kx1".
  std::string name() const;

  bool operator==(const BramShape&) const = default;
};

/// Every shape the mapping considers, RAMB36E1 first, widest first within a primitive.
const std::vector<BramShape>& bram_shapes();

/// How one scratchpad maps: every bank the same shape.
struct ScratchpadBram {
  std::string name;  ///< the scratchpad's config name
  std::int64_t size_bytes = 0;
  int banks = 0;
  int port_width_bytes = 0;
  std::int64_t bank_depth_words = 0;  ///< size_bytes / (banks * port_width_bytes)
  int bank_width_bits = 0;            ///< 8 * port_width_bytes
  BramShape shape;                    ///< the cheapest shape (ties: fewer primitives, then order)
  std::int64_t primitives_per_bank = 0;  ///< ceil(depth / shape depth) * ceil(width / data bits)
  std::int64_t bram18 = 0;               ///< RAMB18E1 primitives in all banks
  std::int64_t bram36 = 0;               ///< RAMB36E1 primitives in all banks
  /// bram36 + bram18 / 2 (block-RAM tiles, as Vivado's utilization report counts them).
  double bram36_equivalent() const { return static_cast<double>(bram36) + bram18 / 2.0; }
  /// Data bits stored / data bits the primitives could hold (1.0: no waste).
  double bit_efficiency = 0;

  bool operator==(const ScratchpadBram&) const = default;
};

/// Maps one scratchpad: for each shape of bram_shapes(), primitives per bank =
/// ceil(depth / shape.depth_words) * ceil(8 * port_width_bytes / shape.data_bits); picks the
/// shape of least bram36_cost * primitives, then fewest primitives, then the first listed.
/// Example: edge-small's unified buffer (128 KiB, 8 banks x 8 B: 2048 x 64 bits per bank) maps
/// to 4 RAMB36E1 512x72 per bank, 32 in all.
ScratchpadBram map_scratchpad(const ScratchpadConfig& scratchpad);

/// All of a config's scratchpads, in config order.
struct ScratchpadBramMap {
  std::vector<ScratchpadBram> scratchpads;
  std::int64_t bram18 = 0;
  std::int64_t bram36 = 0;
  double bram36_equivalent() const { return static_cast<double>(bram36) + bram18 / 2.0; }

  bool operator==(const ScratchpadBramMap&) const = default;
};

/// map_scratchpad over config.scratchpads, with the totals.
ScratchpadBramMap map_scratchpads(const HwConfig& config);

/// The block RAM of hw/rtl/tessel_sram.sv, the RTL's scratchpads, by its own rule: per
/// scratchpad, `banks` banks of 4-byte words (the power of two above widest port / 4, the
/// ports as tessel_top sizes them: the DMA's DW bytes, the compute reads and write), each
/// ceil(size / (4 banks)) words deep, kept twice; a bank of up to 1024 words is one RAMB36E1
/// tile in 1K x 36 true dual-port mode (or two RAMB18E1), deeper ones ceil(depth / 1024).
/// edge-small: 16 banks x 2048 words x 2 copies = 64 RAMB36E1, the count Yosys gives
/// (tests/fpga/synth_test.cpp checks the two agree). Shallow banks (tens of words) may be LUT
/// RAM in synthesis; this counts them as block RAM.
struct RtlBram {
  int banks = 0;                               ///< per scratchpad
  int widest_port_bytes = 0;                   ///< what sets `banks`
  std::vector<std::int64_t> bank_depth_words;  ///< per scratchpad, config order
  std::int64_t bram36 = 0;                     ///< tiles, both copies, every scratchpad
};
Result<RtlBram> rtl_bram(const HwConfig& config);

}  // namespace tessel::fpga
