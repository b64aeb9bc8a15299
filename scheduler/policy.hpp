// Search policies (layerwise, opfusion, fusion, fusion+reuse, optimal), selected by name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/schedule.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// The network form a policy schedules.
enum class NetForm {
  Caffe,   ///< unfolded: BatchNorm and Scale as separate layers (depthwise 1x1 Convs)
  Folded,  ///< BatchNorm folded into the preceding conv (deploy graph)
  /// Folded, and a MaxPool that alone reads a channel Concat pools each Concat input instead
  /// (the pools-before-concat pass; docs/scheduler.md, "Pools before Concat").
  FoldedPoolsBeforeConcat,
};

/// A policy turns a network into fused groups. It never sees the hardware directly: it asks
/// the group model (plan.hpp) whether and at what cost a group fits.
struct Policy {
  std::string name;
  std::string summary;
  NetForm form = NetForm::Folded;
  /// Runs the search; `features` switches on optional parts of the map space (MapSpaceFeatures).
  std::function<Result<std::vector<GroupSchedule>>(const Net&, const Machine&, Objective,
                                                   const MapSpaceFeatures&)>
      run;
};

/// The registered policies, in the order of the table in policy.cpp.
const std::vector<Policy>& policies();
/// The policy called `name`, or a failure listing the names (with a "did you mean").
Result<const Policy*> find_policy(const std::string& name);

/// Runs `policy_name` on `net` (already in the policy's form) and fills in the totals.
Result<Schedule> run_policy(const Net& net, const Machine& machine, const std::string& policy_name,
                            Objective objective, const MapSpaceFeatures& features = {});

/// The non-Input ops of `net` in its topological order (what policies partition).
std::vector<int> schedulable_ops(const Net& net);

// One factory per file under scheduler/policies/.
Policy make_layerwise_policy();
Policy make_opfusion_policy();
Policy make_fusion_policy();
Policy make_fusion_reuse_policy();
Policy make_optimal_policy();

/// Shared by `fusion` and `fusion+reuse`: the paper's greedy (grow a group while its first-fit
/// mapping allocates; start a new group otherwise).
Result<std::vector<GroupSchedule>> greedy_fusion(const Net& net, const Machine& machine,
                                                 const PlanOptions& options);

}  // namespace tessel::sched
