// ResNet-18 with BatchNorm unfolded into depthwise convs (layerwise's graph): fp32 output kept,
// int8 SQNR beside the BN-folded graph's (docs/quantization.md, "BatchNorm unfolded").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel {
namespace {

std::vector<float> run_output(const ir::Graph& g) {
  std::map<std::string, cpu::TensorData> inputs;
  for (ir::OpId id : g.inputs()) {
    const std::string& name = g.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(g.tensor(name).shape, 0));
  }
  cpu::Executor executor(g);
  auto out = executor.run(inputs);
  EXPECT_TRUE(out.ok()) << out.reason();
  if (!out.ok() || out.value().size() != 1) return {};
  return out.value().begin()->second.to_f32();
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(double{a[i]} - b[i]));
    scale = std::max(scale, std::fabs(double{a[i]}));
  }
  return diff / scale;
}

class UnfoldedResnet18 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto built = zoo::build_model("resnet18");
    ASSERT_TRUE(built.ok()) << built.reason();
    original_ = new ir::Graph(std::move(built.value()));
    auto folded = passes::graph_for_policy(*original_, "opfusion");
    auto unfolded = passes::graph_for_policy(*original_, "layerwise");
    ASSERT_TRUE(folded.ok() && unfolded.ok());
    folded_ = new ir::Graph(std::move(folded.value()));
    unfolded_ = new ir::Graph(std::move(unfolded.value()));
    reference_ = new std::vector<float>(run_output(*original_));
  }
  static void TearDownTestSuite() {
    delete original_;
    delete folded_;
    delete unfolded_;
    delete reference_;
  }
  static double int8_sqnr_db(const ir::Graph& g) {
    quant::QuantConfig config;  // the defaults: int8, percentile 99.99, 4 synthetic samples
    auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
    EXPECT_TRUE(q.ok()) << q.reason();
    if (!q.ok()) return 0.0;
    return cpu::sqnr_db(*reference_, run_output(q.value().graph));
  }
  static ir::Graph* original_;
  static ir::Graph* folded_;
  static ir::Graph* unfolded_;
  static std::vector<float>* reference_;
};
ir::Graph* UnfoldedResnet18::original_ = nullptr;
ir::Graph* UnfoldedResnet18::folded_ = nullptr;
ir::Graph* UnfoldedResnet18::unfolded_ = nullptr;
std::vector<float>* UnfoldedResnet18::reference_ = nullptr;

TEST_F(UnfoldedResnet18, Fp32OutputEqualsTheOriginalGraphWithin1e5Relative) {
  const double unfolded = relative_difference(*reference_, run_output(*unfolded_));
  const double folded = relative_difference(*reference_, run_output(*folded_));
  std::printf("fp32 max|diff| / max|ref| vs the BN graph: unfolded %.3g, folded %.3g\n", unfolded,
              folded);
  EXPECT_LE(unfolded, 1e-5);
}

TEST_F(UnfoldedResnet18, Int8SqnrStaysWithinOneDecibelOfTheFoldedGraph) {
  const double folded = int8_sqnr_db(*folded_);
  const double unfolded = int8_sqnr_db(*unfolded_);
  std::printf("int8 SQNR vs fp32: folded %.2f dB, unfolded (depthwise BN) %.2f dB\n", folded,
              unfolded);
  EXPECT_GE(folded, 30.0);
  EXPECT_GE(unfolded, folded - 1.0);
}

}  // namespace
}  // namespace tessel
