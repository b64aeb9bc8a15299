// `optimal`: dynamic programming over partitions of the topological order into groups (with
// cross-group weight prefetch against the best partition's last group when enabled).
#include <algorithm>
#include <limits>
#include <optional>

#include "scheduler/bytes_bound.hpp"
#include "scheduler/energy_objective.hpp"
#include "scheduler/policy.hpp"

namespace tessel::sched {

namespace {

// The planner's options for a map space (`features`) on `machine`; the objective is the
// caller's.
PlanOptions plan_options(const MapSpaceFeatures& features, const Machine& machine) {
  PlanOptions options;
  options.allow_weight_sweep = features.weight_sweep;
  options.search_depth_bytes = features.search_depth_bytes;
  options.search_depth_latency = features.search_depth_latency;
  options.column_tiles_every_row = features.column_tiles_every_row;
  if (features.block_channel_parts) options.channel_part_blocks = machine.matrix_cols;
  return options;
}

// Lexicographic (primary, secondary) cost so that ties on the objective break on the other.
struct Cost {
  double primary = 0;
  double secondary = 0;
  bool operator<(const Cost& o) const {
    return primary != o.primary ? primary < o.primary : secondary < o.secondary;
  }
};

Cost cost_of(const GroupSchedule& g, Objective objective) {
  const auto bytes = static_cast<double>(g.traffic.total());
  const auto cycles = static_cast<double>(g.cycles);
  return objective == Objective::Bytes ? Cost{bytes, cycles} : Cost{cycles, bytes};
}

// ---- the energy and EDP objectives (docs/energy.md, "Optimising energy") ----

/// One DP over partitions minimising the sum over groups of energy + lambda x cycles (lambda
/// in pJ per cycle), each group the cheaper of its bytes-best and latency-best mappings
/// (plan_group_for_energy), prefetch as above.
struct EnergyRun {
  std::vector<GroupSchedule> groups;
  double energy_pj = 0;
  double cycles = 0;
};

Result<EnergyRun> run_energy(const Net& net, const Machine& machine, double lambda,
                             const MapSpaceFeatures& features) {
  PlanOptions options = plan_options(features, machine);
  const std::vector<int> seq = schedulable_ops(net);
  const size_t n = seq.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, kInf);
  std::vector<GroupSchedule> choice(n + 1);
  std::vector<size_t> start(n + 1, 0);
  best[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    if (best[i] == kInf) continue;
    std::vector<int> group;
    for (size_t j = i; j < n; ++j) {
      group.push_back(seq[j]);
      if (!check_group(net, group, options).ok()) break;
      if (best[j + 1] != kInf &&
          best[i] + energy_cost_bound(net, machine, group, lambda) > best[j + 1])
        continue;
      size_t k = 0;
      if (features.prefetch && i > 0) {
        k = i;
        while (k > 0 && choice[k].dram_view) k = start[k];
      }
      // Each of the group's bytes-best and latency-best mappings, with and without the
      // prefetch against choice[k]: the cheapest of up to four (the prefetch can turn the
      // choice between the two mappings).
      auto candidates = plan_group_candidates(net, machine, group, options);
      if (!candidates.ok()) {
        const bool mid_block = j + 1 < n && (net.op(seq[j + 1]).kind == OpKind::Eltwise ||
                                             net.op(seq[j + 1]).kind == OpKind::Add);
        if (options.allow_weight_sweep && mid_block && is_weight_sweep_group(net, group)) continue;
        break;
      }
      std::optional<GroupSchedule> plan;
      double cost = kInf;
      auto consider = [&](GroupSchedule&& g) {
        const double c = energy_cost(net, machine, g, lambda);
        if (c < cost) {
          cost = c;
          plan = std::move(g);
        }
      };
      for (GroupSchedule& g : candidates.value()) {
        if (k > 0) {
          options.objective = Objective::Bytes;  // prefetch keeps the mapping; no ranking in it
          auto prefetched = plan_prefetched(net, machine, choice[k], g, options);
          if (prefetched.ok()) consider(std::move(prefetched).value());
        }
        consider(std::move(g));
      }
      if (best[i] + cost < best[j + 1]) {
        best[j + 1] = best[i] + cost;
        choice[j + 1] = std::move(*plan);
        start[j + 1] = i;
      }
    }
  }
  if (best[n] == kInf) return fail("no feasible partition");
  EnergyRun out;
  for (size_t j = n; j > 0; j = start[j]) out.groups.push_back(choice[j]);
  std::reverse(out.groups.begin(), out.groups.end());
  for (const auto& g : out.groups) {
    out.energy_pj += group_energy_pj(net, machine, g);
    out.cycles += static_cast<double>(g.cycles);
  }
  return out;
}

Result<std::vector<GroupSchedule>> run_optimal(const Net& net, const Machine& machine,
                                               Objective objective,
                                               const MapSpaceFeatures& features);

/// Energy: lambda = 0. EDP (E x T, not a sum over groups): a schedule minimising E x T also
/// minimises E + lambda T at lambda = E / T (its first-order condition), so the DP runs at
/// lambda = 0 and then at lambda_{k+1} = E_k / T_k of the previous result, three runs in all.
/// The DP's sum is the schedule's total only where prefetch leaves each group's cost its own
/// (a group's prefetch depends on the group before it), so the result is the least under the
/// objective, compared on the schedule's total (least_score), of those runs and the bytes and
/// latency schedules: never worse than either (docs/energy.md, "Optimising energy").
Result<std::vector<GroupSchedule>> run_energy_objective(const Net& net, const Machine& machine,
                                                        Objective objective,
                                                        const MapSpaceFeatures& features) {
  if (auto ok = require_energy_table(machine); !ok.ok()) return ok.failure();
  auto first = run_energy(net, machine, 0, features);
  if (!first.ok()) return first.failure();
  std::vector<std::vector<GroupSchedule>> candidates;
  double lambda = first.value().cycles > 0 ? first.value().energy_pj / first.value().cycles : 0;
  candidates.push_back(std::move(first.value().groups));
  for (int round = 0; objective == Objective::Edp && round < 2 && lambda > 0; ++round) {
    auto next = run_energy(net, machine, lambda, features);
    if (!next.ok()) break;
    lambda = next.value().cycles > 0 ? next.value().energy_pj / next.value().cycles : 0;
    candidates.push_back(std::move(next.value().groups));
  }
  for (Objective other : {Objective::Bytes, Objective::Latency}) {
    auto groups = run_optimal(net, machine, other, features);
    if (groups.ok()) candidates.push_back(std::move(groups).value());
  }
  return std::move(candidates[least_score(net, machine, candidates, objective)]);
}

Result<std::vector<GroupSchedule>> run_optimal(const Net& net, const Machine& machine,
                                               Objective objective,
                                               const MapSpaceFeatures& features) {
  if (is_energy_objective(objective))
    return run_energy_objective(net, machine, objective, features);
  PlanOptions options = plan_options(features, machine);
  options.objective = objective;
  const std::vector<int> seq = schedulable_ops(net);
  const size_t n = seq.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // The bytes bound's group terms (positions are seq's): a group they rule out has no mapping,
  // so it is not planned; the others' searches stop at their floor (docs/scheduler.md, "Search
  // speed").
  const BytesBoundModel bound_model(net, true);
  // best[j]: cheapest schedule of seq[0, j); choice[j]: its last group.
  std::vector<Cost> best(n + 1, Cost{kInf, kInf});
  std::vector<GroupSchedule> choice(n + 1);
  std::vector<size_t> start(n + 1, 0);
  best[0] = {0, 0};
  for (size_t i = 0; i < n; ++i) {
    if (best[i].primary == kInf) continue;
    std::vector<int> group;
    for (size_t j = i; j < n; ++j) {
      group.push_back(seq[j]);
      if (!check_group(net, group, options).ok()) break;
      // Bound: a group whose lower bound cannot beat the best known way to reach j + 1 is
      // not planned (it may still fit and lead to longer groups, so keep extending).
      if (best[j + 1].primary != kInf) {
        const GroupBound bound = group_lower_bound(net, machine, group);
        const auto lower =
            static_cast<double>(objective == Objective::Bytes ? bound.bytes : bound.cycles);
        if (best[i].primary + lower > best[j + 1].primary) continue;
      }
      // Cross-group weight prefetch (below) is against the last group (DRAM views skipped) of
      // the best schedule of seq[0, i), which is final here (the DP visits i in order); k = 0:
      // none.
      size_t k = 0;
      if (features.prefetch && i > 0) {
        k = i;
        while (k > 0 && choice[k].dram_view) k = start[k];
      }
      // Latency: this group matters only if it reaches j + 1 no slower than the best known
      // way (a tie may win on bytes), after prefetch takes its prologue's loads off. Those are
      // at most its weights' loads, and at most what the previous group's tail leaves the DMA
      // (plan_prefetched: the prefetch waits for the rest).
      int64_t cutoff = -1;
      if (objective == Objective::Latency && best[j + 1].primary != kInf) {
        const auto budget = static_cast<int64_t>(best[j + 1].primary - best[i].primary);
        const int64_t saving =
            k > 0
                ? std::min(prefetch_saving_bound(net, machine, group),
                           std::max<int64_t>(0, choice[k].tail_cycles - choice[k].tail_dma_cycles))
                : 0;
        cutoff = std::max<int64_t>(0, budget) + saving;
      }
      if (features.bound_stop) options.bytes_floor = bound_model.group_floor(i, j - i + 1, machine);
      auto plan = features.bound_stop && options.bytes_floor < 0
                      ? Result<GroupSchedule>(fail("ruled out by the bytes bound"))
                      : plan_group(net, machine, group, options, cutoff);
      options.bytes_floor = -1;
      // Pruning: a group that does not fit rarely fits after growing; stop extending. A weight
      // sweep is the exception: a prefix that ends inside a block stores tensors the whole
      // block would keep on chip (a bottleneck's conv3 output before its residual add), so a
      // sweep-shaped group goes on while its next op continues the block.
      if (!plan.ok()) {
        const bool mid_block = j + 1 < n && (net.op(seq[j + 1]).kind == OpKind::Eltwise ||
                                             net.op(seq[j + 1]).kind == OpKind::Add);
        if (options.allow_weight_sweep && mid_block && is_weight_sweep_group(net, group)) continue;
        break;
      }
      // Cross-group weight prefetch against choice[k].
      if (k > 0) {
        auto prefetched = plan_prefetched(net, machine, choice[k], plan.value(), options);
        if (prefetched.ok() &&
            cost_of(prefetched.value(), objective) < cost_of(plan.value(), objective))
          plan = std::move(prefetched);
      }
      const Cost c = cost_of(plan.value(), objective);
      const Cost total{best[i].primary + c.primary, best[i].secondary + c.secondary};
      if (total < best[j + 1]) {
        best[j + 1] = total;
        choice[j + 1] = std::move(plan).value();
        start[j + 1] = i;
      }
    }
  }
  if (best[n].primary == kInf) {
    for (int op : seq) {
      auto alone = plan_group(net, machine, {op}, options);
      if (!alone.ok()) return fail("op '" + net.op(op).name + "' does not fit: " + alone.reason());
    }
    return fail("no feasible partition");
  }
  std::vector<GroupSchedule> out;
  for (size_t j = n; j > 0; j = start[j]) out.push_back(choice[j]);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

Policy make_optimal_policy() {
  return {"optimal",
          "dynamic programming over partitions of the topological order, each group's best "
          "tile/halo/weight/buffering mapping, objective bytes, latency, energy or edp",
          NetForm::FoldedPoolsBeforeConcat, run_optimal};
}

}  // namespace tessel::sched
