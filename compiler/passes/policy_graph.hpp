// The float graph a scheduling policy compiles: BatchNorm folded, or unfolded for `layerwise`.
#pragma once

#include <string_view>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::passes {

/// How BatchNormalization ops are lowered before quantization.
enum class BatchNormLowering {
  Folded,     ///< fold-batchnorm: into the Conv that alone feeds it (the deploy graph)
  Depthwise,  ///< batchnorm-to-depthwise: Caffe's BatchNorm and Scale layers, each a 1x1
              ///< depthwise Conv (the paper's "without optimization" baseline)
};

/// The passes that make a float graph (BatchNorm already lowered; shapes inferred, as every
/// loader leaves them) ready for quantization: constant folding, a packed q|k|v projection's
/// heads taken apart by Slices (split-packed-heads), a fused q|k|v projection split into one
/// per slice (split-sliced-linear), torch's exported repeat_interleave as one
/// Reshape-Expand-Reshape (fuse-repeat-interleave), then the fusions that give the
/// integer path the kinds it has (LayerNormalization, RMSNormalization, Gelu, Silu, HardSwish,
/// the masked Softmax), constants added one after the other as one (fold-constant-adds: Swin's
/// shift mask on its biased scores), a channel shuffle as a 1x1 Conv of its permutation
/// (channel-shuffle-to-conv), Div by a constant as a Mul, and every BatchNormalization left
/// unfolded (no Conv feeds it alone: DenseNet's pre-activation BN) as one depthwise 1x1 Conv. Each
/// pass keeps fp32 results within float rounding (docs/quantization.md, "Graph preparation"); on a
/// graph without any of these patterns they change nothing. Constant folding runs first (a
/// causal mask is often Trilu or Slice of a constant), the fusions before div-by-constant (they
/// match the exporters' own forms).
inline constexpr std::string_view kQuantizationPreparation =
    "constant-folding,split-packed-heads,split-sliced-linear,fuse-repeat-interleave,"
    "fuse-patterns,fold-constant-adds,"
    "channel-shuffle-to-conv,div-by-constant,batchnorm-to-conv";

/// Lowers BatchNorm as `lowering` says, then runs kQuantizationPreparation on `graph` in place.
/// This is what `cpu::prepare_graph` (tessel infer / quantize) and graph_for_lowering run.
/// Failures name the pass and the op.
Status prepare_for_quantization(ir::Graph& graph,
                                BatchNormLowering lowering = BatchNormLowering::Folded);

/// The lowering `policy` compiles: Depthwise for "layerwise" (issue 7: every layer of the
/// Caffe-style graph, BatchNorm and Scale included, runs alone), Folded for any other name.
/// Mirrors the scheduler's `Policy::form` (Caffe for layerwise only), which this layer cannot
/// include; tests/passes checks that the two agree for every registered policy. The name is
/// not validated here: the scheduler rejects unknown policies.
BatchNormLowering batchnorm_lowering_for_policy(std::string_view policy);

/// The float graph to quantize, schedule and compile for `policy`: a copy of `graph` (as
/// loaded, BatchNorm unfolded; shapes inferred) with its BatchNorms lowered as
/// `batchnorm_lowering_for_policy` says, then prepared by prepare_for_quantization. Calibration
/// then sees the tensors of that graph (for layerwise the pre-BN conv outputs and the normalised
/// tensors too), so the quantized graph, the golden executor and the program agree on one integer
/// network. Folded turns a BatchNorm that is not fed by a Conv alone into one depthwise 1x1 Conv
/// (batchnorm-to-conv). Failures name the pass and the op.
Result<ir::Graph> graph_for_policy(const ir::Graph& graph, std::string_view policy);
/// The same for an explicit lowering.
Result<ir::Graph> graph_for_lowering(const ir::Graph& graph, BatchNormLowering lowering);
/// The same, lowering `graph` itself instead of a copy (fold-batchnorm moves the payload of
/// weights only the folded Conv read into its folded weights): for a caller that is done with
/// the loaded graph, e.g. `tessel compile` (a copy of ResNet-50 is 100 MB of fresh pages). The
/// result equals the copying overload's.
Result<ir::Graph> graph_for_policy(ir::Graph&& graph, std::string_view policy);
Result<ir::Graph> graph_for_lowering(ir::Graph&& graph, BatchNormLowering lowering);

}  // namespace tessel::passes
