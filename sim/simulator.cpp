// simulate(): builds a fresh SystemC context and the Accelerator, runs it, writes the report.
#include "sim/simulator.hpp"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "isa/hw_target.hpp"
#include "sim/core/accelerator.hpp"
#include "sim/core/systemc_session.hpp"
#include "support/cancel.hpp"
#include "support/json_text.hpp"
#include "support/version.hpp"

namespace tessel::sim {
namespace {}  // namespace

isa::TargetInfo target_info(const HwConfig& config) {
  return isa::target_from_config(config);
}

namespace {

// isa::SramKind mirrors DataKind code for code; checked here so a reorder cannot go unseen.
static_assert(static_cast<int>(isa::SramKind::kActivations) ==
                  static_cast<int>(DataKind::kActivations) &&
              static_cast<int>(isa::SramKind::kWeights) == static_cast<int>(DataKind::kWeights) &&
              static_cast<int>(isa::SramKind::kAccumulators) ==
                  static_cast<int>(DataKind::kAccumulators) &&
              static_cast<int>(isa::SramKind::kOutputs) == static_cast<int>(DataKind::kOutputs));

}  // namespace

DramImage DramImage::from_bytes(std::vector<std::uint8_t> contents) {
  DramImage image;
  image.size_bytes = contents.size();
  image.bytes = std::move(contents);
  return image;
}

const char* engine_name(std::size_t index) {
  static const char* const names[] = {"load", "compute", "store"};
  return index < kEngineCount ? names[index] : "fetch";
}

std::string SimFault::str() const {
  std::string out = "cycle " + std::to_string(cycle) + ": " + engine + ": ";
  if (instruction_index >= 0) {
    out += "instruction " + std::to_string(instruction_index);
    if (!instruction_text.empty()) out += " (`" + instruction_text + "`)";
    out += ": ";
  }
  return out + kind + ": " + message;
}

DramParams dram_params(const HwConfig& config) {
  DramParams params;
  params.bandwidth_bytes_per_second =
      static_cast<std::uint64_t>(std::llround(config.dram.bandwidth_bytes_per_second));
  params.clock_hz = static_cast<std::uint64_t>(std::llround(config.clock_mhz * 1e6));
  params.latency_cycles = static_cast<std::uint64_t>(config.dram_latency_cycles());
  params.burst_bytes = static_cast<std::uint64_t>(config.dram.burst_bytes);
  params.max_outstanding_requests =
      static_cast<std::uint64_t>(config.dram.max_outstanding_requests);
  return params;
}

Result<SimResult> simulate(const HwConfig& config, std::span<const isa::Word> program,
                           DramImage dram, const SimOptions& options) {
  if (!options.timing_only && dram.bytes.size() != dram.size_bytes)
    return fail("the DRAM image holds " + std::to_string(dram.bytes.size()) +
                " bytes but declares " + std::to_string(dram.size_bytes));
  auto model = DramModel::create(dram_params(config));
  if (!model.ok()) return model.failure();

  RunContext context{config,
                     target_info(config),
                     options,
                     std::move(model).value(),
                     dram.size_bytes,
                     {},
                     std::nullopt,
                     {},
                     {}};
  if (!options.timing_only) context.dram_bytes = std::move(dram.bytes);
  if (!options.trace_path.empty()) {
    auto trace = TraceWriter::open(options.trace_path, options.trace_max_events);
    if (!trace.ok()) return trace.failure();
    context.trace.emplace(std::move(trace).value());
  }
  SimReport& report = context.report;
  report.timing_only = options.timing_only;
  report.config_name = config.name;
  report.config_hash = content_hash(config);
  for (const auto& sp : config.scratchpads) report.scratchpads.push_back({sp.name, 0, 0});

  {
    SystemcSession session;
    Accelerator accelerator("accelerator", context, program);
    sc_core::sc_start();
    accelerator.finalize();
  }
  if (context.trace) context.trace->close();
  if (cancel_requested()) {  // a cancelled run leaves no partial trace behind
    if (context.trace) {
      std::error_code ignored;
      std::filesystem::remove(options.trace_path, ignored);
    }
    return cancelled();
  }

  report.dram = context.dram.counters();
  report.dram.read_bytes_by_kind[static_cast<std::size_t>(TrafficKind::kInstructions)] +=
      report.instructions_dispatched * isa::kInstructionBytes;
  const double peak =
      static_cast<double>(report.cycles) * static_cast<double>(config.macs_per_cycle());
  report.mac_utilisation = peak > 0 ? static_cast<double>(report.macs) / peak : 0.0;
  report.energy = estimate_energy(config, report);
  return SimResult{std::move(context.report), std::move(context.dram_bytes),
                   std::move(context.final_scratchpads)};
}

ActionCounts action_counts(const SimReport& report) {
  ActionCounts counts;
  counts.macs = report.macs;
  for (const auto& sp : report.scratchpads) {
    counts.sram_read_bytes.push_back(sp.read_bytes);
    counts.sram_write_bytes.push_back(sp.write_bytes);
  }
  static_cast<VectorCounts&>(counts) = report.vector_ops;
  counts.dram_bytes = report.dram.total_bytes();
  counts.cycles = report.cycles;
  return counts;
}

EnergyEstimate estimate_energy(const HwConfig& config, const SimReport& report) {
  return energy_of(energy_table(config), action_counts(report), config.clock_mhz);
}

namespace {

/// The report's energy keys (docs/sim.md): by component, the vector unit's counts, runtime,
/// EDP, area and the table the counts were multiplied by.
nlohmann::json energy_json(const EnergyEstimate& energy, const SimReport& report,
                           const HwConfig& config) {
  const EnergyTable table = energy_table(config);
  nlohmann::json by_scratchpad = nlohmann::json::object();
  nlohmann::json area = nlohmann::json::object();
  nlohmann::json sram_table = nlohmann::json::object();
  for (std::size_t i = 0; i < table.scratchpads.size(); ++i) {
    const auto& sp = table.scratchpads[i];
    if (i < energy.sram_pj_by_scratchpad.size())
      by_scratchpad[sp.name] = energy.sram_pj_by_scratchpad[i];
    area[sp.name] = sp.area_mm2;
    sram_table[sp.name] = {{"read_pj_per_byte", sp.read_pj_per_byte},
                           {"write_pj_per_byte", sp.write_pj_per_byte}};
  }
  area["matrix"] = table.matrix_area_mm2;
  area["vector"] = table.vector_area_mm2;
  area["total"] = table.area_mm2();
  nlohmann::json vector_ops = nlohmann::json::object();
  report.vector_ops.for_each([&](const char* name, std::uint64_t n) { vector_ops[name] = n; });
  return {{"energy_pj",
           {{"mac", energy.mac_pj},
            {"sram", energy.sram_pj},
            {"sram_by_scratchpad", by_scratchpad},
            {"vector", energy.vector_pj},
            {"dram", energy.dram_pj},
            {"leakage", energy.leakage_pj},
            {"total", energy.total_pj()}}},
          {"vector_ops", vector_ops},
          {"runtime_s", energy.runtime_s},
          {"edp_pj_s", energy.edp_pj_s()},
          {"area_mm2", area},
          {"energy_table",
           {{"technology", table.technology},
            {"dram_technology", table.dram_technology},
            {"mac_pj", table.mac_pj},
            {"requant_pj", table.requant_pj},
            {"add_pj", table.add_pj},
            {"pool_pj", table.pool_pj},
            {"lut_pj_per_byte", table.lut_pj_per_byte},
            {"reduce_pj", table.reduce_pj},
            {"square_pj", table.square_pj},
            {"mul_pj", table.mul_pj},
            {"softmax_pj", table.softmax_pj},
            {"softmax_row_pj", table.softmax_row_pj},
            {"norm_pj", table.norm_pj},
            {"norm_row_pj", table.norm_row_pj},
            {"dram_pj_per_byte", table.dram_pj_per_byte},
            {"leakage_mw_per_mm2", table.leakage_mw_per_mm2},
            {"sram", sram_table},
            {"model", "docs/energy.md"}}}};
}

}  // namespace

std::string report_json(const SimReport& report, const HwConfig& config) {
  using nlohmann::json;
  json by_kind_read = json::object(), by_kind_write = json::object(), by_kind = json::object();
  for (std::size_t k = 0; k < kTrafficKindCount; ++k) {
    const char* name = traffic_kind_name(static_cast<TrafficKind>(k));
    by_kind_read[name] = report.dram.read_bytes_by_kind[k];
    by_kind_write[name] = report.dram.write_bytes_by_kind[k];
    by_kind[name] = report.dram.read_bytes_by_kind[k] + report.dram.write_bytes_by_kind[k];
  }
  json engines = json::object();
  for (std::size_t e = 0; e < kEngineCount; ++e) {
    const EngineStats& s = report.engines[e];
    engines[engine_name(e)] = {{"instructions", s.instructions},
                               {"busy_cycles", s.busy_cycles},
                               {"waiting_on_dram_cycles", s.waiting_on_dram_cycles},
                               {"waiting_on_token_cycles", s.waiting_on_token_cycles},
                               {"idle_cycles", s.idle_cycles},
                               {"queue_full_cycles", s.queue_full_cycles}};
  }
  json scratchpads = json::object();
  for (const auto& sp : report.scratchpads)
    scratchpads[sp.name] = {{"read_bytes", sp.read_bytes}, {"write_bytes", sp.write_bytes}};
  json out = {
      {"status", report.status()},
      {"mode", report.timing_only ? "timing-only" : "full"},
      {"cycles", report.cycles},
      {"instructions",
       {{"dispatched", report.instructions_dispatched},
        {"executed", report.instructions_executed}}},
      {"dram_bytes",
       {{"read", report.dram.read_bytes()},
        {"write", report.dram.write_bytes()},
        {"total", report.dram.total_bytes()},
        {"by_kind", by_kind},
        {"read_by_kind", by_kind_read},
        {"write_by_kind", by_kind_write},
        {"requests", report.dram.requests},
        {"bursts", report.dram.bursts}}},
      {"engines", engines},
      {"sram_bytes", scratchpads},
      {"macs", report.macs},
      {"mac_utilisation", report.mac_utilisation},
      {"model", "tessel-sim (docs/timing.md)"},
      {"config", {{"name", config.name}, {"hash", report.config_hash}}},
      {"tool_version", version()},
  };
  if (report.energy) out.update(energy_json(*report.energy, report, config));
  if (report.fault)
    out["fault"] = {{"kind", report.fault->kind},
                    {"cycle", report.fault->cycle},
                    {"engine", report.fault->engine},
                    {"instruction_index", report.fault->instruction_index},
                    {"instruction", report.fault->instruction_text},
                    {"message", report.fault->message}};
  if (report.fault && !report.fault->blocked.empty()) {
    json blocked = json::array();
    for (const auto& b : report.fault->blocked)
      blocked.push_back({{"engine", b.engine},
                         {"instruction_index", b.instruction_index},
                         {"waits_on", b.waits_on}});
    out["fault"]["blocked"] = blocked;
  }
  return tessel::json_text(out, 2) + "\n";
}

}  // namespace tessel::sim
