// The GPU backend's modern-workload kernels (workload_ops.cuh): hand-computed cases of each
// per-element/per-row function, and the lowered plan of a tiny transformer block executed by
// the host emulator, bit for bit against the golden integer executor at 8 and 16 bits.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/resize_taps.hpp"
#include "compiler/ir/shape_inference.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/targets/cuda/emulate.hpp"
#include "compiler/targets/cuda/lower.hpp"
#include "support/seeded.hpp"
#include "tests/support/graph_builder.hpp"

namespace tessel::cuda {
namespace {

using ir::OpKind;

/// A row-major int32 view of `data` with `dims`.
Strided dense(std::vector<std::int32_t>& data, std::vector<std::int64_t> dims) {
  Strided v;
  v.data = data.data();
  v.type = kI32;
  v.rank = static_cast<std::int32_t>(dims.size());
  std::int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.dims[d] = dims[static_cast<std::size_t>(d)];
    v.strides[d] = stride;
    stride *= v.dims[d];
  }
  return v;
}

std::vector<std::int32_t> run(const WorkArgs& a, std::size_t outputs) {
  std::vector<std::int32_t> y(outputs, -999);
  WorkArgs b = a;
  b.y.data = y.data();
  for (std::int64_t i = 0; i < work_threads(b); ++i) work_thread(b, i);
  return y;
}

TEST(CudaWorkloadOps, TransposeIsAStrideSwap) {
  std::vector<std::int32_t> x = {1, 2, 3, 4, 5, 6}, y(6);  // [[1 2 3] [4 5 6]]
  WorkArgs a;
  a.op = kMove;
  a.x = dense(x, {2, 3});
  std::swap(a.x.dims[0], a.x.dims[1]);
  std::swap(a.x.strides[0], a.x.strides[1]);
  a.y = dense(y, {3, 2});
  EXPECT_EQ(run(a, 6), (std::vector<std::int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(CudaWorkloadOps, GatherReadsTheIndexTableAndTriluZeroesAboveTheDiagonal) {
  std::vector<std::int32_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y(9);
  const std::int64_t rows[] = {2, 0};
  WorkArgs a;
  a.op = kMove;
  a.x = dense(x, {3, 3});
  a.x.dims[0] = 2;
  a.gather_axis = 0;
  a.table = rows;
  a.y = dense(y, {2, 3});
  EXPECT_EQ(run(a, 6), (std::vector<std::int32_t>{7, 8, 9, 1, 2, 3}));
  WorkArgs t;
  t.op = kMove;
  t.x = dense(x, {3, 3});
  t.y = dense(y, {3, 3});
  t.trilu = 1;  // lower, k = 0: keep j <= i
  EXPECT_EQ(run(t, 9), (std::vector<std::int32_t>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
}

TEST(CudaWorkloadOps, BroadcastAddRequantizesEachPairOnce) {
  // a [2, 1] + b [3] -> [2, 3]; M_a = 2^30, M_b = 2^29, r = 30: a + b / 2, rounded half away.
  std::vector<std::int32_t> a_v = {10, -10}, b_v = {1, 3, -3}, y(6);
  WorkArgs a;
  a.op = kAdd;
  a.y = dense(y, {2, 3});
  a.x = dense(a_v, {2, 1});
  a.x.dims[1] = 3;
  a.x.strides[1] = 0;
  a.second = dense(b_v, {1, 3});
  a.second.dims[0] = 2;
  a.second.strides[0] = 0;
  a.add = intops::AddRequant{1 << 30, 1 << 29, 30, 0, -128, 127};
  // 10.5 -> 11, 11.5 -> 12, 8.5 -> 9; -9.5 -> -10, -8.5 -> -9, -11.5 -> -12.
  EXPECT_EQ(run(a, 6), (std::vector<std::int32_t>{11, 12, 9, -10, -9, -12}));
}

TEST(CudaWorkloadOps, MatMulRoundsOperandsByTheShiftThenRequantizes) {
  // [1, 2] x [2, 1] with u = 1: rha(3,1) = 2, rha(5,1) = 3, rha(2,1) = 1, rha(-7,1) = -4:
  // 2 * 1 + 3 * -4 = -10; the epilogue halves it (M = 2^30, r = 31): -5.
  std::vector<std::int32_t> a_v = {3, 5}, b_v = {2, -7}, y(1);
  WorkArgs a;
  a.op = kMatMul;
  a.x = dense(a_v, {1, 2});
  a.second = dense(b_v, {2, 1});
  a.y = dense(y, {1, 1});
  a.operand_shift = a.second_shift = 1;
  EXPECT_EQ(run(a, 1), (std::vector<std::int32_t>{-10}));
  const std::int32_t multiplier = 1 << 30, shift = 31;
  a.epilogue.multiplier = &multiplier;
  a.epilogue.shift = &shift;
  a.epilogue.requant_lo = -128;
  a.epilogue.requant_hi = 127;
  EXPECT_EQ(run(a, 1), (std::vector<std::int32_t>{-5}));
  // A constant weight matrix's input shift rounds a alone (docs/quantization.md): u = 2 on a,
  // 0 on b: rha(3,2) = 1, rha(5,2) = 1 (1.25): 1 * 2 + 1 * -7 = -5, halved: -3 (-2.5 away).
  a.operand_shift = 2;
  a.second_shift = 0;
  EXPECT_EQ(run(a, 1), (std::vector<std::int32_t>{-3}));
}

TEST(CudaWorkloadOps, SoftmaxOfEqualCodesIsOneHalfAndAMaskedRowKeepsOne) {
  // exp_low[0] = 2^15: each e = 2^15, S = 2^16, R = 2^29, p = 2^29 (one half times 2^30);
  // y = rha(2^29 * 2^30, 53) = 64. With the second position masked: p = 2^30, y = 128 -> 127.
  intops::SoftmaxParams p;
  p.exp_high[0] = p.exp_low[0] = 1 << 15;
  p.output = intops::Requant{1 << 30, 53, 0, -128, 127};
  std::vector<std::int32_t> x = {5, 5}, keep = {1, 0}, y(2);
  WorkArgs a;
  a.op = kSoftmax;
  a.table = &p;
  a.x = dense(x, {1, 2});
  a.y = dense(y, {1, 2});
  EXPECT_EQ(run(a, 2), (std::vector<std::int32_t>{64, 64}));
  a.third = dense(keep, {1, 2});
  EXPECT_EQ(run(a, 2), (std::vector<std::int32_t>{127, 0}));
}

TEST(CudaWorkloadOps, LayerNormOfPlusMinusOneIsPlusMinusOneSigma) {
  // x = [1, -1]: S1 = 0, S2 = 2, D = 4, g = 29, s = isqrt(2^60) = 2^30, inv = 2^24,
  // t = rha(+-2 * 2^24, 9) = +-2^16 (one sigma); G = 2^30, r = 40: y = +-2^46 / 2^40 = +-64.
  const intops::NormAffine affine[2] = {{1 << 30, 40, 0}, {1 << 30, 40, 0}};
  std::vector<std::int32_t> x = {1, -1}, y(2);
  WorkArgs a;
  a.op = kNorm;
  a.table = affine;
  a.x = dense(x, {1, 2});
  a.y = dense(y, {1, 2});
  a.lo = -128;
  a.hi = 127;
  EXPECT_EQ(run(a, 2), (std::vector<std::int32_t>{64, -64}));
}

TEST(CudaWorkloadOps, ReduceSumRequantizesTheRowSumAndReduceMaxTakesTheLargest) {
  std::vector<std::int32_t> x = {1, 2, 4, -3, -5, 7}, y(2);
  WorkArgs a;
  a.op = kReduceSum;
  a.x = dense(x, {2, 3});
  a.reduced = 3;
  a.y = dense(y, {2});
  a.requant = intops::Requant{1 << 30, 31, 0, -128, 127};  // halve: 3.5 -> 4, -0.5 -> -1
  EXPECT_EQ(run(a, 2), (std::vector<std::int32_t>{4, -1}));
  a.op = kReduceMax;
  EXPECT_EQ(run(a, 2), (std::vector<std::int32_t>{4, 7}));
}

TEST(CudaWorkloadOps, ResizeWeighsTheTwoNeighboursAndNearestPicksOne) {
  // x = [10, 20] -> 4 elements, half_pixel: source coordinates -0.25 (clamped to 0), 0.25, 0.75,
  // 1.25 (clamped to 1); weights (256 - w, w) with w = rha(256 t): (256, 0), (192, 64),
  // (64, 192), (256, 0). y = rha(sum, 8): 10, (1920 + 1280) / 256 = 12.5 -> 13, 17.5 -> 18, 20.
  ir::Op op;
  op.name = "up";
  op.kind = OpKind::Resize;
  op.attrs["mode"] = std::string("linear");
  op.attrs["coordinate_transformation_mode"] = std::string("half_pixel");
  op.attrs["nearest_mode"] = std::string("round_prefer_floor");
  auto taps = ir::resize_taps(op, {2}, {4});
  ASSERT_TRUE(taps.ok()) << taps.reason();
  EXPECT_EQ(taps.value().shift, 8);
  std::vector<std::int64_t> table;
  for (const auto& tap : taps.value().axes[0])
    table.insert(table.end(), {tap.lo, tap.hi, tap.w_lo, tap.w_hi});
  EXPECT_EQ(table,
            (std::vector<std::int64_t>{0, 1, 256, 0, 0, 1, 192, 64, 0, 1, 64, 192, 1, 1, 256, 0}));
  std::vector<std::int32_t> x = {10, 20}, y(4);
  WorkArgs a;
  a.op = kResize;
  a.x = dense(x, {2});
  a.y = dense(y, {4});
  a.table = table.data();
  a.resize_shift = taps.value().shift;
  EXPECT_EQ(run(a, 4), (std::vector<std::int32_t>{10, 13, 18, 20}));
  // Nearest, round_prefer_floor: coordinates -0.25, 0.25, 0.75, 1.25 -> indices 0, 0, 1, 1.
  op.attrs["mode"] = std::string("nearest");
  auto nearest = ir::resize_taps(op, {2}, {4});
  ASSERT_TRUE(nearest.ok()) << nearest.reason();
  EXPECT_EQ(nearest.value().shift, 0);
  table.clear();
  for (const auto& tap : nearest.value().axes[0])
    table.insert(table.end(), {tap.lo, tap.hi, tap.w_lo, tap.w_hi});
  a.resize_shift = 0;
  EXPECT_EQ(run(a, 4), (std::vector<std::int32_t>{10, 10, 20, 20}));
  op.attrs["coordinate_transformation_mode"] = std::string("tf_crop_and_resize");
  auto refused = ir::resize_taps(op, {2}, {4});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.reason(),
      "op 'up' (Resize): coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
}

// ---- a tiny transformer block through lowering + emulator vs the golden executor ----------

/// The block's builder: seeded constants from stream 2000 on.
struct BlockBuilder : testing::GraphBuilder {
  BlockBuilder() : GraphBuilder("tiny_block", 2000) {}
  using GraphBuilder::random;
  std::string random(const std::string& name, ir::Shape shape, double std_dev) {
    return random(name, std::move(shape), 0.0, std_dev);
  }
};

/// LayerNorm, Q/K/V MatMuls, two heads (Reshape + Transpose), Q x K^T, a scale, causal Softmax,
/// scores x V, merge, residual Add, RMSNorm, a slice-and-concat rotation, an MLP with a bias
/// Add, Gelu, Silu gate (Mul), ReduceMean, Where: every workload kernel kind.
ir::Graph tiny_block() {
  constexpr std::int64_t s = 6, d = 8, h = 2, hd = 4;
  BlockBuilder b;
  const std::string x = b.input("x", {1, s, d});
  const std::string ln = b.op("ln", OpKind::LayerNormalization,
                              {x, b.random("ln.g", {d}, 0.3), b.random("ln.b", {d}, 0.1)},
                              {{"axis", std::int64_t{-1}}, {"epsilon", 1e-5}});
  const auto proj = [&](const std::string& name, const std::string& in, std::int64_t k,
                        std::int64_t n) {
    return b.op(name, OpKind::MatMul, {in, b.random(name + ".w", {k, n}, 0.4)});
  };
  const auto heads = [&](const std::string& name, const std::string& in, ir::Shape perm) {
    const std::string r =
        b.op(name + ".r", OpKind::Reshape, {in}, {{"shape", ir::Shape{1, s, h, hd}}});
    return b.op(name + ".t", OpKind::Transpose, {r}, {{"perm", perm}});
  };
  const std::string q = heads("q", proj("qp", ln, d, d), {0, 2, 1, 3});
  const std::string kt = heads("k", proj("kp", ln, d, d), {0, 2, 3, 1});
  const std::string v = heads("v", proj("vp", ln, d, d), {0, 2, 1, 3});
  const std::string qs = b.op("qs", OpKind::Mul, {q, b.constant("scale", {1}, {0.5f})});
  const std::string scores = b.op("scores", OpKind::MatMul, {qs, kt});
  std::vector<float> causal(static_cast<std::size_t>(s * s), 0.0f);
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = 0; j <= i; ++j) causal[static_cast<std::size_t>(i * s + j)] = 1.0f;
  const std::string probs =
      b.op("probs", OpKind::Softmax, {scores, b.constant("causal", {s, s}, causal)},
           {{"axis", std::int64_t{-1}}});
  const std::string ctx = b.op("ctx", OpKind::MatMul, {probs, v});
  const std::string merged =
      b.op("merged", OpKind::Transpose, {ctx}, {{"perm", ir::Shape{0, 2, 1, 3}}});
  const std::string flat = b.op("flat", OpKind::Reshape, {merged}, {{"shape", ir::Shape{1, s, d}}});
  const std::string res = b.op("res", OpKind::Add, {x, flat});
  const std::string rms = b.op("rms", OpKind::RMSNormalization, {res, b.random("rms.g", {d}, 0.3)},
                               {{"axis", std::int64_t{-1}}, {"epsilon", 1e-5}});
  const std::string lo = b.op("lo", OpKind::Slice, {rms},
                              {{"starts", ir::Shape{0}},
                               {"ends", ir::Shape{d / 2}},
                               {"axes", ir::Shape{2}},
                               {"steps", ir::Shape{1}}});
  const std::string hi = b.op("hi", OpKind::Slice, {rms},
                              {{"starts", ir::Shape{d / 2}},
                               {"ends", ir::Shape{d}},
                               {"axes", ir::Shape{2}},
                               {"steps", ir::Shape{1}}});
  const std::string neg = b.op("neg", OpKind::Neg, {hi});
  const std::string rot = b.op("rot", OpKind::Concat, {neg, lo}, {{"axis", std::int64_t{2}}});
  const std::string fc =
      b.op("fc.bias", OpKind::Add, {proj("fc", rot, d, 2 * d), b.random("fc.b", {2 * d}, 0.1)});
  const std::string gelu = b.op("gelu", OpKind::Gelu, {fc});
  const std::string gate = b.op("gate", OpKind::Mul, {b.op("silu", OpKind::Silu, {fc}), gelu});
  const std::string down = proj("down", gate, 2 * d, d);
  const std::string mean = b.op("mean", OpKind::ReduceMean, {down},
                                {{"axes", ir::Shape{2}}, {"keepdims", std::int64_t{1}}});
  const std::string centred = b.op("centred", OpKind::Sub, {down, mean});
  std::vector<float> pick(static_cast<std::size_t>(d), 1.0f);
  pick[0] = pick[3] = 0.0f;
  b.op("y", OpKind::Where, {b.constant("pick", {d}, pick), centred, res});
  EXPECT_TRUE(b.graph.set_outputs({"y"}).ok());
  const auto shapes = ir::infer_all_shapes(b.graph);
  EXPECT_TRUE(shapes.ok()) << shapes.reason();
  return std::move(b.graph);
}

void expect_block_bit_exact(int bits) {
  const ir::Graph g = tiny_block();
  quant::QuantConfig config;
  config.bits = bits;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Graph& graph = q.value().graph;
  auto plan = lower_to_gpu(graph);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  const cpu::TensorData input = cpu::default_input({1, 6, 8}, 0);
  cpu::Executor golden(graph);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto expected = golden.run({{"x", input}}, options);
  ASSERT_TRUE(expected.ok()) << expected.reason();
  auto got = emulate(plan.value(), input, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  std::size_t compared = 0;
  for (const auto& [name, value] : got.value()) {
    ASSERT_TRUE(expected.value().count(name)) << name;
    const auto want = expected.value().at(name).to_i32(), have = value.to_i32();
    ASSERT_EQ(have.size(), want.size()) << name;
    EXPECT_EQ(have, want) << bits << " bits: tensor %" << name;
    ++compared;
  }
  // Every kernel kind ran (the block is built to need each).
  std::map<std::string, int> kinds;
  for (const auto& s : plan.value().steps) ++kinds[step_kind_name(s)];
  for (const char* k :
       {"matmul", "softmax", "norm", "table", "binary", "move", "reshape", "reduce"})
    EXPECT_GT(kinds[k], 0) << k;
  EXPECT_GE(compared, 20u);
}

TEST(CudaWorkloadEmulator, TinyTransformerBlockIsBitExactAtEightBits) {
  expect_block_bit_exact(8);
}

TEST(CudaWorkloadEmulator, TinyTransformerBlockIsBitExactAtSixteenBits) {
  expect_block_bit_exact(16);
}

TEST(CudaWorkloadEmulator, ComparisonCatchesADroppedSoftmaxMask) {
  const ir::Graph g = tiny_block();
  quant::QuantConfig config;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  auto plan = lower_to_gpu(q.value().graph);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  for (auto& s : plan.value().steps)
    if (s.kind == KernelKind::Workload && s.work.op == kSoftmax) s.work_buffers[2] = -1;
  const cpu::TensorData input = cpu::default_input({1, 6, 8}, 0);
  cpu::Executor golden(q.value().graph);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto expected = golden.run({{"x", input}}, options);
  ASSERT_TRUE(expected.ok()) << expected.reason();
  auto got = emulate(plan.value(), input, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  // Unmasked, the first query row attends to all 6 keys instead of 1: its probabilities differ.
  EXPECT_NE(got.value().at("probs").to_i32(), expected.value().at("probs").to_i32());
}

/// A graph with one f32 input "x" of `shape`, quantized (default config), lowered and emulated
/// beside the golden executor, every tensor kept.
struct BothRuns {
  ir::Graph graph;  ///< quantized
  GpuPlan plan;
  std::map<std::string, cpu::TensorData> golden, emulated;
};

void run_both(const ir::Graph& g, const ir::Shape& shape, BothRuns& out) {
  quant::QuantConfig config;
  auto q = cpu::quantize_model(g, config, cpu::synthetic_samples(g, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  out.graph = q.value().graph;
  auto plan = lower_to_gpu(out.graph);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  out.plan = std::move(plan.value());
  const cpu::TensorData input = cpu::default_input(shape, 0);
  cpu::Executor golden(out.graph);
  cpu::RunOptions options;
  options.keep_intermediates = true;
  auto expected = golden.run({{"x", input}}, options);
  ASSERT_TRUE(expected.ok()) << expected.reason();
  out.golden = std::move(expected.value());
  auto got = emulate(out.plan, input, /*all_buffers=*/true);
  ASSERT_TRUE(got.ok()) << got.reason();
  out.emulated = std::move(got.value());
}

TEST(CudaWorkloadEmulator, PadFillsTheQuantizedValueAroundTheInput) {
  BlockBuilder b;
  const std::string x = b.input("x", {1, 2, 3, 3});
  const std::string padded = b.op("padded", OpKind::Pad, {x},
                                  {{"pads", ir::Shape{0, 0, 1, 2, 0, 0, 1, 0}}, {"value", 0.5}});
  b.op("y", OpKind::Relu, {padded});
  ASSERT_TRUE(b.graph.set_outputs({"y"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(b.graph).ok());
  BothRuns r;
  run_both(b.graph, {1, 2, 3, 3}, r);
  if (HasFatalFailure()) return;
  const auto have = r.emulated.at("padded").to_i32();
  EXPECT_EQ(have, r.golden.at("padded").to_i32());
  // [1, 2, 5, 5]: row 0 and columns 0, 1 are padding; 0.5 at the input's scale.
  const float scale = r.graph.tensor("padded").quant->scales[0];
  const std::int32_t pad_code = intops::quantize_value(0.5f, scale, 8);
  ASSERT_EQ(have.size(), 50u);
  EXPECT_EQ(have[0], pad_code);
  EXPECT_EQ(have[5 + 1], pad_code);
  EXPECT_EQ(have[5 + 2], r.emulated.at("x.q").to_i32()[0]);  // x[0, 0, 0, 0]
}

/// Resize of an NCHW map [1, 2, 3, 3] to [1, 2, 6, 5] under `mode`, then ReLU: the emulated
/// plan against the golden executor, every tensor.
void expect_resize_bit_exact(const std::string& mode, const std::string& coordinates) {
  BlockBuilder b;
  const std::string x = b.input("x", {1, 2, 3, 3});
  const std::string up = b.op("up", OpKind::Resize, {x},
                              {{"mode", mode},
                               {"coordinate_transformation_mode", coordinates},
                               {"nearest_mode", std::string("round_prefer_floor")},
                               {"sizes", ir::Shape{1, 2, 6, 5}}});
  b.op("y", OpKind::Relu, {up});
  ASSERT_TRUE(b.graph.set_outputs({"y"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(b.graph).ok());
  BothRuns r;
  run_both(b.graph, {1, 2, 3, 3}, r);
  if (::testing::Test::HasFatalFailure()) return;
  int resize_steps = 0;
  for (const auto& s : r.plan.steps) resize_steps += std::string(step_kind_name(s)) == "resize";
  EXPECT_EQ(resize_steps, 1);
  const auto have = r.emulated.at("up").to_i32();
  ASSERT_EQ(have.size(), 60u);
  EXPECT_EQ(have, r.golden.at("up").to_i32()) << mode << " " << coordinates;
  // Not a copy of the input: the upsampled map has more distinct positions than it.
  EXPECT_NE(have[0], have[59]);
}

TEST(CudaWorkloadEmulator, ResizeLinearAndNearestAreBitExactWithTheGoldenExecutor) {
  expect_resize_bit_exact("linear", "half_pixel");
  expect_resize_bit_exact("linear", "align_corners");
  expect_resize_bit_exact("nearest", "asymmetric");
  expect_resize_bit_exact("nearest", "half_pixel");
}

TEST(CudaWorkloadLower, SoftmaxAlongAnotherAxisIsRefusedNamingTheOp) {
  BlockBuilder b;
  const std::string x = b.input("x", {1, 4, 4});
  const std::string sm = b.op("sm", OpKind::Softmax, {x}, {{"axis", std::int64_t{1}}});
  b.op("y", OpKind::Relu, {sm});
  ASSERT_TRUE(b.graph.set_outputs({"y"}).ok());
  ASSERT_TRUE(ir::infer_all_shapes(b.graph).ok());
  quant::QuantConfig config;
  auto q = cpu::quantize_model(b.graph, config, cpu::synthetic_samples(b.graph, config));
  ASSERT_TRUE(q.ok()) << q.reason();
  auto plan = lower_to_gpu(q.value().graph);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.reason(), "%sm (Softmax): the GPU backend runs softmax along the last axis only");
}

}  // namespace
}  // namespace tessel::cuda
