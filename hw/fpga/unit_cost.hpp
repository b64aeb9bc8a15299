// What each unit of a synthesised design costs: Yosys's `stat` of the hierarchical netlist
// (after synth_xilinx, before flatten), a unit being one module with its submodules.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hw/fpga/resources.hpp"
#include "support/result.hpp"

namespace tessel::fpga {

/// A unit the flow reports apart: every instance of `module` (parameterised copies included).
struct FpgaUnit {
  std::string name;    ///< e.g. "matrix array"
  std::string module;  ///< the RTL module, e.g. "tessel_matrix"
  std::string note;    ///< what the row includes or why it is empty (from the config)
};

/// Each module of the text of Yosys's `stat` (one "=== NAME ===" section a module, the counts
/// of its own cells by type, submodule instances included as cells of the submodule's type).
using ModuleCells = std::map<std::string, std::map<std::string, std::int64_t>>;

/// Parses Yosys 0.23's text `stat` output (the module sections before "=== design hierarchy
/// ==="). Fails, naming `file_label` and the line, on a cell line that is not "TYPE COUNT" or
/// on text without a module section.
Result<ModuleCells> parse_yosys_stat_text(std::string_view text, const std::string& file_label);

/// The RTL module a Yosys module name stands for: "tessel_dma" for "tessel_dma",
/// "$paramod\tessel_dma\IS_STORE=1'1" and "$paramod$3f2a...\tessel_dma".
std::string module_base_name(const std::string& yosys_name);

/// The cells of `module` with every submodule's cells in place of its instances (primitives
/// only). Fails when `module` is not in `modules` or the hierarchy has a cycle.
Result<std::map<std::string, std::int64_t>> hierarchical_cells(const ModuleCells& modules,
                                                               const std::string& module);

/// One row a unit (in `units`' order), then "other" = `whole` minus the units. `top` is the
/// design's top module. Fails when the top is missing, a unit module instantiates another
/// unit's module (its cells would be counted twice), or the units hold more of a resource than
/// `whole` (naming it).
Result<std::vector<UnitCost>> unit_costs(const ModuleCells& modules, const std::string& top,
                                         const std::vector<FpgaUnit>& units,
                                         const ResourceCounts& whole);

}  // namespace tessel::fpga
