// pools-before-concat on a quantized graph (what `optimal` compiles) changes no number: GoogLeNet
// computes the same integers in every tensor, and the same output, bit for bit.
#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/policy_graph.hpp"
#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel {
namespace {

ir::Graph for_policy(const ir::Graph& g, std::string_view policy) {
  auto p = passes::graph_for_policy(g, policy);
  EXPECT_TRUE(p.ok()) << p.reason();
  return std::move(p.value());
}

std::map<std::string, cpu::TensorData> run(const ir::Graph& g) {
  std::map<std::string, cpu::TensorData> inputs;
  for (ir::OpId id : g.inputs()) {
    const std::string& name = g.op(id).outputs[0];
    inputs.emplace(name, cpu::default_input(g.tensor(name).shape, 0));
  }
  cpu::Executor executor(g);
  cpu::RunOptions keep;
  keep.keep_intermediates = true;
  auto out = executor.run(inputs, keep);
  EXPECT_TRUE(out.ok()) << out.reason();
  return out.ok() ? std::move(out.value()) : std::map<std::string, cpu::TensorData>{};
}

TEST(PoolsBeforeConcat, googlenet_computes_the_same_integers_after_the_rewrite) {
  auto built = zoo::build_model("googlenet");
  ASSERT_TRUE(built.ok()) << built.reason();
  const ir::Graph folded = for_policy(built.value(), "optimal");
  ASSERT_TRUE(passes::pools_before_concat_applies(folded));
  for (const int bits : {8, 16}) {
    SCOPED_TRACE(std::to_string(bits) + " bits");
    quant::QuantConfig config;
    config.bits = bits;
    auto quantized = cpu::quantize_model(folded, config, cpu::synthetic_samples(folded, config));
    ASSERT_TRUE(quantized.ok()) << quantized.reason();
    const ir::Graph& a = quantized.value().graph;
    ir::Graph pooled_float = folded, b = a;
    const Status rewritten = passes::pools_before_concat(pooled_float, b);
    ASSERT_TRUE(rewritten.ok()) << rewritten.reason();
    EXPECT_FALSE(passes::pools_before_concat_applies(pooled_float));
    EXPECT_FALSE(passes::pools_before_concat_applies(b));
    // maxpool3 and maxpool4 each became one pool per branch (4 each) and a Concat, in both.
    for (const ir::Graph* g : {&pooled_float, &b}) {
      int pools = 0;
      for (ir::OpId id = 0; id < g->num_ops(); ++id) pools += g->op(id).kind == ir::OpKind::MaxPool;
      EXPECT_EQ(pools, 13 + 2 * 3);
      ASSERT_EQ(g->op(*g->producer("maxpool4")).kind, ir::OpKind::Concat);
      EXPECT_EQ(g->tensor("maxpool4.1").shape, (ir::Shape{1, 320, 7, 7}));
    }
    for (int k = 0; k < 4; ++k) {
      const std::string part = "maxpool4." + std::to_string(k);
      ASSERT_TRUE(b.tensor(part).quant) << part;
      EXPECT_EQ(b.tensor(part).dtype, a.tensor("maxpool4").dtype) << part;
      EXPECT_EQ(b.tensor(part).quant->scales, a.tensor("maxpool4").quant->scales) << part;
    }
    // The same integers in every tensor both runs keep, the pooled tensors and the network
    // output included.
    const auto ra = run(a);
    const auto rb = run(b);
    int compared = 0;
    for (const auto& [name, values] : ra) {
      const auto found = rb.find(name);
      if (found == rb.end() || !a.tensor(name).quant) continue;
      ++compared;
      EXPECT_EQ(values.to_i32(), found->second.to_i32()) << name;
    }
    EXPECT_GT(compared, 100);
    ASSERT_TRUE(rb.count("maxpool3") && rb.count("maxpool4"));
    for (const std::string& output : a.outputs()) {
      ASSERT_TRUE(ra.count(output) && rb.count(output)) << output;
      EXPECT_EQ(ra.at(output).to_f32(), rb.at(output).to_f32()) << output;
    }
  }
}

}  // namespace
}  // namespace tessel
