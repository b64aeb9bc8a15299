// HwConfig's derived figures, canonical JSON/YAML forms and content hash.
#include "configs/hw_config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "configs/energy_config.hpp"
#include "configs/energy_model.hpp"
#include "support/json_text.hpp"
#include "support/strings.hpp"
#include "support/units.hpp"

namespace tessel {
namespace {

std::int64_t bytes_for(std::int64_t elements, int bits) {
  return elements * bits / 8;
}

nlohmann::ordered_json config_json(const HwConfig& c, bool with_labels) {
  nlohmann::ordered_json j;
  if (with_labels) {
    j["name"] = c.name;
    j["description"] = c.description;
  }
  j["clock_mhz"] = c.clock_mhz;
  j["matrix"] = {{"rows", c.matrix.rows},
                 {"cols", c.matrix.cols},
                 {"input_bits", c.matrix.input_bits},
                 {"weight_bits", c.matrix.weight_bits},
                 {"accumulator_bits", c.matrix.accumulator_bits},
                 {"fill_cycles", c.matrix.fill_cycles},
                 {"drain_cycles", c.matrix.drain_cycles}};
  if (c.matrix.activation_operands) j["matrix"]["activation_operands"] = true;
  if (c.matrix.weight_load_rows != 1) j["matrix"]["weight_load_rows"] = c.matrix.weight_load_rows;
  j["vector"] = {{"lanes", c.vector.lanes}};
  // The units are written when present, so that a config without them keeps its JSON (and
  // the content hashes made from it) as before they existed.
  if (c.vector.lookup_table) j["vector"]["lookup_table"] = true;
  if (c.vector.row_reduce) j["vector"]["row_reduce"] = true;
  if (c.vector.broadcast_multiply) j["vector"]["broadcast_multiply"] = true;
  if (c.vector.row_normalise) j["vector"]["row_normalise"] = true;
  j["scratchpads"] = nlohmann::ordered_json::array();
  for (const auto& pad : c.scratchpads) {
    nlohmann::ordered_json holds = nlohmann::ordered_json::array();
    for (DataKind kind : pad.holds) holds.push_back(std::string(to_string(kind)));
    j["scratchpads"].push_back({{"name", pad.name},
                                {"size_bytes", pad.size_bytes},
                                {"banks", pad.banks},
                                {"port_width_bytes", pad.port_width_bytes},
                                {"holds", holds}});
  }
  j["dram"] = {{"bandwidth_bytes_per_second", c.dram.bandwidth_bytes_per_second},
               {"latency_ns", c.dram.latency_ns},
               {"burst_bytes", c.dram.burst_bytes},
               {"max_outstanding_requests", c.dram.max_outstanding_requests}};
  j["queues"] = {{"instruction_queue_depth", c.queues.instruction_queue_depth},
                 {"token_fifo_depth", c.queues.token_fifo_depth}};
  if (c.energy) {
    j["energy"] = nlohmann::ordered_json::object();
    for (const auto& entry : energy_entries(*c.energy)) {
      if (entry.number) {
        j["energy"][entry.key] = *entry.number;
      } else {
        j["energy"][entry.key] = entry.text;
      }
    }
  }
  if (c.fpga) j["fpga"] = {{"part", c.fpga->part}, {"clock_mhz", c.fpga->clock_mhz}};
  return j;
}

/// Shortest fixed-point text that reads back as the same double (no exponent: "1500000000"),
/// as the unit parser expects.
std::string fixed_number_text(double value) {
  std::array<char, 400> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  return std::string(buffer.data(), result.ptr);
}

/// A YAML double-quoted string (JSON string syntax is valid YAML).
std::string quoted(const std::string& text) {
  return tessel::json_text(nlohmann::json(text), -1);
}

}  // namespace

std::string_view to_string(DataKind kind) {
  switch (kind) {
    case DataKind::kActivations:
      return "activations";
    case DataKind::kWeights:
      return "weights";
    case DataKind::kAccumulators:
      return "accumulators";
    case DataKind::kOutputs:
      return "outputs";
  }
  return "?";
}

std::optional<DataKind> data_kind_from_string(std::string_view text) {
  for (DataKind kind : kAllDataKinds) {
    if (to_string(kind) == text) return kind;
  }
  return std::nullopt;
}

std::int64_t MatrixUnitConfig::weight_tile_bytes() const {
  return bytes_for(std::int64_t{rows} * cols, weight_bits);
}
std::int64_t MatrixUnitConfig::activation_tile_bytes() const {
  return bytes_for(rows, input_bits);
}
std::int64_t MatrixUnitConfig::accumulator_tile_bytes() const {
  return bytes_for(cols, accumulator_bits);
}
std::int64_t MatrixUnitConfig::output_tile_bytes() const {
  return bytes_for(cols, input_bits);
}
std::int64_t MatrixUnitConfig::tile_bytes(DataKind kind) const {
  switch (kind) {
    case DataKind::kActivations:
      return activation_tile_bytes();
    case DataKind::kWeights:
      return weight_tile_bytes();
    case DataKind::kAccumulators:
      return accumulator_tile_bytes();
    case DataKind::kOutputs:
      return output_tile_bytes();
  }
  return 0;
}

bool ScratchpadConfig::may_hold(DataKind kind) const {
  for (DataKind held : holds) {
    if (held == kind) return true;
  }
  return false;
}

std::int64_t HwConfig::macs_per_cycle() const {
  return std::int64_t{matrix.rows} * matrix.cols;
}

double HwConfig::peak_gops() const {
  return 2.0 * static_cast<double>(macs_per_cycle()) * clock_mhz / 1000.0;
}

double HwConfig::dram_bytes_per_cycle() const {
  return dram.bandwidth_bytes_per_second / (clock_mhz * 1e6);
}

double HwConfig::machine_balance_macs_per_dram_byte() const {
  return static_cast<double>(macs_per_cycle()) / dram_bytes_per_cycle();
}

std::int64_t HwConfig::dram_latency_cycles() const {
  return static_cast<std::int64_t>(std::ceil(dram.latency_ns * clock_mhz / 1000.0));
}

double HwConfig::dram_sustained_bytes_per_cycle() const {
  // O slots, each held from a burst's issue to its completion: L cycles of latency, then its
  // bus time, the completion rounded up to a whole cycle.
  const double bus = dram_bytes_per_cycle();
  const double burst = static_cast<double>(dram.burst_bytes);
  const double round_trip =
      static_cast<double>(dram_latency_cycles()) + std::ceil(burst / bus - 1e-9);  // 2.0, not 3
  return std::min(bus, static_cast<double>(dram.max_outstanding_requests) * burst / round_trip);
}

std::int64_t dma_mover_bytes_per_cycle(std::int64_t burst_bytes) {
  return std::clamp<std::int64_t>(burst_bytes, 16, 64);
}

std::int64_t HwConfig::dma_mover_bytes_per_cycle() const {
  return tessel::dma_mover_bytes_per_cycle(dram.burst_bytes);
}

std::int64_t HwConfig::total_onchip_bytes() const {
  std::int64_t total = 0;
  for (const auto& pad : scratchpads) total += pad.size_bytes;
  return total;
}

const ScratchpadConfig& HwConfig::scratchpad_for(DataKind kind) const {
  for (const auto& pad : scratchpads) {
    if (pad.may_hold(kind)) return pad;
  }
  // Unreachable for a validated config; a hand-built one without a home for `kind` is a bug.
  throw std::logic_error("HwConfig '" + name + "' has no scratchpad for " +
                         std::string(to_string(kind)));
}

std::vector<std::size_t> HwConfig::scratchpads_holding(DataKind kind) const {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < scratchpads.size(); ++i) {
    if (scratchpads[i].may_hold(kind)) indices.push_back(i);
  }
  return indices;
}

const ScratchpadConfig* HwConfig::find_scratchpad(std::string_view scratchpad_name) const {
  for (const auto& pad : scratchpads) {
    if (pad.name == scratchpad_name) return &pad;
  }
  return nullptr;
}

std::string to_canonical_json(const HwConfig& config) {
  return tessel::json_text(config_json(config, true), 2) + "\n";
}

std::string to_yaml(const HwConfig& c) {
  std::ostringstream out;
  out << "name: " << quoted(c.name) << "\n";
  out << "description: " << quoted(c.description) << "\n";
  out << "clock_mhz: " << shortest_text(c.clock_mhz) << "\n";
  out << "matrix:\n"
      << "  rows: " << c.matrix.rows << "\n"
      << "  cols: " << c.matrix.cols << "\n"
      << "  input_bits: " << c.matrix.input_bits << "\n"
      << "  weight_bits: " << c.matrix.weight_bits << "\n"
      << "  accumulator_bits: " << c.matrix.accumulator_bits << "\n"
      << "  fill_cycles: " << c.matrix.fill_cycles << "\n"
      << "  drain_cycles: " << c.matrix.drain_cycles << "\n";
  if (c.matrix.activation_operands) out << "  activation_operands: true\n";
  if (c.matrix.weight_load_rows != 1)
    out << "  weight_load_rows: " << c.matrix.weight_load_rows << "\n";
  out << "vector:\n  lanes: " << c.vector.lanes << "\n";
  if (c.vector.lookup_table) out << "  lookup_table: true\n";
  if (c.vector.row_reduce) out << "  row_reduce: true\n";
  if (c.vector.broadcast_multiply) out << "  broadcast_multiply: true\n";
  if (c.vector.row_normalise) out << "  row_normalise: true\n";
  out << "scratchpads:\n";
  for (const auto& pad : c.scratchpads) {
    out << "  - name: " << quoted(pad.name) << "\n"
        << "    size: " << pad.size_bytes << "\n"
        << "    banks: " << pad.banks << "\n"
        << "    port_width_bytes: " << pad.port_width_bytes << "\n"
        << "    holds: [";
    for (std::size_t i = 0; i < pad.holds.size(); ++i) {
      out << (i ? ", " : "") << to_string(pad.holds[i]);
    }
    out << "]\n";
  }
  out << "dram:\n"
      << "  bandwidth: " << fixed_number_text(c.dram.bandwidth_bytes_per_second) << "B/s\n"
      << "  latency_ns: " << shortest_text(c.dram.latency_ns) << "\n"
      << "  burst_bytes: " << c.dram.burst_bytes << "\n"
      << "  max_outstanding_requests: " << c.dram.max_outstanding_requests << "\n";
  out << "queues:\n"
      << "  instruction_queue_depth: " << c.queues.instruction_queue_depth << "\n"
      << "  token_fifo_depth: " << c.queues.token_fifo_depth << "\n";
  if (c.energy) {
    const auto entries = energy_entries(*c.energy);
    out << "energy:" << (entries.empty() ? " {}\n" : "\n");
    for (const auto& entry : entries) out << "  " << entry.key << ": " << entry.text << "\n";
  }
  if (c.fpga) {
    out << "fpga:\n"
        << "  part: " << quoted(c.fpga->part) << "\n"
        << "  clock_mhz: " << shortest_text(c.fpga->clock_mhz) << "\n";
  }
  return out.str();
}

std::string derived_figures_json(const HwConfig& c) {
  nlohmann::ordered_json j;
  j["macs_per_cycle"] = c.macs_per_cycle();
  j["peak_gops"] = c.peak_gops();
  j["dram_bytes_per_cycle"] = c.dram_bytes_per_cycle();
  j["machine_balance_macs_per_dram_byte"] = c.machine_balance_macs_per_dram_byte();
  j["dram_latency_cycles"] = c.dram_latency_cycles();
  j["dram_sustained_bytes_per_cycle"] = c.dram_sustained_bytes_per_cycle();
  j["total_onchip_bytes"] = c.total_onchip_bytes();
  nlohmann::ordered_json homes;
  for (DataKind kind : kAllDataKinds) {
    homes[std::string(to_string(kind))] = c.scratchpad_for(kind).name;
  }
  j["scratchpad_for"] = homes;
  // The energy model's figures (docs/energy.md), so that sweeps can read area per design point.
  const EnergyTable table = energy_table(c);
  nlohmann::ordered_json sram;
  for (const auto& sp : table.scratchpads)
    sram[sp.name] = {{"read_pj_per_byte", sp.read_pj_per_byte},
                     {"write_pj_per_byte", sp.write_pj_per_byte},
                     {"area_mm2", sp.area_mm2}};
  j["energy"] = {{"technology", table.technology},
                 {"dram_technology", table.dram_technology},
                 {"mac_pj", table.mac_pj},
                 {"requant_pj", table.requant_pj},
                 {"add_pj", table.add_pj},
                 {"pool_pj", table.pool_pj},
                 {"dram_pj_per_byte", table.dram_pj_per_byte},
                 {"leakage_mw_per_mm2", table.leakage_mw_per_mm2},
                 {"scratchpads", sram}};
  j["area_mm2"] = {{"matrix", table.matrix_area_mm2},
                   {"vector", table.vector_area_mm2},
                   {"total", table.area_mm2()}};
  return tessel::json_text(j, 2) + "\n";
}

std::string describe(const HwConfig& c) {
  std::ostringstream out;
  const auto row = [&out](const std::string& label, const std::string& value) {
    out << "  " << label << std::string(label.size() < 20 ? 20 - label.size() : 1, ' ') << value
        << "\n";
  };
  const auto fixed = [](double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return std::string(buffer);
  };
  out << c.name << "  (content hash " << content_hash(c) << ")\n";
  if (!c.description.empty()) out << "  " << c.description << "\n";
  row("clock", shortest_text(c.clock_mhz) + " MHz");
  row("matrix unit",
      std::to_string(c.matrix.rows) + " x " + std::to_string(c.matrix.cols) + ", " +
          std::to_string(c.matrix.input_bits) + "-bit inputs, " +
          std::to_string(c.matrix.weight_bits) + "-bit weights, " +
          std::to_string(c.matrix.accumulator_bits) + "-bit accumulators, fill " +
          std::to_string(c.matrix.fill_cycles) + " / drain " +
          std::to_string(c.matrix.drain_cycles) + " cycles" +
          (c.matrix.activation_operands ? ", activation operands" : "") +
          (c.matrix.weight_load_rows != 1
               ? ", " + std::to_string(c.matrix.weight_load_rows) + " block rows loaded a cycle"
               : ""));
  row("vector unit", std::to_string(c.vector.lanes) + " lanes" +
                         (c.vector.lookup_table ? ", lookup table" : "") +
                         (c.vector.row_reduce ? ", row reductions" : "") +
                         (c.vector.broadcast_multiply ? ", broadcast multiply" : "") +
                         (c.vector.row_normalise ? ", row normalisation" : ""));
  for (const auto& pad : c.scratchpads) {
    std::string holds;
    for (DataKind kind : pad.holds)
      holds += (holds.empty() ? "" : ", ") + std::string(to_string(kind));
    row("scratchpad " + pad.name, units::format_size_bytes(pad.size_bytes) + ", " +
                                      std::to_string(pad.banks) + " banks x " +
                                      std::to_string(pad.port_width_bytes) + " B; holds " + holds);
  }
  row("dram", units::format_bandwidth(c.dram.bandwidth_bytes_per_second) + ", " +
                  shortest_text(c.dram.latency_ns) + " ns latency (" +
                  std::to_string(c.dram_latency_cycles()) + " cycles), " +
                  std::to_string(c.dram.burst_bytes) + " B bursts, " +
                  std::to_string(c.dram.max_outstanding_requests) + " outstanding");
  row("queues", std::to_string(c.queues.instruction_queue_depth) + " instructions per engine, " +
                    std::to_string(c.queues.token_fifo_depth) + " tokens per FIFO");
  {
    const EnergyTable table = energy_table(c);
    std::string sram;
    for (const auto& sp : table.scratchpads)
      sram += (sram.empty() ? "" : ", ") + sp.name + " " + shortest_text(sp.read_pj_per_byte) +
              " / " + shortest_text(sp.write_pj_per_byte);
    row("energy", table.technology + ", " + shortest_text(table.mac_pj) + " pJ/MAC, SRAM pJ/B " +
                      "read / write " + sram + ", DRAM " + table.dram_technology + " " +
                      shortest_text(table.dram_pj_per_byte) + " pJ/B");
    row("area", shortest_text(table.area_mm2()) + " mm^2");
  }
  if (c.fpga) row("fpga", c.fpga->part + " at " + shortest_text(c.fpga->clock_mhz) + " MHz");
  out << "derived\n";
  row("MACs/cycle", std::to_string(c.macs_per_cycle()));
  row("peak", fixed(c.peak_gops(), 3) + " GOP/s");
  row("DRAM bytes/cycle", fixed(c.dram_bytes_per_cycle(), 4));
  row("DRAM sustained",
      fixed(c.dram_sustained_bytes_per_cycle(), 4) + " bytes/cycle (" +
          fixed(100.0 * c.dram_sustained_bytes_per_cycle() / c.dram_bytes_per_cycle(), 1) +
          "% of the bandwidth: " + std::to_string(c.dram.max_outstanding_requests) +
          " bursts in flight per round trip)");
  row("machine balance", fixed(c.machine_balance_macs_per_dram_byte(), 4) + " MACs per DRAM byte");
  row("total on-chip", std::to_string(c.total_onchip_bytes()) + " B (" +
                           units::format_size_bytes(c.total_onchip_bytes()) + ")");
  return out.str();
}

std::string content_hash(const HwConfig& config) {
  const std::string text = tessel::json_text(config_json(config, false), -1);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 1099511628211ull;  // FNV-1a 64 prime
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace tessel
