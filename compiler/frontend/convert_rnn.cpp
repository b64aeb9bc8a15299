// Converters for the recurrent ops LSTM and GRU, unrolled over the model's fixed sequence length
// into Gemm, Add, Mul, Sub, Sigmoid, Tanh, Slice, Split, Concat, Reshape and Transpose. ONNX
// semantics exactly (gate orders iofc and zrh, layout 0 and 1, forward, reverse and
// bidirectional); default activations only, no clip, no peepholes, no input_forget.
#include <string>
#include <vector>

#include "compiler/frontend/importer.hpp"
#include "compiler/ir/shape_inference.hpp"

namespace tessel::frontend::detail {
namespace {

/// Rows [first, first + count) of direction `d` of a [directions, rows, cols] constant.
ConstantData rows_of(const ConstantData& w, std::int64_t d, std::int64_t first,
                     std::int64_t count) {
  const std::int64_t rows = w.dims[1], cols = w.dims[2];
  ConstantData out = ConstantData::of_floats({count, cols}, {});
  const auto begin = w.floats.begin() + (d * rows + first) * cols;
  out.floats.assign(begin, begin + count * cols);
  return out;
}

/// Entries [first, first + count) of direction `d` of a [directions, n] constant.
ConstantData part_of(const ConstantData& b, std::int64_t d, std::int64_t first,
                     std::int64_t count) {
  const auto begin = b.floats.begin() + d * b.dims[1] + first;
  return ConstantData::of_floats({count}, std::vector<float>(begin, begin + count));
}

ConstantData sum(ConstantData a, const ConstantData& b) {
  for (std::size_t i = 0; i < a.floats.size(); ++i) a.floats[i] += b.floats[i];
  return a;
}

}  // namespace

std::string Importer::recurrence_base(int max_outputs) const {
  if (node().output_size() > max_outputs) {
    fail_node("has " + std::to_string(node().output_size()) + " outputs; " + node().op_type() +
              " has at most " + std::to_string(max_outputs));
  }
  for (const std::string& name : node().output()) {
    if (!name.empty()) return name;
  }
  fail_node("has no output");
}

std::vector<std::string> Importer::emit_split(const std::string& x, const Ints& sizes,
                                              const std::vector<std::string>& suffixes,
                                              const std::string& base) {
  std::vector<std::string> parts;
  for (const std::string& suffix : suffixes) parts.push_back(fresh_tensor_name(base + suffix));
  ir::Op split{op_name(base + ".split"),
               ir::OpKind::Split,
               {x},
               parts,
               {{"axis", std::int64_t{1}}, {"split", sizes}}};
  auto id = graph_.add_op(std::move(split));
  if (!id) fail_node(id.reason());
  if (auto status = ir::infer_shapes(graph_, id.value()); !status) fail_node(status.reason());
  return parts;
}

Importer::Recurrence Importer::read_recurrence(std::int64_t gates, const std::string& base) {
  Recurrence rec;
  rec.gates = gates;
  const std::string direction = attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    fail_node("direction " + in_quotes(direction) + " is not forward, reverse or bidirectional");
  }
  rec.directions = direction == "bidirectional" ? 2 : 1;
  rec.reverse = direction == "reverse";
  if (attribute("activations", onnx::AttributeProto_AttributeType_STRINGS) ||
      attribute("activation_alpha", onnx::AttributeProto_AttributeType_FLOATS) ||
      attribute("activation_beta", onnx::AttributeProto_AttributeType_FLOATS)) {
    fail_node("custom activations are not supported (only the defaults: Sigmoid, Tanh)");
  }
  if (attribute("clip", onnx::AttributeProto_AttributeType_FLOAT)) {
    fail_node("attribute 'clip' is not supported");
  }
  const std::int64_t layout = attr_int("layout", 0);
  if (layout != 0 && layout != 1) fail_node("layout " + std::to_string(layout) + " must be 0 or 1");
  rec.batch_major = layout == 1;
  for (int slot = 1; slot <= 3; ++slot) {
    if (has_input(slot) && !is_constant_input(slot)) {
      fail_node("input " + std::to_string(slot) + " " + in_quotes(node().input(slot)) +
                " (weights or bias) must be a constant");
    }
  }
  const ir::Shape x_shape = input_shape(0);
  if (x_shape.size() != 3)
    fail_node("input X has shape " + ir::shape_string(x_shape) + "; expected rank 3");
  std::string x = data_input(0);
  if (rec.batch_major) {
    x = emit_temp(ir::OpKind::Transpose, {x}, {{"perm", Ints{1, 0, 2}}}, base + ".x");
  }
  const ir::Shape seq_major = shape_of(x);
  rec.x = x;
  rec.seq = seq_major[0];
  rec.batch = seq_major[1];
  rec.input = seq_major[2];
  // Each step becomes a dozen IR ops: the unrolled graph is bounded before it is built.
  if (rec.seq > kMaxRecurrentSteps) {
    fail_node("sequence length " + std::to_string(rec.seq) + " is over the limit of " +
              std::to_string(kMaxRecurrentSteps) + " unrolled steps");
  }
  rec.w = constant_input(1, "W");
  rec.r = constant_input(2, "R");
  const std::int64_t hidden = attr_int("hidden_size", rec.r.dims.size() == 3 ? rec.r.dims[2] : 0);
  if (hidden <= 0 || hidden > kMaxHiddenSize) {
    fail_node("hidden_size " + std::to_string(hidden) + " is outside [1, " +
              std::to_string(kMaxHiddenSize) + "]");
  }
  rec.hidden = hidden;
  const Ints w_dims{rec.directions, gates * hidden, rec.input};
  const Ints r_dims{rec.directions, gates * hidden, hidden};
  if (!rec.w.is_float() || rec.w.dims != w_dims) {
    fail_node("W has shape " + ints_string(rec.w.dims) + "; expected " + ints_string(w_dims));
  }
  if (!rec.r.is_float() || rec.r.dims != r_dims) {
    fail_node("R has shape " + ints_string(rec.r.dims) + "; expected " + ints_string(r_dims));
  }
  const Ints b_dims{rec.directions, 2 * gates * hidden};
  rec.b =
      has_input(3)
          ? constant_input(3, "B")
          : ConstantData::of_floats(
                b_dims, std::vector<float>(
                            static_cast<std::size_t>(2 * gates * hidden * rec.directions), 0.0F));
  if (!rec.b.is_float() || rec.b.dims != b_dims) {
    fail_node("B has shape " + ints_string(rec.b.dims) + "; expected " + ints_string(b_dims));
  }
  if (has_input(4)) {
    if (!is_constant_input(4)) fail_node("sequence_lens must be a constant");
    const ConstantData lens = constant_input(4, "sequence_lens");
    for (std::int64_t i = 0; i < lens.count(); ++i) {
      if (lens.at(i) != static_cast<double>(rec.seq)) {
        fail_node("sequence_lens differ from the sequence length " + std::to_string(rec.seq) +
                  " (variable lengths are not supported)");
      }
    }
  }
  return rec;
}

/// The initial state of direction `d` ([batch, hidden]) from input `slot`, or nullopt where it
/// is zero: absent, or a constant of zeros. The first step then leaves out the terms that read
/// it (a product with zero state would be an activation that is zero on every input, which has
/// no quantization scale, or a constant that the quantizer does not take).
std::optional<std::string> Importer::initial_state(const Recurrence& rec, int slot, std::int64_t d,
                                                   const std::string& base) {
  const Ints state{rec.batch, rec.hidden};
  if (!has_input(slot)) return std::nullopt;
  const Ints expected = rec.batch_major ? Ints{rec.batch, rec.directions, rec.hidden}
                                        : Ints{rec.directions, rec.batch, rec.hidden};
  if (input_shape(slot) != expected) {
    fail_node("initial state " + in_quotes(node().input(slot)) + " has shape " +
              ir::shape_string(input_shape(slot)) + "; expected " + ints_string(expected));
  }
  if (is_constant_input(slot)) {
    const ConstantData values = constant_input(slot, "initial state");
    bool zero = true;
    for (std::int64_t i = 0; i < values.count() && zero; ++i) zero = values.at(i) == 0.0;
    if (zero) return std::nullopt;
  }
  const std::int64_t axis = rec.batch_major ? 1 : 0;
  const std::string part = emit_temp(
      ir::OpKind::Slice, {data_input(slot)},
      {{"starts", Ints{d}}, {"ends", Ints{d + 1}}, {"axes", Ints{axis}}, {"steps", Ints{1}}},
      base + ".slice");
  return emit_temp(ir::OpKind::Reshape, {part}, {{"shape", state}}, base);
}

/// Emits the graph outputs Y ([seq, dirs, batch, hidden], or batch-major) and the last states.
void Importer::emit_recurrence_outputs(const Recurrence& rec,
                                       const std::vector<std::vector<std::string>>& hidden_steps,
                                       const std::vector<std::vector<std::string>>& last_states) {
  const std::string base = recurrence_base(3);
  if (output_used(0)) {
    // Every step's [batch, hidden] rows in Y's order (step, then direction) as one Concat of
    // rows, [seq * dirs * batch, hidden], then one Reshape to [seq, dirs, batch, hidden]: token
    // rows, as the accelerator path reads them (a Concat of [1, 1, batch, hidden] steps along
    // axis 0 would be a 4-D map with its channels last).
    std::vector<std::string> rows;
    for (std::int64_t t = 0; t < rec.seq; ++t) {
      for (std::int64_t d = 0; d < rec.directions; ++d)
        rows.push_back(hidden_steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)]);
    }
    const std::string stacked =
        rows.size() == 1
            ? rows[0]
            : emit_temp(ir::OpKind::Concat, rows, {{"axis", std::int64_t{0}}}, base + ".rows");
    const Ints y_shape{rec.seq, rec.directions, rec.batch, rec.hidden};
    if (rec.batch_major) {
      const std::string y =
          emit_temp(ir::OpKind::Reshape, {stacked}, {{"shape", y_shape}}, base + ".y");
      emit(ir::OpKind::Transpose, {y}, {{"perm", Ints{2, 0, 1, 3}}}, node().output(0));
    } else {
      emit(ir::OpKind::Reshape, {stacked}, {{"shape", y_shape}}, node().output(0));
    }
  }
  for (std::size_t state = 0; state < last_states.size(); ++state) {
    const int slot = static_cast<int>(state) + 1;
    if (!output_used(slot)) continue;
    std::vector<std::string> dirs;
    for (std::int64_t d = 0; d < rec.directions; ++d) {
      const Ints shape =
          rec.batch_major ? Ints{rec.batch, 1, rec.hidden} : Ints{1, rec.batch, rec.hidden};
      dirs.push_back(emit_temp(ir::OpKind::Reshape,
                               {last_states[state][static_cast<std::size_t>(d)]},
                               {{"shape", shape}}, node().output(slot) + ".d" + std::to_string(d)));
    }
    const std::int64_t axis = rec.batch_major ? 1 : 0;
    if (dirs.size() == 1) {
      const Ints shape =
          rec.batch_major ? Ints{rec.batch, 1, rec.hidden} : Ints{1, rec.batch, rec.hidden};
      emit(ir::OpKind::Reshape, {dirs[0]}, {{"shape", shape}}, node().output(slot));
    } else {
      emit(ir::OpKind::Concat, dirs, {{"axis", axis}}, node().output(slot));
    }
  }
}

void Importer::convert_lstm() {
  check_attributes({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                    "hidden_size", "input_forget", "layout"});
  expect_inputs(3, 8);
  if (attr_int("input_forget", 0) != 0) fail_node("input_forget=1 is not supported");
  if (has_input(7)) fail_node("peephole weights (input 7 'P') are not supported");
  const std::string base = recurrence_base(3);
  Recurrence rec = read_recurrence(4, base);
  const std::int64_t h = rec.hidden;
  const std::string x_rows =
      emit_temp(ir::OpKind::Reshape, {rec.x}, {{"shape", Ints{rec.seq * rec.batch, rec.input}}},
                base + ".xrows");
  std::vector<std::vector<std::string>> hidden_steps(static_cast<std::size_t>(rec.directions));
  std::vector<std::vector<std::string>> last(
      2, std::vector<std::string>(static_cast<std::size_t>(rec.directions)));
  for (std::int64_t d = 0; d < rec.directions; ++d) {
    const std::string tag = base + ".d" + std::to_string(d);
    const std::string w = add_constant(tag + ".W", rows_of(rec.w, d, 0, 4 * h), node_where(node_));
    const std::string r = add_constant(tag + ".R", rows_of(rec.r, d, 0, 4 * h), node_where(node_));
    const std::string bias =
        add_constant(tag + ".B", sum(part_of(rec.b, d, 0, 4 * h), part_of(rec.b, d, 4 * h, 4 * h)),
                     node_where(node_));
    // The input projection of every step at once: [seq*batch, 4h].
    const std::string x_proj = emit_temp(ir::OpKind::Gemm, {x_rows, w, bias},
                                         {{"transB", std::int64_t{1}}}, tag + ".xproj");
    // Empty: a zero state (the first step's recurrent product and kept cell drop out).
    std::string hidden = initial_state(rec, 5, d, tag + ".h0").value_or("");
    std::string cell = initial_state(rec, 6, d, tag + ".c0").value_or("");
    const bool backward = rec.reverse || d == 1;
    hidden_steps[static_cast<std::size_t>(d)].resize(static_cast<std::size_t>(rec.seq));
    for (std::int64_t step = 0; step < rec.seq; ++step) {
      const std::int64_t t = backward ? rec.seq - 1 - step : step;
      const std::string s = tag + ".t" + std::to_string(t);
      const std::string xt = emit_temp(ir::OpKind::Slice, {x_proj},
                                       {{"starts", Ints{t * rec.batch}},
                                        {"ends", Ints{(t + 1) * rec.batch}},
                                        {"axes", Ints{0}},
                                        {"steps", Ints{1}}},
                                       s + ".x");
      std::string gates = xt;
      if (!hidden.empty()) {
        const std::string ht =
            emit_temp(ir::OpKind::Gemm, {hidden, r}, {{"transB", std::int64_t{1}}}, s + ".h");
        gates = emit_temp(ir::OpKind::Add, {xt, ht}, {}, s + ".gates");
      }
      const auto parts = emit_split(gates, Ints{h, h, h, h}, {".i", ".o", ".f", ".c"}, s);
      const std::string i = emit_temp(ir::OpKind::Sigmoid, {parts[0]}, {}, s + ".sig_i");
      const std::string o = emit_temp(ir::OpKind::Sigmoid, {parts[1]}, {}, s + ".sig_o");
      const std::string c = emit_temp(ir::OpKind::Tanh, {parts[3]}, {}, s + ".tanh_c");
      const std::string write = emit_temp(ir::OpKind::Mul, {i, c}, {}, s + ".write");
      if (cell.empty()) {
        cell = write;
      } else {
        const std::string f = emit_temp(ir::OpKind::Sigmoid, {parts[2]}, {}, s + ".sig_f");
        const std::string keep = emit_temp(ir::OpKind::Mul, {f, cell}, {}, s + ".keep");
        cell = emit_temp(ir::OpKind::Add, {keep, write}, {}, s + ".C");
      }
      const std::string squashed = emit_temp(ir::OpKind::Tanh, {cell}, {}, s + ".tanh_C");
      hidden = emit_temp(ir::OpKind::Mul, {o, squashed}, {}, s + ".H");
      hidden_steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)] = hidden;
    }
    last[0][static_cast<std::size_t>(d)] = hidden;
    last[1][static_cast<std::size_t>(d)] = cell;
  }
  emit_recurrence_outputs(rec, hidden_steps, last);
}

void Importer::convert_gru() {
  check_attributes({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                    "hidden_size", "layout", "linear_before_reset"});
  expect_inputs(3, 6);
  const std::string base = recurrence_base(2);
  Recurrence rec = read_recurrence(3, base);
  const bool linear_before_reset = attr_int("linear_before_reset", 0) != 0;
  const std::int64_t h = rec.hidden;
  const std::string x_rows =
      emit_temp(ir::OpKind::Reshape, {rec.x}, {{"shape", Ints{rec.seq * rec.batch, rec.input}}},
                base + ".xrows");
  std::vector<std::vector<std::string>> hidden_steps(static_cast<std::size_t>(rec.directions));
  std::vector<std::vector<std::string>> last(
      1, std::vector<std::string>(static_cast<std::size_t>(rec.directions)));
  for (std::int64_t d = 0; d < rec.directions; ++d) {
    const std::string tag = base + ".d" + std::to_string(d);
    const std::string where = node_where(node_);
    const std::string w = add_constant(tag + ".W", rows_of(rec.w, d, 0, 3 * h), where);
    // Rb's z and r parts (and h's, without linear_before_reset) are added whatever the state:
    // they join Wb in the input projection, and the recurrent Gemms take no bias.
    ConstantData input_bias = part_of(rec.b, d, 0, 3 * h);
    const ConstantData recurrent_bias = part_of(rec.b, d, 3 * h, 3 * h);
    const std::int64_t folded = linear_before_reset ? 2 * h : 3 * h;
    for (std::int64_t i = 0; i < folded; ++i)
      input_bias.floats[static_cast<std::size_t>(i)] +=
          recurrent_bias.floats[static_cast<std::size_t>(i)];
    const std::string w_bias = add_constant(tag + ".Wb", input_bias, where);
    const std::string r_zr = add_constant(tag + ".Rzr", rows_of(rec.r, d, 0, 2 * h), where);
    const std::string r_h = add_constant(tag + ".Rh", rows_of(rec.r, d, 2 * h, h), where);
    const std::string rb_h = add_constant(tag + ".Rbh", part_of(rec.b, d, 5 * h, h), where);
    const std::string x_proj = emit_temp(ir::OpKind::Gemm, {x_rows, w, w_bias},
                                         {{"transB", std::int64_t{1}}}, tag + ".xproj");
    // Empty: a zero state (the first step's recurrent products drop out).
    std::string hidden = initial_state(rec, 5, d, tag + ".h0").value_or("");
    const bool backward = rec.reverse || d == 1;
    hidden_steps[static_cast<std::size_t>(d)].resize(static_cast<std::size_t>(rec.seq));
    for (std::int64_t step = 0; step < rec.seq; ++step) {
      const std::int64_t t = backward ? rec.seq - 1 - step : step;
      const std::string s = tag + ".t" + std::to_string(t);
      const std::string xt = emit_temp(ir::OpKind::Slice, {x_proj},
                                       {{"starts", Ints{t * rec.batch}},
                                        {"ends", Ints{(t + 1) * rec.batch}},
                                        {"axes", Ints{0}},
                                        {"steps", Ints{1}}},
                                       s + ".x");
      const auto xparts = emit_split(xt, Ints{h, h, h}, {".xz", ".xr", ".xh"}, s);
      std::string zsum = xparts[0], rsum = xparts[1];
      if (!hidden.empty()) {
        const std::string hzr =
            emit_temp(ir::OpKind::Gemm, {hidden, r_zr}, {{"transB", std::int64_t{1}}}, s + ".hzr");
        const auto hparts = emit_split(hzr, Ints{h, h}, {".hz", ".hr"}, s);
        zsum = emit_temp(ir::OpKind::Add, {xparts[0], hparts[0]}, {}, s + ".zsum");
        rsum = emit_temp(ir::OpKind::Add, {xparts[1], hparts[1]}, {}, s + ".rsum");
      }
      const std::string z = emit_temp(ir::OpKind::Sigmoid, {zsum}, {}, s + ".z");
      // The reset gate scales H' (or H' Rh^T + Rbh): nothing to reset at a zero state
      // without linear_before_reset.
      const std::string rg = linear_before_reset || !hidden.empty()
                                 ? emit_temp(ir::OpKind::Sigmoid, {rsum}, {}, s + ".r")
                                 : "";
      std::string hsum = xparts[2];  // plus the reset recurrent term, where the state is not 0
      if (linear_before_reset) {
        // r * (H' Rh^T + Rbh): r * Rbh alone at a zero state.
        const std::string hh = hidden.empty() ? rb_h
                                              : emit_temp(ir::OpKind::Gemm, {hidden, r_h, rb_h},
                                                          {{"transB", std::int64_t{1}}}, s + ".hh");
        const std::string reset = emit_temp(ir::OpKind::Mul, {rg, hh}, {}, s + ".reset");
        hsum = emit_temp(ir::OpKind::Add, {xparts[2], reset}, {}, s + ".hsum");
      } else if (!hidden.empty()) {
        const std::string reset = emit_temp(ir::OpKind::Mul, {rg, hidden}, {}, s + ".reset");
        const std::string hh =
            emit_temp(ir::OpKind::Gemm, {reset, r_h}, {{"transB", std::int64_t{1}}}, s + ".hh");
        hsum = emit_temp(ir::OpKind::Add, {xparts[2], hh}, {}, s + ".hsum");
      }
      const std::string candidate = emit_temp(ir::OpKind::Tanh, {hsum}, {}, s + ".cand");
      // H = (1 - z) * cand + z * H_prev = cand + z * (H_prev - cand); cand - z * cand at 0.
      if (hidden.empty()) {
        const std::string kept = emit_temp(ir::OpKind::Mul, {z, candidate}, {}, s + ".kept");
        hidden = emit_temp(ir::OpKind::Sub, {candidate, kept}, {}, s + ".H");
      } else {
        const std::string delta = emit_temp(ir::OpKind::Sub, {hidden, candidate}, {}, s + ".delta");
        const std::string kept = emit_temp(ir::OpKind::Mul, {z, delta}, {}, s + ".kept");
        hidden = emit_temp(ir::OpKind::Add, {candidate, kept}, {}, s + ".H");
      }
      hidden_steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(t)] = hidden;
    }
    last[0][static_cast<std::size_t>(d)] = hidden;
  }
  emit_recurrence_outputs(rec, hidden_steps, last);
}

}  // namespace tessel::frontend::detail
