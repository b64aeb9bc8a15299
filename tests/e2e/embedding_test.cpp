// Token ids on the accelerator (issue 36 item 1; ISA `gather`, docs/codegen.md "Token ids"): an
// Embedding (ONNX Gather of a constant table by an INT64 input) is gathered by the tile's load
// phase straight into its output's buffer, its ids read from DRAM by the gather, its DRAM
// weights the rows it gathers (never the whole table). Built as ONNX in memory, imported as
// `tessel run -m model.onnx` imports; full simulation under every policy: bit exact, DRAM
// bytes equal to the schedule's class by class, cycles within 5% of the prediction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/zoo/zoo.hpp"
#include "tests/e2e/checks.hpp"
#include "tests/frontend/onnx_builder.hpp"

namespace tessel::e2e::embedding_test {
namespace {

using frontend::testing::ModelBuilder;
using frontend::testing::uniform;

/// ids [1, S] (INT64) -> Gather of a [V, d] table -> (with `norm`: + a position table [1, S, d],
/// LayerNorm) -> a token Linear to 10 classes.
ir::Graph token_classifier(std::int64_t seq, std::int64_t vocab, std::int64_t d, bool norm) {
  ModelBuilder model(17);
  model.ids_input("ids", {1, seq})
      .weight("table", {vocab, d}, uniform(static_cast<std::size_t>(vocab * d), 1.0F, 1))
      .node("Gather", "embed", {"table", "ids"}, {norm ? "e" : "h"}, {{"axis", 0}});
  if (norm)
    model.weight("pos", {1, seq, d}, uniform(static_cast<std::size_t>(seq * d), 0.5F, 2))
        .node("Add", "pos_add", {"e", "pos"}, {"p"})
        .weight("gamma", {d}, uniform(static_cast<std::size_t>(d), 1.0F, 3))
        .weight("beta", {d}, uniform(static_cast<std::size_t>(d), 0.2F, 4))
        .node("LayerNormalization", "ln", {"p", "gamma", "beta"}, {"h"}, {{"axis", -1}});
  model.weight("w", {d, 10}, uniform(static_cast<std::size_t>(d * 10), 0.3F, 5))
      .node("MatMul", "head", {"h", "w"}, {"y"})
      .output("y");
  return frontend::import_onnx_bytes(model.bytes(), "token_classifier.onnx");
}

/// The gathers of a program: every one a row of `d` elements from a table whose rows are whole
/// bursts apart, `rows` rows in all.
void expect_gathers(const pipeline::PolicyResult& r, std::int64_t d, std::int64_t burst,
                    std::int64_t rows) {
  std::int64_t gathered = 0;
  for (const isa::Instruction& insn : r.compiled.program.instructions)
    if (const auto* g = std::get_if<isa::Gather>(&insn)) {
      EXPECT_EQ(g->c_size, d);
      EXPECT_EQ(static_cast<std::int64_t>(g->dram_stride_y) % burst, 0);
      EXPECT_EQ(g->kind, isa::Traffic::kWeights);
      gathered += g->y_size;
    }
  EXPECT_EQ(gathered, rows);
}

// An Embedding, a position Add and a LayerNorm fuse under the fusing policies; the 50 x 40
// table's rows are 40 bytes, padded to 64 in DRAM (cloud-large's burst): every gather reads 12
// rows' 480 bytes of weights, however the table is laid out.
TEST(Embedding, gathers_token_rows_bit_exact_under_every_policy) {
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  for_every_policy(token_classifier(12, 50, 40, true), cloud,
                   [&](const char* policy, const pipeline::PolicyResult& r) {
                     expect_energy_matches(std::string("embedding ") + policy, r, cloud,
                                           CountMatch::ExactWithoutLeakage);
                     EXPECT_GT(cycle_ratio(r), 0.95);
                     EXPECT_LT(cycle_ratio(r), 1.05);
                     expect_gathers(r, 40, cloud.dram.burst_bytes, 12);
                   });
}

// A table larger than edge-small's whole 128 KiB scratchpad (4,000 x 64 = 256,000 bytes): only
// the 16 gathered rows reach the chip.
TEST(Embedding, a_table_larger_than_the_chip_gathers_only_its_rows_on_edge_small) {
  const HwConfig edge = load_hw_config(config_path("edge-small"));
  for_every_policy(token_classifier(16, 4000, 64, false), edge,
                   [&](const char*, const pipeline::PolicyResult& r) {
                     expect_gathers(r, 64, edge.dram.burst_bytes, 16);
                     EXPECT_GT(cycle_ratio(r), 0.95);
                     EXPECT_LT(cycle_ratio(r), 1.05);
                   });
}

// The zoo's language models from token ids (tiny_lm: GPT-2's shape, its LM head a Gemm by the
// same constant table the Embedding gathers from): prefill of 16 tokens and a decode step, one
// sequence and a batch of two (the position rows [S, d] broadcast over the sequences:
// Op::constant_row_period), on cloud-large: every policy bit exact, bytes equal to the
// schedule's class by class, one gathered row a token.
TEST(Embedding, the_zoo_language_models_tie_their_head_to_the_token_table) {
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  for (const char* name : {"tiny_lm", "tiny_lm_decode"})
    for (std::int64_t batch : {1, 2}) {
      SCOPED_TRACE(std::string(name) + " batch " + std::to_string(batch));
      zoo::ZooOptions options;
      options.batch = batch;
      auto graph = zoo::build_model(name, options);
      ASSERT_TRUE(graph.ok()) << graph.reason();
      const std::int64_t tokens = batch * (std::string(name) == "tiny_lm" ? 16 : 1);
      for_every_policy(graph.value(), cloud, [&](const char*, const pipeline::PolicyResult& r) {
        expect_gathers(r, 32, cloud.dram.burst_bytes, tokens);
        EXPECT_GT(cycle_ratio(r), 0.95);
        EXPECT_LT(cycle_ratio(r), 1.05);
      });
    }
}

}  // namespace
}  // namespace tessel::e2e::embedding_test
