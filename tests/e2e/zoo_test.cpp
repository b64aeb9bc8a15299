// The zoo end to end (label `slow`): each model is quantized once per config, then every policy
// is compiled and simulated: bit exact against the golden executor, DMA bytes = the scheduler's
// prediction, cycles within 10% of its cost model. The full matrix of six models x five
// policies x four configs runs in bench/e2e (figures in docs/codegen.md).
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "compiler/zoo/zoo.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e {
namespace {

struct Case {
  std::string model, config, policy;
};

// One prepared model per (model, config), shared by the policies' tests.
const pipeline::PreparedModel& prepared(const std::string& model, const HwConfig& config) {
  static std::map<std::string, std::unique_ptr<pipeline::PreparedModel>> cache;
  const std::string key = model + "@" + config.name;
  auto& slot = cache[key];
  if (!slot) {
    quant::QuantConfig qconfig;
    qconfig.bits = config.matrix.input_bits;
    auto built = zoo::build_model(model);
    EXPECT_TRUE(built.ok()) << built.reason();
    auto p = pipeline::prepare_model(built.value(), qconfig);
    EXPECT_TRUE(p.ok()) << p.reason();
    slot = std::make_unique<pipeline::PreparedModel>(std::move(p.value()));
  }
  return *slot;
}

class Zoo : public ::testing::TestWithParam<Case> {};

TEST_P(Zoo, simulator_matches_golden_and_schedule) {
  const Case& c = GetParam();
  const HwConfig config = load_hw_config(config_path(c.config));
  const pipeline::PreparedModel& model = prepared(c.model, config);
  auto r = pipeline::run_policy(model, config, c.policy);
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  RecordProperty("cycle_ratio", std::to_string(cycle_ratio(r.value())));
  EXPECT_LE(cycle_ratio(r.value()), 1.10);
  EXPECT_GE(cycle_ratio(r.value()), 0.90);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* policy : {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"})
    out.push_back({"resnet18", "npc19-deepfusion", policy});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, Zoo, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.model + "_" +
                                              param_info.param.config + "_" +
                                              param_info.param.policy;
                           for (char& ch : name)
                             if (ch == '-' || ch == '+') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace tessel::e2e
