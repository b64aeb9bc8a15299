// Pass shape-inference: (re)computes every op result's shape and dtype.
#include "compiler/ir/shape_inference.hpp"

#include "compiler/passes/pass.hpp"

namespace tessel::passes {

const PassInfo& shape_inference_pass() {
  static const PassInfo info{"shape-inference",
                             "Infer every result's shape and dtype; errors name the op",
                             [](ir::Graph& graph) { return ir::infer_all_shapes(graph); }};
  return info;
}

}  // namespace tessel::passes
