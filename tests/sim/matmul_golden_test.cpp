// ISA matmul against the golden integer executor (compiler/targets/cpu): MatMul of two
// activations, then Requantize, on the simulator and on the executor, bit for bit. Q x K^T is
// the executor's MatMul(a, Transpose(k)) and the simulator's matmul with transpose_b reading the
// stored [N][K] operand as it is; 8-bit and 16-bit operands (the operand shift u), k and n that
// are not whole blocks of the 4 x 4 array, the types' extremes among seeded codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/realize.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "configs/hw_config.hpp"
#include "sim/simulator.hpp"
#include "support/int_nonlinear.hpp"
#include "support/seeded.hpp"

namespace tessel::sim {
namespace {

const std::string kMicro = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml";

struct Case {
  std::int64_t m, k, n;
  int bits;
  bool transpose_b;
};

/// Seeded codes of `bits`, the first ones the extremes (qmin, qmax, 0, qmin + 1, -1).
std::vector<std::int32_t> codes(std::int64_t count, int bits, std::uint64_t seed) {
  const std::int32_t lo = intops::qmin(bits), hi = intops::qmax(bits);
  const std::int32_t extremes[] = {lo, hi, 0, lo + 1, -1};
  std::vector<std::int32_t> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = i < 5 ? extremes[i]
                 : std::clamp(lo + static_cast<std::int32_t>(seeded_uniform(seed, i) *
                                                             (double(hi) - lo + 1.0)),
                              lo, hi);
  return v;
}

cpu::TensorData tensor(int bits, const ir::Shape& shape, const std::vector<std::int32_t>& v) {
  cpu::TensorData t(bits == 8 ? ir::DType::i8 : ir::DType::i16, shape);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (bits == 8) t.data<std::int8_t>()[i] = static_cast<std::int8_t>(v[i]);
    if (bits == 16) t.data<std::int16_t>()[i] = static_cast<std::int16_t>(v[i]);
  }
  return t;
}

/// The golden graph: y = Requantize(MatMul(a, b)), b = Transpose(k) when transposed.
ir::Graph golden_graph(const Case& c) {
  const std::string t = c.bits == 8 ? "i8" : "i16";
  const std::string m = std::to_string(c.m), k = std::to_string(c.k), n = std::to_string(c.n);
  const int u = intops::matmul_operand_shift(c.bits, c.bits, c.k);
  const double acc_scale = 0.02 * 0.03 * double(1 << (2 * u));
  std::string text = "graph mm {\n  input %a : " + t + "[" + m + "," + k + "]{scale=0.02, zp=0}\n";
  if (c.transpose_b) {
    text += "  input %b : " + t + "[" + n + "," + k + "]{scale=0.03, zp=0}\n";
    text += "  %bt = Transpose(%b) {perm=1,0} : " + t + "[" + k + "," + n + "]{scale=0.03, zp=0}\n";
  } else {
    text += "  input %b : " + t + "[" + k + "," + n + "]{scale=0.03, zp=0}\n";
  }
  text += "  %acc = MatMul(%a, " + std::string(c.transpose_b ? "%bt" : "%b") + ") : i32[" + m +
          "," + n + "]{scale=" + std::to_string(acc_scale) + ", zp=0}\n";
  // y's scale puts typical sums inside the type (16-bit operands keep 16 - u bits each).
  text += "  %y = Requantize(%acc) : " + t + "[" + m + "," + n +
          "]{scale=" + (c.bits == 8 ? "0.05" : "100") + ", zp=0}\n";
  text += "  output %y\n}";
  ir::Graph g = ir::parse_text(text, "matmul_golden");
  EXPECT_TRUE(ir::infer_all_shapes(g).ok());
  return g;
}

isa::Word word_of(const isa::Instruction& instruction) {
  auto word = isa::encode(instruction);
  EXPECT_TRUE(word.ok()) << word.reason();
  return word.value();
}

/// load a and the stored b (one run), matmul, vcfg, requant, store, finish: the codes of y.
std::vector<std::int32_t> simulated(const Case& c, const std::vector<std::int32_t>& a,
                                    const std::vector<std::int32_t>& b, int u,
                                    const intops::Requant& q) {
  HwConfig config = load_hw_config(kMicro);
  config.matrix.input_bits = config.matrix.weight_bits = c.bits;
  const isa::Elem elem = c.bits == 8 ? isa::Elem::kI8 : isa::Elem::kI16;
  const std::uint32_t e = static_cast<std::uint32_t>(c.bits / 8);
  const auto a_elements = static_cast<std::uint32_t>(a.size());
  DramImage image;
  image.size_bytes = 1 << 16;
  image.bytes.assign(image.size_bytes, 0);
  std::vector<std::int32_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  for (std::size_t i = 0; i < both.size(); ++i)
    std::memcpy(image.bytes.data() + 0x1000 + i * e, &both[i], e);  // little-endian low bytes

  isa::Load load;
  load.elem = elem;
  load.dram_addr = 0x1000;
  load.c_size = static_cast<std::uint32_t>(both.size());
  load.push_next = true;
  isa::Matmul mm;
  mm.acc_sp = 2;
  mm.elem = elem;
  mm.transpose_b = c.transpose_b;
  mm.b_addr = a_elements * e;
  mm.m_size = static_cast<std::uint32_t>(c.m);
  mm.n_size = static_cast<std::uint32_t>(c.n);
  mm.k_size = static_cast<std::uint32_t>(c.k);
  mm.a_stride = static_cast<std::uint32_t>(c.k);
  mm.b_stride = static_cast<std::uint32_t>(c.transpose_b ? c.k : c.n);
  mm.acc_stride = static_cast<std::uint32_t>(c.n);
  mm.operand_shift = static_cast<std::uint32_t>(u);
  mm.pop_prev = true;
  isa::Vcfg vcfg;
  vcfg.mult_a = static_cast<std::uint32_t>(q.multiplier);
  vcfg.shift = static_cast<std::uint32_t>(q.shift);
  vcfg.lo = q.lo;
  vcfg.hi = q.hi;
  isa::Requant requant;
  requant.src_sp = 2;
  requant.dst_elem = elem;
  requant.dst_addr = 0xc00;
  requant.y_size = mm.m_size;
  requant.c_size = mm.n_size;
  requant.src_stride_y = requant.dst_stride_y = mm.n_size;
  requant.push_next = true;
  isa::Store store;
  store.elem = elem;
  store.kind = isa::Traffic::kOutputs;
  store.sram_addr = 0xc00;
  store.dram_addr = 0x8000;
  store.c_size = static_cast<std::uint32_t>(c.m * c.n);
  store.pop_prev = store.push_prev = true;
  isa::Finish finish;
  finish.pop_next = true;
  auto result = simulate(config,
                         std::vector<isa::Word>{word_of(load), word_of(mm), word_of(vcfg),
                                                word_of(requant), word_of(store), word_of(finish)},
                         std::move(image), SimOptions{});
  EXPECT_TRUE(result.ok()) << result.reason();
  if (!result.ok()) return {};
  EXPECT_FALSE(result.value().report.fault.has_value()) << result.value().report.fault->str();
  std::vector<std::int32_t> y(static_cast<std::size_t>(c.m * c.n));
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::uint8_t* p = result.value().dram.data() + 0x8000 + i * e;
    y[i] = e == 1 ? static_cast<std::int8_t>(p[0])
                  : static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | p[1] << 8));
  }
  return y;
}

TEST(SimMatmulGolden, MatmulThenRequantEqualsTheGoldenExecutorBitForBit) {
  const Case cases[] = {{5, 7, 9, 8, true},  {6, 9, 5, 8, false},  {3, 4, 4, 8, true},
                        {1, 1, 1, 8, false}, {7, 13, 6, 16, true}, {4, 64, 3, 16, false}};
  std::uint64_t seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE("m " + std::to_string(c.m) + " k " + std::to_string(c.k) + " n " +
                 std::to_string(c.n) + " bits " + std::to_string(c.bits) +
                 (c.transpose_b ? " transposed" : " row-major"));
    const ir::Graph g = golden_graph(c);
    const auto a = codes(c.m * c.k, c.bits, seed++);
    const auto b = codes(c.k * c.n, c.bits, seed++);
    const int u = quant::matmul_shift(g.op(*g.producer("acc")), g.tensor("a"),
                                      g.tensor(c.transpose_b ? "bt" : "b"));
    EXPECT_EQ(u, intops::matmul_operand_shift(c.bits, c.bits, c.k));
    const auto q = quant::requantize_params(g.tensor("acc"), g.tensor("y"));
    ASSERT_EQ(q.size(), 1u);
    cpu::Executor executor(g);
    auto out = executor.run(
        {{"a", tensor(c.bits, {c.m, c.k}, a)},
         {"b", tensor(c.bits, c.transpose_b ? ir::Shape{c.n, c.k} : ir::Shape{c.k, c.n}, b)}});
    ASSERT_TRUE(out.ok()) << out.reason();
    const std::vector<std::int32_t> golden = out.value().at("y").to_i32();
    const std::vector<std::int32_t> sim = simulated(c, a, b, u, q[0]);
    EXPECT_EQ(sim, golden);
    // Not a constant answer: the outputs spread over the type's range (1 x 1: -128 x -128).
    if (golden.size() > 1) {
      EXPECT_GT(*std::max_element(golden.begin(), golden.end()),
                *std::min_element(golden.begin(), golden.end()));
    }
  }
}

}  // namespace
}  // namespace tessel::sim
