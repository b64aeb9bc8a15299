// The row normaliser (ISA softmax, norm) against the golden integer executor: one quantized
// Softmax (causal mask), LayerNorm or RMSNorm op runs on the CPU executor; the same codes, with
// the tables and parameters the quantizer derives for that op (compiler/quant/workload_params),
// run as a program on the simulator; the outputs must be equal byte for byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/shape_inference.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/quant/workload_params.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "configs/hw_config.hpp"
#include "isa/assembler.hpp"
#include "isa/program.hpp"
#include "sim/simulator.hpp"
#include "support/int_nonlinear.hpp"
#include "support/seeded.hpp"
#include "tests/support/int_tensor.hpp"
#include "tests/support/ir_text.hpp"

namespace tessel::sim {
namespace {

const std::string kMicro = std::string(TESSEL_SOURCE_DIR) + "/tests/isa/programs/micro.yaml";
constexpr std::uint64_t kIn = 0x1000, kParams = 0x2000, kOut = 0x4000;

/// Seeded codes of `bits` bits, with one row of the type's extremes.
std::vector<std::int32_t> codes(std::int64_t rows, std::int64_t n, int bits, std::uint64_t seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(rows * n));
  const double span = bits == 8 ? 255.0 : 65535.0;
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<std::int32_t>(seeded_uniform(seed, i) * span) + intops::qmin(bits);
  for (std::int64_t k = 0; k < n; ++k)
    v[static_cast<std::size_t>(k)] = k % 2 ? intops::qmax(bits) : intops::qmin(bits);
  return v;
}

void put(std::vector<std::uint8_t>& bytes, std::uint64_t at, std::int64_t v, int width) {
  for (int b = 0; b < width; ++b)
    bytes[at + static_cast<std::uint64_t>(b)] = static_cast<std::uint8_t>(v >> (8 * b));
}

/// Loads `param_bytes` at kParams into wgt and the rows at kIn into act, sets vcfg, runs `op`
/// (src act 0, dst act 0x800, table/params wgt 0), stores the result at kOut; returns the
/// codes read back.
std::vector<std::int32_t> simulate_rows(std::vector<std::uint8_t> image, int bits,
                                        std::int64_t rows, std::int64_t n, std::int64_t param_bytes,
                                        const std::string& vcfg, const std::string& op) {
  const int e = bits / 8;
  const std::string t = bits == 8 ? "i8" : "i16";
  const std::string total = std::to_string(rows * n * e);
  const std::string text =
      "load sp=1 kind=weights elem=i8 sram_addr=0x0 dram_addr=" + std::to_string(kParams) +
      " y_size=1 x_size=1 c_size=" + std::to_string(param_bytes) +
      " push_next=1\n"
      "load sp=0 kind=activations elem=i8 sram_addr=0x0 dram_addr=" +
      std::to_string(kIn) + " y_size=1 x_size=1 c_size=" + total + " push_next=1\n" + vcfg +
      " pop_prev=1\n" + op + " src_sp=0 dst_sp=0 elem=" + t + " dst_elem=" + t +
      " src_addr=0x0 dst_addr=0x800 y_size=1 x_size=" + std::to_string(rows) +
      " c_size=" + std::to_string(n) + " src_stride_y=0 src_stride_x=" + std::to_string(n) +
      " dst_stride_y=0 dst_stride_x=" + std::to_string(n) +
      " pop_prev=1 push_next=1\n"
      "store sp=0 kind=outputs elem=i8 sram_addr=0x800 dram_addr=" +
      std::to_string(kOut) + " y_size=1 x_size=1 c_size=" + total +
      " pop_prev=1 push_prev=1\nfinish pop_next=1\n";
  const auto program = isa::assemble(text, "golden.tasm");
  std::vector<isa::Word> words;
  for (const auto& instruction : program.instructions)
    words.push_back(isa::encode(instruction).value());
  DramImage dram;
  dram.size_bytes = image.size();
  dram.bytes = std::move(image);
  auto result = simulate(load_hw_config(kMicro), words, std::move(dram));
  EXPECT_TRUE(result.ok()) << result.reason();
  if (!result.ok()) return {};
  EXPECT_FALSE(result.value().report.fault) << result.value().report.fault->str();
  std::vector<std::int32_t> out(static_cast<std::size_t>(rows * n));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint8_t* p = result.value().dram.data() + kOut + i * static_cast<std::size_t>(e);
    out[i] = e == 1 ? static_cast<std::int8_t>(p[0])
                    : static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
  }
  return out;
}

std::vector<std::uint8_t> image_with(const std::vector<std::int32_t>& x, int bits) {
  std::vector<std::uint8_t> image(1 << 16, 0);
  for (std::size_t i = 0; i < x.size(); ++i) put(image, kIn + i * (bits / 8), x[i], bits / 8);
  return image;
}

std::string vcfg_of(const intops::Requant& q) {
  return "vcfg mult_a=" + std::to_string(q.multiplier) +
         " mult_b=0 shift=" + std::to_string(q.shift) + " zp=" + std::to_string(q.zero_point) +
         " lo=" + std::to_string(q.lo) + " hi=" + std::to_string(q.hi);
}

// Causal attention scores: 9 queries x 13 keys, row i keeping keys 0 .. i + 2 (the golden op's
// keep constant; the instruction's causal field with mask_offset 2), at 8 and 16 bits.
TEST(RowNormaliseGolden, causal_softmax_equals_the_golden_executor) {
  constexpr std::int64_t kRows = 9, kKeys = 13, kOffset = 2;
  for (const int bits : {8, 16}) {
    const std::string t = bits == 8 ? "i8" : "i16";
    std::string keep;
    for (std::int64_t i = 0; i < kRows; ++i)
      for (std::int64_t c = 0; c < kKeys; ++c)
        keep += std::string(keep.empty() ? "" : ", ") + (c <= i + kOffset ? "1" : "0");
    const std::string shape = "[" + std::to_string(kRows) + "," + std::to_string(kKeys) + "]";
    const auto g = test_support::parse_graph(
        "graph sm {\n  input %x : " + t + shape + "{scale=" + (bits == 8 ? "0.0625" : "0.001") +
        ", zp=0}\n  const %keep : i8" + shape + " ints [" + keep +
        "]\n  %y = Softmax(%x, %keep) {axis=1} : " + t + shape +
        "{scale=" + (bits == 8 ? "0.00390625" : "0.0000152") + ", zp=0}\n  output %y\n}");
    const auto x = codes(kRows, kKeys, bits, 41 + static_cast<std::uint64_t>(bits));
    cpu::Executor executor(g);
    auto golden =
        executor.run({{"x", test_support::int_tensor(bits == 8 ? ir::DType::i8 : ir::DType::i16,
                                                     {kRows, kKeys}, x)}});
    ASSERT_TRUE(golden.ok()) << golden.reason();
    const auto p = quant::softmax_params(g.tensor("x"), g.tensor("y"));
    auto image = image_with(x, bits);
    for (std::size_t i = 0; i < 256; ++i) {
      put(image, kParams + 2 * i, p.exp_high[i], 2);
      put(image, kParams + 512 + 2 * i, p.exp_low[i], 2);
    }
    const auto got = simulate_rows(
        std::move(image), bits, kRows, kKeys, 1024, vcfg_of(p.output),
        "softmax table_sp=1 table_addr=0x0 causal=1 mask_offset=" + std::to_string(kOffset));
    EXPECT_EQ(got, golden.value().at("y").to_i32()) << t;
  }
}

// LayerNorm and RMSNorm of 5 rows x 24 codes with per-channel gamma and beta (zero, negative
// and large gammas) at 8 and 16 bits; row 0 alternates the type's extremes.
TEST(RowNormaliseGolden, layernorm_and_rmsnorm_equal_the_golden_executor) {
  constexpr std::int64_t kRows = 5, kN = 24;
  for (const int bits : {8, 16})
    for (const bool centre : {true, false}) {
      const std::string t = bits == 8 ? "i8" : "i16";
      std::string gamma, beta;
      for (std::int64_t k = 0; k < kN; ++k) {
        const double gk = k == 1 ? 0.0
                                 : (k % 3 == 0 ? -1.0 : 1.0) *
                                       (0.2 + seeded_uniform(7, static_cast<std::uint64_t>(k)));
        gamma += (k ? ", " : "") + std::to_string(gk);
        beta += (k ? ", " : "") +
                std::to_string(seeded_uniform(8, static_cast<std::uint64_t>(k)) - 0.5);
      }
      const std::string shape = "[" + std::to_string(kRows) + "," + std::to_string(kN) + "]";
      const std::string n = std::to_string(kN);
      const std::string kind = centre ? "LayerNormalization" : "RMSNormalization";
      const auto g = test_support::parse_graph(
          "graph ln {\n  input %x : " + t + shape + "{scale=0.05, zp=0}\n  const %gamma : f32[" +
          n + "] = [" + gamma + "]\n" +
          (centre ? "  const %beta : f32[" + n + "] = [" + beta + "]\n" : std::string()) +
          "  %y = " + kind + "(%x, %gamma" + (centre ? ", %beta" : "") +
          ") {axis=-1, epsilon=0.001} : " + t + shape +
          "{scale=" + (bits == 8 ? "0.02" : "0.0001") + ", zp=0}\n  output %y\n}");
      const auto x = codes(kRows, kN, bits, 51 + static_cast<std::uint64_t>(bits) + centre);
      cpu::Executor executor(g);
      auto golden =
          executor.run({{"x", test_support::int_tensor(bits == 8 ? ir::DType::i8 : ir::DType::i16,
                                                       {kRows, kN}, x)}});
      ASSERT_TRUE(golden.ok()) << golden.reason();
      auto params = quant::norm_params(g, g.op(g.producer("y").value()));
      ASSERT_TRUE(params.ok()) << params.reason();
      const quant::NormParams& p = params.value();
      auto image = image_with(x, bits);
      put(image, kParams, p.epsilon_term, 8);
      for (std::size_t k = 0; k < p.affine.size(); ++k) {
        const std::uint64_t at = kParams + 8 + 16 * k;
        put(image, at, p.affine[k].multiplier, 4);
        put(image, at + 4, p.affine[k].shift, 4);
        put(image, at + 8, p.affine[k].bias, 8);
      }
      const auto got = simulate_rows(
          std::move(image), bits, kRows, kN, 8 + 16 * kN,
          vcfg_of(intops::Requant{0, 0, 0, p.lo, p.hi}),
          std::string("norm param_sp=1 param_addr=0x0 centre=") + (centre ? "1" : "0"));
      EXPECT_EQ(got, golden.value().at("y").to_i32()) << kind << " " << t;
    }
}

}  // namespace
}  // namespace tessel::sim
