// Builds the scheduler's Net view from a graph IR, unfolded (Caffe-style) or BN-folded.
#pragma once

#include "compiler/ir/graph.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/policy.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Converts `graph` (shapes inferred, batch 1) into a Net with `machine`'s element sizes.
/// NetForm::Caffe splits each BatchNormalization into a BatchNorm layer (mean, variance) and a
/// Scale layer (gamma, beta), as Caffe deploys it, each the depthwise 1x1 Conv that the program
/// runs (batchnorm-to-depthwise on a copy, as passes::graph_for_policy lowers for layerwise);
/// NetForm::Folded folds a BatchNormalization
/// into the Conv that alone feeds it (adding a bias when the conv has none) and keeps any other
/// as one per-channel affine op. NetForm::FoldedPoolsBeforeConcat is Folded after the
/// pools-before-concat pass (on a copy, when it changes the graph). Fails naming the op for
/// anything the scheduler cannot place (Split, a batch above 1, a non-channel Concat).
///
/// With `features.space_to_depth_stem`, a stride-2 conv that alone reads a network input is
/// rewritten to a stride-1 conv over that input's 2x2 space-to-depth view when that takes fewer
/// matrix steps on `machine` (docs/scheduler.md, "Space-to-depth stem"; Tensor::space_to_depth,
/// Op::space_to_depth).
///
/// With `features.fold_activations` and any form but Caffe, a Relu or Clip that is the only
/// reader of a Conv's, Gemm's or Add's output (not a graph output) is folded into that op's
/// output clamp: the op records it (Op::activation) and produces the activation's output tensor
/// (docs/scheduler.md, "Activation folding").
Result<Net> net_from_graph(const ir::Graph& graph, const Machine& machine, NetForm form,
                           const MapSpaceFeatures& features = {});

}  // namespace tessel::sched
