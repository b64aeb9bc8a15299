// The pass table and pipeline running.
#include "compiler/passes/pass.hpp"

#include "support/cancel.hpp"
#include "support/strings.hpp"

namespace tessel::passes {

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> table = {
      shape_inference_pass(),
      dce_pass(),
      cse_pass(),
      constant_folding_pass(),
      fold_batchnorm_pass(),
      combine_parallel_conv_pass(),
      split_batchnorm_pass(),
      batchnorm_to_depthwise_pass(),
      pools_before_concat_pass(),
      fuse_layernorm_pass(),
      fuse_gelu_pass(),
      fuse_silu_pass(),
      fuse_attention_mask_pass(),
      fuse_l2_normalize_pass(),
      fuse_patterns_pass(),
      div_by_constant_pass(),
      channel_shuffle_to_conv_pass(),
      split_packed_heads_pass(),
      fold_constant_adds_pass(),
      split_sliced_linear_pass(),
      fuse_repeat_interleave_pass(),
      batchnorm_to_conv_pass(),
  };
  return table;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& pass : all_passes()) {
    if (pass.name == name) return &pass;
  }
  return nullptr;
}

Result<std::vector<const PassInfo*>> parse_pipeline(std::string_view spec) {
  std::vector<const PassInfo*> pipeline;
  std::vector<std::string> names;
  for (const PassInfo& pass : all_passes()) names.emplace_back(pass.name);
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view name = spec.substr(start, comma - start);
    if (!name.empty()) {
      const PassInfo* pass = find_pass(name);
      if (!pass)
        return fail("unknown pass '" + std::string(name) + "'" + did_you_mean(name, names));
      pipeline.push_back(pass);
    }
    start = comma + 1;
  }
  return pipeline;
}

Status run_pipeline(ir::Graph& graph, const std::vector<const PassInfo*>& pipeline) {
  for (const PassInfo* pass : pipeline) {
    // Between passes (support/cancel.hpp); a cancelled pipeline leaves the earlier passes'
    // rewrites in `graph` (prepare_graph works on a copy).
    if (cancel_requested()) return cancelled();
    if (Status status = pass->run(graph); !status) {
      return fail(std::string(pass->name) + ": " + status.reason());
    }
  }
  return {};
}

Status run_passes(ir::Graph& graph, std::string_view spec) {
  auto pipeline = parse_pipeline(spec);
  if (!pipeline) return pipeline.failure();
  return run_pipeline(graph, pipeline.value());
}

}  // namespace tessel::passes
