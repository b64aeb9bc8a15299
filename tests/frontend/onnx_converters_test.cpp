// The modern-workload converters and the constant evaluator on hand-built models: the exact IR
// each import gives and the fp32 executor's values, computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/frontend/onnx_import.hpp"
#include "compiler/ir/text.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "support/cancel.hpp"
#include "support/diagnostic.hpp"
#include "tests/frontend/onnx_builder.hpp"

namespace tessel::frontend {
namespace {

using testing::Attr;
using testing::ModelBuilder;
using Ints = std::vector<std::int64_t>;

ir::Graph import(const ModelBuilder& model) {
  return import_onnx_bytes(model.bytes(), "m.onnx");
}

std::string dump(const ir::Graph& graph) {
  return ir::to_text(graph, ir::TextOptions{64});
}

/// Runs `graph` on one input `x` and returns its only output.
std::vector<float> run(const ir::Graph& graph, const ir::Shape& shape, std::vector<float> x) {
  cpu::Executor executor(graph);
  auto out = executor.run({{"x", cpu::TensorData::from_f32(shape, x)}});
  EXPECT_TRUE(out.ok()) << out.reason();
  if (!out.ok()) return {};
  return out.value().begin()->second.to_f32();
}

std::string error_of(const ModelBuilder& model) {
  try {
    import(model);
  } catch (const InputError& error) {
    return error.what();
  }
  return "<no error>";
}

/// An INT64 scalar (rank 0) initializer.
void int_scalar(ModelBuilder& model, const std::string& name, std::int64_t value) {
  auto* tensor = model.proto().mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto_DataType_INT64);
  tensor->add_int64_data(value);
}

TEST(OnnxConverters, shape_gather_unsqueeze_concat_folds_into_the_reshape_target) {
  // torch's x.view(x.size(0), -1): Shape -> Gather(0) -> Unsqueeze -> Concat([n], [-1]).
  ModelBuilder model(13);
  model.input("x", {2, 3, 4})
      .ints("axes0", {0})
      .ints("minus_one", {-1})
      .node("Shape", "shape", {"x"}, {"s"})
      .node("Gather", "batch", {"s", "zero"}, {"n"})
      .node("Unsqueeze", "unsq", {"n", "axes0"}, {"n1"})
      .node("Concat", "cat", {"n1", "minus_one"}, {"target"}, {{"axis", 0}})
      .node("Reshape", "view", {"x", "target"}, {"y"})
      .output("y");
  int_scalar(model, "zero", 0);
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[2,3,4]\n"
            "  %y = Reshape(%x) {shape=2,-1} : f32[2,12] @view\n"
            "  output %y\n"
            "}\n");
}

TEST(OnnxConverters, a_mask_from_range_less_and_where_folds_to_one_constant) {
  // Causal mask of length 3: Where(Range(3)[None,:] > Range(3)[:,None], -1e9, 0), added to x.
  ModelBuilder model(13);
  model.input("x", {3, 3}).ints("ax0", {0}).ints("ax1", {1}).scalar("big", -1e9F).scalar("nil", 0);
  int_scalar(model, "start", 0);
  int_scalar(model, "limit", 3);
  int_scalar(model, "delta", 1);
  model.node("Range", "r", {"start", "limit", "delta"}, {"r"})
      .node("Unsqueeze", "row", {"r", "ax0"}, {"row"})
      .node("Unsqueeze", "col", {"r", "ax1"}, {"col"})
      .node("Greater", "gt", {"row", "col"}, {"future"})
      .node("Where", "mask", {"future", "big", "nil"}, {"mask"})
      .node("Add", "masked", {"x", "mask"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  ASSERT_EQ(graph.num_ops(), 2u);  // the input and one Add
  const auto& mask = graph.tensor("mask");
  EXPECT_TRUE(mask.constant);
  EXPECT_EQ(mask.shape, (ir::Shape{3, 3}));
  EXPECT_EQ(mask.f32_values, (std::vector<float>{0, -1e9F, -1e9F, 0, 0, -1e9F, 0, 0, 0}));
}

TEST(OnnxConverters, matmul_of_3d_activations_and_a_constant_matrix_becomes_reshape_gemm_reshape) {
  // x [2,1,2] @ W [2,3] + b [3]: rows [1,2] and [3,4] times W = [[1,0,1],[0,1,1]], plus b.
  ModelBuilder model(13);
  model.input("x", {2, 1, 2})
      .weight("w", {2, 3}, {1, 0, 1, 0, 1, 1})
      .weight("b", {3}, {0.5F, 0, -1})
      .node("MatMul", "mm", {"x", "w"}, {"mm"})
      .node("Add", "bias", {"mm", "b"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(dump(graph),
            "graph m {\n"
            "  input %x : f32[2,1,2]\n"
            "  const %b : f32[3] = [0.5, 0, -1]\n"
            "  const %w : f32[2,3] = [1, 0, 1, 0, 1, 1]\n"
            "  %mm.rows = Reshape(%x) {shape=2,2} : f32[2,2]\n"
            "  %mm.gemm = Gemm(%mm.rows, %w, %b) : f32[2,3]\n"
            "  %y = Reshape(%mm.gemm) {shape=2,1,3} : f32[2,1,3] @mm\n"
            "  output %y\n"
            "}\n");
  EXPECT_EQ(run(graph, {2, 1, 2}, {1, 2, 3, 4}), (std::vector<float>{1.5F, 2, 2, 3.5F, 4, 6}));
}

TEST(OnnxConverters, matmul_of_two_activations_is_an_ir_matmul_with_broadcast_batch) {
  ModelBuilder model(13);
  model.input("x", {2, 1, 2})
      .input("k", {1, 2, 1})
      .node("MatMul", "mm", {"x", "k"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("y").shape, (ir::Shape{2, 1, 1}));
  cpu::Executor executor(graph);
  auto out =
      executor.run({{"x", cpu::TensorData::from_f32({2, 1, 2}, std::vector<float>{1, 2, 3, 4})},
                    {"k", cpu::TensorData::from_f32({1, 2, 1}, std::vector<float>{10, 1})}});
  ASSERT_TRUE(out.ok()) << out.reason();
  EXPECT_EQ(out.value().at("y").to_f32(), (std::vector<float>{12, 34}));
}

TEST(OnnxConverters, matmul_of_a_vector_promotes_and_drops_the_dimension) {
  // [2] x [2,2] -> [2]: [1,2] @ [[1,2],[3,4]] = [7, 10].
  ModelBuilder model(13);
  model.input("x", {2})
      .weight("w", {2, 2}, {1, 2, 3, 4})
      .node("MatMul", "mm", {"x", "w"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("y").shape, (ir::Shape{2}));
  EXPECT_EQ(run(graph, {2}, {1, 2}), (std::vector<float>{7, 10}));
}

TEST(OnnxConverters, a_scalar_constant_operand_becomes_a_one_element_constant) {
  ModelBuilder model(13);
  model.input("x", {1, 3})
      .scalar("two", 2.0F)
      .node("Mul", "twice", {"x", "two"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("two").shape, (ir::Shape{1}));
  EXPECT_EQ(run(graph, {1, 3}, {1, -2, 0.5F}), (std::vector<float>{2, -4, 1}));
}

TEST(OnnxConverters, opset_11_softmax_on_an_inner_axis_normalises_the_flattened_rest) {
  // Coerced to [1, 2*2]: every element of the all-equal input becomes 1/4.
  ModelBuilder model(11);
  model.input("x", {1, 2, 2}).node("Softmax", "sm", {"x"}, {"y"}, {{"axis", 1}}).output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(dump(graph),
            "graph m {\n"
            "  input %x : f32[1,2,2]\n"
            "  %y.2d = Reshape(%x) {shape=1,4} : f32[1,4]\n"
            "  %y.softmax = Softmax(%y.2d) {axis=1} : f32[1,4]\n"
            "  %y = Reshape(%y.softmax) {shape=1,2,2} : f32[1,2,2] @sm\n"
            "  output %y\n"
            "}\n");
  EXPECT_EQ(run(graph, {1, 2, 2}, {3, 3, 3, 3}), (std::vector<float>{0.25F, 0.25F, 0.25F, 0.25F}));
}

TEST(OnnxConverters, squeeze_and_unsqueeze_take_axes_as_attribute_before_13_and_input_after) {
  for (const std::int64_t opset : {11, 13}) {
    ModelBuilder model(opset);
    model.input("x", {1, 3, 1});
    if (opset < 13) {
      model.node("Squeeze", "sq", {"x"}, {"s"}, {{"axes", Ints{0}}})
          .node("Unsqueeze", "un", {"s"}, {"y"}, {{"axes", Ints{-1}}});
    } else {
      model.ints("a0", {0}).ints("am1", {-1});
      model.node("Squeeze", "sq", {"x", "a0"}, {"s"}).node("Unsqueeze", "un", {"s", "am1"}, {"y"});
    }
    model.output("y");
    const ir::Graph graph = import(model);
    EXPECT_EQ(graph.tensor("s").shape, (ir::Shape{3, 1})) << opset;
    EXPECT_EQ(graph.tensor("y").shape, (ir::Shape{3, 1, 1})) << opset;
  }
}

TEST(OnnxConverters, split_with_num_outputs_makes_the_last_part_smaller) {
  ModelBuilder model(18);
  model.input("x", {5})
      .node("Split", "sp", {"x"}, {"a", "b", "c"}, {{"num_outputs", 3}})
      .output("a")
      .output("b")
      .output("c");
  const ir::Graph graph = import(model);
  const auto split = graph.find_op("sp");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(graph.op(*split).get_ints("split"), (Ints{2, 2, 1}));
  EXPECT_EQ(run(graph, {5}, {1, 2, 3, 4, 5}), (std::vector<float>{1, 2}));
}

TEST(OnnxConverters, gather_of_constant_indices_on_an_activation_keeps_them_as_attributes) {
  // x[:, [2, -1]] on [2,3]: columns 2 and 2.
  ModelBuilder model(13);
  model.input("x", {2, 3})
      .ints("idx", {2, -1})
      .node("Gather", "g", {"x", "idx"}, {"y"}, {{"axis", 1}});
  model.output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(run(graph, {2, 3}, {1, 2, 3, 4, 5, 6}), (std::vector<float>{3, 3, 6, 6}));
}

TEST(OnnxConverters, layernorm_over_the_last_axis) {
  // Row [1, 3]: mean 2, variance 1 -> [-1, 1] (epsilon 0), times scale [2, 1] plus bias [0, 1].
  ModelBuilder model(17);
  model.input("x", {1, 2})
      .weight("g", {2}, {2, 1})
      .weight("b", {2}, {0, 1})
      .node("LayerNormalization", "ln", {"x", "g", "b"}, {"y"}, {{"epsilon", 0.0F}})
      .output("y");
  EXPECT_EQ(run(import(model), {1, 2}, {1, 3}), (std::vector<float>{-2, 2}));
}

TEST(OnnxConverters, reduce_mean_axes_move_from_attribute_to_input_at_opset_18) {
  for (const std::int64_t opset : {17, 18}) {
    ModelBuilder model(opset);
    model.input("x", {2, 2});
    if (opset < 18) {
      model.node("ReduceMean", "rm", {"x"}, {"y"}, {{"axes", Ints{1}}, {"keepdims", 0}});
    } else {
      model.ints("axes", {1}).node("ReduceMean", "rm", {"x", "axes"}, {"y"}, {{"keepdims", 0}});
    }
    model.output("y");
    EXPECT_EQ(run(import(model), {2, 2}, {1, 3, 5, 9}), (std::vector<float>{2, 7})) << opset;
  }
}

// A zero initial state, absent or given as a constant of zeros, leaves out the first step's
// terms that read it (docs/onnx-import.md): no recurrent Gemm, no kept cell at t0 (a product
// with zeros would be an all-zero activation, which has no quantization scale); the values
// are those of the whole recurrence: hidden 1, T 2, W = (0, 0, 0, 1) feeds x into the cell
// gate only, R = (0.5, ...), B = 0, so at t1 the state matters.
TEST(OnnxConverters, a_zero_initial_state_drops_the_first_steps_recurrent_terms) {
  const std::vector<float> x{0.5F, -1.0F};
  std::vector<float> want;
  for (const bool given : {false, true}) {
    ModelBuilder model(14);
    model.input("x", {2, 1, 1})
        .weight("W", {1, 4, 1}, {0, 0, 0, 1})
        .weight("R", {1, 4, 1}, {0.5F, 0.5F, 0.5F, 0.5F});
    std::vector<std::string> inputs{"x", "W", "R"};
    if (given) {
      model.weight("B", {1, 8}, std::vector<float>(8, 0.0F))
          .weight("h0", {1, 1, 1}, {0.0F})
          .weight("c0", {1, 1, 1}, {0.0F});
      inputs.insert(inputs.end(), {"B", "", "h0", "c0"});
    }
    model.node("LSTM", "lstm", inputs, {"Y"}, {{"hidden_size", 1}}).output("Y");
    const ir::Graph graph = import(model);
    int gemms = 0, muls = 0;
    for (ir::OpId id = 0; id < graph.num_ops(); ++id) {
      gemms += graph.op(id).kind == ir::OpKind::Gemm;
      muls += graph.op(id).kind == ir::OpKind::Mul;
    }
    EXPECT_EQ(gemms, 2) << given;  // the input projection and t1's recurrent Gemm
    EXPECT_EQ(muls, 5) << given;   // i * c and o * tanh(C) per step, f * C' at t1
    const std::vector<float> y = run(graph, {2, 1, 1}, x);
    ASSERT_EQ(y.size(), 2u);
    // t0: gates 0 but c = x0: C0 = tanh(x0) / 2, H0 = tanh(C0) / 2; t1: every gate reads
    // 0.5 * H0, c's x1 + 0.5 * H0.
    const double c0 = std::tanh(0.5) / 2, h0 = std::tanh(c0) / 2;
    const double g = 1 / (1 + std::exp(-0.5 * h0));
    const double c1 = g * c0 + g * std::tanh(-1.0 + 0.5 * h0), h1 = g * std::tanh(c1);
    EXPECT_NEAR(y[0], h0, 1e-6) << given;
    EXPECT_NEAR(y[1], h1, 1e-6) << given;
    if (want.empty()) want = y;
    EXPECT_EQ(y, want) << "the given zero state computes as the absent one";
  }
}

TEST(OnnxConverters, bidirectional_lstm_runs_the_second_direction_backwards) {
  // hidden 1, input 1, T 2; W feeds x only into the cell gate c, R and B are 0, so
  // i = o = f = sigmoid(0) = 1/2, C_t = C_prev / 2 + tanh(x_t) / 2, H_t = tanh(C_t) / 2.
  ModelBuilder model(14);
  model.input("x", {2, 1, 1})
      .weight("W", {2, 4, 1}, {0, 0, 0, 1, 0, 0, 0, 1})
      .weight("R", {2, 4, 1}, std::vector<float>(8, 0.0F))
      .node("LSTM", "lstm", {"x", "W", "R"}, {"Y", "Y_h"},
            {{"hidden_size", 1}, {"direction", "bidirectional"}})
      .output("Y")
      .output("Y_h");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("Y").shape, (ir::Shape{2, 2, 1, 1}));
  EXPECT_EQ(graph.tensor("Y_h").shape, (ir::Shape{2, 1, 1}));
  const float a = 0.5F, b = -1.0F;
  cpu::Executor executor(graph);
  auto out = executor.run({{"x", cpu::TensorData::from_f32({2, 1, 1}, std::vector<float>{a, b})}});
  ASSERT_TRUE(out.ok()) << out.reason();
  const double forward0 = std::tanh(a) / 2, forward1 = forward0 / 2 + std::tanh(b) / 2;
  const double backward1 = std::tanh(b) / 2, backward0 = backward1 / 2 + std::tanh(a) / 2;
  const std::vector<double> want{std::tanh(forward0) / 2, std::tanh(backward0) / 2,
                                 std::tanh(forward1) / 2, std::tanh(backward1) / 2};
  const std::vector<float> y = out.value().at("Y").to_f32();
  ASSERT_EQ(y.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  // Y_h: the forward direction's last step (t = 1), the backward one's (t = 0).
  EXPECT_EQ(out.value().at("Y_h").to_f32(), (std::vector<float>{y[2], y[1]}));
}

TEST(OnnxConverters, non_constant_gather_indices_are_refused) {
  ModelBuilder model(13);
  model.input("x", {2, 3}).input("i", {1}).node("Gather", "g", {"x", "i"}, {"y"}).output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'g' (Gather): indices (input 1 'i') are computed at run time; "
            "Tessel takes run-time indices only as rows of a constant table (axis 0: an "
            "embedding)");
  ModelBuilder floats(13);  // a constant table, but float indices (not token ids)
  floats.weight("t", {4, 3}).input("i", {2}).node("Gather", "g", {"t", "i"}, {"y"}).output("y");
  EXPECT_EQ(error_of(floats),
            "m.onnx: error: node 0 'g' (Gather): indices (input 1 'i') are computed in float; "
            "run-time indices must be integer token ids (a graph input of type INT64 or INT32)");
}

// nn.Embedding as torch exports it: Gather(weight, input_ids) with INT64 ids (here through a
// Cast to INT64, as some exporters write), then a position table added.
TEST(OnnxConverters, token_ids_gather_rows_of_a_constant_table_as_an_embedding) {
  ModelBuilder model(13);
  model.ids_input("ids", {1, 4})
      .weight("table", {5, 3})
      .weight("pos", {4, 3})
      .node("Cast", "c", {"ids"}, {"ids64"}, {{"to", 7}})
      .node("Gather", "embed", {"table", "ids64"}, {"e"})
      .node("Add", "add", {"e", "pos"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("ids").dtype, ir::DType::i32);
  EXPECT_EQ(graph.tensor("e").shape, (ir::Shape{1, 4, 3}));
  EXPECT_EQ(graph.op(*graph.producer("e")).kind, ir::OpKind::Embedding);
  cpu::TensorData ids(ir::DType::i32, {1, 4});
  const std::int32_t picked[] = {4, 0, -1, 2};  // -1: the last row, as ONNX's Gather
  std::copy(std::begin(picked), std::end(picked), ids.data<std::int32_t>());
  cpu::Executor executor(graph);
  auto out = executor.run({{"ids", ids}});
  ASSERT_TRUE(out.ok()) << out.reason();
  // table[r][c] = 0.5 (3r + c + 1), pos[p][c] = 0.5 (3p + c + 1).
  std::vector<float> want;
  for (int p = 0; p < 4; ++p) {
    const int r = picked[p] < 0 ? picked[p] + 5 : picked[p];
    for (int c = 0; c < 3; ++c)
      want.push_back(0.5f * float(3 * r + c + 1) + 0.5f * float(3 * p + c + 1));
  }
  EXPECT_EQ(out.value().at("y").to_f32(), want);
}

TEST(OnnxConverters, token_ids_are_read_only_as_embedding_indices) {
  ModelBuilder cast(13);
  cast.ids_input("ids", {4}).node("Cast", "c", {"ids"}, {"f"}, {{"to", 1}}).output("f");
  EXPECT_EQ(error_of(cast),
            "m.onnx: error: node 0 'c' (Cast): Cast of the token ids 'ids' to FLOAT is not "
            "supported (token ids index an embedding table; only INT32/INT64 casts)");
  ModelBuilder add(13);
  add.ids_input("ids", {4}).weight("one", {4}).node("Add", "a", {"ids", "one"}, {"y"}).output("y");
  EXPECT_EQ(error_of(add),
            "m.onnx: error: node 0 'a' (Add): input 0 'ids' holds integer token ids; Tessel reads "
            "them only as the indices of a Gather from a constant table (an embedding)");
  ModelBuilder axis1(13);  // run-time indices on another axis are not an embedding
  axis1.ids_input("ids", {2})
      .weight("t", {4, 3})
      .node("Gather", "g", {"t", "ids"}, {"y"}, {{"axis", 1}})
      .output("y");
  EXPECT_EQ(error_of(axis1),
            "m.onnx: error: node 0 'g' (Gather): indices (input 1 'ids') are computed at run "
            "time; Tessel takes run-time indices only as rows of a constant table (axis 0: an "
            "embedding)");
}

TEST(OnnxConverters, cast_of_an_activation_to_an_integer_is_refused) {
  ModelBuilder model(13);
  model.input("x", {2}).node("Cast", "c", {"x"}, {"y"}, {{"to", 7}}).output("y");
  EXPECT_EQ(
      error_of(model),
      "m.onnx: error: node 0 'c' (Cast): Cast of the activation 'x' to INT64 is not supported "
      "(Tessel's activations are float; only float->float casts are)");
}

TEST(OnnxConverters, resize_with_a_fractional_size_is_refused) {
  ModelBuilder model(13);
  model.input("x", {1, 1, 2, 4}).weight("scales", {4}, {1, 1, 0.6F, 0.6F});
  model.node("Resize", "rs", {"x", "", "scales"}, {"y"}).output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'rs' (Resize): scale 0.600000 on axis 2 of extent 2 gives the "
            "fractional size 1.200000 (not supported: Tessel resizes to whole sizes)");
}

TEST(OnnxConverters, mod_folds_with_the_divisors_sign_and_with_fmod_the_dividends) {
  // swin_t's shifted-window mask computes window ids with Mod. By hand: Python's % gives
  // -7 % 3 = 2, 7 % 3 = 1, -7 % -3 = -1, 7 % -3 = -2; C's fmod gives -1, 1, -1, 1.
  ModelBuilder model(13);
  model.input("x", {4}).ints("a", {-7, 7, -7, 7}).ints("b", {3, 3, -3, -3});
  model.node("Mod", "py", {"a", "b"}, {"m"})
      .node("Mod", "c", {"a", "b"}, {"f"}, {{"fmod", 1}})
      .node("Cast", "m_f", {"m"}, {"mf"}, {{"to", 1}})
      .node("Cast", "f_f", {"f"}, {"ff"}, {{"to", 1}})
      .node("Add", "add_m", {"x", "mf"}, {"y"})
      .node("Add", "add_f", {"y", "ff"}, {"z"})
      .output("z");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("mf").f32_values, (std::vector<float>{2, 1, -1, -2}));
  EXPECT_EQ(graph.tensor("ff").f32_values, (std::vector<float>{-1, 1, -1, 1}));
  ModelBuilder floats(13);
  floats.input("x", {1}).scalar("p", 7.5F).scalar("q", 2.0F);
  floats.node("Mod", "bad", {"p", "q"}, {"r"}).node("Add", "s", {"x", "r"}, {"y"}).output("y");
  EXPECT_EQ(error_of(floats),
            "m.onnx: error: node 0 'bad' (Mod): evaluating it at import (every input is "
            "constant): Mod of floating-point values needs fmod=1");
}

TEST(OnnxConverters, scatter_nd_folds_rows_elements_and_reductions) {
  // data [2,3] = 0.5, 1, ..., 3 (row 0: 0.5 1 1.5; row 1: 2 2.5 3).
  //   rows:      indices [[1],[0]], updates [[10,20,30],[40,50,60]] -> 40 50 60 / 10 20 30
  //   add:       the same, reduction add -> 40.5 51 61.5 / 12 22.5 33
  //   elements:  indices [[0,-1],[1,1]] (-1: the last column), updates [7, 8] -> 0.5 1 7 / 2 8 3
  ModelBuilder model(16);
  model.input("x", {2, 3})
      .weight("data", {2, 3})
      .weight("rows_up", {2, 3}, {10, 20, 30, 40, 50, 60})
      .weight("elem_up", {2}, {7, 8})
      .ints("row_idx_flat", {1, 0})
      .ints("elem_idx_flat", {0, -1, 1, 1})
      .ints("s21", {2, 1})
      .ints("s22", {2, 2});
  model.node("Reshape", "ri", {"row_idx_flat", "s21"}, {"row_idx"})
      .node("Reshape", "ei", {"elem_idx_flat", "s22"}, {"elem_idx"})
      .node("ScatterND", "rows", {"data", "row_idx", "rows_up"}, {"r"})
      .node("ScatterND", "sum", {"data", "row_idx", "rows_up"}, {"a"}, {{"reduction", "add"}})
      .node("ScatterND", "elems", {"data", "elem_idx", "elem_up"}, {"e"})
      .node("Add", "add_r", {"x", "r"}, {"y1"})
      .node("Add", "add_a", {"y1", "a"}, {"y2"})
      .node("Add", "add_e", {"y2", "e"}, {"y"})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("r").f32_values, (std::vector<float>{40, 50, 60, 10, 20, 30}));
  EXPECT_EQ(graph.tensor("a").f32_values, (std::vector<float>{40.5, 51, 61.5, 12, 22.5, 33}));
  EXPECT_EQ(graph.tensor("e").f32_values, (std::vector<float>{0.5, 1, 7, 2, 8, 3}));
  ModelBuilder outside(16);
  outside.input("x", {2, 3}).weight("data", {2, 3}).weight("up", {3}).ints("idx", {2});
  outside.node("ScatterND", "bad", {"data", "idx", "up"}, {"r"})
      .node("Add", "s", {"x", "r"}, {"y"})
      .output("y");
  EXPECT_EQ(error_of(outside),
            "m.onnx: error: node 0 'bad' (ScatterND): evaluating it at import (every input is "
            "constant): index 2 is outside axis 0 of 2");
}

TEST(OnnxConverters, a_training_mode_dropout_of_ratio_zero_is_the_identity) {
  // torchvision's Swin exports F.dropout(p=0.0) in training mode; it drops nothing. A ratio
  // above zero in training mode would drop at random: refused.
  auto model_with_ratio = [](float ratio) {
    ModelBuilder model(13);
    model.input("x", {2}).scalar("ratio", ratio);
    auto* mode = model.proto().mutable_graph()->add_initializer();
    mode->set_name("training");
    mode->set_data_type(onnx::TensorProto_DataType_BOOL);
    mode->add_int32_data(1);
    model.node("Dropout", "drop", {"x", "ratio", "training"}, {"y"}).output("y");
    return model;
  };
  const ir::Graph graph = import(model_with_ratio(0.0F));
  EXPECT_EQ(run(graph, {2}, {1.5F, -2.0F}), (std::vector<float>{1.5F, -2.0F}));
  EXPECT_EQ(error_of(model_with_ratio(0.1F)),
            "m.onnx: error: node 0 'drop' (Dropout): training_mode is true with a nonzero ratio; "
            "Tessel imports inference graphs only");
}

TEST(OnnxConverters, a_pad_of_zeros_is_the_identity) {
  // Swin pads its map to a multiple of the window: pads of 0 when the window divides it.
  ModelBuilder model(13);
  model.input("x", {1, 2, 2, 3}).ints("pads", {0, 0, 0, 0, 0, 0, 0, 0});
  model.node("Pad", "pad", {"x", "pads"}, {"p"}).node("Relu", "relu", {"p"}, {"y"}).output("y");
  EXPECT_EQ(dump(import(model)),
            "graph m {\n"
            "  input %x : f32[1,2,2,3]\n"
            "  %y = Relu(%x) : f32[1,2,2,3] @relu\n"
            "  output %y\n"
            "}\n");
}

TEST(OnnxConverters, a_split_of_a_constant_folds_into_its_parts) {
  // llama_block's export splits an INT64 Expand (grouped-query attention's repeat) at import.
  // Sizes from input 1 (opset 13): [7 | 8 9 10]; opset 18's num_outputs: [1 2 3 | 4 5].
  ModelBuilder model(13);
  model.input("x", {3}).ints("v", {7, 8, 9, 10}).ints("sizes", {1, 3});
  model.node("Split", "split", {"v", "sizes"}, {"p", "q"})
      .node("Cast", "cast", {"q"}, {"qf"}, {{"to", 1}})
      .node("Add", "add", {"x", "qf"}, {"y"})
      .output("y");
  EXPECT_EQ(import(model).tensor("qf").f32_values, (std::vector<float>{8, 9, 10}));
  ModelBuilder eighteen(18);
  eighteen.input("x", {2}).ints("v", {1, 2, 3, 4, 5});
  eighteen.node("Split", "split", {"v"}, {"a", "b"}, {{"num_outputs", 2}})
      .node("Cast", "cast", {"b"}, {"bf"}, {{"to", 1}})
      .node("Add", "add", {"x", "bf"}, {"y"})
      .output("y");
  EXPECT_EQ(import(eighteen).tensor("bf").f32_values, (std::vector<float>{4, 5}));
}

TEST(OnnxConverters, einsum_is_a_batched_matmul_between_transposes) {
  // MaxViT's attention: "B I D, B J D -> B I J" (q k^T per batch) on x [1,2,2] (I = 2, D = 2)
  // and the constant k [1,3,2] (J = 3): x = [[1,2],[3,4]], k = [[1,0],[0,1],[1,1]] gives
  // [[1,2,3],[3,4,7]].
  ModelBuilder model(13);
  model.input("x", {1, 2, 2}).weight("k", {1, 3, 2}, {1, 0, 0, 1, 1, 1});
  model.node("Einsum", "qk", {"x", "k"}, {"y"}, {{"equation", "B I D, B J D -> B I J"}})
      .output("y");
  const ir::Graph graph = import(model);
  EXPECT_EQ(graph.tensor("y").shape, (ir::Shape{1, 2, 3}));
  EXPECT_EQ(run(graph, {1, 2, 2}, {1, 2, 3, 4}), (std::vector<float>{1, 2, 3, 3, 4, 7}));
  // The output in another order than the product's: "bij,bjk->bki" is (x k)^T per batch.
  ModelBuilder swapped(13);
  swapped.input("x", {1, 2, 2}).weight("w", {1, 2, 3}, {1, 0, 1, 0, 1, 1});
  swapped.node("Einsum", "e", {"x", "w"}, {"y"}, {{"equation", "bij,bjk->bki"}}).output("y");
  const ir::Graph g2 = import(swapped);
  EXPECT_EQ(g2.tensor("y").shape, (ir::Shape{1, 3, 2}));
  // x w = [[1,2,3],[3,4,7]]; transposed: [[1,3],[2,4],[3,7]].
  EXPECT_EQ(run(g2, {1, 2, 2}, {1, 2, 3, 4}), (std::vector<float>{1, 3, 2, 4, 3, 7}));
}

TEST(OnnxConverters, einsum_forms_outside_products_and_transposes_are_refused_by_name) {
  auto refusal = [](const char* equation) {
    ModelBuilder model(13);
    model.input("x", {2, 2});
    model.node("Einsum", "e", {"x"}, {"y"}, {{"equation", equation}}).output("y");
    return error_of(model);
  };
  EXPECT_EQ(refusal("...ii->...i"),
            "m.onnx: error: node 0 'e' (Einsum): equation: an ellipsis ('...') is not supported");
  EXPECT_EQ(refusal("ii->i"),
            "m.onnx: error: node 0 'e' (Einsum): equation: label 'i' repeats in one term (a "
            "diagonal)");
  EXPECT_EQ(refusal("ij->k"),
            "m.onnx: error: node 0 'e' (Einsum): equation: output label 'k' is in no input");
}

TEST(OnnxConverters, a_requested_cancel_stops_the_import_between_nodes) {
  // tessel.load_model's Ctrl-C: the node loop polls the thread's token (support/cancel.hpp).
  ModelBuilder model(13);
  model.input("x", {2}).node("Relu", "r", {"x"}, {"y"}).output("y");
  CancelToken token;
  token.request();
  const CancelScope scope(token);
  EXPECT_THROW(import(model), CancelledError);
}

TEST(OnnxConverters, a_folding_failure_names_the_node) {
  ModelBuilder model(13);
  model.input("x", {2}).ints("a", {1, 2}).ints("b", {1, 2, 3});
  model.node("Add", "bad", {"a", "b"}, {"s"}).node("Reshape", "re", {"x", "s"}, {"y"}).output("y");
  EXPECT_EQ(error_of(model),
            "m.onnx: error: node 0 'bad' (Add): evaluating it at import (every input is "
            "constant): shapes [2] and [3] do not broadcast");
}

}  // namespace
}  // namespace tessel::frontend
