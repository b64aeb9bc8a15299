// run_rtl(): picks the built Verilator model of a config and runs it.
#include "hw/harness/rtl_runner.hpp"

#include "hw/harness/model_registry.hpp"

namespace tessel::hw {

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
  return chosen->run(config, program, std::move(dram), options);
}

}  // namespace tessel::hw
