// `fusion+reuse`: the paper's method: greedy fusion with lifetime sharing and deep reuse.
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

Result<std::vector<GroupSchedule>> run_fusion_reuse(const Net& net, const Machine& machine,
                                                    Objective objective, const MapSpaceFeatures&) {
  PlanOptions options;
  options.objective = objective;
  options.memory_reuse = true;
  options.allow_cache = false;  // the paper recomputes halos
  return greedy_fusion(net, machine, options);
}

}  // namespace

Policy make_fusion_reuse_policy() {
  return {
      "fusion+reuse",
      "the paper's method: greedy fusion with lifetime sharing (Fig. 4) and deep reuse (Fig. 5)",
      NetForm::Folded, run_fusion_reuse};
}

}  // namespace tessel::sched
