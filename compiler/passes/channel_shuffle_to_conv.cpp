// Pass channel-shuffle-to-conv: ShuffleNet's channel shuffle, Reshape [N, C, H, W] ->
// [N, g, C/g, H, W], Transpose perm [0, 2, 1, 3, 4], Reshape back to [N, C, H, W], becomes one
// 1x1 Conv whose weights are the permutation (a 0/1 matrix), which the integer path has: the
// accelerator's matrix unit moves the channels, exactly (each output is one input times one).
#include <cstdint>
#include <vector>

#include "compiler/passes/pass.hpp"
#include "compiler/passes/pattern.hpp"

namespace tessel::passes {
namespace {

using ir::OpKind;

bool is_shape(const ir::Graph& graph, const std::string& tensor, std::size_t rank) {
  const ir::Tensor& t = graph.tensor(tensor);
  if (t.shape.size() != rank || t.dtype != ir::DType::f32) return false;
  for (std::int64_t d : t.shape)
    if (d <= 0) return false;
  return true;
}

// Matched at the Reshape back to 4D: its input the Transpose, the Transpose's the Reshape to 5D,
// each read by the next alone.
std::optional<detail::Rewrite> match_shuffle(const ir::Graph& graph, ir::OpId id) {
  const ir::Op& back = graph.op(id);
  if (back.kind != OpKind::Reshape || !is_shape(graph, back.outputs[0], 4)) return std::nullopt;
  const auto transpose_id = graph.producer(back.inputs[0]);
  if (!transpose_id || detail::sole_reader(graph, back.inputs[0]) != id) return std::nullopt;
  const ir::Op& transpose = graph.op(*transpose_id);
  if (transpose.kind != OpKind::Transpose ||
      transpose.get_ints("perm") != std::vector<std::int64_t>{0, 2, 1, 3, 4})
    return std::nullopt;
  const auto split_id = graph.producer(transpose.inputs[0]);
  if (!split_id || detail::sole_reader(graph, transpose.inputs[0]) != *transpose_id)
    return std::nullopt;
  const ir::Op& split = graph.op(*split_id);
  if (split.kind != OpKind::Reshape || !is_shape(graph, split.outputs[0], 5) ||
      !is_shape(graph, split.inputs[0], 4) ||
      !detail::same_shape(graph, split.inputs[0], back.outputs[0]))
    return std::nullopt;
  const ir::Shape& x = graph.tensor(split.inputs[0]).shape;
  const ir::Shape& five = graph.tensor(split.outputs[0]).shape;
  const std::int64_t channels = x[1], groups = five[1], per_group = five[2];
  if (five[0] != x[0] || groups * per_group != channels || five[3] != x[2] || five[4] != x[3])
    return std::nullopt;
  // Output channel j = b * groups + a reads input channel a * per_group + b.
  std::vector<float> weights(static_cast<std::size_t>(channels * channels), 0.0f);
  for (std::int64_t j = 0; j < channels; ++j) {
    const std::int64_t a = j % groups, b = j / groups;
    weights[static_cast<std::size_t>(j * channels + a * per_group + b)] = 1.0f;
  }
  detail::Rewrite rewrite;
  const std::string w = graph.unique_name(back.name + ".permutation");
  rewrite.constants.push_back(detail::make_constant(w, {channels, channels, 1, 1}, weights));
  using Ints = std::vector<std::int64_t>;
  const ir::Attrs one_by_one = {{"kernel", Ints{1, 1}},
                                {"stride", Ints{1, 1}},
                                {"pad", Ints{0, 0, 0, 0}},
                                {"group", std::int64_t{1}}};
  rewrite.removed = {*split_id, *transpose_id, id};
  rewrite.replacement =
      ir::Op{back.name, OpKind::Conv, {split.inputs[0], w}, back.outputs, one_by_one};
  return rewrite;
}

Status run_channel_shuffle_to_conv(ir::Graph& graph) {
  return detail::rewrite_all(graph, match_shuffle);
}

}  // namespace

const PassInfo& channel_shuffle_to_conv_pass() {
  static const PassInfo info{
      "channel-shuffle-to-conv",
      "Reshape to [N, g, C/g, H, W], Transpose [0,2,1,3,4], Reshape back -> a 1x1 Conv whose "
      "weights are the channel permutation",
      run_channel_shuffle_to_conv};
  return info;
}

}  // namespace tessel::passes
