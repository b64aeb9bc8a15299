// Pass fuse-patterns: the five exporter-pattern fusions in the order the quantization pipeline
// runs them, under one name (docs/quantization.md refers to them together).
#include "compiler/passes/pass.hpp"

namespace tessel::passes {
namespace {

Status run_fuse_patterns(ir::Graph& graph) {
  return run_passes(graph,
                    "fuse-layernorm,fuse-l2-normalize,fuse-gelu,fuse-silu,fuse-attention-mask");
}

}  // namespace

const PassInfo& fuse_patterns_pass() {
  static const PassInfo info{
      "fuse-patterns",
      "fuse-layernorm, fuse-l2-normalize, fuse-gelu, fuse-silu and fuse-attention-mask, in order",
      run_fuse_patterns};
  return info;
}

}  // namespace tessel::passes
