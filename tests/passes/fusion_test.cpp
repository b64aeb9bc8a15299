// The pattern passes of the quantization pipeline (fuse-layernorm, fuse-gelu, fuse-silu,
// fuse-attention-mask, div-by-constant, batchnorm-to-conv) and constant folding of the modern
// kinds: text in, text out, and the fp32 executor's outputs before and after agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "compiler/ir/text.hpp"
#include "compiler/passes/pass.hpp"
#include "compiler/passes/policy_graph.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::passes {
namespace {

/// max |after - before| / max |before| over every graph output, on default inputs (N(0, 1),
/// or their absolute values plus 0.5 where `positive`, for graphs that take a square root).
double relative_difference(const ir::Graph& before, const ir::Graph& after, bool positive) {
  std::map<std::string, cpu::TensorData> feed;
  std::uint64_t seed = 7;
  for (ir::OpId id : before.inputs()) {
    const std::string& name = before.op(id).outputs[0];
    auto x = cpu::default_input(before.tensor(name).shape, seed++);
    if (positive) {
      auto values = x.to_f32();
      for (float& v : values) v = std::abs(v) + 0.5f;
      x = cpu::TensorData::from_f32(before.tensor(name).shape, values);
    }
    feed.emplace(name, std::move(x));
  }
  cpu::Executor run_before(before), run_after(after);
  auto a = run_before.run(feed);
  auto b = run_after.run(feed);
  EXPECT_TRUE(a.ok()) << a.reason();
  EXPECT_TRUE(b.ok()) << b.reason();
  if (!a.ok() || !b.ok()) return INFINITY;
  double diff = 0.0, ref = 0.0;
  for (const std::string& out : before.outputs()) {
    const auto x = a.value().at(out).to_f32(), y = b.value().at(out).to_f32();
    EXPECT_EQ(x.size(), y.size());
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      diff = std::max(diff, std::abs(double{x[i]} - y[i]));
      ref = std::max(ref, std::abs(double{x[i]}));
    }
  }
  return ref == 0.0 ? diff : diff / ref;
}

/// Runs `pipeline` on `input`; returns the dump (or the failure). When the graph changed,
/// also checks that the fp32 outputs agree within `tolerance` (relative to the largest).
std::string rewrite(const std::string& pipeline, const std::string& input, double tolerance = 1e-6,
                    bool positive = false) {
  const ir::Graph before = ir::parse_text(input, "test.tir");
  ir::Graph after = before;
  if (Status status = run_passes(after, pipeline); !status) return "error: " + status.reason();
  if (Status valid = ir::validate(after); !valid) return "invalid: " + valid.reason();
  const std::string text = ir::to_text(after);
  if (text != input) {
    EXPECT_LE(relative_difference(before, after, positive), tolerance);
  }
  return text;
}

// --- fuse-layernorm --------------------------------------------------------------------------

// torch's decomposition of nn.LayerNorm before opset 17 (and the float eps written as 1e-05).
const char* const kLayerNorm = R"(graph g {
  input %x : f32[2,4]
  const %beta : f32[4] = [0.5, -0.5, 0, 1]
  const %eps : f32[1] = [1e-05]
  const %gamma : f32[4] = [1, 2, 0.5, -1]
  const %two : f32[1] = [2]
  %mean = ReduceMean(%x) {axes=[-1]} : f32[2,1]
  %d = Sub(%x, %mean) : f32[2,4]
  %sq = Pow(%d, %two) : f32[2,4]
  %var = ReduceMean(%sq) {axes=[-1]} : f32[2,1]
  %ve = Add(%var, %eps) : f32[2,1]
  %s = Sqrt(%ve) : f32[2,1]
  %n = Div(%d, %s) : f32[2,4]
  %g = Mul(%n, %gamma) : f32[2,4]
  %y = Add(%g, %beta) : f32[2,4]
  output %y
}
)";

TEST(FuseLayerNorm, torch_decomposition_with_gamma_and_beta_is_one_layernorm) {
  EXPECT_EQ(rewrite("fuse-layernorm", kLayerNorm), R"(graph g {
  input %x : f32[2,4]
  const %beta : f32[4] = [0.5, -0.5, 0, 1]
  const %gamma : f32[4] = [1, 2, 0.5, -1]
  %y = LayerNormalization(%x, %gamma, %beta) : f32[2,4]
  output %y
}
)");
}

TEST(FuseLayerNorm, square_as_mul_reciprocal_form_and_two_axes_get_unit_gamma_zero_beta) {
  // Mul(d, d), Add(eps, var), Mul(Reciprocal(s), d); reduced over the last two axes; no affine:
  // gamma = 1 and beta = 0 over the normalised dims [2,3].
  EXPECT_EQ(rewrite("fuse-layernorm", R"(graph g {
  input %x : f32[1,2,3]
  const %eps : f32[1] = [0.001]
  %mean = ReduceMean(%x) {axes=1,2} : f32[1,1,1]
  %d = Sub(%x, %mean) : f32[1,2,3]
  %sq = Mul(%d, %d) : f32[1,2,3]
  %var = ReduceMean(%sq) {axes=-2,-1} : f32[1,1,1]
  %ve = Add(%eps, %var) : f32[1,1,1]
  %s = Sqrt(%ve) : f32[1,1,1]
  %r = Reciprocal(%s) : f32[1,1,1]
  %y = Mul(%r, %d) : f32[1,2,3]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[1,2,3]
  const %y.bias : f32[2,3] = [0, 0, 0, 0, 0, 0]
  const %y.scale : f32[2,3] = [1, 1, 1, 1, 1, 1]
  %y = LayerNormalization(%x, %y.scale, %y.bias) {axis=-2, epsilon=0.001} : f32[1,2,3]
  output %y
}
)");
}

TEST(FuseLayerNorm, gamma_of_shape_1x1xC_is_reshaped_to_the_normalised_dims) {
  std::string input = kLayerNorm;
  input.replace(input.find("%gamma : f32[4]"), 15, "%gamma : f32[1,4]");
  EXPECT_EQ(rewrite("fuse-layernorm", input), R"(graph g {
  input %x : f32[2,4]
  const %beta : f32[4] = [0.5, -0.5, 0, 1]
  const %y.scale : f32[4] = [1, 2, 0.5, -1]
  %y = LayerNormalization(%x, %y.scale, %beta) : f32[2,4]
  output %y
}
)");
}

TEST(FuseLayerNorm, leaves_a_non_constant_eps_alone) {
  const std::string input = R"(graph g {
  input %x : f32[2,4]
  input %eps : f32[1]
  const %two : f32[1] = [2]
  %mean = ReduceMean(%x) {axes=[-1]} : f32[2,1]
  %d = Sub(%x, %mean) : f32[2,4]
  %sq = Pow(%d, %two) : f32[2,4]
  %var = ReduceMean(%sq) {axes=[-1]} : f32[2,1]
  %ve = Add(%var, %eps) : f32[2,1]
  %s = Sqrt(%ve) : f32[2,1]
  %y = Div(%d, %s) : f32[2,4]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-layernorm", input), input);
}

TEST(FuseLayerNorm, leaves_a_reduction_over_a_leading_axis_alone) {
  const std::string input = R"(graph g {
  input %x : f32[2,4]
  const %eps : f32[1] = [1e-05]
  const %two : f32[1] = [2]
  %mean = ReduceMean(%x) {axes=[0]} : f32[1,4]
  %d = Sub(%x, %mean) : f32[2,4]
  %sq = Pow(%d, %two) : f32[2,4]
  %var = ReduceMean(%sq) {axes=[0]} : f32[1,4]
  %ve = Add(%var, %eps) : f32[1,4]
  %s = Sqrt(%ve) : f32[1,4]
  %y = Div(%d, %s) : f32[2,4]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-layernorm", input), input);
}

TEST(FuseLayerNorm, leaves_mismatched_mean_and_variance_axes_alone) {
  const std::string input = R"(graph g {
  input %x : f32[1,2,3]
  const %eps : f32[1] = [1e-05]
  const %two : f32[1] = [2]
  %mean = ReduceMean(%x) {axes=[-1]} : f32[1,2,1]
  %d = Sub(%x, %mean) : f32[1,2,3]
  %sq = Pow(%d, %two) : f32[1,2,3]
  %var = ReduceMean(%sq) {axes=1,2} : f32[1,1,1]
  %ve = Add(%var, %eps) : f32[1,1,1]
  %s = Sqrt(%ve) : f32[1,1,1]
  %y = Div(%d, %s) : f32[1,2,3]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-layernorm", input), input);
}

TEST(FuseLayerNorm, leaves_a_mean_with_a_second_reader_alone) {
  const std::string input = R"(graph g {
  input %x : f32[2,4]
  const %eps : f32[1] = [1e-05]
  const %two : f32[1] = [2]
  %mean = ReduceMean(%x) {axes=[-1]} : f32[2,1]
  %d = Sub(%x, %mean) : f32[2,4]
  %sq = Pow(%d, %two) : f32[2,4]
  %var = ReduceMean(%sq) {axes=[-1]} : f32[2,1]
  %ve = Add(%var, %eps) : f32[2,1]
  %s = Sqrt(%ve) : f32[2,1]
  %n = Div(%d, %s) : f32[2,4]
  %y = Add(%n, %mean) : f32[2,4]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-layernorm", input), input);
}

// torch's export of Llama's RMSNorm: x * rsqrt(mean(x^2) + eps) * weight, with x also read by
// the residual join (which stays).
TEST(FuseLayerNorm, llama_rmsnorm_is_one_rmsnormalization) {
  EXPECT_EQ(rewrite("fuse-layernorm", R"(graph g {
  input %x : f32[1,2,4]
  const %eps : f32[1] = [1e-06]
  const %two : f32[1] = [2]
  const %w : f32[4] = [1, 0.5, 2, -1]
  %sq = Pow(%x, %two) : f32[1,2,4]
  %ms = ReduceMean(%sq) {axes=[-1]} : f32[1,2,1]
  %ve = Add(%ms, %eps) : f32[1,2,1]
  %s = Sqrt(%ve) : f32[1,2,1]
  %r = Reciprocal(%s) : f32[1,2,1]
  %n = Mul(%x, %r) : f32[1,2,4]
  %y = Mul(%w, %n) : f32[1,2,4]
  %z = Add(%y, %x) : f32[1,2,4]
  output %z
}
)"),
            R"(graph g {
  input %x : f32[1,2,4]
  const %w : f32[4] = [1, 0.5, 2, -1]
  %y = RMSNormalization(%x, %w) {epsilon=1e-06} : f32[1,2,4]
  %z = Add(%y, %x) : f32[1,2,4]
  output %z
}
)");
}

TEST(FuseLayerNorm, rmsnorm_with_one_over_sqrt_and_no_weight_gets_unit_weight) {
  EXPECT_EQ(rewrite("fuse-layernorm", R"(graph g {
  input %x : f32[3,2]
  const %eps : f32[1] = [1e-05]
  const %one : f32[1] = [1]
  const %two : f32[1] = [2]
  %sq = Pow(%x, %two) : f32[3,2]
  %ms = ReduceMean(%sq) {axes=[1]} : f32[3,1]
  %ve = Add(%ms, %eps) : f32[3,1]
  %s = Sqrt(%ve) : f32[3,1]
  %r = Div(%one, %s) : f32[3,1]
  %y = Mul(%r, %x) : f32[3,2]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[3,2]
  const %y.scale : f32[2] = [1, 1]
  %y = RMSNormalization(%x, %y.scale) : f32[3,2]
  output %y
}
)");
}

TEST(FuseLayerNorm, leaves_an_rmsnorm_whose_root_has_a_second_reader_alone) {
  const std::string input = R"(graph g {
  input %x : f32[3,2]
  const %eps : f32[1] = [1e-05]
  const %two : f32[1] = [2]
  %sq = Pow(%x, %two) : f32[3,2]
  %ms = ReduceMean(%sq) {axes=[1]} : f32[3,1]
  %ve = Add(%ms, %eps) : f32[3,1]
  %s = Sqrt(%ve) : f32[3,1]
  %n = Div(%x, %s) : f32[3,2]
  %y = Mul(%n, %s) : f32[3,2]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-layernorm", input), input);
}

// --- fuse-gelu -------------------------------------------------------------------------------

TEST(FuseGelu, torch_erf_form_is_gelu) {
  // F.gelu as torch.onnx writes it: Mul(Mul(x, 1 + Erf(x / 1.4142135)), 0.5).
  EXPECT_EQ(rewrite("fuse-gelu", R"(graph g {
  input %x : f32[2,3]
  const %half : f32[1] = [0.5]
  const %one : f32[1] = [1]
  const %sqrt2 : f32[1] = [1.4142135]
  %a = Div(%x, %sqrt2) : f32[2,3]
  %e = Erf(%a) : f32[2,3]
  %t = Add(%e, %one) : f32[2,3]
  %m = Mul(%x, %t) : f32[2,3]
  %y = Mul(%m, %half) : f32[2,3]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[2,3]
  %y = Gelu(%x) : f32[2,3]
  output %y
}
)");
}

TEST(FuseGelu, hf_erf_form_with_the_half_on_x_is_gelu) {
  // HF BERT: x * 0.5 * (1.0 + erf(x * 0.70710678)), constants first where torch puts them.
  EXPECT_EQ(rewrite("fuse-gelu", R"(graph g {
  input %x : f32[2,3]
  const %half : f32[1] = [0.5]
  const %inv : f32[1] = [0.70710677]
  const %one : f32[1] = [1]
  %h = Mul(%x, %half) : f32[2,3]
  %a = Mul(%inv, %x) : f32[2,3]
  %e = Erf(%a) : f32[2,3]
  %t = Add(%one, %e) : f32[2,3]
  %y = Mul(%h, %t) : f32[2,3]
  %z = Relu(%x) : f32[2,3]
  output %y, %z
}
)"),
            R"(graph g {
  input %x : f32[2,3]
  %y = Gelu(%x) : f32[2,3]
  %z = Relu(%x) : f32[2,3]
  output %y, %z
}
)");
}

TEST(FuseGelu, torch_tanh_form_is_gelu_tanh) {
  // F.gelu(approximate="tanh"): 0.5 * (x * (1 + tanh(c * (x + 0.044715 * (x * (x * x)))))).
  EXPECT_EQ(rewrite("fuse-gelu", R"(graph g {
  input %x : f32[2,3]
  const %c : f32[1] = [0.7978846]
  const %half : f32[1] = [0.5]
  const %kappa : f32[1] = [0.044715]
  const %one : f32[1] = [1]
  %x2 = Mul(%x, %x) : f32[2,3]
  %x3 = Mul(%x, %x2) : f32[2,3]
  %k = Mul(%kappa, %x3) : f32[2,3]
  %u = Add(%x, %k) : f32[2,3]
  %i = Mul(%c, %u) : f32[2,3]
  %th = Tanh(%i) : f32[2,3]
  %t = Add(%one, %th) : f32[2,3]
  %m = Mul(%x, %t) : f32[2,3]
  %y = Mul(%half, %m) : f32[2,3]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[2,3]
  %y = Gelu(%x) {approximate="tanh"} : f32[2,3]
  output %y
}
)");
}

TEST(FuseGelu, gpt2_tanh_form_with_pow_is_gelu_tanh) {
  // HF GPT-2's NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))).
  EXPECT_EQ(rewrite("fuse-gelu", R"(graph g {
  input %x : f32[2,3]
  const %c : f32[1] = [0.7978846]
  const %half : f32[1] = [0.5]
  const %kappa : f32[1] = [0.044715]
  const %one : f32[1] = [1]
  const %three : f32[1] = [3]
  %h = Mul(%half, %x) : f32[2,3]
  %x3 = Pow(%x, %three) : f32[2,3]
  %k = Mul(%x3, %kappa) : f32[2,3]
  %u = Add(%k, %x) : f32[2,3]
  %i = Mul(%u, %c) : f32[2,3]
  %th = Tanh(%i) : f32[2,3]
  %t = Add(%th, %one) : f32[2,3]
  %y = Mul(%h, %t) : f32[2,3]
  output %y
}
)"),
            R"(graph g {
  input %x : f32[2,3]
  %y = Gelu(%x) {approximate="tanh"} : f32[2,3]
  output %y
}
)");
}

TEST(FuseGelu, leaves_a_wrong_constant_and_a_read_erf_alone) {
  const std::string wrong_scale = R"(graph g {
  input %x : f32[2,3]
  const %half : f32[1] = [0.5]
  const %one : f32[1] = [1]
  const %two : f32[1] = [2]
  %a = Div(%x, %two) : f32[2,3]
  %e = Erf(%a) : f32[2,3]
  %t = Add(%e, %one) : f32[2,3]
  %m = Mul(%x, %t) : f32[2,3]
  %y = Mul(%m, %half) : f32[2,3]
  output %y
}
)";
  EXPECT_EQ(rewrite("fuse-gelu", wrong_scale), wrong_scale);
  const std::string erf_read_twice = R"(graph g {
  input %x : f32[2,3]
  const %half : f32[1] = [0.5]
  const %one : f32[1] = [1]
  const %sqrt2 : f32[1] = [1.4142135]
  %a = Div(%x, %sqrt2) : f32[2,3]
  %e = Erf(%a) : f32[2,3]
  %t = Add(%e, %one) : f32[2,3]
  %m = Mul(%x, %t) : f32[2,3]
  %y = Mul(%m, %half) : f32[2,3]
  output %y, %e
}
)";
  EXPECT_EQ(rewrite("fuse-gelu", erf_read_twice), erf_read_twice);
}

// --- fuse-silu -------------------------------------------------------------------------------

TEST(FuseSilu, sigmoid_gate_is_silu_and_hardsigmoid_gate_is_hardswish) {
  EXPECT_EQ(rewrite("fuse-silu", R"(graph g {
  input %x : f32[2,3]
  %s = Sigmoid(%x) : f32[2,3]
  %y = Mul(%s, %x) : f32[2,3]
  %h = HardSigmoid(%y) {alpha=0.16666667} : f32[2,3]
  %z = Mul(%y, %h) : f32[2,3]
  output %z
}
)"),
            R"(graph g {
  input %x : f32[2,3]
  %y = Silu(%x) : f32[2,3]
  %z = HardSwish(%y) : f32[2,3]
  output %z
}
)");
}

TEST(FuseSilu, leaves_other_hardsigmoids_and_shared_gates_alone) {
  const std::string input = R"(graph g {
  input %x : f32[2,3]
  %h = HardSigmoid(%x) : f32[2,3]
  %y = Mul(%x, %h) : f32[2,3]
  %s = Sigmoid(%y) : f32[2,3]
  %z = Mul(%y, %s) : f32[2,3]
  %w = Add(%z, %s) : f32[2,3]
  output %w
}
)";
  EXPECT_EQ(rewrite("fuse-silu", input), input);
}

// --- fuse-attention-mask ---------------------------------------------------------------------

TEST(FuseAttentionMask, additive_minus_inf_mask_becomes_the_softmax_mask) {
  // A causal mask over 3 positions (torch.triu(full(-inf), 1)), broadcast over 2 heads.
  EXPECT_EQ(rewrite("fuse-attention-mask", R"(graph g {
  input %s : f32[2,3,3]
  const %m : f32[3,3] = [0, -inf, -inf, 0, 0, -inf, 0, 0, 0]
  %a = Add(%s, %m) : f32[2,3,3]
  %p = Softmax(%a) : f32[2,3,3]
  output %p
}
)"),
            R"(graph g {
  input %s : f32[2,3,3]
  const %p.mask : f32[3,3] = [1, 0, 0, 1, 1, 0, 1, 1, 1]
  %p = Softmax(%s, %p.mask) : f32[2,3,3]
  output %p
}
)");
}

TEST(FuseAttentionMask, where_with_finfo_min_becomes_the_softmax_mask) {
  // GPT-2: where(causal, scores, finfo(float32).min), and the reversed branch order.
  EXPECT_EQ(rewrite("fuse-attention-mask", R"(graph g {
  input %s : f32[1,2,2]
  const %c : f32[2,2] = [1, 0, 1, 1]
  const %lo : f32[1] = [-3.4028235e+38]
  const %nc : f32[2,2] = [0, 1, 0, 0]
  %w = Where(%c, %s, %lo) : f32[1,2,2]
  %p = Softmax(%w) : f32[1,2,2]
  %w2 = Where(%nc, %lo, %s) : f32[1,2,2]
  %q = Softmax(%w2) {axis=2} : f32[1,2,2]
  output %p, %q
}
)"),
            R"(graph g {
  input %s : f32[1,2,2]
  const %p.mask : f32[2,2] = [1, 0, 1, 1]
  const %q.mask : f32[2,2] = [1, 0, 1, 1]
  %p = Softmax(%s, %p.mask) : f32[1,2,2]
  %q = Softmax(%s, %q.mask) {axis=2} : f32[1,2,2]
  output %p, %q
}
)");
}

TEST(FuseAttentionMask, leaves_non_mask_values_and_whole_masked_rows_alone) {
  const std::string bias = R"(graph g {
  input %s : f32[2,2]
  const %m : f32[2] = [0, -1]
  %a = Add(%s, %m) : f32[2,2]
  %p = Softmax(%a) : f32[2,2]
  output %p
}
)";
  EXPECT_EQ(rewrite("fuse-attention-mask", bias), bias);
  // Row 1 masked whole: the original gives a uniform row, the masked Softmax zeros.
  const std::string whole_row = R"(graph g {
  input %s : f32[2,2]
  const %m : f32[2,2] = [0, -10000, -10000, -10000]
  %a = Add(%s, %m) : f32[2,2]
  %p = Softmax(%a) : f32[2,2]
  output %p
}
)";
  EXPECT_EQ(rewrite("fuse-attention-mask", whole_row), whole_row);
}

// --- div-by-constant -------------------------------------------------------------------------

TEST(DivByConstant, power_of_two_divisor_is_an_exact_multiply) {
  EXPECT_EQ(rewrite("div-by-constant",
                    R"(graph g {
  input %x : f32[2,3]
  const %c : f32[3] = [4, 0.5, -8]
  %y = Div(%x, %c) : f32[2,3]
  output %y
}
)",
                    0.0),
            R"(graph g {
  input %x : f32[2,3]
  const %c.reciprocal : f32[3] = [0.25, 2, -0.125]
  %y = Mul(%x, %c.reciprocal) : f32[2,3]
  output %y
}
)");
}

TEST(DivByConstant, other_divisors_change_results_by_one_rounding_and_share_the_reciprocal) {
  // 1/8 = 0.125 exactly; 1/3 rounds to 0.333333343: x * fl(1/3) is within 2^-23 of x / 3.
  EXPECT_EQ(rewrite("div-by-constant", R"(graph g {
  input %x : f32[2,3]
  const %c : f32[1] = [3]
  %y = Div(%x, %c) : f32[2,3]
  %z = Div(%y, %c) : f32[2,3]
  output %z
}
)",
                    2.5e-7),
            R"(graph g {
  input %x : f32[2,3]
  const %c.reciprocal : f32[1] = [0.33333334]
  %y = Mul(%x, %c.reciprocal) : f32[2,3]
  %z = Mul(%y, %c.reciprocal) : f32[2,3]
  output %z
}
)");
}

TEST(DivByConstant, leaves_zero_divisors_and_activations_alone) {
  const std::string input = R"(graph g {
  input %x : f32[2,3]
  const %c : f32[3] = [1, 0, 2]
  %y = Div(%x, %c) : f32[2,3]
  %z = Div(%y, %x) : f32[2,3]
  output %z
}
)";
  EXPECT_EQ(rewrite("div-by-constant", input), input);
}

// --- batchnorm-to-conv -----------------------------------------------------------------------

TEST(BatchnormToConv, batchnorm_after_relu_is_one_depthwise_conv) {
  // s = gamma / sqrt(var + eps) = [2 / sqrt(4), 3 / sqrt(1)] = [1, 3];
  // b = beta - mean * s = [0.5 - 1 * 1, -1 - (-2) * 3] = [-0.5, 5].
  EXPECT_EQ(rewrite("batchnorm-to-conv", R"(graph g {
  input %x : f32[1,2,2,2]
  const %beta : f32[2] = [0.5, -1]
  const %gamma : f32[2] = [2, 3]
  const %mean : f32[2] = [1, -2]
  const %var : f32[2] = [3, 0]
  %r = Relu(%x) : f32[1,2,2,2]
  %bn = BatchNormalization(%r, %gamma, %beta, %mean, %var) {epsilon=1} : f32[1,2,2,2]
  output %bn
}
)"),
            R"(graph g {
  input %x : f32[1,2,2,2]
  const %bn.bias : f32[2] = [-0.5, 5]
  const %bn.weight : f32[2,1,1,1] = [1, 3]
  %r = Relu(%x) : f32[1,2,2,2]
  %bn = Conv(%r, %bn.weight, %bn.bias) {kernel=1x1, group=2} : f32[1,2,2,2]
  output %bn
}
)");
}

TEST(BatchnormToConv, leaves_a_rank_2_batchnorm_for_the_executor) {
  const std::string input = R"(graph g {
  input %x : f32[3,2]
  const %beta : f32[2] = [0.5, -1]
  const %gamma : f32[2] = [2, 3]
  const %mean : f32[2] = [1, -2]
  const %var : f32[2] = [3, 0]
  %bn = BatchNormalization(%x, %gamma, %beta, %mean, %var) : f32[3,2]
  output %bn
}
)";
  EXPECT_EQ(rewrite("batchnorm-to-conv", input), input);
}

// --- the quantization pipeline ---------------------------------------------------------------

TEST(QuantizationPreparation, folds_fuses_and_lowers_in_one_pipeline) {
  // A pre-activation block: Concat -> BN (no Conv before it) -> Conv -> BN (folds), then a
  // LayerNorm decomposition over W and a division by a constant.
  ir::Graph graph = ir::parse_text(R"(graph g {
  input %a : f32[1,1,1,4]
  input %b : f32[1,1,1,4]
  const %b1 : f32[2] = [0, 1]
  const %b2 : f32[2] = [0, 0]
  const %eps : f32[1] = [1e-05]
  const %g1 : f32[2] = [1, 2]
  const %g2 : f32[2] = [1, 1]
  const %m1 : f32[2] = [0, 0]
  const %m2 : f32[2] = [1, -1]
  const %two : f32[1] = [2]
  const %v1 : f32[2] = [1, 1]
  const %v2 : f32[2] = [4, 4]
  const %w : f32[2,2,1,1] = [1, 0, 0, 1]
  %cat = Concat(%a, %b) {axis=1} : f32[1,2,1,4]
  %bn1 = BatchNormalization(%cat, %g1, %b1, %m1, %v1) {epsilon=0} : f32[1,2,1,4]
  %conv = Conv(%bn1, %w) {kernel=1x1} : f32[1,2,1,4]
  %bn2 = BatchNormalization(%conv, %g2, %b2, %m2, %v2) {epsilon=0} : f32[1,2,1,4]
  %mean = ReduceMean(%bn2) {axes=[-1]} : f32[1,2,1,1]
  %d = Sub(%bn2, %mean) : f32[1,2,1,4]
  %sq = Pow(%d, %two) : f32[1,2,1,4]
  %var = ReduceMean(%sq) {axes=[-1]} : f32[1,2,1,1]
  %ve = Add(%var, %eps) : f32[1,2,1,1]
  %s = Sqrt(%ve) : f32[1,2,1,1]
  %n = Div(%d, %s) : f32[1,2,1,4]
  %y = Div(%n, %two) : f32[1,2,1,4]
  output %y
}
)",
                                   "test.tir");
  const ir::Graph before = graph;
  ASSERT_TRUE(prepare_for_quantization(graph).ok());
  // bn1: s = [1, 2], b = [0, 1]; bn2 folds: s = [0.5, 0.5], b' = (0 - [1, -1]) * 0.5.
  EXPECT_EQ(ir::to_text(graph), R"(graph g {
  input %a : f32[1,1,1,4]
  input %b : f32[1,1,1,4]
  const %bn1.bias : f32[2] = [0, 1]
  const %bn1.weight : f32[2,1,1,1] = [1, 2]
  const %conv.bias_folded : f32[2] = [-0.5, 0.5]
  const %conv.weight_folded : f32[2,2,1,1] = [0.5, 0, 0, 0.5]
  const %n.bias : f32[4] = [0, 0, 0, 0]
  const %n.scale : f32[4] = [1, 1, 1, 1]
  const %two.reciprocal : f32[1] = [0.5]
  %cat = Concat(%a, %b) {axis=1} : f32[1,2,1,4]
  %bn1 = Conv(%cat, %bn1.weight, %bn1.bias) {kernel=1x1, group=2} : f32[1,2,1,4]
  %conv = Conv(%bn1, %conv.weight_folded, %conv.bias_folded) {kernel=1x1} : f32[1,2,1,4]
  %n = LayerNormalization(%conv, %n.scale, %n.bias) : f32[1,2,1,4]
  %y = Mul(%n, %two.reciprocal) : f32[1,2,1,4]
  output %y
}
)");
  EXPECT_LE(relative_difference(before, graph, false), 1e-6);
}

TEST(QuantizationPreparation, causal_attention_from_trilu_gets_a_constant_mask) {
  // GPT-style: scores / 2 + triu(full(-inf), 1). Constant folding evaluates the Trilu, the
  // mask fusion takes it, and the division by 2 becomes an exact multiply by 0.5.
  EXPECT_EQ(rewrite("fold-batchnorm," + std::string(kQuantizationPreparation), R"(graph g {
  input %q : f32[2,3,4]
  input %k : f32[2,4,3]
  const %d : f32[1] = [2]
  const %fill : f32[3,3] = [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf]
  %tri = Trilu(%fill) {k=1} : f32[3,3]
  %s = MatMul(%q, %k) : f32[2,3,3]
  %sc = Div(%s, %d) : f32[2,3,3]
  %a = Add(%sc, %tri) : f32[2,3,3]
  %p = Softmax(%a) : f32[2,3,3]
  output %p
}
)",
                    0.0),
            R"(graph g {
  input %q : f32[2,3,4]
  input %k : f32[2,4,3]
  const %d.reciprocal : f32[1] = [0.5]
  const %p.mask : f32[3,3] = [1, 0, 0, 1, 1, 0, 1, 1, 1]
  %s = MatMul(%q, %k) : f32[2,3,3]
  %sc = Mul(%s, %d.reciprocal) : f32[2,3,3]
  %p = Softmax(%sc, %p.mask) : f32[2,3,3]
  output %p
}
)");
}

// Issue 33: DenseNet's pre-activation BN (Concat -> BN -> Relu -> Conv) used to stop the
// quantizer ("cannot be quantized; run fold-batchnorm first"); prepared, it is a depthwise Conv
// and the int8 graph tracks fp32.
TEST(QuantizationPreparation, preactivation_batchnorm_quantizes_as_a_depthwise_conv) {
  const ir::Graph graph = ir::parse_text(R"(graph g {
  input %a : f32[1,2,4,4]
  input %b : f32[1,2,4,4]
  const %beta : f32[4] = [0.1, -0.2, 0.3, 0]
  const %gamma : f32[4] = [1, 0.5, 2, 1.5]
  const %mean : f32[4] = [0.1, 0, -0.1, 0.2]
  const %var : f32[4] = [1, 2, 0.5, 1]
  const %w : f32[2,4,1,1] = [0.5, -0.25, 1, 0.75, -1, 0.5, 0.25, 1]
  %cat = Concat(%a, %b) {axis=1} : f32[1,4,4,4]
  %bn = BatchNormalization(%cat, %gamma, %beta, %mean, %var) : f32[1,4,4,4]
  %r = Relu(%bn) : f32[1,4,4,4]
  %y = Conv(%r, %w) {kernel=1x1} : f32[1,2,4,4]
  output %y
}
)",
                                         "densenet.tir");
  auto prepared = cpu::prepare_graph(graph);
  ASSERT_TRUE(prepared.ok()) << prepared.reason();
  const auto bn = prepared.value().find_op("bn");
  ASSERT_TRUE(bn.has_value());
  EXPECT_EQ(prepared.value().op(*bn).kind, ir::OpKind::Conv);
  EXPECT_EQ(prepared.value().op(*bn).get_int("group"), 4);
  const quant::QuantConfig config;
  auto q = cpu::quantize_model(prepared.value(), config,
                               cpu::synthetic_samples(prepared.value(), config));
  ASSERT_TRUE(q.ok()) << q.reason();
  std::map<std::string, cpu::TensorData> feed = {{"a", cpu::default_input({1, 2, 4, 4}, 1)},
                                                 {"b", cpu::default_input({1, 2, 4, 4}, 2)}};
  cpu::Executor fp32(graph), int8(q.value().graph);
  auto ref = fp32.run(feed);
  auto got = int8.run(feed);
  ASSERT_TRUE(ref.ok() && got.ok());
  EXPECT_GE(cpu::sqnr_db(ref.value().at("y").to_f32(), got.value().at("y").to_f32()), 30.0);
}

TEST(QuantizationPreparation, changes_no_zoo_model_beyond_fold_batchnorm_and_qkv_splits) {
  // Every zoo model structurally (no payloads), the tiny nets with weights (constant folding and
  // the value-matched patterns see payloads): none holds a pattern or an unfolded BN (the
  // transformer builders write the fused kinds themselves). The scheduler, given a graph
  // unprepared, folds BatchNorm and splits q|k|v projections itself (split-sliced-linear, as
  // net_from_graph runs it): it plans the ops the quantized graph has.
  zoo::ZooOptions shapes_only;
  shapes_only.with_weights = false;
  for (const char* name :
       {"resnet18",        "resnet50",      "vgg19",          "googlenet",
        "inception_v3",    "mobilenet_v2",  "vit_b_16",       "mobilenet_v3_large",
        "efficientnet_b0", "convnext_tiny", "bert_base",      "gpt2",
        "gpt2_decode",     "llama_block",   "tiny_conv",      "tiny_residual",
        "tiny_inception",  "tiny_mlp",      "tiny_depthwise", "tiny_stem"}) {
    const bool tiny = std::string(name).starts_with("tiny");
    auto built = tiny ? zoo::build_model(name) : zoo::build_model(name, shapes_only);
    ASSERT_TRUE(built.ok()) << name;
    ir::Graph folded = built.value(), prepared = built.value();
    ASSERT_TRUE(run_passes(folded, "fold-batchnorm,split-sliced-linear").ok()) << name;
    ASSERT_TRUE(prepare_for_quantization(prepared).ok()) << name;
    EXPECT_TRUE(prepared == folded) << name;
  }
}

// --- split-sliced-linear --------------------------------------------------------------------

// A fused projection (transB = 1, bias) unflattened and sliced along its last axis, as torch's
// MultiheadAttention and GPT-2's c_attn export q|k|v: one Gemm per Slice over its weight rows
// and bias entries (w rows 0 and 1..3), the Gemms one after another and then their Reshapes,
// results bit for bit the same.
TEST(SplitSlicedLinear, a_sliced_projection_is_one_gemm_per_slice) {
  EXPECT_EQ(rewrite("split-sliced-linear", R"(graph g {
  input %x : f32[2,3]
  const %b : f32[4] = [0.5, -1, 2, 0.25]
  const %w : f32[4,3] = [1, 0, 2, -1, 1, 0, 0.5, 0.5, 0.5, 3, -2, 1]
  %y = Gemm(%x, %w, %b) {transB=1} : f32[2,4]
  %u = Reshape(%y) {shape=1,2,4} : f32[1,2,4]
  %q = Slice(%u) {starts=[0], ends=[1], axes=[2], steps=[1]} : f32[1,2,1]
  %kv = Slice(%u) {starts=[1], ends=[4], axes=[2], steps=[1]} : f32[1,2,3]
  %s = Add(%q, %kv) : f32[1,2,3]
  output %s
}
)",
                    0.0),
            R"(graph g {
  input %x : f32[2,3]
  const %kv.bias : f32[3] = [-1, 2, 0.25]
  const %kv.weight : f32[3,3] = [-1, 1, 0, 0.5, 0.5, 0.5, 3, -2, 1]
  const %q.bias : f32[1] = [0.5]
  const %q.weight : f32[1,3] = [1, 0, 2]
  %q.linear = Gemm(%x, %q.weight, %q.bias) {transB=1} : f32[2,1]
  %kv.linear = Gemm(%x, %kv.weight, %kv.bias) {transB=1} : f32[2,3]
  %q = Reshape(%q.linear) {shape=1,2,1} : f32[1,2,1] @q.unflatten
  %kv = Reshape(%kv.linear) {shape=1,2,3} : f32[1,2,3] @kv.unflatten
  %s = Add(%q, %kv) : f32[1,2,3]
  output %s
}
)");
}

// transB = 0 ([K, N] weights: columns), no Reshape, axes written -1 and 1; column 1 read by no
// Slice is computed by no Gemm.
TEST(SplitSlicedLinear, columns_of_a_kn_weight_and_an_unread_column_dropped) {
  EXPECT_EQ(rewrite("split-sliced-linear", R"(graph g {
  input %x : f32[2,2]
  const %w : f32[2,4] = [1, 2, 3, 4, 5, 6, 7, 8]
  %y = Gemm(%x, %w) : f32[2,4]
  %a = Slice(%y) {starts=[0], ends=[1], axes=[-1], steps=[1]} : f32[2,1]
  %c = Slice(%y) {starts=[2], ends=[4], axes=[1], steps=[1]} : f32[2,2]
  %s = Gemm(%a, %c) : f32[2,2]
  output %s
}
)",
                    0.0),
            R"(graph g {
  input %x : f32[2,2]
  const %a.weight : f32[2,1] = [1, 5]
  const %c.weight : f32[2,2] = [3, 4, 7, 8]
  %a = Gemm(%x, %a.weight) : f32[2,1] @a.linear
  %c = Gemm(%x, %c.weight) : f32[2,2] @c.linear
  %s = Gemm(%a, %c) : f32[2,2]
  output %s
}
)");
}

// HF GPT-2's c_attn: a Split of the last axis (here -1, sizes 1 and 2) instead of Slices.
TEST(SplitSlicedLinear, a_last_axis_split_is_one_gemm_per_output) {
  EXPECT_EQ(rewrite("split-sliced-linear", R"(graph g {
  input %x : f32[2,2]
  const %b : f32[3] = [1, 2, 3]
  const %w : f32[2,3] = [1, 2, 3, 4, 5, 6]
  %y = Gemm(%x, %w, %b) : f32[2,3]
  %u = Reshape(%y) {shape=1,2,3} : f32[1,2,3]
  %p, %q = Split(%u) {axis=-1, split=1,2} : f32[1,2,1], f32[1,2,2]
  %s = Add(%p, %q) : f32[1,2,2]
  output %s
}
)",
                    0.0),
            R"(graph g {
  input %x : f32[2,2]
  const %p.bias : f32[1] = [1]
  const %p.weight : f32[2,1] = [1, 4]
  const %q.bias : f32[2] = [2, 3]
  const %q.weight : f32[2,2] = [2, 3, 5, 6]
  %p.linear = Gemm(%x, %p.weight, %p.bias) : f32[2,1]
  %q.linear = Gemm(%x, %q.weight, %q.bias) : f32[2,2]
  %p = Reshape(%p.linear) {shape=1,2,1} : f32[1,2,1] @p.unflatten
  %q = Reshape(%q.linear) {shape=1,2,2} : f32[1,2,2] @q.unflatten
  %s = Add(%p, %q) : f32[1,2,2]
  output %s
}
)");
}

TEST(SplitSlicedLinear, leaves_overlaps_other_readers_other_axes_and_steps_alone) {
  const std::string head = R"(graph g {
  input %x : f32[2,2]
  const %w : f32[2,4] = [1, 2, 3, 4, 5, 6, 7, 8]
  %y = Gemm(%x, %w) : f32[2,4]
)";
  for (const std::string& tail :
       {// Overlapping column ranges.
        std::string(R"(  %a = Slice(%y) {starts=[0], ends=[3], axes=[1], steps=[1]} : f32[2,3]
  %c = Slice(%y) {starts=[2], ends=[4], axes=[1], steps=[1]} : f32[2,2]
  output %a, %c
}
)"),
        // A reader that is no Slice (the whole result is needed).
        std::string(R"(  %a = Slice(%y) {starts=[0], ends=[2], axes=[1], steps=[1]} : f32[2,2]
  %c = Relu(%y) : f32[2,4]
  output %a, %c
}
)"),
        // A Split of the rows.
        std::string(R"(  %a, %c = Split(%y) {axis=0, split=1,1} : f32[1,4], f32[1,4]
  output %a, %c
}
)"),
        // A Slice of the rows, and a strided Slice of the columns.
        std::string(R"(  %a = Slice(%y) {starts=[0], ends=[1], axes=[0], steps=[1]} : f32[1,4]
  %c = Slice(%y) {starts=[0], ends=[4], axes=[1], steps=[2]} : f32[2,2]
  output %a, %c
}
)")}) {
    EXPECT_EQ(rewrite("split-sliced-linear", head + tail), head + tail);
  }
}

// --- constant-folding of the modern kinds ----------------------------------------------------

TEST(ConstantFoldingModern, folds_the_causal_mask_chain_and_elementwise_kinds) {
  // Trilu(upper, k=1) of a -inf fill, then Transpose: the lower-triangle mask; Where selects,
  // Sub broadcasts, Pow squares, Erf at 0 is 0, Gather picks rows, Slice and Expand move.
  EXPECT_EQ(rewrite("constant-folding", R"(graph g {
  input %x : f32[2,2]
  const %c : f32[2,1] = [1, 0]
  const %fill : f32[2,2] = [-inf, -inf, -inf, -inf]
  const %p : f32[2] = [2, 3]
  const %v : f32[2] = [3, -2]
  const %z : f32[1] = [0]
  %tri = Trilu(%fill) {k=1} : f32[2,2]
  %tt = Transpose(%tri) {perm=1,0} : f32[2,2]
  %sel = Where(%c, %v, %z) : f32[2,2]
  %sub = Sub(%v, %c) : f32[2,2]
  %sq = Pow(%sub, %p) : f32[2,2]
  %e = Erf(%z) : f32[1]
  %g = Gather(%sq) {indices=1,0, indices_shape=[2]} : f32[2,2]
  %sl = Slice(%g) {starts=[1], ends=[2], axes=[0], steps=[1]} : f32[1,2]
  %ex = Expand(%e) {shape=2,2} : f32[2,2]
  %y1 = Add(%x, %tt) : f32[2,2]
  %y2 = Add(%sel, %sl) : f32[2,2]
  %y3 = Add(%y2, %ex) : f32[2,2]
  %y4 = Mul(%x, %y3) : f32[2,2]
  output %y1, %y4
}
)"),
            // tt = [[0, 0], [-inf, 0]]; sel = [[3, -2], [0, 0]]; sub = [[2, -3], [3, -2]];
            // sq = sub ^ [2, 3] = [[4, -27], [9, -8]]; g = rows 1, 0 = [[9, -8], [4, -27]];
            // sl = row 1 of g = [4, -27]; y3 = sel + sl + 0 = [[7, -29], [4, -27]].
            R"(graph g {
  input %x : f32[2,2]
  const %tt : f32[2,2] = [0, 0, -inf, 0]
  const %y3 : f32[2,2] = [7, -29, 4, -27]
  %y1 = Add(%x, %tt) : f32[2,2]
  %y4 = Mul(%x, %y3) : f32[2,2]
  output %y1, %y4
}
)");
}

TEST(ConstantFoldingModern, folds_payload_less_constants_structurally) {
  // A zoo model built without weights: the Expand folds to a constant without payload, as it
  // folds to one with values when the weights are there (so both prepare to the same graph).
  ir::Graph graph = ir::parse_text(R"(graph g {
  input %x : f32[2,4]
  const %t : f32[1,4] #elided
  %e = Expand(%t) {shape=2,4} : f32[2,4]
  %y = Add(%x, %e) : f32[2,4]
  output %y
}
)",
                                   "test.tir");
  ASSERT_TRUE(run_passes(graph, "constant-folding").ok());
  EXPECT_EQ(ir::to_text(graph), R"(graph g {
  input %x : f32[2,4]
  const %e : f32[2,4] #elided
  %y = Add(%x, %e) : f32[2,4]
  output %y
}
)");
}

}  // namespace
}  // namespace tessel::passes
