// Outside oracle for the modern-workload kinds (issue 33): onnxruntime running the QDQ export
// (`export_qdq_onnx`) of a quantized graph, layers isolated, against the golden int8 executor,
// grouped by the op kind that wrote each integer tensor.
//
// - `ModernKindsQdq.EveryKindAgreesWithOnnxruntime` (label `slow`, a few seconds): a small graph
//   built here with every modern kind the quantizer realizes (activation MatMuls, MatMul by a
//   constant, broadcasting Add/Sub/Mul/Div, Where, every unary table, Pow, LayerNorm, RMSNorm,
//   masked and plain Softmax, the reductions, the movement ops, Resize, an Embedding of token
//   ids). Where onnxruntime
//   computes the op in integers (QLinearMatMul, QLinearAdd, QLinearMul, QLinearSigmoid, and the
//   movement ops whose Q/DQ pairs it drops) the contract is >= 99.9% of the elements within
//   +-1 LSB; the ops it computes in float between DequantizeLinear and QuantizeLinear (LayerNorm,
//   Softmax, GELU, ...) are held to the same bar: the integer forms are meant to match the float
//   function to within the output's rounding (docs/quantization.md, "QDQ ONNX export").
// - `ModernModels` (label `zoo`): the same comparison on mobilenet_v3_large, efficientnet_b0 and
//   bert_base exports when they are in the cache (.cache/models or .cache/oracle).
#include <gtest/gtest.h>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/quant/onnx_export.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/seeded.hpp"
#include "tests/oracles/ort_support.hpp"
#include "tests/support/graph_builder.hpp"

namespace tessel {
namespace {

using namespace oracle;  // NOLINT(google-build-using-namespace): the shared helpers
using ir::OpKind;
using Ints = std::vector<std::int64_t>;

const bool kThreadsSet = setenv("OMP_NUM_THREADS", "2", 0) == 0;

struct Builder : testing::GraphBuilder {
  Builder() : GraphBuilder("modern_kinds", 2000) {}
};

constexpr std::int64_t kSeq = 16, kModel = 32, kHidden = 64;

// 0/1 values: 1 where `keep(row, col)`.
std::vector<float> mask(std::int64_t rows, std::int64_t cols,
                        bool (*keep)(std::int64_t, std::int64_t)) {
  std::vector<float> m;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) m.push_back(keep(r, c) ? 1.0f : 0.0f);
  return m;
}

[[maybe_unused]] ir::Graph modern_kinds() {
  Builder b;
  const std::string x = b.input("x", {1, kSeq, kModel});
  const double w_std = 1.0 / std::sqrt(double(kModel));
  // Attention: LayerNorm, Q/K/V by constant matrices, Q x K^T, / 4, causal Softmax, x V.
  const auto ln =
      b.op("ln", OpKind::LayerNormalization,
           {x, b.random("ln.gamma", {kModel}, 1.0, 0.1), b.random("ln.beta", {kModel}, 0.0, 0.1)});
  const auto q = b.op("q", OpKind::MatMul, {ln, b.random("wq", {kModel, kModel}, 0.0, w_std)});
  const auto k = b.op("k", OpKind::MatMul, {ln, b.random("wk", {kModel, kModel}, 0.0, w_std)});
  const auto v = b.op("v", OpKind::MatMul, {ln, b.random("wv", {kModel, kModel}, 0.0, w_std)});
  const auto kt = b.op("kt", OpKind::Transpose, {k}, {{"perm", Ints{0, 2, 1}}});
  const auto scores = b.op("scores", OpKind::MatMul, {q, kt});
  const auto scaled = b.op("scaled", OpKind::Div, {scores, b.constant("four", {1}, {4.0f})});
  const auto causal =
      b.constant("causal", {kSeq, kSeq}, mask(kSeq, kSeq, [](auto r, auto c) { return c <= r; }));
  const auto probs = b.op("probs", OpKind::Softmax, {scaled, causal}, {{"axis", std::int64_t{-1}}});
  const auto attn = b.op("attn", OpKind::MatMul, {probs, v});
  const auto res = b.op("res", OpKind::Add, {x, attn});
  // MLP: RMSNorm, MatMul to 64, a broadcast bias, the unary tables, Mul/Sub of activations.
  const auto rms =
      b.op("rms", OpKind::RMSNormalization, {res, b.random("rms.scale", {kModel}, 1.0, 0.1)});
  const auto h0 = b.op("h0", OpKind::MatMul, {rms, b.random("w1", {kModel, kHidden}, 0.0, w_std)});
  const auto h = b.op("h", OpKind::Add, {h0, b.random("b1", {kHidden}, 0.0, 0.1)});
  // A gate from an accumulator read only by a table: 16 bits under table_input_bits 16.
  const auto gate0 =
      b.op("gate0", OpKind::MatMul, {rms, b.random("w2", {kModel, kHidden}, 0.0, w_std)});
  const auto gate = b.op("gate", OpKind::Sigmoid, {gate0});
  const auto glu = b.op("glu", OpKind::Mul, {h, gate});
  const auto gelu = b.op("gelu", OpKind::Gelu, {h});
  const auto gelu_tanh =
      b.op("gelu_tanh", OpKind::Gelu, {h}, {{"approximate", std::string("tanh")}});
  const auto silu = b.op("silu", OpKind::Silu, {h});
  const auto sigmoid = b.op("sigmoid", OpKind::Sigmoid, {h});
  const auto hswish = b.op("hswish", OpKind::HardSwish, {h});
  const auto hsig = b.op("hsig", OpKind::HardSigmoid, {h});
  const auto tanh = b.op("tanh", OpKind::Tanh, {h});
  const auto erf = b.op("erf", OpKind::Erf, {h});
  const auto neg = b.op("neg", OpKind::Neg, {h});
  const auto exp = b.op("exp", OpKind::Exp, {hsig});
  const auto sqrt = b.op("sqrt", OpKind::Sqrt, {sigmoid});
  const auto recip = b.op("recip", OpKind::Reciprocal, {exp});
  const auto square = b.op("square", OpKind::Pow, {h, b.constant("two", {1}, {2.0f})});
  const auto gated = b.op("gated", OpKind::Mul, {gelu, silu});
  const auto scaled_hs = b.op("scaled_hs", OpKind::Mul, {hswish, b.random("g", {kHidden}, 1, 0.3)});
  const auto diff = b.op("diff", OpKind::Sub, {gated, scaled_hs});
  const auto soft = b.op("soft", OpKind::Softmax, {tanh}, {{"axis", std::int64_t{-1}}});
  // Reductions and data movement.
  const auto mean =
      b.op("mean", OpKind::ReduceMean, {diff}, {{"axes", Ints{-1}}, {"keepdims", std::int64_t{1}}});
  const auto sum =
      b.op("sum", OpKind::ReduceSum, {square}, {{"axes", Ints{2}}, {"keepdims", std::int64_t{0}}});
  const auto max =
      b.op("max", OpKind::ReduceMax, {soft}, {{"axes", Ints{1}}, {"keepdims", std::int64_t{1}}});
  const auto slice =
      b.op("slice", OpKind::Slice, {diff},
           {{"starts", Ints{1}}, {"ends", Ints{64}}, {"axes", Ints{2}}, {"steps", Ints{2}}});
  Ints reversed;
  for (std::int64_t i = kSeq - 1; i >= 0; --i) reversed.push_back(i);
  const auto gather =
      b.op("gather", OpKind::Gather, {slice},
           {{"axis", std::int64_t{1}}, {"indices", reversed}, {"indices_shape", Ints{kSeq}}});
  const auto expand = b.op("expand", OpKind::Expand, {mean}, {{"shape", Ints{1, kSeq, kModel}}});
  const auto tril = b.op("tril", OpKind::Trilu, {gather}, {{"upper", std::int64_t{0}}});
  const auto where =
      b.op("where", OpKind::Where,
           {b.constant("pick", {kSeq, kModel},
                       mask(kSeq, kModel, [](auto r, auto c) { return (r + c) % 3 != 0; })),
            tril, expand});
  const auto near = b.op("near", OpKind::Resize, {where},
                         {{"mode", std::string("nearest")}, {"sizes", Ints{1, 2 * kSeq, kModel}}});
  const auto linear = b.op("linear", OpKind::Resize, {where},
                           {{"mode", std::string("linear")}, {"sizes", Ints{1, kSeq, 2 * kModel}}});
  // Token ids (an i32 input, drawn over the table's 100 rows) into an embedding table.
  EXPECT_TRUE(b.graph.add_input("ids", {1, kSeq}, ir::DType::i32).ok());
  const auto embedded =
      b.op("embedded", OpKind::Embedding, {"ids", b.random("vocab", {100, kModel}, 0.0, 1.0)});
  const auto tokens = b.op("tokens", OpKind::Add, {embedded, mean});
  EXPECT_TRUE(b.graph
                  .set_outputs({res, near, linear, sum, max, neg, recip, sqrt, erf, gelu_tanh, tanh,
                                glu, tokens})
                  .ok());
  const auto shapes = ir::infer_all_shapes(b.graph);
  EXPECT_TRUE(shapes.ok()) << shapes.reason();
  return std::move(b.graph);
}

// Agreement per op kind: the kind of the op that made each integer tensor (a Requantize's
// producer's kind for an accumulator's output).
std::map<std::string, Agreement> by_kind(const ir::Graph& q, const std::vector<Agreement>& rows) {
  std::map<std::string, Agreement> kinds;
  for (const auto& row : rows) {
    const ir::Op* op = &q.op(*q.producer(row.tensor));
    if (op->kind == OpKind::Requantize) op = &q.op(*q.producer(op->inputs[0]));
    const std::string kind(ir::to_string(op->kind));
    Agreement& k = kinds[kind];
    k.tensor = kind;
    k.elements += row.elements;
    k.within_one += row.within_one;
    k.max_lsb = std::max(k.max_lsb, row.max_lsb);
  }
  return kinds;
}

struct Compared {
  std::vector<Agreement> rows;
  ir::Graph quantized{"none"};
};

// Quantizes `graph` (default config but one sample), runs the golden executor on the default
// inputs (input i: seed i) and onnxruntime on the isolated QDQ export; writes `dir`.
Compared compare_isolated(const ir::Graph& graph, const fs::path& dir,
                          quant::QuantConfig config = {}) {
  config.calibration_samples = 1;
  auto quantized = cpu::quantize_model(graph, config, cpu::synthetic_samples(graph, config));
  EXPECT_TRUE(quantized.ok()) << quantized.reason();
  if (!quantized.ok()) return {};
  const ir::Graph& q = quantized.value().graph;
  std::map<std::string, TensorData> feeds;
  Feeds files;
  std::uint64_t seed = 0;
  for (const ir::OpId id : graph.inputs()) {
    const std::string& name = graph.op(id).outputs[0];
    feeds[name] = cpu::default_graph_input(graph, name, seed);
    const fs::path file = dir / ("input" + std::to_string(seed++) + ".npy");
    write_npy(file.string(), feeds[name].to_npy());
    files.emplace_back(name, file);
  }
  cpu::Executor executor(q);
  cpu::RunOptions keep;
  keep.keep_intermediates = true;
  auto ours = executor.run(feeds, keep);
  EXPECT_TRUE(ours.ok()) << ours.reason();
  if (!ours.ok()) return {};
  quant::OnnxExportOptions isolate;
  isolate.isolate_layers = true;
  auto isolated = quant::export_qdq_onnx(q, isolate);
  EXPECT_TRUE(isolated.ok()) << isolated.reason();
  if (!isolated.ok()) return {};
  std::ofstream(dir / "isolated.onnx", std::ios::binary) << isolated.value().bytes;
  for (std::size_t k = 0; k < isolated.value().golden_inputs.size(); ++k) {
    const std::string& t = isolated.value().golden_inputs[k];
    const fs::path file = dir / ("golden" + std::to_string(k) + ".npy");
    write_npy(file.string(), ours.value().at(t).to_npy());
    files.emplace_back(quant::golden_input_name(t), file);
  }
  run_ort(dir / "isolated.onnx", feeds_file_argument(files, dir / "feeds.json") + " --out-dir " +
                                     quoted((dir / "isolated").string()) + " --save-optimized " +
                                     quoted((dir / "optimized.onnx").string()));
  if (::testing::Test::HasFatalFailure()) return {};
  return {compare(isolated.value().intermediates, ours.value(), read_outputs(dir / "isolated")), q};
}

void print_kinds(const std::string& model, const std::map<std::string, Agreement>& kinds) {
  for (const auto& [kind, k] : kinds)
    std::cout << std::fixed << std::setprecision(4) << model << " " << kind << ": "
              << 100.0 * k.fraction() << "% of " << k.elements << " within +-1 LSB, max "
              << k.max_lsb << " LSB\n";
}

#ifndef TESSEL_ORT_MODERN_ZOO

// table_input_bits 8 (the default): every activation is 8 bits (opset 17); 16: the gate's
// accumulator result is 16 bits, so the export is opset 21 (int16 QuantizeLinear).
class ModernKindsQdq : public ::testing::TestWithParam<int> {};

TEST_P(ModernKindsQdq, EveryKindAgreesWithOnnxruntime) {
  if (const std::string why = missing_ort(); !why.empty()) GTEST_SKIP() << why;
  const std::string name = "modern_kinds_" + std::to_string(GetParam());
  const fs::path dir = work_dir(name);
  auto prepared = cpu::prepare_graph(modern_kinds());
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  quant::QuantConfig config;
  config.table_input_bits = GetParam();
  const Compared c = compare_isolated(prepared.value(), dir, config);
  ASSERT_FALSE(c.rows.empty());
  EXPECT_EQ(c.quantized.tensor("gate0").dtype, GetParam() == 16 ? ir::DType::i16 : ir::DType::i8);
  const auto kinds = by_kind(c.quantized, c.rows);
  print_kinds(name, kinds);
  // Every realized kind was exported and compared (Div became Mul, Silu stayed Silu).
  for (const char* kind : {"MatMul",
                           "Add",
                           "Sub",
                           "Mul",
                           "Where",
                           "Softmax",
                           "LayerNormalization",
                           "RMSNormalization",
                           "Gelu",
                           "Silu",
                           "Sigmoid",
                           "HardSwish",
                           "HardSigmoid",
                           "Tanh",
                           "Erf",
                           "Neg",
                           "Exp",
                           "Sqrt",
                           "Reciprocal",
                           "Pow",
                           "ReduceMean",
                           "ReduceSum",
                           "ReduceMax",
                           "Transpose",
                           "Slice",
                           "Gather",
                           "Expand",
                           "Trilu",
                           "Resize",
                           "Embedding"})
    EXPECT_TRUE(kinds.count(kind)) << kind << " was not compared";
  for (const auto& row : c.rows)
    EXPECT_GE(row.fraction(), 0.999) << row.tensor << ": " << row.within_one << " of "
                                     << row.elements << " within +-1 LSB, max " << row.max_lsb;
  remove_work_dirs_unless_failed();
}

INSTANTIATE_TEST_SUITE_P(TableInputBits, ModernKindsQdq, ::testing::Values(8, 16),
                         [](const auto& param_info) {
                           return "table_input_bits_" + std::to_string(param_info.param);
                         });

// norm_input_bits 16 with %res no graph output: the residual sum %res (read only by the RMSNorm),
// the attention output and the input summed into it are 16 bits; the Add and the RMSNorm read
// 16 bits.
TEST(ModernKindsQdq, AResidualStreamAtSixteenBitsAgreesWithOnnxruntime) {
  if (const std::string why = missing_ort(); !why.empty()) GTEST_SKIP() << why;
  const fs::path dir = work_dir("modern_kinds_norm16");
  auto prepared = cpu::prepare_graph(modern_kinds());
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  std::vector<std::string> outputs;
  for (const auto& t : prepared.value().outputs())
    if (t != "res") outputs.push_back(t);
  ASSERT_TRUE(prepared.value().set_outputs(outputs).ok());
  quant::QuantConfig config;
  config.norm_input_bits = 16;
  const Compared c = compare_isolated(prepared.value(), dir, config);
  ASSERT_FALSE(c.rows.empty());
  EXPECT_EQ(c.quantized.tensor("res").dtype, ir::DType::i16);
  EXPECT_EQ(c.quantized.tensor("attn").dtype, ir::DType::i16);
  EXPECT_EQ(c.quantized.tensor("rms").dtype, ir::DType::i8);
  print_kinds("modern_kinds_norm16", by_kind(c.quantized, c.rows));
  for (const auto& row : c.rows)
    EXPECT_GE(row.fraction(), 0.999) << row.tensor << ": " << row.within_one << " of "
                                     << row.elements << " within +-1 LSB, max " << row.max_lsb;
  remove_work_dirs_unless_failed();
}

#else  // the zoo-labelled build of this file: whole models

// .cache/models/<name>.onnx, else .cache/oracle/<name>.onnx (experiments/modern/oracle_matrix.py).
fs::path modern_model(const std::string& name) {
  for (const char* dir : {"models", "oracle"})
    if (fs::exists(cache_dir() / dir / (name + ".onnx")))
      return cache_dir() / dir / (name + ".onnx");
  return {};
}

class ModernModels : public ::testing::TestWithParam<std::string> {};

TEST_P(ModernModels, EveryKindAgreesWithOnnxruntimeLayersIsolated) {
  const fs::path model = modern_model(GetParam());
  if (model.empty())
    GTEST_SKIP() << GetParam() << ".onnx not in " << cache_dir()
                 << "/models or /oracle (run experiments/modern/oracle_matrix.py --subset)";
  if (const std::string why = missing_ort(); !why.empty()) GTEST_SKIP() << why;
  auto prepared = cpu::prepare_graph(zoo::load_model(model.string()));
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  const Compared c = compare_isolated(prepared.value(), work_dir("modern_" + GetParam()));
  ASSERT_FALSE(c.rows.empty());
  print_kinds(GetParam(), by_kind(c.quantized, c.rows));
  summarize(GetParam(), "layers isolated", c.rows);
  for (const auto& row : c.rows)
    EXPECT_GE(row.fraction(), 0.999) << row.tensor << ": " << row.within_one << " of "
                                     << row.elements << " within +-1 LSB, max " << row.max_lsb;
  remove_work_dirs_unless_failed();
}

INSTANTIATE_TEST_SUITE_P(Modern, ModernModels,
                         ::testing::Values("mobilenet_v3_large", "efficientnet_b0", "bert_base"),
                         [](const auto& param_info) { return param_info.param; });

#endif

}  // namespace
}  // namespace tessel
