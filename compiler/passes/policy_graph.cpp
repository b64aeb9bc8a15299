// graph_for_policy: which BatchNorm lowering each scheduling policy compiles.
#include "compiler/passes/policy_graph.hpp"

#include <utility>

#include "compiler/passes/pass.hpp"

namespace tessel::passes {

BatchNormLowering batchnorm_lowering_for_policy(std::string_view policy) {
  return policy == "layerwise" ? BatchNormLowering::Depthwise : BatchNormLowering::Folded;
}

Status prepare_for_quantization(ir::Graph& graph, BatchNormLowering lowering) {
  const std::string_view batchnorm =
      lowering == BatchNormLowering::Depthwise ? "batchnorm-to-depthwise" : "fold-batchnorm";
  if (Status s = run_passes(graph, batchnorm); !s) return s;
  return run_passes(graph, kQuantizationPreparation);
}

Result<ir::Graph> graph_for_lowering(ir::Graph&& graph, BatchNormLowering lowering) {
  ir::Graph lowered = std::move(graph);
  if (Status s = prepare_for_quantization(lowered, lowering); !s) return s.failure();
  return lowered;
}

Result<ir::Graph> graph_for_lowering(const ir::Graph& graph, BatchNormLowering lowering) {
  return graph_for_lowering(ir::Graph(graph), lowering);
}

Result<ir::Graph> graph_for_policy(const ir::Graph& graph, std::string_view policy) {
  return graph_for_lowering(graph, batchnorm_lowering_for_policy(policy));
}

Result<ir::Graph> graph_for_policy(ir::Graph&& graph, std::string_view policy) {
  return graph_for_lowering(std::move(graph), batchnorm_lowering_for_policy(policy));
}

}  // namespace tessel::passes
