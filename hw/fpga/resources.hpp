// FPGA resource figures (resources.json): what synthesis used, as an area axis for sweeps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hw/fpga/bram_map.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// Counts of Xilinx 7-series primitives in a synthesised netlist, grouped the way Vivado's
/// utilization report groups them. Figures are Yosys's mapping, not Vivado's: expect Vivado's
/// LUT count after opt/place to differ (typically lower; it packs LUT pairs and trims more).
struct ResourceCounts {
  std::int64_t lut = 0;            ///< LUT1..LUT6 and INV (Vivado maps INV to a LUT1)
  std::int64_t lut_as_memory = 0;  ///< LUTs used as distributed RAM or SRL, in LUTs (RAM64M = 4)
  std::int64_t ff = 0;             ///< FDRE, FDSE, FDCE, FDPE
  std::int64_t latch = 0;          ///< LDCE, LDPE (a latch in an accelerator is usually a bug)
  std::int64_t bram18 = 0;         ///< RAMB18E1
  std::int64_t bram36 = 0;         ///< RAMB36E1
  std::int64_t dsp = 0;            ///< DSP48E1
  std::int64_t carry = 0;          ///< CARRY4
  std::int64_t muxf = 0;           ///< MUXF7, MUXF8
  std::int64_t io = 0;             ///< IBUF, OBUF, IOBUF, OBUFT, IBUFDS, OBUFDS
  std::int64_t clock_buffers = 0;  ///< BUFG, BUFGCTRL, BUFH
  std::map<std::string, std::int64_t> cells_by_type;  ///< every cell type, as Yosys reports
  std::map<std::string, std::int64_t> unclassified;   ///< types in none of the groups above

  /// Block RAM tiles as Vivado counts them: bram36 + bram18 / 2.
  double bram36_equivalent() const { return static_cast<double>(bram36) + bram18 / 2.0; }

  bool operator==(const ResourceCounts&) const = default;
};

/// A named count of ResourceCounts.
struct CountField {
  const char* name;
  std::int64_t ResourceCounts::*field;
};
/// Every count of ResourceCounts in its JSON order: the one table that writes and reads them
/// back (resources.json) and that the per-unit breakdown subtracts (unit_cost.cpp).
inline constexpr CountField kCountFields[] = {
    {"lut", &ResourceCounts::lut},
    {"lut_as_memory", &ResourceCounts::lut_as_memory},
    {"ff", &ResourceCounts::ff},
    {"latch", &ResourceCounts::latch},
    {"bram18", &ResourceCounts::bram18},
    {"bram36", &ResourceCounts::bram36},
    {"dsp", &ResourceCounts::dsp},
    {"carry", &ResourceCounts::carry},
    {"muxf", &ResourceCounts::muxf},
    {"io", &ResourceCounts::io},
    {"clock_buffers", &ResourceCounts::clock_buffers},
};

/// One row of the per-unit breakdown (hw/fpga/unit_cost.hpp): what one unit of the design costs.
struct UnitCost {
  std::string name;
  std::string module;          ///< "" for the "other" row
  std::int64_t instances = 0;  ///< instances of the module in the design (0: not built)
  ResourceCounts counts;       ///< the instances' cells with their submodules'
  std::string note;

  bool operator==(const UnitCost&) const = default;
};

/// The name of the last row: the design's cells in none of the units.
inline constexpr std::string_view kOtherUnit = "other";

/// How resources.json's "units" are measured (written beside them).
inline constexpr std::string_view kUnitsMethod =
    "synthesised: Yosys `stat` of the hierarchical netlist after synth_xilinx, before flatten "
    "(yosys_stat_hier.txt); a unit is every instance of its module with its submodules; "
    "'other' is the whole design minus the units";

/// Why resources.json carries no Fmax: Yosys 0.23 has no usable Xilinx timing model.
inline constexpr std::string_view kNoFmaxReason =
    "Yosys 0.23 gives no Fmax for Xilinx netlists: its `sta` pass has no timing arcs for CARRY4 "
    "or DSP48E1 and does not end paths at flip-flops, so its arrival times are not a clock "
    "period; run vivado.tcl and read vivado/timing_summary.rpt (WNS against the XDC clock)";

/// One synthesis result: the counts and where they came from.
struct FpgaResources {
  std::string config_name;
  std::string config_hash;     ///< content_hash of the HwConfig
  std::string part;            ///< the target part
  std::string yosys_family;    ///< synth_xilinx -family
  std::string top;             ///< the synthesised top module
  double clock_mhz = 0;        ///< the XDC clock target
  std::string tool;            ///< Yosys's version line, e.g. "Yosys 0.23 (git sha1 7ce5011c24b)"
  std::string tessel_version;  ///< tessel::version() of the writer
  double synth_seconds = 0;    ///< wall-clock time of the Yosys run
  ResourceCounts counts;
  std::optional<double> fmax_mhz;  ///< estimated Fmax when a tool gave one; null otherwise
  std::string fmax_reason;         ///< why fmax_mhz is null (empty when it is set)
  /// Modules Yosys kept as black boxes: their contents are in none of `counts`.
  std::vector<std::string> black_boxes;
  /// The scratchpads' block RAM, mapped analytically (bram_map.hpp), when they were black boxes.
  /// Never part of `counts`, which are Yosys's figures only.
  std::optional<ScratchpadBramMap> scratchpad_bram;
  /// Per unit, from the hierarchical netlist (unit_cost.hpp); the last row is "other". Empty
  /// when the design names no units.
  std::vector<UnitCost> units;

  /// counts.bram36_equivalent() plus the analytic scratchpad_bram (when present): the design's
  /// block-RAM tiles, synthesised and analytic together.
  double bram36_equivalent_total() const {
    return counts.bram36_equivalent() +
           (scratchpad_bram ? scratchpad_bram->bram36_equivalent() : 0.0);
  }

  bool operator==(const FpgaResources&) const = default;
};

/// Classifies the cell counts of Yosys's `stat -json` output (`design.num_cells_by_type`, or the
/// one module's when there is no `design` entry) and returns them with the `creator` line as
/// the tool. Fails on text that is not such JSON, naming `file_label`.
Result<std::pair<ResourceCounts, std::string>> counts_from_yosys_stat(
    std::string_view json_text, const std::string& file_label);

/// The cells of `cells` (type -> count) in the groups above; types in none go to unclassified.
ResourceCounts classify_cells(const std::map<std::string, std::int64_t>& cells);

/// resources.json text (schema "tessel.fpga.resources/2", docs/fpga.md): 2-space indented, keys in
/// a fixed order.
std::string to_json(const FpgaResources& resources);

/// Reads a resources.json written by `tessel fpga` (schema "tessel.fpga.resources/2"). Fails,
/// naming the path and the key, when the file is unreadable, not that schema, or a count is
/// missing or negative, or a scratchpad's shape is not one of bram_shapes().
Result<FpgaResources> read_resources(const std::string& path);

/// As read_resources, from text; `file_label` names it in messages.
Result<FpgaResources> parse_resources(std::string_view text, const std::string& file_label);

}  // namespace tessel::fpga
