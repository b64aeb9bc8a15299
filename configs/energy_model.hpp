// The per-action energy and per-component area model (docs/energy.md): published 45 nm figures,
// a fitted SRAM curve, DRAM per bit by technology and a first-order node scaling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "configs/hw_config.hpp"

namespace tessel {

/// A process node of docs/energy.md's table. Energies scale by
/// (feature_nm / 45) * (vdd / 0.9)^2 and areas by (feature_nm / 45)^2 from the 45 nm figures.
struct TechnologyNode {
  std::string_view name;  ///< "45nm", ...
  double feature_nm = 0;
  double vdd = 0;
  double energy_scale() const;
  double area_scale() const;
};

/// Every node the model knows, smallest feature last.
const std::vector<TechnologyNode>& technology_nodes();
/// The node called `name`, or nullopt.
std::optional<TechnologyNode> technology_node(std::string_view name);

/// A DRAM kind with its access energy per bit (interface + core, docs/energy.md's sources).
struct DramTechnology {
  std::string_view name;  ///< "ddr3", "ddr4", "lpddr4", "hbm2", "gddr5"
  double pj_per_bit = 0;
};

/// Every DRAM kind the model knows.
const std::vector<DramTechnology>& dram_technologies();
/// The DRAM kind called `name`, or nullopt.
std::optional<DramTechnology> dram_technology(std::string_view name);

/// Energy of one 64-bit access to one SRAM array of `bank_bytes` at 45 nm, in pJ: the power law
/// a * (bank_bytes / 1 KiB)^b least-squares fitted (in log-log) to Horowitz's three points
/// (8 KiB: 10 pJ, 32 KiB: 20 pJ, 1 MiB: 100 pJ). Arrays below 1 KiB cost what 1 KiB does.
double sram_64bit_access_pj_45nm(double bank_bytes);
/// The fit's coefficients {a, b} (for docs and tests).
std::pair<double, double> sram_fit_coefficients();

/// One scratchpad's per-byte energies and area.
struct ScratchpadEnergy {
  std::string name;
  double read_pj_per_byte = 0;
  double write_pj_per_byte = 0;
  double area_mm2 = 0;
};

/// Energy per action and area per component for one config: what the simulator's and the
/// scheduler's counts are multiplied by. Picojoules, square millimetres.
struct EnergyTable {
  std::string technology;       ///< node name
  std::string dram_technology;  ///< DRAM kind name, or "explicit" for a given pJ/B
  double mac_pj = 0;            ///< one MAC at the matrix unit's operand and accumulator widths
  double requant_pj = 0;        ///< one element requantized (vector unit)
  double add_pj = 0;            ///< one element of a residual add with rescale (vector unit)
  double pool_pj = 0;           ///< one window element of a pool (a compare or add)
  double lut_pj_per_byte = 0;   ///< one byte of table entry looked up by `lut`
  double reduce_pj = 0;         ///< one source element of `reduce` (a 32-bit add or compare)
  double square_pj = 0;         ///< one 8 x 8 multiply of a `reduce` sum of squares
  double mul_pj = 0;            ///< one element of `mul` (product, rescale, rounding)
  double softmax_pj = 0;        ///< one element of `softmax` (its per-element steps)
  double softmax_row_pj = 0;    ///< one row of `softmax` (its reciprocal 2^45 / S)
  double norm_pj = 0;           ///< one element of `norm` (statistics, normalise, affine)
  double norm_row_pj = 0;       ///< one row of `norm` (D, its square root and reciprocal)
  double dram_pj_per_byte = 0;  ///< one byte read from or written to DRAM
  double leakage_mw_per_mm2 = 0;
  std::vector<ScratchpadEnergy> scratchpads;  ///< config order
  double matrix_area_mm2 = 0;                 ///< rows * cols MACs
  double vector_area_mm2 = 0;                 ///< lanes vector ALUs

  /// Matrix + vector + every scratchpad.
  double area_mm2() const;
};

/// The table of `config`: its `energy:` section (or the 45 nm, DDR3 defaults when it has
/// none), with every explicit entry overriding the derived figure.
EnergyTable energy_table(const HwConfig& config);

/// The vector unit's counted actions (docs/energy.md; the simulator's per-instruction
/// `vector_ops` and the scheduler's prediction): elements, table bytes and rows.
struct VectorCounts {
  std::uint64_t requant_elements = 0;
  std::uint64_t add_elements = 0;
  std::uint64_t pool_window_elements = 0;
  std::uint64_t lut_bytes = 0;         ///< table-entry bytes looked up (`lut`)
  std::uint64_t reduce_elements = 0;   ///< source elements reduced (`reduce`)
  std::uint64_t square_elements = 0;   ///< of those, squared first (mode sumsq)
  std::uint64_t mul_elements = 0;      ///< elements of `mul`
  std::uint64_t softmax_elements = 0;  ///< elements of `softmax` rows
  std::uint64_t softmax_rows = 0;      ///< rows of `softmax`
  std::uint64_t norm_elements = 0;     ///< elements of `norm` rows
  std::uint64_t norm_rows = 0;         ///< rows of `norm`

  /// f(name, value) for every count, in the reports' order and with their JSON names.
  template <class F>
  void for_each(F&& f) const {
    f("requant_elements", requant_elements);
    f("add_elements", add_elements);
    f("pool_window_elements", pool_window_elements);
    f("lut_bytes", lut_bytes);
    f("reduce_elements", reduce_elements);
    f("square_elements", square_elements);
    f("mul_elements", mul_elements);
    f("softmax_elements", softmax_elements);
    f("softmax_rows", softmax_rows);
    f("norm_elements", norm_elements);
    f("norm_rows", norm_rows);
  }
  VectorCounts& operator+=(const VectorCounts& o);
  bool operator==(const VectorCounts&) const = default;
};

/// The actions a run performs (counted by the simulator, predicted by the scheduler).
struct ActionCounts : VectorCounts {
  std::uint64_t macs = 0;
  std::vector<std::uint64_t> sram_read_bytes;   ///< per scratchpad, config order (or empty)
  std::vector<std::uint64_t> sram_write_bytes;  ///< per scratchpad, config order (or empty)
  std::uint64_t dram_bytes = 0;
  std::uint64_t cycles = 0;  ///< for leakage and EDP
};

/// The vector unit's energy of `counts` under `table`, in pJ.
double vector_energy_pj(const EnergyTable& table, const VectorCounts& counts);

/// Energy by component, in picojoules; EDP in pJ * s.
struct EnergyBreakdown {
  double mac_pj = 0;
  double sram_pj = 0;                         ///< sum of sram_pj_by_scratchpad
  std::vector<double> sram_pj_by_scratchpad;  ///< config order
  double vector_pj = 0;
  double dram_pj = 0;
  double leakage_pj = 0;
  double runtime_s = 0;
  double area_mm2 = 0;

  double total_pj() const { return mac_pj + sram_pj + vector_pj + dram_pj + leakage_pj; }
  double edp_pj_s() const { return total_pj() * runtime_s; }
};

/// counts x table, plus leakage_mw_per_mm2 * area * cycles / clock.
EnergyBreakdown energy_of(const EnergyTable& table, const ActionCounts& counts, double clock_mhz);

}  // namespace tessel
