// The vectorised integer kernels of the modern-workload ops (oneDNN / gemm_s8 MatMul, broadcast
// Add/Sub/Mul runs, table lookups, softmax and layer-norm rows) against the scalar rules of
// support/int_ops.hpp and support/int_nonlinear.hpp, evaluated here element by element: odd
// sizes, the types' extremes, seeded codes, 8 and 16 bits. ctest runs this suite twice, the
// second time with TESSEL_CPU_NO_ONEDNN_INT8=1 (the gemm_s8 MatMul of CPUs without VNNI).
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/shape_rules.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "support/int_nonlinear.hpp"
#include "support/seeded.hpp"
#include "tests/support/int_tensor.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::cpu {
namespace {

std::string dims(const ir::Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out;
}

std::string list(const std::vector<std::int32_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

/// Seeded codes of `bits`, the first ones the extremes (qmin, qmax, 0, qmin + 1, -1).
std::vector<std::int32_t> codes(std::int64_t n, int bits, std::uint64_t seed) {
  const std::int32_t lo = intops::qmin(bits), hi = intops::qmax(bits);
  const std::int32_t extremes[] = {lo, hi, 0, lo + 1, -1};
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = i < 5 ? extremes[i]
                 : lo + static_cast<std::int32_t>(seeded_uniform(seed, i) * (hi - lo + 1.0));
  for (auto& x : v) x = std::clamp(x, lo, hi);
  return v;
}

std::vector<std::int32_t> run(const ir::Graph& g, const std::map<std::string, TensorData>& in) {
  Executor executor(g);
  auto out = executor.run(in);
  EXPECT_TRUE(out.ok()) << out.reason();
  return out.ok() ? out.value().at("y").to_i32() : std::vector<std::int32_t>{};
}

// --- MatMul ----------------------------------------------------------------------------------

/// y = a x b by the definition (int64 sums of codes, batch dims broadcast), for 8-bit operands.
std::vector<std::int32_t> matmul_by_definition(const std::vector<std::int32_t>& a,
                                               const ir::Shape& as,
                                               const std::vector<std::int32_t>& b,
                                               const ir::Shape& bs, const ir::Shape& ys) {
  const std::int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const ir::Shape yb(ys.begin(), ys.end() - 2);
  const auto sa = ir::broadcast_strides(ir::Shape(as.begin(), as.end() - 2), yb);
  const auto sb = ir::broadcast_strides(ir::Shape(bs.begin(), bs.end() - 2), yb);
  const std::int64_t batches = ir::element_count(yb);
  std::vector<std::int32_t> y;
  for (std::int64_t t = 0; t < batches; ++t) {
    std::int64_t ao = 0, bo = 0, rest = t;
    for (std::size_t d = yb.size(); d-- > 0;) {
      ao += (rest % yb[d]) * sa[d];
      bo += (rest % yb[d]) * sb[d];
      rest /= yb[d];
    }
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n) {
        std::int64_t sum = 0;
        for (std::int64_t k = 0; k < K; ++k)
          sum += std::int64_t{a[static_cast<std::size_t>(ao * M * K + m * K + k)]} *
                 b[static_cast<std::size_t>(bo * K * N + k * N + n)];
        y.push_back(static_cast<std::int32_t>(sum));
      }
  }
  return y;
}

void expect_matmul(const ir::Shape& as, const ir::Shape& bs, const ir::Shape& ys,
                   std::vector<std::int32_t> a, std::vector<std::int32_t> b) {
  const auto g = test_support::parse_graph("graph mm {\n  input %a : i8[" + dims(as) +
                                           "]{scale=1, zp=0}\n" + "  input %b : i8[" + dims(bs) +
                                           "]{scale=1, zp=0}\n" + "  %y = MatMul(%a, %b) : i32[" +
                                           dims(ys) + "]{scale=1, zp=0}\n" + "  output %y\n}");
  const auto got = run(g, {{"a", test_support::int_tensor(ir::DType::i8, as, a)},
                           {"b", test_support::int_tensor(ir::DType::i8, bs, b)}});
  EXPECT_EQ(got, matmul_by_definition(a, as, b, bs, ys));
}

TEST(IntegerFastKernels, MatMulOfSeededCodesAtOddSizes) {
  // Folded batch (a's batch into rows), a strided batch, and a broadcast batch (per-batch loop).
  for (const auto& [as, bs, ys] : std::vector<std::array<ir::Shape, 3>>{
           {ir::Shape{3, 17, 33}, ir::Shape{33, 7}, ir::Shape{3, 17, 7}},
           {ir::Shape{2, 3, 5, 37}, ir::Shape{2, 3, 37, 19}, ir::Shape{2, 3, 5, 19}},
           {ir::Shape{2, 1, 5, 9}, ir::Shape{1, 3, 9, 4}, ir::Shape{2, 3, 5, 4}},
           {ir::Shape{1, 1}, ir::Shape{1, 1}, ir::Shape{1, 1}}})
    expect_matmul(as, bs, ys, codes(ir::element_count(as), 8, 1),
                  codes(ir::element_count(bs), 8, 2));
}

TEST(IntegerFastKernels, MatMulAtTheExtremesOfInt8) {
  // K = 3072 (BERT's FFN): (-128)(-128) K = 50331648 and 127 * (-128) K, exactly; a
  // saturating int16 pair sum (vpmaddubsw) or a lost compensation would show here.
  const std::int64_t K = 3072;
  std::vector<std::int32_t> a(2 * K), b(K * 3);
  for (std::int64_t k = 0; k < K; ++k) {
    a[static_cast<std::size_t>(k)] = -128;
    a[static_cast<std::size_t>(K + k)] = 127;
    b[static_cast<std::size_t>(k * 3)] = -128;
    b[static_cast<std::size_t>(k * 3 + 1)] = 127;
    b[static_cast<std::size_t>(k * 3 + 2)] = k % 2 ? -128 : 127;
  }
  expect_matmul({2, K}, {K, 3}, {2, 3}, a, b);
  EXPECT_EQ(matmul_by_definition(a, {2, K}, b, {K, 3}, {2, 3}),
            (std::vector<std::int32_t>{50331648, -49938432, 196608, -49938432, 49548288, -195072}));
}

TEST(IntegerFastKernels, Int8GemmWithBiasMatchesTheDefinition) {
  // The built-in int8 Gemm (constant weights [N, K] with transB, an i32 bias) through
  // gemm_s8_exact: y = a x w^T + bias, int64 by hand. 5 x 37 by 11 outputs.
  const std::int64_t M = 5, K = 37, N = 11;
  const auto av = codes(M * K, 8, 41), wv = codes(N * K, 8, 42);
  std::vector<std::int32_t> bias(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) bias[static_cast<std::size_t>(n)] = (n - 5) * 100003;
  const auto g = test_support::parse_graph(
      "graph gq {\n  input %a : i8[5,37]{scale=1, zp=0}\n  const %w : i8[11,37]"
      "{scale=1, zp=0} ints [" +
      list(wv) +
      "]\n  const %c : i32[11]{scale=1, "
      "zp=0} ints [" +
      list(bias) +
      "]\n  %y = Gemm(%a, %w, %c) {transB=1} : "
      "i32[5,11]{scale=1, zp=0}\n  output %y\n}");
  std::vector<std::int32_t> want;
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      std::int64_t sum = bias[static_cast<std::size_t>(n)];
      for (std::int64_t k = 0; k < K; ++k)
        sum += std::int64_t{av[static_cast<std::size_t>(m * K + k)]} *
               wv[static_cast<std::size_t>(n * K + k)];
      want.push_back(static_cast<std::int32_t>(sum));
    }
  EXPECT_EQ(run(g, {{"a", test_support::int_tensor(ir::DType::i8, {M, K}, av)}}), want);
}

TEST(IntegerFastKernels, FloatMatMulIsThePlainDoubleLoopBitForBit) {
  // The blocked float kernel (4-row blocks, 256-column tiles, threads) against the definition:
  // a double sum per element in k order, one rounding per multiply and add, rounded to float.
  // 7 rows (a partial block), 300 columns (a partial tile), a broadcast batch.
  const ir::Shape as = {2, 7, 33}, bs = {33, 300}, ys = {2, 7, 300};
  const auto av = seeded_normal_values(ir::element_count(as), 31);
  const auto bv = seeded_normal_values(ir::element_count(bs), 32);
  const auto g = test_support::parse_graph(
      "graph mmf {\n  input %a : f32[2,7,33]\n  input %b : f32[33,300]\n"
      "  %y = MatMul(%a, %b) : f32[2,7,300]\n  output %y\n}");
  Executor executor(g);
  auto out =
      executor.run({{"a", TensorData::from_f32(as, av)}, {"b", TensorData::from_f32(bs, bv)}});
  ASSERT_TRUE(out.ok()) << out.reason();
  const float* got = out.value().at("y").data<float>();
  for (std::int64_t m = 0; m < 14; ++m)
    for (std::int64_t n = 0; n < 300; ++n) {
      double sum = 0.0;
      for (std::int64_t k = 0; k < 33; ++k) {
        const double product = double{av[static_cast<std::size_t>(m * 33 + k)]} *
                               bv[static_cast<std::size_t>(k * 300 + n)];
        sum = sum + product;
      }
      ASSERT_EQ(got[m * 300 + n], static_cast<float>(sum)) << m << ", " << n;
    }
}

TEST(IntegerFastKernels, FloatGemmIsThePlainFloatLoopBitForBit) {
  // gemm_f32's vectorised row blocks against the definition: a float sum per element from 0 in
  // k order (one rounding per multiply and add). 9 rows, 600 columns (two column tiles), transB.
  const ir::Shape as = {9, 20}, bs = {600, 20};
  const auto av = seeded_normal_values(ir::element_count(as), 33);
  const auto bv = seeded_normal_values(ir::element_count(bs), 34);
  const auto g = test_support::parse_graph(
      "graph gf {\n  input %a : f32[9,20]\n  input %b : f32[600,20]\n"
      "  %y = Gemm(%a, %b) {transB=1} : "
      "f32[9,600]\n  output %y\n}");
  Executor executor(g);
  auto out =
      executor.run({{"a", TensorData::from_f32(as, av)}, {"b", TensorData::from_f32(bs, bv)}});
  ASSERT_TRUE(out.ok()) << out.reason();
  const float* got = out.value().at("y").data<float>();
  for (std::int64_t m = 0; m < 9; ++m)
    for (std::int64_t n = 0; n < 600; ++n) {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < 20; ++k) {
        const float product =
            av[static_cast<std::size_t>(m * 20 + k)] * bv[static_cast<std::size_t>(n * 20 + k)];
        sum = sum + product;
      }
      ASSERT_EQ(got[m * 600 + n], sum) << m << ", " << n;
    }
}

// --- broadcast Add / Sub / Mul ---------------------------------------------------------------

struct BinaryCase {
  std::string kind;
  ir::Shape a, b;
};

void expect_binary(const BinaryCase& c, ir::DType dtype) {
  const int bits = dtype == ir::DType::i8 ? 8 : 16;
  const std::string t = dtype == ir::DType::i8 ? "i8" : "i16";
  const ir::Shape ys = ir::broadcast_shapes(c.a, c.b).value();
  const auto bv = codes(ir::element_count(c.b), bits, 5);
  const auto g = test_support::parse_graph("graph bin {\n  input %a : " + t + "[" + dims(c.a) +
                                           "]{scale=0.5, zp=0}\n" + "  const %b : " + t + "[" +
                                           dims(c.b) + "]{scale=0.3, zp=0} ints [" + list(bv) +
                                           "]\n  %y = " + c.kind + "(%a, %b) : " + t + "[" +
                                           dims(ys) + "]{scale=0.7, zp=0}\n  output %y\n}");
  const auto av = codes(ir::element_count(c.a), bits, 4);
  const auto got = run(g, {{"a", test_support::int_tensor(dtype, c.a, av)}});
  const auto& ta = g.tensor("a");
  const auto& tb = g.tensor("b");
  const auto& ty = g.tensor("y");
  std::vector<std::int32_t> want(static_cast<std::size_t>(ir::element_count(ys)));
  const auto sa = ir::broadcast_strides(c.a, ys), sb = ir::broadcast_strides(c.b, ys);
  for (std::int64_t i = 0; i < ir::element_count(ys); ++i) {
    std::int64_t oa = 0, ob = 0, rest = i;
    for (std::size_t d = ys.size(); d-- > 0;) {
      oa += (rest % ys[d]) * sa[d];
      ob += (rest % ys[d]) * sb[d];
      rest /= ys[d];
    }
    const std::int32_t x = av[static_cast<std::size_t>(oa)], z = bv[static_cast<std::size_t>(ob)];
    std::int32_t v = 0;
    if (c.kind == "Add") v = intops::add_requantize(x, z, quant::add_params(ta, tb, ty));
    if (c.kind == "Sub") v = intops::sub_requantize(x, z, quant::add_params(ta, tb, ty));
    if (c.kind == "Mul") v = intops::mul_requantize(x, z, quant::mul_params(ta, tb, ty));
    want[static_cast<std::size_t>(i)] = v;
  }
  EXPECT_EQ(got, want) << c.kind << " " << t << " [" << dims(c.a) << "] with [" << dims(c.b) << "]";
}

TEST(IntegerFastKernels, BroadcastBinaryOpsMatchTheScalarRules) {
  // Same shape (one run), a row (bias), a column (step 0 in the runs), a scalar, and an operand
  // broadcast on both sides.
  const std::vector<std::pair<ir::Shape, ir::Shape>> shapes = {{{3, 7}, {3, 7}},
                                                               {{2, 3, 37}, {37}},
                                                               {{2, 5, 3}, {5, 1}},
                                                               {{4, 9}, {1}},
                                                               {{5, 1, 3}, {1, 4, 3}}};
  for (const char* kind : {"Add", "Sub", "Mul"})
    for (const auto& [a, b] : shapes)
      for (const auto dtype : {ir::DType::i8, ir::DType::i16}) expect_binary({kind, a, b}, dtype);
}

// --- table lookups ---------------------------------------------------------------------------

void expect_table(ir::DType in, ir::DType out) {
  const int in_bits = in == ir::DType::i8 ? 8 : 16, out_bits = out == ir::DType::i8 ? 8 : 16;
  const std::string ti = in_bits == 8 ? "i8" : "i16", to = out_bits == 8 ? "i8" : "i16";
  // A table with the output's extremes and entries outside it (a 16-bit lookup clamps them).
  const int entries = intops::table_entries(in_bits);
  std::vector<std::int32_t> table = codes(entries, out_bits, 9);
  if (in_bits == 16)
    table[7] = intops::qmax(out_bits) + 1000, table[9] = intops::qmin(out_bits) - 5;
  const ir::Shape shape = {3, 4099};
  auto g = test_support::parse_graph(
      "graph tab {\n  input %x : " + ti + "[" + dims(shape) +
      "]{scale=0.1, zp=0}\n  const %t : i32[" + std::to_string(entries) + "] ints [" + list(table) +
      "]\n  %y = Tanh(%x, %t) : " + to + "[" + dims(shape) + "]{scale=0.01, zp=0}\n  output %y\n}");
  g.tensor_mut("y").dtype = out;  // shape inference gives a unary op its input's dtype
  const auto xv = codes(ir::element_count(shape), in_bits, 8);
  std::vector<std::int32_t> want;
  for (const auto x : xv)
    want.push_back(intops::table_lookup(table.data(), entries, x, intops::qmin(out_bits),
                                        intops::qmax(out_bits)));
  const auto got = run(g, {{"x", test_support::int_tensor(in, shape, xv)}});
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << ti << " -> " << to << " at " << i << ": x = " << xv[i];
}

TEST(IntegerFastKernels, TableLookupsMatchTheScalarRule) {
  for (const auto in : {ir::DType::i8, ir::DType::i16})
    for (const auto out : {ir::DType::i8, ir::DType::i16}) expect_table(in, out);
}

// --- softmax and layer norm ------------------------------------------------------------------

void expect_softmax(ir::DType dtype, std::int64_t rows, std::int64_t len, bool masked) {
  const int bits = dtype == ir::DType::i8 ? 8 : 16;
  const std::string t = bits == 8 ? "i8" : "i16";
  // The mask: a causal pattern broadcast over the leading dim, one row masked whole.
  std::vector<std::int32_t> mask(static_cast<std::size_t>(rows * len));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < len; ++j)
      mask[static_cast<std::size_t>(r * len + j)] = r != 1 && j <= r + 2 ? 1 : 0;
  const ir::Shape shape = {2, rows, len};
  const std::string mask_decl =
      masked ? "  const %keep : i8[" + dims({rows, len}) + "] ints [" + list(mask) + "]\n" : "";
  const auto g = test_support::parse_graph(
      "graph sm {\n  input %x : " + t + "[" + dims(shape) +
      "]{scale=" + (bits == 8 ? "0.09" : "0.0007") + ", zp=0}\n" + mask_decl + "  %y = Softmax(%x" +
      (masked ? ", %keep" : "") + ") {axis=-1} : " + t + "[" + dims(shape) +
      "]{scale=" + (bits == 8 ? "0.005" : "0.00002") + ", zp=0}\n  output %y\n}");
  const auto xv = codes(ir::element_count(shape), bits, 11);
  const auto p = quant::softmax_params(g.tensor("x"), g.tensor("y"));
  std::vector<std::int32_t> want(xv.size());
  std::vector<std::uint8_t> keep(static_cast<std::size_t>(len));
  for (std::int64_t r = 0; r < 2 * rows; ++r) {
    for (std::int64_t j = 0; j < len; ++j)
      keep[static_cast<std::size_t>(j)] =
          masked ? static_cast<std::uint8_t>(mask[static_cast<std::size_t>((r % rows) * len + j)])
                 : 1;
    intops::softmax_row(xv.data() + r * len, keep.data(), len, p, want.data() + r * len);
  }
  EXPECT_EQ(run(g, {{"x", test_support::int_tensor(dtype, shape, xv)}}), want)
      << t << " rows " << rows << " len " << len << (masked ? " masked" : "");
}

TEST(IntegerFastKernels, SoftmaxRowsMatchTheScalarRow) {
  for (const auto dtype : {ir::DType::i8, ir::DType::i16})
    for (const bool masked : {false, true}) {
      expect_softmax(dtype, 3, 1, masked);
      expect_softmax(dtype, 4, 7, masked);
      expect_softmax(dtype, 5, 130, masked);
    }
}

void expect_layernorm(ir::DType dtype, std::int64_t n, bool centre) {
  const int bits = dtype == ir::DType::i8 ? 8 : 16;
  const std::string t = bits == 8 ? "i8" : "i16";
  std::string gamma, beta;
  for (std::int64_t k = 0; k < n; ++k) {
    // Signs, zero and large gammas; betas up to saturation.
    const double gk = k == 1 ? 0.0 : (k % 3 == 0 ? -1.0 : 1.0) * (0.2 + seeded_uniform(21, k));
    gamma += (k ? ", " : "") + std::to_string(gk);
    beta += (k ? ", " : "") + std::to_string(k == 2 ? 3.0 : seeded_uniform(22, k) - 0.5);
  }
  const ir::Shape shape = {4, n};
  const std::string kind = centre ? "LayerNormalization" : "RMSNormalization";
  const auto g = test_support::parse_graph(
      "graph ln {\n  input %x : " + t + "[" + dims(shape) +
      "]{scale=0.05, zp=0}\n  const %gamma : f32[" + std::to_string(n) + "] = [" + gamma + "]\n" +
      (centre ? "  const %beta : f32[" + std::to_string(n) + "] = [" + beta + "]\n"
              : std::string()) +
      "  %y = " + kind + "(%x, %gamma" + (centre ? ", %beta" : "") +
      ") {axis=-1, epsilon=0.00001} : " + t + "[" + dims(shape) +
      "]{scale=" + (bits == 8 ? "0.02" : "0.0001") + ", zp=0}\n  output %y\n}");
  auto xv = codes(ir::element_count(shape), bits, 23);
  for (std::int64_t k = 0; k < n; ++k) xv[static_cast<std::size_t>(2 * n + k)] = 7;  // W = E
  for (std::int64_t k = 0; k < n; ++k)  // the widest row: alternating extremes
    xv[static_cast<std::size_t>(3 * n + k)] = k % 2 ? intops::qmax(bits) : intops::qmin(bits);
  auto p = quant::norm_params(g, g.op(g.producer("y").value()));
  ASSERT_TRUE(p.ok()) << p.reason();
  std::vector<std::int32_t> want(xv.size());
  for (std::int64_t r = 0; r < 4; ++r)
    intops::norm_row(xv.data() + r * n, n, p.value().centre, p.value().epsilon_term,
                     p.value().affine.data(), p.value().lo, p.value().hi, want.data() + r * n);
  EXPECT_EQ(run(g, {{"x", test_support::int_tensor(dtype, shape, xv)}}), want)
      << kind << " " << t << " n " << n;
}

TEST(IntegerFastKernels, NormRowsMatchTheScalarRow) {
  for (const auto dtype : {ir::DType::i8, ir::DType::i16})
    for (const bool centre : {true, false})
      for (const std::int64_t n : {1, 5, 33, 768}) expect_layernorm(dtype, n, centre);
}

}  // namespace
}  // namespace tessel::cpu
