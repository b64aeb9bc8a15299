// Annotate and realize the modern-workload ops: scale classes, the quantized forms (tables,
// accumulators, reciprocals, masks), the derived integers and the refusals that name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::quant {
namespace {

// Realizes `text` with every class at threshold 1.27 (scale 0.01 at 8 bits).
Result<ir::Graph> realize_all(const std::string& text, int bits = 8, int table_input_bits = 8) {
  const auto g = test_support::parse_graph(text);
  QuantConfig config;
  config.bits = bits;
  config.table_input_bits = table_input_bits;
  auto plan = plan_scales(g, config);
  if (!plan) return plan.failure();
  std::map<std::string, double> t;
  for (const auto& name : plan.value().observed) t[name] = 1.27;
  auto thresholds = class_thresholds(plan.value(), t, config);
  if (!thresholds) return thresholds.failure();
  return realize(g, plan.value(), thresholds.value());
}

TEST(AnnotateWorkloads, MovementOpsJoinTheirInputsClassAndComputeOpsStartTheirOwn) {
  const auto g = test_support::parse_graph(R"(graph t {
  input %x : f32[2,3]
  %t = Transpose(%x) {perm=1,0} : f32[?]
  %m = ReduceMax(%t) {axes=[1], keepdims=1} : f32[?]
  %g = Gelu(%m) : f32[?]
  %s = Slice(%g) {starts=[0], ends=[1], axes=[0], steps=[1]} : f32[?]
  output %s
})");
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(plan.ok()) << plan.reason();
  ASSERT_EQ(plan.value().classes.size(), 2u);
  EXPECT_EQ(plan.value().classes[0], (std::vector<std::string>{"x", "t", "m"}));
  EXPECT_EQ(plan.value().classes[1], (std::vector<std::string>{"g", "s"}));
}

TEST(AnnotateWorkloads, AnAccumulatorResultReadOnlyByTablesIsSixteenBits) {
  // %h (a MatMul by a constant) feeds only Silu and Sigmoid: 16 bits with table_input_bits 16;
  // %k also feeds an Add, and %x and %s come from no accumulator: they stay 8 bits.
  const std::string text = R"(graph w {
  input %x : f32[2,2]
  const %w : f32[2,2] = [1, 2, 3, 4]
  %h = MatMul(%x, %w) : f32[?]
  %a = Silu(%h) : f32[?]
  %s = Sigmoid(%h) : f32[?]
  %k = MatMul(%a, %w) : f32[?]
  %t = Tanh(%k) : f32[?]
  %y = Add(%k, %s) : f32[?]
  %z = Add(%y, %t) : f32[?]
  output %z
})";
  const auto g = test_support::parse_graph(text);
  const auto bits = [&](const ScalePlan& plan, const std::string& t) {
    return plan.class_bits[static_cast<std::size_t>(plan.class_of.at(t))];
  };
  QuantConfig wide;
  wide.table_input_bits = 16;
  const auto plan = plan_scales(g, wide);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  EXPECT_EQ(bits(plan.value(), "h"), 16);
  for (const char* t : {"x", "a", "s", "k", "t", "y", "z"})
    EXPECT_EQ(bits(plan.value(), t), 8) << t;
  const auto eight = plan_scales(g, QuantConfig{});  // the default: 8
  ASSERT_TRUE(eight.ok()) << eight.reason();
  EXPECT_EQ(bits(eight.value(), "h"), 8);
  // Realized: the Requantize writes i16 and the Silu table has the 257 interpolated entries.
  auto q = realize_all(text, 8, 16);
  ASSERT_TRUE(q.ok()) << q.reason();
  EXPECT_EQ(q.value().tensor("h").dtype, ir::DType::i16);
  const ir::Op& silu = q.value().op(*q.value().find_op("a"));
  EXPECT_EQ(q.value().tensor(silu.inputs[1]).int_values.size(), 257u);
  EXPECT_EQ(q.value().tensor("a").dtype, ir::DType::i8);
}

TEST(AnnotateWorkloads, AResidualStreamAndWhatIsSummedIntoItAreNormInputBitsWide) {
  // %r and %s are read only by LayerNormalization and by Adds into the stream: 16 bits under
  // norm_input_bits 16, and so are the branches %h and %m summed into them. %x also feeds a
  // MatMul, %n only a MatMul, %y is the graph output: 8 bits. By default every class is 8 bits.
  const std::string text = R"(graph r {
  input %x : f32[2,4]
  const %g : f32[4] = [1, 1, 1, 1]
  const %w : f32[4,4] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  %h = MatMul(%x, %w) : f32[?]
  %r = Add(%x, %h) : f32[?]
  %n = LayerNormalization(%r, %g) : f32[?]
  %m = MatMul(%n, %w) : f32[?]
  %s = Add(%r, %m) : f32[?]
  %y = LayerNormalization(%s, %g) : f32[?]
  output %y
})";
  const auto g = test_support::parse_graph(text);
  const auto bits = [&](const ScalePlan& plan, const std::string& t) {
    return plan.class_bits[static_cast<std::size_t>(plan.class_of.at(t))];
  };
  QuantConfig wide;
  wide.norm_input_bits = 16;
  const auto plan = plan_scales(g, wide);
  ASSERT_TRUE(plan.ok()) << plan.reason();
  for (const char* t : {"h", "r", "m", "s"}) EXPECT_EQ(bits(plan.value(), t), 16) << t;
  for (const char* t : {"x", "n", "y"}) EXPECT_EQ(bits(plan.value(), t), 8) << t;
  const auto eight = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(eight.ok()) << eight.reason();
  for (const char* t : {"x", "h", "r", "n", "m", "s", "y"})
    EXPECT_EQ(bits(eight.value(), t), 8) << t;
  // Realized: the residual Adds write i16 (s_y = 1.27 / 32767), the first from an i8 operand.
  QuantConfig config = wide;
  std::map<std::string, double> t;
  for (const auto& name : plan.value().observed) t[name] = 1.27;
  const auto thresholds = class_thresholds(plan.value(), t, config).value();
  const auto q = realize(g, plan.value(), thresholds);
  ASSERT_TRUE(q.ok()) << q.reason();
  EXPECT_EQ(q.value().tensor("r").dtype, ir::DType::i16);
  EXPECT_EQ(q.value().tensor("s").dtype, ir::DType::i16);
  EXPECT_EQ(q.value().tensor("n").dtype, ir::DType::i8);
  EXPECT_FLOAT_EQ(q.value().tensor("r").quant->scales[0], static_cast<float>(1.27 / 32767));
}

TEST(AnnotateWorkloads, WhereJoinsItsBranchesButNotItsConstantCondition) {
  const auto g = test_support::parse_graph(R"(graph w {
  input %a : f32[2,2]
  input %b : f32[2,2]
  const %c : f32[2,2] = [1, 0, 0, 1]
  %y = Where(%c, %a, %b) : f32[?]
  output %y
})");
  const auto plan = plan_scales(g, QuantConfig{});
  ASSERT_TRUE(plan.ok()) << plan.reason();
  ASSERT_EQ(plan.value().classes.size(), 1u);
  EXPECT_EQ(plan.value().classes[0], (std::vector<std::string>{"a", "b", "y"}));
}

TEST(RealizeWorkloads, AConstantWhereBranchWidensTheClassAndTakesItsScale) {
  // Activations at 1.27; the branch's max |f| = 3.81: threshold 3.81, scale 0.03, so
  // f = [3.81, -0.3] -> [127, -10] and a, y share scale 0.03.
  auto q = realize_all(R"(graph w {
  input %a : f32[2]
  const %c : f32[2] = [1, 0]
  const %f : f32[2] = [3.81, -0.3]
  %y = Where(%c, %a, %f) : f32[?]
  output %y
})");
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Op& op = q.value().op(*q.value().find_op("y"));
  const ir::Tensor& f = q.value().tensor(op.inputs[2]);
  EXPECT_EQ(f.int_values, (std::vector<std::int32_t>{127, -10}));
  EXPECT_FLOAT_EQ(f.quant->scales[0], 0.03f);
  EXPECT_FLOAT_EQ(q.value().tensor("a.q").quant->scales[0], 0.03f);
  EXPECT_EQ(q.value().tensor(op.inputs[0]).int_values, (std::vector<std::int32_t>{1, 0}));
}

TEST(RealizeWorkloads, UnaryOpsCarryTheirTableAsAnI32Constant) {
  // s_x = s_y = 0.01: T[i] = rha(sigmoid(0.01 i) / 0.01) clamped to 127.
  auto q = realize_all(R"(graph s {
  input %x : f32[4]
  %y = Sigmoid(%x) : f32[?]
  output %y
})");
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Op& op = q.value().op(*q.value().find_op("y"));
  ASSERT_EQ(op.inputs.size(), 2u);
  const ir::Tensor& table = q.value().tensor(op.inputs[1]);
  EXPECT_EQ(table.name, "y.table");
  EXPECT_EQ(table.dtype, ir::DType::i32);
  ASSERT_EQ(table.int_values.size(), 256u);
  EXPECT_EQ(table.int_values[0], 22);    // sigmoid(-1.28) = 0.2176
  EXPECT_EQ(table.int_values[128], 50);  // sigmoid(0) = 0.5
  EXPECT_EQ(table.int_values[228], 73);  // sigmoid(1) = 0.7311
  EXPECT_EQ(table.int_values[255], 78);  // sigmoid(1.27) = 0.7807
  auto sixteen = realize_all(R"(graph s {
  input %x : f32[4]
  %y = Sigmoid(%x) : f32[?]
  output %y
})",
                             16);
  ASSERT_TRUE(sixteen.ok()) << sixteen.reason();
  EXPECT_EQ(sixteen.value().tensor("y.table").int_values.size(), 257u);
}

TEST(RealizeWorkloads, FunctionTableSaturatesInfinitiesAndZeroesNan) {
  const auto table = function_table([](double x) { return 1.0 / x; }, 1.0, 8, 1.0, 8);
  EXPECT_EQ(table[128], 127);  // 1 / 0 = +inf
  EXPECT_EQ(table[127], -1);   // 1 / -1
  const auto roots = function_table([](double x) { return std::sqrt(x); }, 1.0, 8, 1.0, 8);
  EXPECT_EQ(roots[0], 0);        // sqrt(-128) = NaN
  EXPECT_EQ(roots[128 + 9], 3);  // sqrt(9)
}

TEST(RealizeWorkloads, DivByAConstantBecomesMulByItsQuantizedReciprocal) {
  auto q = realize_all(R"(graph d {
  input %x : f32[2]
  const %four : f32[1] = [4]
  %y = Div(%x, %four) : f32[?]
  output %y
})");
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Op& op = q.value().op(*q.value().find_op("y"));
  EXPECT_EQ(op.kind, ir::OpKind::Mul);
  const ir::Tensor& r = q.value().tensor(op.inputs[1]);
  EXPECT_EQ(r.name, "four.reciprocal");
  EXPECT_EQ(r.int_values, (std::vector<std::int32_t>{127}));  // 0.25 at scale 0.25 / 127
  EXPECT_FLOAT_EQ(r.quant->scales[0], 0.25f / 127.0f);
}

TEST(RealizeWorkloads, ActivationMatMulWritesAnAccumulatorWithTheOperandShiftInItsScale) {
  const char* text = R"(graph mm {
  input %a : f32[1,4,8]
  input %b : f32[1,8,4]
  %y = MatMul(%a, %b) : f32[?]
  output %y
})";
  auto q8 = realize_all(text, 8);
  ASSERT_TRUE(q8.ok()) << q8.reason();
  const ir::Tensor& acc8 = q8.value().tensor("y.acc");
  EXPECT_EQ(acc8.dtype, ir::DType::i32);
  EXPECT_FLOAT_EQ(acc8.quant->scales[0], 0.01f * 0.01f);
  EXPECT_EQ(q8.value().op(*q8.value().find_op("y.requantize")).kind, ir::OpKind::Requantize);
  auto q16 = realize_all(text, 16);  // K = 8 at 16 bits: u = 2, scale x 16
  ASSERT_TRUE(q16.ok()) << q16.reason();
  const float s16 = static_cast<float>(1.27 / 32767);
  EXPECT_FLOAT_EQ(q16.value().tensor("y.acc").quant->scales[0],
                  static_cast<float>(double{s16} * double{s16} * 16.0));
}

TEST(SoftmaxOperandShift, BoundsTheAccumulatorByTheRowSumOfTheProbabilities) {
  // M * 2^-r = 2^30 * 2^-45 = 2^-15: a probability of 1 is code 2^15. K = 128: S_a =
  // floor(2^30 * (2^30 + 128) / 2^45) + 128 = 32768 + 128; u = 0 gives 2^15 * (32896 + 1 + 128)
  // = 33025 * 2^15 <= 2^31 - 1 (65535 * 2^15 is the last that fits). The dtype rule needs 4.
  const intops::Requant p15{std::int32_t{1} << 30, 45, 0, -32768, 32767};
  EXPECT_EQ(softmax_operand_shift(p15, 16, 16, 128), 0);
  EXPECT_EQ(intops::matmul_operand_shift(16, 16, 128), 4);
  EXPECT_EQ(softmax_operand_shift(p15, 16, 8, 128), 0);
  // M * 2^-r = 2^-10: S_a = 2^20 + 128 (below the clamp's 128 * 32767). u = 2: b <= 2^13 and
  // (S_a >> 2) + 129 = 262305 > (2^31 - 1) / 2^13 = 262143; u = 3: 131217 <= 524287.
  const intops::Requant p20{std::int32_t{1} << 30, 40, 0, -32768, 32767};
  EXPECT_EQ(softmax_operand_shift(p20, 16, 16, 128), 3);
  // The clamp bounds it too: M * 2^-r = 2^-5 makes S_a = K * qmax = 4 * 127 at 8 bits.
  const intops::Requant p25{std::int32_t{1} << 30, 35, 0, -128, 127};
  EXPECT_EQ(softmax_operand_shift(p25, 8, 16, 4), 0);  // 2^15 * (508 + 1 + 4) < 2^31
}

TEST(RealizeWorkloads, ProbabilitiesTimesValuesAtSixteenBitsTakeTheRowSumShift) {
  // P x V with K = 128 at 16 bits: the dtype rule's u = 4 becomes the attribute operand_shift 0
  // (probabilities at threshold 1.27 sum to 32767 / 1.27 = 25801 codes per row at most, plus
  // the roundings), and the accumulator's scale carries no 4^u. At 8 bits nothing changes.
  const char* text = R"(graph pv {
  input %s : f32[1,4,128]
  input %v : f32[1,128,4]
  %p = Softmax(%s) {axis=2} : f32[?]
  %y = MatMul(%p, %v) : f32[?]
  output %y
})";
  auto q16 = realize_all(text, 16);
  ASSERT_TRUE(q16.ok()) << q16.reason();
  const ir::Op& mm = q16.value().op(*q16.value().producer("y.acc"));
  EXPECT_EQ(mm.get_int("operand_shift"), 0);
  EXPECT_EQ(matmul_shift(mm, q16.value().tensor(mm.inputs[0]), q16.value().tensor(mm.inputs[1])),
            0);
  const double s16 = static_cast<double>(static_cast<float>(1.27 / 32767));
  EXPECT_FLOAT_EQ(q16.value().tensor("y.acc").quant->scales[0], static_cast<float>(s16 * s16));
  auto q8 = realize_all(text, 8);
  ASSERT_TRUE(q8.ok()) << q8.reason();
  EXPECT_EQ(q8.value().op(*q8.value().producer("y.acc")).get_int("operand_shift"), -1);
  // An operand_shift above the dtype rule's is refused (-1), as is a negative one other than
  // the default -1 (the rule's 4).
  ir::Op bad = mm;
  bad.attrs["operand_shift"] = std::int64_t{-1};
  EXPECT_EQ(matmul_shift(bad, q16.value().tensor(mm.inputs[0]), q16.value().tensor(mm.inputs[1])),
            4);
  bad.attrs["operand_shift"] = std::int64_t{5};
  EXPECT_EQ(matmul_shift(bad, q16.value().tensor(mm.inputs[0]), q16.value().tensor(mm.inputs[1])),
            -1);
  bad.attrs["operand_shift"] = std::int64_t{-2};
  EXPECT_EQ(matmul_shift(bad, q16.value().tensor(mm.inputs[0]), q16.value().tensor(mm.inputs[1])),
            -1);
}

TEST(RealizeWorkloads, MaskedSoftmaxIsIntegerAndTheLastPlainSoftmaxStaysFloat) {
  auto q = realize_all(R"(graph sm {
  input %x : f32[2,4]
  const %mask : f32[1,4] = [1, 1, 0, 1]
  %p = Softmax(%x, %mask) {axis=1} : f32[?]
  %y = Softmax(%p) {axis=1} : f32[?]
  output %y
})");
  ASSERT_TRUE(q.ok()) << q.reason();
  const ir::Op& masked = q.value().op(*q.value().find_op("p"));
  EXPECT_EQ(q.value().tensor(masked.outputs[0]).dtype, ir::DType::i8);
  EXPECT_EQ(q.value().tensor(masked.inputs[1]).int_values, (std::vector<std::int32_t>{1, 1, 0, 1}));
  const ir::Op& last = q.value().op(*q.value().find_op("y"));
  EXPECT_EQ(q.value().tensor(last.outputs[0]).dtype, ir::DType::f32);
  EXPECT_EQ(q.value().op(*q.value().producer(last.inputs[0])).kind, ir::OpKind::Dequantize);
}

TEST(RealizeWorkloads, AnAxisOutsideAnUninferredShapeIsRefusedNamingTheOp) {
  // Shapes never inferred: %p's shape is unknown, so axis 1 names no dim of it (this read past
  // the shape before, a segfault).
  const ir::Graph g = ir::parse_text(R"(graph sm {
  input %x : f32[2,4]
  const %mask : f32[1,4] = [1, 1, 0, 1]
  %e = Exp(%x) : f32[?]
  %p = Softmax(%e, %mask) {axis=1} : f32[?]
  output %p
})",
                                     "test");
  QuantConfig config;
  auto plan = plan_scales(g, config);  // the op checks run while the scales are planned
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.reason().find("%p (Softmax): axis 1 is outside its input %e of rank 0"),
            std::string::npos)
      << plan.reason();
}

TEST(RealizeWorkloads, SoftmaxParamsTabulateExpOfTheScale) {
  ir::Tensor x, y;
  x.dtype = y.dtype = ir::DType::i8;
  x.quant = ir::QuantParams::per_tensor(0.5f, 0);
  y.quant = ir::QuantParams::per_tensor(1.0f / 128.0f, 0);
  const auto p = softmax_params(x, y);
  EXPECT_EQ(p.exp_low[0], 32768);
  EXPECT_EQ(p.exp_low[2], 12055);  // 2^15 / e = 12054.6
  EXPECT_EQ(p.exp_high[0], 32768);
  EXPECT_EQ(p.exp_high[1], 0);              // 2^15 e^-128
  EXPECT_EQ(p.output.multiplier, 1 << 30);  // 2^-30 * 128 = 2^-23: M = 2^30, r = 53
  EXPECT_EQ(p.output.shift, 53);
}

TEST(RealizeWorkloads, LayerNormParamsByHand) {
  // n = 4, epsilon 0.01, s_x = 0.5: E = 16 * 0.01 / 0.25 = 0.64 -> 1. gamma = [2, -2, 0, 1],
  // s_y = 2^-4: gamma / (2^16 s_y) = gamma * 2^-12 (2^-11: M = 2^30, r = 41; 2^-12: r = 42);
  // beta = [0, 0, 1, 0]: B_2 = 16 (G_2 = 0, r = 0).
  const auto g = test_support::parse_graph(R"(graph ln {
  input %x : i8[1,4]{scale=0.5, zp=0}
  const %gamma : f32[4] = [2, -2, 0, 1]
  const %beta : f32[4] = [0, 0, 1, 0]
  %y = LayerNormalization(%x, %gamma, %beta) {epsilon=0.01} : i8[1,4]{scale=0.0625, zp=0}
  output %y
})");
  const auto p = norm_params(g, g.op(*g.find_op("y")));
  ASSERT_TRUE(p.ok()) << p.reason();
  EXPECT_EQ(p.value().n, 4);
  EXPECT_EQ(p.value().epsilon_term, 1);
  EXPECT_EQ(p.value().affine[0].multiplier, 1 << 30);
  EXPECT_EQ(p.value().affine[0].shift, 41);
  EXPECT_EQ(p.value().affine[1].multiplier, -(1 << 30));
  EXPECT_EQ(p.value().affine[2].multiplier, 0);
  EXPECT_EQ(p.value().affine[2].shift, 0);
  EXPECT_EQ(p.value().affine[2].bias, 16);
  EXPECT_EQ(p.value().affine[3].shift, 42);
}

TEST(RealizeWorkloads, QJsonListsTheDerivedIntegersOfEveryNewOp) {
  const auto g = test_support::parse_graph(R"(graph j {
  input %x : f32[2,4]
  const %mask : f32[1,4] = [1, 1, 0, 1]
  const %gamma : f32[4] = [1, 1, 1, 1]
  %s = Sigmoid(%x) : f32[?]
  %p = Softmax(%s, %mask) {axis=1} : f32[?]
  %n = LayerNormalization(%p, %gamma) : f32[?]
  %m = Mul(%n, %x) : f32[?]
  %y = ReduceMean(%m) {axes=[1], keepdims=1} : f32[?]
  output %y
})");
  const QuantConfig config;
  const auto plan = plan_scales(g, config).value();
  std::map<std::string, double> t;
  for (const auto& name : plan.observed) t[name] = 1.27;
  const auto thresholds = class_thresholds(plan, t, config).value();
  const auto q = realize(g, plan, thresholds);
  ASSERT_TRUE(q.ok()) << q.reason();
  const auto j = scales_json(q.value(), config, plan, thresholds);
  std::map<std::string, nlohmann::json> ops;
  for (const auto& e : j["ops"]) ops[e["op"].get<std::string>()] = e;
  EXPECT_EQ(ops.at("s")["table"].size(), 256u);
  EXPECT_EQ(ops.at("s")["table"][128], 50);  // sigmoid(0) / 0.01
  EXPECT_EQ(ops.at("p")["exp_low"][0], 32768);
  EXPECT_EQ(ops.at("p")["exp_high"].size(), 256u);
  EXPECT_EQ(ops.at("n")["elements"], 4);
  EXPECT_EQ(ops.at("n")["multiplier"].size(), 4u);
  // s_n * s_x / s_m = the float 0.01 = 10737418 * 2^-30: M = 10737418 * 2^7, r = 37.
  EXPECT_EQ(ops.at("m")["multiplier"], 1374389504);
  EXPECT_EQ(ops.at("m")["shift"], 37);
  EXPECT_EQ(ops.at("y")["reduced_elements"], 4);
}

TEST(RealizeWorkloads, RefusalsNameTheNode) {
  const auto refused = [](const std::string& text, const std::string& expected) {
    auto q = realize_all(text);
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.reason().find(expected), std::string::npos) << q.reason();
  };
  refused(R"(graph d {
  input %x : f32[2]
  input %z : f32[2]
  %y = Div(%x, %z) : f32[?]
  output %y
})",
          "%y (Div): input %z must be a constant");
  refused(R"(graph p {
  input %x : f32[2]
  const %e : f32[2] = [2, 3]
  %y = Pow(%x, %e) : f32[?]
  output %y
})",
          "%y (Pow): the exponent %e must be a constant scalar");
  refused(R"(graph z {
  input %x : f32[2]
  const %c : f32[2] = [2, 0]
  %y = Div(%x, %c) : f32[?]
  output %y
})",
          "%y (Div): the divisor %c holds a zero");
  std::string ones = "1";
  for (int k = 1; k < 16385; ++k) ones += ", 1";
  refused("graph n {\n  input %x : f32[1,16385]\n  const %g : f32[16385] = [" + ones +
              "]\n  %y = RMSNormalization(%x, %g) : f32[?]\n  output %y\n}",
          "%y (RMSNormalization): rows of 16385 elements");
  refused(R"(graph w {
  input %x : f32[2]
  input %c : f32[2]
  %y = Where(%c, %x, %x) : f32[?]
  output %y
})",
          "%y (Where): input %c must be a constant");
}

}  // namespace
}  // namespace tessel::quant
