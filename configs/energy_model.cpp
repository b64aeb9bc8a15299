// The energy and area model: the published figures, the SRAM fit and the tables they make.
#include "configs/energy_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace tessel {
namespace {

// Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC 2014, 45 nm,
// 0.9 V: integer add and multiply energies (pJ) and areas (um^2).
constexpr double kAdd32Pj = 0.1;
constexpr double kMult8Pj = 0.2;
constexpr double kMult32Pj = 3.1;
constexpr double kAdd32Um2 = 137;
constexpr double kMult8Um2 = 282;
constexpr double kMult32Um2 = 3495;
// The same talk's SRAM (cache) figures: energy of one 64-bit access by array capacity.
constexpr std::array<std::pair<double, double>, 3> kSramPoints = {
    {{8.0 * 1024, 10.0}, {32.0 * 1024, 20.0}, {1024.0 * 1024, 100.0}}};
// A 45 nm 6T bitcell of 0.346 um^2 (Intel, Mistry et al., IEDM 2007) at an assumed 50% array
// efficiency (decoders, sense amplifiers, I/O): um^2 per byte of capacity.
constexpr double kSramUm2PerByte = 8 * 0.346 / 0.5;
// Assumed static power density of a low-power 45 nm process (docs/energy.md says why).
constexpr double kLeakageMwPerMm2 = 1.0;

// One multiply of an a-bit by a b-bit operand at 45 nm, in pJ: Horowitz's measured 32 x 32
// figure, otherwise his 8 x 8 one in proportion to the product of the widths (a multiplier's
// energy grows with its partial products: 8 x 32 is 4x, 16 x 16 is 4x the 8 x 8 one).
double multiply_pj(int a_bits, int b_bits) {
  if (a_bits == 32 && b_bits == 32) return kMult32Pj;
  return kMult8Pj * a_bits * b_bits / 64;
}

}  // namespace

double TechnologyNode::energy_scale() const {
  return (feature_nm / 45.0) * (vdd / 0.9) * (vdd / 0.9);
}

double TechnologyNode::area_scale() const {
  return (feature_nm / 45.0) * (feature_nm / 45.0);
}

const std::vector<TechnologyNode>& technology_nodes() {
  static const std::vector<TechnologyNode> nodes = {{"45nm", 45, 0.9}, {"32nm", 32, 0.9},
                                                    {"28nm", 28, 0.9}, {"22nm", 22, 0.8},
                                                    {"16nm", 16, 0.8}, {"7nm", 7, 0.7}};
  return nodes;
}

std::optional<TechnologyNode> technology_node(std::string_view name) {
  for (const auto& node : technology_nodes())
    if (node.name == name) return node;
  return std::nullopt;
}

const std::vector<DramTechnology>& dram_technologies() {
  // Sources in docs/energy.md.
  static const std::vector<DramTechnology> kinds = {
      {"ddr3", 1300.0 / 64}, {"ddr4", 15.0}, {"lpddr4", 4.0}, {"gddr5", 14.0}, {"hbm2", 3.9}};
  return kinds;
}

std::optional<DramTechnology> dram_technology(std::string_view name) {
  for (const auto& kind : dram_technologies())
    if (kind.name == name) return kind;
  return std::nullopt;
}

std::pair<double, double> sram_fit_coefficients() {
  // Least squares of ln(E) = ln(a) + b ln(C / 1 KiB) over the three published points.
  double mean_x = 0, mean_y = 0;
  for (const auto& [bytes, pj] : kSramPoints) {
    mean_x += std::log(bytes / 1024);
    mean_y += std::log(pj);
  }
  mean_x /= kSramPoints.size();
  mean_y /= kSramPoints.size();
  double sxy = 0, sxx = 0;
  for (const auto& [bytes, pj] : kSramPoints) {
    const double dx = std::log(bytes / 1024) - mean_x;
    sxy += dx * (std::log(pj) - mean_y);
    sxx += dx * dx;
  }
  const double b = sxy / sxx;
  return {std::exp(mean_y - b * mean_x), b};
}

double sram_64bit_access_pj_45nm(double bank_bytes) {
  static const auto [a, b] = sram_fit_coefficients();
  return a * std::pow(std::max(bank_bytes, 1024.0) / 1024, b);
}

double EnergyTable::area_mm2() const {
  double area = matrix_area_mm2 + vector_area_mm2;
  for (const auto& sp : scratchpads) area += sp.area_mm2;
  return area;
}

EnergyTable energy_table(const HwConfig& config) {
  const EnergyConfig settings = config.energy.value_or(EnergyConfig{});
  // The loader accepts only known names; a hand-built config with another falls back to 45 nm
  // and DDR3 rather than failing here.
  const TechnologyNode node = technology_node(settings.technology).value_or(technology_nodes()[0]);
  const DramTechnology dram =
      dram_technology(settings.dram_technology).value_or(dram_technologies()[0]);
  const double e = node.energy_scale();
  const double a = node.area_scale();
  const MatrixUnitConfig& m = config.matrix;
  const double product_ratio = m.input_bits * m.weight_bits / 64.0;  // vs an 8 x 8 multiply
  const double accumulator_ratio = m.accumulator_bits / 32.0;        // vs a 32-bit add

  EnergyTable table;
  table.technology = std::string(node.name);
  // An explicit per-byte figure replaces the kind's: the report says so instead of a kind name.
  table.dram_technology = settings.dram_pj_per_byte ? "explicit" : std::string(dram.name);
  table.mac_pj =
      settings.mac_pj.value_or(e * (kMult8Pj * product_ratio + kAdd32Pj * accumulator_ratio));
  // The vector unit's operands are activations of the matrix unit's input width (8 or 16
  // bits; docs/energy.md "Vector operands at 16 bits"): a multiplier taking an activation is
  // priced by the product of its operand widths; the adds and compares keep the 8-bit figures'
  // 32-bit (or 64-bit) adders, which a 16-bit operand also fits.
  const int w = m.input_bits;
  // requant: a 32 x 32-bit multiply (the int32 accumulator, whatever the activation width), the
  // rounding add and the zero-point add; add: two w x 32-bit rescale multiplies (8 x 32: 4x an
  // 8 x 8 one) and two adds; pool: one 32-bit add/compare.
  table.requant_pj = settings.vector_op_pj.value_or(e * (kMult32Pj + 2 * kAdd32Pj));
  table.add_pj = settings.vector_op_pj.value_or(e * (2 * multiply_pj(w, 32) + 2 * kAdd32Pj));
  table.pool_pj = e * kAdd32Pj;
  // lut: one entry read from the unit's 256-entry table (at most 512 B), priced per byte by the
  // SRAM curve at its smallest array (1 KiB); reduce: a 32-bit add (sum) or compare (max) per
  // element, and an 8 x 8 multiply before it for a sum of squares (i8 only: the ISA refuses
  // sumsq of i16). Neither depends on w: an i16 entry is counted as its two bytes.
  table.lut_pj_per_byte = e * sram_64bit_access_pj_45nm(1024) / 8;
  table.reduce_pj = e * kAdd32Pj;
  table.square_pj = e * kMult8Pj;
  // The ISA v3 vector instructions, each step priced by Horowitz's figures (docs/energy.md
  // gives every step):
  // mul: the w x w product a * b, its 2w-bit product times the 32-bit M (16 x 32: 8x an 8 x 8
  // multiply; 32 x 32 at w = 16), the rounding and zero-point adds.
  table.mul_pj = e * (multiply_pj(w, w) + multiply_pj(2 * w, 32) + 2 * kAdd32Pj);
  // softmax, per element: the max compare, u = m - x, two 16-bit table entries (exp_high,
  // exp_low: 4 bytes of the unit's 1 KiB table), their 16 x 16 product and its rounding, the
  // sum's add, e * R (16 x 32) and its rounding, times M (16 x 32), rounding and zero point.
  // Only the compare and the subtract see the activation, so the figure does not depend on w.
  table.softmax_pj = e * (2 * kAdd32Pj + 4 * kMult8Pj + kAdd32Pj + kAdd32Pj + 8 * kMult8Pj +
                          kAdd32Pj + 8 * kMult8Pj + 2 * kAdd32Pj) +
                     4 * table.lut_pj_per_byte;
  // softmax, per row: R = floor(2^45 / S) by restoring division, one step per quotient bit (at
  // most 31; 32 counted), each a 64-bit subtract (two 32-bit adds).
  table.softmax_row_pj = e * 32 * 2 * kAdd32Pj;
  // norm, per element: the S1 add, x^2 (w x w) and its 64-bit S2 add (two 32-bit adds), N x
  // (N's 14 bits taken as 16, x w bits) and the subtract of S1, c * inv (32 x 32: c has 22 bits
  // at w = 8, 30 at 16) and its rounding, t * G (32 x 32), the add of B and its rounding.
  table.norm_pj = e * (kAdd32Pj + multiply_pj(w, w) + 2 * kAdd32Pj + multiply_pj(16, w) + kAdd32Pj +
                       kMult32Pj + kAdd32Pj + kMult32Pj + 2 * kAdd32Pj);
  // norm, per row: D = N S2 - S1^2 (two 32 x 32 multiplies at w = 8; at w = 16 S2 needs 44
  // bits, so N S2 is a 32 x 64 multiply, two 32 x 32 ones), a subtract, the integer square root
  // of W (31 steps) and inv = 2^54 / s (32 steps), each step a 64-bit subtract.
  const double n_s2_multiplies = w > 8 ? 2 : 1;
  table.norm_row_pj = e * ((n_s2_multiplies + 1) * kMult32Pj + kAdd32Pj + (31 + 32) * 2 * kAdd32Pj);
  table.dram_pj_per_byte = settings.dram_pj_per_byte.value_or(dram.pj_per_bit * 8);
  table.leakage_mw_per_mm2 = settings.leakage_mw_per_mm2.value_or(kLeakageMwPerMm2);
  for (const auto& sp : config.scratchpads) {
    // One access reads one bank of size / banks bytes; energy is linear in the access width,
    // so a byte costs an eighth of a 64-bit access to that bank.
    const double bank_bytes = static_cast<double>(sp.size_bytes) / sp.banks;
    const double per_byte = e * sram_64bit_access_pj_45nm(bank_bytes) / 8;
    table.scratchpads.push_back({sp.name, settings.sram_read_pj_per_byte.value_or(per_byte),
                                 settings.sram_write_pj_per_byte.value_or(per_byte),
                                 a * kSramUm2PerByte * static_cast<double>(sp.size_bytes) * 1e-6});
  }
  table.matrix_area_mm2 = a * static_cast<double>(m.rows) * m.cols *
                          (kMult8Um2 * product_ratio + kAdd32Um2 * accumulator_ratio) * 1e-6;
  table.vector_area_mm2 = a * config.vector.lanes * (kMult32Um2 + 2 * kAdd32Um2) * 1e-6;
  return table;
}

VectorCounts& VectorCounts::operator+=(const VectorCounts& o) {
  requant_elements += o.requant_elements;
  add_elements += o.add_elements;
  pool_window_elements += o.pool_window_elements;
  lut_bytes += o.lut_bytes;
  reduce_elements += o.reduce_elements;
  square_elements += o.square_elements;
  mul_elements += o.mul_elements;
  softmax_elements += o.softmax_elements;
  softmax_rows += o.softmax_rows;
  norm_elements += o.norm_elements;
  norm_rows += o.norm_rows;
  return *this;
}

double vector_energy_pj(const EnergyTable& table, const VectorCounts& counts) {
  const auto d = [](std::uint64_t n) { return static_cast<double>(n); };
  return table.requant_pj * d(counts.requant_elements) + table.add_pj * d(counts.add_elements) +
         table.pool_pj * d(counts.pool_window_elements) +
         table.lut_pj_per_byte * d(counts.lut_bytes) + table.reduce_pj * d(counts.reduce_elements) +
         table.square_pj * d(counts.square_elements) + table.mul_pj * d(counts.mul_elements) +
         table.softmax_pj * d(counts.softmax_elements) +
         table.softmax_row_pj * d(counts.softmax_rows) + table.norm_pj * d(counts.norm_elements) +
         table.norm_row_pj * d(counts.norm_rows);
}

EnergyBreakdown energy_of(const EnergyTable& table, const ActionCounts& counts, double clock_mhz) {
  EnergyBreakdown out;
  out.mac_pj = table.mac_pj * static_cast<double>(counts.macs);
  for (std::size_t i = 0; i < table.scratchpads.size(); ++i) {
    const auto at = [i](const std::vector<std::uint64_t>& v) {
      return i < v.size() ? static_cast<double>(v[i]) : 0.0;
    };
    const double pj = table.scratchpads[i].read_pj_per_byte * at(counts.sram_read_bytes) +
                      table.scratchpads[i].write_pj_per_byte * at(counts.sram_write_bytes);
    out.sram_pj_by_scratchpad.push_back(pj);
    out.sram_pj += pj;
  }
  out.vector_pj = vector_energy_pj(table, counts);
  out.dram_pj = table.dram_pj_per_byte * static_cast<double>(counts.dram_bytes);
  out.runtime_s = clock_mhz > 0 ? static_cast<double>(counts.cycles) / (clock_mhz * 1e6) : 0.0;
  out.area_mm2 = table.area_mm2();
  // mW * s = 1e-3 J = 1e9 pJ.
  out.leakage_pj = table.leakage_mw_per_mm2 * out.area_mm2 * out.runtime_s * 1e9;
  return out;
}

}  // namespace tessel
