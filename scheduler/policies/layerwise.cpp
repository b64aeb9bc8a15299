// `layerwise`: the paper's baseline: every Caffe-style layer alone through DRAM, least traffic.
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

Result<std::vector<GroupSchedule>> run_layerwise(const Net& net, const Machine& machine, Objective,
                                                 const MapSpaceFeatures& features) {
  PlanOptions options;
  options.objective = Objective::Bytes;  // "tiled only when it must be, least traffic"
  options.search_depth_bytes = features.search_depth_bytes;
  options.column_tiles_every_row = features.column_tiles_every_row;
  options.alias_concat = false;  // Caffe's Concat layer copies through DRAM
  std::vector<GroupSchedule> out;
  for (int op : schedulable_ops(net)) {
    auto plan = plan_group(net, machine, {op}, options);
    if (!plan.ok()) return fail("layer '" + net.op(op).name + "': " + plan.reason());
    out.push_back(std::move(plan).value());
  }
  return out;
}

}  // namespace

Policy make_layerwise_policy() {
  return {"layerwise",
          "every layer of the unfolded (Caffe-style) graph alone, inputs and output through DRAM",
          NetForm::Caffe, run_layerwise};
}

}  // namespace tessel::sched
