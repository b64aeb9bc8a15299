// The zoo end to end (label `zoo`, issue 8's matrix): every zoo model x shipped config x policy
// compiled and simulated in full (`Matrix/Zoo`: bit exact against the golden executor, every
// instruction valid, DMA bytes by class = the scheduler's prediction, cycles within 10% of its
// cost model) and timing-only (`Matrix/ZooTiming`: the same bytes and cycles, fast). Run the
// binary itself to share one prepared model per (model, config) across the policies; ctest
// runs each case in its own process. The timing half also runs `optimal` under the latency,
// energy and edp objectives (`optimal:latency`, ...) and checks the schedule's predicted energy
// against the simulator's within 1% (docs/energy.md). Figures: docs/codegen.md, "The zoo
// matrix".
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <ostream>

#include "compiler/passes/pools_before_concat.hpp"
#include "compiler/zoo/load_model.hpp"
#include "compiler/zoo/zoo.hpp"
#include "scheduler/driver.hpp"
#include "scheduler/program_size.hpp"
#include "tests/e2e/checks.hpp"
#include "tests/support/unit_refusal.hpp"

namespace tessel::e2e {
namespace {

struct Case {
  std::string model, config, policy;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " on " << c.config << ", " << c.policy;
}

std::string case_name(const ::testing::TestParamInfo<Case>& param_info) {
  std::string name =
      param_info.param.model + "_" + param_info.param.config + "_" + param_info.param.policy;
  for (char& ch : name)
    if (ch == '-' || ch == '+' || ch == ':') ch = '_';
  return name;
}

// One prepared model per (model, config), shared by the policies' tests; optimal gets its own
// where it pools before Concats (passes::pools_before_concat_for_policy; GoogLeNet).
const pipeline::PreparedModel& prepared(const std::string& model, const HwConfig& config,
                                        const std::string& policy) {
  static std::map<std::string, std::unique_ptr<pipeline::PreparedModel>> cache;
  static std::map<std::string, bool> rewrites;  // model -> pools-before-concat changes it
  if (!rewrites.count(model)) {
    zoo::ZooOptions shapes_only;
    shapes_only.with_weights = false;
    auto shapes = zoo::build_model(model, shapes_only);
    EXPECT_TRUE(shapes.ok()) << shapes.reason();
    rewrites[model] = shapes.ok() && passes::pools_before_concat_applies(shapes.value());
  }
  const bool pooled = passes::pools_before_concat_for_policy(policy) && rewrites[model];
  const std::string key = model + "@" + config.name + (pooled ? "@pooled" : "");
  auto& slot = cache[key];
  if (!slot) {
    quant::QuantConfig qconfig;
    qconfig.bits = config.matrix.input_bits;
    auto built = zoo::build_model(model);
    EXPECT_TRUE(built.ok()) << built.reason();
    auto p = pipeline::prepare_model(built.value(), qconfig, 0, pooled);
    EXPECT_TRUE(p.ok()) << p.reason();
    slot = std::make_unique<pipeline::PreparedModel>(std::move(p.value()));
  }
  return *slot;
}

const char* const kPolicies[] = {"layerwise", "opfusion", "fusion", "fusion+reuse", "optimal"};

// True when `model` needs a unit `config` lacks: its shapes-only graph's layerwise schedule is
// refused naming that unit (checked: test_support::missing_unit), before any quantization. A
// model refused for anything else fails the case later, at its run.
bool refused_for_a_missing_unit(const std::string& model, const HwConfig& config) {
  zoo::ZooOptions shapes_only;
  shapes_only.with_weights = false;
  auto shapes = zoo::build_model(model, shapes_only);
  if (!shapes.ok()) return false;
  auto s = sched::schedule_graph(shapes.value(), config, "layerwise", sched::Objective::Bytes);
  if (s.ok()) return false;
  const auto unit = test_support::missing_unit(s.reason(), config);
  if (!unit) return false;
  std::printf("%s on %s: refused, %s missing (%s)\n", model.c_str(), config.name.c_str(),
              unit->c_str(), s.reason().c_str());
  return true;
}

// ---- functional: bit exact, bytes, cycles --------------------------------------------------

class Zoo : public ::testing::TestWithParam<Case> {};

TEST_P(Zoo, simulator_matches_golden_and_schedule) {
  const Case& c = GetParam();
  const HwConfig config = load_hw_config(config_path(c.config));
  if (refused_for_a_missing_unit(c.model, config)) return;  // the refusal names the unit
  const pipeline::PreparedModel& model = prepared(c.model, config, c.policy);
  auto r = pipeline::run_policy(model, config, c.policy);
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  RecordProperty("cycle_ratio", std::to_string(cycle_ratio(r.value())));
  EXPECT_LE(cycle_ratio(r.value()), 1.10);
  EXPECT_GE(cycle_ratio(r.value()), 0.90);
  // No program beats the lower bound (roofline, barrier bound: scheduler/bound.hpp).
  EXPECT_GE(static_cast<std::int64_t>(r.value().report.cycles),
            r.value().scheduled.schedule.lower_bound_cycles);
}

const char* const kConfigs[] = {"npc19-deepfusion", "vta-pynq", "edge-small", "cloud-large"};

// A case's policy and run options: "optimal:latency" is optimal under the latency objective
// (its schedules double-buffer more, e.g. VGG-19's chunked classifier.0, docs/codegen.md "Gemm
// reduction chunks"); a plain name keeps the bytes objective.
std::pair<std::string, pipeline::RunOptions> policy_of(const Case& c) {
  const auto colon = c.policy.find(':');
  pipeline::RunOptions options;
  if (colon != std::string::npos)
    options.objective = sched::parse_objective(c.policy.substr(colon + 1)).value();
  return {c.policy.substr(0, colon), options};
}

// Every zoo model (the tiny_* test nets aside) x every shipped config x every policy; with
// `latency`, also `optimal:latency` (optimal under the latency objective).
std::vector<Case> matrix_cases(bool latency = false) {
  std::vector<Case> out;
  for (const zoo::ModelInfo& info : zoo::models()) {
    const std::string& model = info.name;
    if (info.tiny || !info.accelerated) continue;
    for (const char* config : kConfigs) {
      for (const char* policy : kPolicies) out.push_back({model, config, policy});
      if (!latency) continue;
      // The other objectives of `optimal` (a schedule the search can return must compile; the
      // energy ones also show where they differ from latency, docs/energy.md).
      for (const char* objective : {"optimal:latency", "optimal:energy", "optimal:edp"})
        out.push_back({model, config, objective});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, Zoo, ::testing::ValuesIn(matrix_cases()), case_name);

// Issue 35 item 6: the program's size predicted from the schedule alone (sched::predict_
// instructions, what `tessel schedule` counts as instruction fetch) is the compiled program's,
// instruction for instruction. Compiles only, no simulation: `--gtest_filter='Matrix/ZooFetch.*'`.
class ZooFetch : public ::testing::TestWithParam<Case> {};

TEST_P(ZooFetch, schedule_predicts_the_program_size) {
  const Case& c = GetParam();
  const HwConfig config = load_hw_config(config_path(c.config));
  const auto [policy, options] = policy_of(c);
  if (refused_for_a_missing_unit(c.model, config)) return;  // the refusal names the unit
  const pipeline::PreparedModel& model = prepared(c.model, config, policy);
  auto r = pipeline::compile_policy(model, config, policy, options);
  ASSERT_TRUE(r.ok()) << r.reason();
  const sched::ScheduledNet& s = r.value().scheduled;
  const auto predicted = sched::predict_instructions(s.net, s.machine, s.schedule);
  ASSERT_TRUE(predicted.ok()) << predicted.reason();
  const auto program = static_cast<std::int64_t>(r.value().compiled.program.instructions.size());
  EXPECT_EQ(predicted.value(), program);
  std::printf("%s on %s, %s: %lld instructions predicted, %lld in the program\n", c.model.c_str(),
              c.config.c_str(), c.policy.c_str(), static_cast<long long>(predicted.value()),
              static_cast<long long>(program));
}

INSTANTIATE_TEST_SUITE_P(Matrix, ZooFetch, ::testing::ValuesIn(matrix_cases(true)), case_name);

// Issue 36: today's CNNs on the one shipped config with the lookup-table and broadcast-multiply
// units (cloud-large), every policy: bit exact, bytes as scheduled class by class, cycles within
// 5% of the prediction. ResNeXt-50 (grouped convs), MobileNet-v3-large and EfficientNet-B0
// (SE blocks) and ConvNeXt-Tiny (its NCHW <-> NHWC permutes as layout views, LayerNorm, GELU,
// the layer scale's Mul by a per-channel constant) run.
class ModernCnn : public ::testing::TestWithParam<Case> {};

TEST_P(ModernCnn, simulator_matches_golden_and_schedule) {
  const Case& c = GetParam();
  const HwConfig config = load_hw_config(config_path(c.config));
  const auto [policy, options] = policy_of(c);
  auto r = pipeline::run_policy(prepared(c.model, config, policy), config, policy, options);
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  RecordProperty("cycle_ratio", std::to_string(cycle_ratio(r.value())));
  EXPECT_LE(cycle_ratio(r.value()), 1.05);
  EXPECT_GE(cycle_ratio(r.value()), 0.95);
  // Issue 37: lut, mul and the sub-window pools' convs counted as the simulator counts them.
  expect_energy_matches(c.model + " " + c.config + " " + c.policy, r.value(), config,
                        CountMatch::Exact);
}

std::vector<Case> modern_cnn_cases() {
  std::vector<Case> out;
  // MobileNet-v3-large and EfficientNet-B0: their SE pools wider than the pool window run as
  // sub-window convs of all-one weights (docs/codegen.md, "SE pools wider than the pool window").
  for (const char* model : {"resnext50_32x4d", "regnet_x_1_6gf", "mobilenet_v3_large",
                            "efficientnet_b0", "convnext_tiny"})
    for (const char* policy : kPolicies) out.push_back({model, "cloud-large", policy});
  // Under the latency objective a prefetched group whose table (GELU's lut) is double-buffered
  // loaded the first tile's copy into the unpinned copy, over the previous group's LayerNorm
  // parameters: a simulator fault until codegen loaded copy 0 first (session 41).
  out.push_back({"convnext_tiny", "cloud-large", "optimal:latency"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Modern, ModernCnn, ::testing::ValuesIn(modern_cnn_cases()), case_name);

// One layer of the zoo transformer `name` at `sequence` tokens, quantized at `config`'s width.
Result<pipeline::PreparedModel> one_layer_prepared(const std::string& name, std::int64_t sequence,
                                                   const HwConfig& config) {
  zoo::ZooOptions options;
  options.layers = 1;
  options.sequence = sequence;
  auto built = zoo::build_model(name, options);
  if (!built.ok()) return built.failure();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  return pipeline::prepare_model(built.value(), qconfig);
}

// One layer of the zoo transformer `name` at `sequence` tokens (0: its own) on cloud-large (the
// config with the matmul and row-normaliser units) under every policy: bit exact, bytes as
// scheduled class by class, cycles sim/pred within 5% (docs/codegen.md "Transformers"); with
// `energy` (issue 37), every count of the prediction equal to the simulator's and the total
// within 1%. `also` checks more of each policy's run.
void expect_one_layer_exact_under_every_policy(
    const std::string& name, std::int64_t sequence, bool energy,
    const std::function<void(const pipeline::PolicyResult&)>& also = {}) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  auto model = one_layer_prepared(name, sequence, config);
  ASSERT_TRUE(model.ok()) << model.reason();
  for (const char* policy : kPolicies) {
    SCOPED_TRACE(policy);
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    expect_consistent(r.value(), config);
    ::testing::Test::RecordProperty(std::string(policy) + "_cycle_ratio",
                                    std::to_string(cycle_ratio(r.value())));
    EXPECT_LE(cycle_ratio(r.value()), 1.05);  // bert and gpt2 1.005-1.006 in session 28-29
    EXPECT_GE(cycle_ratio(r.value()), 0.95);
    if (energy) {
      EXPECT_TRUE(
          sched::predict_energy(r.value().scheduled.schedule, r.value().scheduled.net, config)
              .unmodelled_kinds.empty());
      expect_energy_matches(
          name + " --layers 1 --seq " + std::to_string(sequence) + " cloud-large " + policy,
          r.value(), config, CountMatch::Exact);
    }
    if (also) also(r.value());
  }
}

// Issue 36 part 3: one BERT-base layer at sequence 128 (`--layers 1 --seq 128`).
TEST(Transformer, one_bert_layer_is_bit_exact_with_the_scheduled_bytes_under_every_policy) {
  expect_one_layer_exact_under_every_policy("bert_base", 128, true);
}

// Issue 36 part 3: one ViT-B/16 encoder layer (`vit_b_16 --layers 1`, 224 x 224): its 16/16
// patch conv as a 1x1 conv over the input's 16 x 16 space-to-depth view (768 channels,
// docs/scheduler.md "Space-to-depth stem"), the class token and the position embedding as DRAM
// constants.
TEST(Transformer, one_vit_layer_is_bit_exact_with_the_scheduled_bytes_under_every_policy) {
  expect_one_layer_exact_under_every_policy(
      "vit_b_16", 0, true, [](const pipeline::PolicyResult& r) {
        EXPECT_EQ(r.scheduled.net.tensor(0).space_to_depth, 16);
      });
}

// Issue 36 part 3: one GPT-2 layer at sequence 128 (`gpt2 --layers 1 --seq 128`, prefill): its
// causal mask as the softmax's band (scheduler/causal_mask.hpp), GELU tanh as a table.
TEST(Transformer, one_gpt2_layer_is_bit_exact_with_the_scheduled_bytes_under_every_policy) {
  expect_one_layer_exact_under_every_policy("gpt2", 128, false);
}

// Issue 36 item 3, LLM decode: one GPT-2 layer's decode step against a cache of 1024 rows
// (`gpt2_decode --layers 1 --kv-length 1024 [--batch 8]`) on cloud-large under every policy: bit
// exact (the hidden state and each sequence's new key and value rows), bytes as scheduled class
// by class, cycles sim/pred within 5%; DRAM bytes (instruction fetch aside) within 1.02x of the
// goal's bound under optimal: the weights (with their requant tables) + the caches
// (B x 2 x 1024 x 768) + the new rows (B x 2 x 768) + the tokens in and out (B x 2 x 768),
// which is the compulsory bytes. About 10 s (batch 1) and 25 s (batch 8).
void expect_decode_layer(std::int64_t batch) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  zoo::ZooOptions options;
  options.layers = 1;
  options.kv_length = 1024;
  options.batch = batch;
  auto built = zoo::build_model("gpt2_decode", options);
  ASSERT_TRUE(built.ok()) << built.reason();
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(built.value(), qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  for (const char* policy : kPolicies) {
    SCOPED_TRACE(policy);
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    expect_consistent(r.value(), config);
    EXPECT_EQ(r.value().outputs.size(), static_cast<size_t>(1 + 2 * batch));
    const auto& net = r.value().scheduled.net;
    const std::int64_t weights = net.model_weight_bytes() + net.total_requant_table_bytes();
    const std::int64_t bound = weights + batch * (2 * 1024 * 768 + 2 * 768 + 2 * 768);
    EXPECT_EQ(bound, r.value().scheduled.schedule.compulsory_bytes);
    const auto& t = r.value().scheduled.schedule.traffic;
    const double ratio = static_cast<double>(t.total()) / static_cast<double>(bound);
    ::testing::Test::RecordProperty(std::string(policy) + "_bytes_ratio", std::to_string(ratio));
    if (std::string(policy) == "optimal") {
      EXPECT_LE(ratio, 1.02);  // 1.0028 (B 1), 1.0064 (B 8)
    }
    EXPECT_LE(ratio, 1.05);  // layerwise: 1.0088 (B 1), 1.0326 (B 8), session 30
    EXPECT_LE(cycle_ratio(r.value()), 1.05);
    EXPECT_GE(cycle_ratio(r.value()), 0.95);
  }
}

TEST(Transformer, one_gpt2_decode_layer_reads_weights_and_cache_once_bit_exact) {
  expect_decode_layer(1);
}

TEST(Transformer, a_batch_of_eight_gpt2_decode_steps_shares_the_weights_bit_exact) {
  expect_decode_layer(8);
}

// The same on the exported HF GPT-2 (all 12 layers, sequence 128: `Split` of q|k|v, the causal
// `Where` folded into the Softmax's mask, Conv1D as Gemms without transB), as
// experiments/models/export_transformers.py writes it into .cache/models ($TESSEL_CACHE/models);
// skipped when it is not there. About 1 minute: layerwise and optimal only.
TEST(Transformer, the_exported_gpt2_is_bit_exact_with_the_scheduled_bytes) {
  const char* cache = std::getenv("TESSEL_CACHE");
  const std::string path =
      (cache != nullptr ? std::string(cache) : std::string(TESSEL_SOURCE_DIR) + "/.cache") +
      "/models/gpt2.onnx";
  if (!zoo::onnx_import_available()) GTEST_SKIP() << "the ONNX frontend is not built";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is not exported";
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  quant::QuantConfig qconfig;
  qconfig.bits = config.matrix.input_bits;
  auto model = pipeline::prepare_model(zoo::load_model(path), qconfig);
  ASSERT_TRUE(model.ok()) << model.reason();
  for (const char* policy : {"layerwise", "optimal"}) {
    SCOPED_TRACE(policy);
    auto r = pipeline::run_policy(model.value(), config, policy);
    ASSERT_TRUE(r.ok()) << r.reason();
    expect_consistent(r.value(), config);
    EXPECT_LE(cycle_ratio(r.value()), 1.05);  // 1.006 and 1.005 in session 29
    EXPECT_GE(cycle_ratio(r.value()), 0.95);
  }
}

// Issue 36 part 3, attention fusion: one BERT-base layer at sequence 512 on cloud-large under
// `optimal`, the goal of item 2 (DRAM bytes <= 1.10x compulsory). Two groups:
//  - the attention group `q.linear, k.linear, v.linear, q_scaled, scores, softmax, context,
//    out_proj, add1` in row blocks (acc:scores is 512 x 12 x 4 = 24 KiB per query row against
//    4 MiB of accumulators, so it needs more than one): the first block runs k.linear and v.linear
//    whole (K and V stay on chip), every block its queries' rows of the rest; it reads the layer's
//    input once (kept: the K and V projections read it whole) and writes add1's output once
//    (docs/scheduler-mapping.md "The projections and the residual in the attention group");
//  - the MLP's hidden chunks `norm1 (prefix), linear1, gelu, linear2, add2, norm2` (the two
//    Linears' 4.7 MB exceed the 4 MiB weight scratchpad): reads add1's output once, writes
//    norm2's, and neither the 512 x 3072 hidden activations nor norm1's output reach DRAM.
// Only add1's output (512 x 768) crosses between them: weights + 4 x 512 x 768 bytes.
// Simulated bit exact with the scheduled bytes class by class. About a minute of simulation.
TEST(Transformer, bert_attention_at_sequence_512_runs_fused_in_row_blocks) {
  const HwConfig config = load_hw_config(config_path("cloud-large"));
  auto model = one_layer_prepared("bert_base", 512, config);
  ASSERT_TRUE(model.ok()) << model.reason();
  auto r = pipeline::run_policy(model.value(), config, "optimal");
  ASSERT_TRUE(r.ok()) << r.reason();
  expect_consistent(r.value(), config);
  EXPECT_LE(cycle_ratio(r.value()), 1.05);
  EXPECT_GE(cycle_ratio(r.value()), 0.95);
  const sched::Net& net = r.value().scheduled.net;
  const sched::Schedule& schedule = r.value().scheduled.schedule;
  const std::string attn = "layers.0.self_attn";
  std::vector<std::vector<std::string>> groups;
  for (const sched::GroupSchedule& g : schedule.groups) {
    groups.emplace_back();
    for (int op : g.ops) groups.back().push_back(net.op(op).name);
  }
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0],
            (std::vector<std::string>{attn + ".q.linear", attn + ".k.linear", attn + ".v.linear",
                                      attn + ".q_scaled", attn + ".scores", attn + ".softmax",
                                      attn + ".context", attn + ".out_proj", "layers.0.add1"}));
  EXPECT_EQ(groups[1],
            (std::vector<std::string>{"layers.0.norm1", "layers.0.linear1", "layers.0.gelu",
                                      "layers.0.linear2", "layers.0.add2", "layers.0.norm2"}));
  const sched::GroupSchedule& attention = schedule.groups[0];
  EXPECT_GT(attention.row_tiles, 1);
  const sched::RunsOnce once = sched::runs_once(net, attention.ops, attention.row_tiles,
                                                attention.col_tiles, attention.channel_tiles);
  EXPECT_EQ(once.once, (std::vector<char>{0, 1, 1, 0, 0, 0, 0, 0, 0}));  // k and v.linear
  EXPECT_EQ(attention.traffic.activations_read, 512 * 768);
  EXPECT_EQ(attention.traffic.activations_written, 512 * 768);
  const sched::GroupSchedule& mlp = schedule.groups[1];
  EXPECT_GT(mlp.channel_tiles, 1);
  EXPECT_EQ(mlp.row_tiles, 1);
  EXPECT_EQ(mlp.traffic.activations_read, 512 * 768);
  EXPECT_EQ(mlp.traffic.activations_written, 512 * 768);
  // Every weight and table once (7,186,960 B; the GELU's 256-entry table with each hidden chunk)
  // + 4 x 393,216: 8,760,080 B with two chunks, 1.0987x compulsory.
  int64_t parameters = 0;
  for (const sched::Op& op : net.ops) parameters += op.weight_bytes + op.requant_table_bytes;
  EXPECT_EQ(schedule.traffic.total(), parameters + (mlp.channel_tiles - 1) * 256 + 4 * 512 * 768);
  EXPECT_EQ(schedule.compulsory_bytes, 7'973'392);
  EXPECT_LE(static_cast<double>(schedule.traffic.total()),
            1.10 * static_cast<double>(schedule.compulsory_bytes));
}

// ---- timing-only: the whole matrix, bytes and cycles ---------------------------------------

class ZooTiming : public ::testing::TestWithParam<Case> {};

TEST_P(ZooTiming, dram_bytes_equal_the_schedule_and_cycles_are_within_ten_percent) {
  const Case& c = GetParam();
  const HwConfig config = load_hw_config(config_path(c.config));
  auto [policy, timing] = policy_of(c);
  if (refused_for_a_missing_unit(c.model, config)) return;  // the refusal names the unit
  const pipeline::PreparedModel& model = prepared(c.model, config, policy);
  timing.timing_only = true;
  auto r = pipeline::run_policy(model, config, policy, timing);
  ASSERT_TRUE(r.ok()) << r.reason();
  const auto& predicted = r.value().scheduled.schedule.traffic;
  const auto& code = r.value().compiled.traffic;
  EXPECT_EQ(r.value().sim_weights_read(), code.weights_read + code.requant_table_read);
  EXPECT_EQ(code.weights_read, predicted.weights_read);
  EXPECT_EQ(code.requant_table_read, predicted.requant_tables_read);
  EXPECT_EQ(r.value().sim_activations_read(), predicted.activations_read);
  EXPECT_EQ(r.value().sim_activations_written(), predicted.activations_written);
  EXPECT_EQ(r.value().sim_instructions_read(),
            r.value().scheduled.schedule.instruction_fetch_bytes.value_or(-1));
  const double ratio = cycle_ratio(r.value());
  std::printf("%s %s %s: cycles simulated %llu, predicted %lld (x%.3f)\n", c.model.c_str(),
              c.config.c_str(), c.policy.c_str(),
              static_cast<unsigned long long>(r.value().report.cycles),
              static_cast<long long>(r.value().scheduled.schedule.cycles), ratio);
  RecordProperty("cycle_ratio", std::to_string(ratio));
  EXPECT_LE(ratio, 1.10);
  EXPECT_GE(ratio, 0.90);
  EXPECT_GE(static_cast<std::int64_t>(r.value().report.cycles),
            r.value().scheduled.schedule.lower_bound_cycles);
  expect_energy_matches(c.model + " " + c.config + " " + c.policy, r.value(), config);
}

INSTANTIATE_TEST_SUITE_P(Matrix, ZooTiming, ::testing::ValuesIn(matrix_cases(true)), case_name);

}  // namespace
}  // namespace tessel::e2e
