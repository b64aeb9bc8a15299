// Einsum as the IR ops it names: one operand is a Transpose (and a ReduceSum of the labels the
// output drops); two operands are a batched matrix product, each operand transposed and
// reshaped to [batch..., free, contracted] or [batch..., contracted, free], one MatMul, and the
// result reshaped and transposed to the output's labels (MaxViT's attention writes
// "B G H I D, B G H J D -> B G H I J").
#include <algorithm>
#include <cctype>
#include <map>

#include "compiler/frontend/importer.hpp"

namespace tessel::frontend::detail {
namespace {

struct Equation {
  std::vector<std::string> inputs;  ///< one label string per operand
  std::string output;
};

/// The labels of `term` in order; failure names the character at fault.
Result<std::string> labels_of(const std::string& term) {
  std::string labels;
  for (char c : term) {
    if (c == ' ') continue;
    if (c == '.') return fail("an ellipsis ('...') is not supported");
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return fail(std::string("'") + c + "' is not a label (letters only)");
    if (labels.find(c) != std::string::npos)
      return fail(std::string("label '") + c + "' repeats in one term (a diagonal)");
    labels += c;
  }
  return labels;
}

Result<Equation> parse_equation(const std::string& text) {
  Equation eq;
  const std::size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = lhs.find(',', start);
    auto labels = labels_of(lhs.substr(start, comma - start));
    if (!labels) return labels.failure();
    eq.inputs.push_back(labels.value());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    auto labels = labels_of(text.substr(arrow + 2));
    if (!labels) return labels.failure();
    eq.output = labels.value();
  } else {  // implicit output: the labels that appear once, in alphabetical order
    std::string all;
    for (const std::string& in : eq.inputs) all += in;
    for (char c : all)
      if (std::count(all.begin(), all.end(), c) == 1) eq.output += c;
    std::sort(eq.output.begin(), eq.output.end());
  }
  for (char c : eq.output) {
    const bool known = std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](const std::string& in) {
      return in.find(c) != std::string::npos;
    });
    if (!known) return fail(std::string("output label '") + c + "' is in no input");
  }
  return eq;
}

Ints permutation(const std::string& from, const std::string& to) {
  Ints perm;
  for (char c : to) perm.push_back(static_cast<std::int64_t>(from.find(c)));
  return perm;
}

bool is_identity(const Ints& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

}  // namespace

void Importer::convert_einsum() {
  check_attributes({"equation"});
  expect_outputs(1);
  auto parsed = parse_equation(attr_string("equation", ""));
  if (!parsed) fail_node("equation: " + parsed.reason());
  Equation eq = parsed.value();
  if (eq.inputs.size() != static_cast<std::size_t>(input_count()))
    fail_node("the equation names " + std::to_string(eq.inputs.size()) +
              " operands, the node has " + std::to_string(input_count()));
  if (eq.inputs.size() > 2) fail_node("an Einsum of more than two operands is not supported");
  const std::string base = node().output(0);
  std::map<char, std::int64_t> extent;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < eq.inputs.size(); ++i) {
    const ir::Shape shape = input_shape(static_cast<int>(i));
    if (shape.size() != eq.inputs[i].size())
      fail_node("operand " + std::to_string(i) + " " + ir::shape_string(shape) + " has rank " +
                std::to_string(shape.size()) + ", its term '" + eq.inputs[i] + "' " +
                std::to_string(eq.inputs[i].size()) + " labels");
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const char c = eq.inputs[i][d];
      const auto [at, fresh] = extent.emplace(c, shape[d]);
      if (!fresh && at->second != shape[d])
        fail_node(std::string("label '") + c + "' has extents " + std::to_string(at->second) +
                  " and " + std::to_string(shape[d]) + " (broadcasting is not supported)");
    }
    names.push_back(data_input(static_cast<int>(i)));
  }
  const auto in_output = [&](char c) { return eq.output.find(c) != std::string::npos; };
  bool summed_any = false;
  // Labels one operand alone has and the output drops are summed away first.
  for (std::size_t i = 0; i < eq.inputs.size(); ++i) {
    std::string kept;
    Ints summed;
    for (std::size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const char c = eq.inputs[i][d];
      const bool other = eq.inputs.size() == 2 && eq.inputs[1 - i].find(c) != std::string::npos;
      if (in_output(c) || other) {
        kept += c;
      } else {
        summed.push_back(static_cast<std::int64_t>(d));
      }
    }
    if (summed.empty()) continue;
    summed_any = true;
    names[i] = emit_temp(ir::OpKind::ReduceSum, {names[i]},
                         {{"axes", summed}, {"keepdims", std::int64_t{0}}},
                         base + ".sum" + std::to_string(i));
    eq.inputs[i] = kept;
  }
  if (eq.inputs.size() == 1) {
    const Ints perm = permutation(eq.inputs[0], eq.output);
    if (is_identity(perm) && !summed_any) {
      alias_output_to_input();
    } else if (is_identity(perm)) {
      emit(ir::OpKind::Reshape, {names[0]}, {{"shape", shape_of(names[0])}}, base);
    } else {
      emit(ir::OpKind::Transpose, {names[0]}, {{"perm", perm}}, base);
    }
    return;
  }
  // Two operands: batch labels (both and the output), each one's free labels (it and the output),
  // the contracted labels (both, not the output).
  const std::string &a = eq.inputs[0], &b = eq.inputs[1];
  std::string batch, free_a, free_b, contracted;
  for (char c : a) {
    const bool in_b = b.find(c) != std::string::npos;
    (in_b ? (in_output(c) ? batch : contracted) : free_a) += c;
  }
  for (char c : b)
    if (a.find(c) == std::string::npos) free_b += c;
  const auto size = [&](const std::string& labels) {
    std::int64_t n = 1;
    for (char c : labels) n *= extent.at(c);
    return n;
  };
  Ints batch_dims;
  for (char c : batch) batch_dims.push_back(extent.at(c));
  // Operand -> [batch..., rows, cols] in the label order `order`, then the 3-part shape.
  const auto arrange = [&](std::string& name, const std::string& labels, const std::string& order,
                           std::int64_t rows, std::int64_t cols, const std::string& tag) {
    const Ints perm = permutation(labels, order);
    if (!is_identity(perm))
      name = emit_temp(ir::OpKind::Transpose, {name}, {{"perm", perm}}, base + "." + tag + "t");
    Ints shape = batch_dims;
    shape.push_back(rows);
    shape.push_back(cols);
    if (shape != shape_of(name))
      name = emit_temp(ir::OpKind::Reshape, {name}, {{"shape", shape}}, base + "." + tag + "r");
  };
  arrange(names[0], a, batch + free_a + contracted, size(free_a), size(contracted), "a");
  arrange(names[1], b, batch + contracted + free_b, size(contracted), size(free_b), "b");
  // The product's labels are batch + free_a + free_b; the output may order them otherwise.
  const std::string product = batch + free_a + free_b;
  const Ints perm = permutation(product, eq.output);
  Ints product_dims = batch_dims;
  for (char c : free_a + free_b) product_dims.push_back(extent.at(c));
  if (product_dims.empty()) product_dims = {1};  // a scalar result (the IR has no rank 0)
  // The MatMul gives [batch..., |free_a|, |free_b|]: one axis per side unless a side has no free
  // label or several.
  const bool reshaped = free_a.size() != 1 || free_b.size() != 1;
  if (!reshaped && is_identity(perm)) {
    emit(ir::OpKind::MatMul, {names[0], names[1]}, {}, base);
    return;
  }
  std::string value = emit_temp(ir::OpKind::MatMul, {names[0], names[1]}, {}, base + ".matmul");
  if (reshaped && is_identity(perm)) {
    emit(ir::OpKind::Reshape, {value}, {{"shape", product_dims}}, base);
    return;
  }
  if (reshaped)
    value = emit_temp(ir::OpKind::Reshape, {value}, {{"shape", product_dims}}, base + ".product");
  emit(ir::OpKind::Transpose, {value}, {{"perm", perm}}, base);
}

}  // namespace tessel::frontend::detail
