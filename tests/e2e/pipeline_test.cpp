// The pipeline on tiny nets (fast): every policy bit exact, bytes as predicted, under either
// objective; timing-only equal to the full run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compiler/zoo/builder.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/map_space.hpp"
#include "scheduler/schedule_json.hpp"
#include "tests/e2e/checks.hpp"

namespace tessel::e2e {
namespace {

// The tiny zoo net `name`, quantized at `config`'s width.
Result<pipeline::PreparedModel> tiny_prepared(const std::string& name, const HwConfig& config) {
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  return pipeline::prepare_model(zoo::build_model(name).value(), qconfig);
}

struct Case {
  std::string model, config;
};

class TinyPipeline : public ::testing::TestWithParam<Case> {};

TEST_P(TinyPipeline, every_policy_is_bit_exact_and_moves_the_predicted_bytes) {
  const HwConfig config = load_hw_config(config_path(GetParam().config));
  auto graph = zoo::build_model(GetParam().model);
  ASSERT_TRUE(graph.ok()) << graph.reason();
  for_every_policy(graph.value(), config, [&](const char* policy, const pipeline::PolicyResult& r) {
    // Issue 37: every action the simulator counts, predicted from the schedule (lut, mul, the
    // sub-window pools' convs, and the transformer layer's matmul, norm and softmax included);
    // leakage follows the cycles, unchecked here. No kind is left unmodelled.
    const std::vector<std::string> unmodelled =
        sched::predict_energy(r.scheduled.schedule, r.scheduled.net, config).unmodelled_kinds;
    EXPECT_TRUE(unmodelled.empty());
    expect_energy_matches(GetParam().model + " " + GetParam().config + " " + policy, r, config,
                          CountMatch::ExactWithoutLeakage);
  });
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, TinyPipeline,
    ::testing::Values(Case{"tiny_conv", "vta-pynq"}, Case{"tiny_residual", "edge-small"},
                      Case{"tiny_depthwise", "npc19-deepfusion"}, Case{"tiny_se", "cloud-large"},
                      Case{"tiny_se_wide", "cloud-large"}, Case{"tiny_grouped", "edge-small"},
                      Case{"tiny_grouped", "cloud-large"}, Case{"tiny_attention", "cloud-large"},
                      Case{"tiny_llama", "cloud-large"}, Case{"tiny_layout", "cloud-large"},
                      Case{"tiny_vit", "cloud-large"}, Case{"tiny_swin", "cloud-large"},
                      Case{"tiny_maxvit", "cloud-large"}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      std::string name = param_info.param.model + "_" + param_info.param.config;
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

// Issue 36: a config without the lookup-table unit refuses the first unary function, naming
// the op and the config key (edge-small declares no optional vector unit).
TEST(TinyPipeline, a_config_without_the_lut_unit_refuses_naming_the_op_and_the_unit) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  auto model = tiny_prepared("tiny_se", config);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, "fusion");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.reason().find("'expand_hswish' (HardSwish)"), std::string::npos) << r.reason();
  EXPECT_NE(r.reason().find("vector.lookup_table: true"), std::string::npos) << r.reason();
  EXPECT_NE(r.reason().find("'edge-small'"), std::string::npos) << r.reason();
}

// Issue 36 part 3: a transformer layer on a config without the row normaliser, the matrix
// unit's activation operands or the lookup table refuses its first such op by name and unit
// (edge-small has none of them; the attention scale's table lookup comes first).
TEST(TinyPipeline, a_transformer_on_a_config_without_its_units_is_refused_by_name) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  auto model = tiny_prepared("tiny_attention", config);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, "layerwise");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.reason().find("'layers.0.self_attn.q_scaled' (Mul)"), std::string::npos)
      << r.reason();
  EXPECT_NE(r.reason().find("vector.lookup_table: true"), std::string::npos) << r.reason();
  EXPECT_NE(r.reason().find("'edge-small'"), std::string::npos) << r.reason();
}

TEST(TinyPipeline, timing_only_gives_the_full_runs_cycles_and_bytes) {
  const HwConfig config = load_hw_config(config_path("edge-small"));
  auto model = tiny_prepared("tiny_residual", config);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto full = pipeline::run_policy(model.value(), config, "fusion");
  pipeline::RunOptions timing;
  timing.timing_only = true;
  auto fast = pipeline::run_policy(model.value(), config, "fusion", timing);
  ASSERT_TRUE(full.ok() && fast.ok());
  EXPECT_EQ(fast.value().report.cycles, full.value().report.cycles);
  EXPECT_EQ(fast.value().report.dram.total_bytes(), full.value().report.dram.total_bytes());
  EXPECT_FALSE(fast.value().bit_exact.has_value());
}

// `tessel run --objective latency`: optimal and opfusion schedule for cycles, and the programs
// are still bit exact with the predicted bytes.
TEST(TinyPipeline, the_latency_objective_is_bit_exact_too) {
  for (const Case& c :
       {Case{"tiny_residual", "edge-small"}, Case{"tiny_conv", "npc19-deepfusion"}}) {
    SCOPED_TRACE(c.model + " on " + c.config);
    const HwConfig config = load_hw_config(config_path(c.config));
    auto model = tiny_prepared(c.model, config);
    ASSERT_TRUE(model.ok()) << model.reason();
    pipeline::RunOptions latency;
    latency.objective = sched::Objective::Latency;
    for (const char* policy : {"opfusion", "optimal"}) {
      SCOPED_TRACE(policy);
      auto r = pipeline::run_policy(model.value(), config, policy, latency);
      ASSERT_TRUE(r.ok()) << r.reason();
      EXPECT_EQ(r.value().scheduled.schedule.objective, "latency");
      expect_consistent(r.value(), config);
    }
  }
}

// Issue 36 part 3: a causal GPT-2 block (tiny_causal: sequence 16, d 32, 2 heads, GELU tanh)
// on cloud-large under every policy: bit exact against the golden masked Softmax, bytes as
// scheduled, its softmax the ISA's causal band (scheduler/causal_mask.hpp) with the diagonal at
// each tile's first query, never the mask loaded from DRAM.
TEST(TinyPipeline, a_causal_block_runs_its_mask_as_the_softmax_band_bit_exact) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  for_every_policy(
      zoo::build_model("tiny_causal").value(), config,
      [](const char*, const pipeline::PolicyResult& r) {
        std::int64_t queries = 0;  // rows of every causal softmax, each starting at its offset
        for (const isa::Instruction& instruction : r.compiled.program.instructions) {
          const auto* softmax = std::get_if<isa::Softmax>(&instruction);
          if (softmax == nullptr) continue;
          EXPECT_TRUE(softmax->causal);
          EXPECT_EQ(softmax->mask_offset, queries);  // tiles in query order, diagonal 0
          EXPECT_EQ(softmax->c_size, 16u);
          EXPECT_EQ(softmax->y_size, 2u);
          queries += softmax->x_size;
        }
        EXPECT_EQ(queries, 16);
      });
}

// Bytes that the program's activation DMAs of kind `Dma` (isa::Load or isa::Store) move within
// DRAM region `region`, and how many such DMAs there are.
template <class Dma>
std::pair<std::int64_t, int> dma_bytes_within(const codegen::CompiledProgram& compiled,
                                              const std::string& region) {
  const codegen::DramRegion* r = compiled.layout.find(region);
  EXPECT_NE(r, nullptr) << region;
  if (r == nullptr) return {0, 0};
  std::pair<std::int64_t, int> moved{0, 0};
  for (const isa::Instruction& instruction : compiled.program.instructions) {
    const auto* dma = std::get_if<Dma>(&instruction);
    if (dma == nullptr || dma->kind == isa::Traffic::kWeights) continue;
    const auto at = static_cast<std::int64_t>(dma->dram_addr);
    if (at < r->offset || at >= r->offset + r->size_bytes) continue;
    moved.first += std::int64_t{dma->y_size} * dma->x_size * dma->c_size;
    ++moved.second;
  }
  return moved;
}

// Issue 36 item 3, LLM decode (tiny_decode: one GPT-2 block, d 32, a cache of L = 16 rows) on
// cloud-large under every policy: bit exact (the hidden state and both new rows), bytes as
// scheduled. The cache is a [L + 1][d] region: the past keys are written into rows 0..15 by the
// image (a region within it), the step stores exactly one row of 32 bytes at row 16 (the new
// key, read back from there as its output), and the scores MatMul loads the 17 rows once:
// 544 bytes (docs/scheduler-transformers.md "Decode").
TEST(TinyPipeline, a_decode_step_appends_its_rows_to_the_cache_in_place_bit_exact) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  for_every_policy(zoo::build_model("tiny_decode").value(), config,
                   [](const char*, const pipeline::PolicyResult& r) {
                     EXPECT_EQ(r.outputs.size(), 3u);  // ln_f, h.0.attn.k, h.0.attn.v
                     EXPECT_EQ(r.outputs.count("h.0.attn.v"), 1u);
                     const codegen::CompiledProgram& code = r.compiled;
                     for (const std::string which : {"key", "value"}) {
                       const std::string cache = "h.0.attn." + which + "_cache";
                       const codegen::DramRegion* region = code.layout.find(cache);
                       const codegen::DramRegion* past = code.layout.find("past.0." + which);
                       const codegen::DramRegion* row =
                           code.layout.find(which == "key" ? "h.0.attn.k" : "h.0.attn.v");
                       ASSERT_TRUE(region && past && row) << cache;
                       EXPECT_EQ(region->size_bytes, 17 * 32);
                       EXPECT_EQ(past->offset, region->offset);
                       EXPECT_EQ(past->size_bytes, 16 * 32);
                       EXPECT_EQ(row->offset, region->offset + 16 * 32);
                       EXPECT_EQ(row->kind, codegen::RegionKind::Output);
                       const auto stored = dma_bytes_within<isa::Store>(code, cache);
                       EXPECT_EQ(stored, (std::pair<std::int64_t, int>{32, 1})) << cache;
                       EXPECT_EQ(dma_bytes_within<isa::Load>(code, cache).first, 17 * 32) << cache;
                     }
                   });
}

// A batch of 3 decode steps (tiny_decode --batch 3): the Linears run once over the 3 token rows
// (their weights loaded as at batch 1), each sequence's attention on its row of q|k|v against
// its own cache; bit exact (the hidden states and 3 x 2 new rows), bytes as scheduled, and in
// each of the 6 caches one 32-byte row stored, its 17 rows loaded once.
TEST(TinyPipeline, a_batch_of_decode_steps_shares_the_weights_and_keeps_one_cache_each) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  zoo::ZooOptions options;
  options.batch = 3;
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(zoo::build_model("tiny_decode", options).value(), qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto one = tiny_prepared("tiny_decode", config);
  ASSERT_TRUE(one.ok()) << one.reason();
  for (const char* policy : {"layerwise", "fusion", "optimal"}) {
    SCOPED_TRACE(policy);
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    expect_consistent(r.value(), config);
    EXPECT_EQ(r.value().outputs.size(), 7u);
    for (int b = 0; b < 3; ++b)
      for (const std::string which : {"key", "value"}) {
        const std::string cache = "h.0.attn.s" + std::to_string(b) + "." + which + "_cache";
        EXPECT_EQ(dma_bytes_within<isa::Store>(r.value().compiled, cache),
                  (std::pair<std::int64_t, int>{32, 1}))
            << cache;
        EXPECT_EQ(dma_bytes_within<isa::Load>(r.value().compiled, cache).first, 17 * 32) << cache;
      }
    // The four Linears' weights (and requant tables) cross once, as at batch 1.
    auto single = pipeline::run_policy(one.value(), config, policy);
    ASSERT_TRUE(single.ok()) << single.reason();
    const auto& t = r.value().scheduled.schedule.traffic;
    const auto& t1 = single.value().scheduled.schedule.traffic;
    EXPECT_EQ(t.requant_tables_read, t1.requant_tables_read);
    // Per sequence the attention loads its own scale table (256 B) and exp tables (1 KiB).
    EXPECT_EQ(t.weights_read, t1.weights_read + 2 * (256 + 1024));
  }
}

// A batch of 2 prefill sequences (tiny_attention and tiny_causal --batch 2): the Linears run
// once over the 2 x 16 token rows (their weights loaded as at batch 1), each sequence's
// attention on its own rows of q|k|v (`<attn>.s<b>.qkv`, a row-slice view); bit exact and
// bytes as scheduled, layerwise and optimal (fused attention).
TEST(TinyPipeline, a_batch_of_prefill_sequences_shares_the_weights) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  for (const char* name : {"tiny_attention", "tiny_causal"}) {
    SCOPED_TRACE(name);
    zoo::ZooOptions options;
    options.batch = 2;
    quant::QuantConfig qconfig;
    qconfig.bits = config.matrix.input_bits;
    auto model = pipeline::prepare_model(zoo::build_model(name, options).value(), qconfig);
    ASSERT_TRUE(model.ok()) << model.reason();
    auto one = tiny_prepared(name, config);
    ASSERT_TRUE(one.ok()) << one.reason();
    for (const char* policy : {"layerwise", "optimal"}) {
      SCOPED_TRACE(policy);
      auto r = pipeline::run_policy(model.value(), config, policy);
      ASSERT_TRUE(r.ok()) << r.reason();
      expect_consistent(r.value(), config);
      auto single = pipeline::run_policy(one.value(), config, policy);
      ASSERT_TRUE(single.ok()) << single.reason();
      const auto& t = r.value().scheduled.schedule.traffic;
      const auto& t1 = single.value().scheduled.schedule.traffic;
      EXPECT_EQ(t.requant_tables_read, t1.requant_tables_read);
      // The second sequence's attention loads its own scale table (256 B) and exp tables
      // (1 KiB), as a decode batch's (above).
      EXPECT_EQ(t.weights_read, t1.weights_read + 256 + 1024);
    }
  }
}

// An exported MatMul by a constant (HF GPT-2's Conv1D) is a Gemm without transB, its weights
// [K][N]: tiny_causal with every Linear written so (weights transposed, transB 0) is as bit
// exact as with transB (codegen's weight rows read [ci][co], dram_plan.cpp).
TEST(TinyPipeline, token_linears_without_trans_b_are_bit_exact) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  ir::Graph graph = zoo::build_model("tiny_causal").value();
  int rewritten = 0;
  for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
    const ir::Op& op = graph.op(id);
    if (op.kind != ir::OpKind::Gemm || op.get_int("transB") == 0) continue;
    ir::Tensor& w = graph.tensor_mut(op.inputs[1]);
    const std::int64_t n = w.shape[0], k = w.shape[1];
    std::vector<float> kn(w.f32_values.size());
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < k; ++c)
        kn[static_cast<std::size_t>(c * n + r)] = w.f32_values[static_cast<std::size_t>(r * k + c)];
    w.f32_values = std::move(kn);
    w.shape = {k, n};
    graph.attrs(id)["transB"] = std::int64_t{0};
    ++rewritten;
  }
  ASSERT_EQ(rewritten, 4);  // c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(graph, qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  for (const char* policy : {"layerwise", "optimal"}) {
    SCOPED_TRACE(policy);
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    expect_consistent(r.value(), config);
  }
}

// Attention fusion in row blocks (docs/scheduler-mapping.md "Attention fusion"): optimal's
// schedule of tiny_attention on cloud-large (the whole layer in one group: q, k, v projections,
// the chain q_scaled -> scores -> softmax -> context, out_proj, add1, norm1, the MLP, add2,
// norm2) re-mapped by hand to 4 row blocks of 4 tokens, costed and checked from the mapping,
// compiled and simulated: bit exact, simulated bytes = the schedule's class by class. The first
// row block runs k.linear and v.linear whole (K and V, read whole by the MatMuls, stay on chip;
// the later blocks skip them), so the group reads the input (16 x 32 bytes, kept: the K and V
// projections read it whole) and writes norm2's output once.
TEST(TinyPipeline, attention_in_four_row_blocks_makes_k_and_v_once_and_is_bit_exact) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  auto model = tiny_prepared("tiny_attention", config);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto searched =
      sched::schedule_graph(model.value().prepared, config, "optimal", sched::Objective::Bytes);
  ASSERT_TRUE(searched.ok()) << searched.reason();
  nlohmann::json json = sched::to_json(searched.value().schedule, searched.value().net);
  const std::string attn = "layers.0.self_attn";
  bool edited = false;
  for (nlohmann::json& group : json["groups"]) {
    bool scores = false;
    for (const auto& name : group["op_names"]) scores |= name == attn + ".scores";
    if (!scores) continue;
    edited = true;
    nlohmann::json choices = {{"op_names", group["op_names"]}, {"mapping", group["mapping"]}};
    for (nlohmann::json& op : choices["mapping"]["ops"]) {
      for (const char* derived : {"rows_per_step", "accumulator"}) op.erase(derived);
      for (nlohmann::json& loop : op["loops"]) {
        loop.erase("size");
        if (loop["axis"] == "rows") loop["tiles"] = 4;
      }
      // Kept: the input (the K and V projections read it whole in every row block), K and V
      // (made by the first row block, read by every one).
      for (nlohmann::json& operand : op["operands"]) {
        for (const char* derived : {"buffers", "store"}) operand.erase(derived);
        const std::string tensor = operand.value("tensor", "");
        if (tensor == "input" || tensor == attn + ".k.linear" || tensor == attn + ".v.linear") {
          operand["residency"] = "kept";
          operand["double_buffered"] = false;
        }
      }
    }
    group = choices;
  }
  ASSERT_TRUE(edited) << "optimal did not fuse the attention chain";
  auto mapped = sched::schedule_graph_from_mappings(model.value().prepared, config, json);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  pipeline::PolicyResult r;
  r.policy = "optimal (4 row blocks)";
  r.scheduled = std::move(mapped.value());
  const sched::GroupSchedule* chain = nullptr;
  for (const sched::GroupSchedule& g : r.scheduled.schedule.groups)
    for (int op : g.ops)
      if (r.scheduled.net.op(op).name == attn + ".scores") chain = &g;
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->row_tiles, 4);
  const sched::RunsOnce once = sched::runs_once(r.scheduled.net, chain->ops, chain->row_tiles,
                                                chain->col_tiles, chain->channel_tiles);
  std::vector<std::string> made_once;
  for (size_t pos = 0; pos < chain->ops.size(); ++pos)
    if (once.at(pos)) made_once.push_back(r.scheduled.net.op(chain->ops[pos]).name);
  EXPECT_EQ(made_once, (std::vector<std::string>{attn + ".k.linear", attn + ".v.linear"}));
  EXPECT_EQ(chain->traffic.activations_read, 16 * 32);
  EXPECT_EQ(chain->traffic.activations_written, 16 * 32);
  auto compiled =
      codegen::compile(model.value().quantized, r.scheduled, config, model.value().input_values);
  ASSERT_TRUE(compiled.ok()) << compiled.reason();
  r.compiled = std::move(compiled.value());
  r.scheduled.schedule.instruction_fetch_bytes = codegen::instruction_fetch_bytes(r.compiled);
  for (const auto& instruction : r.compiled.program.instructions) {
    auto word = isa::encode(instruction);
    ASSERT_TRUE(word.ok()) << word.reason();
    r.words.push_back(word.value());
  }
  ASSERT_TRUE(pipeline::simulate_policy(model.value(), config, r).ok());
  expect_consistent(r, config);
  EXPECT_LE(cycle_ratio(r), 1.05);  // 15,202 / 14,894 (x1.021) in session 29
  EXPECT_GE(cycle_ratio(r), 0.95);
}

// nn.MultiheadAttention as torch.onnx exports it for batch_first inputs (torchvision's ViTs):
// the tokens transposed to sequence-first [S, 1, d], q|k|v sliced from one in_proj, heads as
// 3-D views [S, H, hd] transposed to [H, S, hd] (keys to [H, hd, S]), the context merged back
// through [S, H, hd] and [S, d]. The converter takes the batch transposes as the token tensor
// itself and reads the 3-D head views as a batch of one's 4-D ones: every policy bit exact,
// bytes as scheduled.
ir::Graph sequence_first_attention() {
  const std::int64_t s = 8, d = 32, heads = 2, hd = 16;
  zoo::NetBuilder net("sequence_first_attention", {});
  const std::string x = net.input_shaped("input", {1, s, d});
  const std::string normed = net.layer_norm(x, "ln", 1e-6);
  const std::string t = net.transpose(normed, "to_sequence_first", {1, 0, 2});  // [S, 1, d]
  const std::string qkv = net.dense(t, "in_proj", 3 * d);                       // [S, 1, 3d]
  const auto head_view = [&](std::int64_t part, const std::string& name,
                             std::vector<std::int64_t> perm) {
    const std::string sliced = net.slice(qkv, name + ".slice", 2, part * d, (part + 1) * d);
    return net.transpose(net.reshape(sliced, name + ".heads", {s, heads, hd}), name + ".t",
                         std::move(perm));
  };
  const std::string q = head_view(0, "q", {1, 0, 2});   // [H, S, hd]
  const std::string kT = head_view(1, "k", {1, 2, 0});  // [H, hd, S]
  const std::string v = head_view(2, "v", {1, 0, 2});
  const std::string scale = net.constant("scale", {1}, {0.25f});
  const std::string scores =
      net.matmul(net.op("q_scaled", ir::OpKind::Mul, {q, scale}), kT, "scores");
  const std::string probs = net.softmax_axis(scores, "softmax", 2);
  const std::string context = net.matmul(probs, v, "context");            // [H, S, hd]
  const std::string merged = net.transpose(context, "merge", {1, 0, 2});  // [S, H, hd]
  const std::string rows = net.reshape(merged, "rows", {s, d});
  const std::string out = net.reshape(net.dense(rows, "out_proj", d), "out_rows", {s, 1, d});
  const std::string back = net.transpose(out, "to_batch_first", {1, 0, 2});  // [1, S, d]
  return net.finish({net.add(back, x, "residual")});
}

TEST(TinyPipeline, sequence_first_attention_as_torch_exports_it_runs_bit_exact) {
  for_every_policy(sequence_first_attention(), load_hw_config(config_path("cloud-large")),
                   [](const char*, const pipeline::PolicyResult& r) {
                     EXPECT_GT(cycle_ratio(r), 0.95);
                     EXPECT_LT(cycle_ratio(r), 1.05);
                   });
}

// A packed q|k|v projection taken apart as torchvision's Swin and timm's ViTs write it:
// reshape to [1, S, 3, H, hd], permute(2, 0, 3, 1, 4), qkv[0], qkv[1], qkv[2]. split-packed-heads
// makes each part a Slice and head view of the projection, split-sliced-linear one Linear each.
ir::Graph packed_qkv_attention() {
  const std::int64_t s = 8, d = 32, heads = 2, hd = 16;
  zoo::NetBuilder net("packed_qkv_attention", {});
  const std::string x = net.input_shaped("input", {1, s, d});
  const std::string qkv = net.dense(x, "qkv", 3 * d);
  const std::string packed = net.transpose(net.reshape(qkv, "qkv_heads", {1, s, 3, heads, hd}),
                                           "qkv_parts", {2, 0, 3, 1, 4});
  const auto part = [&](std::int64_t i, const std::string& name) {
    return net.op(name, ir::OpKind::Gather, {packed},
                  {{"axis", std::int64_t{0}}, {"indices", std::vector<std::int64_t>{i}}});
  };
  const std::string q = part(0, "q"), k = part(1, "k"), v = part(2, "v");  // [1, H, S, hd]
  const std::string scale = net.constant("scale", {1}, {0.25f});
  const std::string scores = net.matmul(net.op("q_scaled", ir::OpKind::Mul, {q, scale}),
                                        net.transpose(k, "k_t", {0, 1, 3, 2}), "scores");
  const std::string context = net.matmul(net.softmax_axis(scores, "softmax", 3), v, "context");
  const std::string merged =
      net.reshape(net.transpose(context, "merge", {0, 2, 1, 3}), "rows", {1, s, d});
  return net.finish({net.add(net.dense(merged, "proj", d), x, "residual")});
}

TEST(TinyPipeline, a_packed_qkv_projection_runs_bit_exact) {
  for_every_policy(packed_qkv_attention(), load_hw_config(config_path("cloud-large")),
                   [](const char*, const pipeline::PolicyResult& r) {
                     for (const sched::Op& op : r.scheduled.net.ops)
                       EXPECT_NE(op.name, "qkv");  // split into q, k and v Linears
                     EXPECT_GT(cycle_ratio(r), 0.95);
                     EXPECT_LT(cycle_ratio(r), 1.05);
                   });
}

// Swin's window partition and its reverse (issue 36 item 1): an NHWC map [1, 8, 8, 32] as 4
// windows of 4 x 4 tokens ([1, 2, 4, 2, 4, 32] -> perm [0, 1, 3, 2, 4, 5] -> [4, 16, 32]), a
// Linear over the tokens, and back to the map for the residual. Each reordering is one gather
// (scheduler/pixel_gather.hpp) loaded in strided boxes; the windowed tokens are a graph output
// too, so a wrong order shows in them and not only in the map.
ir::Graph window_partition() {
  zoo::NetBuilder net("window_partition", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string c = net.conv(x, "embed", zoo::conv_spec(32, 1));
  const std::string map = net.transpose(c, "to_nhwc", {0, 2, 3, 1});  // [1, 8, 8, 32]
  const std::string split = net.reshape(map, "window_split", {1, 2, 4, 2, 4, 32});
  const std::string moved = net.transpose(split, "window_order", {0, 1, 3, 2, 4, 5});
  const std::string windows = net.reshape(moved, "windows", {4, 16, 32});
  const std::string mixed = net.dense(windows, "proj", 32);  // [4, 16, 32]
  const std::string grid = net.reshape(mixed, "window_grid", {1, 2, 2, 4, 4, 32});
  const std::string back = net.transpose(grid, "map_order", {0, 1, 3, 2, 4, 5});
  const std::string merged = net.reshape(back, "merged", {1, 8, 8, 32});
  // The map leaves as tokens [1, 64, 32] through a Linear (a 4-D graph output is read back
  // as NCHW, a view as an output by its source's name).
  const std::string residual = net.add(merged, map, "residual");
  const std::string tokens = net.reshape(residual, "residual_tokens", {1, 64, 32});
  return net.finish({mixed, net.dense(tokens, "head", 32)});
}

TEST(TinyPipeline, a_window_partition_and_its_reverse_run_bit_exact_as_gathers) {
  const ir::Graph graph = window_partition();
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  for_every_policy(graph, cloud, [&](const char* policy, const pipeline::PolicyResult& r) {
    // The gathers' loads counted in the program size (instruction fetch).
    expect_energy_matches(std::string("window_partition ") + policy, r, cloud,
                          CountMatch::ExactWithoutLeakage);
    int gathers = 0;
    for (const sched::Op& op : r.scheduled.net.ops) gathers += !op.pixel_source.empty();
    EXPECT_EQ(gathers, 2);
    EXPECT_GT(cycle_ratio(r), 0.95);
    EXPECT_LT(cycle_ratio(r), 1.05);
  });
  for_every_policy(graph, load_hw_config(config_path("vta-pynq")));
  for_every_policy(graph, load_hw_config(config_path("edge-small")));
}

// Swin's shifted windows and patch merging: torch.roll by -2 (a Slice of each side of the rows
// and columns, joined the other way round) before the window partition and by +2 after its
// reverse, then patch merging's four strided maps x[:, a::2, b::2] joined along the channels.
// The roll folds into the partition's gather (and the reverse's), each strided map is a gather
// of its own, and their channel Concat a copy.
ir::Graph shifted_windows() {
  zoo::NetBuilder net("shifted_windows", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string c = net.conv(x, "embed", zoo::conv_spec(32, 1));
  const std::string map = net.transpose(c, "to_nhwc", {0, 2, 3, 1});  // [1, 8, 8, 32]
  const auto roll = [&](const std::string& t, const std::string& name, std::int64_t shift) {
    std::string r = t;
    for (std::int64_t axis : {1, 2}) {
      const std::string n = name + std::to_string(axis);
      const std::int64_t cut = shift < 0 ? -shift : 8 - shift;
      r = net.concat_axis({net.slice(r, n + ".tail", axis, cut, INT64_MAX),
                           net.slice(r, n + ".head", axis, 0, cut)},
                          n, axis);
    }
    return r;
  };
  const std::string shifted = roll(map, "shift", -2);
  const std::string split = net.reshape(shifted, "window_split", {1, 2, 4, 2, 4, 32});
  const std::string moved = net.transpose(split, "window_order", {0, 1, 3, 2, 4, 5});
  const std::string windows = net.reshape(moved, "windows", {4, 16, 32});
  const std::string mixed = net.dense(windows, "proj", 32);
  const std::string grid = net.reshape(mixed, "window_grid", {1, 2, 2, 4, 4, 32});
  const std::string back = net.transpose(grid, "map_order", {0, 1, 3, 2, 4, 5});
  const std::string merged = roll(net.reshape(back, "merged", {1, 8, 8, 32}), "unshift", 2);
  const std::string residual = net.add(merged, map, "residual");
  std::vector<std::string> quarters;
  for (std::int64_t a : {0, 1})
    for (std::int64_t b : {0, 1})
      quarters.push_back(net.op("quarter" + std::to_string(a) + std::to_string(b),
                                ir::OpKind::Slice, {residual},
                                {{"starts", std::vector<std::int64_t>{a, b}},
                                 {"ends", std::vector<std::int64_t>{8, 8}},
                                 {"axes", std::vector<std::int64_t>{1, 2}},
                                 {"steps", std::vector<std::int64_t>{2, 2}}}));
  const std::string patches = net.concat_axis(quarters, "patches", -1);  // [1, 4, 4, 128]
  const std::string tokens = net.reshape(patches, "patch_tokens", {1, 16, 128});
  return net.finish({mixed, net.dense(tokens, "reduction", 32)});
}

TEST(TinyPipeline, shifted_windows_and_patch_merging_run_bit_exact_as_gathers) {
  const ir::Graph graph = shifted_windows();
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  for_every_policy(graph, cloud, [&](const char* policy, const pipeline::PolicyResult& r) {
    expect_energy_matches(std::string("shifted_windows ") + policy, r, cloud,
                          CountMatch::ExactWithoutLeakage);
    int gathers = 0;
    for (const sched::Op& op : r.scheduled.net.ops) gathers += !op.pixel_source.empty();
    EXPECT_EQ(gathers, 6);  // the shifted partition, the unshifted reverse, four quarters
    EXPECT_GT(cycle_ratio(r), 0.95);
    EXPECT_LT(cycle_ratio(r), 1.05);
  });
  for_every_policy(graph, load_hw_config(config_path("edge-small")));
}

// tiny_swin (compiler/zoo/windows.cpp): Swin's windowed attention over 4 windows of 16 tokens,
// block 1 with the relative-position bias, block 2 swin_v2's cosine attention, its per-head
// logit scale and the shift mask folded into the bias.
TEST(TinyPipeline, windowed_attention_over_a_batch_of_windows_runs_bit_exact) {
  const ir::Graph graph = zoo_model("tiny_swin");
  const HwConfig cloud = load_hw_config(config_path("cloud-large"));
  // edge-small, vta-pynq and npc19 have no lookup table (the scale's Mul): refused by name.
  for_every_policy(graph, cloud, [&](const char* policy, const pipeline::PolicyResult& r) {
    expect_energy_matches(std::string("windowed_attention ") + policy, r, cloud,
                          CountMatch::ExactWithoutLeakage);
    int batched = 0, periodic = 0, whole = 0, every_row = 0, head_norms = 0;
    for (const sched::Op& op : r.scheduled.net.ops) {
      batched += op.kind == sched::OpKind::MatMul && op.matmul.batch == 4;
      periodic += op.constant_heads == 2 && op.constant_row_period == 16;
      whole += op.constant_heads == 2 && op.constant_row_period == 0 && op.constant_stride_y > 0;
      every_row += op.constant_heads == 2 && op.constant_stride_y == 0;
      head_norms += op.kind == sched::OpKind::Norm && op.row_length == 16;
    }
    EXPECT_EQ(batched, 4);     // scores and context of both blocks
    EXPECT_EQ(periodic, 1);    // block 1's bias, read again per window
    EXPECT_EQ(whole, 1);       // block 2's bias + mask, one constant of every window's rows
    EXPECT_EQ(every_row, 1);   // block 2's per-head logit scale
    EXPECT_EQ(head_norms, 2);  // block 2's q and k
    EXPECT_GT(cycle_ratio(r), 0.95);
    EXPECT_LT(cycle_ratio(r), 1.05);
  });
  // 8 KiB of accumulators (a 64-row tile of q|k|v needs 24 KiB): row blocks that start inside
  // a window, so per-window portions and the bias's period start mid-tile.
  HwConfig small = cloud;
  for (auto& pad : small.scratchpads)
    if (pad.name == "accumulators") pad.size_bytes = 8192;
  int crossing = 0;  // attention groups whose row blocks do not start at window starts
  int by_rows = 0;   // row-blocked groups that make K or V per row block (their windows' rows)
  for_every_policy(graph, small, [&](const char*, const pipeline::PolicyResult& r) {
    for (const auto& g : r.scheduled.schedule.groups)
      for (int o : g.ops) {
        const sched::Op& op = r.scheduled.net.op(o);
        if (op.kind != sched::OpKind::MatMul) continue;
        crossing += 4 % g.row_tiles != 0;
        const int b = r.scheduled.net.tensor(op.inputs[1]).producer;
        const auto at = std::find(g.ops.begin(), g.ops.end(), b);
        const sched::RunsOnce once =
            sched::runs_once(r.scheduled.net, g.ops, g.row_tiles, g.col_tiles, g.channel_tiles);
        by_rows += g.row_tiles > 1 && at != g.ops.end() &&
                   !once.at(static_cast<size_t>(at - g.ops.begin()));
      }
    EXPECT_GT(cycle_ratio(r), 0.95);
    EXPECT_LT(cycle_ratio(r), 1.05);
  });
  EXPECT_GT(crossing, 0) << "no policy cut a window: the small config no longer tests that";
  EXPECT_GT(by_rows, 0) << "no policy made K or V by row blocks: the small config no longer "
                           "tests their per-window rows";
}

// A graph output that is a map with its channels last ([1, 8, 8, 32], a backbone's NHWC
// features, ConvNeXt's permuted blocks): its DRAM bytes are already its IR order, so tessel run
// reads it back as stored, not as NCHW (sched::Tensor::ir_channels_last).
TEST(TinyPipeline, an_nhwc_map_as_a_graph_output_reads_back_in_its_own_order) {
  zoo::NetBuilder net("nhwc_output", {});
  const std::string x = net.input("input", 16, 8, 8);
  const std::string map =
      net.transpose(net.conv(x, "embed", zoo::conv_spec(32, 1)), "to_nhwc", {0, 2, 3, 1});
  const ir::Graph graph = net.finish({net.layer_norm(map, "norm", 1e-6)});
  for_every_policy(graph, load_hw_config(config_path("cloud-large")),
                   [](const char*, const pipeline::PolicyResult& r) {
                     int flagged = 0;
                     for (const sched::Tensor& t : r.scheduled.net.tensors)
                       flagged += t.network_output && t.ir_channels_last;
                     EXPECT_EQ(flagged, 1);
                   });
}

}  // namespace
}  // namespace tessel::e2e
