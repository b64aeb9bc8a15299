// `fusion`: the paper's greedy layer fusion without on-chip memory reuse.
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

Result<std::vector<GroupSchedule>> run_fusion(const Net& net, const Machine& machine,
                                              Objective objective, const MapSpaceFeatures&) {
  PlanOptions options;
  options.objective = objective;
  options.memory_reuse = false;  // every buffer its own space for the whole tile
  options.allow_cache = false;   // the paper recomputes halos
  return greedy_fusion(net, machine, options);
}

}  // namespace

Policy make_fusion_policy() {
  return {"fusion", "the paper's greedy fusion (largest tile that allocates), no memory reuse",
          NetForm::Folded, run_fusion};
}

}  // namespace tessel::sched
