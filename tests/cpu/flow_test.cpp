// The quantization flow end to end: hand-computed integer inference, tiny zoo nets, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"
#include "support/diagnostic.hpp"
#include "support/npy.hpp"
#include "tests/support/graph_builder.hpp"

namespace tessel::cpu {
namespace {

TEST(QuantizedExecutor, ConvReluByHand) {
  // x scale 0.01, y scale 0.02, w = 2 -> w_q 127 (s_w 2/127), b_q = 6350; y_q = rha(acc / 127).
  ir::Graph g = ir::parse_text(R"(graph t {
  input %x : f32[1,1,2,2]
  const %w : f32[1,1,1,1] = [2]
  const %b : f32[1] = [1]
  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[?]
  %y = Relu(%conv) : f32[?]
  output %y
})",
                               "t");
  ASSERT_TRUE(ir::infer_all_shapes(g).ok());
  const auto plan = quant::plan_scales(g, {}).value();
  const auto t =
      quant::class_thresholds(plan, {{"x", 1.27}, {"conv", 9.0}, {"y", 2.54}}, {}).value();
  const ir::Graph q = quant::realize(g, plan, t).value();
  Executor executor(q);
  RunOptions options;
  options.keep_intermediates = true;
  // x/0.01 = 50, -100, 1.3 -> 1, 127. acc = 127 x_q + 6350 = 12700, -6350, 6477, 22479.
  // / 127 = 100, -50 -> relu 0, 51, 177 -> saturates at 127.
  auto out = executor.run(
      {{"x", TensorData::from_f32({1, 1, 2, 2}, std::vector<float>{0.5f, -1.0f, 0.013f, 1.27f})}},
      options);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("x.q").to_i32(), (std::vector<std::int32_t>{50, -100, 1, 127}));
  EXPECT_EQ(out.value().at("conv.acc").to_i32(),
            (std::vector<std::int32_t>{12700, -6350, 6477, 22479}));
  EXPECT_EQ(out.value().at("conv").to_i32(), (std::vector<std::int32_t>{100, -50, 51, 127}));
  EXPECT_EQ(out.value().at("y.q").to_i32(), (std::vector<std::int32_t>{100, 0, 51, 127}));
  const auto y = out.value().at("y").to_f32();
  EXPECT_FLOAT_EQ(y[0], 2.0f);
  EXPECT_FLOAT_EQ(y[2], 1.02f);
  EXPECT_FLOAT_EQ(y[3], 2.54f);
}

// The same network without keep_intermediates: the fast path fuses Conv + Requantize + Relu into
// one pass and must give the hand-computed values above.
TEST(QuantizedExecutor, FusedConvRequantizeReluByHand) {
  ir::Graph g = ir::parse_text(R"(graph t {
  input %x : f32[1,1,2,2]
  const %w : f32[1,1,1,1] = [2]
  const %b : f32[1] = [1]
  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[?]
  %y = Relu(%conv) : f32[?]
  output %y
})",
                               "t");
  ASSERT_TRUE(ir::infer_all_shapes(g).ok());
  const auto plan = quant::plan_scales(g, {}).value();
  const auto t =
      quant::class_thresholds(plan, {{"x", 1.27}, {"conv", 9.0}, {"y", 2.54}}, {}).value();
  const ir::Graph q = quant::realize(g, plan, t).value();
  Executor executor(q);
  std::map<std::string, double> seconds;
  RunOptions options;
  options.seconds_by_op = &seconds;
  auto out = executor.run(
      {{"x", TensorData::from_f32({1, 1, 2, 2}, std::vector<float>{0.5f, -1.0f, 0.013f, 1.27f})}},
      options);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().size(), 1u) << "only the graph output is returned";
  EXPECT_EQ(out.value().at("y").to_f32(), (std::vector<float>{2.0f, 0.0f, 1.02f, 2.54f}));
  EXPECT_EQ(seconds.count("Conv+Requantize+Relu"), 1u) << "the three ops ran as one";
  EXPECT_EQ(seconds.count("Relu"), 0u);
}

// acc + bias leaving int32 is reported at the first element in NCHW order, fused or not,
// although the fast path stores the accumulators channels-last.
TEST(QuantizedExecutor, BiasOverflowNamesTheNchwElementFusedOrNot) {
  const ir::Graph g = ir::parse_text(R"(graph t {
  input %x : i8[1,2,2,2]{scale=1, zp=0}
  const %w : i8[2,2,1,1] ints [1, 0, 0, 1]
  const %b : i32[2] ints [0, 2147483647]
  %acc = Conv(%x, %w, %b) {kernel=1x1} : i32[1,2,2,2]{axis=1, scales=[1, 1], zps=[0, 0]}
  %y = Requantize(%acc) : i8[1,2,2,2]{scale=1, zp=0}
  output %y
})",
                                     "t");
  // Channel 1 is 0, 1, 0, 1 over the pixels: pixel 1 of channel 1 (NCHW element 5) overflows.
  const auto x = TensorData::from_ints(ir::DType::i8, {1, 2, 2, 2},
                                       std::vector<std::int32_t>{1, 1, 1, 1, 0, 1, 0, 1});
  Executor executor(g);
  for (const bool keep : {false, true}) {
    RunOptions options;
    options.keep_intermediates = keep;
    auto out = executor.run({{"x", x}}, options);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.reason(),
              "%acc (Conv): int32 accumulator overflow adding the bias at output element 5")
        << (keep ? "unfused" : "fused");
  }
}

// prepare_graph is the fold-batchnorm pass (one BN fold in the code base): same graph as running
// the pass by hand, and the folded Conv computes what Conv -> BatchNormalization computed.
TEST(PrepareGraph, FoldsBatchNormThroughThePass) {
  ir::Graph g = ir::parse_text(R"(graph t {
  input %x : f32[1,2,2,2]
  const %w : f32[2,2,1,1] = [1, 2, -1, 0.5]
  const %b : f32[2] = [0.25, -1]
  const %gamma : f32[2] = [2, 0.5]
  const %beta : f32[2] = [1, -3]
  const %mean : f32[2] = [0.5, 2]
  const %var : f32[2] = [4, 0.25]
  %conv = Conv(%x, %w, %b) {kernel=1x1} : f32[?]
  %bn = BatchNormalization(%conv, %gamma, %beta, %mean, %var) {epsilon=0} : f32[?]
  %y = Relu(%bn) : f32[?]
  output %y
})",
                               "t");
  ASSERT_TRUE(ir::infer_all_shapes(g).ok());
  auto prepared = prepare_graph(g);
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  ir::Graph by_hand = g;
  ASSERT_TRUE(passes::run_passes(by_hand, "fold-batchnorm").ok());
  EXPECT_EQ(ir::to_text(prepared.value()), ir::to_text(by_hand));
  EXPECT_FALSE(prepared.value().find_op("bn").has_value()) << "the BatchNormalization is gone";
  // Channel 0: s = 2 / 2 = 1: y = relu(x0 + 2 x1 + 0.25 - 0.5 + 1); channel 1: s = 0.5 / 0.5 = 1:
  // y = relu(-x0 + 0.5 x1 - 1 - 2 - 3).
  const auto x = TensorData::from_f32({1, 2, 2, 2}, std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40});
  Executor folded(prepared.value()), unfolded(g);
  const auto a = folded.run({{"x", x}});
  const auto b = unfolded.run({{"x", x}});
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<float> want = {21.75f, 42.75f, 63.75f, 84.75f, 0.0f, 2.0f, 6.0f, 10.0f};
  EXPECT_EQ(a.value().at("y").to_f32(), want);
  EXPECT_EQ(b.value().at("y").to_f32(), want);
}

struct Tiny {
  const char* name;
  double min_sqnr_db;
};

class TinyNets : public ::testing::TestWithParam<Tiny> {};

TEST_P(TinyNets, Int8TracksFp32AndScalesAreDeterministic) {
  auto built = zoo::build_model(GetParam().name);
  ASSERT_TRUE(built.ok()) << built.reason();
  auto prepared = prepare_graph(built.value());
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  const ir::Graph& g = prepared.value();
  for (ir::OpId id = 0; id < g.num_ops(); ++id)
    EXPECT_NE(g.op(id).kind, ir::OpKind::BatchNormalization) << "fold-batchnorm left one";
  quant::QuantConfig config;
  const auto samples = synthetic_samples(g, config);
  auto a = quantize_model(g, config, samples);
  ASSERT_TRUE(a.ok()) << a.reason();
  auto b = quantize_model(g, config, samples);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value().scales.dump(), b.value().scales.dump());

  const std::string input = g.op(g.inputs()[0]).outputs[0];
  const auto x = default_input(g.tensor(input).shape, 0);
  Executor fp32(g), int8(a.value().graph);
  auto ref = fp32.run({{input, x}});
  auto got = int8.run({{input, x}});
  ASSERT_TRUE(ref.ok()) << ref.reason();
  ASSERT_TRUE(got.ok()) << got.reason();
  const auto& out = g.outputs()[0];
  const double sqnr = sqnr_db(ref.value().at(out).to_f32(), got.value().at(out).to_f32());
  EXPECT_GE(sqnr, GetParam().min_sqnr_db) << GetParam().name;
}

// The fast path (fused ops, channels-last values) against the observed path (every op alone,
// every value handed out in NCHW): bit-identical graph outputs, and the observer sees exactly
// the values keep_intermediates returns.
TEST_P(TinyNets, FusedRunEqualsObservedRunBitForBit) {
  auto prepared = prepare_graph(zoo::build_model(GetParam().name).value());
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  const ir::Graph& g = prepared.value();
  quant::QuantConfig config;
  auto q = quantize_model(g, config, synthetic_samples(g, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  const std::string input = g.op(g.inputs()[0]).outputs[0];
  const std::map<std::string, TensorData> feed = {{input, default_input(g.tensor(input).shape, 3)}};
  Executor executor(q.value().graph);
  auto fused = executor.run(feed);
  std::map<std::string, std::vector<float>> observed;
  RunOptions observe;
  observe.observer = [&](const std::string& name, const TensorData& value) -> Status {
    observed[name] = value.to_f32();
    return {};
  };
  auto unfused = executor.run(feed, observe);
  RunOptions keep;
  keep.keep_intermediates = true;
  auto all = executor.run(feed, keep);
  ASSERT_TRUE(fused.ok() && unfused.ok() && all.ok());
  const auto& out = g.outputs()[0];
  EXPECT_EQ(fused.value().at(out).to_f32(), unfused.value().at(out).to_f32());
  EXPECT_EQ(fused.value().at(out).to_f32(), all.value().at(out).to_f32());
  std::size_t compared = 0;
  for (const auto& [name, value] : all.value()) {
    if (!observed.count(name)) continue;
    EXPECT_EQ(observed.at(name), value.to_f32()) << name;
    ++compared;
  }
  EXPECT_GE(compared, q.value().graph.num_ops() - 1) << "every op result observed";
}

INSTANTIATE_TEST_SUITE_P(Zoo, TinyNets,
                         ::testing::Values(Tiny{"tiny_conv", 30.0}, Tiny{"tiny_residual", 25.0},
                                           Tiny{"tiny_inception", 25.0}, Tiny{"tiny_mlp", 25.0},
                                           Tiny{"tiny_depthwise", 25.0}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// A broadcasting Add (a bias row over [rows, C]) followed by a Relu: the fast path fuses an
// equal-shape integer Add with its Relu, and must not absorb the Relu of an Add it does not run
// itself (the row-major kernel runs the broadcast). Before session 27 the fused run skipped the
// Relu: negative outputs, unlike the observed run.
TEST(QuantizedExecutor, BroadcastAddThenReluKeepsTheRelu) {
  testing::GraphBuilder b("bias_relu", 7);
  const std::string x = b.input("x", {4, 8});
  const std::string sum = b.op("sum", ir::OpKind::Add, {x, b.random("bias", {8}, 0.0, 0.5)});
  b.op("y", ir::OpKind::Relu, {sum});
  ASSERT_TRUE(b.graph.set_outputs({"y"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(b.graph).ok());
  quant::QuantConfig config;
  auto q = quantize_model(b.graph, config, synthetic_samples(b.graph, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  Executor executor(q.value().graph);
  const std::map<std::string, TensorData> feed = {{"x", default_input({4, 8}, 0)}};
  auto fused = executor.run(feed);
  RunOptions keep;
  keep.keep_intermediates = true;  // no fusion
  auto alone = executor.run(feed, keep);
  ASSERT_TRUE(fused.ok() && alone.ok());
  const auto y = fused.value().at("y").to_f32();
  EXPECT_EQ(y, alone.value().at("y").to_f32());
  // Half of N(0, 1) + bias is negative: the Relu has work to do, and did it.
  EXPECT_EQ(*std::min_element(y.begin(), y.end()), 0.0f);
  EXPECT_GT(*std::max_element(y.begin(), y.end()), 0.0f);
}

// Token ids: rows of the table by id (a negative id counts from the end, as ONNX's Gather), in
// float and on integers, where the output's class takes the table as a constant: s = max |table|
// / 127 = 3 / 127 and the rows are the table's codes, round_half_away(v * 127 / 3).
TEST(QuantizedExecutor, EmbeddingCopiesTheTableCodesAtItsScale) {
  ir::Graph g = ir::parse_text(R"(graph t {
  input %ids : i32[1,3]
  const %table : f32[4,2] = [0.5, -1, 2, 1.5, -3, 0.25, 1, 2.5]
  %e = Embedding(%ids, %table) : f32[?]
  %y = Relu(%e) : f32[?]
  output %y
})",
                               "t");
  ASSERT_TRUE(ir::infer_all_shapes(g).ok());
  EXPECT_EQ(g.tensor("e").shape, (ir::Shape{1, 3, 2}));
  TensorData ids(ir::DType::i32, {1, 3});
  const std::int32_t picked[] = {3, 0, -2};
  std::copy(std::begin(picked), std::end(picked), ids.data<std::int32_t>());
  Executor fp32(g);
  auto y = fp32.run({{"ids", ids}});
  ASSERT_TRUE(y.ok()) << y.reason();
  EXPECT_EQ(y.value().at("y").to_f32(), (std::vector<float>{1, 2.5f, 0.5f, 0, 0, 0.25f}));

  const auto plan = quant::plan_scales(g, {}).value();
  const auto t = quant::class_thresholds(plan, {{"e", 1.0}, {"y", 1.0}}, {}).value();
  const ir::Graph q = quant::realize(g, plan, t).value();
  EXPECT_EQ(q.tensor("ids").dtype, ir::DType::i32);  // no Quantize: ids carry no scale
  Executor executor(q);
  RunOptions keep;
  keep.keep_intermediates = true;
  auto out = executor.run({{"ids", ids}}, keep);
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("e").to_f32(), (std::vector<float>{42, 106, 21, -42, -127, 11}));
  EXPECT_FLOAT_EQ(q.tensor("e").quant->scales.at(0), 3.0f / 127.0f);

  ids.data<std::int32_t>()[1] = 4;  // past the table's 4 rows
  auto bad = executor.run({{"ids", ids}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.reason(),
      "%e (Embedding): token id 4 at position 1 of %ids is outside [-4, 4) (the table's rows)");
}

// Calibration draws token ids over the table's rows (default_graph_input): a vocabulary of 1000
// quantizes and runs.
TEST(QuantizedExecutor, EmbeddingCalibratesOnDrawnTokenIds) {
  testing::GraphBuilder b("ids", 7);
  const std::string ids = "ids";
  ASSERT_TRUE(b.graph.add_input(ids, {2, 16}, ir::DType::i32).ok());
  const auto e = b.op("e", ir::OpKind::Embedding, {ids, b.random("table", {1000, 8}, 0.0, 1.0)});
  const auto y = b.op("y", ir::OpKind::MatMul, {e, b.random("w", {8, 4}, 0.0, 0.3)});
  ASSERT_TRUE(b.graph.set_outputs({y}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(b.graph).ok());
  const TensorData drawn = default_graph_input(b.graph, ids, 5);
  EXPECT_EQ(token_id_range(b.graph, ids), 1000);
  const auto* v = drawn.data<std::int32_t>();
  EXPECT_GE(*std::min_element(v, v + 32), 0);
  EXPECT_LT(*std::max_element(v, v + 32), 1000);
  EXPECT_GT(*std::max_element(v, v + 32), 100);  // spread over the rows, not all 0
  quant::QuantConfig config;
  auto q = quantize_model(b.graph, config, synthetic_samples(b.graph, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  Executor executor(q.value().graph);
  auto out = executor.run({{ids, drawn}});
  ASSERT_TRUE(out.ok()) << out.reason();
  Executor reference(b.graph);
  auto want = reference.run({{ids, drawn}});
  ASSERT_TRUE(want.ok()) << want.reason();
  EXPECT_GT(sqnr_db(want.value().at(y).to_f32(), out.value().at(y).to_f32()), 30.0);
}

TEST(CalibrationFolder, WrongShapeAndDtypeAreNamedErrors) {
  const auto g = zoo::build_model("tiny_conv").value();
  const auto dir = std::filesystem::temp_directory_path() / "tessel_calib_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<float> wrong(7, 0.0f);
  write_npy((dir / "a.npy").string(), NpyArray::from_f32({7}, wrong));
  const auto& in = g.tensor(g.op(g.inputs()[0]).outputs[0]);
  try {
    (void)load_calibration_folder(g, dir.string(), {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "a.npy").string() +
                                         ": error: header.shape: calibration tensor has shape [7] "
                                         "but input %" +
                                         in.name + " of 'tiny_conv' is " +
                                         ir::shape_string(in.shape));
  }
  const std::vector<std::int8_t> ints(static_cast<std::size_t>(ir::element_count(in.shape)), 0);
  write_npy((dir / "a.npy").string(),
            NpyArray::from_i8(std::vector<std::int64_t>(in.shape.begin(), in.shape.end()), ints));
  try {
    (void)load_calibration_folder(g, dir.string(), {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "a.npy").string() +
                                         ": error: header.descr: calibration tensors must be "
                                         "float32, got int8");
  }
  std::filesystem::remove_all(dir);
}

TEST(QuantizeModel, NanActivationIsNamed) {
  const auto g = zoo::build_model("tiny_conv").value();
  quant::QuantConfig config;
  config.calibration_samples = 1;
  auto samples = synthetic_samples(g, config);
  const auto& in = g.op(g.inputs()[0]).outputs[0];
  samples[0].at(in).data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  const auto result = quantize_model(g, config, samples);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason(), "calibration: activation %" + in +
                                 " holds NaN at element 3 (check the weights and the calibration "
                                 "inputs) in calibration sample 0");
}

// quantize_model observes values in the executor's own layout (channels-last, no transposes)
// and counts histograms during one lockstep run of the samples; the thresholds must be exactly
// those of the plain two-pass calibration over NCHW values.
TEST(QuantizeModel, ThresholdsEqualTwoPassNchwCalibration) {
  for (const auto method : {quant::CalibrationMethod::percentile, quant::CalibrationMethod::entropy,
                            quant::CalibrationMethod::minmax}) {
    const ir::Graph g = prepare_graph(zoo::build_model("tiny_inception").value()).value();
    quant::QuantConfig config;
    config.method = method;
    config.calibration_samples = 3;
    const auto samples = synthetic_samples(g, config);
    const auto plan = quant::plan_scales(g, config).value();
    std::map<std::string, quant::TensorStats> stats;
    const auto observe = [&](const std::string& tensor, const TensorData& value, bool histogram) {
      if (std::find(plan.observed.begin(), plan.observed.end(), tensor) == plan.observed.end() ||
          value.dtype() != ir::DType::f32)
        return;
      const std::span<const float> values(value.data<float>(),
                                          static_cast<std::size_t>(value.size()));
      if (histogram)
        stats[tensor].observe_histogram(values);
      else
        ASSERT_TRUE(stats[tensor].observe_range(values).ok());
    };
    Executor executor(g);
    for (const bool histogram : {false, true}) {
      if (histogram && method == quant::CalibrationMethod::minmax) break;
      if (histogram)
        for (auto& [name, s] : stats) s.start_histogram(config.histogram_bins);
      RunOptions options;
      options.observer = [&](const std::string& tensor, const TensorData& value) -> Status {
        observe(tensor, value, histogram);
        return {};
      };
      for (const auto& sample : samples) {
        for (const auto& [name, value] : sample) observe(name, value, histogram);
        ASSERT_TRUE(executor.run(sample, options).ok());
      }
    }
    const auto model = quantize_model(g, config, samples).value();
    ASSERT_EQ(model.tensor_thresholds.size(), plan.observed.size());
    for (const auto& tensor : plan.observed) {
      const int bits = plan.class_bits[plan.class_of.at(tensor)];
      EXPECT_EQ(model.tensor_thresholds.at(tensor),
                quant::choose_threshold(stats[tensor], {config.method, config.percentile, bits}))
          << tensor << " (" << quant::to_string(method) << ")";
    }
  }
}

// run_lockstep runs each op on sample 0, 1, 2 in a row; the elements of every value the
// observer saw stay in place and unchanged until the tensor's last sample; each sample's
// values and outputs are bit for bit those of its own run.
TEST(Executor, LockstepRunsEachOpOnEverySampleInARowAndKeepsTheirValuesInPlace) {
  const ir::Graph g = prepare_graph(zoo::build_model("tiny_inception").value()).value();
  quant::QuantConfig config;
  config.calibration_samples = 3;
  const auto samples = synthetic_samples(g, config);
  using Bits = std::vector<std::uint8_t>;
  const auto bits_of = [](const TensorData& v) {
    const auto* p = static_cast<const std::uint8_t*>(v.raw());
    return Bits(p, p + v.bytes());
  };
  // Separate runs: every observed value, by (tensor, sample).
  std::map<std::pair<std::string, std::size_t>, Bits> separate;
  std::vector<std::map<std::string, TensorData>> separate_outputs;
  Executor executor(g);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    RunOptions options;
    options.layout_observer = [&](const std::string& t, const TensorData& v, bool) -> Status {
      separate[{t, k}] = bits_of(v);
      return {};
    };
    separate_outputs.push_back(executor.run(samples[k], options).value());
  }
  std::vector<std::pair<const void*, Bits>> group;  // this tensor's samples so far
  std::string group_tensor;
  std::size_t calls = 0;
  const auto outputs = executor.run_lockstep(
      samples, [&](std::size_t k, const std::string& t, const TensorData& v, bool) -> Status {
        ++calls;
        EXPECT_EQ(k, group.size()) << t;
        if (k == 0) group_tensor = t;
        EXPECT_EQ(t, group_tensor);
        EXPECT_EQ(bits_of(v), separate.at({t, k})) << t << " sample " << k;
        group.emplace_back(v.raw(), bits_of(v));
        if (group.size() == samples.size()) {
          for (const auto& [raw, bits] : group)  // still there, unchanged
            EXPECT_EQ(std::memcmp(raw, bits.data(), bits.size()), 0) << t;
          group.clear();
        }
        return {};
      });
  ASSERT_TRUE(outputs.ok()) << outputs.reason();
  EXPECT_EQ(calls, separate.size());
  ASSERT_EQ(outputs.value().size(), samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k)
    for (const auto& [name, value] : separate_outputs[k])
      EXPECT_EQ(bits_of(outputs.value()[k].at(name)), bits_of(value)) << name;
}

// An Inf in a channels-last activation is named by its NCHW index, as the contract says.
TEST(QuantizeModel, InfInChannelsLastActivationIsNamedByNchwIndex) {
  ir::Graph g = ir::parse_text(R"(graph t {
  input %x : f32[1,2,2,2]
  const %w : f32[2,2,1,1] = [1, 0, 0, 3e38]
  %y = Conv(%x, %w) {kernel=1x1} : f32[?]
  output %y
})",
                               "t");
  ASSERT_TRUE(ir::infer_all_shapes(g).ok());
  quant::QuantConfig config;
  config.calibration_samples = 1;
  // y channel 1 = 3e38 x channel 1: only 3e38 * 2 overflows, at NCHW element 4 + 2 = 6 (NHWC
  // element 2 * 2 + 1 = 5).
  const std::vector<Sample> samples = {
      {{"x", TensorData::from_f32({1, 2, 2, 2}, std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f,
                                                                   0.6f, 2.0f, 0.7f})}}};
  const auto result = quantize_model(g, config, samples);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.reason(),
            "calibration: activation %y holds Inf at element 6 (check the weights and the "
            "calibration inputs) (calibration sample 0)");
}

}  // namespace
}  // namespace tessel::cpu
