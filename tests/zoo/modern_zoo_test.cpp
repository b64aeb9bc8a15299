// The modern-workload zoo models: parameter counts equal torchvision's (and the torch.nn
// modules of experiments/models/export_transformers.py), shapes, MACs by hand.
#include <gtest/gtest.h>

#include <map>

#include "compiler/ir/analysis.hpp"
#include "compiler/stats/stats.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::zoo::modern_zoo_test {
namespace {

ir::Graph shapes_only(const std::string& name, std::int64_t batch = 1, std::int64_t seq = 0,
                      std::int64_t kv = 0, std::int64_t layers = 0) {
  ZooOptions options;
  options.layers = layers;
  options.with_weights = false;
  options.batch = batch;
  options.sequence = seq;
  options.kv_length = kv;
  auto built = build_model(name, options);
  EXPECT_TRUE(built.ok()) << built.reason();
  return std::move(built).value();
}

// Expected: `sum(p.numel() for p in m.parameters())` under Debian's torchvision 0.14
// (mobilenet_v3_large 5,483,032, efficientnet_b0 5,288,548, convnext_tiny 28,589,128,
// vit_b_16 86,567,656, regnet_x_1_6gf 9,190,136) and, for the transformers, by hand per layer:
//   BERT layer: in_proj 768*2304 + 2304, out_proj 768*768 + 768, linear1 768*3072 + 3072,
//   linear2 3072*768 + 768, two LayerNorms 2*1536: 7,087,872; x12 = 85,054,464.
//   GPT-2 block: the same 7,087,872; x12 + ln_f 1536 = 85,056,000.
//   Llama block: q, o 2048^2 each; k, v 2048*256 each; gate, up, down 2048*5632 each; two
//   RMSNorms 2048 each: 44,044,288.
// Tessel's graphs also hold the constants torch keeps as literals or buffers, added here: the
// attention scale 1/8 ([1] per attention, one shared in ViT), the causal mask [S, S] and the
// rotary cos/sin tables [S, 64].
TEST(ModernZoo, parameter_counts_equal_torch_plus_literal_constants) {
  const std::int64_t seq = 128;
  const std::map<std::string, std::int64_t> expected = {
      {"mobilenet_v3_large", 5'483'032},
      {"efficientnet_b0", 5'288'548},
      {"convnext_tiny", 28'589'128},
      {"vit_b_16", 86'567'656 + 1},
      {"regnet_x_1_6gf", 9'190'136},
      {"bert_base", 85'054'464 + 12},
      {"gpt2", 85'056'000 + 12 + seq * seq},
      {"gpt2_decode", 85'056'000 + 12},
      // GPT-2 124M (124,439,808 with its 1,024 position rows) as exported at 128 tokens: the
      // token table 50,257 x 768 once (the LM head is tied to it), the 128 position rows.
      {"gpt2_lm", 85'056'000 + 50'257 * 768 + seq * 768 + 12 + seq * seq},
      {"gpt2_lm_decode", 85'056'000 + 50'257 * 768 + 768 + 12},
      {"llama_block", 44'044'288 + 1 + seq * seq + 2 * seq * 64},
  };
  for (const auto& [name, count] : expected)
    EXPECT_EQ(ir::parameter_count(shapes_only(name)), count) << name;
}

TEST(ModernZoo, outputs_have_the_expected_shapes_at_batch_two) {
  EXPECT_EQ(shapes_only("vit_b_16", 2).tensor(shapes_only("vit_b_16", 2).outputs()[0]).shape,
            (ir::Shape{2, 1000}));
  for (const char* name : {"mobilenet_v3_large", "efficientnet_b0", "convnext_tiny"}) {
    const ir::Graph g = shapes_only(name, 2);
    EXPECT_EQ(g.tensor(g.outputs()[0]).shape, (ir::Shape{2, 1000})) << name;
  }
  const ir::Graph bert = shapes_only("bert_base", 2, 64);
  EXPECT_EQ(bert.tensor(bert.outputs()[0]).shape, (ir::Shape{2, 64, 768}));
  // A batch of decode steps: one cache per layer and sequence, token rows [1, L, d], and its
  // new rows [1, 1, d] (docs/scheduler-transformers.md "Decode"): 1 + 12 x 2 x 3 inputs and
  // outputs.
  const ir::Graph decode = shapes_only("gpt2_decode", 3, 0, 256);
  ASSERT_EQ(decode.outputs().size(), 73u);  // hidden state, then 12 x 3 x (key, value) rows
  EXPECT_EQ(decode.tensor(decode.outputs()[0]).shape, (ir::Shape{3, 1, 768}));
  EXPECT_EQ(decode.tensor(decode.outputs()[1]).shape, (ir::Shape{1, 1, 768}));
  EXPECT_EQ(decode.outputs()[72], "h.11.attn.s2.v");
  EXPECT_EQ(decode.inputs().size(), 73u);
  EXPECT_EQ(decode.tensor("past.11.value.2").shape, (ir::Shape{1, 256, 768}));
  const ir::Graph llama = shapes_only("llama_block", 1, 32);
  EXPECT_EQ(llama.tensor(llama.outputs()[0]).shape, (ir::Shape{1, 32, 2048}));
}

std::int64_t total_macs(const ir::Graph& graph) {
  auto s = stats::compute_stats(graph, {});
  EXPECT_TRUE(s.ok()) << s.reason();
  std::int64_t macs = 0;
  for (const auto& layer : s.value().layers) macs += layer.macs;
  return macs;
}

// MACs by hand, BERT-base at sequence S: per layer the four projections S*768*(2304 + 768 +
// 3072 + 3072) and attention 2 * 12 * S * S * 64; GPT-2 decode at cache L: per layer
// 768*(2304 + 768 + 3072 + 3072) for the token and 2 * 12 * (L + 1) * 64 for attention.
TEST(ModernZoo, transformer_macs_equal_the_hand_count) {
  const std::int64_t s = 128, proj = 768 * (2304 + 768 + 3072 + 3072);
  EXPECT_EQ(total_macs(shapes_only("bert_base", 1, s)), 12 * (s * proj + 2 * 12 * s * s * 64));
  EXPECT_EQ(total_macs(shapes_only("gpt2", 1, s)), 12 * (s * proj + 2 * 12 * s * s * 64));
  const std::int64_t l = 1024;
  EXPECT_EQ(total_macs(shapes_only("gpt2_decode", 1, 0, l)), 12 * (proj + 2 * 12 * (l + 1) * 64));
}

// A decode step's compulsory bytes by hand at 8 bits, cache L = 1024, batch 1: the constants
// (85,056,012: the parameters and the 12 attention scales), the inputs (the token, 768, and 24
// caches of 12 x 1024 x 64) and the outputs (the hidden state, 768, and 24 new rows of 12 x 64).
TEST(ModernZoo, decode_stats_count_the_kv_cache_as_graph_inputs) {
  auto s = stats::compute_stats(shapes_only("gpt2_decode", 1, 0, 1024), {});
  ASSERT_TRUE(s.ok()) << s.reason();
  EXPECT_EQ(s.value().constant_bytes, 85'056'012);
  EXPECT_EQ(s.value().graph_input_bytes, 768 + 24 * 12 * 1024 * 64);
  EXPECT_EQ(s.value().graph_output_bytes, 768 + 24 * 12 * 64);
}

// `--layers N` builds N of the stack's layers: one BERT layer is 1/12 of the parameters (plus
// its attention scale), and one GPT-2 block is the block, ln_f and the mask.
TEST(ModernZoo, the_layers_option_builds_that_many_layers) {
  EXPECT_EQ(ir::parameter_count(shapes_only("bert_base", 1, 128, 0, 1)), 7'087'872 + 1);
  EXPECT_EQ(ir::parameter_count(shapes_only("bert_base", 1, 128, 0, 3)), 3 * 7'087'872 + 3);
  EXPECT_EQ(ir::parameter_count(shapes_only("gpt2", 1, 128, 0, 2)),
            2 * 7'087'872 + 1536 + 2 + 128 * 128);
  const std::int64_t s = 128, proj = 768 * (2304 + 768 + 3072 + 3072);
  EXPECT_EQ(total_macs(shapes_only("bert_base", 1, s, 0, 1)), s * proj + 2 * 12 * s * s * 64);
  // gpt2_decode: one block, ln_f and its scale; 1 + 2 inputs and outputs.
  const ir::Graph decode = shapes_only("gpt2_decode", 1, 0, 64, 1);
  EXPECT_EQ(ir::parameter_count(decode), 7'087'872 + 1536 + 1);
  EXPECT_EQ(decode.inputs().size(), 3u);
  EXPECT_EQ(decode.outputs().size(), 3u);
}

// tiny_attention by hand: S 16, d 32, 2 heads of 16, MLP 64. Parameters: in_proj 32*96 + 96,
// out_proj 32*32 + 32, linear1 32*64 + 64, linear2 64*32 + 32, two LayerNorms 2*64, the scale 1:
// 8,545. MACs: 16*32*(96 + 32 + 64) + 16*64*32 projections, 2 * 2 * 16*16*16 attention.
TEST(ModernZoo, tiny_attention_counts_by_hand) {
  const ir::Graph g = shapes_only("tiny_attention");
  EXPECT_EQ(ir::parameter_count(g), 3'168 + 1'056 + 2'112 + 2'080 + 128 + 1);
  EXPECT_EQ(total_macs(g), 16 * 32 * (96 + 32 + 64) + 16 * 64 * 32 + 2 * 2 * 16 * 16 * 16);
  EXPECT_EQ(g.tensor(g.outputs()[0]).shape, (ir::Shape{1, 16, 32}));
}

// tiny_causal by hand: S 16, d 32, 2 heads of 16, MLP 4 d = 128. Parameters: c_attn 32*96 + 96,
// attn.c_proj 32*32 + 32, mlp.c_fc 32*128 + 128, mlp.c_proj 128*32 + 32, three LayerNorms of
// 2 * 32, the scale and the 16 x 16 causal mask.
TEST(ModernZoo, tiny_causal_counts_by_hand) {
  const ir::Graph g = shapes_only("tiny_causal");
  EXPECT_EQ(ir::parameter_count(g), 3'168 + 1'056 + 4'224 + 4'128 + 192 + 1 + 256);
  EXPECT_EQ(total_macs(g), 16 * 32 * (96 + 32 + 128) + 16 * 128 * 32 + 2 * 2 * 16 * 16 * 16);
  EXPECT_EQ(g.tensor(g.outputs()[0]).shape, (ir::Shape{1, 16, 32}));
  // The mask keeps its values in a shape-only graph: key j of query i iff j <= i.
  const ir::Tensor& mask = g.tensor("causal_mask");
  ASSERT_EQ(mask.f32_values.size(), 256u);
  EXPECT_EQ(mask.f32_values[0 * 16 + 0], 1.0f);
  EXPECT_EQ(mask.f32_values[0 * 16 + 1], 0.0f);
  EXPECT_EQ(mask.f32_values[5 * 16 + 5], 1.0f);
  EXPECT_EQ(mask.f32_values[5 * 16 + 6], 0.0f);
}

// tiny_lm and tiny_lm_decode by hand: tiny_causal's and tiny_decode's blocks from token ids
// (vocabulary 64) with the tied LM head. Parameters: the token table 64 x 32 (once: the head
// reads the same constant), the position rows 16 x 32 (one row for a decode step), the block and
// ln_f as before. MACs: the head's 32 x 64 a token more (an Embedding does none).
TEST(ModernZoo, tiny_lm_counts_by_hand_and_ties_its_head_to_the_token_table) {
  const ir::Graph g = shapes_only("tiny_lm");
  EXPECT_EQ(ir::parameter_count(g),
            64 * 32 + 16 * 32 + 3'168 + 1'056 + 4'224 + 4'128 + 192 + 1 + 256);
  EXPECT_EQ(total_macs(g),
            16 * 32 * (96 + 32 + 128) + 16 * 128 * 32 + 2 * 2 * 16 * 16 * 16 + 16 * 32 * 64);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.tensor("input_ids").dtype, ir::DType::i32);
  EXPECT_EQ(g.tensor("input_ids").shape, (ir::Shape{1, 16}));
  EXPECT_EQ(g.tensor(g.outputs()[0]).shape, (ir::Shape{1, 16, 64}));
  EXPECT_EQ(g.op(*g.find_op("wte")).inputs[1], "wte.weight");
  EXPECT_EQ(g.op(*g.find_op("lm_head")).inputs[1], "wte.weight");
  // `tessel stats`: the table is both readers' parameter, the network's once.
  auto s = stats::compute_stats(g, {});
  ASSERT_TRUE(s.ok()) << s.reason();
  std::int64_t per_layer = 0;
  for (const stats::LayerStats& layer : s.value().layers) per_layer += layer.params;
  EXPECT_EQ(per_layer, ir::parameter_count(g) + 64 * 32);
  EXPECT_EQ(s.value().total_params, ir::parameter_count(g));

  const ir::Graph d = shapes_only("tiny_lm_decode", 2);
  // Batch 2: an attention (and its scale constant) per sequence.
  EXPECT_EQ(ir::parameter_count(d), 64 * 32 + 32 + 3'168 + 1'056 + 4'224 + 4'128 + 192 + 2);
  EXPECT_EQ(d.tensor("input_ids").shape, (ir::Shape{2, 1}));
  ASSERT_EQ(d.outputs().size(), 1u + 2 * 2);  // logits, each sequence's new key and value rows
  EXPECT_EQ(d.tensor(d.outputs()[0]).shape, (ir::Shape{2, 1, 64}));
}

// tiny_decode by hand: d 32, 2 heads of 16, MLP 128, cache L = 16 (default). Parameters as
// tiny_causal's without the mask (3'168 + 1'056 + 4'224 + 4'128, three LayerNorms 192, the
// scale 1); MACs: one token's projections 32*(96 + 32 + 128) + 128*32 and attention
// 2 * 2 * 16 * (L + 1) (q k^T over the L + 1 keys, then p V). Inputs: the token [1, 1, 32] and
// the past keys and values [1, 16, 32]; outputs: the hidden state and the new rows [1, 1, 32].
TEST(ModernZoo, tiny_decode_counts_by_hand) {
  const ir::Graph g = shapes_only("tiny_decode");
  EXPECT_EQ(ir::parameter_count(g), 3'168 + 1'056 + 4'224 + 4'128 + 192 + 1);
  EXPECT_EQ(total_macs(g), 32 * (96 + 32 + 128) + 128 * 32 + 2 * 2 * 16 * 17);
  EXPECT_EQ(g.tensor("past.0.key").shape, (ir::Shape{1, 16, 32}));
  EXPECT_EQ(g.tensor("h.0.attn.key_cache").shape, (ir::Shape{1, 17, 32}));
  ASSERT_EQ(g.outputs().size(), 3u);
  for (const std::string& out : g.outputs())
    EXPECT_EQ(g.tensor(out).shape, (ir::Shape{1, 1, 32})) << out;
  EXPECT_EQ(g.outputs()[1], "h.0.attn.k");
  EXPECT_EQ(total_macs(shapes_only("tiny_decode", 1, 0, 5)),
            32 * (96 + 32 + 128) + 128 * 32 + 2 * 2 * 16 * 6);
}

// The modern models the accelerator path does not run whole on every config that has their
// units yet are marked for the golden executors only (ResNeXt-50, MobileNet-v3, EfficientNet-B0,
// ConvNeXt-Tiny and llama_block run: issue 36, part 3).
TEST(ModernZoo, modern_models_are_marked_for_the_golden_executors_only) {
  for (const ModelInfo& info : models()) {
    const bool modern =
        info.name == "vit_b_16" || info.name == "bert_base" || info.name.rfind("gpt2", 0) == 0;
    EXPECT_EQ(info.accelerated, !modern) << info.name;
  }
}

}  // namespace
}  // namespace tessel::zoo::modern_zoo_test
