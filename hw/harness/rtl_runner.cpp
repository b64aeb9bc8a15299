// run_rtl(): picks the built Verilator model of a config and runs it.
#include "hw/harness/rtl_runner.hpp"

#include "hw/harness/model_registry.hpp"
#include "isa/timing.hpp"
#include "sim/dram/dram_model.hpp"

namespace tessel::hw {
namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

std::uint64_t program_cycle_bound(const HwConfig& config, std::span<const isa::Word> program) {
  auto dram = sim::DramModel::create(sim::dram_params(config));
  if (!dram.ok()) return UINT64_MAX;
  const sim::DramModel& model = dram.value();
  const std::uint64_t latency = model.params().latency_cycles;
  const std::uint64_t burst = model.params().burst_bytes;
  const isa::timing::ComputeParams params{config.matrix.rows, config.matrix.cols,
                                          config.matrix.fill_cycles, config.matrix.drain_cycles,
                                          config.vector.lanes};
  constexpr std::uint64_t kHandOff = 4;
  const auto dma = [&](const std::vector<isa::timing::DramRun>& runs) {
    std::uint64_t cycles = 0;
    for (const auto& run : runs)
      cycles = saturating_add(
          cycles, saturating_add(latency + kHandOff,
                                 model.bus_cycles(isa::timing::bursts_covering(run, burst))));
    return cycles;
  };
  std::uint64_t bound = 0;
  for (const isa::Word& word : program) {
    // The fetch: one instruction spans at most kInstructionBytes / burst + 1 bursts.
    bound = saturating_add(
        bound, latency + model.bus_cycles(isa::kInstructionBytes / burst + 1) + kHandOff);
    auto decoded = isa::decode(word);
    if (!decoded.ok()) continue;
    const isa::Instruction& instruction = decoded.value();
    std::uint64_t cost = 0;
    if (const auto* load = std::get_if<isa::Load>(&instruction)) {
      cost = dma(isa::timing::dma_requests(*load));
    } else if (const auto* store = std::get_if<isa::Store>(&instruction)) {
      cost = dma(isa::timing::dma_requests(*store));
    } else if (const auto* gather = std::get_if<isa::Gather>(&instruction)) {
      cost = std::max(dma(isa::timing::dma_requests(*gather)),
                      static_cast<std::uint64_t>(isa::timing::gather_mover_cycles(
                          *gather, config.dma_mover_bytes_per_cycle())));
    } else {
      const std::int64_t compute = isa::timing::compute_cycles(instruction, params);
      cost = compute > 0 ? static_cast<std::uint64_t>(compute) : 0;
    }
    bound = saturating_add(bound, saturating_add(cost, kHandOff));
  }
  return bound;
}

std::vector<RtlModelInfo> rtl_models() {
  std::vector<RtlModelInfo> models;
  for (const auto& entry : detail::model_entries()) {
    RtlModelInfo info{entry.name, entry.config_path, "", entry.threads};
    auto check = check_hw_config_file(entry.config_path);
    if (check.ok()) info.config_hash = content_hash(*check.config);
    models.push_back(std::move(info));
  }
  return models;
}

Result<RtlResult> run_rtl(const HwConfig& config, std::span<const isa::Word> program,
                          sim::DramImage dram, const RtlOptions& options, int threads) {
  const std::string hash = content_hash(config);
  const auto models = rtl_models();
  const auto& entries = detail::model_entries();
  const detail::ModelEntry* chosen = nullptr;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].config_hash != hash) continue;
    if (!chosen || entries[i].threads == threads) chosen = &entries[i];
  }
  if (!chosen) {
    std::string built;
    for (const auto& model : models)
      built += (built.empty() ? "" : ", ") + model.name + " (" + model.config_hash + ")";
    if (built.empty()) built = "none: Verilator was not found when this build was configured";
    return fail("no RTL model was built for config '" + config.name + "' (content hash " + hash +
                "); built models: " + built +
                ". Add the config to TESSEL_RTL_CONFIGS (hw/harness/CMakeLists.txt).");
  }
  RtlOptions capped = options;
  if (capped.max_cycles == 0) {
    const std::uint64_t bound = program_cycle_bound(config, program);
    capped.max_cycles = bound > (UINT64_MAX - 1'000'000) / 2 ? UINT64_MAX : 2 * bound + 1'000'000;
  }
  return chosen->run(config, program, std::move(dram), capped);
}

}  // namespace tessel::hw
