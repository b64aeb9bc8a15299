// The pass registry: every graph pass by name, with a summary, runnable alone or in a pipeline.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/graph.hpp"
#include "support/result.hpp"

namespace tessel::passes {

/// A graph-to-graph transformation. `run` leaves the graph valid (it may assume a valid graph)
/// and returns a failure naming the op when it cannot apply; it never half-applies to one op.
struct PassInfo {
  std::string_view name;     ///< "fold-batchnorm": what `--passes` takes
  std::string_view summary;  ///< one line for `tessel opt --list`
  Status (*run)(ir::Graph& graph);
};

/// Every pass, in the order `tessel opt --list` prints them. Each pass lives in its own file
/// and exposes a `PassInfo` through one of the declarations below; this table lists them.
const std::vector<PassInfo>& all_passes();
/// The pass named `name`, or nullptr.
const PassInfo* find_pass(std::string_view name);

/// Splits "a,b,c" and checks every name; failure: "unknown pass 'dec'; did you mean 'dce'?".
Result<std::vector<const PassInfo*>> parse_pipeline(std::string_view spec);
/// Runs the passes in order; a failure is prefixed with the pass name ("fold-batchnorm: ...").
Status run_pipeline(ir::Graph& graph, const std::vector<const PassInfo*>& pipeline);
/// parse_pipeline + run_pipeline.
Status run_passes(ir::Graph& graph, std::string_view spec);

// One declaration per pass file.
const PassInfo& shape_inference_pass();
const PassInfo& dce_pass();
const PassInfo& cse_pass();
const PassInfo& constant_folding_pass();
const PassInfo& fold_batchnorm_pass();
const PassInfo& combine_parallel_conv_pass();
const PassInfo& split_batchnorm_pass();
const PassInfo& batchnorm_to_depthwise_pass();
const PassInfo& pools_before_concat_pass();
const PassInfo& fuse_layernorm_pass();
const PassInfo& fuse_gelu_pass();
const PassInfo& fuse_silu_pass();
const PassInfo& fuse_attention_mask_pass();
const PassInfo& fuse_l2_normalize_pass();
const PassInfo& fuse_patterns_pass();
const PassInfo& div_by_constant_pass();
const PassInfo& channel_shuffle_to_conv_pass();
const PassInfo& split_sliced_linear_pass();
const PassInfo& split_packed_heads_pass();
const PassInfo& fold_constant_adds_pass();
const PassInfo& fuse_repeat_interleave_pass();
const PassInfo& batchnorm_to_conv_pass();

}  // namespace tessel::passes
